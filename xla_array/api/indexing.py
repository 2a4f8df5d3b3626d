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
from ..core.graph import Node, record, scalar_leaf
from ..core.ops import indexing as _ops_index  # noqa: F401  (registers dynamic_slice / dynamic_update_slice)
from ..core.ops.indexing import DynamicSlice, DynamicUpdateSlice
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


def _getitem_simple(x: Array, ks: tuple) -> Array | None:
    """``getitem`` of the commonest keys, Python ints and slices of step 1 (``x[0]``,
    ``x[i, j]``, ``x[1:3]``, ``x[:, 1]``), without building a ``Basic``: the same nodes as the
    general path. None for anything else (and for out-of-range integers: the general path
    raises)."""
    node = x._node
    shape = node.shape
    nd = len(ks)
    if nd > len(shape) or type(x) is not Array:
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
    _check(x)
    ks = key if isinstance(key, tuple) else (key,)
    if any(_is_array_key(k) for k in ks):
        # load order: advanced_indexing is built on this module's basic indexing
        from .advanced_indexing import setitem_advanced
        return setitem_advanced(x, key, value)
    b = parse_basic(x.shape, key)
    v = value_node(x, value)
    try:
        bshape = broadcast_shapes(v.shape, b.out_shape)
    except ValueError:
        bshape = None
    if bshape != b.out_shape:
        raise ValueError(f"could not broadcast a value of shape {v.shape} into the selection "
                         f"of shape {b.out_shape}")
    if any(m == 0 for s, m, st, rev, isint in b.dims):
        return x
    if v.shape != b.out_shape:
        v = record(OPS["broadcast"], (v,), Broadcast(b.out_shape))
    region = tuple(m for s, m, st, rev, isint in b.dims)
    if v.shape != region:
        v = record(OPS["reshape"], (v,), Reshape(region))
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
    return wrap(record(OPS["dynamic_update_slice"], (x._node, v, *starts), DynamicUpdateSlice(dyn)))
