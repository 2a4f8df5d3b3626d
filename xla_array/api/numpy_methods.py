"""NumPy's array methods on Array: ``x.sum()``, ``x.reshape(2, 3)``, ``x.view(np.uint64)``...

The standard's array object has operators and a few attributes only; code written for NumPy (and
libraries that fall back to it, such as SciPy's ``nsum`` or ``RBFInterpolator``) calls methods.
Each method here is the namespace function under NumPy's signature: ``axis=None`` flattens where
NumPy's does (``argmax``, ``cumsum``), ``ddof`` is the standard's ``correction``, ``out=`` writes
the result into ``out`` as ``out[...] = result`` would, and ``sort``/``fill`` work in place, as
in NumPy. Nothing here computes anything: every method records ops like the functions do.
"""

from __future__ import annotations

import operator
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..core import axes as _axes
from ..core import dtypes as _dtypes
from ..core.graph import record
from ..core.ops import structural as _ops
from ..core.ops.structural import Bitcast
from . import (
    creation,
    dtype_functions,
    elementwise,
    manipulation,
    matmul,
    searching,
    sorting,
    statistical,
    utility,
)
from .array import Array, wrap
from .linalg_ops import diagonal as _diagonal

__all__ = ["install"]


# the namespace functions the methods call, by name (this module sits below the package's
# __init__, which assembles the same functions into the namespace)
xp = SimpleNamespace(**{name: getattr(m, name) for m in (
    creation, dtype_functions, elementwise, manipulation, matmul, searching, sorting, statistical,
    utility) for name in m.__all__})


def _out(result: Array, out: Any) -> Array:
    if out is None:
        return result
    if isinstance(out, tuple):
        if len(out) != 1:
            raise TypeError(f"out= takes one array here, got a tuple of {len(out)}")
        out = out[0]
    if not isinstance(out, Array):
        raise TypeError(f"out= must be an xla_array Array, got {type(out).__name__}")
    if out.shape != result.shape:
        raise ValueError(f"out= has shape {out.shape}, the result has shape {result.shape}")
    out[...] = result
    return out


def _reduction(name: str, with_dtype: bool) -> Any:
    def method(self: Array, axis: Any = None, dtype: Any = None, out: Any = None,
               keepdims: bool = False, **kwargs: Any) -> Array:
        if kwargs:
            raise TypeError(f"{name}() got unexpected keyword arguments {sorted(kwargs)}")
        fn = getattr(xp, name)
        x = self
        if dtype is not None:
            if not with_dtype:
                raise TypeError(f"{name}() got an unexpected keyword argument 'dtype'")
            if name in ("sum", "prod"):
                return _out(fn(x, axis=axis, dtype=dtype, keepdims=keepdims), out)
            x = xp.astype(x, dtype)
        return _out(fn(x, axis=axis, keepdims=keepdims), out)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"NumPy's ``x.{name}(axis, ...)``: ``xla_array.{name}(x, axis=...)``."
    return method


def _moment(name: str) -> Any:
    def method(self: Array, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
               keepdims: bool = False, *, correction: Any = None) -> Array:
        x = self if dtype is None else xp.astype(self, dtype)
        c = ddof if correction is None else correction
        return _out(getattr(xp, name)(x, axis=axis, correction=c, keepdims=keepdims), out)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"NumPy's ``x.{name}(axis, dtype, out, ddof, keepdims)``."
    return method


def _flat_axis(name: str, fname: str) -> Any:
    """argmax/argmin/cumsum/cumprod: ``axis=None`` works on the flattened array, as NumPy's."""
    def method(self: Array, axis: Any = None, *args: Any, out: Any = None, **kwargs: Any) -> Array:
        x = self
        if axis is None:
            x, axis = xp.reshape(x, (-1,)), 0
        if name in ("cumsum", "cumprod"):
            dtype = args[0] if args else kwargs.pop("dtype", None)
            res = getattr(xp, fname)(x, axis=axis, dtype=dtype, **kwargs)
        else:
            res = getattr(xp, fname)(x, axis=axis, **kwargs)
        return _out(res, out)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"NumPy's ``x.{name}(axis=None, ...)``; ``axis=None`` flattens."
    return method


def _shape_args(args: tuple, what: str) -> tuple:
    if len(args) == 1 and (args[0] is None or not isinstance(args[0], int)):
        return tuple(args[0]) if args[0] is not None else ()
    try:
        return tuple(operator.index(a) for a in args)
    except TypeError:
        raise TypeError(f"{what}: integers or one sequence of integers expected, got "
                        f"{args!r}") from None


def reshape(self: Array, *shape: Any, order: str = "C", copy: Any = None) -> Array:
    """NumPy's ``x.reshape(2, 3)`` / ``x.reshape((2, 3))``, ``order`` 'C' or 'F'."""
    new = _shape_args(shape, "reshape")
    if order in ("C", "A"):
        return xp.reshape(self, new, copy=copy)
    if order != "F":
        raise ValueError(f"order must be one of 'C', 'F', 'A', got {order!r}")
    rev = lambda a: xp.permute_dims(a, tuple(range(a.ndim))[::-1])  # noqa: E731
    return rev(xp.reshape(rev(self), new[::-1], copy=copy))


