"""Telemetry: callbacks that receive every compilation and every materialization.

``on("compile", fn)`` calls ``fn(event)`` with a dict: ``key`` (the structural key),
``ops``, ``lower_seconds`` (record->StableHLO), ``compile_seconds`` (XLA), ``total_seconds``,
``where`` (user lines). ``on("materialize", fn)``: ``cause``, ``where``, ``arrays``.
Callbacks run synchronously in the thread that compiled; exceptions in them are logged, never
raised into the computation.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("xla_array")
_lock = threading.Lock()
_handlers: dict[str, list[Callable[[dict], Any]]] = {"compile": [], "materialize": []}


def on(event: str, fn: Callable[[dict], Any]) -> Callable[[], None]:
    """Register ``fn`` for ``event``; returns a function that unregisters it."""
    if event not in _handlers:
        raise ValueError(f"unknown telemetry event {event!r}; known: {sorted(_handlers)}")
    with _lock:
        _handlers[event] = _handlers[event] + [fn]

    def remove() -> None:
        with _lock:
            _handlers[event] = [h for h in _handlers[event] if h is not fn]
    return remove


def active(event: str) -> bool:
    return bool(_handlers[event])


def emit(event: str, data: dict) -> None:
    for fn in _handlers[event]:
        try:
            fn(dict(data, event=event))
        except Exception:
            log.exception("xla_array telemetry callback %r failed", fn)
