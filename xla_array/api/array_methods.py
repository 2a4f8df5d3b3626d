"""The Array methods that call namespace functions, installed on Array from here (array.py is
below the namespace modules): the Python operators, generated from one table of (dunder,
namespace function) pairs; indexing (``x[key]``, ``x[key] = v``); ``to_device``; ``mT``.

Each binary operator gets its reflected form; arithmetic, bitwise and matmul operators get an
in-place form that records ``x op y`` and rebinds ``x`` (every reference sees the change). An
in-place result must keep ``x``'s shape and dtype (TypeError/ValueError otherwise), as NumPy.
"""

from __future__ import annotations

import inspect
import operator
from typing import Any

import numpy as np

from ..core.graph import TracedScalar
from . import elementwise as _elementwise
from . import views as _views
from .array import Array
from .creation import asarray, to_device
from .dtype_functions import astype
from .indexing import getitem, setitem
from .manipulation import reshape
from .matmul import matmul, matrix_transpose
from .views import is_view_key

_OK = (Array, bool, int, float, complex, np.ndarray, np.generic, TracedScalar)
_FAST = frozenset((Array, int, float))

# dunder stem -> (function, has reflected form, has in-place form)
BINARY: dict[str, tuple[Any, bool, bool]] = {
    "add": (_elementwise.add, True, True),
    "sub": (_elementwise.subtract, True, True),
    "mul": (_elementwise.multiply, True, True),
    "truediv": (_elementwise.divide, True, True),
    "floordiv": (_elementwise.floor_divide, True, True),
    "mod": (_elementwise.remainder, True, True),
    "pow": (_elementwise.pow, True, True),
    "matmul": (matmul, True, True),
    "and": (_elementwise.bitwise_and, True, True),
    "or": (_elementwise.bitwise_or, True, True),
    "xor": (_elementwise.bitwise_xor, True, True),
    "lshift": (_elementwise.bitwise_left_shift, True, True),
    "rshift": (_elementwise.bitwise_right_shift, True, True),
    "lt": (_elementwise.less, False, False),
    "le": (_elementwise.less_equal, False, False),
    "gt": (_elementwise.greater, False, False),
    "ge": (_elementwise.greater_equal, False, False),
    "eq": (_elementwise.equal, False, False),
    "ne": (_elementwise.not_equal, False, False),
}
UNARY = {"neg": _elementwise.negative, "pos": _elementwise.positive,
         "abs": _elementwise.abs, "invert": _elementwise.bitwise_invert}


def _as_operand(other: Any, fn: Any) -> Any:
    if isinstance(other, np.ndarray) or (fn is matmul and not isinstance(other, Array)):
        if not isinstance(other, (np.ndarray, np.generic)):
            return None
        return asarray(other)
    return other


def _make(stem: str, fn: Any, reflected: bool, inplace: bool) -> None:
    def forward(self: Array, other: Any) -> Any:
        if type(other) in _FAST:
            return fn(self, other)
        if not isinstance(other, _OK):
            return NotImplemented
        other = _as_operand(other, fn)
        return NotImplemented if other is None else fn(self, other)

    def reverse(self: Array, other: Any) -> Any:
        if not isinstance(other, _OK):
            return NotImplemented
        other = _as_operand(other, fn)
        return NotImplemented if other is None else fn(other, self)

    def iop(self: Array, other: Any) -> Array:
        if not isinstance(other, _OK):
            return NotImplemented
        other = _as_operand(other, fn)
        self._sync()  # a view refreshes from its base first (see array's module docstring)
        res = fn(self, other)
        if res.shape != self.shape:
            raise ValueError(f"in-place {stem}: the result's shape {res.shape} differs from "
                             f"the array's {self.shape}")
        if res.dtype != self.dtype:  # NumPy's rule: a cast within the kind ("same_kind")
            if not np.can_cast(res.dtype.np, self.dtype.np, casting="same_kind"):
                raise TypeError(f"in-place {stem}: the result's dtype {res.dtype.name} cannot "
                                f"be stored in the array's {self.dtype.name} (NumPy's "
                                f"'same_kind' casting rule)")
            res = astype(res, self.dtype)
        self._rebind(res._node)
        return self

    if hasattr(fn, "dunder"):  # elementwise: the namespace function's fast paths, inlined
        fast, rfast = fn.dunder(forward), fn.rdunder(reverse)
    else:
        fast, rfast = forward, reverse
    for name, f in ((f"__{stem}__", fast), (f"__r{stem}__", rfast if reflected else None),
                    (f"__i{stem}__", iop if inplace else None)):
        if f is not None:
            f.__name__ = f.__qualname__ = name
            setattr(Array, name, f)


