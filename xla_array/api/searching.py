"""Searching functions: argmax, argmin, where, count_nonzero, nonzero, searchsorted.

``nonzero`` has a data-dependent shape: it materializes one int64 scalar (the number of
non-zero elements, read from the end of a recorded cumulative sum, which stays on the device
for the next step), then records the indices with that static size (a scatter compacts the
positions). Each distinct count is a distinct output shape, so it compiles its own second
executable; the first one is shared by every input of the same shape and dtype.

``searchsorted`` orders values exactly like ``sort`` (NaN last, signed zeros equal, complex
lexicographic), promotes ``x1`` and ``x2`` to a common dtype (NumPy's rules where the
standard has none) and accepts a Python scalar ``x2`` (2025.12).
"""

from __future__ import annotations

import math
from typing import Any

from ..core import axes as _axes
from ..core import dtypes as _dtypes
from ..core.graph import record
from ..core.ops.reductions import ArgReduce
from ..core.ops.sorting import Scatter1d, SearchSorted
from ..core.ops.structural import OPS, Convert
from .array import Array, as_array, operand_nodes, wrap
from .creation import iota, zeros
from .dtype_functions import astype
from .elementwise import apply, select
from .manipulation import reshape
from .materialize import host_values
from .statistical import cumulative_sum
from .statistical import sum as _sum
from .utility import take

__all__ = ["argmax", "argmin", "where", "count_nonzero", "nonzero", "searchsorted"]


_arr = as_array  # an array argument; NumPy arrays are converted (see _array.as_array)


def _arg(kind: str, x: Any, axis: Any, keepdims: bool) -> Array:
    fname = "arg" + kind
    x = _arr(x, fname)
    if x.dtype.kind == "c":
        raise TypeError(f"{fname}() does not accept complex arrays")
    if x.dtype is _dtypes.bool:
        x = astype(x, _dtypes.uint8)
    if axis is None:
        if x.size == 0:
            raise ValueError(f"{fname}() of an empty array")
        flat = reshape(x, (-1,)) if x.ndim != 1 else x
        out = wrap(record(OPS["argreduce"], (flat._node,), ArgReduce(kind, 0)))
        return reshape(out, (1,) * x.ndim) if keepdims else out
    a = _axes.axis(axis, x.ndim, fname)
    if x.shape[a] == 0:
        raise ValueError(f"{fname}() over an empty axis")
    out = wrap(record(OPS["argreduce"], (x._node,), ArgReduce(kind, a)))
    if keepdims:
        out = reshape(out, tuple(1 if i == a else d for i, d in enumerate(x.shape)))
    return out


def argmax(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    return _arg("max", x, axis, keepdims)


def argmin(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    return _arg("min", x, axis, keepdims)


def where(condition: Array, x1: Any = None, x2: Any = None, /) -> Any:
    """Elements of ``x1`` where ``condition`` holds, else of ``x2`` (broadcast together).
    ``where(condition)`` alone is ``nonzero(condition)``, as NumPy's (scikit-learn calls it)."""
    condition = as_array(condition, "where")
    if x1 is None and x2 is None:
        return nonzero(condition)
    if x1 is None or x2 is None:
        raise TypeError("where() takes a condition alone or a condition and two values")
    return select(condition, x1, x2)


# ---------------------------------------------------------------- helpers for data-dependent ops

def nonzero_mask(x: Array) -> Array:
    """``x != 0`` as a bool array (complex: either part non-zero; NaN counts as non-zero)."""
    if x.dtype is _dtypes.bool:
        return x
    if x.dtype.kind == "c":
        return apply("not_equal", x, 0)
    return astype(x, _dtypes.bool)


def compact(mask: Array, pos: Array, k: int) -> Array:
    """int64 ``(k,)``: the indices ``i`` where the 1-D ``mask`` holds, in order, given ``pos``
    (``cumsum(mask) - 1``) and their number ``k``."""
    slot = where(mask, pos, -1)
    idx = iota(mask.shape, 0, mask.device)
    return wrap(record(OPS["scatter1d"], (slot._node, idx._node), Scatter1d(k)))


def empty_int(shape: tuple, device: Any) -> Array:
    return zeros(shape, dtype=_dtypes.int64, device=device)


# ---------------------------------------------------------------- namespace functions

def count_nonzero(x: Array, /, *, axis: int | tuple[int, ...] | None = None,
                  keepdims: bool = False) -> Array:
    """The number of non-zero elements (int64); NaN is non-zero, as in NumPy."""
    x = _arr(x, "count_nonzero")
    return _sum(nonzero_mask(x), axis=axis, dtype=_dtypes.int64, keepdims=keepdims)


def nonzero(x: Array, /) -> tuple[Array, ...]:
    """int64 indices of the non-zero elements, one array per axis, row-major order.

    Materializes the count (one scalar) to fix the output size; see the module docstring.
    """
    x = _arr(x, "nonzero")
    if x.ndim == 0:
        raise ValueError("nonzero() needs an array of at least one dimension, got a 0-d array")
    n = x.size
    if n == 0:
        return tuple(empty_int((0,), x.device) for _ in range(x.ndim))
    mask = reshape(nonzero_mask(x), (n,))
    cs = cumulative_sum(mask, dtype=_dtypes.int64)
    (count,) = host_values("nonzero", cs[n - 1])
    k = int(count)
    if k == 0:
        return tuple(empty_int((0,), x.device) for _ in range(x.ndim))
    flat = compact(mask, cs - 1, k)
    if x.ndim == 1:
        return (flat,)
    out = []
    for j in range(x.ndim):
        stride = math.prod(x.shape[j + 1:])
        q = flat // stride if stride != 1 else flat
        out.append(q % x.shape[j] if j else q)
    return tuple(out)


def searchsorted(x1: Array, x2: Array | int | float, /, *, side: str = "left",
                 sorter: Array | None = None) -> Array:
    """int64 insertion indices of ``x2`` into ``x1`` (sorted, or sorted by ``sorter``)."""
    x1 = _arr(x1, "searchsorted")
    if x1.ndim != 1:
        raise ValueError(f"searchsorted(): x1 must be 1-D, got shape {x1.shape}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted(): side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        sorter = _arr(sorter, "searchsorted")
        if sorter.dtype.kind not in "iu":
            raise TypeError(f"searchsorted(): sorter must be an integer array, got "
                            f"{sorter.dtype.name}")
        if sorter.shape != x1.shape:
            raise ValueError(f"searchsorted(): sorter shape {sorter.shape} differs from x1 "
                             f"shape {x1.shape}")
        x1 = take(x1, sorter, axis=0)
    if not isinstance(x2, Array) and isinstance(x2, complex) and x1.dtype.kind != "c":
        raise TypeError("searchsorted(): a complex x2 needs a complex x1")
    a, b = operand_nodes("searchsorted", x1, x2)
    d = _dtypes.promote(a.dtype, b.dtype)
    if a.dtype is not d:
        a = record(OPS["convert"], (a,), Convert(d))
    if b.dtype is not d:
        b = record(OPS["convert"], (b,), Convert(d))
    return wrap(record(OPS["searchsorted"], (a, b), SearchSorted(side)))
