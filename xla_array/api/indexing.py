"""``x[key]`` and ``x[key] = value``.

Basic keys (integers, slices with any step, ``...``, ``None``) never touch data: reading
records a dynamic_slice (plus a strided slice, reverse, reshape), writing a
dynamic_update_slice (strided writes merge the value into the covered span with pad + select),
so an update fuses with the graph around it and costs no host round trip. Start positions are
runtime parameters: ``x[i]`` or ``x[i] = v`` in a loop over ``i`` compiles once. Array keys
(integer arrays, boolean masks) go through ``advanced_indexing``.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..core import dtypes as _dtypes
from ..core.graph import SCALAR, Node, record, scalar_leaf
from ..core.host import small_leaf
from ..core.ops import indexing as _ops_index  # noqa: F401  (registers dynamic_slice / dynamic_update_slice)
from ..core.ops.indexing import DynamicSlice, DynamicUpdateSlice, UpdateSlices
from ..core.ops.structural import (
    OPS,
    Broadcast,
    Convert,
    Pad,
    Reshape,
    Reverse,
    Slice,
    broadcast_shapes,
)
from ..core.transfers import transfer
from .array import Array, as_node, wrap

__all__ = ["getitem", "setitem", "parse_basic"]


class Basic:
    """A parsed basic key: per source dim (start, count, step>0, reversed, is_int) and the
    positions of new axes in the result."""

    __slots__ = ("dims", "newaxes", "out_shape")

    def __init__(self, dims: list, newaxes: list, out_shape: tuple) -> None:
        self.dims = dims
        self.newaxes = newaxes
        self.out_shape = out_shape


def _is_array_key(k: Any) -> bool:
    return isinstance(k, (Array, np.ndarray, list)) or (
        isinstance(k, (bool, np.bool_)))


def _expand(key: Any, ndim: int) -> list:
    if not isinstance(key, tuple):
        key = (key,)
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > ndim:
        raise IndexError(f"too many indices: array is {ndim}-dimensional, but {n_real} were "
                         f"indexed")
    out: list = []
    for k in key:
        if k is Ellipsis:
            out.extend([slice(None)] * (ndim - n_real))
        else:
            out.append(k)
    if not n_ell:
        out.extend([slice(None)] * (ndim - n_real))
    return out


def parse_basic(shape: tuple, key: Any) -> Basic:
    keys = _expand(key, len(shape))
    dims: list = []
    newaxes: list = []
    out_shape: list = []
    d = 0
    for k in keys:
        if k is None:
            newaxes.append(len(out_shape))
            out_shape.append(1)
            continue
        n = shape[d]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            m = len(range(start, stop, step))
            if step < 0 and m:
                start, step, rev = start + (m - 1) * step, -step, True
            else:
                rev = False
                step = abs(step)
            dims.append((start if m else 0, m, step, rev, False))
            out_shape.append(m)
        else:
            try:
                i = operator.index(k)
            except TypeError:
                raise IndexError(f"only integers, slices, '...', None, integer and boolean "
                                 f"arrays are valid indices, not {type(k).__name__}") from None
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
            dims.append((i % n, 1, 1, False, True))
        d += 1
    return Basic(dims, newaxes, tuple(out_shape))


def _check(x: Any) -> None:
    if not isinstance(x, Array):
        raise TypeError(f"cannot index {type(x).__name__}")


def getitem(x: Array, key: Any) -> Array:
    t = type(key)
    if t is int:  # x[i] (iteration, loops): _getitem_simple's nodes, made the shortest way
        node = x._node
        shape = node.shape
        if shape and -shape[0] <= key < shape[0] and type(x) is Array:
            n = shape[0]
            rest = shape[1:]
            if n == 1:
                return wrap(record(_RESHAPE, (node,), Reshape(rest)))
            start = scalar_leaf(key + n if key < 0 else key, _I64, node.device)
            ds = record(_DYNAMIC_SLICE, (node, start), DynamicSlice((1, *rest), (0,)))
            return wrap(Node(_RESHAPE, (ds,), Reshape(rest), rest, ds.dtype, ds.device,
                             ds.depth + _RESHAPE.weight, ds.where, ds.committed))
    if t is int or t is slice or t is tuple:
        out = _getitem_simple(x, key if t is tuple else (key,))
        if out is not None:
            return out
    _check(x)
    ks = key if isinstance(key, tuple) else (key,)
    if any(_is_array_key(k) for k in ks):
        # load order: advanced_indexing is built on this module's basic indexing
        from .advanced_indexing import getitem_advanced
        return getitem_advanced(x, key)
    b = parse_basic(x.shape, key)
    node = x._node
    full = all(s == 0 and m == n and st == 1 and not rev and not isint
               for (s, m, st, rev, isint), n in zip(b.dims, x.shape))
    if not full:
        spans = _spans(b)
        dyn, starts = _starts(b, x.shape, x.device)
        if dyn:
            node = record(OPS["dynamic_slice"], (node, *starts), DynamicSlice(spans, dyn))
        if any(st > 1 for s, m, st, rev, isint in b.dims):
            step = tuple(st for s, m, st, rev, isint in b.dims)
            node = record(OPS["slice"], (node,), Slice((0,) * len(spans), spans, step))
        revs = tuple(i for i, dim in enumerate(b.dims) if dim[3])
        if revs:
            node = record(OPS["reverse"], (node,), Reverse(revs))
    if node.shape != b.out_shape:
        node = record(OPS["reshape"], (node,), Reshape(b.out_shape))
    return wrap(node) if node is not x._node else Array(node)


def _simple_key(shape: tuple, ks: tuple) -> tuple | None:
    """A key of Python ints and slices of step 1 read directly: (the selected extent per
    keyed axis, the result's extents of those axes, the axes not selected whole, their start
    positions), or None for any other key (and for out-of-range integers: the general path
    raises)."""
    nd = len(ks)
    if nd > len(shape):
        return None
    spans: list = []
    out: list = []
    dyn: list = []
    starts: list = []
    for d in range(nd):
        k = ks[d]
        n = shape[d]
        if type(k) is int:
            if not -n <= k < n:
                return None
            spans.append(1)
            if n != 1:
                dyn.append(d)
                starts.append(k + n if k < 0 else k)
        elif type(k) is slice and (k.step is None or type(k.step) is int and k.step == 1):
            start, stop, _ = k.indices(n)
            m = stop - start if stop > start else 0
            spans.append(m)
            out.append(m)
            if m != n:
                dyn.append(d)
                starts.append(start if m else 0)
        else:
            return None
    return spans, out, dyn, starts


def _getitem_simple(x: Array, ks: tuple) -> Array | None:
    """``getitem`` of the commonest keys, Python ints and slices of step 1 (``x[0]``,
    ``x[i, j]``, ``x[1:3]``, ``x[:, 1]``), without building a ``Basic``: the same nodes as the
    general path. None for anything else (``_simple_key``)."""
    node = x._node
    shape = node.shape
    parsed = _simple_key(shape, ks) if type(x) is Array else None
    if parsed is None:
        return None
    spans, out, dyn, starts = parsed
    nd = len(ks)
    rest = shape[nd:]
    if dyn:
        dev = node.device
        node = record(_DYNAMIC_SLICE, (node, *[scalar_leaf(i, _I64, dev) for i in starts]),
                      DynamicSlice((*spans, *rest), tuple(dyn)))
    out_shape = (*out, *rest)
    if node.shape != out_shape:
        if dyn:  # what record() makes of it, known: one input just recorded at this line
            node = Node(_RESHAPE, (node,), Reshape(out_shape), out_shape, node.dtype, node.device,
                        node.depth + _RESHAPE.weight, node.where, node.committed)
        else:
            node = record(_RESHAPE, (node,), Reshape(out_shape))
    return wrap(node) if node is not x._node else Array(node)


_DYNAMIC_SLICE = OPS["dynamic_slice"]
_RESHAPE = OPS["reshape"]
_BROADCAST = OPS["broadcast"]
_I64 = _dtypes.int64


def _spans(b: Basic) -> tuple:
    """Per axis, the extent from the first to the last selected element."""
    return tuple((m - 1) * st + 1 if m else 0 for s, m, st, rev, isint in b.dims)


def _starts(b: Basic, shape: tuple, device: Any) -> tuple[tuple, tuple]:
    """Runtime start positions (int64 scalar parameters) of the axes not selected whole, so
    the compiled structure depends on extents and steps only, never on where a key starts."""
    dyn, starts = [], []
    for i, (span, dim, n) in enumerate(zip(_spans(b), b.dims, shape)):
        if span != n:
            dyn.append(i)
            starts.append(scalar_leaf(dim[0], _dtypes.int64, device))
    return tuple(dyn), tuple(starts)


def value_node(x: Array, value: Any, fname: str = "__setitem__") -> Any:
    """The node of a value assigned into ``x``, cast to ``x``'s dtype."""
    v = as_node(value, x._node, fname)
    if v.dtype is not x.dtype:
        if v.dtype.kind == "c" and x.dtype.kind != "c":
            raise TypeError(f"cannot assign {v.dtype.name} values into a "
                            f"{x.dtype.name} array")
        v = record(OPS["convert"], (v,), Convert(x.dtype))
    if v.device != x.device and v.op.name != "scalar":
        if not v.committed:  # an uncommitted value follows the array (JAX's rule)
            v = transfer(v, x.device)
        elif x._node.committed:
            raise ValueError(f"__setitem__: value is on {v.device}, array on {x.device}")
        # else the array is uncommitted: it moves to the committed value's device (record)
    return v


