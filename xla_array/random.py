"""Random numbers on the device: NumPy's ``Generator`` API and its legacy functions.

``g = xla_array.random.default_rng(seed)`` holds the key of XLA's counter-based generator
(``stablehlo.rng_bit_generator``, THREE_FRY by default, PHILOX on request) as a ``uint64[2]``
array on a device. Each call records one ``random`` op (``core/ops/random.py``) that takes
that key and gives the variates and the next key: nothing is computed, nor copied to the host,
until a value is needed, and the variates fuse with what uses them. The same seed and the same
calls give the same values in every run and on every device; they are not NumPy's values
(the generator is another), only the same distributions (see docs/random.md).
"""

from __future__ import annotations

import builtins
import math
import operator
import warnings
from typing import Any

import numpy as np

from . import linalg as _linalg
from .api import elementwise as _ew
from .api.array import Array, wrap
from .api.creation import asarray, to_device
from .api.dtype_functions import astype
from .api.manipulation import broadcast_to, concat, reshape
from .api.searching import searchsorted, where
from .api.sorting import argsort
from .api.statistical import cumulative_sum
from .api.statistical import sum as _sum
from .api.utility import take, take_along_axis
from .core import dtypes as _dt
from .core.devices import resolve
from .core.graph import scalar_leaf
from .core.ops.random import ALGORITHMS, Random
from .core.ops.structural import OPS, broadcast_shapes, record_multi

__all__ = ["Generator", "default_rng", "seed", "rand", "randn", "randint", "random_sample",
           "random", "sample", "ranf", "normal", "uniform", "choice", "permutation", "shuffle",
           "standard_normal", "standard_exponential", "standard_gamma", "exponential",
           "gamma", "beta", "binomial", "poisson", "multivariate_normal", "dirichlet",
           "lognormal", "laplace", "logistic", "gumbel", "geometric", "chisquare", "f",
           "standard_t", "standard_cauchy", "pareto", "power", "rayleigh", "weibull", "wald",
           "triangular", "negative_binomial", "multinomial", "get_state", "set_state",
           "integers", "bytes"]

_F64, _I64, _U64 = _dt.float64, _dt.int64, _dt.uint64
_RAND_DTYPES = (_dt.float32, _dt.float64)


def _size(size: Any) -> tuple | None:
    if size is None:
        return None
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        size = (size,)
    try:
        out = tuple(operator.index(d) for d in size)
    except TypeError:
        raise TypeError(f"size must be None, an int or a tuple of ints, got {size!r}") from None
    if any(d < 0 for d in out):
        raise ValueError("negative dimensions are not allowed")
    return out


def _float_dtype(dtype: Any, fname: str) -> Any:
    d = _dt.as_dtype(dtype)
    if d not in _RAND_DTYPES:
        raise TypeError(f"Unsupported dtype {np.dtype(d.np)!r} for {fname}")
    return d


def _known(x: Any) -> np.ndarray | None:
    """The value of a parameter when the host knows it (Python or NumPy numbers and
    sequences), for NumPy's checks at the call; None for an xla_array Array."""
    if isinstance(x, Array):
        return None
    return np.asarray(x, dtype=np.float64)


def _check(x: Any, bad: Any, message: str) -> None:
    v = _known(x)
    if v is not None and np.any(bad(v)):
        raise ValueError(message)


