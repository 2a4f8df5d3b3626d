"""Matrix products with NumPy's own BLAS (``native/blas_ffi.c``, ``xla_array_matmul``).

XLA's CPU dot adds the products in an order of its own, so ``a @ b`` differed from NumPy's
in the last bits, and a graph holding a product could not run on the host in the first-use
tier (``core/hosteval.py``): nothing in NumPy computes XLA's bits. Through this kernel a
float32, float64, complex64 or complex128 product calls the CBLAS routine NumPy's ``matmul``
calls (gemm, gemv, dot, or syrk for ``X.T @ X``) from the OpenBLAS NumPy was built with, with
the same arguments: the
product rounds as NumPy's, and the host rule (``host``) calls the very same C function, so a
new graph with products runs on the host with the compiled graph's bits.

Its selection rule is a rewrite of the planned graph (``core/rewrite.py``): a ``dot_general``
on a CPU device whose operands and result share a float or complex dtype, with leading batch
axes, one contracted axis per operand, at most one free axis each (every ``matmul``,
``X.T @ y``, ``tensordot(a, b, 1)`` of matrices and vectors), a result of fewer than
``LARGE`` elements and fewer than ``WORK`` multiply-adds becomes ``blas_matmul`` with a plan:
the sizes and the element strides NumPy would see for the operands. The row pass
(``kernels/rowpass.py``) is tried first (``Kernel.order``). Elsewhere (other dtypes, several
contracted axes, ``fast_math`` on, ``XLA_ARRAY_BLAS=0``, ``XLA_ARRAY_NATIVE=0``, or a NumPy
built with another BLAS than scipy-openblas64, the one of NumPy's wheels) the product stays
XLA's dot.
"""

from __future__ import annotations

import ctypes
import glob
import math
import os
from typing import Any, NamedTuple

import numpy as np

from ..core import dtypes as dt
from ..core import flags as _flags
from ..core import registry
from ..core.aligned import address
from ..core.devices import Device
from ..core.lower import Emitter, tensor_type
from ..core.ops.host_common import c_ordered
from ..core.ops.linalg import layout
from ..core.ops.structural import HEAVY, DotGeneral, _infer_dot, define
from . import library

__all__ = ["TARGET", "Plan", "available", "error", "rule", "host", "blas_library"]

TARGET = "xla_array_matmul"
_DTYPES = {dt.float32: 0, dt.float64: 1, dt.complex64: 2, dt.complex128: 3}
# Products with a result of LARGE elements or more, or of WORK multiply-adds or more, stay
# XLA's dot. XLA fuses a product into the op that reads it (the argmin of k-means' distances,
# the pairwise-distance formula) and never writes it out; and after a multithreaded BLAS call
# OpenBLAS's threads spin for a while, taking the cores XLA's next loops run on. Measured on
# 2 cores: k-means' step (100,000 x 16 float32 points, 32 centroids) 11 ms with XLA's dots,
# 19.7 ms with BLAS for both products, 20.4-23.8 with BLAS for `onehot.T @ x` alone (51
# million multiply-adds); GaussianMixture on 100,000 x 64 float64, a fit in steady state,
# 9.3 s with XLA's dots, 12.3 s with BLAS for the products under LARGE (its M step's
# `resp.T @ X`, 64 x 64 covariances: 19 and 410 million).
LARGE = 1 << 20
WORK = 1 << 24
# NumPy's CBLAS functions the kernel calls, in xa_blas_init's order (scipy-openblas64 names)
_FUNCTIONS = ("sgemm", "dgemm", "sgemv", "dgemv", "sdot", "ddot", "ssyrk", "dsyrk",
              "cgemm", "zgemm", "cgemv", "zgemv", "cdotu_sub", "zdotu_sub", "csyrk", "zsyrk")


class Plan(NamedTuple):
    """A product as the kernel computes it: ``dims`` (the recorded dot's), ``plan`` (the int64
    attribute of blas_ffi.c: dtype, batch, m, n, p, is1_m, is1_n, is2_n, is2_p, same)."""
    dims: DotGeneral
    plan: tuple


def blas_library() -> str:
    """The path of the OpenBLAS NumPy was built with (NumPy's wheels bundle scipy-openblas64
    in ``numpy.libs``, or ``numpy/.dylibs`` on macOS); RuntimeError when there is none."""
    here = os.path.dirname(np.__file__)
    for pattern in (os.path.join(os.path.dirname(here), "numpy.libs", "libscipy_openblas64_*"),
                    os.path.join(here, ".dylibs", "libscipy_openblas64_*")):
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    raise RuntimeError("NumPy was not built with scipy-openblas64 (its wheels' BLAS)")


_CDLL: list = []  # [the kernel library] once loaded


