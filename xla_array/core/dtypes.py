"""Data types: dtype objects, categories, promotion with weak Python scalars, finfo/iinfo.

The standard dtypes follow the array API promotion table; where the standard leaves a
promotion unspecified (mixed kinds: int with float, signed with uint64, bool with numbers)
we follow NumPy 2. The ml_dtypes extension types (bfloat16, float8) promote like this:
bfloat16 with float16 gives float32; any extension float with a wider standard float gives
the wider one; with an integer it stays the extension float.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

__all__ = [
    "DType", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
    "float8_e4m3fn", "float8_e5m2", "result_type", "can_cast", "finfo", "iinfo", "isdtype",
]

_builtin_bool = bool


class DType:
    """A dtype of xla_array. Compares equal only to itself (and is hashable).

    ``np.dtype(x.dtype)`` works through ``.np`` / ``__array__``-free conversion: each DType
    carries its NumPy dtype in ``.np`` and its StableHLO element type in ``.mlir``.
    """

    __slots__ = ("name", "np", "mlir", "kind", "bits")

    def __init__(self, name: str, npdt: Any, mlir: str, kind: str) -> None:
        self.name = name
        self.np = np.dtype(npdt)
        self.mlir = mlir
        self.kind = kind  # 'b', 'i', 'u', 'f', 'c'
        self.bits = self.np.itemsize * 8

    def __repr__(self) -> str:
        return f"xla_array.{self.name}"

    def __str__(self) -> str:
        return self.name

    # equality and hashing are by identity (the default): one object per dtype, and fast

    def __reduce__(self) -> str:
        return self.name

    @property
    def itemsize(self) -> int:
        return self.np.itemsize

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype: ``np.dtype(d)`` and ``a.astype(d)`` read this attribute."""
        return self.np


bool = DType("bool", np.bool_, "i1", "b")
int8 = DType("int8", np.int8, "i8", "i")
int16 = DType("int16", np.int16, "i16", "i")
int32 = DType("int32", np.int32, "i32", "i")
int64 = DType("int64", np.int64, "i64", "i")
uint8 = DType("uint8", np.uint8, "ui8", "u")
uint16 = DType("uint16", np.uint16, "ui16", "u")
uint32 = DType("uint32", np.uint32, "ui32", "u")
uint64 = DType("uint64", np.uint64, "ui64", "u")
float16 = DType("float16", np.float16, "f16", "f")
bfloat16 = DType("bfloat16", ml_dtypes.bfloat16, "bf16", "f")
float32 = DType("float32", np.float32, "f32", "f")
float64 = DType("float64", np.float64, "f64", "f")
complex64 = DType("complex64", np.complex64, "complex<f32>", "c")
complex128 = DType("complex128", np.complex128, "complex<f64>", "c")
float8_e4m3fn = DType("float8_e4m3fn", ml_dtypes.float8_e4m3fn, "f8E4M3FN", "f")
float8_e5m2 = DType("float8_e5m2", ml_dtypes.float8_e5m2, "f8E5M2", "f")

STANDARD = (bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
            float32, float64, complex64, complex128)
ALL = STANDARD + (float16, bfloat16, float8_e4m3fn, float8_e5m2)
EXTENSION_FLOATS = (bfloat16, float8_e4m3fn, float8_e5m2)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}

default_float = float64
default_int = int64
default_complex = complex128
default_index = int64

_COMPLEX_OF = {float16: complex64, bfloat16: complex64, float32: complex64, float64: complex128,
               float8_e4m3fn: complex64, float8_e5m2: complex64}
REAL_OF = {complex64: float32, complex128: float64}


def complex_of(d: DType) -> DType:
    return _COMPLEX_OF.get(d, d)


def from_numpy(npdt: Any) -> DType:
    """The DType of a NumPy dtype; TypeError for dtypes xla_array does not support."""
    try:
        return _BY_NP[np.dtype(npdt)]
    except (KeyError, TypeError):
        raise TypeError(f"unsupported dtype {npdt!r}") from None


def as_dtype(d: Any) -> DType:
    """Accept a DType (or, for interop, a NumPy dtype or dtype name)."""
    if isinstance(d, DType):
        return d
    if isinstance(d, str) and d in _BY_NAME:
        return _BY_NAME[d]
    if d is _builtin_bool:
        return bool
    if d is int:
        return default_int
    if d is float:
        return default_float
    if d is complex:
        return default_complex
    try:
        return from_numpy(d)
    except TypeError:
        raise TypeError(f"{d!r} is not an xla_array dtype") from None


def _promote_pair(a: DType, b: DType) -> DType:
    if a is b:
        return a
    ext = a in EXTENSION_FLOATS or b in EXTENSION_FLOATS or a is float16 or b is float16
    if ext and (a in EXTENSION_FLOATS or b in EXTENSION_FLOATS):
        x, y = (a, b) if a in EXTENSION_FLOATS else (b, a)
        if y.kind in "biu":
            return x
        if y.kind == "c":
            return y
        if y in EXTENSION_FLOATS or y is float16:
            return float32
        return y  # float32 / float64
    return from_numpy(np.promote_types(a.np, b.np))


_TABLE: dict[tuple[DType, DType], DType] = {(a, b): _promote_pair(a, b) for a in ALL for b in ALL}


