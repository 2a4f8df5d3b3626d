#!/usr/bin/env python3
"""What rounding like NumPy costs the transcendental functions: steady-state time per call and
compile time, NumPy against xla_array with its faithful default and with ``fast_math``.

For each function and float dtype on ``--n`` elements: NumPy's time, xla_array's time with the
default (docs/dtypes.md, "What rounds like NumPy": fdlibm's algorithms in float64, float32 through
float64) and with ``fast_math=True`` (XLA's own kernels), all medians of ``--repeats`` calls
forced on the device; and the compile time of the one-op graph each way (a fresh in-memory cache
and no disk cache, so every first call compiles). Also the ulp distance of each form from NumPy.

Usage: python3 benchmarks/bench_transcendental.py [--n 1000000] [--repeats 15]
                                                  [--only tanh,expm1] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["XLA_ARRAY_CACHE_DIR"] = ""  # every first call compiles
_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO not in sys.path:
    sys.path.insert(1, _REPO)

import xla_array as xp

FUNCS = ["exp", "expm1", "log", "log1p", "log2", "log10", "sin", "tanh", "sinh", "cosh",
         "asin", "acos", "atan", "asinh", "acosh", "atanh"]


def inputs(name: str, n: int, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(0)
    lo, hi = {"asin": (-1, 1), "acos": (-1, 1), "atanh": (-0.99, 0.99), "acosh": (1, 100),
              "log": (1e-3, 1e3), "log2": (1e-3, 1e3), "log10": (1e-3, 1e3),
              "log1p": (-0.9, 1e3), "exp": (-80, 80), "sinh": (-80, 80),
              "cosh": (-80, 80)}.get(name, (-20, 20))
    return rng.uniform(lo, hi, n).astype(dtype)


def ulps(a: np.ndarray, b: np.ndarray) -> int:
    it = {4: np.int32, 8: np.int64}[a.dtype.itemsize]

    def ordered(v: np.ndarray) -> np.ndarray:
        i = v.view(it).astype(np.int64)
        return np.where(i < 0, np.iinfo(it).min - i, i)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    return int(np.where(same, 0, np.abs(ordered(a) - ordered(b))).max())


def median_time(f, repeats: int) -> float:
    f()
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def run_xla(name: str, x: np.ndarray, repeats: int, fast: bool) -> tuple[float, float, np.ndarray]:
    a = xp.asarray(x)
    fn = getattr(xp, name)
    with xp.flags.using(fast_math=fast):
        t = time.perf_counter()
        r = fn(a)
        xp.block_until_ready(r)
        first = time.perf_counter() - t
        steady = median_time(lambda: xp.block_until_ready(fn(a)), repeats)
    return first, steady, np.asarray(r)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--only", default="")
    p.add_argument("--json", default="")
    args = p.parse_args()
    names = args.only.split(",") if args.only else FUNCS
    rows = []
    print(f"{'function':<8} {'dtype':<8} {'numpy ms':>9} {'faithful ms':>12} {'fast ms':>8} "
          f"{'compile faithful/fast ms':>25} {'ulp faithful/fast':>18}")
    for name in names:
        for dtype in ("float32", "float64"):
            x = inputs(name, args.n, dtype)
            with np.errstate(all="ignore"):
                want = getattr(np, name)(x)
                np_fn = getattr(np, name)
                t_np = median_time(lambda f=np_fn, v=x: f(v), args.repeats)
            c0, t0, r0 = run_xla(name, x, args.repeats, False)
            c1, t1, r1 = run_xla(name, x, args.repeats, True)
            row = dict(function=name, dtype=dtype, numpy_ms=t_np * 1e3, faithful_ms=t0 * 1e3,
                       fast_ms=t1 * 1e3, compile_faithful_ms=c0 * 1e3, compile_fast_ms=c1 * 1e3,
                       ulp_faithful=ulps(r0, want), ulp_fast=ulps(r1, want))
            rows.append(row)
            print(f"{name:<8} {dtype:<8} {row['numpy_ms']:9.2f} {row['faithful_ms']:12.2f} "
                  f"{row['fast_ms']:8.2f} {row['compile_faithful_ms']:12.0f} /"
                  f"{row['compile_fast_ms']:6.0f}      {row['ulp_faithful']:>6} /"
                  f"{row['ulp_fast']:>4}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
