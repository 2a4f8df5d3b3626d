"""Materialization: pending graph -> structural key -> cached or new executable -> run

After a run, every node that was an output (the requested ones and every pending node some
live Array still points at) becomes a buffer leaf, so later graphs start from buffers and
nothing is computed twice.
"""

from __future__ import annotations

import logging
import math
import sys
import time
from typing import Any

import numpy as np

from . import backend as _backend
from . import flags as _flags
from . import hosteval, hostsplit, tiers
from . import metrics as _metrics
from . import telemetry as _telemetry
from .backend import HostValue
from .cache import executables
from .compiling import (
    Compiled,
    CompileError,
    acquire_estimate,
    backend_failure,
    behind_enabled,
    compile_behind,
    compile_graph,
    compile_split,
    compiling_behind,
    custom_targets,
    lock,
    register_targets,
    tier_up,
)
from .graph import BUFFER, SCALAR, Node, Placeholder, advance_epoch, user_frame
from .lower import scalar_groups
from .planned import Planned, plan, where_text
from .scalars import packed_buffer, packs_scalars, scalar_args

# (the compile's names are re-exported: the jit, the debug inspectors and tests take them here)
__all__ = ["materialize_nodes", "run_checks", "plan", "Planned", "CompileError", "Compiled",
           "backend_failure", "compile_graph", "custom_targets", "register_targets"]

log = logging.getLogger("xla_array")
_IMPLICIT = {"bool", "int", "float", "complex", "index", "repr", "str", "iter"}


# runtime scalar parameters: one device buffer per (device, dtype, value bits), bounded.
def run_checks(outs: list, results: list, positions: tuple) -> None:
    """Call the check of each output at ``positions`` (``OpDef.check``) with its value: the
    first bad one raises, before the caller writes any result back (waits for the run)."""
    for i in positions:
        try:
            value = _backend.to_numpy(results[i])
        except _backend.BackendError as err:
            raise backend_failure("running the graph recorded at "
                                  f"{where_text([outs[j] for j in positions])}", err) from None
        outs[i].op.check(outs[i], value)


def _guard(cause: str, where: tuple) -> None:
    mode = _flags.get("materialize_guard")
    if mode == "allow" or cause not in _IMPLICIT:
        return
    msg = f"implicit materialization ({cause}) at {where[0]}:{where[1]}"
    if mode == "raise":
        raise RuntimeError(msg + " refused by XLA_ARRAY_MATERIALIZE_GUARD=raise")
    log.warning(msg)


# set by the Array layer: [a function giving the pending nodes an explicit materialization
# computes besides the ones asked for (the state of a loop that auto-flushes: api/array.py,
# _held_loop_state), the list it reads (empty: nothing to add, no call on the hot path)]
SYNC_EXTRA: list[Any] = [None, ()]


def materialize_nodes(nodes: list[Node], cause: str, where: tuple | None = None) -> None:
    """Compute the pending ``nodes`` (one executable per device) and write results back."""
    if where is None:
        where = user_frame()
    if _flags._values["materialize_guard"] != "allow":
        _guard(cause, where)
    with lock:
        if SYNC_EXTRA[1] and cause != "auto_flush":
            extra = SYNC_EXTRA[0]()
            if extra:
                nodes = [*nodes, *extra]
        if len(nodes) == 1:  # the hot path: bool()/float()/one array
            n = nodes[0]
            if n.buffer is not None or n.op is SCALAR:
                return
            if _telemetry.active("materialize"):
                _telemetry.emit("materialize", {"cause": cause,
                                                "where": f"{where[0]}:{where[1]}", "arrays": 1})
            _run(nodes, n.device, cause, where)
            return
        uniq: dict[Node, None] = {}
        for n in nodes:
            if n.buffer is None and n.op is not SCALAR:
                uniq[n] = None
        if not uniq:
            return
        if _telemetry.active("materialize"):
            _telemetry.emit("materialize", {"cause": cause, "where": f"{where[0]}:{where[1]}",
                                            "arrays": len(uniq)})
        by_device: dict[Any, list[Node]] = {}
        for n in uniq:
            by_device.setdefault(n.device, []).append(n)
        counted: str | None = cause
        for device, roots in by_device.items():
            _run(roots, device, counted, where)
            counted = None  # one materialization, however many devices it ran on


def value_buffer(n: Node, cause: str) -> Any:
    """The device buffer of ``n``'s value, computed first if pending (``cause`` says why)."""
    if n.buffer is None:
        materialize_nodes([n], cause)
    buf = n.buffer
    if type(buf) is Placeholder:
        check_buffers([n])
    elif type(buf) is HostValue:
        return buf.device_buffer()
    return buf


