"""What the host rules share (``ops/host.py``, ``ops/host_linalg.py``) and the evaluator
(``core/hosteval.py``) uses with them."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import graph as _graph

__all__ = ["NotExact", "convert_value", "has_subnormal", "c_ordered", "f_ordered"]


class NotExact(Exception):
    """This node's inputs are ones where the host rule cannot promise the compiled bits."""


def has_subnormal(v: np.ndarray) -> bool:
    """Whether array ``v`` holds a subnormal float32/float64 number, or a complex one with a
    subnormal part (compiled code reads and writes them as zero). One pass in C with the
    graph's C core (``graphcore.c``), else in NumPy in blocks that stay in cache (a
    whole-array test of a 25 MB value made three temporaries as large and took 11 ms)."""
    if v.dtype.kind not in "fc" or not v.size:
        return False
    flat = v.ravel(order="K")  # (a view of a C- or Fortran-ordered value: LAPACK's results)
    if flat.dtype.kind == "c":  # the parts
        flat = flat.view(flat.real.dtype)
    if _SCAN is not None and flat.dtype.itemsize in _FIELDS:
        return _SCAN(flat)
    u, magnitude, mantissa = _FIELDS[flat.dtype.itemsize]
    bits = flat.view(u)
    one = u(1)
    for i in range(0, bits.size, _CHUNK):
        b = bits[i:i + _CHUNK] & magnitude
        b -= one  # no exponent bits and some mantissa: |bits| - 1 < mantissa (0 wraps around)
        if (b < mantissa).any():
            return True
    return False


_SCAN = (getattr(_graph._graphcore, "has_subnormal", None)  # type: ignore[attr-defined]
         if _graph.NATIVE else None)
_TRANSPOSE = (getattr(_graph._graphcore, "transpose_into", None)  # type: ignore[attr-defined]
              if _graph.NATIVE else None)


def c_ordered(v: np.ndarray) -> np.ndarray:
    """``v`` C-ordered: itself where it is; a Fortran-ordered matrix (a stack of them: the last
    two axes swapped C-ordered) through the graph core's tiled transpose (LAPACK's results,
    the transposes the host keeps as views; NumPy's strided copy of a 10,000 x 16 float64
    one took 400-420 us); else NumPy's copy."""
    if v.flags.c_contiguous:
        return v
    if _TRANSPOSE is not None and v.ndim >= 2 and v.dtype.itemsize in (4, 8, 16) and \
            v.size:
        s = v.swapaxes(-1, -2)
        if s.flags.c_contiguous:
            out = np.empty(v.shape, v.dtype)
            _TRANSPOSE(s, out, s.shape[-2], s.shape[-1])
            return out
    return np.ascontiguousarray(v)


def f_ordered(v: np.ndarray) -> np.ndarray:
    """A Fortran-ordered copy of matrix ``v`` (LAPACK's operand, which it overwrites): a
    C-ordered one through the graph core's tiled transpose, else NumPy's copy."""
    if _TRANSPOSE is not None and v.ndim == 2 and v.flags.c_contiguous and \
            v.dtype.itemsize in (4, 8, 16) and v.size:
        out = np.empty(v.shape[::-1], v.dtype)
        _TRANSPOSE(v, out, v.shape[0], v.shape[1])
        return out.T
    return np.array(v, order="F", copy=True)
_CHUNK = 1 << 15
_FIELDS = {8: (np.uint64, np.uint64((1 << 63) - 1), np.uint64((1 << 52) - 1)),
           4: (np.uint32, np.uint32((1 << 31) - 1), np.uint32((1 << 23) - 1))}


def convert_value(v: np.ndarray, dst: Any) -> np.ndarray:
    """``structural.convert``'s value: to bool by ``!= 0``; a float to an integer only inside
    the integer's range (XLA saturates and zeroes NaN where NumPy's cast is undefined)."""
    if v.dtype == dst.np:
        return v
    if v.dtype.kind == "c" and dst.kind != "c":  # the real part first, as the lowering does
        v = v.real
        if v.dtype == dst.np:
            return v
    if dst.kind == "b":
        return v != 0
    if v.dtype.kind == "f" and dst.kind in "iu":
        info = np.iinfo(dst.np)
        with np.errstate(invalid="ignore"):
            ok = (v > float(info.min) - 1.0) & (v < float(info.max) + 1.0)
        if not ok.all():  # NaN, infinities and values off the range
            raise NotExact("float to integer outside the integer's range")
    return v.astype(dst.np)
