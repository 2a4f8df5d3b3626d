#!/usr/bin/env python3
"""Iterative code: loops that update arrays and read a value every step, in one process.

Each case is a loop written once with array-API calls and run unchanged by every contender
(NumPy, array_api_strict, JAX eager when ``jax`` is importable, xla_array), one contender after
another on the same data. Every step is timed on its own; the table gives, per contender, the
median time of a step (the first step left out) and its ratio to NumPy's, and for xla_array the
median of the second tenth of the steps against the last tenth (flat: the last no slower), and
the compiles and new graph structures per step after the third step (``xp.debug.metrics()``).
The last column checks xla_array against the targets of issue 63.

Cases (``--only`` takes names or prefixes: ``newton``, ``loops``, ``scipy``, ``sklearn``,
``probes``, ``newton-large``, ...):

- loops, each ``-small`` (hundreds of values) and ``-large`` (millions), float64: ``newton``
  (damped Newton for a square root, the check reads ``dx``), ``fixed2`` (a fixed point of two
  state arrays), ``setitem`` (a diffusion step written through ``x[1:-1] = v``, ``x[0] = 0.0``
  and ``+=``), ``checkother`` (Richardson iteration: updates ``x``, the check reads the
  residual), ``nested`` (an outer loop of five inner Newton steps, each with its check; a step
  is one outer iteration), ``kmeans`` (k-means, 8 centroids, until they settle), ``power``
  (power iteration, the check reads the Rayleigh quotient against the previous step's). Every
  check is computed and read with ``bool()`` each step, with a tolerance of 0 so that no loop
  ends early and every contender runs the same steps;
- ``scipy-*``: SciPy's elementwise iterative algorithms (``find_root``, ``tanhsinh``,
  ``derivative``, ``nsum``) on 300 points with ``SCIPY_ARRAY_API=1``; a step is one call;
- ``sklearn-*``: LogisticRegression and GaussianMixture (EM, 20 iterations) fits on
  10,000 x 16; a step is one fit; NumPy runs scikit-learn's NumPy path (``array_api_dispatch``
  off), the others its array-API path (on);
- ``probe-*``: the fixed costs: ``probe-sum`` a cache-hit ``float(xp.sum(x * 2.0 + 1.0))`` on
  1,000 float32 (with a ``jax.jit`` contender), ``probe-record`` recording ``x + 1.0`` on 1,000
  float32 (nothing computed), ``probe-chain`` 1,000 steps of ``y = y * 1.0001 + 0.5`` then
  ``float(xp.sum(y))``; a step of the first two is a batch of calls, its time per call.

Every contender's final result is compared with NumPy's (``(!)`` in the table); a mismatch, or
an error of xla_array, makes the script exit with status 1. The on-disk compile cache is off
(``XLA_ARRAY_CACHE_DIR=off`` unless set): a structure compiles when it is first met.

Usage: python3 benchmarks/bench_iterative.py [--quick] [--only newton,scipy] [--json out.json]
           [--plot docs/img/iterative.png] [--contenders numpy,xla_array] [--settle 0.15]
       python3 benchmarks/bench_iterative.py --plot-from out.json --plot docs/img/iterative.png
See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
import traceback
import warnings
from typing import Any, Callable

os.environ["SCIPY_ARRAY_API"] = "1"  # before scipy/sklearn are imported


def _blas_threads(argv: list[str]) -> str:
    """``--blas-threads N`` (read before NumPy is imported; default 1, 0: NumPy's own)."""
    for i, a in enumerate(argv):
        if a.startswith("--blas-threads="):
            return a.split("=", 1)[1]
        if a == "--blas-threads" and i + 1 < len(argv):
            return argv[i + 1]
    return "1"


BLAS_THREADS = _blas_threads(sys.argv)
if BLAS_THREADS != "0":
    for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_v, BLAS_THREADS)
os.environ.setdefault("XLA_ARRAY_CACHE_DIR", "off")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO not in sys.path:
    sys.path.insert(1, _REPO)

import numpy as np

ALL_CONTENDERS = ("numpy", "strict", "jax_eager", "jax_jit", "xla_array")
FLAT_TOLERANCE = 1.10  # last tenth / second tenth counted as flat (the machine's noise)
AFTER = 3  # compiles and structures are counted from the step after this one

# ------------------------------------------------------------------------------ contenders


class Contender:
    """One array library: its namespace, how NumPy data enters it, how a result is forced."""

    def __init__(self, name: str, ns: Any, conv: Callable, force: Callable,
                 functional: bool = False) -> None:
        self.name, self.ns, self.conv, self.force = name, ns, conv, force
        self.functional = functional  # immutable arrays: x[k] = v is x = x.at[k].set(v)