def promote(a: DType, b: DType) -> DType:
    return _TABLE[a, b]


def weak_result(d: DType, value: Any) -> DType:
    """Dtype of ``array(d) op python_scalar`` (NEP 50 weak scalars, as the standard asks)."""
    t = type(value)
    if t is float:
        return d if d.kind in "fc" else default_float
    if t is _builtin_bool or isinstance(value, (np.bool_,)):
        return d
    if isinstance(value, int):
        return d if d is not bool else default_int
    if isinstance(value, float):
        return d if d.kind in "fc" else default_float
    if isinstance(value, complex):
        return d if d.kind == "c" else complex_of(d) if d.kind == "f" else default_complex
    raise TypeError(f"unsupported Python scalar type {t.__name__}")


def scalar_default(value: Any) -> DType:
    """Dtype of a Python scalar standing alone (``asarray(1.0)``)."""
    if isinstance(value, (_builtin_bool, np.bool_)):
        return bool
    if isinstance(value, int):
        return default_int
    if isinstance(value, float):
        return default_float
    if isinstance(value, complex):
        return default_complex
    raise TypeError(f"unsupported Python scalar type {type(value).__name__}")


def result_type(*arrays_and_dtypes: Any) -> DType:
    """The standard's ``result_type``: arrays, dtypes and (2024.12) Python scalars."""
    if not arrays_and_dtypes:
        raise ValueError("at least one array or dtype is required")
    res = None
    scalars = []
    for x in arrays_and_dtypes:
        if isinstance(x, (_builtin_bool, int, float, complex)) and not isinstance(x, DType):
            scalars.append(x)
            continue
        d = x if isinstance(x, DType) else getattr(x, "dtype", None)
        if not isinstance(d, DType):
            raise TypeError(f"result_type() got {type(x).__name__}, not an array or dtype")
        res = d if res is None else promote(res, d)
    if res is None:
        if not scalars:
            raise ValueError("at least one array or dtype is required")
        res = scalar_default(scalars[0])
        scalars = scalars[1:]
    for s in scalars:
        res = weak_result(res, s)
    return res


def can_cast(from_: Any, to: DType, /) -> _builtin_bool:
    """Whether the standard's promotion graph takes ``from_`` to ``to`` (within a kind:
    bool to bool only, integers to wider integers, floats to wider floats or complex)."""
    d = from_ if isinstance(from_, DType) else getattr(from_, "dtype", None)
    if not isinstance(d, DType) or not isinstance(to, DType):
        raise TypeError("can_cast() takes an array or dtype and a dtype")
    if d is to:
        return True
    if d.kind == "b" or to.kind == "b":  # the standard promotes bool with nothing else
        return False
    if d in EXTENSION_FLOATS or to in EXTENSION_FLOATS or float16 in (d, to):
        return to.kind in "fc" and promote(d, to) is to
    return _builtin_bool(np.can_cast(d.np, to.np, casting="safe")) and not (
        d.kind in "iu" and to.kind in "fc")


@dataclass(frozen=True)
class finfo_object:
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: DType


@dataclass(frozen=True)
class iinfo_object:
    bits: int
    max: int
    min: int
    dtype: DType


def _dtype_of(x: Any) -> DType:
    if isinstance(x, DType):
        return x
    d = getattr(x, "dtype", None)
    if isinstance(d, DType):
        return d
    raise TypeError(f"expected an array or dtype, got {type(x).__name__}")


def finfo(type: Any, /) -> finfo_object:
    d = _dtype_of(type)
    if d.kind not in "fc":
        raise TypeError(f"finfo() needs a floating-point dtype, got {d}")
    real = REAL_OF.get(d, d)
    fi = ml_dtypes.finfo(real.np) if real in EXTENSION_FLOATS else np.finfo(real.np)
    return finfo_object(int(fi.bits), float(fi.eps), float(fi.max), float(fi.min),
                        float(fi.smallest_normal), real)


def iinfo(type: Any, /) -> iinfo_object:
    d = _dtype_of(type)
    if d.kind not in "iu":
        raise TypeError(f"iinfo() needs an integer dtype, got {d}")
    ii = np.iinfo(d.np)
    return iinfo_object(int(ii.bits), int(ii.max), int(ii.min), d)


_KINDS = {
    "bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
    "real floating": "f", "complex floating": "c", "numeric": "iufc",
}


def isdtype(dtype: DType, kind: Any) -> _builtin_bool:
    if not isinstance(dtype, DType):
        raise TypeError(f"isdtype() expects a dtype, got {type(dtype).__name__}")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, DType):
        return dtype is kind
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"unknown dtype kind {kind!r}")
        return dtype.kind in _KINDS[kind]
    raise TypeError(f"isdtype() kind must be a dtype, a string or a tuple, got {kind!r}")


def check_category(d: DType, category: str, fname: str) -> None:
    """Raise TypeError when ``d`` is outside the op's accepted category."""
    if d.kind not in _CATEGORY[category]:
        raise TypeError(f"{fname}() does not accept dtype {d.name} (needs {category} dtypes)")


_CATEGORY = {
    "any": "biufc", "numeric": "iufc", "real numeric": "iuf", "integer": "iu",
    "integer or boolean": "biu", "boolean": "b", "floating-point": "fc",
    "real floating-point": "f", "complex floating-point": "c",
}
