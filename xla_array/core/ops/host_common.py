"""What the host rules share (``ops/host.py``, ``ops/host_linalg.py``) and the evaluator
(``core/hosteval.py``) uses with them."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import graph as _graph

__all__ = ["NotExact", "convert_value", "has_subnormal"]


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
