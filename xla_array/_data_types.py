"""Data type functions of the namespace: ``astype`` plus re-exports from ``_dtypes``."""

from __future__ import annotations

from typing import Any

from . import _dtypes
from ._array import Array, wrap
from ._dtypes import can_cast, finfo, iinfo, isdtype, result_type
from ._graph import record
from ._ops import OPS

__all__ = ["astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type"]


def astype(x: Array, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Array:
    """Cast ``x`` to ``dtype``. Complex to real keeps the real part; to bool tests != 0."""
    if not isinstance(x, Array):
        raise TypeError(f"astype() expects an array, got {type(x).__name__}")
    d = _dtypes.as_dtype(dtype)
    out = x if d is x.dtype else wrap(record(OPS["convert"], (x._node,), (d,)))
    if device is not None:
        out = out.to_device(device)
    if out is x and copy:
        out = Array(x._node)
    return out
