"""The ``fft`` extension of the array API standard, on ``stablehlo.fft``.

Each transform records: an optional zero-pad or slice of the transformed axes to the requested
length (``n``/``s``), a transpose bringing the axes to the end (skipped when they already are),
one ``stablehlo.fft`` per group of up to three axes, the inverse transpose, and the ``norm``
scaling (a multiplication by a runtime scalar, so it fuses). All of it is lazy.

Dtypes: ``fft``/``ifft``/``fftn``/``ifftn``/``hfft``/``irfft``/``irfftn`` take complex input;
real floating input is accepted and converted to the complex dtype of the same precision
(integers go to complex128), as NumPy does. ``rfft``/``rfftn``/``ihfft`` take real input and
raise TypeError for complex input. float32/complex64 compute in single precision, float64/
complex128 in double; float16 and bfloat16 are computed in single precision.

Lengths must be positive (ValueError otherwise, as NumPy). Repeated axes in ``axes`` are
applied once each in the order given.
"""

from __future__ import annotations

import math
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
from .core.ops.structural import OPS, Pad, Slice

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")
_SWAP = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


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


def _scale(y: Array, norm: str, n: int, inverse: bool) -> Array:
    """Apply ``norm``; XLA's inverse transforms already divide by ``n``."""
    if norm == "backward" or n == 0:
        return y
    if norm == "ortho":
        f = math.sqrt(n) if inverse else 1 / math.sqrt(n)
    else:  # forward
        f = float(n) if inverse else 1 / n
    return y * f


def _apply(x: Array, kind: str, axes: list[int], lengths: list[int]) -> Array:
    """One ``stablehlo.fft`` of ``kind`` over ``axes`` (at most three, the last one being the
    real axis for RFFT/IRFFT); ``lengths`` are the logical FFT lengths."""
    nd = x.ndim
    rest = [i for i in range(nd) if i not in axes]
    perm = tuple(rest + list(axes))
    xt = permute_dims(x, perm)
    y = fft_node(xt, kind, tuple(lengths))
    inv = [0] * nd
    for i, p in enumerate(perm):
        inv[p] = i
    return permute_dims(y, tuple(inv))


def _groups(axes: list[int], lengths: list[int]) -> list[tuple[list[int], list[int]]]:
    """Split into groups of at most three axes, the last group holding the last axis."""
    out = []
    end = len(axes)
    while end > 0:
        start = max(0, end - 3)
        out.append((axes[start:end], lengths[start:end]))
        end = start
    return out[::-1]


def _cfft(x: Array, axes: list[int], lengths: list[int], inverse: bool) -> Array:
    for ax, ln in _groups(axes, lengths)[::-1]:
        x = _apply(x, "IFFT" if inverse else "FFT", ax, ln)
    return x


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
    x = _complex(x, "hfft")
    return irfftn(conj(x), s=None if n is None else (n,), axes=(axis,),
                  norm=_SWAP[_norm(norm, "hfft")])


def ihfft(x: Array, /, *, n: int | None = None, axis: int = -1,
          norm: str = "backward") -> Array:
    """``conj(rfft(x))`` with the opposite normalization direction."""
    x = _real(x, "ihfft")
    return conj(rfftn(x, s=None if n is None else (n,), axes=(axis,),
                      norm=_SWAP[_norm(norm, "ihfft")]))


# ---------------------------------------------------------------- n-dimensional

def _cn(x: Array, s: Any, axes: Any, norm: str, inverse: bool, fname: str) -> Array:
    x = _complex(x, fname)
    norm = _norm(norm, fname)
    ax, s = _axes_s(x, s, axes, fname)
    lengths = []
    for i, a in enumerate(ax):
        ln = x.shape[a] if s is None or s[i] == -1 else s[i]
        lengths.append(_length(ln, fname))
        x = _resize(x, a, lengths[-1])
    if not ax:
        return astype(x, x.dtype)
    y = _cfft(x, ax, lengths, inverse)
    return _scale(y, norm, math.prod(lengths), inverse)


def fftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str = "backward") -> Array:
    return _cn(x, s, axes, norm, False, "fftn")


def ifftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> Array:
    return _cn(x, s, axes, norm, True, "ifftn")


def rfftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> Array:
    """Real-input transform: the last of ``axes`` is halved to ``s[-1] // 2 + 1``."""
    x = _real(x, "rfftn")
    norm = _norm(norm, "rfftn")
    ax, s = _axes_s(x, s, axes, "rfftn")
    if not ax:
        raise ValueError("fft.rfftn(): at least one axis is needed")
    lengths = []
    for i, a in enumerate(ax):
        ln = x.shape[a] if s is None or s[i] == -1 else s[i]
        lengths.append(_length(ln, "rfftn"))
        x = _resize(x, a, lengths[-1])
    groups = _groups(ax, lengths)
    y = _apply(x, "RFFT", *groups[-1])
    for g_ax, g_ln in groups[-2::-1]:
        y = _apply(y, "FFT", g_ax, g_ln)
    return _scale(y, norm, math.prod(lengths), False)


def irfftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str = "backward") -> Array:
    """Inverse of ``rfftn``; the last output length defaults to ``2 * (M - 1)``."""
    x = _complex(x, "irfftn")
    norm = _norm(norm, "irfftn")
    ax, s = _axes_s(x, s, axes, "irfftn")
    if not ax:
        raise ValueError("fft.irfftn(): at least one axis is needed")
    lengths = []
    for i, a in enumerate(ax):
        last = i == len(ax) - 1
        default = 2 * (x.shape[a] - 1) if last else x.shape[a]
        ln = _length(default if s is None or s[i] == -1 else s[i], "irfftn")
        lengths.append(ln)
        x = _resize(x, a, ln // 2 + 1 if last else ln)
    groups = _groups(ax, lengths)
    for g_ax, g_ln in groups[:-1]:
        x = _apply(x, "IFFT", g_ax, g_ln)
    y = _apply(x, "IRFFT", *groups[-1])
    return _scale(y, norm, math.prod(lengths), True)


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
