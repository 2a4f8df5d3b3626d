"""Compiling a planned graph: lowering, XLA's compile, the disk cache, the bookkeeping.

``compile_graph`` turns a planned graph (``planned.Planned``) into a ``Compiled`` executable
(from the disk cache where it has one); ``compile_split`` compiles a graph without its host
tail; ``tier_up`` queues the fast tier's optimized recompile and ``compile_behind`` the
compile of a graph the host runs (``compile_behind``), both on the tiers' background thread
(``compiling_behind`` says whether one is on its way). ``core/executor.py`` decides when to
compile and runs what this module returns; ``lock`` is the executor's lock (a background
compile takes it only to put its executable in the cache).
"""

from __future__ import annotations

import logging
import math
import os
import re
import threading
import time
from typing import Any, NamedTuple

from . import backend as _backend
from . import flags as _flags
from . import metrics as _metrics
from . import registry, tiers
from . import telemetry as _telemetry
from .cache import disk, executables
from .compile_options import _disk_context, _graph_options
from .keys import explain_key
from .lower import lower
from .planned import Planned

__all__ = ["CompileError", "Compiled", "Split", "backend_failure", "compile_graph",
           "compile_split", "compile_behind", "compiling_behind", "behind_enabled", "tier_up",
           "acquire_estimate", "custom_targets", "register_targets", "lock"]

log = logging.getLogger("xla_array")
# the executor's lock: materializations hold it; a background compile only to put its result
lock = threading.RLock()


class CompileError(RuntimeError):
    """XLA rejected or failed a graph; the message names the user lines that recorded it."""


class Compiled:
    __slots__ = ("exe", "text", "key", "compile_seconds", "lower_seconds", "out_specs", "packed",
                 "checks", "fast", "runs", "split")

    def __init__(self, exe: Any, text: str, key: Any, cs: float, ls: float,
                 packed: bool = False, fast: bool = False) -> None:
        self.out_specs: Any = None  # (shape, numpy dtype) per output, built on first run
        self.checks: Any = None  # positions of the outputs that are checks (``OpDef.check``)
        self.packed = packed  # scalars passed as one vector per dtype (``packs_scalars``)
        self.fast = fast  # compiled in the fast tier, its optimized recompile not queued yet
        self.runs = 0  # runs since (``tiers.py``)
        self.split: Split | None = None  # the graph's device part, its tail on the host
        self.exe = exe
        self.text = text
        self.key = key
        self.compile_seconds = cs
        self.lower_seconds = ls


def backend_failure(what: str, err: Exception) -> Exception:
    """The exception for XLA's failure ``err`` while ``what``: MemoryError, naming the bytes
    asked for, when the device ran out of memory; CompileError with XLA's text otherwise."""
    text = str(err)
    if "RESOURCE_EXHAUSTED" in text:
        asked = _bytes_asked(text)
        return MemoryError(f"{what}: the device cannot allocate {asked} (XLA: "
                           f"{text.splitlines()[0][:200]})")
    if isinstance(err, (ValueError, TimeoutError)):  # processes disagree (backend_distributed)
        return type(err)(f"{what}: {text}")
    return CompileError(f"{what} failed: {text}")


def _bytes_asked(text: str) -> str:
    """The allocation an out-of-memory message names: "N bytes" (CPU: "allocating N bytes";
    GPU: "allocate 21.83TiB", in binary units), else "more memory than it has"."""
    m = re.search(r"allocating (\d+) bytes", text)
    if m:
        return f"{int(m.group(1))} bytes"
    m = re.search(r"allocate ([\d.]+)([KMGTP]?)i?B\b", text)
    if m:
        return f"{int(float(m.group(1)) * 1024 ** ' KMGTP'.index(m.group(2) or ' '))} bytes"
    return "more memory than it has"


# custom-call targets an executable may call, by the prefix of their names in its text: jaxlib's
# LAPACK kernels and the native kernels of xla_array/kernels (registered in core/registry.py);
# an executable loaded from bytes (disk cache, xp.deserialize) needs them registered first
_LAPACK_MARK = '"lapack_'


def custom_targets(text: str) -> list[str]:
    """The kinds of custom-call targets a module's text calls ('lapack' and the kinds of the
    registered kernels whose targets it names)."""
    kinds = ["lapack"] if _LAPACK_MARK in text else []
    return kinds + [k.kind for k in registry.KERNELS.values()
                    if any(f'"{t}"' in text for t in k.targets)]


