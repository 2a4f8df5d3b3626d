#!/usr/bin/env python3
"""The cost of bounds-checking integer-array indices computed on the device.

Each workload gathers (or scatters) with indices that are themselves pending results, so the
check runs inside the same executable as the gather (``XLA_ARRAY_CHECK_INDICES``, default on)
and its one output is read back before the results are written. Every workload runs with the
check on and off, interleaved, in one process; the script prints the median time of a forced
call, the compile time of the first call and the ratio on/off.

    python3 benchmarks/bench_indexing.py [--n 1000000] [--repeats 15] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("XLA_ARRAY_CACHE_DIR", "off")

import numpy as np

import xla_array as xp


def w_take(x, i):
    return xp.take(x, (i * 7919) % x.shape[0])


def w_getitem(x, i):
    return x[(i * 31) % x.shape[0]] * 2.0


def w_argsort_gather(x, i):
    return x[xp.argsort(x)[: x.shape[0] // 10]]


def w_take_along(x, i):
    m = xp.reshape(x, (-1, 100))
    return xp.take_along_axis(m, xp.argsort(m, axis=1), axis=1)


def w_setitem(x, i):
    y = x * 1.0
    y[(i * 13) % x.shape[0]] = 0.0
    return y


WORKLOADS = {"take": w_take, "getitem": w_getitem, "argsort+gather": w_argsort_gather,
             "take_along_axis": w_take_along, "setitem": w_setitem}


def timed(f, x, i) -> float:
    t = time.perf_counter()
    xp.block_until_ready(f(x, i))
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--json")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    x = xp.asarray(rng.standard_normal(args.n).astype(np.float32))
    i = xp.asarray(rng.integers(0, args.n, args.n // 10))
    rows = []
    for name, f in WORKLOADS.items():
        first, times = {}, {True: [], False: []}
        for check in (True, False):
            xp.debug.reset_metrics()
            with xp.flags.using(check_indices=check):
                t0 = timed(f, x, i)
            first[check] = (t0, xp.debug.metrics()["compile_seconds"])
        for _ in range(args.repeats):
            for check in (True, False):
                with xp.flags.using(check_indices=check):
                    times[check].append(timed(f, x, i))
        on, off = statistics.median(times[True]), statistics.median(times[False])
        rows.append({"workload": name, "on_ms": on * 1e3, "off_ms": off * 1e3,
                     "ratio": on / off, "compile_on_ms": first[True][1] * 1e3,
                     "compile_off_ms": first[False][1] * 1e3})
    print(f"n = {args.n}, {args.repeats} repeats, median of forced calls (ms)\n")
    print("| workload | check on | check off | on / off | compile on | compile off |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['workload']} | {r['on_ms']:.3f} | {r['off_ms']:.3f} | {r['ratio']:.2f} "
              f"| {r['compile_on_ms']:.0f} | {r['compile_off_ms']:.0f} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
