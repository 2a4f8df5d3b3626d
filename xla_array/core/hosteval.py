"""First use on the host: a graph structure not compiled yet runs with NumPy instead of
compiling, when NumPy computes it bit for bit as the compiled graph would.

Compiling a new graph costs 20-500 ms; most code runs most of its graphs once (a script's
statements, a library call's steps), and that is the stall a new user meets. So on a CPU device a
graph whose every op has a host rule (``ops/host.py``: IEEE arithmetic, comparisons, sums in
NumPy's order, integer arithmetic, sorting, indexing, data movement, LAPACK calls; and the
rules of the native kernels that will replace ops when the graph is lowered, ``Kernel.host``:
matrix products and transcendental functions through the very C functions the compiled graph
calls) is evaluated op by op with NumPy on the buffers' host memory, and its results are
written back as device buffers. Each
structure's host runs are timed: once they have taken what its compile is expected to take
(``host_turn``: at least 50 ms, about what the cheapest compiles cost; past that
``compiling.acquire_estimate``, a fit of compile seconds to the graph's size that this
process's compiles rescale, or nothing where the disk cache holds the executable), the
structure compiles and every later run uses the executable: the rent-or-buy rule, never more
than twice the better choice made in hindsight. A loop over large values compiles after a few
iterations; a small graph run now and then never does. What a compile can buy is the time the
host spends outside native code: a step whose rule calls the C function its compiled graph
calls too (a native kernel's rule, a LAPACK call: ``NATIVE_OPS``) takes about as long either
way, so its time is left out of the runs' count (``evaluate``'s ``native``), and a graph
that is mostly such calls (an SVD and the centering around it) stays on the host, where a
compile would have cost 190 ms and made its runs no faster.

Bits: the results are the compiled graph's, NaN payloads aside. Rules exist only for ops whose
lowering rounds as NumPy does; a rule raises ``NotExact`` for values where it cannot promise
that (an out-of-range float-to-integer cast, a zero max/min, whose sign follows XLA's order), and
subnormal numbers, which compiled code flushes to zero, are looked for in the float leaves (a
buffer once: ``mark_clean``) and in the results of every op that computes new values (not of
those that move values or only keep their operands', up to sign, zeros and whole numbers:
``ops/host.py``, ``MOVES``, ``keeps_values``): any of these and the graph compiles instead.
The test suite runs with ``XLA_ARRAY_HOST_FIRST=check``: every graph compiles, and the bits
of each run whose ops have rules are compared with the host's (``expected``, ``compare``).

``XLA_ARRAY_HOST_FIRST=0`` (``xp.flags.set(host_first=False)``) turns it off: every new graph
compiles at once. ``xp.debug.metrics()`` counts ``host_runs`` and ``host_seconds``.
"""

from __future__ import annotations

import logging
import math
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import backend as _backend
from . import flags as _flags
from . import graph as _graph
from . import metrics as _metrics
from . import registry, rewrite
from .devices import Device
from .graph import SCALAR, Node
from .ops.host import COMPLEX_DTYPES, COMPLEX_OPS, DTYPES, MOVES, NotExact, keeps_values
from .ops.host_common import c_ordered, has_subnormal
from .ops.reductions import SEQUENTIAL_ROWS, sum_plan
from .planned import Planned

__all__ = ["Entry", "entry", "host_turn", "spent", "Program", "eligible", "exact", "evaluate",
           "expected", "compare", "mark_clean", "NotExact"]

log = logging.getLogger("xla_array")

# ops whose host rule calls the native code their lowering calls (the LAPACK kernels: the same
# routines of SciPy's LAPACK): a compile does not make them faster (``_rule_and_native``)
NATIVE_OPS = frozenset({"lapack"})

