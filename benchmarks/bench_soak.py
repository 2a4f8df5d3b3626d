#!/usr/bin/env python3
"""Memory soak: does xla_array's resident memory grow over long loops?

Each workload runs ``--iterations`` (default 10,000) iterations in a fresh process of its
own (memory freed by an earlier workload would hide growth in a later one); every iteration
records a few ops on one of several shapes (cycling, so several executables live in the
caches at once) and forces them. Every ``--every`` iterations (default 1,000) the process
runs ``gc.collect()`` and prints its resident memory (RSS, from ``/proc/self/statm``;
elsewhere the peak from ``resource``). At the end a table gives, per workload, the RSS growth
per 1,000 iterations: the least-squares slope over the samples taken after the first
``--warmup`` iterations (default a fifth), when the compiles are done, and over the second
half alone (bounded caches, such as the 4,096 runtime scalars kept on the device, may still
be filling early on; a leak grows in both). A steady loop shows about 0; ``(!)`` marks a
second-half slope above 64 KiB per 1,000 iterations.

Usage: python3 benchmarks/bench_soak.py [--iterations 10000] [--every 1000] [--warmup 2000]
                                        [--only elementwise,matmul] [--quick] [--json out.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # silence PJRT client start-up lines
os.environ.setdefault("XLA_ARRAY_CACHE_DIR", "off")  # compiles are not what is measured
# Soak the working tree: put the repository root right after the script's own directory.
_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO not in sys.path:
    sys.path.insert(1, _REPO)

import xla_array as xp

SHAPES = [(64,), (1000,), (33, 17), (128, 128), (7, 3, 5)]
SUSPECT_KIB = 64  # growth per 1,000 iterations above which a row is marked (!)
RESULT = "SOAK_RESULT "  # prefix of a child's summary line


def rss_bytes() -> int:
    """Current resident memory (Linux), else the peak resident memory so far."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def _inputs(rng: np.random.Generator) -> list[np.ndarray]:
    return [rng.standard_normal(s).astype(np.float32) for s in SHAPES]


# Each workload: make(rng) -> step(i), one iteration, which forces what it records (in
# varying ways) and returns a float (a non-finite one at a sample stops the soak).

def make_elementwise(rng):
    xs = [xp.asarray(a) for a in _inputs(rng)]

    def step(i):
        x = xs[i % len(xs)]
        y = xp.tanh(x * 1.5 + float(i % 7)) - xp.exp(-xp.abs(x)) / (1.0 + x * x)
        return float(xp.sum(y))
    return step


def make_reductions(rng):
    xs = [xp.asarray(a) for a in _inputs(rng)]

    def step(i):
        x = xs[i % len(xs)]
        m, s, hi = xp.mean(x, axis=0), xp.std(x), xp.max(x)
        xp.materialize(m, s, hi)
        return float(hi) - float(xp.min(m))
    return step


def make_inplace(rng):
    xs = [xp.asarray(a) * 1.0 for a in _inputs(rng)]  # kept state, computed on the device

    def step(i):
        x = xs[i % len(xs)]
        x += 1.0
        x *= 0.5
        xp.materialize(x)
        return float(xp.max(x))
    return step


def make_indexing(rng):
    xs = [xp.asarray(a.reshape(-1)) for a in _inputs(rng)]
    idx = xp.asarray(np.array([0, 3, 1, 2, 5], dtype=np.int64))

    def step(i):
        x = xp.asarray(xs[i % len(xs)])  # an independent copy, updated below
        x[1:4] = float(i)  # a new scalar value each time: the scalar cache fills, then evicts
        x[idx] = x[idx] * 2.0
        if i % 10 == 0:  # a data-dependent shape: its own materialization
            x = x[x > 0.0]
        return float(np.asarray(x)[1])
    return step


def make_matmul(rng):
    pairs = [(rng.standard_normal((n, k), dtype=np.float32),
              rng.standard_normal((k, m), dtype=np.float32))
             for n, k, m in [(8, 8, 8), (64, 32, 16), (100, 50, 1), (128, 128, 128)]]
    pairs = [(xp.asarray(a), xp.asarray(b)) for a, b in pairs]

    def step(i):
        a, b = pairs[i % len(pairs)]
        c = xp.matmul(a, b) + 1.0
        return float(np.asarray(c)[0, 0])
    return step


def make_create_drop(rng):
    hosts = _inputs(rng)

    def step(i):
        s = SHAPES[i % len(SHAPES)]
        made = [xp.asarray(hosts[i % len(hosts)]), xp.ones(s, dtype=xp.float32),
                xp.full(s, float(i % 50)), xp.zeros_like(xp.empty(s))]
        total = xp.sum(made[0]) + xp.sum(made[1]) + xp.sum(made[2]) + xp.sum(made[3])
        v = float(total)
        del made, total
        return v
    return step


def make_roundtrip(rng):
    hosts = _inputs(rng)

    def step(i):
        h = hosts[i % len(hosts)]
        back = np.asarray(xp.asarray(h) * 2.0 + 1.0)
        hosts[i % len(hosts)] = np.asarray(xp.asarray(back) - 1.0) / 2.0  # h again
        return float(back.flat[0])
    return step