def value_host(n: Node, cause: str) -> np.ndarray:
    """``n``'s value copied to the host (read-only NumPy array), computed first if pending."""
    buf = value_buffer(n, cause)
    _metrics.count("bytes_to_host", math.prod(n.shape) * n.dtype.itemsize)
    try:
        return _backend.to_numpy(buf)
    except _backend.BackendError as e:  # a GPU reports a failed run when its result is read
        if "RESOURCE_EXHAUSTED" in str(e):
            raise backend_failure(f"running the graph recorded at {where_text([n])}",
                                  e) from None
        raise


def check_buffers(bufs: list[Node]) -> None:
    for n in bufs:
        if type(n.buffer) is Placeholder:
            if n.buffer.index < 0:
                raise RuntimeError("this array was donated to a jitted call and can no longer "
                                   "be used")
            raise TypeError("a value traced by xla_array.jit cannot be materialized inside the "
                            "traced function (bool/int/float/repr/np.asarray of a traced array); "
                            "mark the argument static (static_argnums) or use where()")


def _donations(g: Planned, args: list) -> frozenset:
    """Parameters whose buffers nothing but this graph can reach afterwards: XLA may write the
    results into them (``x += 1`` on a big array then needs no second copy).

    A buffer leaf qualifies when no Array holds it (``users == 0``), it is large enough
    (``donate_min_bytes``), and Python's reference counts show no holder outside this graph:
    the node is referenced only from its users' inputs, its device buffer only by the node
    (no NumPy view, DLPack export or second node shares it), and no intermediate node of the
    graph is referenced from outside either (a later graph would reach the buffer through it).
    """
    order, bufs, outs = g.order, g.bufs, g.outs
    limit = _flags._values["donate_min_bytes"]
    cands = [j for j in range(len(bufs)) if bufs[j].users == 0 and type(args[j]) is not HostValue
             and
             0 < bufs[j].dtype.itemsize * math.prod(bufs[j].shape) >= limit]
    if not cands:
        return frozenset()
    uses: dict[int, int] = {}  # id(node) -> how many inputs tuples of this graph hold it
    for i in range(len(order)):
        for x in order[i].inputs:
            uses[id(x)] = uses.get(id(x), 0) + 1
    x = None
    getrc = sys.getrefcount
    outset = {id(o) for o in outs}
    # (no local name may hold a node or buffer below: each adds to the counts read)
    rc = _RC_CALL + 1  # what getrefcount(lst[i]) reports for an object only ``lst`` holds
    for i in range(len(order)):  # an intermediate: held by its users' inputs and ``order``
        if id(order[i]) not in outset and getrc(order[i]) - rc > uses.get(id(order[i]), 0):
            return frozenset()
    return frozenset(j for j in cands  # a leaf: its users' inputs and ``bufs``; its buffer
                     if getrc(bufs[j]) - rc == uses.get(id(bufs[j]), 0)  # only the node and
                     and getrc(args[j]) - rc == 1)  # ``args``


def _calibrate() -> int:
    """How many references ``sys.getrefcount(lst[i])`` adds itself (1 up to CPython 3.13)."""
    probe = [object()]
    return sys.getrefcount(probe[0]) - 1


_RC_CALL = _calibrate()


# A pending graph of more nodes than this is computed in parts: the pending inputs of its roots
# first, each on its own (and split again if still too large), then the roots over their
# results. Auto-flush bounds a graph's depth, not its width: 50 scalar B-spline sums recorded
# lazily and stacked made one graph of 353,653 nodes whose XLA compile took over 8 GB (SciPy's
# test_rndm_naive_eval). Parts of one structure share one executable.
MAX_GRAPH_NODES = 20_000


def _pending_inputs(roots: list[Node]) -> list[Node]:
    """The parts a too-large graph is computed in first: its roots' pending inputs. A
    multi-result op is no value of its own (its ``get`` nodes are): a root reading one
    (a ``get``) has that op's pending inputs as its parts."""
    seen: dict[Node, None] = {}
    for r in roots:
        for x in r.inputs or ():
            if x.buffer is None and x.op is not SCALAR:
                if x.op.nout > 1:
                    for y in x.inputs or ():
                        if y.buffer is None and y.op is not SCALAR:
                            seen[y] = None
                else:
                    seen[x] = None
    return list(seen)


