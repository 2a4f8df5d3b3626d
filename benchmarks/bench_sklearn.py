#!/usr/bin/env python3
"""scikit-learn on xla_array vs NumPy: first and second fit of PCA, Ridge and LDA.

Each estimator is fitted on the same ``n x d`` data (default 100,000 x 64, float64) as NumPy
arrays (``array_api_dispatch`` off) and as xla_array arrays (dispatch on). The first fit of each
contender is timed on its own; which contender fits first alternates from one estimator to the
next (the column ``first fitted`` says which), after both libraries ran an untimed warm-up
(imports, BLAS threads, the PJRT client), so start-up costs land on neither. In xla_array's first
fit every graph not yet compiled runs on the host (NumPy's code, the first-use tier of
docs/laziness.md) until its host runs have taken what a compile would cost, and then compiles:
it includes the compiles the ``compiles`` column counts (the on-disk compile cache is off unless
``XLA_ARRAY_CACHE_DIR`` is set, so none is a load). The second fit is the median of
``--repeats`` further fits. A timed xla_array fit ends with every fitted array attribute computed
and ready on the device (``xla_array.block_until_ready``), so lazy work is not left out of the
timing. The table also gives the compiles and materializations per fit, and the largest
difference of ``transform``/``predict`` output against NumPy's (PCA up to the sign of each
component), for the first and the last xla_array fit: above ``TOL`` (relative to max|NumPy's|)
the script says so and exits with status 1.

A second table gives the per-call cost, at a compile-cache hit, of ``bool()``/``float()``/
``int()`` of small pending arrays and of ``__array_namespace__`` (scikit-learn calls them
thousands of times per fit), with NumPy's for reference.

Usage: python3 benchmarks/bench_sklearn.py [--n 100000] [--d 64] [--repeats 5]
                                           [--dtype float64] [--quick] [--json out.json]
                                           [--overheads-only]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
import warnings
from typing import Any

os.environ["SCIPY_ARRAY_API"] = "1"  # before scipy/sklearn are imported
os.environ.setdefault("XLA_ARRAY_CACHE_DIR", "off")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO not in sys.path:
    sys.path.insert(1, _REPO)

import numpy as np
import sklearn
from sklearn.base import clone
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import Ridge

import xla_array as xp

# Largest relative difference allowed from NumPy's transform/predict output. The data are well
# conditioned (4 shifted classes in Gaussian noise: the SVD's and the covariances' condition
# numbers are under 10), and where xla_array's LAPACK calls are other drivers than NumPy's
# (SciPy's wrappers) the results differ by a few ulps times that: 1e-12 in float64, 1e-4 in
# float32 (whose eps is 1.2e-7).
TOL = {"float64": 1e-12, "float32": 1e-4}


def _data(n: int, d: int, dtype: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(20261121)
    X = rng.normal(size=(n, d)).astype(dtype)
    classes = rng.integers(0, 4, size=n)
    X[:, :4] += 1.5 * np.eye(4, dtype=dtype)[classes]
    y = (X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)).astype(dtype)
    return X, y, classes


ESTIMATORS = {
    "PCA(svd_solver='full', n_components=8)": (PCA(8, svd_solver="full"), "reg", "transform"),
    "Ridge(solver='svd')": (Ridge(solver="svd"), "reg", "predict"),
    "LinearDiscriminantAnalysis()": (LinearDiscriminantAnalysis(), "cls", "predict_proba"),
}


def _force(est: Any) -> None:
    """Compute every pending fitted array attribute and wait for it."""
    arrays = [v for v in vars(est).values() if isinstance(v, xp.Array)]
    if arrays:
        xp.block_until_ready(*arrays)


def _fit_numpy(est: Any, X: np.ndarray, y: np.ndarray) -> tuple[float, Any]:
    t = time.perf_counter()
    fitted = clone(est).fit(X, y)
    return time.perf_counter() - t, fitted


def _fit_xla(est: Any, X: Any, y: Any) -> tuple[float, Any, dict]:
    xp.debug.reset_metrics()
    t = time.perf_counter()
    with sklearn.config_context(array_api_dispatch=True):
        fitted = clone(est).fit(X, y)
        _force(fitted)
    dt = time.perf_counter() - t
    m = xp.debug.metrics()
    return dt, fitted, {"compiles": m["compiles"], "materializations": m["materializations"],
                        "compile_seconds": m["compile_seconds"], "host_runs": m["host_runs"]}


def _difference(name: str, method: str, est_np: Any, est_x: Any, X: np.ndarray,
                Xx: Any) -> float:
    a = getattr(est_np, method)(X)
    with sklearn.config_context(array_api_dispatch=True):
        b = np.asarray(getattr(est_x, method)(Xx))
    if name.startswith("PCA"):  # components are defined up to sign
        a, b = np.abs(a), np.abs(b)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-300))


def _per_call(fn: Any, n: int) -> float:
    fn()
    fn()
    best = math.inf
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t) / n)
    return best


def overheads(n: int = 2000) -> None:
    """Per-call cost, at a compile-cache hit, of what scikit-learn calls thousands of times."""
    a = np.arange(10.0)
    x = xp.asarray(a)
    done = xp.sum(x)
    float(done)
    rows = [
        ("x.__array_namespace__()", lambda: x.__array_namespace__(), None, 50 * n),
        ("bool(xp.any(x > 3.0))", lambda: bool(xp.any(x > 3.0)),
         lambda: bool(np.any(a > 3.0)), n),
        ("float(xp.sum(x))", lambda: float(xp.sum(x)), lambda: float(np.sum(a)), n),
        ("int(xp.argmax(x))", lambda: int(xp.argmax(x)), lambda: int(np.argmax(a)), n),
        ("float(s), s already computed", lambda: float(done), None, 10 * n),
        ("x + 1.0 (recording only)", lambda: x + 1.0, lambda: a + 1.0, 10 * n),
    ]
    print("\n| per call (10 float64, cache hit) | xla_array | NumPy |\n|---|---|---|")
    for name, fx, fn, reps in rows:
        tx = _per_call(fx, reps)
        tn = f"{_per_call(fn, reps) * 1e6:.1f} us" if fn is not None else "-"
        print(f"| {name} | {tx * 1e6:.1f} us | {tn} |", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--d", type=int, default=64)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    p.add_argument("--quick", action="store_true", help="10,000 x 16, 2 repeats")
    p.add_argument("--json", help="write the raw timings here")
    p.add_argument("--overheads-only", action="store_true",
                   help="only the per-call table (bool/float/int/__array_namespace__)")
    args = p.parse_args()
    if args.overheads_only:
        overheads()
        return
    if args.quick:
        args.n, args.d, args.repeats = 10_000, 16, 2
    warnings.simplefilter("ignore")

    X, y, classes = _data(args.n, args.d, args.dtype)
    Xx, yx, cx = xp.asarray(X), xp.asarray(y), xp.asarray(classes)
    xp.block_until_ready(Xx, yx, cx)
    print(f"# scikit-learn {sklearn.__version__} on xla_array vs NumPy: {args.n:,} x {args.d} "
          f"{args.dtype}, {args.repeats} repeats; device {Xx.device}; "
          f"numpy {np.__version__}; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}\n")
    # untimed warm-up of both: imports, OpenBLAS's threads, the PJRT client's first run
    w = np.ones((64, 8), args.dtype)
    float(np.sum(w.T @ w))
    float(xp.sum(xp.asarray(w).T @ xp.asarray(w)))
    header = ("| estimator | first fitted | NumPy first | NumPy second | xla_array first | "
              "xla_array second | second: NumPy / xla_array | xla compiles first / second | "
              "xla host runs first fit | materializations per fit | max rel. diff first / last |")
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    rows, failed = [], []
    tol = TOL[args.dtype]
    for i, (name, (est, target, method)) in enumerate(ESTIMATORS.items()):
        yn, yxl = (y, yx) if target == "reg" else (classes, cx)
        if i % 2 == 0:   # alternate which contender fits first
            np_first, est_np = _fit_numpy(est, X, yn)
            x_first, est_x, m_first = _fit_xla(est, Xx, yxl)
        else:
            x_first, est_x, m_first = _fit_xla(est, Xx, yxl)
            np_first, est_np = _fit_numpy(est, X, yn)
        np_times, x_times, m_second = [], [], {}
        est_last = est_x
        for _ in range(args.repeats):  # interleaved
            np_times.append(_fit_numpy(est, X, yn)[0])
            dt, est_last, m_second = _fit_xla(est, Xx, yxl)
            x_times.append(dt)
        np_second, x_second = statistics.median(np_times), statistics.median(x_times)
        diff = _difference(name, method, est_np, est_x, X, Xx)
        diff_last = _difference(name, method, est_np, est_last, X, Xx)
        ok = diff <= tol and diff_last <= tol
        if not ok:
            failed.append(name)
        row = {"estimator": name, "first_fitted": "numpy" if i % 2 == 0 else "xla_array",
               "numpy_first_s": np_first, "numpy_second_s": np_second,
               "xla_first_s": x_first, "xla_second_s": x_second, "numpy_samples": np_times,
               "xla_samples": x_times, "xla_first_metrics": m_first,
               "xla_second_metrics": m_second, "max_rel_diff": diff,
               "max_rel_diff_last": diff_last, "tol": tol, "ok": ok}
        rows.append(row)
        print(f"| {name} | {row['first_fitted']} | {np_first * 1e3:.0f} ms | "
              f"{np_second * 1e3:.0f} ms | {x_first * 1e3:.0f} ms | {x_second * 1e3:.0f} ms | "
              f"{np_second / x_second:.2f} | {m_first['compiles']} / {m_second['compiles']} | "
              f"{m_first['host_runs']} | {m_second['materializations']} | "
              f"{diff:.1e} / {diff_last:.1e}{'' if ok else ' (!)'} |", flush=True)
    overheads()
    print("\nsecond = median of the repeated fits; ratio > 1: xla_array faster. In the first "
          "xla_array fit, graphs not yet compiled run on the host (NumPy's code) until their "
          "host runs have taken a compile's expected cost, then compile: it includes the "
          "compiles counted (on-disk compile cache "
          f"{'off' if os.environ.get('XLA_ARRAY_CACHE_DIR') == 'off' else 'on'}). "
          "max rel. diff: the first and the last xla_array fit's transform/predict output "
          f"against NumPy's, over max|NumPy's|; (!) above {tol:g}.")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "d": args.d, "dtype": args.dtype, "rows": rows}, f, indent=1)
    if failed:
        print(f"bench_sklearn: FAILED: results differ from NumPy's: {', '.join(failed)}",
              file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