# What the host tier keeps of each graph structure, one record per structural key (``Entry``):
# its host runs' seconds, its budget, its program. Bounded: the oldest half goes when full (a
# key holds the whole structure: a big graph's is large, and a lookup hashes all of it, 50-60
# us for GaussianMixture's 330-op graphs: one lookup a run, not one per question).
_ENTRIES: dict[Any, Entry] = {}
_ENTRIES_MAX = 4096
# the automatic budget: at least FLOOR seconds (about what the cheapest compiles cost), then
# up to the compile a key is expected to take (``Entry.limit``, set once its runs reach FLOOR)
FLOOR = 0.05
# What a compiled run of a small graph costs at least, the result read (seconds): jaxlib's
# dispatch (~15-20 us) and, above 1,000 flops, the hand-off to PJRT's worker thread and back
# (30-100 us on the 2-core VM: docs/performance.md, "the CPU client stays asynchronous"). A
# host run is counted towards the automatic budget only by what it takes beyond this (the
# executor's ``_run_on_host``): a compile saves nothing on a graph the host runs in less, so
# a loop over small arrays stays on the host, at NumPy's pace, however long it runs
RUN_FLOOR = 40e-6
_UNSET = object()  # (no program found yet)
_UNKNOWN = object()  # (a kernel operand outside the graph's lists: no program kept)


class Entry:
    """The host tier's record of one graph structure (``entry``): ``spent``, the seconds its
    host runs took outside native code (``NATIVE_OPS``; None before the first; ``inf`` where
    the host cannot run it); ``limit``, its automatic budget once asked (``host_turn``);
    ``program`` (``eligible``), valid for the settings generation ``gen`` and the kernels in
    use ``found``."""

    __slots__ = ("spent", "limit", "gen", "found", "program")

    def __init__(self) -> None:
        self.spent: float | None = None
        self.limit: float | None = None
        self.gen = -1
        self.found: Any = None
        self.program: Any = _UNSET

    def refused(self) -> bool:
        """Whether the host could not run the graph (``NotExact``, no memory)."""
        return self.spent == math.inf


