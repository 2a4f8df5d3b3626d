"""FFTs with NumPy's own pocketfft loops (``native/pocketfft_ffi.c``, ``xla_array_pocketfft``).

XLA's FFT on CPU (DUCC) rounds otherwise than NumPy's pocketfft: most values of an ``rfft``
of 100 points differed from NumPy's in the last bits, and a graph holding one could not run
on the host in the first-use tier (``core/hosteval.py``): the three FFT expressions of the
first-use benchmark were what its session compiled. This kernel calls the very inner loops
NumPy 2 runs for ``numpy.fft`` (the generalized ufuncs of ``numpy.fft._pocketfft_umath``,
through ``ufunc._get_strided_loop``: the loop, its context and auxiliary data, taken once per
process), with the normalization factors NumPy passes them, one axis at a time in NumPy's
order (``core/ops/linalg.fft_steps``; a node holds up to three axes): the values are
NumPy's, and the host rule (``host``) runs the same steps through the same C function, so
host and compiled bits agree.

Its selection rule is a rewrite of the planned graph (``core/rewrite.py``): an ``fft`` node on
a CPU device, of a complex64/complex128 (or, for ``rfft``, float32/float64) operand, each of
whose one-axis results has fewer than ``SMALL`` elements, ``fast_math`` off, is lowered as
``pocketfft``. A larger one keeps XLA's FFT over all its axes at once, several times faster
there (DUCC vectorizes across rows; on the 2-core machine of docs/performance.md an ``rfft``
along the rows of 256 x 1024 float32 took 2.6 ms with NumPy against 0.66 ms compiled, of
50 x 2000 float64 0.47 against 0.41). Elsewhere (``XLA_ARRAY_POCKETFFT=0``,
``XLA_ARRAY_NATIVE=0``, a NumPy without these loops) XLA's FFT stays.
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
from ..core.aligned import address
from ..core.devices import Device
from ..core.lower import Emitter, tensor_type
from ..core.ops.linalg import fft_factors, fft_steps, layout
from ..core.ops.structural import convert, define, i64s
from . import library

__all__ = ["TARGET", "SMALL", "Step", "Transform", "available", "error", "rule", "host"]

TARGET = "xla_array_pocketfft"
SMALL = 1 << 16
# NumPy's loops in the C table's order (entry 2 * kind + (float64 ? 1 : 0))
_UFUNCS = ("fft", "ifft", "rfft_n_even", "rfft_n_odd", "irfft")
# the dtypes each loop reads and writes: (float32 entry, float64 entry)
_IO = {"fft": (("F", "F"), ("D", "D")), "ifft": (("F", "F"), ("D", "D")),
       "rfft_n_even": (("f", "F"), ("d", "D")), "rfft_n_odd": (("f", "F"), ("d", "D")),
       "irfft": (("F", "f"), ("D", "d"))}


class Step(NamedTuple):
    """One axis of a ``pocketfft`` node: its position among the node's trailing axes, the
    loop it calls (its index in the table), the transform's length, NumPy's normalization
    factor, and whether the data is float32 going through the float64 loop (converted to
    float64 first, the results rounded back), as NumPy computes a float32 transform whose
    factor is the Python int 1 (``norm="backward"``)."""
    pos: int
    number: int
    n: int
    fct: float
    single: bool


class Transform(NamedTuple):
    """A ``pocketfft`` node: how many trailing axes it transforms, and its steps in
    numpy.fft's order (``core/ops/linalg.fft_steps``)."""
    k: int
    steps: tuple


_CDLL: list = []
_WIDE = [False] * len(_UFUNCS)  # per loop: float32 data with the factor 1 runs the float64 loop
# per loop: whether float16 data runs the float64 loop, with the factor 1 / with a float16 one
_HALF_WIDE = [(False, False)] * len(_UFUNCS)


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
        half = np.dtype(np.float16)
        _HALF_WIDE[k] = tuple(uf.resolve_dtypes((half, f, None))[1] == np.float64
                              for f in (int, half))
    lib.xa_pocketfft_host.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                                      ctypes.c_int64, ctypes.c_void_p, ctypes.c_double,
                                      ctypes.c_void_p]
    library.register(lib, "xa_pocketfft", TARGET)
    _CDLL.append(lib)


_LIB = library.NativeLibrary("NumPy-FFT kernel", "XLA's FFT", _load, "pocketfft_ffi")


def available() -> bool:
    """Load (once) and register the kernel; False if it was not built or cannot be used."""
    return _LIB.available()


def error() -> str:
    """Why ``available()`` is False ('' when it is not)."""
    return _LIB.error


_IN = {"FFT": "c", "IFFT": "c", "RFFT": "f", "IRFFT": "c"}


_KIND = {"FFT": 0, "IFFT": 1, "IRFFT": 4}


