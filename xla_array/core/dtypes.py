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
    """A dtype of xla_array: one object per dtype, hashed by identity.

    Among DTypes, equality is identity. As ``numpy.dtype`` does, a DType also compares equal
    to NumPy's spellings of it: ``float32 == np.float32``, ``== np.dtype("float32")``, ``==
    "float32"``, ``== "f4"`` (and ``float64 == float``), without sharing their hashes, so
    DTypes stay usable as dict keys among themselves. ``np.dtype(x.dtype)`` works through the
    ``dtype`` attribute: each DType carries its NumPy dtype in ``.np`` and its StableHLO
    element type in ``.mlir``.
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

    def __eq__(self, other: object) -> _builtin_bool:
        if other is self:
            return True
        if type(other) is DType:  # one object per dtype
            return False
        if isinstance(other, (str, type, np.dtype)):  # NumPy's spellings, as numpy.dtype
            if isinstance(other, str) and other in _BY_NAME:
                return _BY_NAME[other] is self
            try:
                return _builtin_bool(self.np == np.dtype(other))
            except (TypeError, ValueError):
                return False
        return NotImplemented

    __hash__ = object.__hash__  # by identity: fast, and never equal to another DType's

    def __reduce__(self) -> str:
        return self.name

    @property
    def itemsize(self) -> int:
        return self.np.itemsize

    @property
    def type(self) -> Any:
        """NumPy's scalar type of this dtype (``np.float32``), as ``numpy.dtype.type``."""
        return self.np.type

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
    """The DType of a NumPy array's dtype; TypeError for dtypes xla_array does not support
    (a non-native byte order among them: the data's bytes would need swapping)."""
    try:
        return _BY_NP[np.dtype(npdt)]
    except (KeyError, TypeError):
        raise TypeError(f"unsupported dtype {npdt!r}") from None


_PYTHON_TYPES = {_builtin_bool: bool, int: default_int, float: default_float,
                 complex: default_complex}
# every spelling met so far -> its DType (hashable spellings only; only valid ones are kept)
_SPELLINGS: dict[Any, DType] = {**_BY_NAME, **_BY_NP, **_PYTHON_TYPES}


def as_dtype(d: Any) -> DType:
    """The one place a dtype argument is normalized: a DType, or NumPy's spellings of one (a
    ``numpy.dtype``, a NumPy scalar type such as ``np.float32``, a dtype string NumPy reads
    such as ``"float32"`` or ``"<f4"``, Python's ``bool``/``int``/``float``/``complex``).
    TypeError names anything else, and NumPy dtypes xla_array has no counterpart of
    (strings, objects, datetimes, structured dtypes)."""
    if type(d) is DType:
        return d
    try:
        return _SPELLINGS[d]
    except (KeyError, TypeError):  # not met yet, or unhashable
        pass
    if not isinstance(d, (np.dtype, type, str)):
        raise TypeError(f"{d!r} is not a dtype (expected an xla_array dtype or a NumPy dtype)")
    try:
        npd = np.dtype(d)
    except (TypeError, ValueError):
        raise TypeError(f"{d!r} is not a dtype NumPy or xla_array knows") from None
    res = _BY_NP.get(npd)
    if res is None and npd.byteorder not in "=|":  # the same values in the other byte order
        res = _BY_NP.get(npd.newbyteorder("="))
    if res is None:
        given = "" if d is npd else f" (given as {d!r})"
        raise TypeError(f"xla_array has no dtype for NumPy's {npd!r}{given}: its arrays hold "
                        "booleans and numbers")
    _SPELLINGS[d] = res
    return res


