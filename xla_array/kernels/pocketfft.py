"""FFTs with NumPy's own pocketfft loops (``native/pocketfft_ffi.c``, ``xla_array_pocketfft``).

XLA's FFT on CPU (DUCC) rounds otherwise than NumPy's pocketfft: most values of an ``rfft``
of 100 points differed from NumPy's in the last bits, and a graph holding one could not run
on the host in the first-use tier (``core/hosteval.py``): the three FFT expressions of the
first-use benchmark were what its session compiled. This kernel calls the very inner loops
NumPy 2 runs for ``numpy.fft`` (the generalized ufuncs of ``numpy.fft._pocketfft_umath``,
through ``ufunc._get_strided_loop``: the loop, its context and auxiliary data, taken once per
process), with the normalization factor NumPy passes them, one axis at a time as NumPy
transforms (``xla_array/fft.py`` records one ``fft`` node per axis in NumPy's order): the
values are NumPy's, and the host rule (``host``) calls the same C function, so host and
compiled bits agree.

Its selection rule is a rewrite of the planned graph (``core/rewrite.py``): an ``fft`` node of
one axis on a CPU device, of a complex64/complex128 (or, for ``rfft``, float32/float64)
operand, with a result of fewer than ``SMALL`` elements and ``fast_math`` off, is lowered as
``pocketfft``. A larger result keeps XLA's FFT, several times faster there (DUCC vectorizes
across rows; on the 2-core machine of docs/performance.md an ``rfft`` along the rows of
256 x 1024 float32 took 2.6 ms with NumPy against 0.66 ms compiled, of 50 x 2000 float64
0.47 against 0.41). Elsewhere (``XLA_ARRAY_POCKETFFT=0``, ``XLA_ARRAY_NATIVE=0``, a NumPy
without these loops) XLA's FFT stays.
"""

from __future__ import annotations

import ctypes
import math
import struct
from typing import Any, NamedTuple

import numpy as np

from ..core import dtypes as dt
from ..core import flags as _flags
from ..core import registry
from ..core.devices import Device
from ..core.lower import Emitter, tensor_type
from ..core.ops.linalg import layout
from ..core.ops.structural import convert, define
from . import library

__all__ = ["TARGET", "SMALL", "Transform", "available", "error", "rule", "host"]

TARGET = "xla_array_pocketfft"
SMALL = 1 << 16
# NumPy's loops in the C table's order (entry 2 * kind + (float64 ? 1 : 0))
_UFUNCS = ("fft", "ifft", "rfft_n_even", "rfft_n_odd", "irfft")
# the dtypes each loop reads and writes: (float32 entry, float64 entry)
_IO = {"fft": (("F", "F"), ("D", "D")), "ifft": (("F", "F"), ("D", "D")),
       "rfft_n_even": (("f", "F"), ("d", "D")), "rfft_n_odd": (("f", "F"), ("d", "D")),
       "irfft": (("F", "f"), ("D", "d"))}


class Transform(NamedTuple):
    """The loop a ``pocketfft`` node calls (its index in the table), the transform's length,
    NumPy's normalization factor, and whether the data is float32 going through the float64
    loop (converted to float64 first, the results rounded back), as NumPy computes a float32
    transform whose factor is the Python int 1 (``norm="backward"``)."""
    number: int
    n: int
    fct: float
    single: bool = False


_CDLL: list = []
_WIDE = [False] * len(_UFUNCS)  # per loop: float32 data with the factor 1 runs the float64 loop


def _load() -> None:
    from numpy.fft import _pocketfft_umath as pfu  # type: ignore[attr-defined]  # (gufuncs)
    lib = library.library("pocketfft_ffi")
    if lib.xa_pocketfft_abi() != 1:
        raise RuntimeError("unexpected kernel ABI version")
    lib.xa_pocketfft_set.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                                     ctypes.c_void_p]
    for k, name in enumerate(_UFUNCS):
        uf = getattr(pfu, name)
        for j, (i, o) in enumerate(_IO[name]):
            real = np.dtype("f" if j == 0 else "d")
            loop = library.numpy_loop(uf, (np.dtype(i), real, np.dtype(o)))
            if lib.xa_pocketfft_set(2 * k + j, *loop) != 1:
                raise RuntimeError(f"NumPy's {name} loop was refused")
        # the loop NumPy picks for float32 data when the factor is the Python int 1
        _WIDE[k] = uf.resolve_dtypes((np.dtype(_IO[name][0][0]), int, None))[0].itemsize \
            == np.dtype(_IO[name][1][0]).itemsize
    lib.xa_pocketfft_host.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                                      ctypes.c_int64, ctypes.c_void_p, ctypes.c_double,
                                      ctypes.c_void_p]
    library.register(lib, "xa_pocketfft", TARGET)
    _CDLL.append(lib)


