import os
import threading

import pytest
from hypothesis import settings

# Refuse stray settings from the environment: tests set what they need explicitly.
for _k in list(os.environ):
    if _k.startswith("XLA_ARRAY_") and _k != "XLA_ARRAY_CPU_DEVICES":
        del os.environ[_k]

# The on-disk compile cache would turn compiles into disk hits between runs; tests that count
# compiles need it off (tests/test_disk_cache.py turns it on in a private folder).
os.environ["XLA_ARRAY_CACHE_DIR"] = "off"
# SciPy reads this once, at its first import (xla_array's linalg may import it early).
os.environ.setdefault("SCIPY_ARRAY_API", "1")

settings.register_profile("ci", max_examples=30, deadline=None, derandomize=True,
                          print_blob=True)

settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def metrics():
    """Reset the metrics and return a function reading the current ones."""
    import xla_array as xp
    xp.debug.reset_metrics()
    return xp.debug.metrics


@pytest.fixture
def run_threads():
    """``run(work, n)``: call ``work(i)`` for i in range(n) on n threads at once; returns the
    exceptions they raised (an assertion failing inside ``work`` is one)."""
    def run(work, n):
        errors = []

        def guarded(i):
            try:
                work(i)
            except Exception as e:  # noqa: BLE001  (returned to the test)
                errors.append(e)
        threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return errors
    return run
