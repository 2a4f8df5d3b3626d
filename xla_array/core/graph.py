"""The lazy graph: immutable op nodes, leaves (device buffers, scalar parameters), traversal, keys.

A ``Node`` is recorded once and never changes meaning. When the executor computes it, the node
is *truncated*: it keeps its shape/dtype/device, gets ``buffer`` set and drops its inputs, so it
becomes a buffer leaf for every graph recorded later and nothing upstream stays alive for it.

Everything here is iterative (no recursion): a chain of 100,000 ops can be ordered and keyed.
The structural key holds ops, attributes, shapes, dtypes and how nodes connect, never values.
"""

from __future__ import annotations

import itertools
import os
import sys
from typing import Any

from . import dtypes as _dtypes
from . import flags as _flags
from .devices import resolve
from .dtypes import DType

__all__ = ["Node", "buffer_leaf", "scalar_leaf", "record", "plan_graph", "user_frame",
           "refresh_depth", "advance_epoch"]

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # xla_array/


class OpDef:
    """One operation: name, shape/dtype rule (``infer``) and StableHLO lowering (``lower``).

    ``infer(inputs, attrs) -> (shape, dtype)`` raises TypeError/ValueError for bad input, so
    errors surface at the recording call. ``lower(emitter, node, operand_names) -> name``
    writes StableHLO text. Defined in ``ops/structural.py``; this class lives here so leaves
    need no import.
    """

    __slots__ = ("name", "infer", "lower", "attrs", "nout", "results", "weight", "keep",
                 "fuses", "check", "host")

    def __init__(self, name: str, infer: Any, lower: Any, nout: int = 1, weight: int = 1,
                 fuses: bool = False, attrs: Any = None, results: Any = None) -> None:
        self.name = name
        self.infer = infer
        self.lower = lower
        # the record type of the op's attributes (a NamedTuple class: ``n.attrs.axes``), None
        # for an op without attributes (its nodes hold ``()``)
        self.attrs = attrs
        self.nout = nout
        # a multi-result op (``nout > 1``): ``results(inputs, attrs) -> ((shape, dtype), ...)``,
        # what its ``get`` nodes read; ``infer`` returns the first of them
        self.results = results
        # results always written back when computed, even with no Array on them (the ``get``
        # results of decompositions: other pending graphs may still use them)
        self.keep: bool = False
        # how much this op adds to a pending graph's depth (auto-flush budget): heavy ops such
        # as matmuls and decompositions fuse with nothing and cost much compile time
        self.weight = weight
        # XLA fuses it into one loop with its neighbours (elementwise and layout ops): a graph
        # of such ops only may pass its scalars packed (``scalars.packs_scalars``)
        self.fuses = fuses
        # a run-time check (with ``keep``): ``check(node, value)`` is called with the host value
        # of each such node an executable computed, before any result is written back, and
        # raises for a bad value (out-of-bounds indices: ``indexing.index_check``)
        self.check: Any = None
        # the host rule, where NumPy computes the op's value bit for bit as its lowering does:
        # ``host(node, input_values) -> ndarray`` (``ops/host.py``; None: the op compiles)
        self.host: Any = None

    def __repr__(self) -> str:
        return f"<op {self.name}>"