def _run(roots: list[Node], device: Any, cause: str | None = None, where: Any = None,
         hoisted: bool = False) -> None:
    """Plan, decide where the graph runs, run it, write back. Counts one materialization
    when ``cause``. ``hoisted``: the held values ``hostsplit.held_first`` names were computed
    on their own already (the rest compiles)."""
    g = plan(roots)
    if len(g.order) > MAX_GRAPH_NODES:
        parts = _pending_inputs(roots)
        if parts:
            del g  # (no holders while the parts run)
            for p in parts:
                _run([p], p.device)
            _run(roots, device, cause, where)
            return
    args = _arguments(g)
    compiled = executables.get(g.key)
    # where it runs: the host tier's record and program of the structure, first
    host_first = _flags._values["host_first"]
    first = compiled is None and host_first is True
    entry, program = None, None
    if first or host_first == "check":  # (the structure's record: one lookup of the key)
        entry = hosteval.entry(g.key)
        program = hosteval.eligible(g, entry)
    if first and entry is not None and program is not None and _on_host_now(g, entry) and \
            _run_on_host(g, entry, program, cause, where):
        return
    # the check mode: the host's values (before the run: it may take donated buffers)
    expected = (hosteval.expected(g, program)
                if host_first == "check" and program is not None else None)
    if first and program is None and not hoisted:
        # a graph that compiles: the held values the host can compute from small buffers
        # first (``hostsplit.held_first``), then the rest over them
        early = hostsplit.held_first(g.order, g.outs, device)
        if early and len(early) < len(g.outs):
            del g, args
            _run(early, device)
            rest = [r for r in roots if r.buffer is None]
            if rest:
                _run(rest, device, cause, where, hoisted=True)
            elif cause is not None:
                _metrics.materialization(cause, where)
            return
    hit = compiled is not None
    if compiled is None:
        compiled = _executable(g, entry, program if first else None, cause, where)
        if compiled is None:  # (the host ran it while its compile runs behind)
            return
    elif compiled.fast:
        compiled = tier_up(g, compiled)
    _execute(g, compiled, args, expected, hit, cause, where)


def _on_host_now(g: Planned, entry: hosteval.Entry) -> bool:
    """The host tier's rule: a structure met for the first time, which the host can run bit
    for bit, runs there until its runs took its budget (``hosteval.host_turn``: the
    rent-or-buy rule, its compile's expected seconds), or while its compile runs behind."""
    return hosteval.host_turn(entry, lambda: acquire_estimate(g)) or compiling_behind(g.key)


def _compiles_behind(g: Planned, entry: hosteval.Entry, program: Any) -> bool:
    """Whether a graph the host can run, whose host runs took the budget, compiles on the
    background thread while the host goes on running it (``compile_behind``)."""
    return (program is not None and behind_enabled() and not compiling_behind(g.key)
            and not entry.refused())


def _arguments(g: Planned) -> list:
    """The executable's buffer arguments; marks the donations (``_donations``) in ``g``."""
    args = []
    dropped = False
    for n in g.bufs:
        b = n.buffer
        if type(b) is Placeholder:
            check_buffers([n])
        elif n.users == 0 and (not dropped or type(b) is HostValue):
            # a candidate for donation if big enough: a host run's value (else put on its
            # device when a compiled run needs it, in _execute) becomes its device buffer
            # here, so that a loop's key is the same whether the host or XLA computed it
            limit = _flags._values["donate_min_bytes"]
            big = 0 <= limit <= n.dtype.itemsize * math.prod(n.shape) > 0
            if big and type(b) is HostValue:
                b = n.buffer = hosteval.device_buffer_of(b)
            dropped = dropped or big
        args.append(b)
    n = b = None  # type: ignore[assignment]  # (loop names would hold refs: _donations)
    if dropped:
        g.donating(_donations(g, args))
    return args


def _executable(g: Planned, entry: hosteval.Entry | None, program: Any, cause: str | None,
                where: Any) -> Compiled | None:
    """A graph missing from the memory cache: its executable (from the disk cache, compiled
    here, or compiled without its host tail), put in the cache; None where its compile was
    queued behind the host's runs and the host ran it. ``program``: the host's program of a
    structure met for the first time (host tier on), else None."""
    _metrics.count("cache_misses")
    if entry is None:  # (a structure's first sight is counted when its record is made)
        hosteval.entry(g.key)
    executables.note_miss(g.key)
    pack = packs_scalars(g.order, g.scalars, g.device)
    tail = None if g.donate or pack else hostsplit.tail(g.order, g.device)
    if tail is None and entry is not None and _compiles_behind(g, entry, program):
        # the host's runs took the budget: compile on the background thread and let the
        # host go on running the graph until the executable is in the cache
        compile_behind(g, pack)
        if _run_on_host(g, entry, program, cause, where):
            return None
    if tail is None:
        compiled = compile_graph(g, pack, tiers.fast_first(g.order, g.device))
    else:
        compiled = compile_split(g, *tail)
    executables.put(g.key, compiled)
    return compiled


