"""Reductions and statistics: sum, prod, max, min, mean, var, std, all, any, cumulative_sum,
cumulative_prod.

Dtype rules of the standard: ``sum``/``prod`` of signed (or bool) integers accumulate in the
default integer dtype (int64), of unsigned integers in uint64; floats and complex keep their
dtype unless ``dtype=`` says otherwise. ``mean``/``var``/``std`` of integers give float64
(NumPy's choice; the standard leaves integer input unspecified). Beyond the standard, they take
NumPy's ``dtype=`` keyword: a floating-point dtype (complex too for ``mean``) that the input
is cast to and computed and returned in, as NumPy's accumulator dtype; integer and boolean
``dtype=`` (which NumPy takes and truncates into) are a TypeError.

``cumulative_sum``/``cumulative_prod`` accumulate in the same dtypes as ``sum``/``prod``
(bool counts as a signed integer) and lower to one ``reduce_window`` spanning the axis, which
XLA turns into a linear-time scan; XLA may associate the additions differently from NumPy's
sequential loop, so float results can differ in the last bits (and, for products that
overflow, in where inf/NaN appear). A 0-d input is treated as 1-D, as NumPy does (the standard
leaves it unspecified).
"""

from __future__ import annotations

import math
from typing import Any

from ..core import axes as _axes
from ..core import dtypes as _dtypes
from ..core.dtypes import DType
from ..core.graph import record
from ..core.ops import sorting as _ops_sort  # noqa: F401  (registers cumreduce)
from ..core.ops.reductions import Reduce
from ..core.ops.sorting import CumReduce
from ..core.ops.structural import OPS, Reshape
from .array import Array, as_array, wrap
from .dtype_functions import astype
from .elementwise import sqrt
from .manipulation import reshape

__all__ = ["sum", "prod", "max", "min", "mean", "var", "std", "all", "any", "cumulative_sum",
           "cumulative_prod"]

_builtin_any = any


_arr = as_array  # an array argument; NumPy arrays are converted (see _array.as_array)


def _keep(out: Array, x: Array, ax: tuple, keepdims: bool) -> Array:
    if not keepdims:
        return out
    # (a reshape recorded as is: ``out`` is new and never seen, so the result need not be a
    # view of it, which ``reshape`` would make it at twice the recording's cost)
    shape = tuple([1 if i in ax else d for i, d in enumerate(x.shape)])
    return wrap(record(OPS["reshape"], (out._node,), Reshape(shape)))


def reduce(kind: str, x: Array, axis: Any, keepdims: bool, dtype: DType,
           fname: str) -> Array:
    """Record reduction ``kind`` of ``x`` (cast to ``dtype``) over ``axis``."""
    ax = _axes.axes(axis, x.ndim, fname)
    src = astype(x, dtype, copy=False)
    if not ax:
        return src
    out = wrap(record(OPS["reduce"], (src._node,), Reduce(kind, ax)))
    return _keep(out, x, ax, keepdims)


def _acc_dtype(x: Array, dtype: Any, fname: str) -> DType:
    if dtype is not None:
        d = _dtypes.as_dtype(dtype)
        if d.kind == "b" or (x.dtype.kind == "c" and d.kind != "c"):
            raise TypeError(f"{fname}(): cannot accumulate {x.dtype.name} in {d.name}")
        return d
    k = x.dtype.kind
    if k in "bi":
        return _dtypes.default_int
    if k == "u":
        return _dtypes.uint64
    return x.dtype


def sum(x: Array, /, *, axis: Any = None, dtype: Any = None,
        keepdims: bool = False) -> Array:
    x = _arr(x, "sum")
    return reduce("sum", x, axis, keepdims, _acc_dtype(x, dtype, "sum"), "sum")