def dtype_arg(x: Any, fname: str) -> DType:
    """The DType of an array-or-dtype argument (``finfo``, ``iinfo``, ``can_cast``,
    ``result_type``): an array's (xla_array's, or NumPy's arrays and scalars) or a dtype
    spelled as ``as_dtype`` reads it."""
    if type(x) is DType:
        return x
    if isinstance(x, (np.dtype, type, str)):
        return as_dtype(x)
    d = getattr(x, "dtype", None)
    if type(d) is DType:
        return d
    if isinstance(d, np.dtype):
        return as_dtype(d)
    raise TypeError(f"{fname}() expects an array or a dtype, got {type(x).__name__}")


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
    """The standard's ``result_type``: arrays, dtypes and (2024.12) Python scalars. Dtypes
    may be spelled as NumPy does (``as_dtype``); NumPy arrays and NumPy scalars count with
    their dtypes (NumPy scalars are not weak, as in NumPy and in xla_array's operators)."""
    if not arrays_and_dtypes:
        raise ValueError("at least one array or dtype is required")
    res = None
    scalars = []
    for x in arrays_and_dtypes:
        if type(x) is DType:
            d = x
        elif isinstance(x, (_builtin_bool, int, float, complex)) and not isinstance(
                x, np.generic):
            scalars.append(x)
            continue
        else:
            d = dtype_arg(x, "result_type")
        res = d if res is None else promote(res, d)
    if res is None:
        if not scalars:
            raise ValueError("at least one array or dtype is required")
        res = scalar_default(scalars[0])
        scalars = scalars[1:]
    for s in scalars:
        res = weak_result(res, s)
    return res


def can_cast(from_: Any, to: Any, /) -> _builtin_bool:
    """Whether the standard's promotion graph takes ``from_`` to ``to`` (within a kind:
    bool to bool only, integers to wider integers, floats to wider floats or complex)."""
    d = dtype_arg(from_, "can_cast")
    if type(to) is not DType:
        if not isinstance(to, (np.dtype, type, str)):
            raise TypeError(f"can_cast() takes a dtype as its second argument, got "
                            f"{type(to).__name__}")
        to = as_dtype(to)
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


def finfo(type: Any, /) -> finfo_object:
    d = dtype_arg(type, "finfo")
    if d.kind not in "fc":
        raise TypeError(f"finfo() needs a floating-point dtype, got {d}")
    real = REAL_OF.get(d, d)
    fi = ml_dtypes.finfo(real.np) if real in EXTENSION_FLOATS else np.finfo(real.np)
    return finfo_object(int(fi.bits), float(fi.eps), float(fi.max), float(fi.min),
                        float(fi.smallest_normal), real)


def iinfo(type: Any, /) -> iinfo_object:
    d = dtype_arg(type, "iinfo")
    if d.kind not in "iu":
        raise TypeError(f"iinfo() needs an integer dtype, got {d}")
    ii = np.iinfo(d.np)
    return iinfo_object(int(ii.bits), int(ii.max), int(ii.min), d)


_KINDS = {
    "bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
    "real floating": "f", "complex floating": "c", "numeric": "iufc",
}


def _isdtype_arg(d: Any, what: str) -> DType:
    """A dtype for ``isdtype``: whatever ``as_dtype`` reads (NumPy's ``isdtype`` takes NumPy
    dtypes and scalar types only, but ``np.issubdtype`` and array-api-compat's NumPy
    ``isdtype`` take Python types and dtype strings too, and scikit-learn's ``check_array``
    passes them: ``dtype=float``, ``dtype="int"``)."""
    if type(d) is DType:
        return d
    if isinstance(d, (np.dtype, type, str)):
        return as_dtype(d)
    raise TypeError(f"isdtype() expects a dtype as {what}, got {d!r}")


def isdtype(dtype: Any, kind: Any) -> _builtin_bool:
    if type(dtype) is not DType:
        dtype = _isdtype_arg(dtype, "its first argument")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"unknown dtype kind {kind!r}")
        return dtype.kind in _KINDS[kind]
    if type(kind) is DType or isinstance(kind, (np.dtype, type)):
        return dtype is _isdtype_arg(kind, "kind")
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
