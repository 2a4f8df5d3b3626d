"""Tiered compilation (opt-in, ``XLA_ARRAY_TIERED=1``): a new graph whose bits do not depend on
how XLA optimizes it compiles with XLA's fastest setting first; once it runs again it is
recompiled fully optimized on a background thread and swapped in.

XLA's CPU backend at optimization level 0 compiles about a third faster (four graphs of a
LogisticRegression fit on 100,000 x 64: 268 ms against 388-409) and runs large fusions 2-3x
slower. Its code rounds differently wherever LLVM would form fused multiply-adds: XLA's
expansions of ``tanh``, ``sinh``, ``hypot``, ``logaddexp``, the FFT... differ in up to 2% of
their values between the levels (docs/results-log.md). So only graphs whose every op rounds
the same however it is compiled take the fast tier: those whose ops all have host rules
(``hosteval.exact``: single IEEE operations in an order the lowering writes out, NumPy-order
sums, data movement, comparisons, custom calls into LAPACK and the native kernels), and only
where no value is above ``FAST_MAX_BYTES`` (on large values the slower code costs more than
the compile saves). tests/test_tiers.py compares a corpus of such graphs fast and optimized,
bit for bit, and with NumPy's bits in the suite's check mode; and the whole suite passed with
``tiered="wait", tiered_runs=1`` under that check mode (2026-11-27, Python 3.12, jaxlib 0.12:
4,608 fast compiles and 1,124 optimized recompiles among 5,926, 19,313 runs compared with
NumPy's bits, no difference).

Off by default: on a machine of two cores the recompile takes the CPU the program needs.
GaussianMixture's fits on 10,000 x 16 (its two EM graphs): 1,323 / 393 / 345 ms without
tiers; with them 2,381 / 320 / 340 (recompiled after 2 runs), 1,085 / 1,589 / 317 (after 20),
1,153 / 490 / 424 (never: level 0's code is slower). It is for machines with cores to spare,
where the recompile runs beside the program.

Policy (``executor._run``): a graph missing from the memory cache looks for its optimized
executable in the disk cache, then for its fast one, and else compiles fast (``fast_compiles``)
and stores that on disk. After ``tiered_runs`` more runs of a fast executable its optimized
recompile is queued (``background_compiles``); the worker compiles it, swaps it into the
memory cache (``swaps``) unless the entry changed meanwhile, and stores it on disk, where
lookups prefer it. The worker is one daemon thread: it takes the executor's lock only to
swap (never while compiling), nothing waits for it but ``settle()``, and interpreter exit
does not wait for it (a queued recompile is dropped; the next process finds the fast
executable on disk and queues it again).

Settings: ``tiered`` (``XLA_ARRAY_TIERED``): off (default), on, or ``wait`` (the recompile
runs in the run that calls for it, which then uses it: benchmarks that time steady state);
``tiered_runs`` (2). A set ``opt_level`` turns tiering off. ``xp.debug.settle()`` waits for
the queued recompiles; ``xp.debug.explain()`` reports the tiers.
"""

from __future__ import annotations

import atexit
import logging
import math
import os
import queue
import threading
from collections.abc import Callable
from typing import Any

from . import flags as _flags
from . import hosteval
from . import metrics as _metrics

__all__ = ["FAST_OPTIONS", "fast_first", "submit", "settle", "pending", "on_worker",
           "status"]

log = logging.getLogger("xla_array")

# the fast tier's compile options (added to the graph's own)
FAST_OPTIONS = {"xla_backend_optimization_level": 0}


# the largest value (bytes) a graph computes in the fast tier: its code runs up to 2-3x
# slower, which small values do not feel before the recompile is swapped in, while on large
# ones the slower runs cost more than the compile saves (standardizing 100,000 x 64 float64:
# 57 against 46 ms a run, the compile 57 against 82 ms; scikit-learn fits on 100,000 x 64:
# second fits 40-60% slower, first fits no faster)
FAST_MAX_BYTES = 4 << 20


def fast_first(order: list, device: Any) -> bool:
    """Whether a new graph compiles in the fast tier: tiering on, no optimization level set,
    computed values of at most ``FAST_MAX_BYTES`` each, and every op rounding the same at any
    level (``hosteval.exact``: CPU, fast_math off)."""
    if not _on():
        return False
    for n in order:
        if math.prod(n.shape) * n.dtype.itemsize > FAST_MAX_BYTES:
            return False
    return hosteval.exact(order, device)


def _on() -> bool:
    """Tiering on (``tiered`` set, no ``opt_level`` set)."""
    return bool(_flags._values["tiered"]) and _flags._values["opt_level"] is None


class _Worker:
    """One daemon thread running queued jobs in order; ``settle`` waits until none is left.

    At interpreter exit (``close``, an ``atexit`` handler) the queued jobs are dropped and
    the one running, if any, is waited for, at most ``EXIT_WAIT`` seconds: a process that
    finalized jaxlib while XLA compiled on this thread died of a segmentation fault."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self.pending = 0  # jobs queued or running
        self.running = False
        self.closing = False

    def submit(self, job: Callable[[], None]) -> None:
        with self._cv:
            self.pending += 1
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, daemon=True,
                                                name="xla_array-recompile")
                self._thread.start()
        self._jobs.put(job)

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            with self._cv:
                if self.closing:  # (dropped: the process is exiting)
                    self.pending -= 1
                    self._cv.notify_all()
                    continue
                self.running = True
            try:
                job()
            except Exception as e:  # noqa: BLE001  (the fast executable stays in use)
                log.info("xla_array: background compile failed (%s)", e)
            finally:
                with self._cv:
                    self.running = False
                    self.pending -= 1
                    self._cv.notify_all()

    def settle(self, timeout: float | None) -> bool:
        with self._cv:
            return self._cv.wait_for(lambda: self.pending == 0, timeout)

    def close(self) -> None:
        with self._cv:
            self.closing = True
            self._cv.wait_for(lambda: not self.running, EXIT_WAIT)

    def _after_fork(self) -> None:  # the child has no worker thread: start afresh
        self._cv = threading.Condition()
        self._jobs = queue.SimpleQueue()
        self._thread = None
        self.pending = 0
        self.running = False


# the longest interpreter exit waits for a compile running on the background thread
EXIT_WAIT = 30.0

_WORKER = _Worker()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_WORKER._after_fork)
atexit.register(_WORKER.close)


def submit(job: Callable[[], None]) -> None:
    """Queue ``job`` (an optimized recompile and its swap) on the background thread."""
    _WORKER.submit(job)


def settle(timeout: float | None = None) -> bool:
    """Wait until the queued recompiles are done (``timeout`` seconds at most: False if some
    are still running then)."""
    return _WORKER.settle(timeout)


def on_worker() -> bool:
    """Whether the caller runs on the background thread (a job, or a hook it calls)."""
    return threading.current_thread() is _WORKER._thread


def pending() -> int:
    """Background compiles queued or running (optimized recompiles, compiles behind the
    host's runs)."""
    return _WORKER.pending


def status() -> str:
    """The tiers in words (``debug.explain``)."""
    m = _metrics.snapshot()
    state = "off" if not _on() else ("on, recompiles in the run that calls for them"
                                     if _flags._values["tiered"] == "wait" else "on")
    return (f"tiered compilation {state}: {m['fast_compiles']} fast compiles, "
            f"{m['background_compiles']} optimized recompiles "
            f"({m['background_compile_seconds']:.3f} s), {m['swaps']} swapped in, "
            f"{_WORKER.pending} queued or running")
