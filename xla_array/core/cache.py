"""Compiled executables: a bounded in-memory LRU and an optional private on-disk cache."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import json
import logging
import os
import platform as _platform
import stat
import threading
from typing import Any

from . import flags as _flags

log = logging.getLogger("xla_array")

__all__ = ["ExecutableCache", "executables", "DiskCache", "disk", "cpu_features"]


class ExecutableCache:
    """Executables by structural key, least recently used evicted past ``cache_size``.

    A hit costs one dict lookup (one hash of the key: a long graph's key takes microseconds to
    hash) and one counter stamp kept beside the value; eviction, rare, sorts by stamp."""

    def __init__(self) -> None:
        self._d: dict[Any, list] = {}  # key -> [value, stamp of its last use]
        self._tick = itertools.count()
        self._lock = threading.Lock()
        self.last_miss: Any = None  # key of the last miss, for debug.explain()
        self.prev_keys: list[Any] = []
        # bumped by ``clear``: an executable compiled behind the host's runs (executor) under
        # settings since changed is not put in
        self.generation = 0

    def get(self, key: Any) -> Any:
        e = self._d.get(key)  # (dict reads are atomic; no lock on the hot path)
        if e is None:
            return None
        e[1] = next(self._tick)
        return e[0]

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._d[key] = [value, next(self._tick)]
            limit = max(1, int(_flags.get("cache_size")))
            if len(self._d) > limit:
                by_age = sorted(self._d.items(), key=lambda kv: kv[1][1])
                for k, _ in by_age[:len(self._d) - limit]:
                    self._d.pop(k, None)

    def note_miss(self, key: Any) -> None:
        with self._lock:
            self.last_miss = key

    def keys(self) -> list[Any]:
        """Keys, least recently used first."""
        with self._lock:
            return [k for k, _ in sorted(self._d.items(), key=lambda kv: kv[1][1])]

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self.generation += 1

    def __len__(self) -> int:
        return len(self._d)


executables = ExecutableCache()
# The optimization level is a compile option, not part of a graph's structure: executables
# compiled under another level must not be found (the disk cache keys by the options).
_flags.on_change("opt_level", executables.clear)
_flags.on_change("fast_math", executables.clear)  # (it changes the lowerings, not the keys)


# ---------------------------------------------------------------- on-disk cache

_MAGIC = b"XLA_ARRAY_EXE 1\n"


class DiskCache:
    """Serialized executables in a private folder, one file per key digest.

    A file is ``MAGIC, header line (json: key digest, the full key text, payload sha256,
    flags), payload``. An entry whose magic, key or checksum does not match (corrupt,
    truncated, foreign, from another jaxlib/CPU, or moved under another entry's name) is
    ignored and replaced: the full key is compared, not only its digest, so an entry renamed
    or swapped with its header's digest rewritten is a miss. A folder that is not private
    (owned by someone else, or writable by group/others) is not used at all. Size is bounded
    by evicting the least recently used files.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._checked: dict[str, bool] = {}

    def folder(self) -> str | None:
        d = _flags.get("cache_dir")
        if not d:
            return None
        with self._lock:
            ok = self._checked.get(d)
            if ok is None:
                ok = self._checked[d] = self._prepare(d)
        return d if ok else None

    @staticmethod
    def _prepare(d: str) -> bool:
        try:
            os.makedirs(d, mode=0o700, exist_ok=True)
            st = os.stat(d)
        except OSError:
            return False
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            log.warning("xla_array: not using cache folder %s (owned by another user)", d)
            return False
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            log.warning("xla_array: not using cache folder %s (writable by others)", d)
            return False
        return True

    @staticmethod
    def key_text(key: Any, context: str) -> str:
        """The full text an entry is stored under (its file is named by its digest)."""
        return context + "\n" + repr(key)

    @staticmethod
    def digest(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    def has(self, text: str) -> bool:
        """Whether an entry is stored under the key ``text`` (not read: ``load`` checks it)."""
        d = self.folder()
        return d is not None and os.path.exists(
            os.path.join(d, self.digest(text)[:40] + ".xla"))

    def load(self, text: str) -> tuple[bytes, dict] | None:
        """The payload and header stored under the key ``text``, or None."""
        d = self.folder()
        if d is None:
            return None
        digest = self.digest(text)
        path = os.path.join(d, digest[:40] + ".xla")
        try:
            with open(path, "rb") as f:
                blob = f.read()
        except OSError:
            return None
        try:
            if not blob.startswith(_MAGIC):
                raise ValueError("bad magic")
            head, _, payload = blob[len(_MAGIC):].partition(b"\n")
            meta = json.loads(head)
            if meta.get("digest") != digest or meta.get("key") != text:
                raise ValueError("entry of another key")
            if hashlib.sha256(payload).hexdigest() != meta.get("sha256"):
                raise ValueError("checksum mismatch")
        except (ValueError, AttributeError, json.JSONDecodeError) as err:
            log.info("xla_array: ignoring cache entry %s (%s)", path, err)
            with contextlib.suppress(OSError):
                os.remove(path)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)
        return payload, meta

    def store(self, text: str, payload: bytes, meta: dict) -> None:
        """Store ``payload`` under the key ``text`` (see ``key_text``)."""
        d = self.folder()
        if d is None:
            return
        digest = self.digest(text)
        meta = dict(meta, digest=digest, key=text, sha256=hashlib.sha256(payload).hexdigest())
        path = os.path.join(d, digest[:40] + ".xla")
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(_MAGIC + json.dumps(meta).encode() + b"\n" + payload)
            os.replace(tmp, path)
        except OSError as err:
            log.info("xla_array: could not write cache entry %s (%s)", path, err)
            with contextlib.suppress(OSError):
                os.remove(tmp)
            return
        self._evict(d, len(_MAGIC) + len(payload))

    # folder -> [bytes in it as of the last scan plus what this process wrote since, stores
    # since that scan]: a store rescans the folder only when the tally passes the size bound
    # or every ``_RESCAN`` stores (other processes write there too), and the scan runs on a
    # daemon thread, so no compile waits for it. Scanning on every store cost 141 ms per
    # compile in a folder of 33,000 entries.
    _tally: dict[str, list] = {}
    _scanning: set = set()
    _evict_lock = threading.Lock()
    _RESCAN = 64

    @classmethod
    def _evict(cls, d: str, added: int = 0) -> None:
        limit = int(_flags.get("cache_max_bytes"))
        with cls._evict_lock:
            t = cls._tally.get(d)
            if t is not None and t[0] + added <= limit and t[1] < cls._RESCAN:
                t[0] += added
                t[1] += 1
                return
            if d in cls._scanning:
                return
            cls._scanning.add(d)
        threading.Thread(target=cls._scan, args=(d, limit), daemon=True,
                         name="xla_array disk-cache eviction").start()

    @classmethod
    def _scan(cls, d: str, limit: int) -> None:
        """List folder ``d`` and remove its oldest entries until it holds ``limit`` bytes."""
        try:
            entries = []
            for e in os.scandir(d):
                if e.name.endswith(".xla"):
                    st = e.stat()
                    entries.append((st.st_mtime, st.st_size, e.path))
            total = sum(s for _, s, _ in entries)
            for _mtime, size, path in sorted(entries):
                if total <= limit:
                    break
                with contextlib.suppress(OSError):
                    os.remove(path)
                    total -= size
            with cls._evict_lock:
                cls._tally[d] = [total, 0]
        except OSError:
            pass
        finally:
            with cls._evict_lock:
                cls._scanning.discard(d)

    @classmethod
    def wait_for_eviction(cls, timeout: float = 10.0) -> None:
        """Wait for this process's eviction scans to finish (tests)."""
        for th in threading.enumerate():
            if th.name == "xla_array disk-cache eviction":
                th.join(timeout)


@functools.cache
def cpu_features() -> str:
    """A stable string naming the host CPU's architecture and feature flags (for cache keys)."""
    flags = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    flags = " ".join(sorted(line.partition(":")[2].split()))
                    break
    except OSError:
        pass
    flags = flags or _platform.processor()
    return f"{_platform.machine()}-{hashlib.sha256(flags.encode()).hexdigest()[:16]}"


disk = DiskCache()