def setitem(x: Array, key: Any, value: Any) -> Array:
    """The array ``x`` with ``x[key]`` replaced by ``value``; the caller rebinds ``x``."""
    t = type(key)
    if (t is int or t is slice or t is tuple) and type(x) is Array:
        out = _setitem_simple(x, key if t is tuple else (key,), value)
        if out is not None:
            return out
    _check(x)
    ks = key if isinstance(key, tuple) else (key,)
    if any(_is_array_key(k) for k in ks):
        # load order: advanced_indexing is built on this module's basic indexing
        from .advanced_indexing import setitem_advanced
        return setitem_advanced(x, key, value)
    b = parse_basic(x.shape, key)
    v = value_node(x, value)
    out_shape = b.out_shape
    _check_fits(v, out_shape)
    if any(m == 0 for s, m, st, rev, isint in b.dims):
        return x
    region = tuple(m for s, m, st, rev, isint in b.dims)
    v = _shaped(v, out_shape, region)
    revs = tuple(i for i, dim in enumerate(b.dims) if dim[3])
    if revs:
        v = record(OPS["reverse"], (v,), Reverse(revs))
    if region == x.shape:
        if v.op.name == "scalar":  # a runtime parameter is no array: give it a node of its own
            v = record(OPS["broadcast"], (v,), Broadcast(x.shape))
        return wrap(v)
    spans = _spans(b)
    dyn, starts = _starts(b, x.shape, x.device)
    if any(st > 1 for s, m, st, rev, isint in b.dims):
        # strided: merge the value into the covered span, keeping the elements between
        zeros = (0,) * len(spans)
        interior = tuple(st - 1 for s, m, st, rev, isint in b.dims)
        placed = record(OPS["pad"], (v,), Pad(zeros, zeros, interior))
        true = scalar_leaf(True, _dtypes.bool, x.device)
        mask = record(OPS["broadcast"], (true,), Broadcast(region))
        mask = record(OPS["pad"], (mask,), Pad(zeros, zeros, interior))
        cur = (record(OPS["dynamic_slice"], (x._node, *starts), DynamicSlice(spans, dyn))
               if dyn else x._node)
        v = record(OPS["select"], (mask, placed, cur))
    if not dyn:
        return wrap(v)
    return _write(x, v, starts, dyn)


