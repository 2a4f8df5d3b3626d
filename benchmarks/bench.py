#!/usr/bin/env python3
"""Side-by-side benchmark: xla_array vs NumPy vs JAX eager vs jax.jit, in one process.

Every workload is one plain function ``f(xp, *arrays)`` written with array-API calls, run
unchanged by every contender (``jax.jit`` traces it with ``jax.numpy``). Samples are
interleaved: for each repeat the contenders take turns (the order rotates every repeat);
before each timed sample the script sleeps ``--settle`` seconds and makes one untimed call,
so a BLAS thread still spinning from the previous contender does not steal CPU (NumPy's
OpenBLAS threads keep spinning for about a tenth of a second after a call, hence the 0.15 s
default). Reported numbers are medians (and best-of) over the timed samples, warm-up excluded.

xla_array's first call runs a new graph on the host where its first-use tier does (NumPy's
code, bit for bit; docs/laziness.md): that call is reported as ``xla host first call``. Its
first compiled call (a compile, ``host_first`` off for that call) is reported apart, with the
compile seconds it spent; the timed samples are the compiled executable's.

Every contender's result is checked against NumPy's (computed by the script, whatever the
contenders), for the first calls and for every timed sample: its dtype and shape, and its
largest difference from NumPy's float32 result or from a float64 NumPy reference relative to
max|reference|, within a tolerance that follows the workload's conditioning (16 x the
difference of NumPy's own float32 result from the float64 one, at least 2**-16). The script
exits with status 1 when a check fails or xla_array raised, so ``--quick`` is a CI smoke run.

The timed region is the call plus forcing the result on the device, never a copy to host:
NumPy nothing, JAX ``.block_until_ready()``, xla_array ``xla_array.materialize(result)`` plus
a wait for the device (the PJRT CPU client is asynchronous; see ``XlaArrayC``).

Usage: python3 benchmarks/bench.py [--repeats 7] [--only 1,2,8] [--quick] [--json out.json]
                                   [--settle 0.15] [--contenders numpy,xla_array] [--wait-quiet 20]
See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
import traceback
from typing import Any, Callable

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # silence PJRT client start-up lines
# Benchmark the working tree: put the repository root right after the script's own directory.
_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO not in sys.path:
    sys.path.insert(1, _REPO)

ALL_CONTENDERS = ("numpy", "jax_eager", "jax_jit", "xla_array")

# --------------------------------------------------------------------------------------------
# Workloads: each is f(xp, *arrays), using only array-API calls shared by numpy/jnp/xla_array.
# --------------------------------------------------------------------------------------------


def w_chain(xp, a, b, c):
    # 8 elementwise ops (mul, add, mul, sub, abs, add, div, exp) + a full sum
    t = ((a * b + c) * 0.5 - a) / (1.0 + xp.abs(b))
    return xp.sum(xp.exp(t))


def w_softmax(xp, x):
    m = xp.max(x, axis=1, keepdims=True)
    e = xp.exp(x - m)
    return e / xp.sum(e, axis=1, keepdims=True)


def w_logsumexp(xp, x):
    m = xp.max(x, axis=1)
    return m + xp.log(xp.sum(xp.exp(x - m[:, None]), axis=1))


def w_matmul(xp, a, b):
    return a @ b


def w_mlp(xp, x, w1, b1, w2, b2):
    h = xp.maximum(x @ w1 + b1, 0.0)
    return h @ w2 + b2


def w_standardize(xp, x):
    return (x - xp.mean(x, axis=0)) / xp.std(x, axis=0)


def w_kmeans(xp, x, c):
    k = c.shape[0]
    d2 = (xp.sum(x * x, axis=1)[:, None] - 2.0 * (x @ c.T)
          + xp.sum(c * c, axis=1)[None, :])
    labels = xp.argmin(d2, axis=1)
    onehot = xp.astype(labels[:, None] == xp.arange(k)[None, :], xp.float32)
    counts = xp.sum(onehot, axis=0)
    return (onehot.T @ x) / counts[:, None]


def w_pairwise(xp, x):
    sq = xp.sum(x * x, axis=1)
    d2 = sq[:, None] - 2.0 * (x @ x.T) + sq[None, :]
    return xp.sqrt(xp.maximum(d2, 0.0))


TINY_W = [1.0 + 1e-4 * (i % 7) for i in range(50)]   # Python floats, distinct values
TINY_S = [1e-3 * ((i % 5) - 2) for i in range(50)]


def w_tiny(xp, x):
    for i in range(100):
        if i % 2 == 0:
            x = x * TINY_W[i // 2]
        else:
            x = x + TINY_S[i // 2]
    return x


GD_STEPS = 50   # 10 with --quick (each xla_array compile of the unrolled loop is the slow part)


def gd_step(xp, X, y, w):
    return w - 0.01 * (X.T @ (X @ w - y))


def make_gd(steps: int) -> tuple[Callable, Callable]:
    """Workload 9 as (f(xp, X, y, w), jit factory: the whole loop jitted, ``lax.fori_loop``
    over the steps: one executable a call, as xla_array's fused chunk is)."""
    def w_gd(xp, X, y, w):
        for _ in range(steps):
            w = gd_step(xp, X, y, w)
        return w

    def jit_gd(jax, jnp):
        return jax.jit(lambda X, y, w: jax.lax.fori_loop(
            0, steps, lambda _i, w: gd_step(jnp, X, y, w), w))
    return w_gd, jit_gd


def w_svd(xp, x):
    u, s, vt = xp.linalg.svd(x, full_matrices=False)
    # sign-independent result that still needs U and Vt (each column/row has norm 1)
    return s * xp.sum(u * u, axis=0) * xp.sum(vt * vt, axis=1)


def w_eigh(xp, a):
    w, v = xp.linalg.eigh(a)
    return w * xp.sum(v * v, axis=0)


def w_solve(xp, a, b):
    return xp.linalg.solve(a, b)


def w_cholesky(xp, a):
    return xp.linalg.cholesky(a)


def w_fft(xp, x):
    return xp.abs(xp.fft.rfft(x, axis=-1))


def _spd(r, n):
    m = r.standard_normal((n, n)).astype(np.float32)
    return (m @ m.T / np.float32(n) + np.eye(n, dtype=np.float32)).astype(np.float32)


def _normal(rng, shape, scale=1.0):
    return (rng.standard_normal(shape, dtype=np.float32) * np.float32(scale)).astype(np.float32)


def make_workloads(quick: bool) -> list[dict]:
    """Each entry: id, name, size, fn, inputs(rng) -> list of float32 numpy arrays."""
    q = quick
    n1 = 200_000 if q else 4_000_000
    s2 = 256 if q else 2048
    r3, c3 = (512, 256) if q else (4096, 1024)
    m4 = 256 if q else 1024
    b4, h4 = (128, 256) if q else (512, 1024)
    n5 = 10_000 if q else 100_000
    n6 = 10_000 if q else 100_000
    n7 = 400 if q else 2000
    n9 = 2_000 if q else 10_000
    n10 = 128 if q else 512
    f10 = (64, 1024) if q else (1024, 4096)
    steps9 = 10 if q else GD_STEPS
    w_gd, jit_gd = make_gd(steps9)
    return [
        dict(id="1", name="elementwise chain (8 ops) + sum", size=f"3 x {n1:,} f32", fn=w_chain,
             inputs=lambda r: [_normal(r, n1), _normal(r, n1), _normal(r, n1)]),
        dict(id="2", name="softmax over rows", size=f"{s2}x{s2} f32", fn=w_softmax,
             inputs=lambda r: [_normal(r, (s2, s2))]),
        dict(id="3", name="logsumexp axis=1 (max-subtracted)", size=f"{r3}x{c3} f32",
             fn=w_logsumexp, inputs=lambda r: [_normal(r, (r3, c3))]),
        dict(id="4a", name="matmul", size=f"{m4}x{m4} @ {m4}x{m4} f32", fn=w_matmul,
             inputs=lambda r: [_normal(r, (m4, m4)), _normal(r, (m4, m4))]),
        dict(id="4b", name="MLP fwd relu(x@W1+b1)@W2+b2",
             size=f"x {b4}x{h4}, W1/W2 {h4}x{h4} f32", fn=w_mlp,
             inputs=lambda r: [_normal(r, (b4, h4)), _normal(r, (h4, h4), h4 ** -0.5),
                               _normal(r, h4, 0.1), _normal(r, (h4, h4), h4 ** -0.5),
                               _normal(r, h4, 0.1)]),
        dict(id="5", name="standardize (x-mean0)/std0", size=f"{n5:,}x64 f32", fn=w_standardize,
             inputs=lambda r: [_normal(r, (n5, 64), 3.0) + np.float32(1.0)]),
        dict(id="6", name="k-means step (dist, argmin, one-hot matmul)",
             size=f"{n6:,}x16 pts, 32 centroids", fn=w_kmeans,
             inputs=lambda r: (lambda x: [x, x[r.choice(n6, 32, replace=False)].copy()])(
                 _normal(r, (n6, 16)))),
        dict(id="7", name="pairwise euclidean distances", size=f"{n7}x64 -> {n7}x{n7} f32",
             fn=w_pairwise, inputs=lambda r: [_normal(r, (n7, 64))]),
        dict(id="8", name="100 small ops (x*w, x+s) on 1000 elems", size="1,000 f32, 100 ops",
             fn=w_tiny, inputs=lambda r: [_normal(r, 1000)]),
        # X scaled by 0.1 so that lr=0.01 is stable (0.01 * lambda_max(X.T X) ~ 1.2 < 2).
        dict(id="9", name=f"GD loop: {steps9}x w -= 0.01*X.T@(X@w-y)",
             size=f"X {n9:,}x100 f32", fn=w_gd, jit_factory=jit_gd,
             inputs=lambda r: [_normal(r, (n9, 100), 0.1), _normal(r, n9),
                               np.zeros(100, np.float32)]),
        dict(id="10a", name="svd (reduced)", size=f"{n10}x{n10 // 2} f32", fn=w_svd,
             inputs=lambda r: [_normal(r, (n10, n10 // 2))]),
        dict(id="10b", name="eigh", size=f"{n10}x{n10} f32 SPD", fn=w_eigh,
             inputs=lambda r: [_spd(r, n10)]),
        dict(id="10c", name="solve", size=f"{n10}x{n10} f32, 16 rhs", fn=w_solve,
             inputs=lambda r: [_spd(r, n10), _normal(r, (n10, 16))]),
        dict(id="10d", name="cholesky", size=f"{n10}x{n10} f32 SPD", fn=w_cholesky,
             inputs=lambda r: [_spd(r, n10)]),
        dict(id="10e", name="|rfft| along rows", size=f"{f10[0]}x{f10[1]} f32", fn=w_fft,
             inputs=lambda r: [_normal(r, f10)]),
    ]


# --------------------------------------------------------------------------------------------
# Contenders
# --------------------------------------------------------------------------------------------


def _err(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class Contender:
    name = "?"
    xp: Any = None

    def convert(self, arr: np.ndarray) -> Any:
        return arr

    def make_callable(self, wl: dict) -> Callable:
        fn, xp = wl["fn"], self.xp
        return lambda *arrs: fn(xp, *arrs)

    def force(self, result: Any) -> None:
        pass

    def to_host(self, result: Any) -> np.ndarray:
        return np.asarray(result)


class NumpyC(Contender):
    name = "numpy"
    xp = np


class JaxEagerC(Contender):
    name = "jax_eager"

    def __init__(self, jax, jnp):
        self.jax, self.xp = jax, jnp

    def convert(self, arr):
        return self.jax.block_until_ready(self.xp.asarray(arr))

    def force(self, result):
        result.block_until_ready()


class JaxJitC(JaxEagerC):
    name = "jax_jit"

    def make_callable(self, wl):
        if "jit_factory" in wl:
            return wl["jit_factory"](self.jax, self.xp)
        fn, jnp = wl["fn"], self.xp
        return self.jax.jit(lambda *arrs: fn(jnp, *arrs))


class XlaArrayC(Contender):
    name = "xla_array"

    def __init__(self, mod):
        self.xp = self.mod = mod
        # steady state is timed: a graph compiled in the fast tier gets its optimized recompile
        # within the warm-up calls, not on a background thread during the timed ones
        flags = getattr(mod, "flags", None)
        if flags is not None and flags.describe().get("tiered", (False,))[0]:
            flags.set(tiered="wait")
        # likewise a graph whose host runs took the budget compiles in the warm-up call that
        # spent it, not behind the timed calls' host runs
        if flags is not None and "compile_behind" in flags.describe():
            flags.set(compile_behind=False)
        # materialize() dispatches the executable; on an asynchronous PJRT client it may return
        # before the device is done. JAX's column waits (block_until_ready), so this one must
        # too: use a public blocking hook when the library has one, else its backend's block()
        # on the result buffer (private API, guarded), else nothing (and say so).
        self._block: Callable[[Any], None] | None = None
        self.block_method = "none (timings may be dispatch-only)"
        for holder, attr in ((mod, "block_until_ready"),
                             (getattr(mod, "debug", None), "block_until_ready")):
            if holder is not None and callable(getattr(holder, attr, None)):
                self._block = getattr(holder, attr)
                self.block_method = f"public {getattr(holder, '__name__', '?')}.{attr}"
                break
        else:
            backend = getattr(mod, "_backend", None)
            if backend is not None and callable(getattr(backend, "block", None)):
                def _block(result, _b=backend.block):
                    buf = getattr(getattr(result, "_node", None), "buffer", None)
                    if buf is not None:
                        _b([buf])
                self._block = _block
                self.block_method = "private _backend.block([result._node.buffer])"

    def convert(self, arr):
        a = self.mod.asarray(arr)
        self.mod.materialize(a)
        return a

    def force(self, result):
        self.mod.materialize(result)
        if self._block is not None:
            self._block(result)

    def metrics(self) -> dict:
        return dict(self.mod.debug.metrics())

    def reset_metrics(self) -> None:
        self.mod.debug.reset_metrics()


def load_contenders(wanted: list[str], disk_cache: bool = False
                    ) -> tuple[list[Contender], dict[str, str], dict]:
    """Returns (contenders, import errors by name, version info)."""
    out: list[Contender] = []
    errors: dict[str, str] = {}
    versions = {"numpy": np.__version__}
    if "numpy" in wanted:
        out.append(NumpyC())
    if "jax_eager" in wanted or "jax_jit" in wanted:
        try:
            import jax
            jax.config.update("jax_enable_x64", True)
            import jax.numpy as jnp
            import jaxlib
            versions["jax"] = jax.__version__
            versions["jaxlib"] = jaxlib.__version__
            versions["jax_devices"] = [str(d) for d in jax.devices()]
            if "jax_eager" in wanted:
                out.append(JaxEagerC(jax, jnp))
            if "jax_jit" in wanted:
                out.append(JaxJitC(jax, jnp))
        except Exception as exc:  # jax is an optional extra
            for n in ("jax_eager", "jax_jit"):
                if n in wanted:
                    errors[n] = f"not importable ({_err(exc)})"
    if "xla_array" in wanted:
        if not disk_cache:   # first call = a real compile, unless --disk-cache
            os.environ.setdefault("XLA_ARRAY_CACHE_DIR", "off")
        versions["XLA_ARRAY_CACHE_DIR"] = os.environ.get("XLA_ARRAY_CACHE_DIR", "(default)")
        # a structure run on the host first compiles at its second run (the warm-up call):
        # the timed samples are the compiled graph's, not the host's (docs/laziness.md)
        os.environ.setdefault("XLA_ARRAY_HOST_FIRST_BUDGET", "0")
        try:
            import xla_array
            versions["xla_array"] = getattr(xla_array, "__version__", "?")
            versions["xla_array_path"] = str(getattr(xla_array, "__file__", None))
            xc = XlaArrayC(xla_array)
            versions["xla_array_block"] = xc.block_method
            out.append(xc)
        except Exception as exc:
            errors["xla_array"] = _err(exc)
            versions["xla_array_import_traceback"] = traceback.format_exc()
    return out, errors, versions


# --------------------------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------------------------


def _cpu_snapshot() -> tuple[float, float, float]:
    """(wall s, whole-machine busy CPU s, this process's CPU s) for background-load estimates."""
    try:
        with open("/proc/stat") as fh:
            f = [int(v) for v in fh.readline().split()[1:]]
        tick = os.sysconf("SC_CLK_TCK")
        busy = (sum(f[:8]) - f[3] - f[4]) / tick          # all but idle and iowait
    except (OSError, ValueError, IndexError):
        busy = float("nan")
    t = os.times()
    return time.perf_counter(), busy, t.user + t.system


def _bg_load(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    """Fraction of the machine's CPUs used by other processes between snapshots a and b."""
    wall = b[0] - a[0]
    if wall <= 0:
        return float("nan")
    return max(0.0, ((b[1] - a[1]) - (b[2] - a[2])) / (wall * (os.cpu_count() or 1)))


def wait_quiet(max_s: float, threshold: float = 0.5) -> float:
    """Wait (up to max_s) until other processes use < threshold of the CPUs; returns s waited."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < max_s:
        a = _cpu_snapshot()
        time.sleep(0.5)
        if not _bg_load(a, _cpu_snapshot()) >= threshold:
            break
    return time.perf_counter() - t0


TOL_FLOOR = 2.0 ** -16   # ~1.5e-5: 128 float32 ulps of max|ref|
TOL_FACTOR = 16.0


def _rel(ref: np.ndarray, got: np.ndarray) -> float:
    r64, g64 = ref.astype(np.float64), got.astype(np.float64)
    if not r64.size:
        return 0.0
    scale = max(float(np.max(np.abs(r64))), 1e-30)
    err = float(np.max(np.abs(r64 - g64))) / scale
    return err if not math.isnan(err) else math.inf


def make_reference(wl: dict, np_inputs: list) -> dict:
    """NumPy's result (float32 inputs, as every contender gets) and a float64 one; the
    tolerance follows the workload's conditioning: 16 x how far NumPy's own float32 result
    is from the float64 one (what float32 rounding does to this computation), at least
    TOL_FLOOR."""
    ref = np.asarray(wl["fn"](np, *np_inputs))
    ref64 = np.asarray(wl["fn"](np, *[a.astype(np.float64) for a in np_inputs]))
    cond = _rel(ref64, ref)
    return {"ref": ref, "ref64": ref64, "numpy_vs_f64": cond,
            "tol": max(TOL_FLOOR, TOL_FACTOR * cond)}


def _check(refs: dict, got: np.ndarray, what: str, into: dict) -> None:
    """Compare one result with NumPy's; keep the worst in ``into['check']``."""
    ref = refs["ref"]
    chk = into.setdefault("check", {"dtype": str(got.dtype), "ref_dtype": str(ref.dtype),
                                    "shape_ok": True, "max_rel_err": 0.0,
                                    "tol": refs["tol"], "checked": []})
    chk["checked"].append(what)
    if tuple(got.shape) != tuple(ref.shape) or str(got.dtype) != str(ref.dtype):
        chk["shape_ok"] = chk["shape_ok"] and tuple(got.shape) == tuple(ref.shape)
        chk["dtype"] = str(got.dtype)
        chk["ok"] = False
        return
    # against NumPy's float32 result, or the float64 one (where float32 NumPy is the worse)
    err = min(_rel(ref, got), _rel(refs["ref64"], got))
    if err > chk["max_rel_err"]:
        chk["max_rel_err"], chk["worst"] = err, what
    chk["ok"] = chk.get("ok", True) and err <= refs["tol"]


def check_failed(rec: dict | None) -> bool:
    chk = (rec or {}).get("check")
    return chk is not None and not chk.get("ok", False)


def _first_calls(c: Contender, f: Callable, arrs: list, rec: dict, refs: dict) -> None:
    """The first call (a compile for jit; for xla_array a host run where the first-use tier
    takes one, then its first compiled call), each timed and checked."""
    def timed(what: str) -> float:
        gc.collect()
        t0 = time.perf_counter()
        out = f(*arrs)
        c.force(out)
        ms = (time.perf_counter() - t0) * 1e3
        _check(refs, np.asarray(c.to_host(out)), what, rec)
        return ms

    if not isinstance(c, XlaArrayC):
        rec["first_call_ms"] = timed("first call")
        return
    c.reset_metrics()
    ms = timed("first call")
    m = c.metrics()
    if not m.get("compiles") and not m.get("disk_hits") and m.get("host_runs"):
        rec["host_first_call_ms"] = ms
        rec["metrics_host_first_call"] = m
        c.reset_metrics()
        with c.mod.flags.using(host_first=False):   # compile what the host ran
            ms = timed("first compiled call")
        m = c.metrics()
    rec["first_call_ms"] = ms
    rec["metrics_first_call"] = m


def bench_workload(wl: dict, contenders: list[Contender], import_errors: dict, args) -> dict:
    rng = np.random.default_rng(20261121)
    np_inputs = wl["inputs"](rng)
    res: dict = {"id": wl["id"], "name": wl["name"], "size": wl["size"], "contenders": {}}
    refs = make_reference(wl, np_inputs)
    res["numpy_vs_f64"], res["tol"] = refs["numpy_vs_f64"], refs["tol"]
    live: list[tuple[Contender, Callable, list, dict]] = []
    for name, msg in import_errors.items():
        res["contenders"][name] = {"error": msg}

    # Setup + first call(s) (compile for jit / xla_array) + warm-up, per contender.
    for c in contenders:
        rec: dict = {"samples_ms": []}
        res["contenders"][c.name] = rec
        try:
            arrs = [c.convert(a) for a in np_inputs]
            f = c.make_callable(wl)
            _first_calls(c, f, arrs, rec, refs)
            for _ in range(args.warmup):
                c.force(f(*arrs))
            if isinstance(c, XlaArrayC):
                c.reset_metrics()
            live.append((c, f, arrs, rec))
        except Exception as exc:
            rec["error"] = _err(exc)
            rec["traceback"] = traceback.format_exc()

    # Interleaved timed samples, contender order rotating each repeat.
    if args.wait_quiet > 0:
        res["waited_s"] = round(wait_quiet(args.wait_quiet), 2)
    snap0 = _cpu_snapshot()
    for rep in range(args.repeats):
        k = rep % len(live) if live else 0
        for c, f, arrs, rec in live[k:] + live[:k]:
            if "error" in rec:
                continue
            try:
                if args.settle > 0:
                    time.sleep(args.settle)
                c.force(f(*arrs))            # untimed priming call
                t0 = time.perf_counter()
                out = f(*arrs)
                c.force(out)
                rec["samples_ms"].append((time.perf_counter() - t0) * 1e3)
                _check(refs, np.asarray(c.to_host(out)), f"timed sample {rep}", rec)
                del out
            except Exception as exc:
                rec["error"] = _err(exc)
                rec["traceback"] = traceback.format_exc()
    res["bg_load"] = _bg_load(snap0, _cpu_snapshot())
    for c, _f, _arrs, rec in live:
        if isinstance(c, XlaArrayC) and "error" not in rec:
            try:
                m = c.metrics()
                calls = 2 * args.repeats    # priming + timed call per repeat
                rec["metrics_steady"] = m
                rec["steady_per_call"] = {k: (m.get(k, 0) or 0) / calls for k in
                                          ("compiles", "executions", "materializations",
                                           "cache_hits", "cache_misses")}
            except Exception as exc:
                rec["metrics_error"] = _err(exc)
        s = rec["samples_ms"]
        if s:
            rec["median_ms"] = statistics.median(s)
            rec["min_ms"] = min(s)
    del live
    gc.collect()
    return res


def _per_iter_us(fn: Callable[[], Any], n: int, batches: int = 5) -> float:
    """Median over batches of (batch time / n), in microseconds."""
    out = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        out.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(out)


def _bytecodes(fn: Callable[[], Any]) -> int:
    """Python bytecodes one call of ``fn`` executes (sys.settrace, after warm-up calls): a
    count that, unlike the times, does not depend on the machine's mood."""
    for _ in range(20):
        fn()
    n = [0]

    def trace(frame, event, arg):
        frame.f_trace_opcodes = True
        if event == "opcode":
            n[0] += 1
        return trace
    sys.settrace(trace)
    try:
        fn()
    finally:
        sys.settrace(None)
    return n[0]


def bench_overheads(contenders: list[Contender], args) -> dict:
    """Record cost per op and cache-hit dispatch, xla_array plus references."""
    res: dict = {}
    n_rec = 10_000
    n_disp = 200 if args.quick else 1000
    x8 = np.arange(8, dtype=np.float32)
    by_name = {c.name: c for c in contenders}

    def rows_add(key, label, fn):
        row = res.setdefault(key, {})
        row["label"] = label
        try:
            row["us"] = fn()
        except Exception as exc:
            row.update(error=_err(exc), traceback=traceback.format_exc())

    xc = by_name.get("xla_array")
    if isinstance(xc, XlaArrayC):
        xp = xc.mod

        def record_chain(tag):
            def run():
                x = xp.asarray(x8)
                xp.materialize(x)
                gc.collect()
                xc.reset_metrics()
                t0 = time.perf_counter()
                for _ in range(n_rec):
                    x = x + 1.0
                dt = time.perf_counter() - t0
                m = xc.metrics()          # executions > 0 => the library auto-flushed
                res[f"record_metrics_{tag}"] = m
                del x
                gc.collect()
                res[f"xla_record_{tag}"]["extra"] = (
                    f"auto-flush executions {m.get('executions')}, compiles {m.get('compiles')}, "
                    f"excl. compile {(dt - (m.get('compile_seconds') or 0)) / n_rec * 1e6:.3g} µs")
                return dt / n_rec * 1e6
            return run

        for tag, what in (("1", "first pass"), ("2", "second pass, flush executables cached")):
            res[f"xla_record_{tag}"] = {}
            rows_add(f"xla_record_{tag}", f"xla_array record `x = x + 1.0`, one {n_rec:,}-op "
                     f"chain, not materialized ({what}), per op", record_chain(tag))

        n_short, n_chains = 200, n_rec // 200

        def record_short():
            starts = [xp.asarray(x8) for _ in range(n_chains)]
            xp.materialize(*starts)
            xc.reset_metrics()
            ends = []
            t0 = time.perf_counter()
            for x in starts:
                for _ in range(n_short):
                    x = x + 1.0
                ends.append(x)
            dt = time.perf_counter() - t0
            m = xc.metrics()
            res["xla_record_short"]["extra"] = f"executions {m.get('executions')}"
            del ends, starts
            gc.collect()
            return dt / (n_short * n_chains) * 1e6

        res["xla_record_short"] = {}
        rows_add("xla_record_short", f"xla_array record `x = x + 1.0`, {n_chains} chains of "
                 f"{n_short} ops (below auto-flush depth), per op", record_short)

        def dispatch_materialize():
            x = xp.asarray(x8)
            xp.materialize(x)

            def one():
                y = x + 1.0
                xp.materialize(y)
            for _ in range(20):
                one()
            xc.reset_metrics()
            us = _per_iter_us(one, n_disp)
            res["dispatch_materialize_metrics"] = xc.metrics()
            res["xla_dispatch"]["extra"] = (f"{_bytecodes(one)} Python bytecodes per iter "
                                            f"(`x + 1.0` alone: {_bytecodes(lambda: x + 1.0)})")
            return us

        res["xla_dispatch"] = {}
        rows_add("xla_dispatch", "xla_array `y = x + 1.0; materialize(y)` (cache hit), per iter",
                 dispatch_materialize)

        def dispatch_block():
            x = xp.asarray(x8)
            xp.materialize(x)

            def one():
                y = x + 1.0
                xc.force(y)
            for _ in range(20):
                one()
            return _per_iter_us(one, n_disp)

        if xc._block is not None:
            rows_add("xla_dispatch_block", "xla_array same + wait for the device (as timed in the "
                     "workloads), per iter", dispatch_block)

        def dispatch_float():
            x = xp.asarray(x8)
            xp.materialize(x)

            def one():
                return float(xp.sum(x + 1.0))
            for _ in range(20):
                one()
            xc.reset_metrics()
            us = _per_iter_us(one, n_disp)
            res["dispatch_float_metrics"] = xc.metrics()
            res["xla_float"]["extra"] = f"{_bytecodes(one)} Python bytecodes per iter"
            return us

        res["xla_float"] = {}
        rows_add("xla_float", "xla_array `float(xp.sum(x + 1.0))` (cache hit), per iter",
                 dispatch_float)

    # References on the same 8-element array.
    def np_record():
        x = x8.copy()
        t0 = time.perf_counter()
        for _ in range(n_rec):
            x = x + 1.0
        return (time.perf_counter() - t0) / n_rec * 1e6

    rows_add("numpy_op", f"numpy `x = x + 1.0` ({n_rec:,} ops), per op", np_record)
    rows_add("numpy_float", "numpy `float(np.sum(x + 1.0))`, per iter",
             lambda: _per_iter_us(lambda: float(np.sum(x8 + 1.0)), n_disp))
    je = by_name.get("jax_eager") or by_name.get("jax_jit")
    if isinstance(je, JaxEagerC):
        jax, jnp = je.jax, je.xp
        xj = je.convert(x8)

        def jnp_record():
            x = xj
            n = n_rec // 10 if args.quick else n_rec
            t0 = time.perf_counter()
            for _ in range(n):
                x = x + 1.0
            x.block_until_ready()
            return (time.perf_counter() - t0) / n * 1e6

        rows_add("jax_eager_op", "jnp `x = x + 1.0` chained, block at end, per op", jnp_record)
        f = jax.jit(lambda x: x + 1.0)
        f(xj).block_until_ready()
        rows_add("jax_jit_call", "cached `jax.jit(lambda x: x + 1.0)` call + block, per iter",
                 lambda: _per_iter_us(lambda: f(xj).block_until_ready(), n_disp))
        g = jax.jit(lambda x: jnp.sum(x + 1.0))
        float(g(xj))
        rows_add("jax_jit_float", "`float(jax.jit(sum(x + 1.0))(x))`, per iter",
                 lambda: _per_iter_us(lambda: float(g(xj)), n_disp))
    return res


# --------------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------------


def fmt(v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.2f}"
    if v >= 1:
        return f"{v:.3f}"
    return f"{v:.3g}"


def cell(rec: dict | None, key: str = "median_ms") -> str:
    if rec is None:
        return "n/a"
    if "error" in rec:
        msg = rec["error"].replace("|", "/").replace("\n", " ")
        return "ERR: " + (msg[:70] + "..." if len(msg) > 70 else msg)
    v = rec.get(key)
    s = fmt(v)
    if check_failed(rec):
        s += " (!)"
    return s


def ratio(a: dict | None, b: dict | None, key: str = "median_ms") -> str:
    if not a or not b or key not in a or key not in b or not b[key]:
        return ""
    return f"{a[key] / b[key]:.2f}"


def report(results: list[dict], overheads: dict, meta: dict) -> str:
    L: list[str] = []
    L.append(f"## xla_array benchmark ({meta['started']}, {meta['repeats']} repeats, settle "
             f"{meta['settle']} s{', QUICK sizes' if meta['quick'] else ''})\n")
    L.append(f"- Python {platform.python_version()}, nproc {os.cpu_count()}, "
             + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()
                         if isinstance(v, str) and "traceback" not in k))
    L.append(f"- load average before/after: {meta['loadavg_before']} / {meta.get('loadavg_after')}")
    L.append("- median ms per call (interleaved samples, warm-up excluded). Ratios are time "
             "ratios: **numpy/xla = numpy ms ÷ xla_array ms, > 1 means xla_array is faster**; "
             "same for jit/xla. `xla compiles` = compiles in the first call / per steady-state "
             "call (should be 0). `xla host first call` = xla_array's first call where it ran "
             "on the host (NumPy's code, no compile); `xla first compiled call` = its first call "
             "that compiled (`compile ms` of it in XLA). `(!)` = a first call or a timed "
             "sample's result differs from NumPy's by more than the workload's tolerance, or "
             "its dtype or shape does (see the checks below and the JSON). "
             "`bg CPU load` = share of the machine's CPUs used by other processes during the "
             "timed samples (high = noisy row).\n")
    hdr = ("| # | workload | size | numpy ms | jax eager ms | jax.jit ms | xla_array ms "
           "| numpy/xla (>1: xla faster) | jit/xla (>1: xla faster) | xla compiles first/steady "
           "| xla host first call ms | xla first compiled call ms (compile ms) "
           "| jit first call ms (compile) | bg CPU load |")
    L.append(hdr)
    L.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        cs = r["contenders"]
        xr = cs.get("xla_array")
        comp = ""
        bgv = r.get("bg_load")
        bg = f"{bgv:.0%}" if isinstance(bgv, float) and not math.isnan(bgv) else ""
        if xr and "metrics_first_call" in xr:
            comp = str(xr["metrics_first_call"].get("compiles", "?"))
            if xr["metrics_first_call"].get("disk_hits"):
                comp += f" (+{xr['metrics_first_call']['disk_hits']} disk hits)"
            if "steady_per_call" in xr:
                comp += f" / {xr['steady_per_call']['compiles']:g}"
        first = fmt((xr or {}).get("first_call_ms"))
        if xr and "metrics_first_call" in xr:
            first += f" ({fmt(1e3 * (xr['metrics_first_call'].get('compile_seconds') or 0))})"
        L.append(f"| {r['id']} | {r['name']} | {r['size']} | {cell(cs.get('numpy'))} | "
                 f"{cell(cs.get('jax_eager'))} | {cell(cs.get('jax_jit'))} | {cell(xr)} | "
                 f"{ratio(cs.get('numpy'), xr)} | {ratio(cs.get('jax_jit'), xr)} | {comp} | "
                 f"{fmt((xr or {}).get('host_first_call_ms')) or '-'} | {first} | "
                 f"{fmt((cs.get('jax_jit') or {}).get('first_call_ms'))} | {bg} |")
    L.append("\nBest-of (minimum sample, ms):\n")
    L.append("| # | numpy | jax eager | jax.jit | xla_array | numpy/xla | jit/xla |")
    L.append("|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        cs = r["contenders"]
        xr = cs.get("xla_array")
        L.append(f"| {r['id']} | " + " | ".join(
            fmt((cs.get(n) or {}).get("min_ms")) for n in ALL_CONTENDERS)
            + f" | {ratio(cs.get('numpy'), xr, 'min_ms')} | "
              f"{ratio(cs.get('jax_jit'), xr, 'min_ms')} |")

    details = []
    for r in results:
        xr = r["contenders"].get("xla_array") or {}
        spc = xr.get("steady_per_call")
        if spc:
            details.append(f"- {r['id']}: per steady call: executions {spc['executions']:g}, "
                           f"materializations {spc['materializations']:g}, cache hits "
                           f"{spc['cache_hits']:g}, misses {spc['cache_misses']:g}; first call "
                           f"compile_seconds "
                           f"{xr['metrics_first_call'].get('compile_seconds', float('nan')):.3f}")
    if details:
        L.append("\nxla_array metrics per workload:\n")
        L.extend(details)

    L.append("\nResult checks against NumPy (every first call and timed sample; largest "
             "difference / max|NumPy's|, and the workload's tolerance):\n")
    for r in results:
        parts = []
        for n, rec in r["contenders"].items():
            chk = rec.get("check")
            if chk:
                bad = "" if chk.get("ok") else (
                    f" FAILED ({chk.get('worst', '')}, dtype {chk['dtype']}, shape ok "
                    f"{chk['shape_ok']})")
                parts.append(f"{n} {chk['max_rel_err']:.1e}{bad}")
        if parts:
            L.append(f"- {r['id']}: tolerance {r.get('tol', float('nan')):.1e} (NumPy float32 "
                     f"vs float64 {r.get('numpy_vs_f64', float('nan')):.1e}): "
                     + ", ".join(parts))

    L.append("\n### Overheads (tiny 8-element float32 array, µs)\n")
    L.append("| measurement | µs | notes |")
    L.append("|---|---:|---|")
    for _key, row in overheads.items():
        if not isinstance(row, dict) or "label" not in row:
            continue
        val = fmt(row["us"]) if "us" in row else "ERR: " + row["error"][:80].replace("|", "/")
        L.append(f"| {row['label']} | {val} | {row.get('extra', '')} |")
    for key in ("dispatch_materialize_metrics", "dispatch_float_metrics"):
        m = overheads.get(key)
        if m is not None:
            L.append(f"- {key}: compiles {m.get('compiles')}, cache hits {m.get('cache_hits')}, "
                     f"executions {m.get('executions')}")

    grouped: dict[tuple[str, str], list[str]] = {}
    for r in results:
        for n, rec in r["contenders"].items():
            if "error" in rec:
                grouped.setdefault((n, rec["error"]), []).append(r["id"])
    errs = [f"- workload {','.join(ids)} {n}: {' '.join(e.split())}"
            for (n, e), ids in grouped.items()]
    for key, row in overheads.items():
        if isinstance(row, dict) and "error" in row:
            errs.append(f"- overhead {key}: {' '.join(row['error'].split())}")
    if errs:
        L.append("\n### Errors (full tracebacks in --json output)\n")
        L.extend(errs)
    return "\n".join(L)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=None, help="timed samples per contender "
                   "(default 7, 3 with --quick)")
    p.add_argument("--warmup", type=int, default=1, help="untimed calls after the first call")
    p.add_argument("--only", default="", help="comma-separated workload ids, e.g. 1,2,4a,8 "
                   "('4' selects 4a and 4b)")
    p.add_argument("--quick", action="store_true", help="small sizes, few repeats (CI smoke: "
                   "exits 1 on a result that differs from NumPy's, as every run does)")
    p.add_argument("--json", default=None, help="write raw results to this path")
    p.add_argument("--settle", type=float, default=None,
                   help="seconds to sleep before each sample (default 0.15, 0.005 with --quick)")
    p.add_argument("--contenders", default=",".join(ALL_CONTENDERS),
                   help="comma-separated subset of " + ",".join(ALL_CONTENDERS))
    p.add_argument("--no-overheads", action="store_true", help="skip the overheads section")
    p.add_argument("--disk-cache", action="store_true", help="keep xla_array's on-disk compile "
                   "cache (default: XLA_ARRAY_CACHE_DIR=off unless set, so first call = compile)")
    p.add_argument("--wait-quiet", type=float, default=0.0, metavar="S",
                   help="before each workload, wait up to S s for other processes to use < 50%% "
                   "of the CPUs (default 0: don't wait)")
    args = p.parse_args(argv)
    if args.repeats is None:
        args.repeats = 3 if args.quick else 7
    if args.settle is None:
        args.settle = 0.005 if args.quick else 0.15

    wanted = [c.strip() for c in args.contenders.split(",") if c.strip()]
    bad = [c for c in wanted if c not in ALL_CONTENDERS]
    if bad:
        p.error(f"unknown contenders {bad}")
    workloads = make_workloads(args.quick)
    if args.only:
        sel = {s.strip() for s in args.only.split(",") if s.strip()}
        workloads = [w for w in workloads  # "4" selects 4a and 4b, "10" selects 10a-10e
                     if w["id"] in sel or w["id"].rstrip("abcdefghijklmnopqrstuvwxyz") in sel]
        if not workloads:
            p.error(f"--only {args.only!r} selects no workload")

    t_start = time.perf_counter()
    meta: dict = {"started": datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S"),
                  "repeats": args.repeats, "settle": args.settle, "quick": args.quick,
                  "warmup": args.warmup, "argv": sys.argv[1:],
                  "loadavg_before": [round(v, 2) for v in os.getloadavg()],
                  "thread_env": {k: os.environ.get(k) for k in
                                 ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "XLA_FLAGS")}}
    contenders, import_errors, versions = load_contenders(wanted, args.disk_cache)
    meta["versions"] = versions
    for n, msg in import_errors.items():
        print(f"[bench] {n}: {msg}", file=sys.stderr)

    results = []
    for wl in workloads:
        t0 = time.perf_counter()
        try:
            r = bench_workload(wl, contenders, import_errors, args)
        except Exception as exc:   # never crash the whole run
            r = {"id": wl["id"], "name": wl["name"], "size": wl["size"],
                 "contenders": {"numpy": {"error": "bench: " + _err(exc)}}}
        results.append(r)
        parts = [f"{n}={fmt(rec.get('median_ms')) or 'ERR'}" for n, rec in r["contenders"].items()]
        print(f"[bench] {wl['id']:>2} {wl['name']}: {', '.join(parts)} "
              f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)

    overheads: dict = {}
    if not args.no_overheads:
        try:
            overheads = bench_overheads(contenders, args)
        except Exception as exc:
            overheads = {"bench": {"label": "overheads", "error": _err(exc)}}
    meta["loadavg_after"] = [round(v, 2) for v in os.getloadavg()]
    meta["seconds"] = round(time.perf_counter() - t_start, 1)

    text = report(results, overheads, meta)
    print(text)
    print(f"\n(total {meta['seconds']} s)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"meta": meta, "workloads": results, "overheads": overheads}, fh,
                      indent=1, default=str)
    failed = [f"{r['id']} {n}" for r in results for n, rec in r["contenders"].items()
              if check_failed(rec) or (n == "xla_array" and "error" in rec)]
    if "xla_array" in import_errors:
        failed.append("xla_array import")
    if failed:
        print(f"[bench] FAILED: results differ from NumPy's or xla_array raised: "
              f"{', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
