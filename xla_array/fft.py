"""The ``fft`` extension of the array API standard, on ``stablehlo.fft``.

Each transform records: an optional zero-pad or slice of the transformed axes to the requested
length (``n``/``s``), a transpose bringing the axes to the end (skipped when they already are),
one ``fft`` node per group of up to three axes (carrying ``norm`` and the order numpy.fft
transforms them in: ``core/ops/linalg.fft_steps``), and the inverse transpose. All of it is
lazy. On CPU, nodes with results under 2**16 elements run NumPy's own pocketfft loops one
axis at a time in NumPy's order with NumPy's normalization factors (``kernels/pocketfft.py``:
NumPy's bits, and a graph of them may run on the host the first time it is seen); larger
ones, and other devices, XLA's multi-axis FFT and the product of the factors.

Dtypes: ``fft``/``ifft``/``fftn``/``ifftn``/``hfft``/``irfft``/``irfftn`` take complex input;
real floating input is accepted and converted to the complex dtype of the same precision
(integers go to complex128), as NumPy does. ``rfft``/``rfftn``/``ihfft`` take real input and
raise TypeError for complex input. float32/complex64 compute in single precision, float64/
complex128 in double; float16 and bfloat16 are computed in single precision (float16 data's
first transform as NumPy computes it: its factor in float16, the float64 loop).

Lengths must be positive (ValueError otherwise, as NumPy). An axis repeated in ``axes`` is
transformed once for each time it appears, as NumPy does.
"""

from __future__ import annotations

import operator
from typing import Any, Sequence

from .api.array import Array, as_array, wrap
from .api.creation import iota
from .api.dtype_functions import astype
from .api.elementwise import conj
from .api.linalg_ops import fft_node
from .api.manipulation import permute_dims, roll
from .api.searching import where
from .core import axes as _axes
from .core import dtypes as dt
from .core.devices import resolve
from .core.graph import record
from .core.ops.linalg import NORM_SWAP
from .core.ops.structural import OPS, Pad, Slice

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")


def _arr(x: Any, fname: str) -> Array:
    return x if type(x) is Array else as_array(x, "fft." + fname)


def _complex(x: Any, fname: str) -> Array:
    x = _arr(x, fname)
    k = x.dtype.kind
    if k == "b":
        raise TypeError(f"fft.{fname}() needs a numeric array, got bool")
    if k in "iu":
        return astype(x, dt.complex128)
    return x if k == "c" else astype(x, dt.complex_of(x.dtype))


def _real(x: Any, fname: str) -> Array:
    x = _arr(x, fname)
    k = x.dtype.kind
    if k in "bc":
        raise TypeError(f"fft.{fname}() needs a real floating-point array, got {x.dtype.name}")
    if k in "iu":
        return astype(x, dt.float64)
    return x if x.dtype in (dt.float32, dt.float64) else astype(x, dt.float32)


def _norm(norm: str, fname: str) -> str:
    if norm not in _NORMS:
        raise ValueError(f"fft.{fname}(): norm must be one of {_NORMS}, got {norm!r}")
    return norm


def _length(n: Any, fname: str) -> int:
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"fft.{fname}(): invalid number of data points {n}")
    return n


def _resize(x: Array, axis: int, n: int) -> Array:
    """Zero-pad or trim ``x`` along ``axis`` to length ``n``."""
    m = x.shape[axis]
    if m == n:
        return x
    nd = x.ndim
    if m > n:
        lim = tuple(n if i == axis else d for i, d in enumerate(x.shape))
        return wrap(record(OPS["slice"], (x._node,), Slice((0,) * nd, lim, (1,) * nd)))
    hi = tuple(n - m if i == axis else 0 for i in range(nd))
    return wrap(record(OPS["pad"], (x._node,), Pad((0,) * nd, hi, (0,) * nd)))