def _check_fits(v: Node, out_shape: tuple) -> None:
    try:
        bshape = broadcast_shapes(v.shape, out_shape)
    except ValueError:
        bshape = None
    if bshape != out_shape:
        raise ValueError(f"could not broadcast a value of shape {v.shape} into the selection "
                         f"of shape {out_shape}")


def _shaped(v: Node, out_shape: tuple, region: tuple) -> Node:
    """The value broadcast to the selection's shape, then shaped as the region it covers."""
    if v.shape != out_shape:
        v = record(OPS["broadcast"], (v,), Broadcast(out_shape))
    if v.shape != region:
        v = record(OPS["reshape"], (v,), Reshape(region))
    return v


def _write(x: Array, v: Node, starts: tuple, dyn: tuple) -> Array:
    """``v`` written at ``starts`` along axes ``dyn`` of ``x``: combined with the pending
    writes into ``x`` where they combine (``_combined``), else one dynamic_update_slice."""
    prev = x._node
    if prev.buffer is None or (prev.op is not _DUS and prev.op is not _UPDATES):
        # (pending writes, or any other array: a loop's first write starts its run)
        node = _combined(prev, v, starts, dyn)
        if node is not None:
            return wrap(node)
    return wrap(record(_DUS, (prev, v, *starts), DynamicUpdateSlice(dyn)))