class Generator:
    """NumPy's ``Generator`` on XLA's generator (make one with ``default_rng``).

    ``state`` is the ``uint64[2]`` key (an Array, pending until a value needs it). Every method
    takes NumPy's arguments and ``device=``: the variates are made there (the key moves with
    them)."""

    def __init__(self, key: Any, *, algorithm: str = "THREE_FRY", device: Any = None,
                 seed_seq: Any = None) -> None:
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
        key = np.asarray(key, dtype=np.uint64).reshape(2)
        self._state = asarray(key, device=device)
        self._algorithm = algorithm
        self._seq = seed_seq

    def __repr__(self) -> str:
        return f"Generator({self._algorithm}) on {self._state.device}"

    @property
    def state(self) -> Array:
        return self._state

    @property
    def algorithm(self) -> str:
        return self._algorithm

    def spawn(self, n_children: int) -> list[Generator]:
        """Independent child generators (from the seed's ``SeedSequence``)."""
        if self._seq is None:
            raise TypeError("spawn() needs a generator made from a seed (default_rng)")
        return [Generator(s.generate_state(2, np.uint64), algorithm=self._algorithm,
                          device=self._state.device, seed_seq=s)
                for s in self._seq.spawn(n_children)]

    # ------------------------------------------------------------ the op
    def _draw(self, dist: str, shape: tuple, dtype: Any, params: tuple = (),
              device: Any = None) -> Array:
        st = self._state
        if device is not None:
            dev = resolve(device)
            if dev != st.device:
                st = to_device(st, dev)
        nodes = [st._node]
        for p in params:
            if isinstance(p, Array):
                nodes.append(p._node)
            elif isinstance(p, (int, float, np.integer, np.floating)) and not isinstance(p, bool):
                nodes.append(scalar_leaf(float(p), _F64, st._node.device))
            else:
                nodes.append(asarray(np.asarray(p, dtype=np.float64), device=st.device)._node)
        s, v = record_multi(OPS["random"], tuple(nodes), Random(dist, shape, dtype,
                                                                   self._algorithm), keep=False)
        self._state = wrap(s)
        return wrap(v)

    @staticmethod
    def _shape(size: Any, *params: Any) -> tuple:
        shapes = [tuple(p.shape) if isinstance(p, Array) else np.shape(p) for p in params]
        size = _size(size)
        if size is None:
            return broadcast_shapes(*shapes) if shapes else ()
        for s in shapes:
            if broadcast_shapes(s, size) != size:
                raise ValueError(f"shape mismatch: objects cannot be broadcast to a single "
                                 f"shape (a parameter of shape {s} and size {size})")
        return size

    @staticmethod
    def _out(out: Any, value: Array, fname: str) -> Array:
        if out is None:
            return value
        if not isinstance(out, Array) or out.shape != value.shape or out.dtype != value.dtype:
            raise ValueError(f"{fname}(): out must be an array of shape {value.shape} and "
                             f"dtype {value.dtype}")
        out[...] = value
        return out

    @staticmethod
    def _out_size(size: Any, out: Any) -> Any:
        if out is not None and size is None:
            return tuple(out.shape)
        return size

    # ------------------------------------------------------------ uniform and integers
    def random(self, size: Any = None, dtype: Any = _F64, out: Any = None, *,
               device: Any = None) -> Array:
        """Floats in [0, 1): k * 2**-53 (float64) or k * 2**-24 (float32)."""
        d = _float_dtype(dtype, "random")
        size = self._out_size(size, out)
        return self._out(out, self._draw("uniform", self._shape(size), d, device=device),
                         "random")

    def bits(self, size: Any = None, dtype: Any = _U64, *, device: Any = None) -> Array:
        """The generator's raw bits, uint32 or uint64 (not in NumPy)."""
        return self._draw("bits", self._shape(size), _dt.as_dtype(dtype), device=device)

    def bytes(self, length: int) -> builtins.bytes:
        """``length`` random bytes (computed now: bytes live on the host)."""
        n = operator.index(length)
        raw = np.asarray(self.bits((n + 7) // 8))
        return raw.tobytes()[:n]

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None, *,
                device: Any = None) -> Array:
        lo, hi = _known(low), _known(high)
        if lo is not None and hi is not None and not np.all(np.isfinite(hi - lo)):
            raise OverflowError("Range exceeds valid bounds")
        u = self._draw("uniform", self._shape(size, low, high), _F64, device=device)
        return _ew.add(_ew.multiply(u, _sub(high, low)), low)

    def integers(self, low: Any, high: Any = None, size: Any = None, dtype: Any = _I64,
                 endpoint: bool = False, *, device: Any = None) -> Array:
        """Integers in [low, high) ([low, high] with ``endpoint``): 64 random bits modulo the
        span, whose bias is below span / 2**64."""
        if high is None:
            low, high = 0, low
        d = _dt.as_dtype(dtype)
        if d.kind not in "iub":
            raise TypeError(f"Unsupported dtype {np.dtype(d.np)!r} for integers")
        shape = self._shape(size, low, high)
        if not isinstance(low, Array) and not isinstance(high, Array):
            lo, hi = np.asarray(low), np.asarray(high)
            if lo.dtype.kind not in "iub" or hi.dtype.kind not in "iub":
                lo, hi = lo.astype(np.int64), hi.astype(np.int64)
            info = np.iinfo(d.np) if d.kind != "b" else None
            top = hi if endpoint else hi - 1
            if info is not None and np.any(lo < info.min):
                raise ValueError(f"low is out of bounds for {d.name}")
            if info is not None and np.any(top > info.max):
                raise ValueError(f"high is out of bounds for {d.name}")
            if np.any(lo > top):
                raise ValueError("low > high" if endpoint else "low >= high")
            if lo.ndim == 0 and hi.ndim == 0:
                span = int(top) - int(lo) + 1
                bits = self._draw("bits", shape, _U64, device=device)
                # (NumPy scalars: run-time parameters of the executable, no copy per call)
                r = bits if span == 2**64 else _ew.remainder(bits, np.uint64(span))
                v = _ew.add(r, np.uint64(int(lo) % 2**64))
                return astype(astype(v, _I64), d)
        lo_a = astype(_arr(low, _I64), _I64)
        hi_a = astype(_arr(high, _I64), _I64)
        span_a = _ew.subtract(hi_a, lo_a)
        if endpoint:
            span_a = _ew.add(span_a, 1)
        bits = self._draw("bits", shape, _U64, device=device)
        r = _ew.remainder(bits, astype(span_a, _U64))
        v = _ew.add(r, astype(lo_a, _U64))
        return astype(astype(v, _I64), d)

    # ------------------------------------------------------------ normal family
    def standard_normal(self, size: Any = None, dtype: Any = _F64, out: Any = None, *,
                        device: Any = None) -> Array:
        """Box-Muller normals (both of each pair)."""
        d = _float_dtype(dtype, "standard_normal")
        size = self._out_size(size, out)
        return self._out(out, self._draw("normal", self._shape(size), d, device=device),
                         "standard_normal")

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, *,
               device: Any = None) -> Array:
        _check(scale, lambda v: v < 0, "scale < 0")
        z = self._draw("normal", self._shape(size, loc, scale), _F64, device=device)
        return _ew.add(_ew.multiply(z, scale), loc)

    def lognormal(self, mean: Any = 0.0, sigma: Any = 1.0, size: Any = None, *,
                  device: Any = None) -> Array:
        _check(sigma, lambda v: v < 0, "sigma < 0")
        return _ew.exp(self.normal(mean, sigma, size, device=device))

    def multivariate_normal(self, mean: Any, cov: Any, size: Any = None,
                            check_valid: str = "warn", tol: float = 1e-8, *,
                            method: str = "svd", device: Any = None) -> Array:
        if method not in ("svd", "eigh", "cholesky"):
            raise ValueError("method must be one of {'eigh', 'svd', 'cholesky'}")
        if check_valid not in ("warn", "raise", "ignore"):
            raise ValueError("check_valid must equal 'warn', 'raise', or 'ignore'")
        m, c = _arr(mean, _F64), _arr(cov, _F64)
        if m.ndim != 1:
            raise ValueError("mean must be 1 dimensional")
        k = m.shape[0]
        if c.ndim != 2 or c.shape != (k, k):
            raise ValueError("cov must be 2 dimensional and square")
        sz = _size(size)
        shape = (sz or ()) + (k,)
        z = self._draw("normal", shape, _F64, device=device)
        cv = _known(cov)
        if cv is not None and check_valid != "ignore" and method != "cholesky":
            s_ = np.linalg.eigvalsh(cv)
            if np.any(s_ < -tol * max(1.0, float(np.abs(s_).max(initial=0.0)))):
                if check_valid == "raise":
                    raise ValueError("covariance is not symmetric positive-semidefinite.")
                warnings.warn("covariance is not symmetric positive-semidefinite.",
                              RuntimeWarning, stacklevel=2)
        if method == "cholesky":
            a = _linalg.matrix_transpose(_linalg.cholesky(c))
        elif method == "eigh":
            w, v = _linalg.eigh(c)
            a = _ew.multiply(reshape(_ew.sqrt(_ew.maximum(w, 0.0)), (k, 1)),
                             _linalg.matrix_transpose(v))
        else:
            _, s, vh = _linalg.svd(c)
            a = _ew.multiply(reshape(_ew.sqrt(s), (k, 1)), vh)
        return _ew.add(_linalg.matmul(z, a), m)

    # ------------------------------------------------------------ exponential family
    def standard_exponential(self, size: Any = None, dtype: Any = _F64, method: str = "zig",
                             out: Any = None, *, device: Any = None) -> Array:
        d = _float_dtype(dtype, "standard_exponential")
        if method not in ("zig", "inv"):
            raise ValueError("method must be either 'inv' or 'zig'")
        size = self._out_size(size, out)
        return self._out(out, self._draw("exponential", self._shape(size), d, device=device),
                         "standard_exponential")

    def exponential(self, scale: Any = 1.0, size: Any = None, *, device: Any = None) -> Array:
        _check(scale, lambda v: v < 0, "scale < 0")
        e = self._draw("exponential", self._shape(size, scale), _F64, device=device)
        return _ew.multiply(e, scale)

    def _exp(self, size: Any, *params: Any, device: Any = None) -> Array:
        return self._draw("exponential", self._shape(size, *params), _F64, device=device)

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, *,
                device: Any = None) -> Array:
        """The difference of two exponentials."""
        _check(scale, lambda v: v < 0, "scale < 0")
        e1 = self._exp(size, loc, scale, device=device)
        e2 = self._exp(tuple(e1.shape), device=device)
        return _ew.add(_ew.multiply(_ew.subtract(e1, e2), scale), loc)

    def logistic(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, *,
                 device: Any = None) -> Array:
        """log(E1 / E2) of two exponentials."""
        _check(scale, lambda v: v < 0, "scale < 0")
        e1 = self._exp(size, loc, scale, device=device)
        e2 = self._exp(tuple(e1.shape), device=device)
        return _ew.add(_ew.multiply(_ew.log(_ew.divide(e1, e2)), scale), loc)

    def gumbel(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, *,
               device: Any = None) -> Array:
        _check(scale, lambda v: v < 0, "scale < 0")
        e = self._exp(size, loc, scale, device=device)
        return _ew.subtract(loc, _ew.multiply(_ew.log(e), scale))

    def geometric(self, p: Any, size: Any = None, *, device: Any = None) -> Array:
        _check(p, lambda v: (v <= 0) | (v > 1) | np.isnan(v), "p <= 0, p > 1 or p contains NaNs")
        e = self._exp(size, p, device=device)
        k = _ew.ceil(_ew.divide(_ew.negative(e), _ew.log1p(_ew.negative(_arr(p, _F64)))))
        return astype(_ew.maximum(k, 1.0), _I64)

    def pareto(self, a: Any, size: Any = None, *, device: Any = None) -> Array:
        _check(a, lambda v: v <= 0, "a <= 0")
        return _ew.expm1(_ew.divide(self._exp(size, a, device=device), a))

    def power(self, a: Any, size: Any = None, *, device: Any = None) -> Array:
        _check(a, lambda v: v <= 0, "a <= 0")
        e = self._exp(size, a, device=device)
        return _ew.pow(_ew.negative(_ew.expm1(_ew.negative(e))), _ew.divide(1.0, _arr(a, _F64)))

    def rayleigh(self, scale: Any = 1.0, size: Any = None, *, device: Any = None) -> Array:
        _check(scale, lambda v: v < 0, "scale < 0")
        e = self._exp(size, scale, device=device)
        return _ew.multiply(_ew.sqrt(_ew.multiply(e, 2.0)), scale)

    def weibull(self, a: Any, size: Any = None, *, device: Any = None) -> Array:
        _check(a, lambda v: v < 0, "a < 0")
        e = self._exp(size, a, device=device)
        av = _arr(a, _F64)
        w = _ew.pow(e, _ew.divide(1.0, av))
        return where(_ew.equal(av, 0.0), 0.0, w)

    def standard_cauchy(self, size: Any = None, *, device: Any = None) -> Array:
        shape = self._shape(size)
        n1 = self._draw("normal", shape, _F64, device=device)
        n2 = self._draw("normal", shape, _F64, device=device)
        return _ew.divide(n1, n2)

    # ------------------------------------------------------------ gamma family
    def standard_gamma(self, shape: Any, size: Any = None, dtype: Any = _F64,
                       out: Any = None, *, device: Any = None) -> Array:
        """Marsaglia and Tsang's method (a while loop on the device)."""
        d = _float_dtype(dtype, "standard_gamma")
        _check(shape, lambda v: v < 0, "shape < 0")
        size = self._out_size(size, out)
        g = self._draw("gamma", self._shape(size, shape), d, (shape,), device=device)
        return self._out(out, g, "standard_gamma")

    def gamma(self, shape: Any, scale: Any = 1.0, size: Any = None, *,
              device: Any = None) -> Array:
        _check(shape, lambda v: v < 0, "shape < 0")
        _check(scale, lambda v: v < 0, "scale < 0")
        g = self._draw("gamma", self._shape(size, shape, scale), _F64, (shape,), device=device)
        return _ew.multiply(g, scale)

    def _gamma(self, shape: Any, size: tuple, device: Any) -> Array:
        return self._draw("gamma", size, _F64, (shape,), device=device)

    def beta(self, a: Any, b: Any, size: Any = None, *, device: Any = None) -> Array:
        _check(a, lambda v: v <= 0, "a <= 0")
        _check(b, lambda v: v <= 0, "b <= 0")
        shape = self._shape(size, a, b)
        x = self._gamma(a, shape, device)
        y = self._gamma(b, shape, device)
        return _ew.divide(x, _ew.add(x, y))

    def chisquare(self, df: Any, size: Any = None, *, device: Any = None) -> Array:
        _check(df, lambda v: v <= 0, "df <= 0")
        g = self._gamma(_half(df), self._shape(size, df), device)
        return _ew.multiply(g, 2.0)

    def f(self, dfnum: Any, dfden: Any, size: Any = None, *, device: Any = None) -> Array:
        _check(dfnum, lambda v: v <= 0, "dfnum <= 0")
        _check(dfden, lambda v: v <= 0, "dfden <= 0")
        shape = self._shape(size, dfnum, dfden)
        x = _ew.divide(self._gamma(_half(dfnum), shape, device), _half(dfnum))
        y = _ew.divide(self._gamma(_half(dfden), shape, device), _half(dfden))
        return _ew.divide(x, y)

    def standard_t(self, df: Any, size: Any = None, *, device: Any = None) -> Array:
        _check(df, lambda v: v <= 0, "df <= 0")
        shape = self._shape(size, df)
        z = self._draw("normal", shape, _F64, device=device)
        g = self._gamma(_half(df), shape, device)
        return _ew.divide(z, _ew.sqrt(_ew.divide(g, _half(df))))

    def dirichlet(self, alpha: Any, size: Any = None, *, device: Any = None) -> Array:
        a = _known(alpha)
        if a is not None:
            if a.ndim != 1:
                raise ValueError("alpha must be a one-dimensional sequence of floats")
            if np.any(a < 0) or np.any(np.isnan(a)):
                raise ValueError("alpha < 0")
        k = np.shape(alpha)[-1] if not isinstance(alpha, Array) else alpha.shape[-1]
        shape = (_size(size) or ()) + (k,)
        g = self._gamma(alpha, shape, device)
        return _ew.divide(g, _sum(g, axis=-1, keepdims=True))

    def wald(self, mean: Any, scale: Any, size: Any = None, *, device: Any = None) -> Array:
        _check(mean, lambda v: v <= 0, "mean <= 0")
        _check(scale, lambda v: v <= 0, "scale <= 0")
        shape = self._shape(size, mean, scale)
        n = self._draw("normal", shape, _F64, device=device)
        u = self._draw("uniform", shape, _F64, device=device)
        mu, sc = _arr(mean, _F64, u), _arr(scale, _F64, u)
        y = _ew.multiply(_ew.multiply(n, n), mu)
        x = _ew.add(mu, _ew.multiply(_ew.divide(mu, _ew.multiply(sc, 2.0)), _ew.subtract(
            y, _ew.sqrt(_ew.add(_ew.multiply(_ew.multiply(y, sc), 4.0), _ew.multiply(y, y))))))
        return where(_ew.less_equal(u, _ew.divide(mu, _ew.add(mu, x))), x,
                         _ew.divide(_ew.multiply(mu, mu), x))

    def triangular(self, left: Any, mode: Any, right: Any, size: Any = None, *,
                   device: Any = None) -> Array:
        lv, mv, rv = _known(left), _known(mode), _known(right)
        if lv is not None and mv is not None and rv is not None:
            if np.any(lv > mv):
                raise ValueError("left > mode")
            if np.any(mv > rv):
                raise ValueError("mode > right")
            if np.any(lv == rv):
                raise ValueError("left == right")
        u = self._draw("uniform", self._shape(size, left, mode, right), _F64, device=device)
        lo, mo, hi = _arr(left, _F64), _arr(mode, _F64), _arr(right, _F64)
        base, lrange, rrange = _ew.subtract(hi, lo), _ew.subtract(mo, lo), _ew.subtract(hi, mo)
        ratio = _ew.divide(lrange, base)
        a = _ew.add(lo, _ew.sqrt(_ew.multiply(_ew.multiply(u, base), lrange)))
        b = _ew.subtract(hi, _ew.sqrt(_ew.multiply(_ew.multiply(_ew.subtract(1.0, u), base),
                                                   rrange)))
        return where(_ew.less_equal(u, ratio), a, b)

    # ------------------------------------------------------------ counts
    def poisson(self, lam: Any = 1.0, size: Any = None, *, device: Any = None) -> Array:
        _check(lam, lambda v: (v < 0) | np.isnan(v), "lam < 0 or lam is NaN")
        _check(lam, lambda v: v > 9.223372006484771e18, "lam value too large")
        return self._draw("poisson", self._shape(size, lam), _I64, (lam,), device=device)

    def binomial(self, n: Any, p: Any, size: Any = None, *, device: Any = None) -> Array:
        _check(n, lambda v: v < 0, "n < 0")
        _check(p, lambda v: (v < 0) | (v > 1) | np.isnan(v), "p < 0, p > 1 or p is NaN")
        return self._draw("binomial", self._shape(size, n, p), _I64, (n, p), device=device)

    def negative_binomial(self, n: Any, p: Any, size: Any = None, *,
                          device: Any = None) -> Array:
        """Poisson of a gamma (NumPy's method)."""
        _check(n, lambda v: v <= 0, "n <= 0")
        _check(p, lambda v: (v <= 0) | (v > 1) | np.isnan(v), "p < 0, p > 1 or p is NaN")
        shape = self._shape(size, n, p)
        pv = _arr(p, _F64)
        g = _ew.multiply(self._gamma(n, shape, device), _ew.divide(_ew.subtract(1.0, pv), pv))
        return self._draw("poisson", shape, _I64, (g,), device=device)

    def multinomial(self, n: Any, pvals: Any, size: Any = None, *,
                    device: Any = None) -> Array:
        """One binomial per category, of the trials left, as NumPy."""
        pv = np.asarray(pvals, dtype=np.float64)
        if pv.ndim != 1:
            raise ValueError("pvals must be a 1-d sequence")
        if np.any(pv < 0) or np.any(pv > 1) or np.any(np.isnan(pv)):
            raise ValueError("pvals < 0, pvals > 1 or pvals contains NaNs")
        if pv[:-1].sum() > 1.0 + 1e-12:
            raise ValueError("sum(pvals[:-1]) > 1.0")
        _check(n, lambda v: v < 0, "n < 0")
        shape = self._shape(size, n)
        left: Any = _arr(n, _F64) if isinstance(n, Array) else float(n)
        rest = 1.0
        cols = []
        for i, p in enumerate(pv):
            if i == len(pv) - 1:
                x = astype(broadcast_to(_arr(left, _F64, self._state), shape), _I64)
            else:
                q = min(max(p / rest, 0.0), 1.0) if rest > 0 else 0.0
                x = self._draw("binomial", shape, _I64, (left, q), device=device)
                left = _ew.subtract(left, astype(x, _F64))
                rest -= p
            cols.append(reshape(x, shape + (1,)))
        return concat(cols, axis=-1)

    # ------------------------------------------------------------ permutations and choice
    def _perm(self, n: int, device: Any) -> Array:
        return argsort(self._draw("bits", (n,), _U64, device=device), stable=True)

    def permutation(self, x: Any, axis: int = 0, *, device: Any = None) -> Array:
        if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
            return self._perm(int(x), device)
        a = _arr(x, None, self._state)
        if a.ndim == 0:
            raise IndexError("x must be an integer or at least 1-dimensional")
        ax = _axis(axis, a.ndim)
        return take(a, self._perm(a.shape[ax], device), axis=ax)

    def shuffle(self, x: Any, axis: int = 0) -> None:
        """In place: an Array is rebound to its shuffled value (lazily), a NumPy array is
        written."""
        if isinstance(x, Array):
            if x.ndim == 0:
                raise TypeError("shuffle() needs an array of at least 1 dimension")
            ax = _axis(axis, x.ndim)
            x[...] = take(x, self._perm(x.shape[ax], x.device), axis=ax)
            return
        if isinstance(x, np.ndarray):
            if x.ndim == 0:
                raise TypeError("shuffle() needs an array of at least 1 dimension")
            ax = _axis(axis, x.ndim)
            x[...] = np.take(x, np.asarray(self._perm(x.shape[ax], None)), axis=ax)
            return
        if isinstance(x, list):
            perm = np.asarray(self._perm(len(x), None))
            x[:] = [x[i] for i in perm]
            return
        raise TypeError(f"shuffle() takes an array or a list, got {type(x).__name__}")

    def permuted(self, x: Any, *, axis: Any = None, out: Any = None) -> Array:
        a = _arr(x, None, self._state)
        if axis is None:
            flat = reshape(a, (-1,))
            r = reshape(take(flat, self._perm(flat.shape[0], None), axis=0), a.shape)
        else:
            ax = _axis(axis, a.ndim)
            keys = self._draw("bits", tuple(a.shape), _U64)
            r = take_along_axis(a, argsort(keys, axis=ax, stable=True), axis=ax)
        return self._out(out, r, "permuted")

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None,
               axis: int = 0, shuffle: bool = True, *, device: Any = None) -> Array:
        pop: Array | None
        if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
            n, pop = int(a), None
            if n < 0:
                raise ValueError("a must be a positive integer unless no samples are taken")
        else:
            pop = _arr(a, None, self._state)
            if pop.ndim == 0:
                raise ValueError("a must be a sequence or an integer, not a 0-d array")
            axis = _axis(axis, pop.ndim)
            n = pop.shape[axis]
        sz = _size(size)
        shape = sz if sz is not None else ()
        k = math.prod(shape)
        if n == 0 and k:
            raise ValueError("a cannot be empty unless no samples are taken")
        pk = _known(p) if p is not None else None
        if pk is not None:
            if pk.ndim != 1:
                raise ValueError("p must be 1-dimensional")
            if pk.shape[0] != n:
                raise ValueError("a and p must have same size")
            if np.any(pk < 0) or np.any(np.isnan(pk)):
                raise ValueError("probabilities are not non-negative")
            if abs(pk.sum() - 1.0) > math.sqrt(np.finfo(np.float64).eps):
                raise ValueError("probabilities do not sum to 1")
        if not replace and k > n:
            raise ValueError("Cannot take a larger sample than population when replace is "
                             "False")
        if not replace and pk is not None and np.count_nonzero(pk) < k:
            raise ValueError("Fewer non-zero entries in p than size")
        if replace:
            if p is None:
                idx = self.integers(0, max(n, 1), shape, device=device)
            else:
                cdf = cumulative_sum(_arr(p, _F64, self._state))
                u = self._draw("uniform", shape, _F64, device=device)
                idx = searchsorted(cdf, _ew.multiply(u, cdf[-1]), side="right")
                idx = _ew.minimum(idx, n - 1)
        else:
            if p is None:
                order = self._perm(n, device)
            else:
                e = self._draw("exponential", (n,), _F64, device=device)
                order = argsort(_ew.divide(e, _arr(p, _F64, self._state)), stable=True)
            idx = reshape(order[:k], shape)
        idx = astype(idx, _I64)
        if pop is None:
            return idx
        out = take(pop, reshape(idx, (-1,)), axis=axis)
        return reshape(out, tuple(pop.shape[:axis]) + shape + tuple(pop.shape[axis + 1:]))