def transpose(self: Array, *axes: Any) -> Array:
    """NumPy's ``x.transpose()`` (axes reversed), ``x.transpose(1, 0)``, ``x.transpose((1, 0))``."""
    perm = _shape_args(axes, "transpose") if axes and axes != (None,) else ()
    return xp.permute_dims(self, perm or tuple(range(self.ndim))[::-1])


def swapaxes(self: Array, axis1: int, axis2: int) -> Array:
    perm = list(range(self.ndim))
    a, b = _axes.axis(axis1, self.ndim, "swapaxes"), _axes.axis(axis2, self.ndim, "swapaxes")
    perm[a], perm[b] = perm[b], perm[a]
    return xp.permute_dims(self, tuple(perm))


def ravel(self: Array, order: str = "C") -> Array:
    return reshape(self, -1, order=order)


def flatten(self: Array, order: str = "C") -> Array:
    return reshape(self, -1, order=order, copy=True)


def squeeze(self: Array, axis: Any = None) -> Array:
    if axis is None:
        axis = tuple(i for i, s in enumerate(self.shape) if s == 1)
    return xp.squeeze(self, axis)


def astype(self: Array, dtype: Any, order: str = "K", casting: Any = "unsafe",
           subok: bool = True, copy: bool = True) -> Array:
    """NumPy's ``x.astype(dtype, copy=True)``; ``casting`` is checked by NumPy's own
    ``can_cast`` (``order`` and ``subok`` accepted with NumPy's defaults)."""
    if casting != "unsafe":
        target = _dtypes.as_dtype(dtype)
        if not np.can_cast(self.dtype.np, target.np, casting=casting):
            raise TypeError(f"Cannot cast array data from {self.dtype.name} to {target.name} "
                            f"according to the rule {casting!r}")
    return xp.astype(self, dtype, copy=copy)


def copy(self: Array, order: str = "K") -> Array:
    return xp.asarray(self, copy=True)


