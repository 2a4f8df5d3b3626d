"""Counters and timers of the engine, guarded by one lock (several threads may record)."""

from __future__ import annotations

import os
import threading
from collections import Counter
from typing import Any

_lock = threading.Lock()
_counts: Counter[str] = Counter()
_seconds: Counter[str] = Counter()
_causes: Counter[str] = Counter()
_lines: Counter[str] = Counter()
_COUNTERS = ("compiles", "cache_hits", "cache_misses", "disk_hits", "executions",
             "materializations", "auto_flushes", "bytes_to_device", "bytes_to_host")
_TIMERS = ("compile_seconds", "lower_seconds", "execute_seconds", "disk_load_seconds")


def count(name: str, n: int = 1) -> None:
    with _lock:
        _counts[name] += n


def add_time(name: str, seconds: float) -> None:
    with _lock:
        _seconds[name] += seconds


def executed(seconds: float, hit: bool) -> None:
    """One execution (after a cache hit when ``hit``)."""
    with _lock:
        _counts["executions"] += 1
        if hit:
            _counts["cache_hits"] += 1
        _seconds["execute_seconds"] += seconds


def materialization(cause: str, where: tuple) -> None:
    """One materialization, from user frame ``where`` = (filename, line)."""
    with _lock:
        _counts["materializations"] += 1
        _causes[cause] += 1
        _lines[(cause, where)] += 1


def snapshot() -> dict[str, Any]:
    """All metrics as a plain dict (a copy)."""
    with _lock:
        out: dict[str, Any] = {k: _counts[k] for k in _COUNTERS}
        out.update({k: _counts[k] for k in _counts if k not in out})
        out.update({k: _seconds[k] for k in _TIMERS})
        out["materializations_by_cause"] = dict(_causes)
        out["materializations_by_line"] = {
            f"{cause} at {os.path.basename(w[0])}:{w[1]}": c for (cause, w), c in _lines.items()}
        return out


def reset() -> None:
    with _lock:
        _counts.clear()
        _seconds.clear()
        _causes.clear()
        _lines.clear()