def prod(x: Array, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Array:
    x = _arr(x, "prod")
    return reduce("prod", x, axis, keepdims, _acc_dtype(x, dtype, "prod"), "prod")


def _extreme(kind: str, x: Any, axis: Any, keepdims: bool) -> Array:
    x = _arr(x, kind)
    if x.dtype.kind == "c":
        raise TypeError(f"{kind}() does not accept complex arrays (no ordering)")
    ax = _axes.axes(axis, x.ndim, kind)
    if 0 in [x.shape[a] for a in ax]:
        raise ValueError(f"{kind}() of an empty axis has no identity (shape {x.shape})")
    return reduce(kind, x, ax, keepdims, x.dtype, kind)


def max(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:
    return _extreme("max", x, axis, keepdims)


def min(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:
    return _extreme("min", x, axis, keepdims)


def _float_of(x: Array, dtype: Any, fname: str, complex_ok: bool = True) -> DType:
    """The dtype ``mean``/``var``/``std`` compute in: NumPy's ``dtype=`` when given (a
    floating-point dtype, complex too where ``complex_ok``), else float64 for integer and
    boolean input, else the input's."""
    if dtype is not None:
        d = _dtypes.as_dtype(dtype)
        if d.kind not in ("fc" if complex_ok else "f") or (x.dtype.kind == "c" and
                                                           d.kind != "c"):
            raise TypeError(f"{fname}(): dtype= must be a {'' if complex_ok else 'real '}"
                            f"floating-point dtype that {x.dtype.name} casts to, got {d.name}")
        return d
    if x.dtype.kind in "biu":
        return _dtypes.default_float
    return x.dtype


def _count(x: Array, ax: tuple) -> int:
    return math.prod(x.shape[a] for a in ax)


def mean(x: Array, /, *, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Array:
    """The standard's ``mean``; ``dtype=`` is NumPy's (see the module docstring)."""
    x = _arr(x, "mean")
    d = _float_of(x, dtype, "mean")
    ax = _axes.axes(axis, x.ndim, "mean")
    s = reduce("sum", x, ax, keepdims, d, "mean")
    n = _count(x, ax)
    return s / n if n else s * float("nan")


def var(x: Array, /, *, axis: Any = None, correction: int | float = 0.0,
        keepdims: bool = False, dtype: Any = None) -> Array:
    """The standard's ``var``; ``dtype=`` is NumPy's (see the module docstring)."""
    x = _arr(x, "var")
    if x.dtype.kind == "c":
        raise TypeError("var() takes real arrays")
    d = _float_of(x, dtype, "var", complex_ok=False)
    ax = _axes.axes(axis, x.ndim, "var")
    xf = astype(x, d, copy=False)
    m = mean(xf, axis=ax, keepdims=True)
    dev = xf - m
    ss = reduce("sum", dev * dev, ax, keepdims, d, "var")
    n = _count(x, ax) - correction
    return ss / n if n > 0 else ss * float("nan")


def std(x: Array, /, *, axis: Any = None, correction: int | float = 0.0,
        keepdims: bool = False, dtype: Any = None) -> Array:
    """The standard's ``std``; ``dtype=`` is NumPy's (see the module docstring)."""
    return sqrt(var(x, axis=axis, correction=correction, keepdims=keepdims, dtype=dtype))


def all(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:
    x = _arr(x, "all")
    return reduce("all", x, axis, keepdims, _dtypes.bool, "all")


def any(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:
    x = _arr(x, "any")
    return reduce("any", x, axis, keepdims, _dtypes.bool, "any")


def _cumulative(kind: str, x: Any, axis: Any, dtype: Any, include_initial: bool,
                fname: str) -> Array:
    x = _arr(x, fname)
    d = _acc_dtype(x, dtype, fname)
    if x.ndim == 0:
        x = reshape(x, (1,))
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{fname}(): axis is required for a {x.ndim}-D array "
                             f"(shape {x.shape})")
        a = 0
    else:
        a = _axes.axis(axis, x.ndim, fname)
    src = astype(x, d, copy=False)
    if x.shape[a] <= 1 and not include_initial:
        return Array(src._node)
    return wrap(record(OPS["cumreduce"], (src._node,), CumReduce(kind, a, bool(include_initial))))


def cumulative_sum(x: Array, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Array:
    """Cumulative sum along ``axis`` (see the module docstring for dtypes and 0-d input)."""
    return _cumulative("sum", x, axis, dtype, include_initial, "cumulative_sum")


def cumulative_prod(x: Array, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Array:
    """Cumulative product along ``axis`` (see the module docstring for dtypes and 0-d input)."""
    return _cumulative("prod", x, axis, dtype, include_initial, "cumulative_prod")
