#!/usr/bin/env python3
"""First use: what a fresh process pays to run everyday expressions once each.

Each contender runs in its own fresh subprocess: it imports its library (timed), converts a
2000 x 50 float64 matrix and a few small inputs, then runs a session of 36 distinct everyday
expressions (elementwise chains, reductions, matmul, sorting and set functions, masks and
integer indexing, linalg, fft), each forced once and timed alone. Contenders:

- ``numpy``;
- ``jax_eager`` (``jax.numpy`` op by op, when jax is installed);
- ``xla_cold``: xla_array with an empty disk cache and its defaults: a graph run once runs on
  the host (NumPy's code, the first-use tier of docs/laziness.md) where its ops have host
  rules and its values are small, and compiles otherwise (its reported compiles count those);
- ``xla_warm``: xla_array in a new process on the disk cache the cold run filled (it holds
  only what the cold run compiled: the host runs again run on the host).

With ``--sklearn``, scikit-learn's first and second fits (PCA, Ridge,
LinearDiscriminantAnalysis, LogisticRegression, GaussianMixture; ``array_api_dispatch=True``)
at 10,000 x 16 and 100,000 x 64, for NumPy, array_api_strict (``strict``, when installed:
NumPy behind the standard's reference namespace, which takes scikit-learn's generic array-API
code, the code xla_array's arrays take; for NumPy's own arrays scikit-learn keeps some of its
NumPy code, LogisticRegression's Cython loss among it, with ``array_api_dispatch`` on too) and
xla_array with an empty and a warm cache, each size and contender in a fresh process. With
``--fits N`` (N >= 3), each estimator fits N times in that process and the median of the fits
after the second is reported too: the steady state, once the rent-or-buy compiles are in.

Reported per contender: import seconds, session total, each expression's time, and for
xla_array the compiles, compile seconds and disk-cache loads (``xp.debug.metrics()``), and
the compile seconds inside each scikit-learn fit (``fit_compile_s`` in the JSON).

Usage: python3 benchmarks/bench_first_use.py [--contenders numpy,jax_eager,xla_cold,xla_warm]
                                             [--sklearn] [--sizes 10000x16,100000x64]
                                             [--fits 2]
                                             [--json out.json] [--verbose]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONTENDERS = ("numpy", "jax_eager", "xla_cold", "xla_warm")


# ------------------------------------------------------------------------------- the session
# Each expression is f(xp, d) with d the converted inputs; xp is numpy, jax.numpy or xla_array.

def expressions() -> list[tuple[str, Any]]:
    def moments(xp, d):
        return xp.mean(d["X"], axis=0), xp.std(d["X"], axis=0)

    def standardize(xp, d):
        X = d["X"]
        return (X - xp.mean(X, axis=0)) / xp.std(X, axis=0)

    def gram(xp, d):
        return d["X"].T @ d["X"]

    def softmax(xp, d):
        X = d["X"]
        e = xp.exp(X - xp.max(X, axis=1, keepdims=True))
        return e / xp.sum(e, axis=1, keepdims=True)

    def logsumexp(xp, d):
        X = d["X"]
        m = xp.max(X, axis=1, keepdims=True)
        return xp.log(xp.sum(xp.exp(X - m), axis=1)) + m[:, 0]

    def chain(xp, d):
        X = d["X"]
        return xp.sum(xp.tanh(X * 0.5 + 1.0) * xp.exp(-xp.abs(X)))

    def matmul(xp, d):
        return d["X"] @ d["W"]

    def matvec_norm(xp, d):
        return xp.linalg.vector_norm(d["X"] @ d["w"])

    def sort_rows(xp, d):
        return xp.sort(d["X"], axis=1)

    def argsort_col(xp, d):
        return xp.argsort(d["X"][:, 0])

    def unique_values(xp, d):
        return xp.unique_values(d["labels"])

    def unique_counts(xp, d):
        return xp.unique_counts(d["labels"])

    def unique_inverse(xp, d):
        return xp.unique_inverse(d["labels"])

    def mask_sum(xp, d):
        X = d["X"]
        return xp.sum(X[X > 0.5])

    def where_clip(xp, d):
        X = d["X"]
        return xp.where(X > 0, X, 0.0) + xp.clip(X, -1.0, 1.0)

    def take_rows(xp, d):
        return d["X"][d["idx"]]

    def take_along(xp, d):
        X = d["X"]
        return xp.take_along_axis(X, xp.argsort(X, axis=1)[:, :5], axis=1)

    def cumsum(xp, d):
        return xp.cumulative_sum(d["X"], axis=0)

    def argmax_rows(xp, d):
        return xp.argmax(d["X"], axis=1)

    def any_all(xp, d):
        X = d["X"]
        return xp.any(X > 3.0, axis=0), xp.all(X > -10.0)

    def minmax(xp, d):
        return xp.max(d["X"], axis=0) - xp.min(d["X"], axis=0)

    def pairwise(xp, d):
        A = d["X"][:500]
        sq = xp.sum(A * A, axis=1)
        return sq[:, None] + sq[None, :] - 2.0 * (A @ A.T)

    def class_means(xp, d):
        X, y = d["X"], d["labels"]
        return xp.stack([xp.mean(X[y == k], axis=0) for k in range(3)])

    def concat_stack(xp, d):
        X = d["X"]
        return xp.concat([X[:, :10], X[:, -10:]], axis=1)

    def searchsorted(xp, d):
        return xp.searchsorted(xp.sort(d["X"][:, 1]), d["X"][:100, 2])

    def solve(xp, d):
        return xp.linalg.solve(d["A"], d["b"])

    def inv(xp, d):
        return xp.linalg.inv(d["A"])

    def cholesky(xp, d):
        return xp.linalg.cholesky(d["A"])

    def eigh(xp, d):
        return xp.linalg.eigh(d["A"])

    def svd(xp, d):
        return xp.linalg.svd(d["X"], full_matrices=False)

    def qr(xp, d):
        return xp.linalg.qr(d["X"])

    def lstsq_like(xp, d):
        X = d["X"]
        return xp.linalg.solve(X.T @ X + xp.eye(X.shape[1], dtype=X.dtype), X.T @ d["y"])

    def rfft(xp, d):
        return xp.fft.rfft(d["X"], axis=0)

    def fft_roundtrip(xp, d):
        return xp.fft.irfft(xp.fft.rfft(d["y"]), n=d["y"].shape[0])

    def fftn(xp, d):
        return xp.abs(xp.fft.fftn(d["X"][:256, :32]))

    def arange_linspace(xp, d):
        return xp.sin(xp.linspace(0.0, 10.0, 5000)) * xp.arange(5000, dtype=xp.float64)

    return [(f.__name__, f) for f in (
        moments, standardize, gram, softmax, logsumexp, chain, matmul, matvec_norm, sort_rows,
        argsort_col, unique_values, unique_counts, unique_inverse, mask_sum, where_clip,
        take_rows, take_along, cumsum, argmax_rows, any_all, minmax, pairwise, class_means,
        concat_stack, searchsorted, solve, inv, cholesky, eigh, svd, qr, lstsq_like, rfft,
        fft_roundtrip, fftn, arange_linspace)]


def _host_inputs() -> dict:
    import numpy as np
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, 50))
    A = X.T @ X / 2000 + np.eye(50)
    return {"X": X, "W": rng.standard_normal((50, 20)), "w": rng.standard_normal(50),
            "y": rng.standard_normal(2000), "A": A, "b": rng.standard_normal(50),
            "labels": rng.integers(0, 3, 2000), "idx": rng.integers(0, 2000, 500)}


def _leaves(r: Any) -> list:
    if isinstance(r, (tuple, list)):
        return [x for v in r for x in _leaves(v)]
    if hasattr(r, "_fields"):
        return [x for v in tuple(r) for x in _leaves(v)]
    return [r]


def child_session(contender: str) -> dict:
    """Runs in the fresh subprocess: import, convert, run each expression once, forced."""
    t0 = time.perf_counter()
    if contender == "numpy":
        import numpy as xp
        force = lambda r: None  # noqa: E731
        convert = lambda a: a  # noqa: E731
    elif contender == "jax_eager":
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as xp  # type: ignore[no-redef]
        force = lambda r: [v.block_until_ready() for v in _leaves(r)  # noqa: E731
                           if hasattr(v, "block_until_ready")]
        convert = xp.asarray
    else:
        sys.path.insert(1, _REPO)
        import xla_array as xp  # type: ignore[no-redef]
        force = lambda r: xp.block_until_ready(*[v for v in _leaves(r)  # noqa: E731
                                                if isinstance(v, xp.Array)])
        convert = xp.asarray
    import_s = time.perf_counter() - t0
    host = _host_inputs()
    t = time.perf_counter()
    d = {k: convert(v) for k, v in host.items()}
    force(list(d.values()))
    per = {"convert inputs": time.perf_counter() - t}
    for name, f in expressions():
        t = time.perf_counter()
        force(f(xp, d))
        per[name] = time.perf_counter() - t
    out = {"contender": contender, "import_s": import_s, "session_s": sum(per.values()),
           "per_expression_s": per}
    if contender.startswith("xla"):
        m = xp.debug.metrics()
        out.update(compiles=m["compiles"], compile_s=m["compile_seconds"],
                   disk_hits=m["disk_hits"], disk_load_s=m["disk_load_seconds"])
    return out


# ------------------------------------------------------------------------------ scikit-learn

def child_sklearn(contender: str, n: int, d: int, repeats: int = 2) -> dict:
    """``repeats`` fits of each estimator on an n x d problem (the first, the second, ...), in
    this fresh process."""
    os.environ["SCIPY_ARRAY_API"] = "1"
    import numpy as np
    t0 = time.perf_counter()
    plain = contender in ("numpy", "strict")
    if not plain:
        sys.path.insert(1, _REPO)
        import xla_array as xp
    import sklearn
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.mixture import GaussianMixture
    import_s = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    y_cls = rng.integers(0, 3, n)
    X[np.arange(n), y_cls] += 2.0
    y_reg = X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n)
    if contender == "strict":
        import array_api_strict as xs
        Xc, ycls, yreg = xs.asarray(X), xs.asarray(y_cls), xs.asarray(y_reg)
        force = lambda r: None  # noqa: E731
    elif plain:
        Xc, ycls, yreg = X, y_cls, y_reg
        force = lambda r: None  # noqa: E731
    else:
        Xc, ycls, yreg = xp.asarray(X), xp.asarray(y_cls), xp.asarray(y_reg)
        xp.block_until_ready(Xc, ycls, yreg)

        def force(r: Any) -> None:
            vals = [v for v in vars(r).values() if isinstance(v, xp.Array)]
            if vals:
                xp.block_until_ready(*vals)
    estimators = {
        "PCA": (lambda: PCA(n_components=min(8, d), svd_solver="full"), None),
        # scikit-learn's array-API path has one solver, the SVD (under solver="auto" it warns
        # and takes it, where NumPy's input gets Cholesky): both contenders run the SVD, so
        # the libraries are compared, not the solvers
        "Ridge": (lambda: Ridge(alpha=1.0, solver="svd"), yreg),
        "LinearDiscriminantAnalysis": (lambda: LinearDiscriminantAnalysis(), ycls),
        "LogisticRegression": (lambda: LogisticRegression(max_iter=50), ycls),
        "GaussianMixture": (lambda: GaussianMixture(  # (k-means init has no array-API path)
            n_components=3, max_iter=20, init_params="random_from_data", random_state=0), None),
    }
    def compile_s() -> float:
        return 0.0 if plain else xp.debug.metrics()["compile_seconds"]

    fits: dict[str, Any] = {}
    fit_compile_s: dict[str, list] = {}  # the compile seconds inside each fit
    # (strict: NumPy behind array_api_strict, through scikit-learn's generic array-API code,
    # the code xla_array's arrays take: what that path itself costs)
    with sklearn.config_context(array_api_dispatch=contender != "numpy"):
        for name, (make, target) in estimators.items():
            times, compiled = [], []
            for _ in range(repeats):
                est = make()
                c = compile_s()
                t = time.perf_counter()
                try:
                    est.fit(Xc) if target is None else est.fit(Xc, target)
                    force(est)
                except Exception as e:  # an estimator without array-API support
                    times = [f"{type(e).__name__}: {str(e)[:80]}"]
                    break
                times.append(time.perf_counter() - t)
                compiled.append(compile_s() - c)
            fits[name] = times
            fit_compile_s[name] = compiled
    out: dict[str, Any] = {"contender": contender, "n": n, "d": d, "import_s": import_s,
                           "fits": fits}
    if not plain:
        out["fit_compile_s"] = fit_compile_s
        m = xp.debug.metrics()
        out.update(compiles=m["compiles"], compile_s=m["compile_seconds"],
                   disk_hits=m["disk_hits"])
    return out


# ------------------------------------------------------------------------------------ driver

def _spawn(args: list[str], cache_dir: str | None) -> dict:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("XLA_ARRAY_CACHE_DIR", None)
    if cache_dir is not None:
        env["XLA_ARRAY_CACHE_DIR"] = cache_dir
    p = subprocess.run([sys.executable, os.path.abspath(__file__), *args], env=env,
                       capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout)[-800:]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def _fit_cells(times: list) -> str:
    """First / second fit (and the median of the later ones), ms."""
    shown = times[:2]
    if len(times) > 2 and all(isinstance(t, float) for t in times):
        shown = [*shown, statistics.median(times[2:])]
    return " / ".join(_ms(t).strip() for t in shown)


def _ms(s: Any) -> str:
    return f"{s * 1e3:9.1f}" if isinstance(s, float) else f"{str(s)[:9]:>9}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--contenders", default=",".join(CONTENDERS))
    p.add_argument("--sklearn", action="store_true")
    p.add_argument("--sizes", default="10000x16,100000x64")
    p.add_argument("--fits", type=int, default=2,
                   help="fits per estimator and process (from 3: the median of those after "
                        "the second is reported too, the steady state once compiles are in)")
    p.add_argument("--json", default="")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--child", default="", help=argparse.SUPPRESS)
    p.add_argument("--child-sklearn", default="", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        print(json.dumps(child_session(args.child)))
        return
    if args.child_sklearn:
        c, n, d, fits = args.child_sklearn.split(":")
        print(json.dumps(child_sklearn(c, int(n), int(d), int(fits))))
        return

    wanted = args.contenders.split(",")
    results: dict[str, Any] = {"session": {}, "sklearn": []}
    with tempfile.TemporaryDirectory(prefix="xla_array_first_use_") as tmp:
        cache = os.path.join(tmp, "cache")
        for c in wanted:
            if c == "jax_eager":
                try:
                    import jax  # noqa: F401
                except ImportError:
                    continue
            if c == "xla_warm" and "xla_cold" not in results["session"]:
                _spawn(["--child", "xla_cold"], cache)  # fill the cache first
            child = "xla_array" if c.startswith("xla") else c
            results["session"][c] = _spawn(["--child", child], cache if child == "xla_array"
                                           else None)
        sess = results["session"]
        print(f"# first use: {len(expressions())} expressions once each on 2000 x 50 float64, "
              f"each contender in a fresh process")
        if sys.flags.dont_write_bytecode:  # (an installed package has its bytecode compiled)
            print("# PYTHONDONTWRITEBYTECODE is set: a source checkout's modules are compiled "
                  "on every import (xla_array's import ~0.2 s slower); set "
                  "PYTHONPYCACHEPREFIX or unset it to time what an installed package does")
        print(f"{'contender':<10} {'import ms':>9} {'session ms':>10} {'compiles':>8} "
              f"{'compile ms':>10} {'disk loads':>10}")
        for c, r in sess.items():
            if "error" in r:
                print(f"{c:<10} error: {r['error']}")
                continue
            print(f"{c:<10} {_ms(r['import_s'])} {_ms(r['session_s']):>10} "
                  f"{r.get('compiles', ''):>8} "
                  f"{_ms(r['compile_s']) if 'compile_s' in r else '':>10} "
                  f"{r.get('disk_hits', ''):>10}")
        ok = [c for c in sess if "error" not in sess[c]]
        if args.verbose and ok:
            print("\nper expression, ms:")
            print(f"{'expression':<16}" + "".join(f"{c:>11}" for c in ok))
            for name in sess[ok[0]]["per_expression_s"]:
                print(f"{name:<16}" + "".join(
                    f"{sess[c]['per_expression_s'][name] * 1e3:11.1f}" for c in ok))

        if args.sklearn:
            skl_cache = os.path.join(tmp, "skl_cache")
            later = f" / median of fits 3-{args.fits}" if args.fits > 2 else ""
            print(f"\n# scikit-learn fits, first / second{later}, ms (fresh process per row)")
            for size in args.sizes.split(","):
                n, d = size.split("x")
                for c, cache_dir in (("numpy", None), ("strict", None),
                                     ("xla_cold", skl_cache + size),
                                     ("xla_warm", skl_cache + size)):
                    if c == "strict" and importlib.util.find_spec("array_api_strict") is None:
                        continue
                    child = c if c in ("numpy", "strict") else "xla_array"
                    r = _spawn(["--child-sklearn", f"{child}:{n}:{d}:{args.fits}"],
                               cache_dir)
                    r["contender"] = c
                    results["sklearn"].append(r)
                    if "error" in r:
                        print(f"{size:<10} {c:<9} error: {r['error']}")
                        continue
                    cells = "  ".join(f"{k[:12]} {_fit_cells(v)}" for k, v in r["fits"].items())
                    extra = ""
                    if "compiles" in r:
                        first = sum(v[0] for v in r["fit_compile_s"].values() if v)
                        extra = (f"  ({r['compiles']} compiles, {first * 1e3:,.0f} ms of "
                                 f"them in the first fits)")
                    print(f"{size:<10} {c:<9} {cells}{extra}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