def register_targets(kinds: list[str]) -> None:
    """Register the custom-call targets of these kinds; BackendError if one is unavailable.
    Every executable goes through here before it is compiled or loaded from bytes."""
    for kind in kinds:
        if kind == "lapack":
            _backend.register_lapack()
            continue
        k = registry.KERNELS.get(kind)
        if k is None:
            raise _backend.BackendError(f"no native kernel of kind {kind!r} is registered")
        if not k.available():
            raise _backend.BackendError(f"the {k.title} is unavailable here ({k.error()})")


class Split(NamedTuple):
    """A graph compiled without its host tail (``hostsplit.tail``): positions of the device
    part's buffer and scalar leaves (in the plan's lists), of its outputs (in the plan's order:
    the graph's outputs it computes and the values the tail reads), and of the graph's outputs
    the tail computes (in the plan's outputs)."""
    bufs: tuple
    scalars: tuple
    outs: tuple
    roots: tuple


def compile_split(g: Planned, host: frozenset, by_tail: frozenset) -> Compiled:
    """The executable of graph ``g`` but for the nodes at positions ``host`` of its order,
    which the host computes after each run (``executor``) from the values of the nodes
    ``by_tail`` names."""
    order, bufs, scalars, outs = g.order, g.bufs, g.scalars, g.outs
    part = [n for i, n in enumerate(order) if i not in host]
    read = {id(x) for n in part for x in n.inputs}  # by the device part
    wanted = by_tail | {id(n) for n in outs}
    in_tail = {id(order[i]) for i in host}
    split = Split(tuple(i for i, n in enumerate(bufs) if id(n) in read),
                  tuple(i for i, n in enumerate(scalars) if id(n) in read),
                  tuple(i for i, n in enumerate(order) if i not in host and id(n) in wanted),
                  tuple(i for i, n in enumerate(outs) if id(n) in in_tail))
    compiled = compile_graph(g.part(part, [bufs[i] for i in split.bufs],
                                    [scalars[i] for i in split.scalars],
                                    [order[i] for i in split.outs]),
                             variant=f"; host tail {sorted(host)}")
    compiled.split = split
    return compiled


def lowered_text(g: Planned, pack: bool = False) -> str:
    """The StableHLO text of planned graph ``g`` (its donations, its SPMD hooks on a Mesh);
    ``pack``: its scalars packed, one vector per dtype."""
    return lower(g.order, g.bufs, g.scalars, g.outs, g.donate, g.annotations(), pack)


def compile_graph(g: Planned, pack: bool = False, fast: bool = False,
                  variant: str = "") -> Compiled:
    """The executable of a planned graph (memory cache aside: the caller's), under its key.
    ``pack``: the scalars come packed, one vector per dtype (what ``packs_scalars`` decides
    for materializations; the caller passes its arguments accordingly). ``fast``: the fast
    tier (``tiers.py``): the optimized executable from the disk cache if there is one, else
    the fast one, compiled if needed. ``variant``: what else the disk cache's key must tell
    apart (a part of the graph its key names: ``compile_split``)."""
    key, order, device = g.key, g.order, g.device
    _check_limit(key)
    t0 = time.perf_counter()
    options = _graph_options(order, device)
    disk_key = disk.key_text(key, _disk_context(options) + variant) if disk.folder() else None
    if disk_key is not None:
        found = _from_disk(disk_key, key, device, pack, t0)
        if found is not None:
            return found
    if fast:
        options = {**options, **tiers.FAST_OPTIONS}
        if disk_key is not None:
            disk_key = disk.key_text(key, _disk_context(options) + variant)
            found = _from_disk(disk_key, key, device, pack, t0, fast=True)
            if found is not None:
                return found
    text = lowered_text(g, pack)
    t1 = time.perf_counter()
    try:
        register_targets(custom_targets(text))
        exe = _backend.compile(text, device._pjrt_devices, options=options or None)
    except _backend.BackendError as err:
        raise backend_failure(f"compiling the graph recorded at {g.where()}", err) from None
    t2 = time.perf_counter()
    if disk_key is not None:  # (the context as lowered: a kernel that failed to load is out)
        _store(disk.key_text(key, _disk_context(options) + variant), exe, custom_targets(text))
    _compiled(key, text, len(order), g.where(3), t1 - t0, t2 - t1,
              "fast_compiles" if fast else None)
    return Compiled(exe, text, key, t2 - t1, t1 - t0, pack, fast)