def _apply(x: Array, kind: str, axes: list[int], lengths: list[int], norm: str,
           ascending: bool = False, half: bool = False) -> Array:
    """One ``fft`` node of ``kind`` over ``axes`` (at most three, none repeated; for RFFT and
    IRFFT the last is the real axis), each first zero-padded or trimmed to its length
    (``n // 2 + 1`` for IRFFT's last), the axes brought to the end and back."""
    for i, (a, n) in enumerate(zip(axes, lengths)):
        x = _resize(x, a, n // 2 + 1 if kind == "IRFFT" and i == len(axes) - 1 else n)
    nd = x.ndim
    perm = tuple([i for i in range(nd) if i not in axes] + list(axes))
    y = fft_node(permute_dims(x, perm), kind, tuple(lengths), norm, ascending, half)
    inv = [0] * nd
    for i, p in enumerate(perm):
        inv[p] = i
    return permute_dims(y, tuple(inv))


def _groups(axes: list[int], lengths: list[int]) -> list[tuple[list[int], list[int]]]:
    """The axes cut into groups of at most three without a repeated axis, in order, the
    last group ending with the last axis."""
    out: list[tuple[list[int], list[int]]] = []
    end = len(axes)
    while end > 0:
        start = end - 1
        while start > 0 and end - start < 3 and axes[start - 1] not in axes[start:end]:
            start -= 1
        out.append((axes[start:end], lengths[start:end]))
        end = start
    return out[::-1]


def _axes_s(x: Array, s: Any, axes: Any, fname: str) -> tuple[list[int], list[int] | None]:
    if axes is None:
        ax = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
    else:
        ax = [_axes.axis(a, x.ndim, f"fft.{fname}") for a in
              (axes if isinstance(axes, (tuple, list)) else (axes,))]
    if s is None:
        return ax, None
    s = [operator.index(v) for v in s]
    if len(s) != len(ax):
        raise ValueError(f"fft.{fname}(): s and axes differ in length ({len(s)} and {len(ax)})")
    return ax, s


# ---------------------------------------------------------------- one-dimensional

def fft(x: Array, /, *, n: int | None = None, axis: int = -1,
        norm: str = "backward") -> Array:
    return fftn(x, s=None if n is None else (n,), axes=(axis,), norm=norm)


def ifft(x: Array, /, *, n: int | None = None, axis: int = -1,
         norm: str = "backward") -> Array:
    return ifftn(x, s=None if n is None else (n,), axes=(axis,), norm=norm)


def rfft(x: Array, /, *, n: int | None = None, axis: int = -1,
         norm: str = "backward") -> Array:
    return rfftn(x, s=None if n is None else (n,), axes=(axis,), norm=norm)


def irfft(x: Array, /, *, n: int | None = None, axis: int = -1,
          norm: str = "backward") -> Array:
    """Inverse of ``rfft``; ``n`` defaults to ``2 * (M - 1)``."""
    return irfftn(x, s=None if n is None else (n,), axes=(axis,), norm=norm)


def hfft(x: Array, /, *, n: int | None = None, axis: int = -1,
         norm: str = "backward") -> Array:
    """Real spectrum of a Hermitian-symmetric signal: ``irfft(conj(x))`` with the opposite
    normalization direction; ``n`` defaults to ``2 * (M - 1)``."""
    half = _arr(x, "hfft").dtype is dt.float16
    x = _complex(x, "hfft")
    return _irfftn(conj(x), None if n is None else (n,), (axis,), NORM_SWAP[_norm(norm, "hfft")],
                   half)


def ihfft(x: Array, /, *, n: int | None = None, axis: int = -1,
          norm: str = "backward") -> Array:
    """``conj(rfft(x))`` with the opposite normalization direction."""
    return conj(rfftn(x, s=None if n is None else (n,), axes=(axis,),
                      norm=NORM_SWAP[_norm(norm, "ihfft")]))


# ---------------------------------------------------------------- n-dimensional

def _lengths(x: Array, ax: list[int], s: list[int] | None, fname: str,
             real_last: bool = False) -> list[int]:
    """The transform length of each axis of ``ax`` (NumPy's ``_cook_nd_args``): ``s`` where
    given (-1: the axis's length), else the axis's length, or for the last axis of an inverse
    real transform ``2 * (m - 1)``."""
    out = []
    for i, a in enumerate(ax):
        if s is not None and s[i] != -1:
            ln = s[i]
        elif real_last and i == len(ax) - 1:
            ln = 2 * (x.shape[a] - 1)
        else:
            ln = x.shape[a]
        out.append(_length(ln, fname))
    return out


def _cn(x: Array, s: Any, axes: Any, norm: str, inverse: bool, fname: str) -> Array:
    """``numpy.fft``'s ``_raw_fftnd``: one transform per axis, the last axis first."""
    half = _arr(x, fname).dtype is dt.float16
    x = _complex(x, fname)
    norm = _norm(norm, fname)
    ax, s = _axes_s(x, s, axes, fname)
    if not ax:
        return astype(x, x.dtype)
    lengths = _lengths(x, ax, s, fname)
    for g_ax, g_ln in _groups(ax, lengths)[::-1]:
        x = _apply(x, "IFFT" if inverse else "FFT", g_ax, g_ln, norm, half=half)
        half = False
    return x


def fftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str = "backward") -> Array:
    return _cn(x, s, axes, norm, False, "fftn")


def ifftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> Array:
    return _cn(x, s, axes, norm, True, "ifftn")


def rfftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> Array:
    """Real-input transform: the last of ``axes`` first, halved to ``s[-1] // 2 + 1``, then
    the others from the last to the first (NumPy's order)."""
    half = _arr(x, "rfftn").dtype is dt.float16
    x = _real(x, "rfftn")
    norm = _norm(norm, "rfftn")
    ax, s = _axes_s(x, s, axes, "rfftn")
    if not ax:
        raise ValueError("fft.rfftn(): at least one axis is needed")
    lengths = _lengths(x, ax, s, "rfftn")
    groups = _groups(ax, lengths)
    y = _apply(x, "RFFT", *groups[-1], norm, half=half)
    for g_ax, g_ln in groups[-2::-1]:
        y = _apply(y, "FFT", g_ax, g_ln, norm)
    return y


def irfftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str = "backward") -> Array:
    """Inverse of ``rfftn``: the axes but the last from the first on, then the last one, of
    output length ``s[-1]`` (default ``2 * (M - 1)``)."""
    half = _arr(x, "irfftn").dtype is dt.float16
    return _irfftn(_complex(x, "irfftn"), s, axes, _norm(norm, "irfftn"), half)


def _irfftn(x: Array, s: Any, axes: Any, norm: str, half: bool) -> Array:
    ax, s = _axes_s(x, s, axes, "irfftn")
    if not ax:
        raise ValueError("fft.irfftn(): at least one axis is needed")
    lengths = _lengths(x, ax, s, "irfftn", real_last=True)
    groups = _groups(ax, lengths)
    for g_ax, g_ln in groups[:-1]:
        x = _apply(x, "IFFT", g_ax, g_ln, norm, ascending=True, half=half)
        half = False
    return _apply(x, "IRFFT", *groups[-1], norm, half=half)


# ---------------------------------------------------------------- helpers

def _freq_dtype(dtype: Any, fname: str) -> Any:
    d = dt.default_float if dtype is None else dt.as_dtype(dtype)
    if d.kind != "f":
        raise TypeError(f"fft.{fname}(): dtype must be a real floating-point dtype, got {d}")
    return d


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Array:
    """Sample frequencies ``[0, 1, ..., -1] / (d * n)``; ``d`` is a runtime parameter."""
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"fft.fftfreq(): n must be non-negative, got {n}")
    out_d = _freq_dtype(dtype, "fftfreq")
    i = iota((n,), 0, resolve(device), dt.int64)
    k = where(i < (n + 1) // 2, i, i - n)
    return astype(astype(k, dt.float64) / (float(d) * n), out_d)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Array:
    """Sample frequencies ``[0, 1, ..., n // 2] / (d * n)``."""
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"fft.rfftfreq(): n must be non-negative, got {n}")
    out_d = _freq_dtype(dtype, "rfftfreq")
    i = iota((n // 2 + 1,), 0, resolve(device), dt.float64)
    return astype(i / (float(d) * n), out_d)


def _shift(x: Array, axes: Any, sign: int, fname: str) -> Array:
    x = _arr(x, fname)
    if axes is None:
        ax = tuple(range(x.ndim))
    else:
        ax = tuple(_axes.axis(a, x.ndim, f"fft.{fname}") for a in
                   (axes if isinstance(axes, (tuple, list)) else (axes,)))
    if not ax:
        return astype(x, x.dtype)
    return roll(x, tuple(sign * (x.shape[a] // 2) for a in ax), axis=ax)


def fftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    return _shift(x, axes, 1, "fftshift")


def ifftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    return _shift(x, axes, -1, "ifftshift")