def _setitem_simple(x: Array, ks: tuple, value: Any) -> Array | None:
    """``setitem`` with the commonest keys, Python ints and slices of step 1 (``x[i, j] = v``,
    ``x[1:3] = v``, a view's write-back into its base), without building a ``Basic``: the
    same nodes as the general path (a write of one element took 34 us there, most of it
    parsing the key twice over, once more for a view's write-back). None for anything else
    (``_simple_key``)."""
    shape = x._node.shape
    parsed = _simple_key(shape, ks)
    if parsed is None:
        return None
    region, out, dyn, at = parsed
    nd = len(ks)
    rest = shape[nd:]
    out_shape = (*out, *rest)
    v = value_node(x, value)
    _check_fits(v, out_shape)
    region_t = (*region, *rest)
    if 0 in region_t:
        return x
    v = _shaped(v, out_shape, region_t)
    if not dyn:  # the whole array
        if v.op is SCALAR:  # a runtime parameter is no array: give it a node of its own
            v = record(OPS["broadcast"], (v,), Broadcast(shape))
        return wrap(v)
    dev = x._node.device
    return _write(x, v, tuple([scalar_leaf(i, _I64, dev) for i in at]), tuple(dyn))


# ---------------------------------------------------------------- writes of a loop combined
#
# A loop of writes (``x[i, i] = d[i]``, ``x[i] = 0.5``, a view written element by element and
# written back into its base each time) would add one level to the pending graph per write,
# and the auto-flush it then triggers splits whatever the loop is part of. A pending write
# into an array that is itself pending writes is combined with them where the writes move
# values without computing (each writes a Python number, or a dynamic_slice of one array) at
# windows of one shape that do not overlap: one ``update_slices`` node over the array before
# them, its positions (and numbers) small int64 (value) buffers, so the structure, and so the
# executable, is the same whatever the positions. A write at a window written before replaces
# that write where the new value is not computed from it (a view's write-back into its base).

_DUS = OPS["dynamic_update_slice"]
_UPDATES = OPS["update_slices"]
_SLICE = OPS["dynamic_slice"]
# writes that move values become one update_slices node BATCH at a time, at most
# MAX_COMBINED in one (a longer loop stacks such nodes, one level of depth each)
BATCH = 16
MAX_COMBINED = 256


def _at(starts: tuple) -> tuple | None:
    """The start positions' values, when they are scalar parameters holding ints (a key
    parsed here; not a traced argument of ``jit``)."""
    out = []
    for s in starts:
        val = s.value
        if s.op is not SCALAR or type(val) is not int:
            return None
        out.append(val)
    return tuple(out)


def _source(v: Node, dtype: Any) -> tuple | None:
    """What a written value is, when it moves values without computing: ("fill", number) for
    a Python number of the array's dtype, ("copy", source node, positions, dynamic_slice
    attrs) for a dynamic_slice of one array (through reshapes); else None. (Another thread may
    compute a node meanwhile, which drops its inputs: each node's are read once.)"""
    n, direct = v, True
    while n.op is _RESHAPE or n.op is _BROADCAST:
        if n.op is _BROADCAST:
            direct = False
        ins = n.inputs
        if not ins:
            return None
        n = ins[0]
    if n.op is SCALAR:
        val = n.value
        if n.dtype is dtype and type(val) in (int, float, bool, complex):
            return ("fill", val)
        return None
    ins = n.inputs
    if direct and n.op is _SLICE and n.dtype is dtype and len(ins) > 1:
        at = _at(ins[1:])
        if at is not None:
            return ("copy", ins[0], at, n.attrs)
    return None


def _reads(v: Node, prev: Node, budget: int = 256) -> bool:
    """Whether ``v`` is computed from ``prev`` (or may be: more than ``budget`` nodes to look
    at). No node as shallow as ``prev`` reads it (a node is deeper than its inputs)."""
    floor = prev.depth
    stack, seen = [v], set()
    while stack:
        n = stack.pop()
        if n is prev:
            return True
        if n.depth <= floor or id(n) in seen:
            continue
        seen.add(id(n))
        if len(seen) > budget:
            return True
        stack.extend(n.inputs)
    return False


class _Writes:
    """What an update_slices node was combined from (its ``value``, for the next write to
    extend it; no nodes: those are its inputs, dropped once it is computed): kind, window,
    the read attributes, the windows' positions, and per window its number or read position."""

    __slots__ = ("kind", "window", "rattrs", "at", "what")

    def __init__(self, kind: str, window: tuple, rattrs: Any, at: list, what: list) -> None:
        self.kind, self.window, self.rattrs, self.at, self.what = kind, window, rattrs, at, what


def _charged(prev: Node, v: Node, starts: tuple, dyn: tuple) -> Node:
    """A plain write on a run of writes that did not combine after all: it counts the run's
    levels of depth too (those counted none), so a loop of such writes auto-flushes as
    before."""
    node = record(_DUS, (prev, v, *starts), DynamicUpdateSlice(dyn))
    node.depth = max(node.depth, prev.depth + BATCH)
    return node