# What a compile is expected to take, lowering included (the automatic host_first_budget,
# ``hosteval.host_turn``): PRIOR_SECONDS * (ops + 1) ** PRIOR_POWER, the least-squares fit in
# log space of the 74 compiles of bench_first_use's session and scikit-learn fits (1-421 ops,
# 9-623 ms; 2-core VM, jaxlib 0.10.2 and 0.12 alike; 80% of them within 0.5-1.7x of it), times
# this process's own scale: a running geometric mean of its compiles' ratios to the fit
PRIOR_SECONDS = 0.02
PRIOR_POWER = 0.55
_SCALE = [0.0]  # log of the process's scale


def compile_estimate(ops: int) -> float:
    """The seconds a graph of ``ops`` nodes is expected to take to lower and compile."""
    return PRIOR_SECONDS * (ops + 1) ** PRIOR_POWER * math.exp(_SCALE[0])


def _observe(ops: int, seconds: float) -> None:
    ratio = seconds / (PRIOR_SECONDS * (ops + 1) ** PRIOR_POWER)
    _SCALE[0] = 0.75 * _SCALE[0] + 0.25 * math.log(min(max(ratio, 0.125), 8.0))


def acquire_estimate(g: Planned) -> float:
    """The seconds the executable of graph ``g`` is expected to take to get: 0 where the disk
    cache holds it (a load: milliseconds), else its compile's."""
    if disk.folder():
        options = _graph_options(g.order, g.device)
        if disk.has(disk.key_text(g.key, _disk_context(options))):
            return 0.0
    return compile_estimate(len(g.order))


def _check_limit(key: Any) -> None:
    """Raise CompileError once ``max_compiles`` compiles happened (before another)."""
    limit = int(_flags.get("max_compiles"))
    if limit and _metrics.snapshot()["compiles"] >= limit:
        raise CompileError(f"more than XLA_ARRAY_MAX_COMPILES={limit} compiles; the new "
                           f"graph differs from the cached ones by: {explain_key(key)}")


def _compiled(key: Any, text: str, ops: int, where: str, lowered: float, seconds: float,
              kind: str | None = None) -> None:
    """A compile's bookkeeping: the counters (``kind``: the counter of its kind as well,
    ``fast_compiles`` or ``compiles_behind``), ``dump_dir``, ``log_compiles``, the
    ``on_compile`` event."""
    _metrics.count("compiles")
    if kind != "fast_compiles":  # (the fast tier's compiles take a third less)
        _observe(ops, lowered + seconds)
    if kind is not None:
        _metrics.count(kind)
    _metrics.add_time("compile_seconds", seconds)
    _metrics.add_time("lower_seconds", lowered)
    dump = _flags.get("dump_dir")
    if dump:
        os.makedirs(dump, exist_ok=True)
        name = f"module_{abs(hash(key)) & 0xFFFFFFFFFFFF:012x}.mlir"
        with open(os.path.join(dump, name), "w") as f:
            f.write(f"// key hash {hash(key)}\n" + text)
    behind = kind == "compiles_behind"
    if _flags.get("log_compiles"):
        log.warning("xla_array compiled %d ops in %.1f ms%s (graph from %s)", ops,
                    seconds * 1e3, " behind the host's runs" if behind else "", where)
    event = {"key": key, "ops": ops, "lower_seconds": lowered, "compile_seconds": seconds,
             "total_seconds": lowered + seconds, "where": where}
    if behind:
        event["behind"] = True
    _telemetry.emit("compile", event)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# the CPUs this process may use: ``compile_behind="auto"`` compiles behind the host's runs
# from 4 up (an XLA compile keeps about 1.5 busy: 0.51 s of CPU in 0.33 s, 2 cores)
CPUS = _cpus()


def behind_enabled() -> bool:
    """Whether graphs whose host runs took their budget compile behind them (the setting)."""
    on = _flags._values["compile_behind"]
    return CPUS >= 4 if on == "auto" else bool(on)


# structural keys whose compile runs behind the host's runs (``compile_behind``): the host
# computes them until the executable is in the cache
_BEHIND: set = set()
if hasattr(os, "register_at_fork"):  # (a child has no background thread: its host compiles)
    os.register_at_fork(after_in_child=_BEHIND.clear)


