"""Memory stays flat over long loops (benchmarks/bench_soak.py measures RSS at scale)."""

import gc
import tracemalloc

import numpy as np

import xla_array as xp


def test_runs_on_a_long_lived_array_hold_no_memory():
    """jaxlib kept a Python traceback per execution on each argument that stays alive (~56
    bytes a run, without bound) until xla_array turned its traceback recording off."""
    x = xp.asarray(np.arange(64, dtype=np.float32))
    for _ in range(300):  # compile, fill caches
        float(xp.sum(x * 2.0))
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for _ in range(3000):
            assert float(xp.sum(x * 2.0)) == 4032.0
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert grown < 3000 * 8, f"{grown} bytes held after 3000 runs"
