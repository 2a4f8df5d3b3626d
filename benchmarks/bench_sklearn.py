#!/usr/bin/env python3
"""scikit-learn on xla_array vs NumPy: first and second fit of PCA, Ridge and LDA.

Each estimator is fitted on the same ``n x d`` data (default 100,000 x 64, float64) as NumPy
arrays (``array_api_dispatch`` off) and as xla_array arrays (dispatch on). The first fit of each
contender is timed on its own (for xla_array it includes the XLA compiles, so the on-disk compile
cache is turned off unless ``XLA_ARRAY_CACHE_DIR`` is set); the second fit is the median of
``--repeats`` further fits. A timed xla_array fit ends with every fitted array attribute computed
and ready on the device (``xla_array.block_until_ready``), so lazy work is not left out of the
timing. The table also gives the compiles and materializations per fit, and the largest
difference of ``transform``/``predict`` output against NumPy's (PCA up to the sign of each
component).

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
                        "compile_seconds": m["compile_seconds"]}


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
    header = ("| estimator | NumPy first | NumPy second | xla_array first | xla_array second | "
              "second: NumPy / xla_array | xla compiles first / second | materializations "
              "per fit | max rel. diff |")
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    rows = []
    for name, (est, target, method) in ESTIMATORS.items():
        yn, yxl = (y, yx) if target == "reg" else (classes, cx)
        np_first, est_np = _fit_numpy(est, X, yn)
        x_first, est_x, m_first = _fit_xla(est, Xx, yxl)
        np_times, x_times, m_second = [], [], {}
        for _ in range(args.repeats):  # interleaved
            np_times.append(_fit_numpy(est, X, yn)[0])
            dt, _, m_second = _fit_xla(est, Xx, yxl)
            x_times.append(dt)
        np_second, x_second = statistics.median(np_times), statistics.median(x_times)
        diff = _difference(name, method, est_np, est_x, X, Xx)
        row = {"estimator": name, "numpy_first_s": np_first, "numpy_second_s": np_second,
               "xla_first_s": x_first, "xla_second_s": x_second, "numpy_samples": np_times,
               "xla_samples": x_times, "xla_first_metrics": m_first,
               "xla_second_metrics": m_second, "max_rel_diff": diff}
        rows.append(row)
        print(f"| {name} | {np_first * 1e3:.0f} ms | {np_second * 1e3:.0f} ms | "
              f"{x_first * 1e3:.0f} ms | {x_second * 1e3:.0f} ms | "
              f"{np_second / x_second:.2f} | {m_first['compiles']} / {m_second['compiles']} | "
              f"{m_second['materializations']} | {diff:.1e} |", flush=True)
    overheads()
    print("\nsecond = median of the repeated fits; ratio > 1: xla_array faster. First xla_array "
          "fit includes compiling (on-disk compile cache "
          f"{'off' if os.environ.get('XLA_ARRAY_CACHE_DIR') == 'off' else 'on'}).")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "d": args.d, "dtype": args.dtype, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
