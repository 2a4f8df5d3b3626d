"""Data type functions of the namespace: ``astype`` plus re-exports from ``dtypes``."""

from __future__ import annotations

from typing import Any

from ..core import dtypes as _dtypes
from ..core.dtypes import can_cast, finfo, iinfo, isdtype, result_type
from ..core.graph import record
from ..core.ops.structural import OPS, Convert
from .array import Array, as_array, operand_nodes, wrap

__all__ = ["astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type"]


def astype(x: Array, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Array:
    """Cast ``x`` to ``dtype``.

    Complex to real keeps the real part, as NumPy does (the standard says this should not be
    permitted; use ``real``/``imag`` to be explicit). Complex to bool is True unless both parts
    are zero. Float NaN/inf to integers follows XLA's conversion (saturating). Arrays are
    immutable values here, so ``copy=True`` returns a new handle without copying memory.
    """
    x = as_array(x, "astype")
    d = _dtypes.as_dtype(dtype)
    if d is x.dtype:
        out = x
    elif x.dtype.kind == "c" and d is _dtypes.bool:
        nodes = operand_nodes("astype", x, 0)  # x != 0
        out = wrap(record(OPS["not_equal"], tuple(nodes)))
    elif x.dtype is _dtypes.bool and d.kind in "fc":
        # through uint8: XLA rewrites convert(pred) * y as select(pred, y, 0), losing 0 * inf
        u8 = wrap(record(OPS["convert"], (x._node,), Convert(_dtypes.uint8)))
        out = wrap(record(OPS["convert"], (u8._node,), Convert(d)))
    else:
        out = wrap(record(OPS["convert"], (x._node,), Convert(d)))
    if device is not None:
        out = out.to_device(device)
    if out is x and copy:
        out = Array(x._node)
    return out
