"""Searching functions: argmax, argmin, where."""

from __future__ import annotations

from typing import Any

from . import _axes, _dtypes
from ._array import Array, operand_nodes, wrap
from ._graph import record
from ._ops import OPS

__all__ = ["argmax", "argmin", "where"]


def _arg(kind: str, x: Any, axis: Any, keepdims: bool) -> Array:
    fname = "arg" + kind
    if not isinstance(x, Array):
        raise TypeError(f"{fname}() expects an array, got {type(x).__name__}")
    if x.dtype.kind == "c":
        raise TypeError(f"{fname}() does not accept complex arrays")
    from ._manipulation import reshape
    if x.dtype is _dtypes.bool:
        from ._data_types import astype
        x = astype(x, _dtypes.uint8)
    if axis is None:
        if x.size == 0:
            raise ValueError(f"{fname}() of an empty array")
        flat = reshape(x, (-1,)) if x.ndim != 1 else x
        out = wrap(record(OPS["argreduce"], (flat._node,), (kind, 0)))
        return reshape(out, (1,) * x.ndim) if keepdims else out
    a = _axes.axis(axis, x.ndim, fname)
    if x.shape[a] == 0:
        raise ValueError(f"{fname}() over an empty axis")
    out = wrap(record(OPS["argreduce"], (x._node,), (kind, a)))
    if keepdims:
        out = reshape(out, tuple(1 if i == a else d for i, d in enumerate(x.shape)))
    return out


def argmax(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    return _arg("max", x, axis, keepdims)


def argmin(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    return _arg("min", x, axis, keepdims)


def where(condition: Array, x1: Any, x2: Any, /) -> Array:
    """Elements of ``x1`` where ``condition`` holds, else of ``x2`` (broadcast together)."""
    if not isinstance(condition, Array):
        raise TypeError(f"where(): condition must be an array, got {type(condition).__name__}")
    a, b = operand_nodes("where", x1, x2) if (isinstance(x1, Array) or isinstance(x2, Array)) \
        else operand_nodes("where", condition, x1)[1:] + operand_nodes("where", condition, x2)[1:]
    d = _dtypes.promote(a.dtype, b.dtype)
    return wrap(record(OPS["select"], (condition._node, a, b), (d,)))
