#!/usr/bin/env python3
"""xla_array.distributed on one machine: collectives and data-parallel steps over 1, 2 and 4
processes (one CPU device each), started by the launcher.

Measures, in every configuration:
  allreduce  sum over the process axis of an array cut over the processes (XLA's all-reduce
             over gloo), from 8 B to 64 MiB per process: latency (median seconds per call,
             the call and reading back one element) and bus bandwidth (bytes per process / s)
  gd         one data-parallel gradient step w -= lr * X.T @ (X @ w - y) / N, X (N, 64)
  kmeans     one k-means step (k = 16, X (N, 16)): assignments, per-cluster sums and counts

Every timed call is one SPMD program (compiled before timing) run by every process, including
the per-run program check through the coordinator. On a 2-core machine 4 processes are
oversubscribed: the report gives the efficiency per core, time(1) / (time(p) * min(p, cores)
/ p ... ) is not meaningful past the core count, so read the 4-process rows as a check that
it works, not as scaling. JAX multi-process is not installed here, so there is no JAX column.

Usage: python3 benchmarks/bench_distributed.py [--procs 1,2,4] [--rows 65536] [--repeats 5]
       [--max-mib 64] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np


def _median_time(fn, repeats: int) -> float:
    fn()  # warm-up: compile
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def worker(args: argparse.Namespace) -> None:
    import xla_array as xp
    from xla_array import distributed as dist
    from xla_array import sharding as S
    dist.initialize()
    me, n = dist.process_index(), dist.process_count()
    mesh = S.make_mesh((n,), ("p",))
    out: dict = {"procs": n, "allreduce": [], "gd": None, "kmeans": None}
    size = 8
    while size <= args.max_mib * (1 << 20):
        k = max(1, size // 4)
        X = dist.from_local(np.ones(k, np.float32), S.NamedSharding(mesh, ("p",)),
                            global_shape=(k * n,))
        Xr = xp.reshape(X, (n, k))
        t = _median_time(lambda Xr=Xr: float(xp.sum(Xr, axis=0)[0]), args.repeats)
        out["allreduce"].append({"bytes": size, "seconds": t, "bytes_per_s": size / t})
        size *= 8 if size < (1 << 20) else 4
    rows = args.rows // n
    rng = np.random.default_rng(me)
    Xl = rng.standard_normal((rows, 64)).astype(np.float32)
    X = dist.from_local(Xl, S.NamedSharding(mesh, ("p", None)))
    y = dist.from_local(Xl @ np.ones(64, np.float32), S.NamedSharding(mesh, ("p",)))
    w = xp.zeros(64, device=S.NamedSharding(mesh, (None,)))

    def gd() -> None:
        nonlocal w
        w = w - 0.1 * (X.T @ (X @ w - y)) / args.rows
        float(w[0])

    out["gd"] = _median_time(gd, args.repeats)
    P = dist.from_local(rng.standard_normal((rows, 16)).astype(np.float32),
                        S.NamedSharding(mesh, ("p", None)))
    C = xp.asarray(np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32),
                   device=S.NamedSharding(mesh, (None, None)))

    def kmeans() -> None:
        nonlocal C
        d = xp.sum(P * P, axis=1)[:, None] - 2.0 * (P @ C.T) + xp.sum(C * C, axis=1)[None, :]
        onehot = xp.astype(xp.argmin(d, axis=1)[:, None] == xp.arange(16)[None, :],
                           xp.float32)
        counts = xp.sum(onehot, axis=0)
        C = (onehot.T @ P) / xp.maximum(counts, 1.0)[:, None]
        float(C[0, 0])

    out["kmeans"] = _median_time(kmeans, args.repeats)
    if me == 0:
        print("RESULT " + json.dumps(out), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--procs", default="1,2,4")
    ap.add_argument("--rows", type=int, default=65536)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--max-mib", type=int, default=64)
    ap.add_argument("--json")
    ap.add_argument("--worker", action="store_true")
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return
    cores = os.cpu_count() or 1
    results = []
    for p in [int(v) for v in args.procs.split(",")]:
        cmd = [sys.executable, "-m", "xla_array.distributed.launch", "-n", str(p), __file__,
               "--worker", "--rows", str(args.rows), "--repeats", str(args.repeats),
               "--max-mib", str(args.max_mib)]
        env = dict(os.environ, XLA_ARRAY_CPU_DEVICES="1")
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
        line = [ln for ln in proc.stdout.splitlines() if "RESULT " in ln]
        if proc.returncode or not line:
            print(proc.stdout[-3000:], proc.stderr[-3000:], file=sys.stderr)
            raise SystemExit(f"{p} processes failed")
        results.append(json.loads(line[-1].split("RESULT ", 1)[1]))
    print(f"machine: {cores} cores; one CPU device per process")
    print("all-reduce (median seconds per call; bus bandwidth MB/s per process)")
    sizes = [r["bytes"] for r in results[0]["allreduce"]]
    print("bytes".rjust(10) + "".join(f"{r['procs']:>10d}p s  {'MB/s':>8}" for r in results))
    for i, b in enumerate(sizes):
        cells = "".join(f"{r['allreduce'][i]['seconds']:>12.6f} "
                        f"{r['allreduce'][i]['bytes_per_s'] / 1e6:>8.1f}" for r in results)
        print(f"{b:>10d}{cells}")
    base_gd, base_km = results[0]["gd"], results[0]["kmeans"]
    print("step (median seconds; efficiency per core = t1 / (tp * cores used))")
    for r in results:
        used = min(r["procs"], cores)
        print(f"  {r['procs']} processes: gd {r['gd']:.5f} s (eff/core "
              f"{base_gd / (r['gd'] * used):.2f}), kmeans {r['kmeans']:.5f} s (eff/core "
              f"{base_km / (r['kmeans'] * used):.2f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cores": cores, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
