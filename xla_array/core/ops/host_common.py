"""What the host rules share (``ops/host.py``, ``ops/host_linalg.py``) and the evaluator
(``core/hosteval.py``) uses with them."""

from __future__ import annotations

import numpy as np

from .. import graph as _graph

__all__ = ["NotExact", "has_subnormal"]


class NotExact(Exception):
    """This node's inputs are ones where the host rule cannot promise the compiled bits."""


def has_subnormal(v: np.ndarray) -> bool:
    """Whether array ``v`` holds a subnormal float32/float64 number (compiled code reads and
    writes them as zero). One pass in C with the graph's C core (``graphcore.c``), else in
    NumPy in blocks that stay in cache (a whole-array test of a 25 MB value made three
    temporaries as large and took 11 ms)."""
    if v.dtype.kind != "f" or not v.size:
        return False
    flat = v.ravel(order="K")  # (a view of a C- or Fortran-ordered value: LAPACK's results)
    if _SCAN is not None and v.dtype.itemsize in _FIELDS:
        return _SCAN(flat)
    u, magnitude, mantissa = _FIELDS[v.dtype.itemsize]
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
