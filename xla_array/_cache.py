"""Bounded LRU of compiled executables, keyed by (structure, devices, options). Thread-safe."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from . import _flags

__all__ = ["ExecutableCache", "executables"]


class ExecutableCache:
    def __init__(self) -> None:
        self._d: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.last_miss: Any = None  # key of the last miss, for debug.explain()
        self.prev_keys: list[Any] = []

    def get(self, key: Any) -> Any:
        with self._lock:
            v = self._d.get(key)
            if v is not None:
                self._d.move_to_end(key)
            return v

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            limit = max(1, int(_flags.get("cache_size")))
            while len(self._d) > limit:
                self._d.popitem(last=False)

    def note_miss(self, key: Any) -> None:
        with self._lock:
            self.last_miss = key

    def keys(self) -> list[Any]:
        with self._lock:
            return list(self._d)

    def clear(self) -> None:
        with self._lock:
            self._d.clear()

    def __len__(self) -> int:
        return len(self._d)


executables = ExecutableCache()