def _contenders(names: list[str]) -> tuple[dict[str, Contender], dict[str, str]]:
    out: dict[str, Contender] = {}
    missing: dict[str, str] = {}
    if "numpy" in names:
        out["numpy"] = Contender("numpy", np, np.asarray, lambda *a: None)
    if "strict" in names:
        try:
            import array_api_strict as xs
            out["strict"] = Contender("strict", xs, xs.asarray, lambda *a: None)
        except ImportError as e:
            missing["strict"] = str(e)
    if "jax_eager" in names or "jax_jit" in names:
        try:
            import jax
            jax.config.update("jax_enable_x64", True)
            import jax.numpy as jnp

            def jforce(*a: Any) -> None:
                for v in a:
                    if hasattr(v, "block_until_ready"):
                        v.block_until_ready()

            def jconv(v: Any) -> Any:
                r = jnp.asarray(v)
                r.block_until_ready()
                return r
            c = Contender("jax_eager", jnp, jconv, jforce, functional=True)
            if "jax_eager" in names:
                out["jax_eager"] = c
            if "jax_jit" in names:  # (probe-sum only: jit of the whole expression)
                out["jax_jit"] = Contender("jax_jit", jnp, jconv, jforce, functional=True)
        except ImportError as e:
            missing["jax_eager"] = missing["jax_jit"] = str(e)
    if "xla_array" in names:
        import xla_array as xp

        def xforce(*a: Any) -> None:
            arrs = [v for v in a if isinstance(v, xp.Array)]
            if arrs:
                xp.materialize(*arrs)
                xp.block_until_ready(*arrs)

        def xconv(v: Any) -> Any:
            r = xp.asarray(v)
            xp.block_until_ready(r)
            return r
        out["xla_array"] = Contender("xla_array", xp, xconv, xforce)
    return out, missing


def setitem(c: Contender, x: Any, key: Any, v: Any) -> Any:
    """``x[key] = v``, returning the updated array (JAX: ``x.at[key].set(v)``)."""
    if c.functional:
        return x.at[key].set(v)
    x[key] = v
    return x


def to_numpy(v: Any) -> np.ndarray:
    try:
        return np.asarray(v)
    except Exception:
        return np.from_dlpack(v)


# ------------------------------------------------------------------------------- the loops
# A loop case: data(n, rng) -> NumPy arrays; init(c, *arrays) -> state; step(c, state) ->
# (state, done); result(state) -> arrays to compare. Every check has tolerance TOL = 0.

TOL = 0.0


def newton_data(n: int, rng: np.random.Generator) -> tuple:
    return (rng.uniform(1.0, 100.0, n),)


def newton_init(c: Contender, a: Any) -> tuple:
    return a, c.conv(to_numpy(a).copy())  # x0 = a (its own array)


def newton_step(c: Contender, s: tuple) -> tuple:
    xp = c.ns
    a, x = s
    dx = (x * x - a) / (2.0 * x)
    x = x - 0.5 * dx
    return (a, x), bool(xp.max(xp.abs(dx)) < TOL)


def fixed2_data(n: int, rng: np.random.Generator) -> tuple:
    return rng.uniform(-1.0, 1.0, n), rng.uniform(-1.0, 1.0, n)


def fixed2_init(c: Contender, b: Any, d: Any) -> tuple:
    return b, d, c.ns.zeros_like(b), c.ns.zeros_like(d)


def fixed2_step(c: Contender, s: tuple) -> tuple:
    xp = c.ns
    b, d, u, v = s
    u2 = 0.5 * xp.cos(v) + b
    v2 = 0.5 * xp.sin(u) + d
    done = bool(xp.max(xp.abs(u2 - u)) + xp.max(xp.abs(v2 - v)) < TOL)
    return (b, d, u2, v2), done


def setitem_data(n: int, rng: np.random.Generator) -> tuple:
    return rng.uniform(0.0, 1.0, n), rng.uniform(0.0, 1e-3, n)


def setitem_init(c: Contender, x: Any, src: Any) -> tuple:
    return c.conv(to_numpy(x).copy()), src


def setitem_step(c: Contender, s: tuple) -> tuple:
    xp = c.ns
    x, src = s
    lap = x[:-2] - 2.0 * x[1:-1] + x[2:]
    x = setitem(c, x, slice(1, -1), x[1:-1] + 0.25 * lap)
    x = setitem(c, x, 0, 0.0)
    x += src
    return (x, src), bool(xp.max(xp.abs(lap)) < TOL)


def checkother_data(n: int, rng: np.random.Generator) -> tuple:
    return rng.uniform(1.0, 2.0, n), rng.uniform(-1.0, 1.0, n)


def checkother_init(c: Contender, d: Any, b: Any) -> tuple:
    return d, b, c.ns.zeros_like(b)