def compiling_behind(key: Any) -> bool:
    """Whether the compile of structure ``key`` is on its way on the background thread."""
    return key in _BEHIND


def compile_behind(g: Planned, pack: bool) -> None:
    """Queue the compile of a graph the host runs (``hosteval``) on the background thread
    (``tiers.submit``): lowered here, compiled (or loaded from the disk cache) there, put in
    the memory cache under the executor's lock, which the compile never holds. Called under
    that lock. A failed compile is logged; the next run then compiles in the caller's thread
    and raises there."""
    key, device = g.key, g.device
    _check_limit(key)
    t0 = time.perf_counter()
    options = _graph_options(g.order, device)
    text = lowered_text(g, pack)
    # (the disk cache's context as lowered: the kernels it may use are loaded by now)
    disk_key = disk.key_text(key, _disk_context(options)) if disk.folder() else None
    targets = custom_targets(text)
    register_targets(targets)
    lowered = time.perf_counter() - t0
    ops, where = len(g.order), g.where(3)
    generation = executables.generation

    def job() -> None:
        try:
            t1 = time.perf_counter()
            found = _from_disk(disk_key, key, device, pack, t1) if disk_key else None
            if found is None:
                exe = _backend.compile(text, device._pjrt_devices, options=options or None)
                t2 = time.perf_counter()
                if disk_key is not None:
                    _store(disk_key, exe, targets)
                _compiled(key, text, ops, where, lowered, t2 - t1, "compiles_behind")
                found = Compiled(exe, text, key, t2 - t1, lowered, pack)
            with lock:  # (not compiled in the caller's thread, no setting changed since)
                if executables.get(key) is None and executables.generation == generation:
                    executables.put(key, found)
        finally:
            with lock:
                _BEHIND.discard(key)

    _BEHIND.add(key)
    tiers.submit(job)


def _store(disk_key: str, exe: Any, targets: list) -> None:
    """Put executable ``exe`` in the disk cache (its custom-call ``targets`` beside it)."""
    try:
        disk.store(disk_key, exe.serialize(), {"targets": targets})
    except _backend.BackendError as err:
        log.info("xla_array: could not serialize an executable (%s)", err)


def _from_disk(disk_key: str, key: Any, device: Any, pack: bool, t0: float,
               fast: bool = False) -> Compiled | None:
    """The executable the disk cache holds under ``disk_key``, or None."""
    hit = disk.load(disk_key)
    if hit is None:
        return None
    payload, meta = hit
    try:
        register_targets(meta.get("targets", []))
        exe = _backend.deserialize(payload, device._pjrt_devices)
    except _backend.BackendError as err:
        log.info("xla_array: cache entry unusable (%s); compiling", err)
        return None
    _metrics.count("disk_hits")
    _metrics.add_time("disk_load_seconds", time.perf_counter() - t0)
    return Compiled(exe, "", key, 0.0, time.perf_counter() - t0, pack, fast)


def tier_up(g: Planned, old: Compiled) -> Compiled:
    """A run of fast-tier executable ``old`` of graph ``g`` (``tiers.py``): after
    ``tiered_runs`` of them, queue its optimized recompile (or, with ``tiered="wait"``,
    compile it now and return it). Called under the executor's lock."""
    old.runs += 1
    if old.runs < _flags._values["tiered_runs"]:
        return old
    old.fast = False  # (queued once)
    key, device = g.key, g.device
    text = old.text or lowered_text(g, old.packed)
    options = _graph_options(g.order, device)
    disk_key = disk.key_text(key, _disk_context(options)) if disk.folder() else None
    targets = custom_targets(text)

    def recompile() -> None:
        t0 = time.perf_counter()
        exe = _backend.compile(text, device._pjrt_devices, options=options or None)
        seconds = time.perf_counter() - t0
        _metrics.count("background_compiles")
        _metrics.add_time("background_compile_seconds", seconds)
        new = Compiled(exe, text, key, seconds, 0.0, old.packed)
        with lock:  # (only to swap: never held while compiling)
            if executables.get(key) is old:  # (not evicted, cleared or replaced meanwhile)
                executables.put(key, new)
                _metrics.count("swaps")
        if disk_key is not None:
            _store(disk_key, exe, targets)

    if _flags._values["tiered"] != "wait":
        tiers.submit(recompile)
        return old
    recompile()
    return executables.get(key) or old
