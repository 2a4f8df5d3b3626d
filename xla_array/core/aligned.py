"""Host memory at XLA's buffer alignment (64 bytes): XLA's CPU client aliases a host array only
at that alignment (a 16- or 32-byte aligned one is copied), and the native kernels' host rules
give their C functions operands aligned as the compiled graph's buffers are. No jaxlib here:
the backend (``put``) and the kernels (``kernels/library.py``) both use it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["ALIGN", "aligned_empty", "aligned_copy"]

ALIGN = 64


def aligned_empty(shape: tuple, d: Any) -> np.ndarray:
    """A C-ordered array of dtype ``d`` at XLA's buffer alignment (its values unset)."""
    size = math.prod(shape) * np.dtype(d).itemsize
    raw = np.empty(size + ALIGN, dtype=np.uint8)
    off = -raw.ctypes.data % ALIGN
    return raw[off:off + size].view(d).reshape(shape)


def aligned_copy(x: np.ndarray) -> np.ndarray:
    """A C-ordered copy of ``x`` at XLA's buffer alignment."""
    out = aligned_empty(x.shape, x.dtype)
    np.copyto(out, x)
    return out