def checkother_step(c: Contender, s: tuple) -> tuple:
    xp = c.ns
    d, b, x = s
    x = x + 0.4 * (b - d * x)
    r = b - d * x
    return (d, b, x), bool(xp.sqrt(xp.sum(r * r)) < TOL)


INNER = 5


def nested_init(c: Contender, a: Any) -> tuple:
    return a, c.conv(to_numpy(a).copy()), c.ns.zeros_like(a)


def nested_step(c: Contender, s: tuple) -> tuple:
    xp = c.ns
    t, x, acc = s
    t = t * 1.01
    for _ in range(INNER):
        dx = (x * x - t) / (2.0 * x)
        x = x - dx
        if bool(xp.max(xp.abs(dx)) < TOL):
            break
    acc = acc + x
    return (t, x, acc), False


K = 8


def kmeans_data(n: int, rng: np.random.Generator) -> tuple:
    m = max(n // 2, 4 * K)
    centers = rng.uniform(-10.0, 10.0, (K, 2))
    X = centers[rng.integers(0, K, m)] + rng.normal(size=(m, 2))
    return X, X[:K].copy()


def kmeans_init(c: Contender, X: Any, c0: Any) -> tuple:
    return X, c0


def kmeans_step(c: Contender, s: tuple) -> tuple:
    xp = c.ns
    X, cen = s
    d2 = (xp.sum(X * X, axis=1)[:, None] - 2.0 * (X @ cen.T)
          + xp.sum(cen * cen, axis=1)[None, :])
    labels = xp.argmin(d2, axis=1)
    onehot = xp.astype(labels[:, None] == xp.arange(K)[None, :], X.dtype)
    counts = xp.sum(onehot, axis=0)
    new = (onehot.T @ X) / xp.maximum(counts, 1.0)[:, None]
    done = bool(xp.max(xp.abs(new - cen)) < TOL)
    return (X, new), done


def power_data(n: int, rng: np.random.Generator) -> tuple:
    m = max(int(round(math.sqrt(n))), 4)
    B = rng.normal(size=(m, m))
    A = B.T @ B / m + np.eye(m)
    return A, np.full(m, 1.0 / math.sqrt(m)), np.array(0.0)


def power_init(c: Contender, A: Any, v: Any, lam: Any) -> tuple:
    return A, v, lam


def power_step(c: Contender, s: tuple) -> tuple:
    xp = c.ns
    A, v, lam_old = s
    w = A @ v
    lam = xp.sum(v * w)
    v = w / xp.sqrt(xp.sum(w * w))
    return (A, v, lam), bool(xp.abs(lam - lam_old) < TOL)


LOOPS: dict[str, tuple[Callable, Callable, Callable, tuple[int, ...]]] = {
    # name: (data, init, step, indices of the state's arrays that are its result)
    "newton": (newton_data, newton_init, newton_step, (1,)),
    "fixed2": (fixed2_data, fixed2_init, fixed2_step, (2, 3)),
    "setitem": (setitem_data, setitem_init, setitem_step, (0,)),
    "checkother": (checkother_data, checkother_init, checkother_step, (2,)),
    "nested": (newton_data, nested_init, nested_step, (1, 2)),
    "kmeans": (kmeans_data, kmeans_init, kmeans_step, (1,)),
    "power": (power_data, power_init, power_step, (1, 2)),
}
SIZES = {"small": 256, "large": 2_000_000}
STEPS = {  # (small, large) steps of the full run; --quick: QUICK_STEPS, small only
    "newton": (200, 30), "fixed2": (200, 30), "setitem": (200, 30), "checkother": (200, 30),
    "nested": (40, 8), "kmeans": (100, 15), "power": (200, 40)}
QUICK_STEPS = 30


# ------------------------------------------------------------------------------ SciPy cases

NPTS = 300


def _scipy_cases() -> dict[str, Callable]:
    import scipy.differentiate as sd
    import scipy.integrate as si
    import scipy.optimize.elementwise as soe

    def find_root(c: Contender, cc: Any, p: Any) -> Any:
        xp = c.ns
        return soe.find_root(lambda x, q: x ** 3 - q, (xp.zeros_like(cc), cc + 1.0),
                             args=(cc,)).x

    def tanhsinh(c: Contender, cc: Any, p: Any) -> Any:
        xp = c.ns
        return si.tanhsinh(lambda x, q: xp.exp(-x) * x ** q, xp.zeros_like(p),
                           xp.ones_like(p) * 2.0, args=(p,)).integral

    def derivative(c: Contender, cc: Any, p: Any) -> Any:
        xp = c.ns
        return sd.derivative(lambda x, q: xp.exp(q * x) * xp.sin(x), xp.ones_like(p),
                             args=(p,)).df

    cases = {"scipy-find_root": find_root, "scipy-tanhsinh": tanhsinh,
             "scipy-derivative": derivative}
    if hasattr(si, "nsum"):
        def nsum(c: Contender, cc: Any, p: Any) -> Any:
            xp = c.ns
            return si.nsum(lambda k, q: 1.0 / k ** q, xp.ones_like(p),
                           xp.full_like(p, math.inf), args=(p,)).sum
        cases["scipy-nsum"] = nsum
    return cases


def scipy_data() -> tuple:
    return np.linspace(1.0, 100.0, NPTS), np.linspace(2.0, 5.0, NPTS)


# ---------------------------------------------------------------------------- sklearn cases

SK_N = 10_000  # (--quick: 2,000)


def sklearn_data(n: int = 0, d: int = 16) -> tuple:
    n = n or SK_N
    rng = np.random.default_rng(20261121)
    X = rng.standard_normal((n, d))
    y = rng.integers(0, 3, n)
    X[np.arange(n), y] += 2.0
    return X, y


def _sklearn_estimators() -> dict[str, Callable]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.mixture import GaussianMixture
    return {
        "sklearn-logreg": lambda: LogisticRegression(max_iter=100),
        # (k-means init has no array-API path; tol=0: all 20 EM iterations run)
        "sklearn-gmm": lambda: GaussianMixture(3, max_iter=20, tol=0.0, random_state=0,
                                               init_params="random_from_data"),
    }


# ------------------------------------------------------------------------------- measuring


def _structures(xp: Any, m: dict, state: dict) -> int:
    """Graph structures met so far, counted monotonically. The engine's own ``structures``
    counter where ``metrics()`` has one; else, with ``host_first`` on (the default, or
    ``check``), the host tier's records (one per structural key on first sight, run on the
    host or compiled; half are dropped when 4,096 are kept, which this count steps over);
    else ``cache_misses``."""
    if "structures" in m:
        return int(m["structures"])
    try:
        from xla_array.core import hosteval
        entries = hosteval._ENTRIES
        on = xp.flags.get("host_first") in (True, "check")
    except Exception:
        entries, on = None, False
    if not on or entries is None:
        return int(m["cache_misses"])
    n = len(entries)
    if n < state.get("last", n):  # the oldest half was dropped (at most once between reads)
        state["offset"] = state.get("offset", 0) + getattr(hosteval, "_ENTRIES_MAX", 4096) // 2
    state["last"] = n
    return n + state.get("offset", 0)


COUNTS = ("compiles", "cache_misses", "host_runs", "executions", "auto_flushes",
          "materializations")


class Meter:
    """xla_array's counters read after each step (outside the timed region)."""

    def __init__(self, c: Contender | None) -> None:
        self.xp = c.ns if c is not None and c.name == "xla_array" else None
        self.rows: list[dict] = []
        self._state: dict = {}
        self._last = self._read()

    def _read(self) -> dict | None:
        if self.xp is None:
            return None
        m = self.xp.debug.metrics()
        d = {k: int(m.get(k, 0)) for k in COUNTS}
        d["structures"] = _structures(self.xp, m, self._state)
        return d

    def tick(self) -> None:
        now = self._read()
        if now is not None and self._last is not None:
            self.rows.append({k: now[k] - self._last[k] for k in now})
        self._last = now


def _tenths(times: list[float]) -> tuple[float, float]:
    n = len(times)
    t = max(1, n // 10)
    second = times[t:2 * t] or times[-1:]
    return statistics.median(second), statistics.median(times[n - t:])


def _summary(times: list[float], rows: list[dict], total: float) -> dict:
    steady = times[1:] or times
    d: dict[str, Any] = {"steps": len(times), "first_s": times[0] if times else None,
                         "median_s": statistics.median(steady) if steady else None,
                         "min_s": min(steady) if steady else None, "total_s": total,
                         "step_s": times}
    if times:
        d["tenth2_s"], d["tenth10_s"] = _tenths(times)
    if rows:
        later = rows[AFTER:]
        d["per_step_counts"] = rows
        d["after_step3"] = {k: sum(r[k] for r in later) for k in rows[0]}
        d["after_step3_per_step"] = {k: v / max(len(later), 1)
                                     for k, v in d["after_step3"].items()}
    return d


def run_loop(c: Contender, name: str, n: int, steps: int) -> tuple[dict, list]:
    data, init, step, res = LOOPS[name]
    arrays = [c.conv(a) for a in data(n, np.random.default_rng(20261121))]
    state = init(c, *arrays)
    meter = Meter(c)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        state, done = step(c, state)
        times.append(time.perf_counter() - t0)
        meter.tick()
        if done:
            break
    t0 = time.perf_counter()
    out = [state[i] for i in res]
    c.force(*out)
    final = time.perf_counter() - t0
    meter.tick()
    total = sum(times) + final
    d = _summary(times, meter.rows[:len(times)], total)
    d["final_s"] = final
    if meter.rows[len(times):]:
        d["final_counts"] = meter.rows[len(times)]
    return d, [to_numpy(o) for o in out]


def run_calls(c: Contender, call: Callable, steps: int) -> tuple[dict, list]:
    """A case whose step is one call returning the arrays to force and compare."""
    meter = Meter(c)
    times = []
    out: list = []
    for _ in range(steps):
        t0 = time.perf_counter()
        out = call()
        c.force(*out)
        times.append(time.perf_counter() - t0)
        meter.tick()
    return _summary(times, meter.rows, sum(times)), [to_numpy(o) for o in out]


def scipy_call(c: Contender, fn: Callable) -> Callable:
    cc, p = (c.conv(a) for a in scipy_data())

    def call() -> list:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [fn(c, cc, p)]
    return call


def sklearn_call(c: Contender, make: Callable) -> Callable:
    import sklearn
    X, y = sklearn_data()
    Xc, yc = c.conv(X), c.conv(y)
    dispatch = c.name != "numpy"
    gmm = "GaussianMixture" in type(make()).__name__

    def call() -> list:
        with warnings.catch_warnings(), sklearn.config_context(array_api_dispatch=dispatch):
            warnings.simplefilter("ignore")
            est = make().fit(Xc) if gmm else make().fit(Xc, yc)
            c.force(*vars(est).values())  # every fitted array computed
            return [est.means_] if gmm else [est.predict_proba(Xc)]
    return call


PROBE_N = 1000


def run_probe(c: Contender, name: str, steps: int, batch: int) -> tuple[dict, list]:
    """A step is ``batch`` calls; its time per call. ``probe-sum`` reads a float each call
    (xla_array: after a warm-up of batches until one neither compiles nor runs on the host,
    3 s at most, every call a cache hit); ``probe-record`` records ``x + 1.0`` and drops
    it (NumPy and JAX compute it; xla_array only records it)."""
    xp = c.ns
    x = c.conv(np.random.default_rng(7).uniform(0.0, 1.0, PROBE_N).astype(np.float32))
    if name == "probe-sum":
        if c.name == "jax_jit":
            import jax
            f = jax.jit(lambda v: xp.sum(v * 2.0 + 1.0))

            def one() -> Any:
                return float(f(x))
        else:
            def one() -> Any:
                return float(xp.sum(x * 2.0 + 1.0))
    else:
        def one() -> Any:
            return x + 1.0
    r = one()
    if c.name == "xla_array" and name == "probe-sum":  # the steady state: warm up until a
        m0, t_end = c.ns.debug.metrics(), time.perf_counter() + 3.0  # batch neither compiles
        while time.perf_counter() < t_end:  # nor runs on the host tier (rent-or-buy)
            for _ in range(batch):
                r = one()
            m1 = c.ns.debug.metrics()
            if all(m1[k] == m0[k] for k in ("compiles", "host_runs", "cache_misses")):
                break
            m0 = m1
    meter = Meter(c)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        for _ in range(batch):
            r = one()
        times.append((time.perf_counter() - t0) / batch)
        meter.tick()
    d = _summary(times, meter.rows, sum(times) * batch)
    d["batch"] = batch
    c.force(r)
    return d, [np.asarray(r) if name == "probe-sum" else to_numpy(r)]


def run_chain(c: Contender, steps: int) -> tuple[dict, list]:
    xp = c.ns
    y = c.conv(np.random.default_rng(7).uniform(0.0, 1.0, PROBE_N).astype(np.float32))
    meter = Meter(c)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        y = y * 1.0001 + 0.5
        times.append(time.perf_counter() - t0)
        meter.tick()
    t0 = time.perf_counter()
    s = float(xp.sum(y))
    final = time.perf_counter() - t0
    d = _summary(times, meter.rows, sum(times) + final)
    d["final_s"] = final
    return d, [np.asarray(s)]


# ------------------------------------------------------------------------------- the cases


def _cases(quick: bool) -> list[dict]:
    out = []
    sizes = ("small",) if quick else ("small", "large")
    for size in sizes:
        for name in LOOPS:
            steps = QUICK_STEPS if quick else STEPS[name][size == "large"]
            if quick and name == "nested":
                steps = QUICK_STEPS // INNER * 2
            out.append({"id": f"{name}-{size}", "kind": "loop", "loop": name,
                        "n": SIZES[size], "size": size, "steps": steps})
    for name in ("scipy-find_root", "scipy-tanhsinh", "scipy-derivative", "scipy-nsum"):
        out.append({"id": name, "kind": "scipy", "n": NPTS, "size": "small",
                    "steps": 3 if quick else 6})
    for name in ("sklearn-logreg", "sklearn-gmm"):
        out.append({"id": name, "kind": "sklearn", "n": (2_000 if quick else SK_N) * 16,
                    "size": "-", "steps": 3 if quick else 6})
    out.append({"id": "probe-sum", "kind": "probe", "n": PROBE_N, "size": "small",
                "steps": 20 if quick else 60, "batch": 50 if quick else 100})
    out.append({"id": "probe-record", "kind": "probe", "n": PROBE_N, "size": "small",
                "steps": 20 if quick else 60, "batch": 100 if quick else 500})
    out.append({"id": "probe-chain", "kind": "chain", "n": PROBE_N, "size": "small",
                "steps": 300 if quick else 1000})
    return out


def target(case: dict) -> tuple[str, float | None, str]:
    """(what the ratio is against, its bound, the words) for the case's time target."""
    cid, kind = case["id"], case["kind"]
    if kind == "loop":
        b = 3.0 if case["size"] == "small" else 0.5
        return "numpy", b, f"<= {b:g}x NumPy"
    if kind == "scipy":
        return "numpy", 2.0, "<= 2x NumPy"
    if cid == "sklearn-logreg":
        return "numpy", 1.5, "<= 1.5x NumPy"
    if cid == "probe-sum":
        return "jax_jit", 1.5, "<= 1.5x jax.jit"
    if kind in ("probe", "chain"):
        return "numpy", 1.5, "<= 1.5x NumPy"
    return "numpy", None, "-"


def judge(case: dict, res: dict) -> tuple[bool | None, list[str]]:
    """Whether xla_array meets the case's targets, and what it misses."""
    x = res.get("xla_array")
    if not x or "error" in x:
        return None, ["no xla_array result"]
    miss = []
    against, bound, _words = target(case)
    ref = res.get(against)
    if bound is not None and ref and "error" not in ref and ref.get("median_s"):
        ratio = x["median_s"] / ref["median_s"]
        if ratio > bound:
            miss.append(f"{ratio:.2f}x {against}")
    if case["kind"] in ("loop", "chain", "scipy", "sklearn", "probe"):
        a = x.get("after_step3", {})
        if a.get("compiles"):
            miss.append(f"{a['compiles']} compiles after step {AFTER}")
        if a.get("structures") and case["kind"] != "probe":
            miss.append(f"{a['structures']} new structures after step {AFTER}")
        if case["kind"] in ("loop", "chain") and x.get("tenth2_s"):
            if x["tenth10_s"] > FLAT_TOLERANCE * x["tenth2_s"]:
                miss.append(f"not flat ({x['tenth10_s'] / x['tenth2_s']:.2f}x)")
    return not miss, miss


def compare(got: list, exp: list, case: dict) -> str | None:
    """None where ``got`` matches NumPy's ``exp``, else the difference in words."""
    if len(got) != len(exp):
        return f"{len(got)} results, NumPy {len(exp)}"
    rtol, atol = 1e-6, 1e-9
    if case["kind"] == "sklearn":
        rtol, atol = 1e-3, 1e-3
    if case["id"] == "probe-chain":
        rtol = 1e-4  # (a float32 sum of 1,000 values: summation orders differ)
    for g, e in zip(got, exp):
        if g.shape != e.shape:
            return f"shape {g.shape}, NumPy {e.shape}"
        if not np.allclose(g.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol,
                           equal_nan=True):
            err = np.max(np.abs(g.astype(np.float64) - e) / (np.abs(e) + atol))
            return f"relative difference {err:.2g}"
    return None


def run_case(case: dict, cs: dict[str, Contender], settle: float, quick: bool) -> dict:
    res: dict[str, dict] = {}
    expected = None
    order = [k for k in ALL_CONTENDERS if k in cs]
    if case["id"] != "probe-sum":
        order = [k for k in order if k != "jax_jit"]
    if case["kind"] == "scipy" and quick:  # (JAX eager's first derivative call: ~40 s of
        order = [k for k in order if k != "jax_eager"]  # compiles; its others raise)
    scipy_fns = _scipy_cases() if case["kind"] == "scipy" else {}
    if case["kind"] == "scipy" and case["id"] not in scipy_fns:
        return {"skipped": "not in this SciPy"}
    for name in order:
        c = cs[name]
        gc.collect()
        time.sleep(settle)
        try:
            if case["kind"] == "loop":
                d, out = run_loop(c, case["loop"], case["n"], case["steps"])
            elif case["kind"] == "scipy":
                d, out = run_calls(c, scipy_call(c, scipy_fns[case["id"]]), case["steps"])
            elif case["kind"] == "sklearn":
                d, out = run_calls(c, sklearn_call(c, _sklearn_estimators()[case["id"]]),
                                   case["steps"])
            elif case["kind"] == "probe":
                d, out = run_probe(c, case["id"], case["steps"], case["batch"])
            else:
                d, out = run_chain(c, case["steps"])
        except Exception as e:
            res[name] = {"error": f"{type(e).__name__}: {str(e)[:160]}",
                         "traceback": traceback.format_exc()}
            continue
        if name == "numpy":
            expected = out
        elif expected is not None:
            bad = compare(out, expected, case)
            if bad:
                d["mismatch"] = bad
        res[name] = d
    return res


# ------------------------------------------------------------------------------- reporting


def _t(s: float | None) -> str:
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1.0:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def _ratio(r: float) -> str:
    return f"{r:.0f}x" if r >= 100 else f"{r:.3g}x" if r >= 1 else f"{r:.2g}x"


def table(cases: list[dict], results: dict, names: list[str]) -> str:
    cols = [n for n in ALL_CONTENDERS if n in names]
    head = (["case", "steps"] + [f"{n} /step" for n in cols]
            + ["xla 2nd / last tenth", "xla compiles, structures /step after 3",
               "target", "pass"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for case in cases:
        res = results.get(case["id"], {})
        if "skipped" in res:
            continue
        num = res.get("numpy", {})
        cells = [case["id"], str(case["steps"])]
        for n in cols:
            r = res.get(n)
            if r is None:
                cells.append("-")
            elif "error" in r:
                cells.append("ERR " + r["error"].split(":")[0])
            else:
                cell = _t(r["median_s"])
                if n != "numpy" and num.get("median_s"):
                    cell += f" ({_ratio(r['median_s'] / num['median_s'])})"
                if r.get("mismatch"):
                    cell += " (!)"
                cells.append(cell)
        x = res.get("xla_array", {})
        if x and "error" not in x and x.get("tenth2_s"):
            cells.append(f"{_t(x['tenth2_s'])} / {_t(x['tenth10_s'])}")
            a = x.get("after_step3_per_step", {})
            cells.append(f"{a.get('compiles', 0):.2g}, {a.get('structures', 0):.2g}"
                         if a else "-")
        else:
            cells += ["-", "-"]
        cells.append(target(case)[2])
        ok, miss = judge(case, res)
        cells.append("-" if ok is None else "pass" if ok else "FAIL: " + "; ".join(miss))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(data: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"numpy": "#4c72b0", "strict": "#937860", "jax_eager": "#dd8452",
              "jax_jit": "#55a868", "xla_array": "#c44e52"}
    cases = [c for c in data["cases"] if "numpy" in data["results"].get(c["id"], {})]
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(13, 9),
                                  gridspec_kw={"height_ratios": [3, 2]})
    names = [n for n in ("strict", "jax_eager", "jax_jit", "xla_array")
             if any(n in data["results"][c["id"]] for c in cases)]
    width = 0.8 / max(len(names), 1)
    xs = np.arange(len(cases))
    for k, n in enumerate(names):
        vals = []
        for c in cases:
            r, num = data["results"][c["id"]].get(n, {}), data["results"][c["id"]]["numpy"]
            ok = r and "error" not in r and num.get("median_s")
            vals.append(r["median_s"] / num["median_s"] if ok else np.nan)
        ax.bar(xs + (k - (len(names) - 1) / 2) * width, vals, width, label=n,
               color=colors.get(n))
    for i, c in enumerate(cases):
        against, bound, _ = target(c)
        if bound is not None and against == "numpy":
            ax.plot([i - 0.45, i + 0.45], [bound, bound], color="black", lw=1.2)
    ax.axhline(1.0, color="grey", lw=0.6, ls="--")
    ax.set_yscale("log")
    ax.set_ylabel("time per step / NumPy's (log)")
    ax.set_xticks(xs, [c["id"] for c in cases], rotation=40, ha="right", fontsize=8)
    ax.legend(fontsize=8)
    ax.set_title("Iterative code: per-step time relative to NumPy (lower is better; "
                 "black: target)")
    for cid in ("newton-small", "newton-large"):
        r = data["results"].get(cid, {})
        for n, style in (("numpy", ":"), ("xla_array", "-")):
            if n in r and "error" not in r[n]:
                ax2.plot(np.arange(1, len(r[n]["step_s"]) + 1),
                         np.array(r[n]["step_s"]) * 1e3, style, color=colors[n],
                         label=f"{n}, {cid}", lw=1.5 if cid.endswith("large") else 0.9)
    ax2.set_yscale("log")
    ax2.set_xlabel("step")
    ax2.set_ylabel("ms (log)")
    ax2.set_title("Damped Newton: the time of each step (flat is the target)")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=100)
    print("wrote", path)


def _select(cases: list[dict], only: str | None) -> list[dict]:
    if not only:
        return cases
    keys = [k.strip() for k in only.split(",") if k.strip()]
    groups = {"loops": "loop", "scipy": "scipy", "sklearn": "sklearn", "probes": "probe"}
    out = []
    for c in cases:
        for k in keys:
            if (c["id"] == k or c["id"].startswith(k + "-") or c["id"].startswith(k)
                    or (groups.get(k) == c["kind"]) or (k == "probes" and c["kind"] == "chain")):
                out.append(c)
                break
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="small sizes, few steps (< 60 s); checks results against NumPy")
    p.add_argument("--only", help="cases by name or prefix: newton,scipy,probe-sum,loops,...")
    p.add_argument("--json", help="write every step's time and count here")
    p.add_argument("--plot", help="write the figure here (needs matplotlib)")
    p.add_argument("--plot-from", help="only plot this --json file (with --plot)")
    p.add_argument("--contenders", default=",".join(ALL_CONTENDERS))
    p.add_argument("--blas-threads", default="1",
                   help="OpenBLAS/OpenMP threads of NumPy (and of xla_array's host tier), set "
                        "before NumPy is imported; 0: NumPy's default (on a loaded 2-core "
                        "machine two spin-waiting BLAS threads made a GaussianMixture fit 8-10 "
                        "s instead of 0.7)")
    p.add_argument("--settle", type=float, default=0.15,
                   help="seconds of sleep before each contender (OpenBLAS threads spin)")
    args = p.parse_args()
    if args.plot_from:
        plot(json.load(open(args.plot_from)), args.plot or "docs/img/iterative.png")
        return 0
    global SK_N
    if args.quick:
        SK_N = 2_000
    names = [n.strip() for n in args.contenders.split(",") if n.strip()]
    cs, missing = _contenders(names)
    cases = _select(_cases(args.quick), args.only)
    import scipy
    import sklearn

    import xla_array as xp
    t_run = time.perf_counter()
    header = {
        "python": platform.python_version(), "numpy": np.__version__,
        "scipy": scipy.__version__, "sklearn": sklearn.__version__,
        "jaxlib": xp.debug.jaxlib_version(), "cpus": os.cpu_count(),
        "load": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "host_first": xp.flags.get("host_first"), "cache_dir": os.environ["XLA_ARRAY_CACHE_DIR"],
        "missing": missing, "quick": args.quick, "blas_threads": BLAS_THREADS,
    }
    try:
        import jax
        header["jax"] = jax.__version__
    except ImportError:
        pass
    print("# bench_iterative " + " ".join(f"{k}={v}" for k, v in header.items()), flush=True)
    results: dict[str, Any] = {}
    for case in cases:
        t0 = time.perf_counter()
        results[case["id"]] = run_case(case, cs, args.settle, args.quick)
        r = results[case["id"]]
        if "skipped" in r:
            print(f"{case['id']}: skipped ({r['skipped']})", flush=True)
            continue
        ok, miss = judge(case, r)
        brief = ", ".join(f"{n} {_t(v['median_s'])}" if "error" not in v else f"{n} ERR"
                          for n, v in r.items())
        print(f"{case['id']} ({time.perf_counter() - t0:.1f} s): {brief}", flush=True)
    print()
    print(table(cases, results, list(cs)))
    bad = []
    for case in cases:
        for n, r in results.get(case["id"], {}).items():
            if isinstance(r, dict) and r.get("mismatch"):
                bad.append(f"{case['id']} {n}: {r['mismatch']}")
            if n == "xla_array" and isinstance(r, dict) and "error" in r:
                bad.append(f"{case['id']} xla_array: {r['error']}")
    errs = [f"{c['id']} {n}: {r['error']}" for c in cases
            for n, r in results.get(c["id"], {}).items()
            if isinstance(r, dict) and "error" in r and n != "xla_array"]
    if errs:
        print("\nErrors of other contenders (their cells read ERR):")
        print("\n".join("- " + e for e in errs))
    print(f"\n(per step: median of the steps after the first; (Nx): time / NumPy's; "
          f"xla counts: per step after step {AFTER}; flat: last tenth <= "
          f"{FLAT_TOLERANCE:g}x the second; run {time.perf_counter() - t_run:.0f} s, load "
          f"{' '.join(f'{v:.2f}' for v in os.getloadavg())})")
    data = {"header": header, "cases": cases, "results": results,
            "seconds": time.perf_counter() - t_run}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(data, f, indent=1, default=str)
        print("wrote", args.json)
    if args.plot:
        plot(data, args.plot)
    if bad:
        print("\nMISMATCH against NumPy:\n" + "\n".join("- " + b for b in bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