def view(self: Array, dtype: Any = None, type: Any = None) -> Array:
    """NumPy's ``x.view()`` (a view: writes to it reach ``x``) and ``x.view(dtype)`` (the same
    bytes read as ``dtype``; another item size rescales the last axis)."""
    if type is not None:
        raise TypeError("view(type=...): xla_array has no array subclasses")
    if dtype is None:
        return self[...]
    target = _dtypes.as_dtype(dtype)
    x = self
    if target == x.dtype:
        return x[...]
    if x.dtype.kind == "c":  # the parts, interleaved: (..., n) complex -> (..., 2n) float
        if not x.ndim:
            x = xp.reshape(x, (1,))
            if target.itemsize != self.dtype.itemsize:
                raise ValueError("Changing the dtype of a 0d array is only supported if the "
                                 "itemsize is unchanged")
        parts = xp.stack([xp.real(x), xp.imag(x)], axis=-1)
        x = xp.reshape(parts, x.shape[:-1] + (2 * x.shape[-1],))
        if target == x.dtype:
            return x if self.ndim else xp.reshape(x, ())
    if target.kind == "c":  # (..., 2m) float of the parts' type -> (..., m) complex
        part = _dtypes.REAL_OF[target]
        if not x.ndim:
            raise ValueError("Changing the dtype of a 0d array is only supported if the "
                             "itemsize is unchanged")
        f = x if x.dtype == part else wrap(record(_ops.OPS["bitcast"], (x._node,), Bitcast(part)))
        if f.shape[-1] % 2:
            raise ValueError(f"When changing to a larger dtype, its size must be a divisor of "
                             f"the total size in bytes of the last axis of the array "
                             f"({self.dtype.name} to {target.name})")
        pairs = xp.reshape(f, f.shape[:-1] + (f.shape[-1] // 2, 2))
        z = xp.astype(pairs[..., 0], target) + xp.astype(pairs[..., 1], target) * 1j
        return z if self.ndim or z.shape != (1,) else xp.reshape(z, ())
    res = wrap(record(_ops.OPS["bitcast"], (x._node,), Bitcast(target)))
    return res if self.ndim or x.ndim == 0 else xp.reshape(res, ())


def conj(self: Array) -> Array:
    return xp.conj(self) if self.dtype.kind == "c" else self[...]


def round_(self: Array, decimals: int = 0, out: Any = None) -> Array:
    """NumPy's ``x.round(decimals)``: half to even; for ``decimals != 0`` NumPy's own
    ``rint(x * 10**decimals) / 10**decimals``."""
    if decimals == 0 or (self.dtype.kind in "iub" and decimals > 0):
        res = xp.round(self) if self.dtype.kind not in "iub" else self[...]
    elif self.dtype.kind in "iu":
        f = 10 ** (-decimals)
        res = xp.astype(xp.round(xp.astype(self, _dtypes.float64) / f) * f, self.dtype)
    else:
        f = 10.0 ** decimals
        res = xp.round(self * f) / f if decimals > 0 else xp.round(self / (1 / f)) * (1 / f)
    return _out(res, out)


def clip(self: Array, min: Any = None, max: Any = None, out: Any = None) -> Array:
    return _out(xp.clip(self, min, max), out)


def dot(self: Array, b: Any, out: Any = None) -> Array:
    """NumPy's ``x.dot(b)``: products for 0-d operands, ``matmul`` up to 2-D, else the sum over
    the last axis of ``x`` and the second-to-last of ``b``."""
    b = b if isinstance(b, Array) else xp.asarray(b)
    if self.ndim == 0 or b.ndim == 0:
        res = self * b
    elif b.ndim == 1 or (self.ndim <= 2 and b.ndim <= 2):
        res = xp.matmul(self, b)
    else:
        res = xp.tensordot(self, b, axes=([-1], [-2]))
    return _out(res, out)


def nonzero(self: Array) -> tuple:
    return xp.nonzero(self)


def take(self: Array, indices: Any, axis: Any = None, out: Any = None,
         mode: str = "raise") -> Array:
    if mode != "raise":
        raise ValueError(f"take(mode={mode!r}): only mode='raise' is supported")
    idx = indices if isinstance(indices, Array) else xp.asarray(indices)
    x = self
    if axis is None:
        x, axis = xp.reshape(x, (-1,)), 0
    flat = xp.reshape(idx, (-1,))
    res = xp.take(x, flat, axis=axis)
    ax = axis % x.ndim
    return _out(xp.reshape(res, x.shape[:ax] + idx.shape + x.shape[ax + 1:]), out)


def repeat(self: Array, repeats: Any, axis: Any = None) -> Array:
    return xp.repeat(self, repeats, axis=axis)


def diagonal(self: Array, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    return _diagonal(xp.moveaxis(self, (axis1, axis2), (-2, -1)), offset=offset)


def trace(self: Array, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: Any = None) -> Array:
    return _out(xp.sum(diagonal(self, offset, axis1, axis2), axis=-1, dtype=dtype), out)


def sort(self: Array, axis: Any = -1, kind: Any = None, order: Any = None,
         *, stable: Any = None) -> None:
    """NumPy's in-place ``x.sort(axis=-1)`` (``axis=None`` is NumPy's error too)."""
    if order is not None:
        raise ValueError("sort(order=...): xla_array has no structured dtypes")
    if axis is None:
        raise TypeError("an integer is required for the axis")
    self[...] = xp.sort(self, axis=axis, stable=True)


def argsort(self: Array, axis: Any = -1, kind: Any = None, order: Any = None,
            *, stable: Any = None) -> Array:
    if order is not None:
        raise ValueError("argsort(order=...): xla_array has no structured dtypes")
    x = self
    if axis is None:
        x, axis = xp.reshape(x, (-1,)), -1
    return xp.argsort(x, axis=axis, stable=True)


def fill(self: Array, value: Any) -> None:
    """NumPy's in-place ``x.fill(value)``."""
    self[...] = value


def _real(self: Array) -> Array:
    return xp.real(self) if self.dtype.kind == "c" else self


def _imag(self: Array) -> Array:
    return xp.imag(self) if self.dtype.kind == "c" else xp.zeros_like(self)


METHODS = {
    "sum": _reduction("sum", True), "prod": _reduction("prod", True),
    "mean": _reduction("mean", True), "max": _reduction("max", False),
    "min": _reduction("min", False), "any": _reduction("any", False),
    "all": _reduction("all", False), "std": _moment("std"), "var": _moment("var"),
    "argmax": _flat_axis("argmax", "argmax"), "argmin": _flat_axis("argmin", "argmin"),
    "cumsum": _flat_axis("cumsum", "cumulative_sum"),
    "cumprod": _flat_axis("cumprod", "cumulative_prod"),
    "reshape": reshape, "transpose": transpose, "swapaxes": swapaxes, "ravel": ravel,
    "flatten": flatten, "squeeze": squeeze, "astype": astype, "copy": copy, "view": view,
    "conj": conj, "conjugate": conj, "round": round_, "clip": clip, "dot": dot,
    "nonzero": nonzero, "take": take, "repeat": repeat, "diagonal": diagonal, "trace": trace,
    "sort": sort, "argsort": argsort, "fill": fill,
}
PROPERTIES = {
    "real": _real, "imag": _imag,
    "itemsize": lambda self: self.dtype.itemsize,
    "nbytes": lambda self: self.dtype.itemsize * self.size,
}


def install() -> None:
    for name, fn in METHODS.items():
        setattr(Array, name, fn)
    for name, fget in PROPERTIES.items():
        setattr(Array, name, property(fget))


install()