class Placeholder:
    """Stands in for a buffer while ``xla_array.jit`` traces a function (argument ``index``);
    also marks a buffer given away by donation (``index`` -1)."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __repr__(self) -> str:
        return f"<placeholder {self.index}>"


class TracedScalar:
    """A Python scalar argument of a function traced by ``xla_array.jit``: a weak-typed runtime
    parameter. Using it in Python arithmetic or converting it (``float(s)``, ``if s:``) raises,
    since that would bake one value into the compiled code."""

    __slots__ = ("index", "sample")

    def __init__(self, index: int, sample: Any) -> None:
        self.index = index
        self.sample = sample  # 0, 0.0 or 0j: the Python type decides the weak dtype

    def _refuse(self, *args: Any) -> Any:
        raise TypeError("a Python scalar argument of a jitted function is traced: use it only "
                        "in array operations, or mark it static with static_argnums")

    def _binary(self, other: Any) -> Any:
        if isinstance(other, (int, float, complex, TracedScalar)):
            self._refuse()
        return NotImplemented  # arrays take over through their reflected operators

    __bool__ = __float__ = __int__ = __index__ = __complex__ = __neg__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _binary
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = _binary
    __lt__ = __le__ = __gt__ = __ge__ = _binary

    def __repr__(self) -> str:
        return f"<traced {type(self.sample).__name__} argument {self.index}>"


BUFFER = OpDef("buffer", None, None)
SCALAR = OpDef("scalar", None, None)


_SEQ = itertools.count(1)


class Node:
    __slots__ = ("op", "inputs", "attrs", "shape", "dtype", "device", "buffer", "value",
                 "results", "depth", "users", "where", "committed", "site", "seq", "epoch",
                 "__weakref__")

    def __init__(self, op: OpDef, inputs: tuple, attrs: Any, shape: tuple, dtype: DType,
                 device: Any, depth: int, where: Any, committed: bool = False) -> None:
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        self.shape = shape
        self.dtype = dtype
        self.device = device
        self.buffer: Any = None
        self.value: Any = None  # a scalar leaf's value (its runtime parameter); None otherwise
        # a multi-result op's results: weak references to its ``get`` nodes (record_multi)
        self.results: Any = None
        self.depth = depth
        self.users = 0  # number of Array handles on this node
        self.where = where  # (filename, lineno) of the user frame that recorded it
        # placed on `device` on purpose (device=, to_device, a mesh) or computed from such an
        # array; an uncommitted operand follows the committed ones of an op (JAX's rule)
        self.committed = committed
        self.site: Any = None  # (code object, instruction offset) of the recording call
        self.seq = next(_SEQ)  # creation order (see _array.wrap)
        self.epoch = 0  # the write-back epoch at which ``depth`` was exact (refresh_depth)

    @property
    def pending(self) -> bool:
        return self.buffer is None and self.op is not SCALAR

    def set_buffer(self, buf: Any) -> None:
        """Truncate: this node is now a buffer leaf."""
        self.buffer = buf
        self.inputs = ()
        self.op = BUFFER
        self.depth = 0
        self.value = None

    def __repr__(self) -> str:
        return f"<node {self.op.name} {self.dtype.name}{list(self.shape)}>"


def buffer_leaf(buf: Any, shape: tuple, dtype: DType, device: Any,
                committed: bool = False) -> Node:
    n = Node(BUFFER, (), (), shape, dtype, device, 0, None, committed)
    n.buffer = buf
    return n


def scalar_leaf(value: Any, dtype: DType, device: Any) -> Node:
    """A runtime scalar parameter: its value is an argument of the executable, never a constant."""
    n = Node(SCALAR, (), (), (), dtype, device, 0, None)
    n.value = value
    return n


_internal: dict[str, bool] = {}


def user_frame() -> tuple[str, int]:
    """(filename, line) of the innermost frame outside the xla_array package."""
    f: Any = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        inside = _internal.get(fn)
        if inside is None:
            inside = _internal[fn] = fn.startswith(_PKG_DIR)
        if not inside:
            return (fn, f.f_lineno)
        f = f.f_back
    return ("<unknown>", 0)


def record(op: OpDef, inputs: tuple, attrs: Any = (), device: Any = None) -> Node:
    """Validate (op.infer) and create a node. Raises at the caller's line on bad input."""
    shape, dtype = op.infer(inputs, attrs)
    depth = 0
    committed = False
    if device is None:
        device = inputs[0].device
        for x in inputs:
            if x.device is not device and x.op is not SCALAR and x.device != device:
                inputs, device, depth, committed = _mixed_devices(op, inputs)
                break
            if x.depth > depth:
                depth = x.depth
            if x.committed:
                committed = True
    else:
        for x in inputs:
            if x.depth > depth:
                depth = x.depth
            if x.committed:
                committed = True
    f: Any = sys._getframe(1)  # the user frame (inlined user_frame(): this is the hot path)
    while f is not None:
        fn = f.f_code.co_filename
        inside = _internal.get(fn)
        if inside is None:
            inside = _internal[fn] = fn.startswith(_PKG_DIR)
        if not inside:
            break
        f = f.f_back
    n = Node(op, tuple(inputs), attrs, tuple(shape), dtype, device, depth + op.weight,
             ("<unknown>", 0) if f is None else (fn, f.f_lineno), committed)
    if f is not None and not NATIVE:  # (with the C core, this reference builds C Nodes: they
        n.site = (f.f_code, f.f_lasti)  # keep the site inside)
    e = _EPOCH[0]  # its depth is exact if every pending input's is
    for x in n.inputs:
        if x.buffer is None and x.op is not SCALAR and x.epoch != e:
            break
    else:
        n.epoch = e
    return n


# advanced by every write-back (``advance_epoch``): a pending node's depth, computed from its
# inputs' when recorded, is exact only while none of the nodes below it was computed since
_EPOCH = [1]


def advance_epoch() -> None:
    """Nodes were written back: the depths of pending nodes recorded on them may be stale."""
    _EPOCH[0] += 1


