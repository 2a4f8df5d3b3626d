"""NumPy's ``polyfit`` and ``roots``: the polynomial functions that need ``linalg`` (the rest
of NumPy's polynomial functions are in ``api/numpy_functions.py``, below ``linalg``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import linalg
from .api import numpy_functions as nf
from .api.array import Array
from .api.dtype_functions import astype
from .api.manipulation import concat, reshape
from .api.statistical import sum as _sum
from .core import dtypes as dt

__all__ = ["polyfit", "roots"]


def polyfit(x: Any, y: Any, deg: int, rcond: Any = None, full: bool = False, w: Any = None,
            cov: Any = False) -> Any:
    """NumPy's ``polyfit``: the least-squares fit of the Vandermonde matrix with its columns
    scaled to unit norm, as NumPy solves it (``lstsq`` with ``rcond = len(x) * eps``)."""
    xa, ya = nf.asarray_like(x), nf.asarray_like(y)
    order = int(deg) + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if xa.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if xa.shape[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if ya.ndim < 1 or ya.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if xa.shape[0] != ya.shape[0]:
        raise TypeError("expected x and y to have same length")
    xa = astype(xa, dt.float64) if xa.dtype.kind in "iub" else xa
    ya = astype(ya, xa.dtype) if ya.dtype.kind in "iub" else ya
    if rcond is None:
        rcond = xa.shape[0] * float(np.finfo(xa.dtype.np).eps)
    lhs = nf.vander(xa, order)
    rhs = ya
    if w is not None:
        wa = nf.asarray_like(w)
        lhs = lhs * wa[:, None]
        rhs = rhs * (wa if rhs.ndim == 1 else wa[:, None])
    scale = (_sum(lhs * lhs, axis=0)) ** 0.5
    lhs = lhs / scale
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = c / scale if c.ndim == 1 else c / scale[:, None]
    if full:
        return c, resids, rank, s, rcond
    if cov:
        raise ValueError("polyfit(cov=True): not supported by xla_array; use full=True and "
                         "the residuals")
    return c


def roots(p: Any) -> Array:
    """NumPy's ``roots``: the eigenvalues of the companion matrix (leading and trailing zeros
    stripped first, as NumPy does; the count of trailing zeros is read from the values)."""
    a = nf.asarray_like(p)
    if a.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    h = np.asarray(a)
    nz = np.nonzero(h)[0]
    if len(nz) == 0:
        return nf.array([], dtype=dt.float64)
    trailing = len(h) - nz[-1] - 1
    a = a[int(nz[0]):int(nz[-1]) + 1]
    if a.dtype.kind in "iub":
        a = astype(a, dt.float64)
    n = a.shape[0]
    if n > 1:
        row = reshape(-a[1:] / a[0], (1, n - 1))
        below = nf.xp.eye(n - 2, n - 1, dtype=a.dtype) if n > 2 else None
        comp = concat([row, below]) if below is not None else row
        r = linalg.eigvals(comp)
        if not bool(nf.xp.any(nf.xp.imag(r) != 0)):  # NumPy's eigvals: real when it can be
            r = nf.xp.real(r)
    else:
        r = nf.xp.zeros((0,), dtype=dt.complex128 if a.dtype == dt.float64 else a.dtype)
    if trailing:
        r = concat([r, nf.xp.zeros((int(trailing),), dtype=r.dtype)])
    return r
