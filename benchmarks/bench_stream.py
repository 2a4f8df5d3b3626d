#!/usr/bin/env python3
"""xp.stream over a memory-mapped .npy several times larger than the chunk budget.

The reduction: per-column sum and sum of squares (mean and variance) of a float32 file of
``--cols`` columns (float32 sums per chunk, added into float64 totals), in chunks of
``--chunk-mb`` MiB. Each repeat times, in a rotated order:

- ``numpy``: the NumPy loop over the memory map (``s += c.sum(0)``, ``q += (c*c).sum(0)``);
- ``stream``: ``xp.stream(step, ...).run(chunks)`` then ``done()`` (one compiled step, the
  state donated, each chunk copied to the device while the previous step runs);
- ``copy``: the transfer alone, the way the stream does it (each chunk of the memory map
  copied into a reused host buffer that a device buffer then aliases): the transfer ceiling
  of this file on this machine;
- ``put``: host-to-device copies of a RAM-resident chunk through ``_backend.put``, the path
  of ``xp.asarray`` (a fresh device buffer per chunk): the library's plain transfer speed;
- ``compute``: the stream over chunks already on the device (four, cycled): the step alone.

Throughput is file bytes / seconds (GB/s, 1e9 bytes). The overlap is how much of the shorter
of ``copy`` and ``compute`` the stream hides: ``(copy + compute - stream) / min(copy,
compute)`` (1: fully overlapped, 0: one after the other). The file is written first, so it is
read from the page cache (RAM), not from the disk: the disk's speed is not measured.

Usage: python3 benchmarks/bench_stream.py [--size-mb 512] [--chunk-mb 16] [--cols 64]
                                          [--repeats 5] [--quick] [--json out.json] [--dir D]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO not in sys.path:
    sys.path.insert(1, _REPO)

import xla_array as xp
from xla_array.core import backend as _backend


def step(chunk, state):
    """float32 sums of the chunk, added into float64 totals (as the NumPy loop does; XLA:CPU
    reduces float32 ~4x faster than it converts to float64 and reduces that)."""
    s, q = state
    return None, (s + xp.astype(xp.sum(chunk, axis=0), xp.float64),
                  q + xp.astype(xp.sum(chunk * chunk, axis=0), xp.float64))


def run_numpy(m, rows):
    s = np.zeros(m.shape[1])
    q = np.zeros(m.shape[1])
    for i in range(0, len(m), rows):
        c = m[i:i + rows]
        s += c.sum(axis=0)
        q += (c * c).sum(axis=0)
    return s, q


def _init(cols):
    init = (xp.zeros(cols, dtype=xp.float64), xp.zeros(cols, dtype=xp.float64))
    xp.materialize(*init)
    return init


def run_stream(m, rows, init, stats):
    s = xp.stream(step, m[:rows], init)
    for _ in s.run(m[i:i + rows] for i in range(0, len(m), rows)):
        pass
    st = s.stats
    total, sq = s.done()
    stats.append(st)
    return np.asarray(total), np.asarray(sq)


def run_copy(m, rows):
    """The stream's transfer alone: memory map -> reused aligned host buffer -> device."""
    dev = xp.asarray(0.0).device._pjrt
    raw = np.empty(rows * m.shape[1] * 4 + 64, np.uint8)
    start = -raw.ctypes.data % 64
    host = raw[start:start + rows * m.shape[1] * 4].view(np.float32).reshape(rows, -1)
    for i in range(0, len(m), rows):
        c = m[i:i + rows]
        h = host[:len(c)]
        np.copyto(h, c)
        _backend.block([_backend.put(h, dev, owned=True)])


def run_put(a, n):
    dev = xp.asarray(0.0).device._pjrt
    for _ in range(n):
        _backend.block([_backend.put(a, dev)])