def _axis(axis: int, ndim: int) -> int:
    ax = operator.index(axis)
    if not -ndim <= ax < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return ax % ndim


def _arr(x: Any, dtype: Any, like: Array | None = None) -> Array:
    if isinstance(x, Array):
        return x if dtype is None or x.dtype == dtype else astype(x, dtype)
    v = np.asarray(x) if dtype is None else np.asarray(x, dtype=dtype.np)
    return asarray(v, device=like.device if like is not None else None)


def _sub(a: Any, b: Any) -> Any:
    if not isinstance(a, Array) and not isinstance(b, Array):
        return np.subtract(a, b, dtype=np.float64) if np.ndim(a) or np.ndim(b) else \
            float(a) - float(b)
    return _ew.subtract(_arr(a, _F64), b)


def _half(x: Any) -> Any:
    if isinstance(x, Array):
        return _ew.multiply(astype(x, _F64), 0.5)
    return np.multiply(x, 0.5, dtype=np.float64) if np.ndim(x) else float(x) * 0.5


def default_rng(seed: Any = None, *, algorithm: str = "THREE_FRY",
                device: Any = None) -> Generator:
    """A Generator seeded as NumPy's ``default_rng`` takes seeds (None: fresh entropy; an int,
    a sequence of ints or a ``SeedSequence``; a Generator is returned as it is)."""
    if isinstance(seed, Generator):
        return seed
    if isinstance(seed, np.random.Generator):
        return Generator(seed.integers(0, 2**64, size=2, dtype=np.uint64), algorithm=algorithm,
                         device=device)
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return Generator(ss.generate_state(2, np.uint64), algorithm=algorithm, device=device,
                     seed_seq=ss)


