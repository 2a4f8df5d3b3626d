"""Matrix products through BLAS on CPU: a small native XLA FFI kernel, built on first use.

XLA:CPU's own dot reaches ~0.9x of OpenBLAS on large float32 products and 0.25-0.6x on float64
and complex ones (docs/performance.md), and jaxlib registers no gemm custom-call target. So
xla_array ships ``native/blas_ffi.c``: four FFI handlers ``xla_array_gemm_{nn,nt,tn,tt}`` that
call ?gemm from the OpenBLAS NumPy links (one thread pool for NumPy and xla_array: two pools
spinning on the same cores made alternating calls up to ~2x slower), or, where NumPy has none
(macOS Accelerate, other builds), SciPy's (``scipy.linalg.cython_blas``; SciPy is a dependency
already: jaxlib's LAPACK kernels come from it).

``available()`` builds the kernel library the first time it is asked (``build``: the system C
compiler, cached per user). Without a compiler, or if anything fails, ``available()`` is False
(logged once) and matmul stays on XLA's dot: the kernel is an acceleration, never a
requirement. ``XLA_ARRAY_BLAS=0`` turns it off; ``XLA_ARRAY_BLAS_LIB=scipy`` picks SciPy's
BLAS even where NumPy has OpenBLAS.

Which products use it is decided at record time (``matmul.matmul``) by ``use_blas``.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

from ..core import dtypes as dt
from ..core import flags as _flags
from ..core import registry
from ..core.devices import Device
from ..core.lower import Emitter, tensor_type
from ..core.ops.linalg import layout
from ..core.ops.structural import HEAVY, convert, define
from . import build as _kernels

__all__ = ["available", "error", "use_blas", "TARGETS", "MIN_K", "MIN_MN", "MIN_FLOPS"]

TARGETS = {(ta, tb): f"xla_array_gemm_{'t' if ta else 'n'}{'t' if tb else 'n'}"
           for ta in (False, True) for tb in (False, True)}
_ROUTINES = ("sgemm", "dgemm", "cgemm", "zgemm")

# Which products go to BLAS (measurements in docs/performance.md): a contraction of at least
# MIN_K, both other dimensions at least MIN_MN, and at least MIN_FLOPS multiply-adds. With a
# shorter contraction XLA's dot wins or ties: it fuses the product with its consumers, so the
# m x n result is never written out (float32 pairwise distances, k = 64, and k-means, k = 16,
# ran 10-60% slower through BLAS; float64 pairwise too). Long contractions gain most: X.T @ X
# of 100,000 x 64 data runs 1.7x (float32) and 4x (float64) faster through BLAS. Matrix-vector
# products stay on XLA: OpenBLAS's gemv, called inside an XLA execution, was no faster (also
# when the kernel split it over two threads).
MIN_K = 128
MIN_MN = 32
MIN_FLOPS = 1 << 20
_DTYPES = (dt.float32, dt.float64, dt.complex64, dt.complex128)

_state: dict[str, object] = {}  # which BLAS ("blas_lib") and its integer width ("int64")


def use_blas(dtype: dt.DType, device: object, m: int, n: int, k: int) -> bool:
    """Whether an (m x k) @ (k x n) product of ``dtype`` on ``device`` runs through BLAS."""
    return (k >= MIN_K and min(m, n) >= MIN_MN and m * n * k >= MIN_FLOPS and dtype in _DTYPES
            and type(device) is Device and device.platform == "cpu"  # not a mesh: XLA shards dots
            and _flags.get("blas") and available()
            and (bool(_state["int64"]) or max(m, n, k) < 2**31))  # 32-bit BLAS: XLA's dot


def available() -> bool:
    """Build (once), load and register the BLAS kernels; False if that is not possible here."""
    return _KERNEL.available()


def error() -> str:
    """Why ``available()`` is False ('' when it is not)."""
    return _KERNEL.error


def _numpy_blas() -> list[int] | None:
    """The routines of the OpenBLAS NumPy links (wheels bundle scipy-openblas64: ILP64, symbols
    ``scipy_sgemm_64_``), found among the loaded libraries; None if there is none to use."""
    import numpy as np
    base = os.path.dirname(os.path.dirname(np.__file__))
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            paths = {line.split(None, 5)[-1].strip() for line in f if "openblas" in line}
    except OSError:
        return None
    for path in sorted(p for p in paths if p.startswith(base) and "numpy" in p):
        lib = ctypes.CDLL(path)
        for pattern in ("scipy_{}_64_", "{}_64_", "{}64_"):
            names = [pattern.format(r) for r in _ROUTINES]
            if all(hasattr(lib, n) for n in names):
                _state["blas_lib"] = f"NumPy's {os.path.basename(path)} (ILP64)"
                return [ctypes.cast(getattr(lib, n), ctypes.c_void_p).value or 0 for n in names]
    return None


def _scipy_blas() -> list[int]:
    from scipy.linalg import cython_blas
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = (ctypes.py_object,)
    get_ptr = ctypes.pythonapi.PyCapsule_GetPointer
    get_ptr.restype = ctypes.c_void_p
    get_ptr.argtypes = (ctypes.py_object, ctypes.c_char_p)
    caps = cython_blas.__pyx_capi__
    _state["blas_lib"] = "SciPy's scipy.linalg.cython_blas (LP64)"
    return [get_ptr(caps[r], get_name(caps[r])) for r in _ROUTINES]


def _blas_pointers() -> tuple[list[int], bool]:
    """(the four routines' addresses, whether their integers are 64-bit). NumPy's OpenBLAS is
    preferred: a program mixing NumPy and xla_array then keeps one BLAS thread pool instead of
    two pools spinning against each other on the same cores."""
    lib = _flags.get("blas_lib")
    if lib not in ("auto", "scipy"):
        raise ValueError(f"XLA_ARRAY_BLAS_LIB must be auto or scipy, not {lib!r}")
    if lib == "auto":
        ptrs = _numpy_blas()
        if ptrs is not None:
            return ptrs, True
    return _scipy_blas(), False


def _load() -> None:
    pointers, int64 = _blas_pointers()
    lib = _kernels.library("blas_ffi")
    init = lib.xa_blas_init
    init.restype = ctypes.c_int
    init.argtypes = (ctypes.POINTER(ctypes.c_void_p), ctypes.c_int)
    if init((ctypes.c_void_p * len(pointers))(*pointers), int(int64)) != 2:
        raise RuntimeError("unexpected kernel ABI version")
    for (ta, tb), name in TARGETS.items():
        _kernels.register(lib, f"xa_gemm_{'t' if ta else 'n'}{'t' if tb else 'n'}", name)
    _state["int64"] = int64


_KERNEL = _kernels.Kernel("BLAS matmul kernel", "XLA's dot", _load)


# ---------------------------------------------------------------- the op

def _lower_blas_gemm(e: Emitter, n: Any, a: list) -> str:
    """``op(A) @ op(B)`` per batch element through ``xla_array_gemm_<ta><tb>``."""
    _shape, d, ta, tb = n.attrs
    vals = [convert(e, v, x.shape, x.dtype, d) for v, x in zip(a, n.inputs)]
    lay = layout(len(n.shape), False)
    return e.op("stablehlo.custom_call", vals, tensor_type(n.shape, d),
                f'api_version = 4 : i32, backend_config = {{}}, '
                f'call_target_name = "{TARGETS[(ta, tb)]}", '
                f'operand_layouts = [{lay}, {lay}], result_layouts = [{lay}]')


# inputs (a, b): matrices or stacks with equal batch dims (row-major); attrs: (shape, dtype,
# ta, tb): the product op(a) @ op(b), op transposing the last two dims where the flag is set
define("blas_gemm", lambda ins, attrs: (attrs[0], attrs[1]), _lower_blas_gemm, weight=HEAVY)

registry.register(registry.Kernel("blas", '"xla_array_gemm_', "BLAS matmul kernel", available,
                                  error))