def _same_source(a: tuple, b: tuple) -> bool:
    return a[0] == b[0] and (a[0] == "fill" or (a[1] is b[1] and a[3] == b[3]))


def _combined(prev: Node, v: Node, starts: tuple, dyn: tuple) -> Node | None:
    """``v`` written at ``starts`` into ``prev`` (pending writes into an array, or the array a
    loop's first write goes into), combined with them where that is how they combine; None
    where it is a plain dynamic_update_slice.

    A write at the window ``prev`` wrote replaces that write (a view's write-back into its
    base) unless its value is computed from ``prev``. Writes that move values (``_source``)
    stay dynamic_update_slice nodes until BATCH of them follow one another (each such node's
    ``value`` counts them), then become one update_slices node with the update_slices node
    below them, if any (each holds its writes as Python data in its ``value``: ``_Writes``):
    the positions' buffers are made once per BATCH writes."""
    at = _at(starts)
    if at is None or prev.device._spmd:  # (on a mesh: one write after the other, as before)
        return None
    shape = v.shape
    # (another thread may compute ``prev`` or the nodes under it meanwhile, which drops their
    # inputs: each node's inputs are read once, and a node without them is written on)
    ins = prev.inputs
    if prev.op is _DUS:
        if len(ins) < 3 or prev.attrs.dyn != dyn or ins[1].shape != shape:
            return None
        if _at(ins[2:]) == at:  # the same window again (a view's write-back)
            if _reads(v, prev):
                return None
            return record(_DUS, (ins[0], v, *starts), DynamicUpdateSlice(dyn))
    src = _source(v, prev.dtype)
    if src is None:
        return None
    run = 1
    if prev.op is _DUS and type(prev.value) is int:
        psrc = _source(ins[1], prev.dtype)
        if psrc is not None and _same_source(src, psrc):
            run = prev.value + 1
    if run < BATCH:
        node = record(_DUS, (prev, v, *starts), DynamicUpdateSlice(dyn))
        node.value = run
        if node.depth == prev.depth + 1:  # (at most BATCH - 1 such levels: they count none)
            node.depth = prev.depth
        return node
    # the BATCH writes of the run, oldest first, and what is under them
    writes: list = []
    n = prev
    for _ in range(BATCH - 1):
        nins = n.inputs
        if n.op is not _DUS or len(nins) < 3:  # (computed since: no longer combined)
            return _charged(prev, v, starts, dyn)
        ws = _source(nins[1], n.dtype)
        if ws is None:
            return _charged(prev, v, starts, dyn)
        writes.append((_at(nins[2:]), ws))
        n = nins[0]
    writes.reverse()
    writes.append((at, src))
    w = n.value if n.op is _UPDATES else None
    nins = n.inputs
    if w is not None and (len(nins) < 3 or w.kind != src[0] or w.window != shape or
                          n.attrs.dyn != dyn or len(w.at) + BATCH > MAX_COMBINED or
                          (src[0] == "copy" and (nins[1] is not src[1] or
                                                 w.rattrs != src[3]))):
        w = None
    if w is not None:
        base, places, what = nins[0], list(w.at), list(w.what)
    else:
        base, places, what = n, [], []
    sizes = [shape[a] for a in dyn]
    single = all(size == 1 for size in sizes)
    index = {p: j for j, p in enumerate(places)}
    for p, s in writes:
        item = s[1] if s[0] == "fill" else s[2]
        j = index.get(p)
        if j is not None:  # the same window again: the later write is the one
            what[j] = item
            continue
        if not single:
            for other in places:
                for q, r, size in zip(other, p, sizes):
                    if q - r >= size or r - q >= size:
                        break  # apart along this axis
                else:  # overlapping windows: written one after the other
                    return _charged(prev, v, starts, dyn)
        index[p] = len(places)
        places.append(p)
        what.append(item)
    device = prev.device
    at_leaf = small_leaf(np.array(places, dtype=np.int64), device)
    if src[0] == "fill":
        vals = small_leaf(np.array(what, dtype=prev.dtype.np), device)
        node = record(_UPDATES, (base, vals, at_leaf), UpdateSlices(dyn, "fill", shape, (), ()))
    else:
        rsizes, rdyn = src[3]
        frm = small_leaf(np.array(what, dtype=np.int64).reshape(len(what), len(rdyn)), device)
        node = record(_UPDATES, (base, src[1], frm, at_leaf),
                      UpdateSlices(dyn, "copy", shape, rdyn, rsizes))
    node.value = _Writes(src[0], shape, src[3] if src[0] == "copy" else None, places, what)
    return node