def _getitem(self: Array, key: Any) -> Array:
    node = self._node
    out = getitem(self, key)
    if (len(node.shape) > 1 if type(key) is int else is_view_key(key, len(node.shape))):
        _views.attach(out, self, key)
    return out


def _setitem(self: Array, key: Any, value: Any) -> None:
    if self._view is None:
        self._rebind(setitem(self, key, value)._node)
        return
    with _views.LOCK:  # refreshed, written and written back as one step
        self._sync()
        self._rebind(setitem(self, key, value)._node)


def _to_device(self: Array, device: Any, /, *, stream: Any = None) -> Array:
    return to_device(self, device, stream=stream)


def install() -> None:
    for stem, (fn, r, i) in BINARY.items():
        _make(stem, fn, r, i)
    for stem, fn in UNARY.items():  # (the namespace function itself: x is the only argument)
        setattr(Array, f"__{stem}__", fn)
    Array.__array_ufunc__ = _array_ufunc  # type: ignore[attr-defined]
    Array.__array_function__ = _array_function  # type: ignore[attr-defined]
    for name, fn in (("__getitem__", _getitem), ("__setitem__", _setitem),
                     ("to_device", _to_device), ("__round__", _round)):
        fn.__name__ = fn.__qualname__ = name
        setattr(Array, name, fn)
    _views.index_get, _views.index_set = getitem, setitem
    setattr(Array, "mT", property(matrix_transpose))  # noqa: B010
    setattr(Array, "flat", property(FlatIter))  # noqa: B010


def _round(self: Array, ndigits: Any = None) -> Any:
    """``round(x)``: on a 0-d array as on a NumPy scalar (a Python int without ``ndigits``, a
    0-d array with them); on other arrays ``around(x, ndigits or 0)``, lazily (NumPy's arrays
    have no ``__round__``)."""
    around = NUMPY_FORMS["around"]
    if ndigits is None and self.ndim == 0:
        return int(around(self))
    return around(self, operator.index(ndigits) if ndigits is not None else 0)


class FlatIter:
    """``x.flat``, as NumPy's ``flatiter`` for reading: the values in C order, indexed as a
    1-D array (``x.flat[3]``, ``x.flat[1:4]``, ``x.flat[[0, 5]]``: lazy Arrays; an integer
    index gives a 0-d Array), iterated, and ``len``; ``base`` is ``x``."""

    def __init__(self, base: Array) -> None:
        self.base = base

    def _flat(self) -> Array:
        return reshape(self.base, (-1,))

    def __len__(self) -> int:
        return self.base.size  # type: ignore[return-value]

    def __getitem__(self, key: Any) -> Array:
        return _getitem(self._flat(), key)

    def __iter__(self) -> Any:
        return iter(self._flat())

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return np.asarray(self._flat(), dtype=dtype)


# NumPy ufunc name -> our function name, where they differ
_UFUNC_NAMES = {"absolute": "abs", "power": "pow", "true_divide": "divide", "invert":
                "bitwise_invert", "left_shift": "bitwise_left_shift", "right_shift":
                "bitwise_right_shift", "arccos": "acos", "arcsin": "asin", "arctan": "atan",
                "arccosh": "acosh", "arcsinh": "asinh", "arctanh": "atanh", "arctan2": "atan2",
                "conjugate": "conj", "rint": "round"}


