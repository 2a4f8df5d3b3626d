"""Transcendental functions with NumPy's own loops (``native/ufunc_ffi.c``, ``xla_array_ufunc``).

XLA's ``exp``, ``log``, ``sin``, ``pow``... and the accurate forms of ``core/ops/libm.py``
round otherwise than NumPy's (glibc's functions, NumPy's SIMD loops), so their results differed
from NumPy's in the last bits, and a graph using one could not run on the host in the
first-use tier (``core/hosteval.py``). This kernel calls the very inner loop NumPy runs for a
contiguous array of that dtype (``ufunc._get_strided_loop``, NumPy's interface for calling
its loops from C: the loop, its context and auxiliary data, taken once per process): the
values are NumPy's, and the host rule (``host``) calls the same C function with the same
length and a buffer of the same alignment, so host and compiled bits agree.

Its selection rule is a rewrite of the planned graph (``core/rewrite.py``): a node of one of
``NUMPY``'s ops on a CPU device with a float32 or float64 result (integer or float operands
converted to it first), or ``abs`` of a complex64/complex128 operand (``COMPLEX_IN``: NumPy's
``absolute`` loop, whose scaling XLA's complex absolute value does not share),
``fast_math`` off, with a result of fewer than ``blas.LARGE`` elements, is lowered as
``ufunc_loop``. A larger result keeps XLA's form: XLA splits such a loop over every core and
fuses it with its neighbours, the kernel is one call on one thread (on the 2-core machine of
docs/performance.md the two are at par at 4 million elements: softmax over 2048 x 2048 took
2.8-4.4 ms through NumPy's loops against 4.4-5.4 with XLA's forms in float32, 17.8-18.5
against 17.5-22.0 in float64; with more cores XLA's side gains). Elsewhere (float16,
complex, ``XLA_ARRAY_UFUNC=0``, ``XLA_ARRAY_NATIVE=0``, a NumPy without
``_get_strided_loop``) XLA's forms stay.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any, NamedTuple

import numpy as np

from ..core import dtypes as dt
from ..core import flags as _flags
from ..core import registry
from ..core.aligned import address
from ..core.devices import Device
from ..core.lower import Emitter, tensor_type
from ..core.ops.linalg import layout
from ..core.ops.structural import bcast, broadcast_shapes, convert, define
from . import library
from .blas import LARGE

__all__ = ["TARGET", "NUMPY", "COMPLEX_IN", "Loop", "available", "error", "rule", "host"]

TARGET = "xla_array_ufunc"
# op name -> NumPy's ufunc; the table's order numbers the loops (the ``loop`` attribute of
# executables on disk: append only)
NUMPY = {"exp": "exp", "expm1": "expm1", "log": "log", "log1p": "log1p", "log2": "log2",
         "log10": "log10", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin",
         "acos": "arccos", "atan": "arctan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
         "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "atan2": "arctan2",
         "pow": "power", "hypot": "hypot", "logaddexp": "logaddexp"}
# ops of a complex operand with a real result of its precision (XLA's complex absolute value
# scales otherwise than NumPy's): numbered after NUMPY's loops (append only too)
COMPLEX_IN = {"abs": "absolute"}
_DTYPES = (dt.float32, dt.float64)
_INDEX = {(name, d): 2 * i + j for i, name in enumerate(NUMPY) for j, d in enumerate(_DTYPES)}
_INDEX.update({(name, d): 2 * (len(NUMPY) + i) + j for i, name in enumerate(COMPLEX_IN)
               for j, d in enumerate(_DTYPES)})
_NAMES = {**NUMPY, **COMPLEX_IN}


class Loop(NamedTuple):
    """The loop a ``ufunc_loop`` node calls: the op's name and its index in the table."""
    name: str
    number: int


_CDLL: list = []


def _load() -> None:
    lib = library.library("ufunc_ffi")
    if lib.xa_ufunc_abi() != 2:
        raise RuntimeError("unexpected kernel ABI version")
    lib.xa_ufunc_set.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                                 ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
    lib.xa_ufunc_set_input.argtypes = [ctypes.c_int64, ctypes.c_int]
    for (name, d), i in _INDEX.items():
        uf = getattr(np, _NAMES[name])
        nd = np.dtype(d.np)
        ind = np.dtype(dt.complex_of(d).np) if name in COMPLEX_IN else nd
        loop = library.numpy_loop(uf, (ind,) * uf.nin + (nd,),
                                  (ind.itemsize,) * uf.nin + (nd.itemsize,))
        if lib.xa_ufunc_set(i, *loop, uf.nin, nd.itemsize) != 1 or \
                (ind != nd and lib.xa_ufunc_set_input(i, ind.itemsize) != 1):
            raise RuntimeError(f"NumPy's {_NAMES[name]} loop was refused")
    lib.xa_ufunc_host.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                                  ctypes.c_void_p]
    library.register(lib, "xa_ufunc", TARGET)
    _CDLL.append(lib)


