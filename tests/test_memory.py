"""Memory stays flat over long loops (benchmarks/bench_soak.py measures RSS at scale)."""

import gc
import tracemalloc

import numpy as np

import xla_array as xp


def test_runs_on_a_long_lived_array_hold_no_memory():
    """jaxlib kept a Python traceback per execution on each argument that stays alive (~56
    bytes a run, without bound) until xla_array turned its traceback recording off. Two
    windows of 3000 runs: a leak grows both, while something allocated once meanwhile (by
    another thread: tracemalloc sees all of them) grows one."""
    x = xp.asarray(np.arange(64, dtype=np.float32))
    for _ in range(300):  # compile, fill caches
        float(xp.sum(x * 2.0))
    gc.collect()
    tracemalloc.start()
    try:
        snaps = [tracemalloc.take_snapshot()]
        for _ in range(2):
            for _ in range(3000):
                assert float(xp.sum(x * 2.0)) == 4032.0
            gc.collect()
            snaps.append(tracemalloc.take_snapshot())
    finally:
        tracemalloc.stop()
    grown = []
    for a, b in zip(snaps, snaps[1:]):
        diff = b.compare_to(a, "filename")
        grown.append((sum(s.size_diff for s in diff),
                      [(str(s.traceback), s.size_diff) for s in diff[:3]]))
    assert min(g for g, _ in grown) < 3000 * 8, f"bytes held after 3000 runs, twice: {grown}"
