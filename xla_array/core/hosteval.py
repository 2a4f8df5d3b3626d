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
iterations; a small graph run now and then never does.

Bits: the results are the compiled graph's, NaN payloads aside. Rules exist only for ops whose
lowering rounds as NumPy does; a rule raises ``NotExact`` for values where it cannot promise
that (an out-of-range float-to-integer cast, a zero max/min, whose sign follows XLA's order), and
subnormal numbers, which compiled code flushes to zero, are looked for in every computing op's
float operands and results (a buffer once: ``mark_clean``): any of these and the graph compiles
instead. The test suite runs
with ``XLA_ARRAY_HOST_FIRST=check``: every graph compiles, and the bits of each run whose ops
have rules are compared with the host's (``expected``, ``compare``).

``XLA_ARRAY_HOST_FIRST=0`` (``xp.flags.set(host_first=False)``) turns it off: every new graph
compiles at once. ``xp.debug.metrics()`` counts ``host_runs`` and ``host_seconds``.
"""

from __future__ import annotations

import logging
import math
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
from .graph import BUFFER, SCALAR, Node
from .ops.host import COMPLEX_DTYPES, COMPLEX_OPS, DTYPES, MOVES, NotExact
from .ops.host_common import has_subnormal
from .ops.reductions import SEQUENTIAL_ROWS, sum_plan

__all__ = ["host_turn", "refused", "spent", "eligible", "exact", "held_first", "evaluate",
           "expected", "compare", "mark_clean", "NotExact"]

log = logging.getLogger("xla_array")

# structural keys the host has computed -> seconds spent on them (bounded: the oldest half goes
# when full). A key whose host runs have taken its budget compiles (``host_turn``).
_SPENT: dict[Any, float] = {}
_SPENT_MAX = 4096  # (a key holds the whole structure: a big graph's is large)
# the automatic budget: at least FLOOR seconds (about what the cheapest compiles cost), then
# up to the compile a key is expected to take (``_LIMITS``, set once its runs reach FLOOR)
FLOOR = 0.05
_LIMITS: dict[Any, float] = {}


def host_turn(key: Any, cost: Callable[[], float]) -> bool:
    """Whether the graph of ``key`` (not compiled in this process) should run on the host:
    its host runs so far have taken less than its budget. The ``host_first_budget`` setting
    is that budget, or with ``auto``: ``FLOOR`` seconds, and past them ``cost()``, the
    seconds its executable is expected to take to compile (0 where the disk cache holds it),
    asked once. That is the rent-or-buy rule (ski rental): compiling once the host runs have
    cost what the compile would, a structure costs at most twice what the better choice made
    in hindsight would have, whether it runs a few more times or forever (a fixed 50 ms made
    a 50-op graph of LinearDiscriminantAnalysis compile for 290 ms after 5 fits whose host
    runs took 12 ms each). Called under the executor's lock."""
    spent = _SPENT.get(key)
    if spent is None:
        if len(_SPENT) >= _SPENT_MAX:
            for k in list(_SPENT)[:_SPENT_MAX // 2]:
                del _SPENT[k]
                _LIMITS.pop(k, None)
        _SPENT[key] = 0.0
        return True
    budget = _flags._values["host_first_budget"]
    if budget != "auto":
        return spent < budget if budget > 0 else False
    if spent < FLOOR:
        return True
    limit = _LIMITS.get(key)
    if limit is None:
        limit = _LIMITS[key] = cost()
    return spent < limit


def refused(key: Any) -> bool:
    """Whether the host could not run the graph of ``key`` (``NotExact``, no memory)."""
    return _SPENT.get(key) == math.inf


def spent(key: Any, seconds: float) -> None:
    """Count a host run of ``key`` (``inf``: its graph cannot run on the host)."""
    _SPENT[key] = _SPENT.get(key, 0.0) + seconds


# the largest value (bytes) a host evaluation computes: a compiled graph fuses its steps and
# writes out few of its values, NumPy writes every one (a bigger graph compiles, and its compile
# time is small beside its work: standardizing 100,000 x 64 float64 took 310-460 ms on the host
# against 120-130 ms compiled, first run included; 20,000 x 64: 24-57 ms against 94-100)
MAX_BYTES = 1 << 24


def eligible(order: list[Node], device: Any, key: Any = None, bufs: Sequence[Node] = (),
             scalars: Sequence[Node] = ()) -> list | None:
    """The host rule of each node of the graph ``order`` (``evaluate`` takes them), or None
    where the graph may not run on the host: it may when the setting is on (and ``fast_math``
    off), ``device`` is a local CPU device, every op has a host rule, every value a dtype the
    rules cover and at most ``MAX_BYTES``.

    With the graph's structural ``key`` (and its leaves ``bufs``, ``scalars``), the answer is
    kept per structure for as long as no setting and no kernel in use changes
    (``flags.generation``, ``rewrite.rules``): a structure
    run again on the host takes its rules from there, its kernels' operands found by position
    (finding each node's rule anew took 60-90 us per graph of scikit-learn's fits)."""
    if not _flags._values["host_first"]:
        return None
    if key is None:
        return _rules(order, device, MAX_BYTES)
    gen = _flags.generation()
    found = _kernels()  # (the same object while the kernels in use stay the same)
    hit = _TEMPLATES.get(key)
    if hit is not None and hit[0] == gen and hit[1] is found:
        if hit[2] is not _UNKNOWN:
            return _from_template(hit[2], order, bufs, scalars)
        return _rules(order, device, MAX_BYTES)
    rules = _rules(order, device, MAX_BYTES)
    if len(_TEMPLATES) >= _TEMPLATES_MAX:
        for k in list(_TEMPLATES)[:_TEMPLATES_MAX // 2]:
            del _TEMPLATES[k]
    _TEMPLATES[key] = (gen, found, _template(rules, order, bufs, scalars))
    return rules


# structural key -> (settings generation, kernels in use, template: None where the host may
# not run the graph, else per node (rule, kernel's attrs, its operands' positions) or (rule,
# None, None)); a position is (0, i) in the order, (1, i) in the buffer leaves, (2, i) in the
# scalar leaves
_TEMPLATES: dict[Any, tuple[int, Any, Any]] = {}
_TEMPLATES_MAX = 2048
_UNKNOWN = object()  # (a kernel operand outside the graph's lists: no template)


def _template(rules: list | None, order: list[Node], bufs: Sequence[Node],
              scalars: Sequence[Node]) -> Any:
    if rules is None:
        return None
    where: dict[int, tuple[int, int]] = {}
    for j, nodes in enumerate((order, bufs, scalars)):
        for i, n in enumerate(nodes):
            where[id(n)] = (j, i)
    out: list[tuple] = []
    for rule, kernel in rules:
        if kernel is None:
            out.append((rule, None, None))
            continue
        pos = tuple(where.get(id(x), _UNKNOWN) for x in kernel[0])
        if _UNKNOWN in pos:
            return _UNKNOWN
        out.append((rule, kernel[1], pos))
    return out


def _from_template(template: Any, order: list[Node], bufs: Sequence[Node],
                   scalars: Sequence[Node]) -> list | None:
    if template is None:
        return None
    lists = (order, bufs, scalars)
    return [(rule, None) if pos is None else
            (rule, (tuple([lists[j][i] for j, i in pos]), attrs))
            for rule, attrs, pos in template]


def exact(order: list[Node], device: Any) -> bool:
    """Whether every op of graph ``order`` on ``device`` has a host rule, whatever the sizes
    (``eligible`` but for ``MAX_BYTES`` and the setting): single IEEE operations in the order
    the lowering writes out, data movement and calls into native code, whose compiled bits do
    not depend on how XLA optimizes the graph (``tiers.py``)."""
    return _rules(order, device, None) is not None


def _rules(order: list[Node], device: Any, max_bytes: int | None) -> list | None:
    if not _host_side(device):
        return None
    found = _kernels()
    rules = []
    for n in order:
        rule = _exact_rule(n, found)
        if rule is None or (max_bytes is not None and _nbytes(n) > max_bytes):
            return None
        rules.append(rule)
    return rules


def held_first(order: list[Node], outs: list[Node], device: Any) -> list[Node]:
    """The held values of a graph that compiles which the host can compute from small
    integer or boolean buffers alone (labels, indices, masks): outputs (``outs``) whose every
    step has an exact host rule and whose values and leaves are at most ``MAX_BYTES``, reading
    at least one such buffer. Computed first (on the host), they are buffers when the rest
    compiles, as they are in the later graphs of a library that computes them once and keeps
    them (LogisticRegression's encoded labels and one-hot targets): the rest then has those
    graphs' structure and shares their executable. (Values from float buffers are left in
    the graph: a model's parameters change at every step, and computing their functions
    apart only cut GaussianMixture's EM steps into more graphs: two fits on 100,000 x 64
    compiled 12 graphs instead of 9.)"""
    if not _host_side(device):
        return []
    found = _kernels()
    ok: dict[int, bool] = {}  # id(node) -> reads a buffer; present when the host may compute it
    for n in order:
        if _nbytes(n) > MAX_BYTES or _exact_rule(n, found) is None:
            continue
        leaf = False
        for x in n.inputs:
            op = x.op
            if op is SCALAR:
                continue
            if op is BUFFER:
                if _nbytes(x) > MAX_BYTES or x.dtype.kind not in "biu":
                    break
                leaf = True
                continue
            st = ok.get(id(x))
            if st is None:
                break
            leaf = leaf or st
        else:
            ok[id(n)] = leaf
    return [n for n in outs if ok.get(id(n))]


def _host_side(device: Any) -> bool:
    """Whether graphs on ``device`` may have values computed on the host: a local CPU device
    (a Mesh's pieces live on several devices), ``fast_math`` off."""
    return not _flags._values["fast_math"] and type(device) is Device and \
        device.platform == "cpu" and device._local


def _nbytes(n: Node) -> int:
    return math.prod(n.shape) * n.dtype.itemsize


def _exact_rule(n: Node, found: dict) -> tuple[Any, Any] | None:
    """``_rule`` of node ``n``, or None where no rule can give its compiled bits whatever the
    values (``_refused``)."""
    rule = _rule(n, found)
    return None if _refused(n, rule) else rule


def _refused(n: Node, rule: tuple[Any, Any]) -> bool:
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
    if n.op.name == "cumreduce" and n.dtype.kind == "f" and not _in_use("scan"):
        return True  # XLA's scan, in its own order
    if n.dtype.kind in "fc" and (n.op.name in ("floor_divide", "remainder") or (
            n.op.name == "reduce" and n.attrs.kind == "prod")):
        return True  # XLA's own float code (its rules raise NotExact whatever the values)
    return any(not _covered(x.dtype, complex_ok) for x in n.inputs)


def _covered(d: Any, complex_ok: bool) -> bool:
    """Whether the host rules cover values of dtype ``d`` (complex ones: for some ops)."""
    return d.name in DTYPES or (complex_ok and d.name in COMPLEX_DTYPES)


# A compiled graph over large values leaves its tail to the host: the nodes that compute small
# values from small values only, with exact host rules, and that no other node reads (what a
# library does after a decomposition or a reduction: scaling the singular values, ratios,
# signs, a rank). XLA compiles each of them as a kernel of its own, 7-8 ms apiece on the 2-core
# VM whatever its size (a one-add graph: 23-28 ms, an empty one 10), while NumPy computes one in
# microseconds: PCA's graph at 100,000 x 64 compiled in 200-246 ms, without its tail of 29 such
# nodes in 71 (docs/performance.md, "Measured choices"). Only where some value is above
# TAIL_MIN_BYTES (the host tier's bound: graphs whose runs take milliseconds) and the tail has
# TAIL_MIN_NODES computing nodes or more: a tail runs as a graph of its own, on the host until
# its runs have taken the host budget, then compiled (GaussianMixture's EM steps end in tails
# of 4 ops, a convergence test, run once per iteration: they compiled after 20 iterations,
# 100 ms each, more than they saved).
TAIL_BYTES = 1 << 16
TAIL_MIN_BYTES = MAX_BYTES
TAIL_MIN_NODES = 5


def tail(order: list[Node], device: Any) -> tuple[frozenset, frozenset] | None:
    """The positions in ``order`` of the graph's host tail (above) and the ids of the nodes its
    rules read, or None where it has none: the setting off, ``device`` not a local CPU one, no
    value above ``TAIL_MIN_BYTES``, fewer than ``TAIL_MIN_NODES`` computing nodes in the tail
    (data movement aside)."""
    if not _flags._values["host_first"] or not _host_side(device) or \
            max(map(_nbytes, order), default=0) <= TAIL_MIN_BYTES:
        return None
    found = _kernels()
    inputs = []  # per node, the values its host rule reads (None: no exact rule)
    read: dict[int, list[int]] = {}  # node id -> positions of the nodes reading it
    for i, n in enumerate(order):
        rule = _rule(n, found)  # (a kernel's rewrite reads its own inputs: compiled too)
        xs = n.inputs if rule[1] is None else rule[1][0]
        inputs.append(None if _refused(n, rule) else xs)
        for x in {*n.inputs, *xs}:
            read.setdefault(id(x), []).append(i)
    host: set[int] = set()
    for i in range(len(order) - 1, -1, -1):
        n, xs = order[i], inputs[i]
        if xs is None or n.op.nout > 1 or _nbytes(n) > TAIL_BYTES or \
                any(x.op.nout > 1 or _nbytes(x) > TAIL_BYTES for x in xs):
            continue
        if all(j in host for j in read.get(id(n), ())):
            host.add(i)
    if sum(order[i].op.name not in MOVES for i in host) < TAIL_MIN_NODES:
        return None  # (moves fuse into their readers: they save no kernel)
    return frozenset(host), frozenset(id(x) for i in host
                                      for x in {*order[i].inputs, *(inputs[i] or ())})


def _kernels() -> dict:
    """The kernels in use by op name (``rewrite.rules``): the graph is lowered with them."""
    return rewrite.rules() if registry.KERNELS else {}


def _rule(n: Node, found: dict) -> tuple[Any, Any]:
    """(host rule, (inputs, attrs) or None) of node ``n`` as it will be lowered: the rule of
    the kernel that replaces it, when that kernel has one (``Kernel.host``, called with the
    rewrite's inputs and attrs), else that of a kernel computing such nodes faster on the
    host (``Kernel.host_also``: the pairwise-sum kernels' loops for float sums), else the op's
    own (None: no rule)."""
    hit = rewrite.match(n, found)
    if hit is not None and hit[0].host is not None:
        return hit[0].host, hit[1]
    for k in found.get(n.op.name, ()):
        if k.host_also is not None and k.host_also(n):
            return k.host, (n.inputs, n.attrs)
    return n.op.host, None


def _in_use(kind: str) -> bool:
    """Whether the native kernels of ``kind`` are in use (built, loaded, not turned off)."""
    k = registry.KERNELS.get(kind)
    return k is not None and registry.in_use(k)


def _column_kernel() -> bool:
    """Whether float column sums of many rows go to the column-sum kernel (NumPy's order)."""
    return _in_use("pairwise")


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


def _leaf_value(buf: Any) -> np.ndarray:
    """A buffer leaf's host value; NotExact if it holds a subnormal number."""
    v = _backend.to_numpy(buf)
    r = _CLEAN.get(id(buf))
    if r is None or r() is not buf:
        if has_subnormal(v):
            raise NotExact("a subnormal input")
        mark_clean(buf)
    return v


def evaluate(order: list[Node], rules: list, bufs: list[Node], scalars: list[Node],
             outs: list[Node], checks: bool = True, owned: bool = False) -> list[np.ndarray]:
    """The values of ``outs``, computed with the host rules ``eligible`` found for the nodes of
    ``order``; NotExact where a rule or a
    subnormal value cannot promise the compiled bits. ``checks``: run the run-time checks of
    the outputs that have one (``OpDef.check``: IndexError for out-of-bounds indices), as
    the executor does after a compiled run. ``owned``: each value a C-ordered array owning
    its memory (``owned_copy``), for a device buffer to alias.

    NumPy allocates with the graph core's 64-byte aligned handler meanwhile (``graphcore.c``,
    ``numpy_allocator``): XLA aliases host memory only at that alignment, so the results
    become device buffers without a copy and the NumPy-loop kernel's operands need none."""
    alloc = _ALLOCATOR
    prev = alloc(None) if alloc is not None else None
    try:
        values = _evaluate(order, rules, bufs, scalars, outs, checks)
        return [owned_copy(v) for v in values] if owned else values
    finally:
        if alloc is not None and prev is not None:
            alloc(prev)


_ALLOCATOR = (getattr(_graph._graphcore, "numpy_allocator", None)  # type: ignore[attr-defined]
              if _graph.NATIVE else None)


def _evaluate(order: list[Node], rules: list, bufs: list[Node], scalars: list[Node],
              outs: list[Node], checks: bool) -> list[np.ndarray]:
    # every float value is looked at once for subnormals: the leaves here, each computed result
    # below (an op that only moves values makes none)
    env: dict[Node, Any] = {}
    for n in bufs:
        env[n] = _leaf_value(n.buffer)
    for n in scalars:
        v = env[n] = np.asarray(n.value, dtype=n.dtype.np)
        if has_subnormal(v):
            raise NotExact("a subnormal input")
    # each value is dropped after its last use (outputs kept): a graph over large values then
    # holds a few at a time, as the NumPy code it replaces does, instead of all of them (new
    # memory is what costs: 51 MB first touched took ~200 ms on the 2-core VM, ~10 ms reused)
    last: dict[Node, int] = {}
    for i, (n, (_, kernel)) in enumerate(zip(order, rules)):
        for x in n.inputs if kernel is None else kernel[0]:
            last[x] = i
    for n in outs:
        last[n] = -1
    with np.errstate(all="ignore"):
        for i, (n, (rule, kernel)) in enumerate(zip(order, rules)):
            inputs = n.inputs if kernel is None else kernel[0]
            vals = [env[x] if x in env else _leaf(x) for x in inputs]
            computes = n.op.name not in MOVES
            try:
                r = rule(n, vals) if kernel is None else rule(n, vals, kernel[1])
            except NotExact:
                raise
            except Exception as err:  # noqa: BLE001  (a rule's failure is never the user's)
                raise NotExact(f"{n.op.name}'s host rule failed: {err!r}") from None
            for x in inputs:
                if last.get(x) == i:
                    env.pop(x, None)
            if n.op.nout > 1:  # a multi-result op: its ``get`` nodes take the parts
                env[n] = r
                continue
            r = np.asarray(r)
            if r.shape != n.shape or r.dtype != n.dtype.np:
                raise NotExact(f"{n.op.name}'s host rule gave {r.dtype}{r.shape}, not "
                               f"{n.dtype.name}{n.shape}")
            if computes and has_subnormal(r):
                raise NotExact(f"a subnormal result of {n.op.name}")
            env[n] = r
    if checks:
        for n in outs:
            if n.op.check is not None:
                n.op.check(n, env[n])
    return [env[n] for n in outs]


def expected(order: list[Node], rules: list, bufs: list[Node], scalars: list[Node],
             outs: list[Node]) -> list[np.ndarray] | None:
    """The check mode's host values (``evaluate``), None where they are not exact."""
    try:
        return evaluate(order, rules, bufs, scalars, outs, checks=False)
    except (NotExact, MemoryError):
        return None


def compare(order: list[Node], outs: list[Node], host: list[np.ndarray],
            compiled: list[np.ndarray]) -> None:
    """The check mode: AssertionError naming the op and its first differing element where the
    host's values and the compiled graph's differ in any bit (NaN payloads aside)."""
    _metrics.count("host_checks")
    for n, h, c in zip(outs, host, compiled):
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
    if x.op is not SCALAR:
        return _leaf_value(x.buffer)
    v = np.asarray(x.value, dtype=x.dtype.np)
    if has_subnormal(v):
        raise NotExact("a subnormal input")
    return v


def owned_copy(v: np.ndarray) -> np.ndarray:
    """``v`` as a C-ordered array owning its memory (a host result may view an input's)."""
    if v.flags.owndata and v.flags.c_contiguous and v.base is None:
        return v
    return np.array(v, order="C", copy=True)