# ---------------------------------------------------------------- the legacy functions
_global: list[Generator] = []


def _g() -> Generator:
    if not _global:
        _global.append(default_rng())
    return _global[0]


def seed(seed: Any = None) -> None:
    """Reseed the generator behind the module's functions."""
    if seed is not None and not isinstance(seed, np.random.SeedSequence):
        s = np.asarray(seed)
        if s.dtype.kind not in "iu" or np.any(s < 0) or np.any(s > 2**32 - 1):
            raise ValueError("Seed must be between 0 and 2**32 - 1")
    _global[:] = [default_rng(seed)]


def get_state() -> Array:
    """The key of the module's generator (a uint64[2] Array; not NumPy's tuple)."""
    return _g().state


def set_state(state: Any) -> None:
    _global[:] = [Generator(np.asarray(state), algorithm=_g().algorithm)]


def rand(*shape: int) -> Array:
    return _g().random(shape)


def randn(*shape: int) -> Array:
    return _g().standard_normal(shape)


def randint(low: Any, high: Any = None, size: Any = None, dtype: Any = int) -> Array:
    return _g().integers(low, high, size, dtype=_I64 if dtype is int else dtype)


def random_sample(size: Any = None) -> Array:
    return _g().random(size)


random = sample = ranf = random_sample