def refresh_depth(node: Node) -> int:
    """The depth of ``node`` recomputed from its pending graph where nodes below it were
    computed since it was recorded (a loop's state, recorded step after step on the previous
    step's pending update while each step's check wrote back what it read: its recorded depth
    grew every step though its pending graph stayed one step long, and it was auto-flushed).
    One iterative pass, stopping at nodes whose depth is exact, which it marks exact."""
    e = _EPOCH[0]
    if node.buffer is not None or node.op is SCALAR or node.epoch == e:
        return node.depth
    stack = [node]
    while stack:
        n = stack[-1]
        if n.epoch == e or n.buffer is not None:
            stack.pop()
            continue
        depth = 0
        waiting = False
        for x in n.inputs:
            if x.buffer is not None or x.op is SCALAR:
                continue
            if x.epoch != e:
                stack.append(x)
                waiting = True
            elif x.depth > depth:
                depth = x.depth
        if not waiting:
            n.depth = depth + n.op.weight
            n.epoch = e
            stack.pop()
    return node.depth


# Moving an operand to another device may compute it first (the executor, built on this
# module): core/transfers.py installs its ``transfer(node, place) -> Node`` here when imported.
transfer: Any = None


def _mixed_devices(op: OpDef, inputs: tuple) -> tuple:
    """record() of operands on different placements, JAX's rule: the committed operands (and
    traced arguments, which cannot move) must share one placement (else ValueError); the
    others are moved there. With none committed: the operands' common placement, or the
    default device. Returns (inputs, placement, depth, committed)."""
    place = None
    committed = False
    for x in inputs:
        if x.op is SCALAR:
            continue
        if x.committed or type(x.buffer) is Placeholder:
            if place is None:
                place = x.device
            elif x.device != place:
                raise ValueError(f"{op.name}(): arrays are on different devices ({place} and "
                                 f"{x.device}); move one with to_device()")
            committed = committed or x.committed
    if place is None:
        places = [x.device for x in inputs if x.op is not SCALAR]
        place = places[0]
        if any(p != place for p in places):
            place = resolve(None)
    inputs = tuple([x if x.device is place or x.device == place else transfer(x, place)
                    for x in inputs])
    return inputs, place, max([x.depth for x in inputs]), committed


def plan_graph(roots: list[Node],
               writeback: bool = True) -> tuple[list, list, list, list, tuple]:
    """One pass over the pending graph of ``roots``: (order, buffer leaves, scalar leaves,
    outputs, structural key). The only builder of structural keys: materializations
    (``executor.plan``), ``xla_array.jit`` and the debug inspectors all come here.

    Outputs are the roots, then, with ``writeback`` (a materialization), every pending node an
    Array still holds or whose op is ``keep`` (so the run writes them back too) and the live
    results of multi-result ops the roots do not reach; without it (a traced function: only
    what it returns), the nodes of run-time checks (``op.check``). The key lists every item in
    first-visit order with its inputs as positions in that order, then the outputs'
    positions: structure only, never values.

    This is the hot path of every materialization: nodes are dict keys by identity (no
    ``id()`` calls) and leaves are numbered when their user is first scanned, never pushed."""
    index: dict[Node, int] = {}
    bufs: list[Node] = []
    scalars: list[Node] = []
    parts: list[Any] = []
    add = parts.append
    if len(roots) == 1:  # the commonest graph: one op on leaves (x + 1.0, sum(x), x[0])
        r = roots[0]
        for x in r.inputs:
            if x in index:
                continue
            if x.buffer is not None:
                index[x] = len(parts)
                add(("B", x.shape, x.dtype.name))
                bufs.append(x)
            elif x.op is SCALAR:
                index[x] = len(parts)
                add(("S", x.dtype.name))
                scalars.append(x)
            else:
                break
        else:
            if r.buffer is None and r.op is not SCALAR:
                pos = len(parts)
                ins = r.inputs
                k = len(ins)
                if k == 2:
                    t: tuple = (index[ins[0]], index[ins[1]])
                elif k == 1:
                    t = (index[ins[0]],)
                else:
                    t = tuple(map(index.__getitem__, ins))
                add((r.op.name, r.attrs, r.shape, r.dtype.name, t))
                add((pos,))
                return [r], bufs, scalars, [r], tuple(parts)
        index.clear()
        del bufs[:], scalars[:], parts[:]
    order: list[Node] = []
    oadd = order.append
    for root in roots:
        if root in index:
            continue
        if root.buffer is not None or root.op is SCALAR:  # a leaf asked for as a root
            index[root] = len(parts)
            if root.op is SCALAR:
                add(("S", root.dtype.name))
                scalars.append(root)
            else:
                add(("B", root.shape, root.dtype.name))
                bufs.append(root)
            continue
        stack = [root]
        push, pop = stack.append, stack.pop
        while stack:
            n = stack[-1]
            if n in index:
                pop()
                continue
            ins = n.inputs
            waiting = False
            for x in ins:
                if x in index:
                    continue
                if x.buffer is not None:
                    index[x] = len(parts)
                    add(("B", x.shape, x.dtype.name))
                    bufs.append(x)
                elif x.op is SCALAR:
                    index[x] = len(parts)
                    add(("S", x.dtype.name))
                    scalars.append(x)
                else:
                    push(x)
                    waiting = True
            if not waiting:
                pop()
                index[n] = len(parts)
                k = len(ins)
                if k == 2:
                    t = (index[ins[0]], index[ins[1]])
                elif k == 1:
                    t = (index[ins[0]],)
                else:
                    t = tuple(map(index.__getitem__, ins))
                add((n.op.name, n.attrs, n.shape, n.dtype.name, t))
                oadd(n)
    outs = list(roots)
    rs = set(roots) if len(roots) > 1 else ()
    r0 = roots[0]
    siblings = None
    if not writeback:
        outs += [n for n in order if n.op.check is not None and n is not r0 and n not in rs]
        add(tuple([index[n] for n in outs]))
        return order, bufs, scalars, outs, tuple(parts)
    # how many inputs tuples of the graph hold each node (by position): a node held beyond
    # them, ``index`` and ``order`` is needed after the run (by an Array, or by a pending node
    # outside the graph, such as a loop's next step), so it is written back, never recomputed
    uses = [0] * len(parts)
    for n in order:
        for x in n.inputs:
            uses[index[x]] += 1
    # (no local name may hold a node: each adds to the counts read)
    x = root = stack = None  # type: ignore[assignment]
    held = _RC_HELD
    getrc = sys.getrefcount
    for n in order:
        op = n.op
        if op.nout == 1:
            if (n.users > 0 or op.keep or getrc(n) - held > uses[index[n]]) \
                    and n is not r0 and n not in rs:
                outs.append(n)
        elif n.results is not None:  # a multi-result op: its results that are alive but
            for ref in n.results:    # not reached from the roots are written back too
                g = ref()
                if g is not None and g.buffer is None and g not in index:
                    index[g] = len(parts)
                    add((g.op.name, g.attrs, g.shape, g.dtype.name, (index[n],)))
                    if siblings is None:
                        siblings = []
                    siblings.append(g)
            g = None  # (a name holding a result would count as a holder of it below)
    if siblings:
        order += siblings
        outs += siblings
    add(tuple([index[n] for n in outs]))
    return order, bufs, scalars, outs, tuple(parts)


