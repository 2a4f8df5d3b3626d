"""NumPy functions outside the array API standard that array-API libraries call anyway
(SciPy's array-API code calls ``xp.diag``; its tests call ``xp.logspace``). Built from the
namespace's own functions."""

from __future__ import annotations

import operator
from typing import Any

from ..core import dtypes as _dtypes
from .array import Array, as_array
from .creation import iota, linspace, zeros
from .dtype_functions import astype
from .elementwise import pow as _pow
from .linalg_ops import diagonal
from .manipulation import concat, reshape
from .searching import where

__all__ = ["diag", "logspace"]


def diag(v: Array, k: int = 0) -> Array:
    """NumPy's ``diag`` (not in the standard; SciPy's array-API code calls it): the ``k``-th
    diagonal of a 2-D array, or the square matrix with the 1-D ``v`` on its ``k``-th diagonal."""
    v = as_array(v, "diag")
    k = operator.index(k)
    if v.ndim == 2:
        return diagonal(v, offset=k)
    if v.ndim != 1:
        raise ValueError(f"diag(): input must be 1-D or 2-D, got {v.ndim}-D")
    n = v.shape[0] + abs(k)
    padded = concat([v, zeros((abs(k),), dtype=v.dtype, device=v.device)]) if k else v
    r = iota((n, n), 0, v.device, _dtypes.int64)
    c = iota((n, n), 1, v.device, _dtypes.int64)
    # row r holds v[r] at column r + k (k >= 0); column c holds v[c] at row c - k (k < 0)
    along = reshape(padded, (n, 1) if k >= 0 else (1, n))
    return where((c - r) == k, along, zeros((), dtype=v.dtype, device=v.device))


def logspace(start: int | float | complex, stop: int | float | complex, /, num: int = 50,
             endpoint: bool = True, base: int | float | complex = 10.0, *, dtype: Any = None,
             device: Any = None) -> Array:
    """NumPy's ``logspace`` (not in the standard; SciPy's tests call it): ``base ** y`` for
    ``y = linspace(start, stop, num, endpoint=endpoint)``, computed as NumPy does, in float64
    (complex128 for a complex start, stop or base), then cast to ``dtype`` (default: the
    default floating-point or complex dtype)."""
    cplx = any(isinstance(v, complex) for v in (start, stop, base))
    wide = _dtypes.complex128 if cplx else _dtypes.float64
    y = linspace(start, stop, num, dtype=wide, device=device, endpoint=endpoint)
    out = _pow(base, y)
    d = _dtypes.default_complex if cplx else _dtypes.default_float
    if dtype is not None:
        d = dtype
    return astype(out, d) if d != out.dtype else out