_LIB = library.NativeLibrary("NumPy-FFT kernel", "XLA's FFT", _load)


def available() -> bool:
    """Load (once) and register the kernel; False if it was not built or cannot be used."""
    return _LIB.available()


def error() -> str:
    """Why ``available()`` is False ('' when it is not)."""
    return _LIB.error


_IN = {"FFT": "c", "IFFT": "c", "RFFT": "f", "IRFFT": "c"}


def rule(n: Any) -> tuple[tuple, Transform] | None:
    """The selection rule (see the module's docstring): (inputs, Transform) or None."""
    d = n.device
    kind, lengths, fct = n.attrs[:3]
    x = n.inputs[0]
    if type(d) is not Device or d.platform != "cpu" or len(lengths) != 1 or \
            _flags._values["fast_math"] or math.prod(n.shape) >= SMALL or \
            x.dtype.kind != _IN[kind] or x.dtype not in _REAL_OF:
        return None
    length = lengths[0]
    k = {"FFT": 0, "IFFT": 1, "IRFFT": 4}.get(kind, 2 + length % 2)
    double = _REAL_OF[x.dtype] is dt.float64
    single = not double and not n.attrs.typed and _WIDE[k]
    return (x,), Transform(2 * k + (double or single), length, fct, single)


_REAL_OF = {dt.float32: dt.float32, dt.float64: dt.float64, dt.complex64: dt.float32,
            dt.complex128: dt.float64}


def _wide(d: Any) -> Any:
    return {dt.float32: dt.float64, dt.complex64: dt.complex128}[d]


def host(n: Any, vals: list, t: Transform) -> np.ndarray:
    """The host rule: the kernel's own C function on the host value (the compiled bits)."""
    v = vals[0]
    d = _wide(n.inputs[0].dtype) if t.single else n.inputs[0].dtype
    x = library.aligned_empty(v.shape, np.dtype(d.np))
    x[...] = v  # (float32 to float64: exact)
    od = _wide(n.dtype) if t.single else n.dtype
    out = library.aligned_empty(n.shape, np.dtype(od.np))
    nin, nout = v.shape[-1], n.shape[-1]
    rows = math.prod(n.shape[:-1])
    if _CDLL[0].xa_pocketfft_host(t.number, rows, nin, nout, x.ctypes.data, t.fct,
                                  out.ctypes.data) != 1:
        raise RuntimeError(f"NumPy's {_UFUNCS[t.number // 2]} loop failed")
    return out.astype(n.dtype.np) if t.single else out  # (rounded to nearest, as XLA's convert)


def _infer(inputs: tuple, attrs: Transform) -> tuple:
    x = inputs[0]
    kind = attrs.number // 2
    real = dt.float64 if attrs.number % 2 and not attrs.single else dt.float32
    nout = attrs.n // 2 + 1 if kind in (2, 3) else attrs.n
    return x.shape[:-1] + (nout,), real if kind == 4 else dt.complex_of(real)


def _lower(e: Emitter, n: Any, a: list) -> str:
    x = n.inputs[0]
    bits = struct.unpack("<q", struct.pack("<d", n.attrs.fct))[0]
    v, rd = a[0], n.dtype
    if n.attrs.single:  # float32 data through the float64 loop
        v = convert(e, v, x.shape, x.dtype, _wide(x.dtype))
        rd = _wide(n.dtype)
    r = e.op("stablehlo.custom_call", [v], tensor_type(n.shape, rd),
             f'api_version = 4 : i32, backend_config = {{loop = array<i64: '
             f'{n.attrs.number}, {bits}>}}, call_target_name = "{TARGET}", '
             f'operand_layouts = [{layout(len(x.shape), False)}], '
             f'result_layouts = [{layout(len(n.shape), False)}]')
    return convert(e, r, n.shape, rd, n.dtype)


POCKETFFT = define("pocketfft", _infer, _lower, attrs=Transform)

registry.register(registry.Kernel(
    kind="pocketfft", title="NumPy-FFT kernel", source="native/pocketfft_ffi.c",
    targets=(TARGET,), op=POCKETFFT, replaces="fft", rule=rule, available=available,
    error=error, flag="pocketfft", host=host))