def _forward(name: str) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(_g(), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = getattr(Generator, name).__doc__
    return call


normal = _forward("normal")
uniform = _forward("uniform")
choice = _forward("choice")
permutation = _forward("permutation")
shuffle = _forward("shuffle")
standard_normal = _forward("standard_normal")
standard_exponential = _forward("standard_exponential")
standard_gamma = _forward("standard_gamma")
exponential = _forward("exponential")
gamma = _forward("gamma")
beta = _forward("beta")
binomial = _forward("binomial")
poisson = _forward("poisson")
multivariate_normal = _forward("multivariate_normal")
dirichlet = _forward("dirichlet")
lognormal = _forward("lognormal")
laplace = _forward("laplace")
logistic = _forward("logistic")
gumbel = _forward("gumbel")
geometric = _forward("geometric")
chisquare = _forward("chisquare")
f = _forward("f")
standard_t = _forward("standard_t")
standard_cauchy = _forward("standard_cauchy")
pareto = _forward("pareto")
power = _forward("power")
rayleigh = _forward("rayleigh")
weibull = _forward("weibull")
wald = _forward("wald")
triangular = _forward("triangular")
negative_binomial = _forward("negative_binomial")
multinomial = _forward("multinomial")
integers = _forward("integers")
bytes = _forward("bytes")

