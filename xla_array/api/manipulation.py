"""Manipulation functions: reshape, permute, broadcast, join, split, flip, roll, tile."""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from ..core import axes as _axes
from ..core.graph import record
from ..core.ops.structural import OPS, Broadcast, Concat, Reshape, Reverse, Transpose
from ..core.ops.structural import broadcast_shapes as _bshapes
from . import views as _views
from .array import Array, as_array, wrap

__all__ = ["reshape", "permute_dims", "broadcast_to", "broadcast_arrays", "broadcast_shapes",
           "expand_dims", "squeeze", "concat", "stack", "flip", "moveaxis", "roll", "tile",
           "unstack"]


_arr = as_array  # an array argument; NumPy arrays are converted (see _array.as_array)


def reshape(x: Array, /, shape: Any, *, copy: bool | None = None) -> Array:
    x = _arr(x, "reshape")
    if isinstance(shape, int):
        shape = (shape,)
    shape = [operator.index(d) for d in shape]
    if shape.count(-1) > 1:
        raise ValueError("reshape(): only one dimension can be -1")
    if any(d < -1 for d in shape):
        raise ValueError(f"reshape(): invalid shape {tuple(shape)}")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or x.size % known:
            raise ValueError(f"cannot reshape an array of shape {x.shape} into {tuple(shape)}")
        shape[shape.index(-1)] = x.size // known
    shape_t = tuple(shape)
    fwd = None if shape_t == x.shape else ("reshape", Reshape(shape_t))
    out = Array(x._node) if fwd is None else wrap(record(OPS["reshape"], (x._node,), fwd[1]))
    if copy:
        return out
    model: Any
    if x._view is None:  # C-contiguous: always a view, its strides model made if needed
        model = lambda m: m.reshape(shape_t)  # noqa: E731
    else:
        got = _views.reshaped_model(x, shape_t)
        if got is None:
            if copy is False:
                raise ValueError(f"reshape(copy=False): an array of shape {x.shape} with these "
                                 f"strides cannot be reshaped to {shape_t} without a copy")
            return out
        model = lambda _, _m=got: _m  # noqa: E731
    back = None if fwd is None else ("reshape", Reshape(x.shape))
    return _views.attach(out, x, _views.Transform(fwd, back, model))


def permute_dims(x: Array, /, axes: tuple[int, ...]) -> Array:
    x = _arr(x, "permute_dims")
    perm = tuple(_axes.axis(a, x.ndim, "permute_dims") for a in axes)
    if perm == tuple(range(x.ndim)):
        return _views.attach(Array(x._node), x, _views.Transform(None, None, lambda m: m))
    inv = tuple(perm.index(i) for i in range(x.ndim))
    out = wrap(record(OPS["transpose"], (x._node,), Transpose(perm)))
    return _views.attach(out, x, _views.Transform(("transpose", Transpose(perm)),
                                                  ("transpose", Transpose(inv)),
                                                  lambda m: m.transpose(perm)))