def entry(key: Any) -> Entry:
    """The record of the graph structure ``key`` (made on first sight)."""
    e = _ENTRIES.get(key)
    if e is None:
        _metrics.count("structures")
        if len(_ENTRIES) >= _ENTRIES_MAX:
            for k in list(_ENTRIES)[:_ENTRIES_MAX // 2]:
                del _ENTRIES[k]
        e = _ENTRIES[key] = Entry()
    return e


def host_turn(e: Entry, cost: Callable[[], float]) -> bool:
    """Whether the graph of record ``e`` (not compiled in this process) should run on the
    host: its host runs so far have taken less than its budget. The ``host_first_budget``
    setting is that budget, or with ``auto``: ``FLOOR`` seconds, and past them ``cost()``, the
    seconds its executable is expected to take to compile (0 where the disk cache holds it),
    asked once. That is the rent-or-buy rule (ski rental): compiling once the host runs have
    cost what the compile would, a structure costs at most twice what the better choice made
    in hindsight would have, whether it runs a few more times or forever (a fixed 50 ms made
    a 50-op graph of LinearDiscriminantAnalysis compile for 290 ms after 5 fits whose host
    runs took 12 ms each). Called under the executor's lock."""
    spent = e.spent
    if spent is None:
        e.spent = 0.0
        return True
    budget = _flags._values["host_first_budget"]
    if budget != "auto":
        return spent < budget if budget > 0 else False
    if spent < FLOOR:
        return True
    limit = e.limit
    if limit is None:
        limit = e.limit = cost()
    return spent < limit


def spent(e: Entry, seconds: float) -> None:
    """Count a host run of record ``e``: the seconds a compile could save (its time outside
    native code), ``inf`` where its graph cannot run on the host."""
    e.spent = (e.spent or 0.0) + seconds


# the largest value (bytes) a host evaluation computes: a compiled graph fuses its steps and
# writes out few of its values, NumPy writes every one (a bigger graph compiles, and its compile
# time is small beside its work: standardizing 100,000 x 64 float64 took 310-460 ms on the host
# against 120-130 ms compiled, first run included; 20,000 x 64: 24-57 ms against 94-100)
MAX_BYTES = 1 << 24


def eligible(g: Planned, e: Entry | None) -> Program | None:
    """The program that evaluates the planned graph ``g`` with host rules (``evaluate`` runs
    it), or None where the graph may not run on the host: it may when the setting is on (and
    ``fast_math`` off), its device is a local CPU device, every op has a host rule, every
    value a dtype the rules cover and at most ``MAX_BYTES``.

    With the structure's record ``e`` (``entry``), the program is kept there for as long as
    no setting and no kernel in use changes (``flags.generation``, ``rewrite.rules``): a
    structure run again on the host takes it from there, every value found by position
    (finding each node's rule anew took 60-90 us per graph of scikit-learn's fits)."""
    if not _flags._values["host_first"]:
        return None
    order, device, bufs, scalars, outs = g.order, g.device, g.bufs, g.scalars, g.outs
    if e is None:
        return _program(_rules(order, device, MAX_BYTES), order, bufs, scalars, outs, False)
    gen = _flags.generation()
    found = kernels_in_use()  # (the same object while the kernels in use stay the same)
    program = e.program
    if program is not _UNSET and e.gen == gen and e.found is found:
        if program is not _UNKNOWN:
            return program
        return _program(_rules(order, device, MAX_BYTES), order, bufs, scalars, outs, False)
    rules = _rules(order, device, MAX_BYTES)
    program = _program(rules, order, bufs, scalars, outs, True)
    e.gen, e.found, e.program = gen, found, program
    if program is _UNKNOWN:
        return _program(rules, order, bufs, scalars, outs, False)
    return program


class Program:
    """A graph's evaluation with host rules, found once per structure (``eligible``): its
    values in one list by slot (the buffer leaves, the scalar leaves, ``extra`` leaves, then
    the order's nodes), and per node a step ``(position in the order, slot, rule, a kernel's
    attrs or _PLAIN or _BOUND, slots read, slots freed after it, kind, shape, NumPy dtype,
    whether the rule calls native code its compiled graph calls too)``;
    kind: ``_MULTI`` (a multi-result op, its value the parts), ``_SCAN`` or ``_SCAN_PARTS``
    (a computed float or complex result, looked at for subnormals) or ``_MOVE``. Each value
    is freed after its last use (outputs kept): a graph over large values then holds a few
    at a time, as the NumPy code it replaces does, instead of all of them (new memory is
    what costs: 51 MB first touched took ~200 ms on the 2-core VM, ~10 ms reused). A step
    costs ~1 us besides its rule (values found by node in a dict and each rule looking up
    its compute dtype: 2-3)."""

    __slots__ = ("steps", "outs", "size", "extra", "scalars")

    def __init__(self, steps: tuple, outs: tuple, size: int, extra: tuple,
                 scalars: tuple) -> None:
        self.steps, self.outs, self.size, self.extra = steps, outs, size, extra
        self.scalars = scalars  # per scalar leaf (NumPy dtype, smallest normal or None)


_PLAIN = object()  # (an op's own rule, called without a kernel's attrs)
_BOUND = object()  # (an op's rule bound to the structure's node: called with the values)
_MOVE, _SCAN, _SCAN_PARTS, _MULTI = 0, 1, 2, 3


def _program(rules: list | None, order: Sequence[Node], bufs: Sequence[Node],
             scalars: Sequence[Node], outs: Sequence[Node], keep: bool) -> Any:
    """The ``Program`` of the graph with ``rules`` (``_rules``; None: no program). ``keep``:
    for the structure's record, every value by position (``_UNKNOWN`` where a node reads a
    value in none of the graph's lists: a kernel operand the rewrite made); otherwise such
    values are ``extra`` leaves of this run."""
    if rules is None:
        return None
    slot: dict[int, int] = {}
    for n in bufs:
        slot[id(n)] = len(slot)
    for n in scalars:
        slot[id(n)] = len(slot)
    leaves = len(slot)
    extra: list[Node] = []
    ins_of: list[tuple[int, ...]] = []
    pending = {id(n) for n in order}
    for n, (_, kernel, _) in zip(order, rules):
        for x in (n.inputs if kernel is None else kernel[0]):
            if id(x) not in slot and id(x) not in pending:
                if keep:
                    return _UNKNOWN
                slot[id(x)] = leaves + len(extra)
                extra.append(x)
    first = leaves + len(extra)
    for i, n in enumerate(order):
        slot[id(n)] = first + i
    for n, (_, kernel, _) in zip(order, rules):
        ins_of.append(tuple([slot[id(x)] for x in (n.inputs if kernel is None else kernel[0])]))
    if any(id(n) not in slot for n in outs):
        return _UNKNOWN if keep else None
    out_slots = tuple([slot[id(n)] for n in outs])
    last: dict[int, int] = {}
    for i, ins in enumerate(ins_of):
        for s in ins:
            last[s] = i
    for s in out_slots:
        last[s] = -1
    drops: list[list[int]] = [[] for _ in order]
    for s, i in last.items():
        if i >= 0:
            drops[i].append(s)
    steps = []
    for i, (n, (rule, kernel, native), ins) in enumerate(zip(order, rules, ins_of)):
        if n.op.nout > 1:
            kind = _MULTI
        elif n.dtype.kind not in "fc" or n.op.name in MOVES or (
                kernel is None and keeps_values(n)):  # (no new float values: ``ops/host.py``)
            kind = _MOVE
        else:
            kind = _SCAN if n.dtype.kind == "f" else _SCAN_PARTS
        attrs = _PLAIN if kernel is None else kernel[1]
        bind = getattr(rule, "bind", None) if kernel is None else None
        if bind is not None:  # (the rule for this structure: ``ops/host.py``)
            rule, attrs = bind(n), _BOUND
        steps.append((i, first + i, rule, attrs, ins, tuple(drops[i]), kind, tuple(n.shape),
                      n.dtype.np, native))
    kinds = tuple([(n.dtype.np, _TINY.get(n.dtype.np)) for n in scalars])
    return Program(tuple(steps), out_slots, first + len(order), tuple(extra), kinds)


def exact(order: list[Node], device: Any) -> bool:
    """Whether every op of graph ``order`` on ``device`` has a host rule, whatever the sizes
    (``eligible`` but for ``MAX_BYTES`` and the setting): single IEEE operations in the order
    the lowering writes out, data movement and calls into native code, whose compiled bits do
    not depend on how XLA optimizes the graph (``tiers.py``)."""
    return _rules(order, device, None) is not None


def _rules(order: list[Node], device: Any, max_bytes: int | None) -> list | None:
    if not host_side(device):
        return None
    found = kernels_in_use()
    rules = []
    for n in order:
        rule = exact_rule(n, found)
        if rule is None or (max_bytes is not None and nbytes(n) > max_bytes):
            return None
        rules.append(rule)
    return rules


def host_side(device: Any) -> bool:
    """Whether graphs on ``device`` may have values computed on the host: a local CPU device
    (a Mesh's pieces live on several devices), ``fast_math`` off."""
    return not _flags._values["fast_math"] and type(device) is Device and \
        device.platform == "cpu" and device._local


def nbytes(n: Node) -> int:
    return math.prod(n.shape) * n.dtype.itemsize


def exact_rule(n: Node, found: dict) -> tuple[Any, Any, bool] | None:
    """``rule_of`` node ``n`` and whether it calls native code (``_rule_and_native``), or
    None where no rule can give its compiled bits whatever the values (``refused_rule``)."""
    rule = _rule_and_native(n, found)
    return None if refused_rule(n, rule) else rule


def refused_rule(n: Node, rule: tuple) -> bool:
    """Whether node ``n``'s rule ``rule`` cannot give its compiled bits whatever the values:
    no rule, a dtype the rules do not cover, or XLA's own float code."""
    # (a kernel's host rule gives the kernel's bits: complex values included)
    complex_ok = n.op.name in COMPLEX_OPS or rule[1] is not None
    if rule[0] is None or not _covered(n.dtype, complex_ok):
        return True
    if n.op.name == "reduce" and n.dtype.kind == "f" and n.attrs.kind == "sum" and \
            sum_plan(n.inputs[0].shape, n.attrs.axes)[1] > SEQUENTIAL_ROWS and \
            not _column_kernel():
        return True  # many rows added by XLA's reduction, in its own order
    if n.op.name == "cumreduce" and n.dtype.kind == "f" and not registry.kind_in_use("scan"):
        return True  # XLA's scan, in its own order
    if n.dtype.kind in "fc" and (n.op.name in ("floor_divide", "remainder") or (
            n.op.name == "reduce" and n.attrs.kind == "prod")):
        return True  # XLA's own float code (its rules raise NotExact whatever the values)
    return any(not _covered(x.dtype, complex_ok) for x in n.inputs)


def _covered(d: Any, complex_ok: bool) -> bool:
    """Whether the host rules cover values of dtype ``d`` (complex ones: for some ops)."""
    return d.name in DTYPES or (complex_ok and d.name in COMPLEX_DTYPES)


def kernels_in_use() -> dict:
    """The kernels in use by op name (``rewrite.rules``): the graph is lowered with them."""
    return rewrite.rules() if registry.KERNELS else {}


def rule_of(n: Node, found: dict) -> tuple[Any, Any]:
    """(host rule, (inputs, attrs) or None) of node ``n`` as it will be lowered: the rule of
    the kernel that replaces it, when that kernel has one (``Kernel.host``, called with the
    rewrite's inputs and attrs), else that of a kernel computing such nodes faster on the
    host (``Kernel.host_also``: the pairwise-sum kernels' loops for float sums), else the op's
    own (None: no rule)."""
    return _rule_and_native(n, found)[:2]


def _rule_and_native(n: Node, found: dict) -> tuple[Any, Any, bool]:
    """``rule_of`` node ``n`` and whether its rule calls the native code its compiled graph
    calls too (``NATIVE_OPS``, a kernel that replaces the node): such a step takes about
    the same time either way, and its time is not counted against the host's budget."""
    hit = rewrite.match(n, found)
    if hit is not None and hit[0].host is not None:
        return hit[0].host, hit[1], True
    for k in found.get(n.op.name, ()):
        if k.host_also is not None and k.host_also(n):
            return k.host, (n.inputs, n.attrs), False
    return n.op.host, None, n.op.name in NATIVE_OPS


def _column_kernel() -> bool:
    """Whether float column sums of many rows go to the column-sum kernel (NumPy's order)."""
    return registry.kind_in_use("pairwise")


# buffers known to hold no subnormal number (buffers are immutable): the leaves scanned once,
# whichever graphs read them later, and the host's own results (every value a host run
# computes is scanned, every other one moved from scanned values). By id, with a weak
# reference that removes the entry when the buffer goes.
_CLEAN: dict[int, Any] = {}


def mark_clean(buf: Any) -> None:
    """Note that buffer ``buf`` holds no subnormal number (``evaluate`` skips its scan)."""
    k = id(buf)

    def gone(_ref: Any, k: int = k) -> None:
        _CLEAN.pop(k, None)

    try:
        _CLEAN[k] = weakref.ref(buf, gone)
    except TypeError:  # (a buffer kind without weak references: scanned each time)
        pass


def device_buffer_of(v: Any) -> Any:
    """The device buffer of host value ``v`` (``backend.HostValue``) for a node to hold instead
    of it, noted as clean where ``v`` was (no second subnormal scan)."""
    buf = v.device_buffer()
    r = _CLEAN.get(id(v))
    if r is not None and r() is v:
        mark_clean(buf)
    return buf


def _leaf_value(buf: Any) -> np.ndarray:
    """A buffer leaf's host value; NotExact if it holds a subnormal number."""
    v = _backend.to_numpy(buf)
    r = _CLEAN.get(id(buf))
    if r is None or r() is not buf:
        if has_subnormal(v):
            raise NotExact("a subnormal input")
        mark_clean(buf)
    return v


def evaluate(g: Planned, program: Program, checks: bool = True, owned: bool = False,
             native: list[float] | None = None) -> list[np.ndarray]:
    """The values of the outputs of planned graph ``g``, computed by the ``program``
    ``eligible`` made for it; NotExact where a rule or a subnormal value cannot promise the
    compiled bits.
    ``checks``: run the run-time checks of the outputs that have one (``OpDef.check``:
    IndexError for out-of-bounds indices), as the executor does after a compiled run.
    ``owned``: each value a C-ordered array owning its memory (``owned_copy``), for a device
    buffer to alias. ``native``: a one-item list the seconds of the steps that call native
    code (``NATIVE_OPS``, the kernels' rules) are added to.

    NumPy allocates with the graph core's 64-byte aligned handler meanwhile (``graphcore.c``,
    ``numpy_allocator``): XLA aliases host memory only at that alignment, so the results
    become device buffers without a copy and the NumPy-loop kernel's operands need none."""
    alloc = _ALLOCATOR
    prev = alloc(None) if alloc is not None else None
    try:
        values = _evaluate(g.order, program, g.bufs, g.scalars, g.outs, checks, native)
        return [owned_copy(v) for v in values] if owned else values
    finally:
        if alloc is not None and prev is not None:
            alloc(prev)


_ALLOCATOR = (getattr(_graph._graphcore, "numpy_allocator", None)  # type: ignore[attr-defined]
              if _graph.NATIVE else None)
_FAST_SCAN = (getattr(_graph._graphcore, "has_subnormal", None)  # type: ignore[attr-defined]
              if _graph.NATIVE else None)


def _evaluate(order: list[Node], program: Program, bufs: list[Node], scalars: list[Node],
              outs: list[Node], checks: bool, native: list[float] | None) -> list[np.ndarray]:
    # every float value is looked at once for subnormals: the leaves here, each computed result
    # below (an op that moves values or only keeps its operands' makes none: ``_program``)
    env: list[Any] = [None] * program.size
    k = 0
    for n in bufs:
        env[k] = _leaf_value(n.buffer)
        k += 1
    for n, (dtype, tiny) in zip(scalars, program.scalars):
        v = env[k] = np.asarray(n.value, dtype=dtype)
        if tiny is None:
            if dtype.kind in "fc" and has_subnormal(v):
                raise NotExact("a subnormal input")
        elif 0.0 < abs(float(v)) < tiny:
            raise NotExact("a subnormal input")
        k += 1
    for x in program.extra:
        env[k] = _leaf(x)
        k += 1
    plain, bound, scan, parts, multi = _PLAIN, _BOUND, _SCAN, _SCAN_PARTS, _MULTI
    fast = _FAST_SCAN
    clock = time.perf_counter
    in_native = 0.0
    with np.errstate(all="ignore"):
        for i, at, rule, attrs, ins, drops, kind, shape, dtype, timed in program.steps:
            n = order[i]
            vals = [env[j] for j in ins]
            try:
                if timed:
                    t0 = clock()
                r = rule(n, vals) if attrs is plain else (
                    rule(vals) if attrs is bound else rule(n, vals, attrs))
                if timed:
                    in_native += clock() - t0
            except NotExact:
                raise
            except Exception as err:  # noqa: BLE001  (a rule's failure is never the user's)
                raise NotExact(f"{n.op.name}'s host rule failed: {err!r}") from None
            for j in drops:
                env[j] = None
            if kind == multi:  # a multi-result op: its ``get`` nodes take the parts
                env[at] = r
                continue
            if type(r) is not np.ndarray:
                r = np.asarray(r)
            if r.shape != shape or r.dtype != dtype:
                raise NotExact(f"{n.op.name}'s host rule gave {r.dtype}{r.shape}, not "
                               f"{n.dtype.name}{n.shape}")
            if kind == scan:  # (the graph core's scan reads C-ordered float32/64 directly)
                if fast is not None and r.flags.c_contiguous:
                    if fast(r):
                        raise NotExact(f"a subnormal result of {n.op.name}")
                elif has_subnormal(r):
                    raise NotExact(f"a subnormal result of {n.op.name}")
            elif kind == parts and has_subnormal(r):
                raise NotExact(f"a subnormal result of {n.op.name}")
            env[at] = r
    if native is not None:
        native[0] += in_native
    values = [env[s] for s in program.outs]
    if checks:
        for n, v in zip(outs, values):
            if n.op.check is not None:
                n.op.check(n, v)
    return values


def expected(g: Planned, program: Program) -> list[np.ndarray] | None:
    """The check mode's host values (``evaluate``), None where they are not exact."""
    try:
        return evaluate(g, program, checks=False)
    except (NotExact, MemoryError):
        return None


def compare(g: Planned, host: list[np.ndarray], compiled: list[np.ndarray]) -> None:
    """The check mode: AssertionError naming the op and its first differing element where the
    host's values of ``g``'s outputs and the compiled graph's differ in any bit (NaN payloads
    aside)."""
    _metrics.count("host_checks")
    order = g.order
    for n, h, c in zip(g.outs, host, compiled):
        if h.dtype.kind == "c":  # the parts, as floats
            h = np.ascontiguousarray(h).view(h.real.dtype)
            c = np.ascontiguousarray(c).view(c.real.dtype)
        if h.dtype.kind == "f":
            u = np.dtype(f"u{h.itemsize}")
            same = (h.view(u) == c.view(u)) | (
                np.isnan(h) & np.isnan(c))
        else:
            same = h == c
        if not np.all(same):
            i = tuple(int(k) for k in np.argwhere(~np.asarray(same))[0])
            ops = ", ".join(sorted({m.op.name for m in order}))
            raise AssertionError(
                f"host_first check: the host's {n.op.name} result differs from the compiled "
                f"graph's at {i}: host {h[i]!r}, compiled {c[i]!r} (graph of {ops})")


def _leaf(x: Node) -> np.ndarray:
    """A leaf's value (the graph planner lists them in bufs/scalars; this covers the rest)."""
    return _scalar_value(x) if x.op is SCALAR else _leaf_value(x.buffer)


# the smallest normal magnitude of the float dtypes the rules cover (a scalar leaf below it
# and not zero is subnormal: a compare instead of an array scan)
_TINY = {np.dtype(t): float(np.finfo(t).tiny) for t in (np.float32, np.float64)}


def _scalar_value(x: Node) -> np.ndarray:
    """A scalar leaf's value; NotExact if it is subnormal."""
    v = np.asarray(x.value, dtype=x.dtype.np)
    tiny = _TINY.get(v.dtype)
    if tiny is None:
        if has_subnormal(v):
            raise NotExact("a subnormal input")
    elif 0.0 < abs(float(v)) < tiny:
        raise NotExact("a subnormal input")
    return v


def owned_copy(v: np.ndarray) -> np.ndarray:
    """``v`` as a C-ordered array owning its memory (a host result may view an input's; a
    Fortran-ordered one, LAPACK's, goes through the graph core's tiled transpose)."""
    if v.flags.owndata and v.flags.c_contiguous and v.base is None:
        return v
    if not v.flags.c_contiguous:
        v = c_ordered(v)
        if v.flags.owndata and v.base is None:
            return v
    return np.array(v, order="C", copy=True)