_LIB = library.NativeLibrary("NumPy-loop kernel", "XLA's functions", _load, "ufunc_ffi")


def available() -> bool:
    """Load (once) and register the kernel; False if it was not built or cannot be used."""
    return _LIB.available()


def error() -> str:
    """Why ``available()`` is False ('' when it is not)."""
    return _LIB.error


def rule(n: Any) -> tuple[tuple, Loop] | None:
    """The selection rule (see the module's docstring): (inputs, Loop) or None."""
    d = n.device
    if type(d) is not Device or d.platform != "cpu" or n.dtype not in _DTYPES or \
            _flags._values["fast_math"] or math.prod(n.shape) >= LARGE:
        return None
    if n.op.name in COMPLEX_IN:  # (a complex operand of the result's precision)
        if n.inputs[0].dtype is not dt.complex_of(n.dtype):
            return None
    elif any(x.dtype.kind not in "iuf" for x in n.inputs):
        return None  # (integer operands are converted first, as NumPy's casting loops do)
    return n.inputs, Loop(n.op.name, _INDEX[n.op.name, n.dtype])


def _aligned(v: np.ndarray, shape: tuple, d: Any) -> np.ndarray:
    """``v`` broadcast to ``shape`` and converted to ``d``, C-ordered at XLA's buffer
    alignment: ``v`` itself when it is so, else a copy (integers to floats round to nearest,
    as the lowering's convert does)."""
    if v.shape == shape and v.dtype == d and v.flags.c_contiguous and \
            address(v) % library.ALIGN == 0:
        return v
    out = library.aligned_empty(shape, d)
    out[...] = np.broadcast_to(v, shape)
    return out


# the operand pointer arrays' ctypes types, held (a type made per call was freed with it, a
# cycle left to the garbage collector, and made again at the next call)
_POINTERS = [ctypes.c_void_p * k for k in range(4)]


def host(n: Any, vals: list, loop: Loop) -> np.ndarray:
    """The host rule: the kernel's own C function on the host values (the compiled bits)."""
    d = np.dtype(n.dtype.np)
    ind = np.dtype(dt.complex_of(n.dtype).np) if loop.name in COMPLEX_IN else d
    ins = [_aligned(v, n.shape, ind) for v in vals]
    out = library.aligned_empty(n.shape, d)
    ptrs = _POINTERS[len(ins)](*[address(v) for v in ins])
    if _CDLL[0].xa_ufunc_host(loop.number, math.prod(n.shape), ptrs, address(out)) != 1:
        raise RuntimeError(f"NumPy's {_NAMES[loop.name]} loop failed")
    return out


def _infer(inputs: tuple, attrs: Loop) -> tuple:
    return broadcast_shapes(*[x.shape for x in inputs]), _DTYPES[attrs.number % 2]


def _lower(e: Emitter, n: Any, a: list) -> str:
    d, shape = n.dtype, n.shape
    ind = dt.complex_of(d) if n.attrs.name in COMPLEX_IN else d
    args = [bcast(e, convert(e, v, x.shape, x.dtype, ind), x.shape, shape, ind)
            for v, x in zip(a, n.inputs)]
    lay = layout(len(shape), False)
    return e.op("stablehlo.custom_call", args, tensor_type(shape, d),
                f'api_version = 4 : i32, backend_config = {{loop = array<i64: '
                f'{n.attrs.number}>}}, call_target_name = "{TARGET}", '
                f'operand_layouts = [{", ".join([lay] * len(args))}], result_layouts = [{lay}]')


UFUNC_LOOP = define("ufunc_loop", _infer, _lower, attrs=Loop)

registry.register(registry.Kernel(
    kind="ufunc", title="NumPy-loop kernel", source="native/ufunc_ffi.c", targets=(TARGET,),
    op=UFUNC_LOOP, replaces=(*NUMPY, *COMPLEX_IN), rule=rule, available=available,
    present=_LIB.present, error=error, flag="ufunc", host=host))