def broadcast_to(x: Array, /, shape: tuple[int, ...]) -> Array:
    x = _arr(x, "broadcast_to")
    shape = tuple(operator.index(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"broadcast_to(): negative dimension in {shape}")
    if len(shape) < x.ndim or _bshapes(x.shape, shape) != shape:
        raise ValueError(f"cannot broadcast an array of shape {x.shape} to {shape}")
    if shape == x.shape:
        return Array(x._node)
    return wrap(record(OPS["broadcast"], (x._node,), Broadcast(shape)))


def broadcast_arrays(*arrays: Array) -> tuple[Array, ...]:
    """A tuple since 2025.12 (a list before; ``__array_namespace__(api_version=...)`` gives the
    older form)."""
    shape = _bshapes(*(_arr(a, "broadcast_arrays").shape for a in arrays))
    return tuple(broadcast_to(a, shape) for a in arrays)


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of ``shapes`` (2025.12); ``()`` for no shapes. Shapes are always known
    here, so ``None`` dimensions are rejected (TypeError)."""
    try:
        norm = [tuple(operator.index(d) for d in s) for s in shapes]
    except TypeError:
        raise TypeError(f"broadcast_shapes() takes tuples of ints, got {shapes!r}") from None
    if any(d < 0 for s in norm for d in s):
        raise ValueError(f"broadcast_shapes(): negative dimension in {shapes!r}")
    return _bshapes(*norm)


def expand_dims(x: Array, /, axis: int | tuple[int, ...] = 0) -> Array:
    x = _arr(x, "expand_dims")
    axis = _axes.int_tuple(axis, "expand_dims")
    ax = _axes.axes(axis, x.ndim + len(axis), "expand_dims")
    shape = list(x.shape)
    for a in ax:
        shape.insert(a, 1)
    return reshape(x, tuple(shape))


def squeeze(x: Array, /, axis: int | tuple[int, ...]) -> Array:
    x = _arr(x, "squeeze")
    ax = _axes.axes(axis, x.ndim, "squeeze")
    for a in ax:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze(): axis {a} has size {x.shape[a]}, not 1")
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in ax))


def concat(arrays: Any, /, *, axis: int | None = 0) -> Array:
    arrays = [_arr(a, "concat") for a in arrays]
    if not arrays:
        raise ValueError("concat() needs at least one array")
    if axis is None:
        arrays = [reshape(a, (-1,)) for a in arrays]
        axis = 0
    nd = arrays[0].ndim
    if nd == 0:
        raise ValueError("concat() cannot join 0-d arrays")
    ax = _axes.axis(axis, nd, "concat")
    if len(arrays) == 1:
        return Array(arrays[0]._node)
    return wrap(record(OPS["concat"], tuple(a._node for a in arrays), Concat(ax)))


def stack(arrays: Any, /, *, axis: int = 0) -> Array:
    arrays = [_arr(a, "stack") for a in arrays]
    if not arrays:
        raise ValueError("stack() needs at least one array")
    if any(a.shape != arrays[0].shape for a in arrays):
        raise ValueError(f"stack(): arrays must have one shape, got {[a.shape for a in arrays]}")
    ax = _axes.axis(axis, arrays[0].ndim + 1, "stack")
    return concat([expand_dims(a, axis=ax) for a in arrays], axis=ax)


def flip(x: Array, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    x = _arr(x, "flip")
    ax = _axes.axes(axis, x.ndim, "flip")
    if not ax:
        return _views.attach(Array(x._node), x, _views.Transform(None, None, lambda m: m))
    out = wrap(record(OPS["reverse"], (x._node,), Reverse(ax)))
    rev = ("reverse", Reverse(ax))
    return _views.attach(out, x, _views.Transform(rev, rev, lambda m: np.flip(m, ax)))


def moveaxis(x: Array, source: int | tuple[int, ...], destination: int | tuple[int, ...],
             /) -> Array:
    x = _arr(x, "moveaxis")
    src = _axes.int_tuple(source, "moveaxis", "source")
    dst = _axes.int_tuple(destination, "moveaxis", "destination")
    if len(src) != len(dst):
        raise ValueError("moveaxis(): source and destination differ in length")
    src = tuple(_axes.axis(a, x.ndim, "moveaxis") for a in src)
    dst = tuple(_axes.axis(a, x.ndim, "moveaxis") for a in dst)
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("moveaxis(): repeated axis")
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute_dims(x, tuple(order))


def roll(x: Array, /, shift: int | tuple[int, ...], *,
         axis: int | tuple[int, ...] | None = None) -> Array:
    x = _arr(x, "roll")
    if axis is None:
        flat = reshape(x, (-1,))
        return reshape(roll(flat, shift, axis=0), x.shape)
    shifts = _axes.int_tuple(shift, "roll", "shift")
    axs = _axes.int_tuple(axis, "roll")
    if len(shifts) == 1 and len(axs) > 1:
        shifts = shifts * len(axs)
    if len(shifts) != len(axs):
        raise ValueError("roll(): shift and axis differ in length")
    out = x
    for s, a in zip(shifts, axs):
        a = _axes.axis(a, x.ndim, "roll")
        n = x.shape[a]
        if n == 0:
            continue
        s = operator.index(s) % n
        if s == 0:
            continue
        idx_hi = tuple(slice(n - s, None) if i == a else slice(None) for i in range(x.ndim))
        idx_lo = tuple(slice(0, n - s) if i == a else slice(None) for i in range(x.ndim))
        out = concat([out[idx_hi], out[idx_lo]], axis=a)
    return out


def tile(x: Array, repetitions: tuple[int, ...], /) -> Array:
    x = _arr(x, "tile")
    reps = tuple(operator.index(r) for r in repetitions)
    if any(r < 0 for r in reps):
        raise ValueError("tile(): repetitions must be non-negative")
    nd = max(len(reps), x.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    shape = (1,) * (nd - x.ndim) + x.shape
    xr = reshape(x, shape)
    # broadcast to (r0, s0, r1, s1, ...) then merge pairs
    inter = []
    for _r, s in zip(reps, shape):
        inter += [1, s]
    b = reshape(xr, tuple(inter))
    full_shape = []
    for r, s in zip(reps, shape):
        full_shape += [r, s]
    b = broadcast_to(b, tuple(full_shape))
    return reshape(b, tuple(r * s for r, s in zip(reps, shape)))


def unstack(x: Array, /, *, axis: int = 0) -> tuple[Array, ...]:
    x = _arr(x, "unstack")
    if x.ndim == 0:
        raise ValueError("unstack() needs an array of at least 1 dimension")
    a = _axes.axis(axis, x.ndim, "unstack")
    return tuple(x[(slice(None),) * a + (i,)] for i in range(x.shape[a]))
