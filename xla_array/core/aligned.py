"""Host memory as XLA holds it. At XLA's buffer alignment (64 bytes): XLA's CPU client aliases
a host array only at that alignment (a 16- or 32-byte aligned one is copied), and the native
kernels' host rules give their C functions operands aligned as the compiled graph's buffers
are. And int4/uint4 values packed two a byte (``unpack4``). No jaxlib here: the backend
(``put``, ``to_numpy``) and the kernels (``kernels/library.py``) use it. ``address(a)``: where
an array's memory starts (``a.ctypes.data``, from the graph's C core where it is built)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import flags as _flags

__all__ = ["ALIGN", "address", "aligned_empty", "aligned_copy", "unpack4"]

ALIGN = 64


def _ctypes_address(a: np.ndarray) -> int:
    return a.ctypes.data


def _native_address() -> Any:
    if _flags.get("native"):
        try:
            from ._graphcore import data_address  # type: ignore[attr-defined]
        except ImportError:  # (not built: graph.py says why, at its import)
            return None
        return data_address
    return None


# the address of an array's first element: NumPy's ``a.ctypes.data`` makes a ctypes helper
# object per call (~2 us; a host run asked it 3-10 times); the graph core reads the buffer
address: Any = _native_address() or _ctypes_address


def aligned_empty(shape: tuple, d: Any) -> np.ndarray:
    """A C-ordered array of dtype ``d`` at XLA's buffer alignment (its values unset)."""
    size = math.prod(shape) * np.dtype(d).itemsize
    raw = np.empty(size + ALIGN, dtype=np.uint8)
    off = -address(raw) % ALIGN
    return raw[off:off + size].view(d).reshape(shape)


def aligned_copy(x: np.ndarray) -> np.ndarray:
    """A C-ordered copy of ``x`` at XLA's buffer alignment."""
    out = aligned_empty(x.shape, x.dtype)
    np.copyto(out, x)
    return out


def unpack4(packed: np.ndarray, size: int, signed: bool, dtype: np.dtype,
            shape: tuple[int, ...]) -> np.ndarray:
    """The ``size`` int4/uint4 values of XLA's packed host layout (two 4-bit values per byte,
    low nibble first, row-major), read-only, in ``dtype`` and ``shape``."""
    nibbles = np.empty(packed.size * 2, np.uint8)
    nibbles[0::2] = packed & 0x0F
    nibbles[1::2] = packed >> 4
    values = nibbles[:size].astype(np.int8)
    if signed:
        values = (values ^ 8) - 8
    out = values.astype(dtype).reshape(shape)
    out.flags.writeable = False
    return out