def _execute(g: Planned, compiled: Compiled, args: list, expected: Any, hit: bool,
             cause: str | None, where: Any) -> None:
    """Run executable ``compiled`` of graph ``g`` on buffer arguments ``args``, check, write
    back; then the host tail of a split graph. ``expected``: the check mode's host values."""
    split = compiled.split
    scalars, outs = g.scalars, g.outs
    for i, b in enumerate(args):  # the host runs' values a compiled run reads: on the device
        if type(b) is HostValue:
            args[i] = b.device_buffer()
    if split is not None:  # the device part's leaves and outputs
        args = [args[i] for i in split.bufs]
        scalars = [scalars[i] for i in split.scalars]
        outs = [g.order[i] for i in split.outs]
    if compiled.packed:  # one vector per dtype
        for d, idxs in scalar_groups(scalars):
            args.append(packed_buffer(np.array([scalars[i].value for i in idxs], dtype=d.np),
                                      g.device))
    else:
        scalar_args(scalars, g.device, args)
    specs = compiled.out_specs
    if specs is None:
        specs = compiled.out_specs = tuple([(n.shape, n.dtype.np) for n in outs])
        compiled.checks = tuple([i for i, n in enumerate(outs) if n.op.check is not None])
    t0 = time.perf_counter()
    try:
        results = compiled.exe.run(args, specs)
    except _backend.BackendError as err:
        raise backend_failure(f"running the graph recorded at {g.where()}", err) from None
    t1 = time.perf_counter()
    if compiled.checks:
        run_checks(outs, results, compiled.checks)
    if expected is not None and split is None:
        hosteval.compare(g, expected, [_backend.to_numpy(r) for r in results])
    if hit and cause is not None:
        _metrics.materialized_hit(cause, where, t1 - t0)
    else:
        if cause is not None:
            _metrics.materialization(cause, where)
        _metrics.executed(t1 - t0, hit)
    _write_back(outs, results)
    if split is not None:  # the tail: a graph of its own over the values just computed
        _backend.block(results)  # (its host runs are timed for the budget: not this run)
        _run([g.outs[i] for i in split.roots], g.device)
        if expected is not None:
            hosteval.compare(g, expected, [_backend.to_numpy(n.buffer) for n in g.outs])


def _write_back(outs: list[Node], results: list) -> None:
    advance_epoch()  # (the depths of pending nodes recorded on these may be stale now)
    for n, b in zip(outs, results):
        n.buffer = b  # (Node.set_buffer, inlined: truncate to a buffer leaf)
        n.inputs = ()
        n.op = BUFFER
        n.depth = 0
        n.value = None  # (what combined writes recorded: api/indexing.py)


def _run_on_host(g: Planned, entry: hosteval.Entry, program: hosteval.Program,
                 cause: str | None, where: Any) -> bool:
    """A graph not compiled yet, evaluated with the ops' host rules (``hosteval``, the
    structure's record ``entry``); False, computing nothing, where they cannot promise the
    compiled bits."""
    t0 = time.perf_counter()
    native = [0.0]  # (the seconds in native code a compile would not save)
    try:
        values = hosteval.evaluate(g, program, owned=True, native=native)
    except (hosteval.NotExact, MemoryError) as why:
        log.debug("xla_array: compiling the graph recorded at %s (%s)", g.where(), why)
        hosteval.spent(entry, math.inf)
        return False
    if not g.device._local:
        g.device._refuse()
    # (kept on the host until a device needs them; scanned for subnormals already)
    results = [HostValue(v, g.device._pjrt) for v in values]
    for r in results:
        hosteval.mark_clean(r)
    seconds = time.perf_counter() - t0
    saved = seconds - native[0]  # (what a compile could save: not native code's time, and,
    if _flags._values["host_first_budget"] == "auto":  # by the automatic budget, not what
        saved = max(saved - hosteval.RUN_FLOOR, 0.0)    # a compiled run costs at least)
    hosteval.spent(entry, saved)
    _metrics.host_run(seconds, cause, where)
    _write_back(g.outs, results)
    return True
