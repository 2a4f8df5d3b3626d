#!/usr/bin/env python3
"""Random variates on the CPU: xla_array.random against NumPy's default_rng, steady state.

For each case, NumPy's time and xla_array's (the variates computed into a buffer:
``block_until_ready``), medians of ``--repeats`` calls after a warm-up that compiles, both as
wall time and as CPU time of the process (all threads: on a shared machine the CPU time is the
steadier figure). Also the first call's time (the compile) of each xla_array case.

Usage: python3 benchmarks/bench_random.py [--n 10000000] [--repeats 7] [--json out.json]
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
os.environ["XLA_ARRAY_CACHE_DIR"] = ""  # the first call compiles
_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO not in sys.path:
    sys.path.insert(1, _REPO)

import xla_array as xp

CASES = [
    ("standard_normal float64", lambda g, n: g.standard_normal(n)),
    ("standard_normal float32", lambda g, n: g.standard_normal(n, dtype="float32")),
    ("random float64", lambda g, n: g.random(n)),
    ("standard_exponential", lambda g, n: g.standard_exponential(n)),
    ("integers [0, 100)", lambda g, n: g.integers(0, 100, n)),
    ("standard_gamma(2.5)", lambda g, n: g.standard_gamma(2.5, n)),
    ("poisson(4)", lambda g, n: g.poisson(4.0, n)),
]


def _time(fn, repeats: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--only", default="", help="comma-separated case-name prefixes")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    ng = np.random.default_rng(0)
    xg = xp.random.default_rng(0)
    rows = []
    print(f"n = {a.n:,}, medians of {a.repeats}; x = NumPy's time / xla_array's\n")
    print("| case | NumPy wall ms | xla_array wall ms | x | NumPy CPU ms | xla_array CPU ms "
          "| x | first call ms |")
    print("|---|---|---|---|---|---|---|---|")
    for name, make in CASES:
        if a.only and not any(name.startswith(p) for p in a.only.split(",")):
            continue
        t0 = time.perf_counter()
        xp.block_until_ready(make(xg, a.n))
        first = time.perf_counter() - t0
        nw, nc = _time(lambda m=make: m(ng, a.n), a.repeats)
        xw, xc = _time(lambda m=make: xp.block_until_ready(m(xg, a.n)), a.repeats)
        rows.append({"case": name, "numpy_wall": nw, "xla_wall": xw, "numpy_cpu": nc,
                     "xla_cpu": xc, "first": first})
        print(f"| {name} | {nw * 1e3:.0f} | {xw * 1e3:.0f} | {nw / xw:.2f} | {nc * 1e3:.0f} | "
              f"{xc * 1e3:.0f} | {nc / xc:.2f} | {first * 1e3:.0f} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"n": a.n, "repeats": a.repeats, "rows": rows,
                       "load": os.getloadavg()}, f, indent=1)
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