def _array_ufunc(self: Array, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """NumPy ufuncs on xla_array arrays: a plain call of a ufunc the namespace has (``np.sign(x)``,
    ``np_array + x``) records our function and stays lazy; anything else (``out=``, methods such
    as ``reduce``, ufuncs we lack) computes the arrays and lets NumPy do it on host values."""
    name = _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__)
    fn = getattr(_elementwise, name, None)
    if method == "__call__" and not kwargs and fn is not None and name in _elementwise.__all__:
        args = [x if isinstance(x, Array) or not isinstance(x, np.ndarray) else
                _as_operand(x, fn) for x in inputs]
        return fn(*args)
    host = [np.asarray(x) if isinstance(x, Array) else x for x in inputs]
    outs = kwargs.get("out")
    if not outs or not any(isinstance(o, Array) for o in outs):
        return getattr(ufunc, method)(*host, **kwargs)
    # out= Arrays: NumPy writes into np.asarray(o), which writes back into o when released
    # (_host.HostCopy); the host copies are released here, and the Arrays are the result
    kwargs["out"] = tuple(np.asarray(o) if isinstance(o, Array) else o for o in outs)
    res = getattr(ufunc, method)(*host, **kwargs)
    del res, kwargs, host
    return outs[0] if len(outs) == 1 else tuple(outs)


# NumPy function -> our function of its name (None: NumPy's own, on host values), resolved
# at the first call. The namespaces that answer sit above this module, so the package
# installs them once it is assembled (``xla_array/__init__.py``): NumPy's module name ->
# xla_array's module (numpy, numpy.linalg, numpy.fft), and NumPy's forms of the names whose
# top-level function keeps the standard's behaviour (``numpy_functions``' functions and its
# ``NUMPY_VERSIONS``, ``std``/``var`` with NumPy's ``ddof``), which win for module ``numpy``
_DISPATCH: dict[Any, Any] = {}
NUMPY_NAMESPACES: dict[str, Any] = {}
NUMPY_FORMS: dict[str, Any] = {}


def _implementation(func: Any) -> Any:
    ns = NUMPY_NAMESPACES.get(func.__module__)
    if ns is None:
        return None
    name = func.__name__
    if func.__module__ == "numpy" and name in NUMPY_FORMS:
        return NUMPY_FORMS[name]
    return getattr(ns, name, None)


def _signature(fn: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _to_host(x: Any) -> Any:
    if isinstance(x, Array):
        return np.asarray(x)
    if isinstance(x, list | tuple):
        return type(x)(_to_host(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_host(v) for k, v in x.items()}
    return x


def _array_function(self: Array, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
    """NEP 18: a NumPy function called with xla_array arrays among its arguments
    (``np.concatenate([x, x])``, ``np.median(x)``) calls xla_array's function of the same name,
    with NumPy's signature (``numpy.linalg``'s and ``numpy.fft``'s too), which records lazily; a
    NumPy function xla_array lacks, or a call whose arguments our function does not take
    (a keyword it has not), runs NumPy's own on host values (``np.asarray`` of each Array) and
    returns NumPy's result."""
    if not all(issubclass(t, Array | np.ndarray) for t in types):
        return NotImplemented
    if func not in _DISPATCH:
        fn = _implementation(func)
        _DISPATCH[func] = (fn, _signature(fn)) if callable(fn) else (None, None)
    fn, sig = _DISPATCH[func]
    if fn is not None:
        try:
            if sig is not None:
                sig.bind(*args, **kwargs)
        except TypeError:
            pass
        else:
            return fn(*args, **kwargs)
    return func(*_to_host(args), **_to_host(kwargs))


install()
