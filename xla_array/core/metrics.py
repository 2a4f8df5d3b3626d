"""Counters and timers of the engine, guarded by one lock (several threads may record).

Plain dicts with every known counter present (a ``Counter``'s subclass lookups cost about
twice as much): ``materialized_hit`` runs on every cache-hit materialization.
"""

from __future__ import annotations

import os
import threading
from typing import Any

_lock = threading.Lock()
# every key documented in debug.metrics() (and docs/debugging.md), always present
_COUNTERS = ("compiles", "cache_hits", "cache_misses", "disk_hits", "executions",
             "materializations", "auto_flushes", "device_transfers", "bytes_to_device",
             "bytes_to_host", "host_runs", "host_checks", "fast_compiles",
             "background_compiles", "swaps", "compiles_behind", "structures")
_TIMERS = ("compile_seconds", "lower_seconds", "execute_seconds", "disk_load_seconds",
           "host_seconds", "background_compile_seconds")
_counts: dict[str, int] = dict.fromkeys(_COUNTERS, 0)
_seconds: dict[str, float] = dict.fromkeys(_TIMERS, 0.0)
_causes: dict[str, int] = {}
_lines: dict[tuple, int] = {}
_hits: dict[tuple, int] = {}  # (cause, where) -> cache-hit materializations, see materialized_hit
_hit_seconds = [0.0]


def count(name: str, n: int = 1) -> None:
    with _lock:
        _counts[name] = _counts.get(name, 0) + n


def add_time(name: str, seconds: float) -> None:
    with _lock:
        _seconds[name] = _seconds.get(name, 0.0) + seconds


def executed(seconds: float, hit: bool) -> None:
    """One execution (after a cache hit when ``hit``)."""
    with _lock:
        _counts["executions"] += 1
        if hit:
            _counts["cache_hits"] += 1
        _seconds["execute_seconds"] += seconds


def materialized_hit(cause: str, where: tuple, seconds: float) -> None:
    """One materialization that ran one cached executable: the hot path, one dict entry per
    (cause, user line) and one float. Called with the executor's lock held (the only writer of
    ``_hits``); ``snapshot`` folds these into the counters."""
    key = (cause, where)
    _hits[key] = _hits.get(key, 0) + 1
    _hit_seconds[0] += seconds


def host_run(seconds: float, cause: str | None, where: Any) -> None:
    """One run of a graph on the host (``executor._run_on_host``), and the materialization it
    was when ``cause``: the three counts under one acquisition of the lock."""
    with _lock:
        _counts["host_runs"] += 1
        _seconds["host_seconds"] += seconds
        if cause is not None:
            _count_materialization(cause, where)


def materialization(cause: str, where: tuple) -> None:
    """One materialization, from user frame ``where`` = (filename, line)."""
    with _lock:
        _count_materialization(cause, where)


def _count_materialization(cause: str, where: tuple) -> None:
    """(Called with ``_lock`` held.)"""
    key = (cause, where)
    _counts["materializations"] += 1
    _causes[cause] = _causes.get(cause, 0) + 1
    _lines[key] = _lines.get(key, 0) + 1


def snapshot() -> dict[str, Any]:
    """All metrics as a plain dict (a copy)."""
    with _lock:
        hits = dict(_hits)  # (one C-level copy: safe while the executor adds to it)
        counts = dict(_counts)
        seconds = dict(_seconds)
        causes = dict(_causes)
        lines = dict(_lines)
        seconds["execute_seconds"] = seconds.get("execute_seconds", 0.0) + _hit_seconds[0]
    n = sum(hits.values())
    for k in ("materializations", "executions", "cache_hits"):
        counts[k] = counts.get(k, 0) + n
    for (cause, w), c in hits.items():
        causes[cause] = causes.get(cause, 0) + c
        lines[cause, w] = lines.get((cause, w), 0) + c
    out: dict[str, Any] = {k: counts.get(k, 0) for k in _COUNTERS}
    out.update({k: v for k, v in counts.items() if k not in out})
    out.update({k: seconds.get(k, 0.0) for k in _TIMERS})
    out["materializations_by_cause"] = causes
    out["materializations_by_line"] = {
        f"{cause} at {os.path.basename(w[0])}:{w[1]}": c for (cause, w), c in lines.items()}
    return out


def reset() -> None:
    with _lock:
        _counts.update(dict.fromkeys(_counts, 0))
        _seconds.update(dict.fromkeys(_seconds, 0.0))
        _causes.clear()
        _lines.clear()
        _hits.clear()
        _hit_seconds[0] = 0.0