def rule(n: Any) -> tuple[tuple, Transform] | None:
    """The selection rule (see the module's docstring): (inputs, Transform) or None."""
    d = n.device
    x = n.inputs[0]
    kind = n.attrs.kind
    if type(d) is not Device or d.platform != "cpu" or _flags._values["fast_math"] or \
            x.dtype.kind != ("f" if kind == "RFFT" else "c") or x.dtype not in _REAL_OF:
        return None
    double = _REAL_OF[x.dtype] is dt.float64
    steps = []
    k_axes = len(n.attrs.lengths)
    shape, dtype = x.shape, x.dtype
    factors = fft_factors(n.attrs, _REAL_OF[x.dtype])
    for i, ((pos, one, length), (fct, typed)) in enumerate(zip(fft_steps(n.attrs), factors)):
        k = _KIND.get(one, 2 + length % 2)
        if i == 0 and n.attrs.half:  # float16 data: the loop NumPy picks for it
            single = not double and _HALF_WIDE[k][typed]
        else:
            single = not double and not typed and _WIDE[k]
        step = Step(pos, 2 * k + (double or single), length, fct, single)
        shape, dtype = _step_out(shape, dtype, len(shape) - k_axes + pos, step)
        if math.prod(shape) >= SMALL:  # (each step's result under the bound)
            return None
        steps.append(step)
    return (x,), Transform(k_axes, tuple(steps))


_REAL_OF = {dt.float32: dt.float32, dt.float64: dt.float64, dt.complex64: dt.float32,
            dt.complex128: dt.float64}


def _wide(d: Any) -> Any:
    return {dt.float32: dt.float64, dt.complex64: dt.complex128}[d]


def _step_out(shape: tuple, d: Any, axis: int, s: Step) -> tuple[tuple, Any]:
    """The shape and dtype after step ``s`` along ``axis`` of a value of ``shape`` and ``d``."""
    kind = s.number // 2
    real = _REAL_OF[d]
    out = list(shape)
    out[axis] = s.n // 2 + 1 if kind in (2, 3) else s.n
    return tuple(out), real if kind == 4 else dt.complex_of(real)


def _to_end(nd: int, axis: int) -> tuple:
    return tuple(i for i in range(nd) if i != axis) + (axis,)


def host(n: Any, vals: list, t: Transform) -> np.ndarray:
    """The host rule: the kernel's own C function on the host values, step by step (the
    compiled bits)."""
    v = vals[0]
    d = n.inputs[0].dtype
    for s in t.steps:
        axis = v.ndim - t.k + s.pos
        shape, od = _step_out(v.shape, d, axis, s)
        src = np.moveaxis(v, axis, -1)
        x = library.aligned_empty(src.shape, np.dtype((_wide(d) if s.single else d).np))
        x[...] = src  # (float32 to float64: exact)
        tail = tuple(shape[i] for i in _to_end(v.ndim, axis))
        out = library.aligned_empty(tail, np.dtype((_wide(od) if s.single else od).np))
        if _CDLL[0].xa_pocketfft_host(s.number, math.prod(tail[:-1]), src.shape[-1], tail[-1],
                                      address(x), s.fct, address(out)) != 1:
            raise RuntimeError(f"NumPy's {_UFUNCS[s.number // 2]} loop failed")
        if s.single:
            out = out.astype(od.np)  # (rounded to nearest, as XLA's convert)
        v, d = np.moveaxis(out, -1, axis), od
    return np.ascontiguousarray(v)


def _infer(inputs: tuple, attrs: Transform) -> tuple:
    shape, d = inputs[0].shape, inputs[0].dtype
    for s in attrs.steps:
        shape, d = _step_out(shape, d, len(shape) - attrs.k + s.pos, s)
    return shape, d


def _lower(e: Emitter, n: Any, a: list) -> str:
    v, shape, d = a[0], n.inputs[0].shape, n.inputs[0].dtype
    nd = len(shape)
    for s in n.attrs.steps:
        axis = nd - n.attrs.k + s.pos
        out_shape, od = _step_out(shape, d, axis, s)
        perm = _to_end(nd, axis)
        moved = axis != nd - 1
        src_shape = tuple(shape[i] for i in perm)
        dst_shape = tuple(out_shape[i] for i in perm)
        if moved:
            v = e.op("stablehlo.transpose", [v], tensor_type(src_shape, d),
                     f"permutation = {i64s(perm)}")
        ind, rd = (_wide(d), _wide(od)) if s.single else (d, od)
        v = convert(e, v, src_shape, d, ind)  # (float32 data through the float64 loop)
        bits = struct.unpack("<q", struct.pack("<d", s.fct))[0]
        v = e.op("stablehlo.custom_call", [v], tensor_type(dst_shape, rd),
                 f'api_version = 4 : i32, backend_config = {{loop = array<i64: '
                 f'{s.number}, {bits}>}}, call_target_name = "{TARGET}", '
                 f'operand_layouts = [{layout(nd, False)}], '
                 f'result_layouts = [{layout(nd, False)}]')
        v = convert(e, v, dst_shape, rd, od)
        if moved:
            inv = [0] * nd
            for i, p in enumerate(perm):
                inv[p] = i
            v = e.op("stablehlo.transpose", [v], tensor_type(out_shape, od),
                     f"permutation = {i64s(tuple(inv))}")
        shape, d = out_shape, od
    return v


POCKETFFT = define("pocketfft", _infer, _lower, attrs=Transform)

registry.register(registry.Kernel(
    kind="pocketfft", title="NumPy-FFT kernel", source="native/pocketfft_ffi.c",
    targets=(TARGET,), op=POCKETFFT, replaces="fft", rule=rule, available=available,
    present=_LIB.present, error=error, flag="pocketfft", host=host))