def run_compute(chunks, n, init):
    s = xp.stream(step, chunks[0], init)
    for i in range(n):
        s.send(chunks[i % len(chunks)])
        s.recv()
    xp.materialize(*s.done())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=int, default=512, help="file size (MiB)")
    ap.add_argument("--chunk-mb", type=float, default=16, help="chunk size (MiB)")
    ap.add_argument("--cols", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="128 MiB file, 8 MiB chunks, 3 repeats")
    ap.add_argument("--json", help="write every sample and the summary here")
    ap.add_argument("--dir", help="folder for the file (default: a temporary folder)")
    args = ap.parse_args()
    if args.quick:
        args.size_mb, args.chunk_mb, args.repeats = 128, 8, 3
    cols = args.cols
    rows = max(1, int(args.chunk_mb * 2**20) // (4 * cols))
    n_rows = int(args.size_mb * 2**20) // (4 * cols)
    folder = args.dir or tempfile.mkdtemp(prefix="bench_stream_")
    path = os.path.join(folder, "data.npy")
    try:
        rng = np.random.default_rng(0)
        m = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n_rows, cols))
        for i in range(0, n_rows, rows):
            m[i:i + rows] = rng.standard_normal((min(rows, n_rows - i), cols), np.float32)
        m.flush()
        del m
        m = np.load(path, mmap_mode="r")
        nbytes = m.nbytes
        n_chunks = -(-n_rows // rows)
        chunk_bytes = rows * cols * 4
        init = _init(cols)
        ram_chunk = np.ascontiguousarray(m[:rows])
        dev_chunks = [xp.asarray(np.ascontiguousarray(m[i * rows:(i + 1) * rows]))
                      for i in range(4)]
        xp.materialize(*dev_chunks)
        # warm-up (compiles, thread start, page cache) and a check against NumPy
        want = run_numpy(m, rows)
        stats: list = []
        got = run_stream(m, rows, init, stats)
        err = max(float(np.max(np.abs(g - w) / np.maximum(np.abs(w), 1.0)))
                  for g, w in zip(got, want))
        run_copy(m, rows)
        run_put(ram_chunk, 2)
        run_compute(dev_chunks, 4, init)
        stats.clear()
        jobs = {
            "numpy": lambda: run_numpy(m, rows),
            "stream": lambda: run_stream(m, rows, init, stats),
            "copy": lambda: run_copy(m, rows),
            "put": lambda: run_put(ram_chunk, n_chunks),
            "compute": lambda: run_compute(dev_chunks, n_chunks, init),
        }
        samples: dict[str, list[float]] = {k: [] for k in jobs}
        names = list(jobs)
        for r in range(args.repeats):
            for name in names[r % len(names):] + names[:r % len(names)]:
                t0 = time.perf_counter()
                jobs[name]()
                samples[name].append(time.perf_counter() - t0)
        med = {k: statistics.median(v) for k, v in samples.items()}
        best = {k: min(v) for k, v in samples.items()}
        put_bytes = n_chunks * chunk_bytes

        def gbs(name, t):
            return (put_bytes if name == "put" else nbytes) / t / 1e9

        def overlap(t):
            return (t["copy"] + t["compute"] - t["stream"]) / min(t["copy"], t["compute"])

        versions = {"python": platform.python_version(), "numpy": np.__version__,
                    "jaxlib": xp.debug.jaxlib_version(), "cpus": os.cpu_count(),
                    "loadavg": list(os.getloadavg())}
        print(f"# bench_stream: {nbytes / 2**20:.0f} MiB file ({n_rows} x {cols} float32, "
              f"in the page cache), {n_chunks} chunks of {chunk_bytes / 2**20:.1f} MiB; "
              f"{args.repeats} repeats")
        print(f"# python {versions['python']}, jaxlib {versions['jaxlib']}, numpy "
              f"{versions['numpy']}, {versions['cpus']} CPUs, load average "
              f"{versions['loadavg'][0]:.2f}; max relative error vs NumPy {err:.1e}")
        print()
        print("| what | median s | GB/s (median) | GB/s (best) | vs numpy (median) |")
        print("| --- | --- | --- | --- | --- |")
        for k in names:
            print(f"| {k} | {med[k]:.3f} | {gbs(k, med[k]):.2f} | {gbs(k, best[k]):.2f} | "
                  f"{med['numpy'] / med[k]:.2f}x |")
        print()
        send_copy = statistics.median(s["transfer_seconds"] for s in stats)
        send_wait = statistics.median(s["wait_seconds"] for s in stats)
        print(f"overlap of copy and compute in the stream: {overlap(med):.2f} (median times), "
              f"{overlap(best):.2f} (best times)")
        print(f"stream at {gbs('stream', med['stream']) / gbs('copy', med['copy']):.0%} of "
              f"the transfer ceiling (copy), {med['numpy'] / med['stream']:.2f}x NumPy; send "
              f"spent {send_copy:.3f} s copying and {send_wait:.3f} s waiting for the device")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"versions": versions, "file_bytes": nbytes, "chunk_bytes": chunk_bytes,
                           "chunks": n_chunks, "samples": samples, "median_s": med,
                           "best_s": best,
                           "gbps_median": {k: gbs(k, v) for k, v in med.items()},
                           "gbps_best": {k: gbs(k, v) for k, v in best.items()},
                           "overlap_median": overlap(med), "overlap_best": overlap(best),
                           "stream_stats": stats, "max_rel_error": err}, f, indent=1)
    finally:
        if not args.dir:
            shutil.rmtree(folder, ignore_errors=True)
        elif os.path.exists(path):
            os.remove(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