def _load() -> None:
    lib = library.library("blas_ffi")
    if lib.xa_matmul_abi() != 1:
        raise RuntimeError("unexpected kernel ABI version")
    blas = ctypes.CDLL(blas_library())  # (NumPy has loaded it: the same handle)
    fns = (ctypes.c_void_p * len(_FUNCTIONS))()
    for i, name in enumerate(_FUNCTIONS):
        fns[i] = ctypes.cast(getattr(blas, f"scipy_cblas_{name}64_"), ctypes.c_void_p).value
    if lib.xa_blas_init(fns) != 1:
        raise RuntimeError("NumPy's BLAS lacks a CBLAS function")
    lib.xa_matmul_host.argtypes = [ctypes.c_void_p] * 4
    library.register(lib, "xa_matmul", TARGET)
    _CDLL.append(lib)


_LIB = library.NativeLibrary("BLAS matmul kernel", "XLA's dot", _load, "blas_ffi")


def available() -> bool:
    """Load (once) and register the kernel; False if it was not built or cannot be used."""
    return _LIB.available()


def error() -> str:
    """Why ``available()`` is False ('' when it is not)."""
    return _LIB.error


def _side(shape: tuple, b: int, contract: int, lhs: bool) -> tuple[int, int, int, int] | None:
    """(free size, contracted size, stride of the free axis, stride of the contracted axis), in
    elements, as NumPy sees the operand of a matmul (a vector's missing axis: size 1, stride
    0); None for an operand of more than one free axis."""
    rest = shape[b:]
    if len(rest) == 1:
        return 1, rest[0], 0, 1
    if len(rest) != 2:
        return None
    if contract == (1 if lhs else 0):  # stored as NumPy's operand is (untransposed)
        free = rest[0] if lhs else rest[1]
        return (free, rest[1], rest[1], 1) if lhs else (free, rest[0], 1, rest[1])
    free = rest[1] if lhs else rest[0]  # the operand is the transpose of what is stored
    return (free, rest[0], 1, rest[1]) if lhs else (free, rest[1], rest[1], 1)


def rule(n: Any) -> tuple[tuple, Plan] | None:
    """The selection rule (see the module's docstring): (inputs, Plan) or None."""
    d = n.device
    if type(d) is not Device or d.platform != "cpu" or n.dtype not in _DTYPES or \
            _flags._values["fast_math"]:
        return None
    x, y = n.inputs
    if x.dtype is not n.dtype or y.dtype is not n.dtype or math.prod(n.shape) >= LARGE:
        return None
    lb, rb, lc, rc = n.attrs[:4]
    b = len(lb)
    if lb != tuple(range(b)) or rb != lb or len(lc) != 1 or len(rc) != 1:
        return None
    left = _side(x.shape, b, lc[0] - b, True)
    right = _side(y.shape, b, rc[0] - b, False)
    if left is None or right is None:
        return None
    m, k, s1m, s1n = left
    p, _, s2p, s2n = right
    if math.prod(x.shape[:b]) * m * k * p >= WORK:
        return None
    plan = (_DTYPES[n.dtype], math.prod(x.shape[:b]), m, k, p, s1m, s1n, s2n, s2p,
            int(x is y))
    return n.inputs, Plan(n.attrs, plan)


def host(n: Any, vals: list, plan: Plan) -> np.ndarray:
    """The host rule: the kernel's own C function on the host values (the compiled bits)."""
    d = n.dtype.np
    # (row-major operands, as the compiled graph gives the kernel: a transposed view, such as
    # ``(w * X.T) @ X`` leaves, copied in the graph core's tiles)
    a, b = (c_ordered(v) if v.dtype == d else np.ascontiguousarray(v, dtype=d)
            for v in vals[:2])
    out = np.empty(n.shape, dtype=d)
    p = np.asarray(plan.plan, dtype=np.int64)
    if not _CDLL[0].xa_matmul_host(address(p), address(a), address(b),
                                   address(out)):
        raise RuntimeError("the BLAS functions were not set")
    return out


def _infer(inputs: tuple, attrs: Plan) -> tuple:
    return _infer_dot(inputs, attrs.dims)


def _lower(e: Emitter, n: Any, a: list) -> str:
    lays = ", ".join(layout(len(x.shape), False) for x in n.inputs)
    plan = ", ".join(map(str, n.attrs.plan))
    return e.op("stablehlo.custom_call", a, tensor_type(n.shape, n.dtype),
                f'api_version = 4 : i32, backend_config = {{plan = array<i64: {plan}>}}, '
                f'call_target_name = "{TARGET}", operand_layouts = [{lays}], '
                f'result_layouts = [{layout(len(n.shape), False)}]')


BLAS_MATMUL = define("blas_matmul", _infer, _lower, weight=HEAVY, attrs=Plan)

registry.register(registry.Kernel(
    kind="blas", title="BLAS matmul kernel", source="native/blas_ffi.c", targets=(TARGET,),
    op=BLAS_MATMUL, replaces="dot_general", rule=rule, available=available,
    present=_LIB.present, error=error, flag="blas", host=host, order=1))