def make_mixed(rng):
    steps = [make(rng) for make in (make_elementwise, make_reductions, make_inplace,
                                   make_indexing, make_matmul, make_create_drop,
                                   make_roundtrip)]

    def step(i):  # (250 rounds: the scalar values repeat, the device scalar cache fills early)
        return steps[i % len(steps)](i // len(steps) % 250)
    return step


WORKLOADS = {
    "elementwise": (make_elementwise, "tanh/exp/abs/div chain + sum, float()"),
    "reductions": (make_reductions, "mean(axis=0), std, max, min; materialize(3)"),
    "inplace": (make_inplace, "x += 1.0; x *= 0.5 on kept arrays"),
    "indexing": (make_indexing, "x[1:4] = (a new float), x[idx] = x[idx] * 2, x[x > 0]"),
    "matmul": (make_matmul, "4 shapes (8^3 .. 128^3) @ + 1, np.asarray"),
    "create_drop": (make_create_drop, "asarray/ones/full/zeros_like/empty, dropped"),
    "roundtrip": (make_roundtrip, "numpy -> xp -> numpy -> xp -> numpy"),
    "mixed": (make_mixed, "all of the above in turn"),
}


def slope_kib(samples: list[tuple[int, int]], start: int) -> float:
    """Least-squares RSS growth in KiB per 1,000 iterations over samples from ``start`` on."""
    pts = [(it, rss) for it, rss in samples if it >= start]
    if len(pts) < 2:
        return float("nan")
    x = np.array([p[0] for p in pts], dtype=np.float64)
    y = np.array([p[1] for p in pts], dtype=np.float64)
    return float(np.polyfit(x, y, 1)[0]) * 1000 / 1024


def soak(name: str, iterations: int, every: int, warmup: int) -> dict:
    make, what = WORKLOADS[name]
    step = make(np.random.default_rng(20261125))
    xp.debug.reset_metrics()
    gc.collect()
    samples = [(0, rss_bytes())]
    print(f"{name}: {what}", flush=True)
    t0 = time.perf_counter()
    for i in range(1, iterations + 1):
        v = step(i)
        if i % every == 0 or i == iterations:
            if not np.isfinite(v):
                raise RuntimeError(f"{name}: non-finite value {v} at iteration {i}")
            gc.collect()
            samples.append((i, rss_bytes()))
            print(f"  {name:12s} {i:7d} it  RSS {samples[-1][1] / 2**20:8.1f} MiB", flush=True)
    seconds = time.perf_counter() - t0
    m = xp.debug.metrics()
    return {"workload": name, "what": what, "iterations": iterations, "seconds": seconds,
            "samples": samples, "slope_kib_per_1k": slope_kib(samples, warmup),
            "late_slope_kib_per_1k": slope_kib(samples, iterations // 2),
            "compiles": m["compiles"], "executions": m["executions"]}


def table(rows: list[dict], warmup: int) -> str:
    out = [(f"RSS growth per 1,000 iterations (least-squares slopes): from iteration "
            f"{warmup:,} on, and over the second half; (!) second half above {SUSPECT_KIB} KiB"),
           "",
           ("| workload | iterations | s | compiles | RSS start MiB | RSS end MiB "
            "| growth KiB / 1k it | 2nd half KiB / 1k it |"),
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        start = next(rss for it, rss in r["samples"] if it >= warmup)
        mark = " (!)" if r["late_slope_kib_per_1k"] > SUSPECT_KIB else ""
        out.append(f"| {r['workload']} | {r['iterations']:,} | {r['seconds']:.1f} "
                   f"| {r['compiles']} | {start / 2**20:.1f} | {r['samples'][-1][1] / 2**20:.1f} "
                   f"| {r['slope_kib_per_1k']:+.1f} | {r['late_slope_kib_per_1k']:+.1f}{mark} |")
    return "\n".join(out)


def run_child(name: str, iterations: int, every: int, warmup: int) -> dict:
    """``soak`` in a fresh process: echo its sample lines, return its summary."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", name, "--iterations",
           str(iterations), "--every", str(every), "--warmup", str(warmup)]
    row = None
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as proc:
        for line in proc.stdout:
            if line.startswith(RESULT):
                row = json.loads(line[len(RESULT):])
            else:
                print(line, end="", flush=True)
    if proc.returncode != 0 or row is None:
        raise SystemExit(f"workload {name} failed (exit status {proc.returncode})")
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=None,
                   help="iterations per workload (default 10,000; 2,000 with --quick)")
    p.add_argument("--every", type=int, default=None,
                   help="RSS sample interval (default: a tenth of --iterations)")
    p.add_argument("--warmup", type=int, default=None,
                   help="iterations left out of the slope (default: a fifth of --iterations)")
    p.add_argument("--only", default="", help=f"comma-separated subset of {','.join(WORKLOADS)}")
    p.add_argument("--quick", action="store_true", help="2,000 iterations per workload")
    p.add_argument("--json", default=None, help="write samples and summary to this file")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    iterations = args.iterations or (2000 if args.quick else 10000)
    every = args.every or max(1, iterations // 10)
    warmup = iterations // 5 if args.warmup is None else args.warmup
    if args.child:
        print(RESULT + json.dumps(soak(args.child, iterations, every, warmup)), flush=True)
        return
    names = [n for n in args.only.split(",") if n] or list(WORKLOADS)
    unknown = sorted(set(names) - set(WORKLOADS))
    if unknown:
        p.error(f"unknown workloads {unknown}; choose from {list(WORKLOADS)}")
    print(f"xla_array soak: {iterations:,} iterations per workload, each in its own process; "
          f"shapes {SHAPES}; python {sys.version.split()[0]}, {os.cpu_count()} CPUs", flush=True)
    rows = [run_child(n, iterations, every, warmup) for n in names]
    print()
    print(table(rows, warmup))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"iterations": iterations, "every": every, "warmup": warmup,
                       "shapes": SHAPES, "rows": rows}, f, indent=1)

if __name__ == "__main__":
    main()
