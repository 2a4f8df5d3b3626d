"""Utility functions (all, any, diff) and the gathers take, take_along_axis and repeat.

- ``diff``: ``prepend``/``append`` are joined with ``concat`` (so differing dtypes promote,
  which the standard leaves to the implementation; Python scalars are broadcast as NumPy
  does); bool input gives ``x[i+1] != x[i]`` as NumPy does; ``n`` larger than the axis gives
  an empty axis.
- ``take``/``take_along_axis``: negative indices count from the end; an index out of bounds
  raises IndexError as in NumPy (when the indices are computed, or from a check run with the
  gather: see ``advanced_indexing``; with ``XLA_ARRAY_CHECK_INDICES=0`` such indices are
  clamped to the axis, which the standard allows: it leaves out-of-bounds behaviour
  unspecified). ``take`` also accepts indices of any shape (NumPy's extension); a 0-d ``x``
  with ``axis=None`` is flattened first (implementation-defined in the standard).
- ``repeat``: an ``int`` repeats compiles statically. An array ``repeats`` decides the output
  size, so it is a data-dependent call: one executable computes (on the device) the running
  total of ``repeats`` and copies two scalars to the host (the total, and whether a count is
  negative); the output is then recorded with that static size. This synchronizes with the
  device, and every distinct total compiles its own second executable.
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from ..core import axes as _axes
from ..core import dtypes as _dtypes
from ..core.graph import record
from ..core.ops import sorting as _ops_sort  # noqa: F401  (sorting registers the ops)
from ..core.ops.sorting import SearchSorted, Take
from ..core.ops.structural import OPS, broadcast_shapes
from .advanced_indexing import checked_indices, empty_result
from .array import Array, as_array, wrap
from .creation import full, iota, zeros
from .dtype_functions import result_type
from .elementwise import apply
from .manipulation import broadcast_to, concat, reshape
from .materialize import host_values
from .statistical import all, any, cumulative_sum  # re-exported: they are utility functions
from .statistical import min as _min

__all__ = ["all", "any", "diff", "take", "take_along_axis", "repeat"]

_PYSCALAR = (bool, int, float, complex)


_arr = as_array  # an array argument; NumPy arrays are converted (see _array.as_array)


def _zeros(shape: tuple, x: Array) -> Array:
    return zeros(shape, dtype=x.dtype, device=x.device)


def _along(nd: int, a: int, s: slice) -> tuple:
    return tuple(s if i == a else slice(None) for i in range(nd))


def diff(x: Array, /, n: int = 1, axis: int = -1, *, prepend: Array | None = None,
         append: Array | None = None) -> Array:
    """The ``n``-th forward difference along ``axis`` (see the module docstring); ``n`` and
    ``axis`` may also be passed positionally, as NumPy's ``diff(a, n, axis)`` (libraries call
    ``xp.diff(x, 2)``)."""
    x = _arr(x, "diff")
    if x.ndim == 0:
        raise ValueError("diff() needs an array of at least one dimension, got a 0-d array")
    a = _axes.axis(axis, x.ndim, "diff")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff(): n must be non-negative, got {n}")
    parts = []
    for extra, name in ((prepend, "prepend"), (x, None), (append, "append")):
        if extra is None:
            continue
        if isinstance(extra, _PYSCALAR):
            shape = tuple(1 if i == a else s for i, s in enumerate(x.shape))
            extra = full(shape, extra, dtype=result_type(x, extra), device=x.device)
        if isinstance(extra, np.ndarray):
            extra = as_array(extra, "diff")
        if not isinstance(extra, Array):
            raise TypeError(f"diff(): {name} must be an array, got {type(extra).__name__}")
        if extra.ndim != x.ndim or builtins.any(
                p != q for i, (p, q) in enumerate(zip(extra.shape, x.shape)) if i != a):
            raise ValueError(f"diff(): {name} shape {extra.shape} must match x shape "
                             f"{x.shape} except on axis {a}")
        parts.append(extra)
    y = concat(parts, axis=a) if len(parts) > 1 else x
    if n == 0:
        return Array(y._node)
    for _ in range(n):
        if y.shape[a] == 0:
            break
        hi, lo = y[_along(y.ndim, a, slice(1, None))], y[_along(y.ndim, a, slice(None, -1))]
        y = apply("not_equal" if y.dtype is _dtypes.bool else "subtract", hi, lo)
    return y


def take(x: Array, indices: Array, /, *, axis: int | None = None) -> Array:
    """Elements of ``x`` at ``indices`` along ``axis`` (see the module docstring)."""
    return _take(x, indices, axis, True)


def take_in_bounds(x: Array, indices: Array, axis: int) -> Array:
    """``take`` of indices the package computed itself, in bounds by construction (sort
    permutations, LU pivots): no bounds check is recorded."""
    return _take(x, indices, axis, False)


def _take(x: Array, indices: Array, axis: int | None, check: bool) -> Array:
    x = _arr(x, "take")
    indices = _arr(indices, "take")
    if indices.dtype.kind not in "iu":
        raise TypeError(f"take(): indices must have an integer dtype, got "
                        f"{indices.dtype.name}")
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"take(): axis is required for a {x.ndim}-D array (shape "
                             f"{x.shape})")
        if x.ndim == 0:
            x = reshape(x, (1,))
        a = 0
    else:
        a = _axes.axis(axis, x.ndim, "take")
    out_shape = x.shape[:a] + indices.shape + x.shape[a + 1:]
    # NumPy's take looks at the indices once per element of the axes before ``axis``: with
    # none (a zero there), it takes nothing and checks nothing
    looked = check and indices.size and math.prod(x.shape[:a]) > 0
    if looked and x.shape[a] == 0:
        raise IndexError(f"take(): cannot take from an empty axis {a} (shape {x.shape})")
    if 0 in out_shape:
        z = _zeros(out_shape, x)
        return wrap(empty_result(z._node, [(indices._node, x.shape[a], a)])) if looked else z
    idx = checked_indices(indices._node, x.shape[a], a) if check else indices._node
    return wrap(record(OPS["take_axis"], (x._node, idx), Take(a)))


def take_along_axis(x: Array, indices: Array, /, *, axis: int = -1) -> Array:
    """``out[i] = x[i with i[axis] = indices[i]]``, broadcasting off ``axis``."""
    x = _arr(x, "take_along_axis")
    indices = _arr(indices, "take_along_axis")
    if indices.dtype.kind not in "iu":
        raise TypeError(f"take_along_axis(): indices must have an integer dtype, got "
                        f"{indices.dtype.name}")
    if x.ndim != indices.ndim:
        raise ValueError(f"take_along_axis(): x ({x.shape}) and indices ({indices.shape}) "
                         f"must have the same number of axes")
    a = _axes.axis(axis, x.ndim, "take_along_axis")
    off = broadcast_shapes(tuple(s for i, s in enumerate(x.shape) if i != a),
                           tuple(s for i, s in enumerate(indices.shape) if i != a))
    out_shape = off[:a] + (indices.shape[a],) + off[a:]
    x_shape = off[:a] + (x.shape[a],) + off[a:]
    if 0 in out_shape:
        return _zeros(out_shape, x)
    if x.shape[a] == 0:
        raise IndexError(f"take_along_axis(): cannot take from an empty axis {a} (shape "
                         f"{x.shape})")
    xb = broadcast_to(x, x_shape)
    ib = broadcast_to(indices, out_shape)
    idx = checked_indices(ib._node, x.shape[a], a)
    return wrap(record(OPS["take_along"], (xb._node, idx), Take(a)))


def _repeat_static(x: Array, r: int, a: int) -> Array:
    if r < 0:
        raise ValueError(f"repeat(): repeats must be non-negative, got {r}")
    s = x.shape
    if r == 1:
        return Array(x._node)
    out = s[:a] + (s[a] * r,) + s[a + 1:]
    if 0 in out:
        return _zeros(out, x)
    y = reshape(x, s[:a + 1] + (1,) + s[a + 1:])
    y = broadcast_to(y, s[:a + 1] + (r,) + s[a + 1:])
    return reshape(y, out)


def repeat(x: Array, repeats: int | Array, /, *, axis: int | None = None) -> Array:
    """Repeat each element ``repeats`` times along ``axis`` (flattened when ``None``).

    An array ``repeats`` synchronizes with the device (see the module docstring).
    """
    x = _arr(x, "repeat")
    if axis is None:
        x = reshape(x, (-1,))
        a = 0
    else:
        a = _axes.axis(axis, x.ndim, "repeat")
    if isinstance(repeats, np.ndarray):
        repeats = as_array(repeats, "repeat")
    if not isinstance(repeats, Array):
        if isinstance(repeats, bool):
            raise TypeError("repeat(): repeats must be an int or an integer array, not bool")
        return _repeat_static(x, operator.index(repeats), a)
    if repeats.dtype.kind not in "iu":
        raise TypeError(f"repeat(): repeats must have an integer dtype, got "
                        f"{repeats.dtype.name}")
    size = x.shape[a]
    if repeats.ndim > 1 or repeats.shape not in ((), (1,), (size,)):
        raise ValueError(f"repeat(): repeats of shape {repeats.shape} does not broadcast to "
                         f"({size},)")
    if size == 0:
        return _zeros(x.shape, x)
    if repeats.size == 1:
        (r,) = host_values("repeat", reshape(repeats, ()))
        return _repeat_static(x, int(r), a)
    cs = cumulative_sum(repeats, dtype=_dtypes.int64)
    total, low = host_values("repeat", cs[size - 1], _min(repeats))
    if int(low) < 0:
        raise ValueError("repeat(): repeats must be non-negative")
    total = int(total)  # type: ignore[assignment]  # (a NumPy scalar until here)
    out_shape = x.shape[:a] + (total,) + x.shape[a + 1:]
    if 0 in out_shape:
        return _zeros(out_shape, x)
    src = wrap(record(OPS["searchsorted"], (cs._node, iota((total,), 0, x.device)._node),
                      SearchSorted("right")))
    return take(x, src, axis=a)