def _calibrate() -> int:
    """What ``sys.getrefcount(n)`` reports in ``for n in order`` for an object that only the
    list ``order`` holds (the list, the loop's name, and the call's own reference up to
    CPython 3.13)."""
    order = [object()]
    for n in order:
        return sys.getrefcount(n)
    return 0


_RC_HELD = _calibrate() + 1  # (+1: plan_graph's index holds its nodes as keys)


# The C core (``core/graphcore.c``, built at install when there is a C compiler) replaces
# Node, record, user_frame, the two leaf makers and plan_graph with the same objects and
# functions in C: recording an op and planning a graph are the library's hottest paths. The
# Python definitions above stay the reference and the fallback (no compiler at install, or
# XLA_ARRAY_NATIVE=0); tests/test_graphcore.py checks that both give the same results.
PURE = {"Node": Node, "record": record, "user_frame": user_frame, "buffer_leaf": buffer_leaf,
        "scalar_leaf": scalar_leaf, "plan_graph": plan_graph, "refresh_depth": refresh_depth,
        "advance_epoch": advance_epoch}
NATIVE = False
if _flags.get("native"):
    try:
        from . import _graphcore
    except ImportError as _e:  # not built (no C compiler at install) or built for another ABI
        import logging
        logging.getLogger("xla_array").debug("graph C core not loaded (%s): pure Python", _e)
    else:
        _graphcore.configure(BUFFER, SCALAR, _internal, _PKG_DIR, _mixed_devices)
        Node = _graphcore.Node  # type: ignore[misc]
        record = _graphcore.record  # type: ignore[assignment]
        user_frame = _graphcore.user_frame  # type: ignore[assignment]
        buffer_leaf = _graphcore.buffer_leaf  # type: ignore[assignment]
        scalar_leaf = _graphcore.scalar_leaf  # type: ignore[assignment]
        plan_graph = _graphcore.plan_graph  # type: ignore[assignment]
        refresh_depth = _graphcore.refresh_depth  # type: ignore[assignment]
        advance_epoch = _graphcore.advance_epoch  # type: ignore[assignment]
        NATIVE = True


def default_index_dtype() -> DType:
    return _dtypes.default_index
