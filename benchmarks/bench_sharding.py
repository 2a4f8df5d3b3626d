#!/usr/bin/env python3
"""Data-parallel workloads on 1 vs 2 CPU devices (xla_array.sharding).

The batch (rows of X and Y) is cut over the devices of a 1-d mesh; weights are replicated.
XLA's SPMD partitioner (Shardy) compiles one program per step and adds the all-reduce that the
gradient needs. Each device count runs in its own subprocess, since ``XLA_ARRAY_CPU_DEVICES``
is read when the CPU client starts.

Workloads (float32, one materialization per timed call):
  mlp     loss = mean((tanh(X @ W1) @ W2 - Y)**2), X (N, 256), W1 (256, 512), W2 (512, 8)
  logreg  10 gradient steps of logistic regression, X (N, 64): w -= lr * X.T @ (p - y) / N
  mapred  sum(exp(sin(X) * 0.5) * X, axis=0), X (N, 256): elementwise then a reduction

Usage: python3 benchmarks/bench_sharding.py [--repeats 7] [--rows 32768] [--quick] [--json out]
Timed region: the call and reading back a small result (a scalar or a vector); medians and
best-of over the repeats after one warm-up call (compiles are excluded and reported apart).
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

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _workloads(xp, S, ndev: int, rows: int) -> dict:
    mesh = S.make_mesh((ndev,), ("batch",))
    rowwise = S.NamedSharding(mesh, ("batch", None))
    repl = S.NamedSharding(mesh, (None, None))
    rng = np.random.default_rng(20261121)
    f32 = np.float32
    X = xp.asarray(rng.standard_normal((rows, 256)).astype(f32), device=rowwise)
    Y = xp.asarray(rng.standard_normal((rows, 8)).astype(f32), device=rowwise)
    W1 = xp.asarray((rng.standard_normal((256, 512)) / 16).astype(f32), device=repl)
    W2 = xp.asarray((rng.standard_normal((512, 8)) / 22).astype(f32), device=repl)
    Xl = xp.asarray(rng.standard_normal((rows, 64)).astype(f32), device=rowwise)
    yl = xp.asarray((rng.random(rows) < 0.5).astype(f32),
                    device=S.NamedSharding(mesh, ("batch",)))
    w0 = xp.zeros(64, dtype=xp.float32, device=S.NamedSharding(mesh, (None,)))

    def mlp():
        return float(xp.mean((xp.tanh(X @ W1) @ W2 - Y) ** 2))

    def logreg():
        w = w0
        for _ in range(10):
            p = 1.0 / (1.0 + xp.exp(-(Xl @ w)))
            w = w - 0.5 * (Xl.T @ (p - yl)) / rows
            xp.materialize(w)
        return np.asarray(w)

    def mapred():
        return np.asarray(xp.sum(xp.exp(xp.sin(X) * 0.5) * X, axis=0))

    return {"mlp": mlp, "logreg": logreg, "mapred": mapred}


def _child(ndev: int, rows: int, repeats: int) -> dict:
    import xla_array as xp
    from xla_array import sharding as S
    out = {"devices": ndev, "rows": rows, "results": {}}
    for name, fn in _workloads(xp, S, ndev, rows).items():
        xp.debug.reset_metrics()
        t0 = time.perf_counter()
        first = fn()
        first_s = time.perf_counter() - t0
        compiles = xp.debug.metrics()["compiles"]
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            value = fn()
            times.append(time.perf_counter() - t0)
        out["results"][name] = {
            "median_ms": statistics.median(times) * 1e3, "best_ms": min(times) * 1e3,
            "first_call_s": first_s, "compiles": compiles,
            "checksum": float(np.sum(np.asarray(value, dtype=np.float64))),
            "first_checksum": float(np.sum(np.asarray(first, dtype=np.float64)))}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--rows", type=int, default=32768)
    ap.add_argument("--quick", action="store_true", help="4096 rows, 3 repeats")
    ap.add_argument("--json", help="write the raw figures here")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.rows, args.repeats = 4096, 3
    if args.child:
        sys.path.insert(0, _REPO)
        print(json.dumps(_child(args.child, args.rows, args.repeats)))
        return
    runs = {}
    for ndev in (1, 2):
        env = {k: v for k, v in os.environ.items() if not k.startswith("XLA_ARRAY_")}
        env.update(XLA_ARRAY_CPU_DEVICES=str(ndev), XLA_ARRAY_CACHE_DIR="off",
                   TF_CPP_MIN_LOG_LEVEL="2")
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", str(ndev),
                               "--rows", str(args.rows), "--repeats", str(args.repeats)],
                              env=env, capture_output=True, text=True, check=True)
        runs[ndev] = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"rows={args.rows} repeats={args.repeats} cpus={os.cpu_count()} "
          f"load={os.getloadavg()[0]:.1f}")
    print("| workload | 1 device ms (best) | 2 devices ms (best) | speed-up | compile s 1/2 |")
    print("|---|---|---|---|---|")
    for name in runs[1]["results"]:
        a, b = runs[1]["results"][name], runs[2]["results"][name]
        agree = abs(a["checksum"] - b["checksum"]) <= 1e-3 * max(1.0, abs(a["checksum"]))
        print(f"| {name} | {a['median_ms']:.1f} ({a['best_ms']:.1f}) | {b['median_ms']:.1f} "
              f"({b['best_ms']:.1f}) | {a['median_ms'] / b['median_ms']:.2f}x | "
              f"{a['first_call_s']:.2f}/{b['first_call_s']:.2f} |"
              + ("" if agree else " results differ!"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)


if __name__ == "__main__":
    main()
