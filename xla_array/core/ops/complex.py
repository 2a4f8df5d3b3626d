"""Complex kernels of the elementwise table, written over real and imaginary parts.

XLA's complex kernels (``stablehlo.exponential``, ``chlo.asin``...) are accurate for finite
values but do not follow C99 Annex G at zeros, infinities and NaN, which the standard adopts
(signed zeros on the axes, ``conj`` symmetry, ``exp(+inf + NaN j) = inf + NaN j``...). Here:

- ``exp``, ``expm1``, ``log``, ``log1p``, ``sqrt``, ``sinh``, ``cosh``, ``tanh`` (and through
  them ``sin``, ``cos``, ``tan``), ``abs``, ``sign``, ``divide`` and ``pow`` are computed from
  real formulas with the special cases written out;
- the inverse functions keep XLA's kernel for finite values, fix the signs of the result by
  the function's symmetries (``f(conj z) = conj f(z)``, oddness) and take every zero/infinity/NaN
  case from C99's tables.
``divide`` and ``reciprocal`` follow NumPy's Smith algorithm, so results (NaN/inf included)
match NumPy's up to rounding. XLA's algebraic simplifier rewrites ``(x / y) / z`` into
``x / (y * z)`` (which underflows) and ``x + 0`` into ``x`` (losing ``-0 + 0 = +0``); the
formulas here avoid the first by multiplying with reciprocals.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import dtypes as dt
from ..dtypes import DType
from ..lower import Emitter, tensor_type
from .structural import bcast, compare, select

__all__ = ["COMPLEX_KERNELS", "R", "complex_kernel"]

_PI = math.pi


class R:
    """Emits real-valued StableHLO for one shape ``s`` and real float dtype ``d``."""

    def __init__(self, e: Emitter, s: tuple, d: DType) -> None:
        self.e, self.s, self.d = e, s, d
        self.t = tensor_type(s, d)
        self.tb = tensor_type(s, dt.bool)
        fi = np.finfo(d.np) if d not in dt.EXTENSION_FLOATS else None
        self.max = float(fi.max) if fi is not None else 3.0e38
        self.eps = float(fi.eps) if fi is not None else 2.0 ** -7
        self.logmax = math.log(self.max)
        self._consts: dict[str, str] = {}

    def c(self, v: float) -> str:
        """A splat constant (emitted once per kernel; -0.0 and 0.0 are distinct)."""
        k = repr(v)
        if k not in self._consts:
            self._consts[k] = bcast(self.e, self.e.const(v, self.d), (), self.s, self.d)
        return self._consts[k]

    def op(self, name: str, *a: str) -> str:
        return self.e.op(name, list(a), self.t)

    def add(self, a: str, b: str) -> str:
        return self.op("stablehlo.add", a, b)

    def sub(self, a: str, b: str) -> str:
        return self.op("stablehlo.subtract", a, b)

    def mul(self, a: str, b: str) -> str:
        return self.op("stablehlo.multiply", a, b)

    def div(self, a: str, b: str) -> str:
        return self.op("stablehlo.divide", a, b)

    def neg(self, a: str) -> str:
        return self.op("stablehlo.negate", a)

    def abs(self, a: str) -> str:
        return self.op("stablehlo.abs", a)

    def f(self, name: str, a: str) -> str:
        """A unary real function by StableHLO/CHLO name (``sqrt``, ``exponential``...)."""
        return self.op(name if "." in name else "stablehlo." + name, a)

    def atan2(self, y: str, x: str) -> str:
        return self.op("stablehlo.atan2", y, x)

    def max_(self, a: str, b: str) -> str:
        return self.op("stablehlo.maximum", a, b)

    def min_(self, a: str, b: str) -> str:
        return self.op("stablehlo.minimum", a, b)

    def sel(self, p: str, a: str, b: str) -> str:
        return select(self.e, p, a, b, self.s, self.d)

    def cmp(self, direction: str, a: str, b: str) -> str:
        return compare(self.e, direction, a, b, self.s, self.d)

    def and_(self, *ps: str) -> str:
        out = ps[0]
        for p in ps[1:]:
            out = self.e.op("stablehlo.and", [out, p], self.tb)
        return out

    def or_(self, *ps: str) -> str:
        out = ps[0]
        for p in ps[1:]:
            out = self.e.op("stablehlo.or", [out, p], self.tb)
        return out

    def xor_(self, p: str, q: str) -> str:
        return self.e.op("stablehlo.xor", [p, q], self.tb)

    def not_(self, p: str) -> str:
        return self.e.op("stablehlo.not", [p], self.tb)

    def isnan(self, a: str) -> str:
        return self.cmp("NE", a, a)

    def isinf(self, a: str) -> str:
        return self.cmp("EQ", self.abs(a), self.c(math.inf))

    def isfinite(self, a: str) -> str:
        return self.e.op("stablehlo.is_finite", [a], self.tb)

    def iszero(self, a: str) -> str:
        return self.cmp("EQ", a, self.c(0.0))

    def signbit(self, a: str) -> str:
        it = {16: dt.int16, 32: dt.int32, 64: dt.int64}[self.d.bits]
        bits = self.e.op("stablehlo.bitcast_convert", [a], tensor_type(self.s, it))
        zero = bcast(self.e, self.e.const(0, it), (), self.s, it)
        return compare(self.e, "LT", bits, zero, self.s, it)

    def copysign(self, mag: str, sign: str) -> str:
        m = self.abs(mag)
        return self.sel(self.signbit(sign), self.neg(m), m)

    def hypot(self, x: str, y: str) -> str:
        """sqrt(x*x + y*y) without undue overflow; +inf when either is infinite (even NaN)."""
        x, y = self.abs(x), self.abs(y)
        m, n = self.max_(x, y), self.min_(x, y)
        msafe = self.sel(self.iszero(m), self.c(1.0), m)
        q = self.div(n, msafe)
        r = self.mul(m, self.f("sqrt", self.add(self.c(1.0), self.mul(q, q))))
        return self.sel(self.or_(self.isinf(x), self.isinf(y)), self.c(math.inf), r)


Pair = tuple[str, str]


def cases(r: R, base: Pair, table: list[tuple[str, str, str]]) -> Pair:
    """Override ``base`` by ``(condition, re, im)`` rows; earlier rows take precedence."""
    re, im = base
    for cond, cre, cim in reversed(table):
        re, im = r.sel(cond, cre, re), r.sel(cond, cim, im)
    return re, im


# ---------------------------------------------------------------- exp, log, sqrt

def _big_exp_mul(r: R, a: str, c: str) -> str:
    """exp(a) * c for a beyond the overflow threshold of exp (while the product may not be)."""
    h = r.f("exponential", r.mul(a, r.c(0.5)))
    return r.mul(r.mul(h, c), h)


def cexp(r: R, a: str, b: str) -> Pair:
    ea = r.f("exponential", a)
    cb, sb = r.f("cosine", b), r.f("sine", b)
    big = r.cmp("GT", a, r.c(r.logmax))
    re = r.sel(big, _big_exp_mul(r, a, cb), r.mul(ea, cb))
    im = r.sel(big, _big_exp_mul(r, a, sb), r.mul(ea, sb))
    ainf, bbad = r.isinf(a), r.not_(r.isfinite(b))
    return cases(r, (re, im), [
        (r.and_(ainf, bbad, r.cmp("GT", a, r.c(0.0))), r.c(math.inf), r.c(math.nan)),
        (r.and_(ainf, bbad), r.c(0.0), r.copysign(r.c(0.0), b)),
        (r.iszero(b), ea, b),
    ])


def cexpm1(r: R, a: str, b: str) -> Pair:
    cb, sb = r.f("cosine", b), r.f("sine", b)
    sh = r.f("sine", r.mul(b, r.c(0.5)))
    re = r.sub(r.mul(r.f("exponential_minus_one", a), cb), r.mul(r.c(2.0), r.mul(sh, sh)))
    im = r.mul(r.f("exponential", a), sb)
    big = r.cmp("GT", a, r.c(r.logmax))
    re = r.sel(big, _big_exp_mul(r, a, cb), re)
    im = r.sel(big, _big_exp_mul(r, a, sb), im)
    ainf, bbad = r.isinf(a), r.not_(r.isfinite(b))
    return cases(r, (re, im), [
        (r.and_(ainf, bbad, r.cmp("GT", a, r.c(0.0))), r.c(math.inf), r.c(math.nan)),
        (r.and_(ainf, bbad), r.c(-1.0), r.copysign(r.c(0.0), b)),
        (r.and_(r.iszero(a), r.iszero(b)), r.c(0.0), b),  # the standard: +-0 + 0j -> 0 + 0j
        (r.iszero(b), r.f("exponential_minus_one", a), b),
    ])


def clog(r: R, a: str, b: str) -> Pair:
    x, y = r.abs(a), r.abs(b)
    m, n = r.max_(x, y), r.min_(x, y)
    near1 = r.and_(r.cmp("GT", m, r.c(0.5)), r.cmp("LT", m, r.c(2.0)))
    t = r.add(r.mul(r.sub(m, r.c(1.0)), r.add(m, r.c(1.0))), r.mul(n, n))
    re = r.sel(near1, r.mul(r.c(0.5), r.f("log_plus_one", t)), r.f("log", r.hypot(a, b)))
    return re, r.atan2(b, a)


def clog1p(r: R, a: str, b: str) -> Pair:
    """log(1 + z): the real part is 0.5*log1p(a*(2+a) + b*b) where that argument is small
    (accurate near z = 0), else log|1 + z| (accurate near z = -1, where 1 + a is exact)."""
    ap1 = r.add(a, r.c(1.0))
    s = r.add(r.mul(a, r.add(r.c(2.0), a)), r.mul(b, b))
    small = r.cmp("LT", r.abs(s), r.c(0.5))
    re = r.sel(small, r.mul(r.c(0.5), r.f("log_plus_one", s)), r.f("log", r.hypot(ap1, b)))
    return re, r.atan2(b, ap1)


def csqrt(r: R, a: str, b: str) -> Pair:
    x, y = r.abs(a), r.abs(b)
    big = r.cmp("GT", r.max_(x, y), r.c(r.max * 0.25))
    scale = r.sel(big, r.c(0.25), r.c(1.0))
    h = r.hypot(r.mul(a, scale), r.mul(b, scale))
    t = r.f("sqrt", r.mul(r.add(r.mul(x, scale), h), r.c(0.5)))
    t = r.mul(t, r.sel(big, r.c(2.0), r.c(1.0)))
    t2 = r.mul(t, r.c(2.0))
    pos = r.cmp("GE", a, r.c(0.0))
    re = r.sel(pos, t, r.div(y, t2))
    im = r.sel(pos, r.div(b, t2), r.copysign(t, b))
    inf, nan, zero = r.c(math.inf), r.c(math.nan), r.c(0.0)
    bzero, bnan = r.iszero(b), r.isnan(b)
    pinf = r.cmp("EQ", a, inf)
    ninf = r.cmp("EQ", a, r.c(-math.inf))
    return cases(r, (re, im), [
        (r.isinf(b), inf, b),
        (pinf, inf, r.sel(bnan, nan, r.copysign(zero, b))),
        (ninf, r.sel(bnan, nan, zero), r.copysign(inf, b)),
        (r.and_(bzero, pos), r.f("sqrt", x), b),
        (r.and_(bzero, r.cmp("LT", a, zero)), zero, r.copysign(r.f("sqrt", x), b)),
    ])


# ---------------------------------------------------------------- hyperbolic / trigonometric

def _sinh_cosh(r: R, a: str) -> tuple[str, str, str, str]:
    """(sinh a, cosh a, big, half-exponential) with ``big`` where they overflow."""
    ax = r.abs(a)
    return (r.f("chlo.sinh", a), r.f("chlo.cosh", a), r.cmp("GT", ax, r.c(r.logmax)),
            r.f("exponential", r.mul(ax, r.c(0.5))))


def _half_big(r: R, h: str, c: str) -> str:
    return r.mul(r.mul(h, r.mul(r.c(0.5), c)), h)


def csinh(r: R, a: str, b: str) -> Pair:
    sh, ch, big, h = _sinh_cosh(r, a)
    cb, sb = r.f("cosine", b), r.f("sine", b)
    re = r.sel(big, r.copysign(_half_big(r, h, cb), r.mul(a, cb)), r.mul(sh, cb))
    im = r.sel(big, _half_big(r, h, sb), r.mul(ch, sb))
    bbad = r.not_(r.isfinite(b))
    return cases(r, (re, im), [
        (r.iszero(b), sh, b),
        (r.and_(r.iszero(a), bbad), a, r.c(math.nan)),
        (r.and_(r.isinf(a), bbad), r.c(math.inf), r.c(math.nan)),
    ])


def ccosh(r: R, a: str, b: str) -> Pair:
    sh, ch, big, h = _sinh_cosh(r, a)
    cb, sb = r.f("cosine", b), r.f("sine", b)
    re = r.sel(big, _half_big(r, h, cb), r.mul(ch, cb))
    im = r.sel(big, r.copysign(_half_big(r, h, sb), r.mul(a, sb)), r.mul(sh, sb))
    bbad = r.not_(r.isfinite(b))
    zero = r.c(0.0)
    signed_zero = r.sel(r.xor_(r.signbit(a), r.signbit(b)), r.c(-0.0), zero)
    signed_zero = r.sel(r.isnan(a), b, signed_zero)
    return cases(r, (re, im), [
        (r.iszero(b), ch, signed_zero),
        (r.and_(r.iszero(a), bbad), r.c(math.nan), zero),
        (r.and_(r.isinf(a), bbad), r.c(math.inf), r.c(math.nan)),
    ])


def ctanh(r: R, a: str, b: str) -> Pair:
    one = r.c(1.0)
    t = r.f("chlo.tan", b)
    beta = r.add(one, r.mul(t, t))
    s = r.f("chlo.sinh", a)
    s2 = r.mul(s, s)
    rho = r.f("sqrt", r.add(one, s2))
    den = r.add(one, r.mul(beta, s2))
    re = r.div(r.mul(r.mul(beta, rho), s), den)
    im = r.div(t, den)
    ax = r.abs(a)
    big = r.cmp("GT", ax, r.c(0.5 * -math.log(r.eps) + 4.0))
    sc = r.mul(r.f("sine", b), r.f("cosine", b))
    im_big = r.mul(r.mul(r.c(4.0), sc), r.f("exponential", r.mul(r.c(-2.0), ax)))
    re = r.sel(big, r.copysign(one, a), re)
    im = r.sel(big, im_big, im)
    bbad = r.not_(r.isfinite(b))
    nan = r.c(math.nan)
    zero = r.c(0.0)
    return cases(r, (re, im), [
        (r.isinf(a), r.copysign(one, a), r.copysign(zero, b)),
        (r.and_(r.iszero(a), bbad), a, nan),
        (bbad, nan, nan),
        (r.and_(r.isnan(a), r.iszero(b)), nan, b),
    ])


def _rot(f: Any, back: bool) -> Any:
    """``-1j * f(1j * z)`` (back=True, for sin/tan) or ``f(1j * z)`` (for cos)."""
    def k(r: R, a: str, b: str) -> Pair:
        x, y = f(r, r.neg(b), a)
        return (y, r.neg(x)) if back else (x, y)
    return k


# ---------------------------------------------------------------- inverse functions

def _chlo(r: R, name: str, a: str, b: str, cd: DType) -> Pair:
    z = r.e.op("stablehlo.complex", [a, b], tensor_type(r.s, cd))
    w = r.e.op(name, [z], tensor_type(r.s, cd))
    return (r.e.op("stablehlo.real", [w], r.t), r.e.op("stablehlo.imag", [w], r.t))


def _asinh_table(r: R, x: str, y: str) -> list:
    """C99 casinh for x, y >= 0 (and NaN): rows of (cond, re, im)."""
    inf, nan, zero = r.c(math.inf), r.c(math.nan), r.c(0.0)
    xf, yf = r.isfinite(x), r.isfinite(y)
    xi, yi, xn, yn = r.isinf(x), r.isinf(y), r.isnan(x), r.isnan(y)
    return [
        (r.and_(xn, yi), inf, nan),
        (r.and_(xn, r.iszero(y)), nan, zero),
        (r.or_(xn, yn), r.sel(xi, inf, nan), nan),
        (r.and_(xi, yi), inf, r.c(_PI / 4)),
        (r.and_(xf, yi), inf, r.c(_PI / 2)),
        (r.and_(xi, yf), inf, zero),
    ]


def _atanh_table(r: R, x: str, y: str) -> list:
    """C99 catanh for x, y >= 0 (and NaN)."""
    inf, nan, zero, half_pi = r.c(math.inf), r.c(math.nan), r.c(0.0), r.c(_PI / 2)
    xi, yi, xn, yn = r.isinf(x), r.isinf(y), r.isnan(x), r.isnan(y)
    return [
        (r.and_(xn, yi), zero, half_pi),
        (r.and_(r.iszero(x), yn), zero, nan),
        (r.and_(xi, yn), zero, nan),
        (r.or_(xn, yn), nan, nan),
        (r.or_(xi, yi), zero, half_pi),
        (r.and_(r.cmp("EQ", x, r.c(1.0)), r.iszero(y)), inf, zero),
    ]


def _odd_conj(name: str, table: Any, swap: bool) -> Any:
    """An odd, conj-symmetric inverse function (asinh, atanh; asin, atan by swapping)."""
    def k(r: R, a: str, b: str, cd: DType) -> Pair:
        re, im = _chlo(r, name, a, b, cd)
        x, y = r.abs(a), r.abs(b)
        if swap:  # asin(z) = -i asinh(iz): in the first quadrant, swap(asinh(y + ix))
            rows = [(c, q, p) for c, p, q in table(r, y, x)]
        else:
            rows = table(r, x, y)
        re, im = cases(r, (r.abs(re), r.abs(im)), rows)
        return r.copysign(re, a), r.copysign(im, b)
    return k


def _cacos_rows(r: R, a: str, y: str) -> list:
    """C99 cacos for y = |imag| (NaN allowed); imaginary parts for the upper half-plane."""
    inf, nan, zero, pi = r.c(math.inf), r.c(math.nan), r.c(0.0), r.c(_PI)
    ai, yi, an, yn = r.isinf(a), r.isinf(y), r.isnan(a), r.isnan(y)
    apos = r.cmp("GT", a, zero)
    return [
        (r.and_(an, yi), nan, r.neg(inf)),
        (r.and_(ai, yn), nan, r.neg(inf)),
        (r.and_(r.iszero(a), yn), r.c(_PI / 2), nan),
        (r.or_(an, yn), nan, nan),
        (r.and_(ai, yi), r.sel(apos, r.c(_PI / 4), r.c(3 * _PI / 4)), r.neg(inf)),
        (yi, r.c(_PI / 2), r.neg(inf)),
        (ai, r.sel(apos, zero, pi), r.neg(inf)),
    ]


def cacos(r: R, a: str, b: str, cd: DType) -> Pair:
    re, im = _chlo(r, "chlo.acos", a, b, cd)
    re, im = cases(r, (re, r.neg(r.abs(im))), _cacos_rows(r, a, r.abs(b)))
    return re, r.sel(r.signbit(b), r.neg(im), im)


def cacosh(r: R, a: str, b: str, cd: DType) -> Pair:
    """acosh(z) = +-i acos(z): C99 cacosh from the cacos table (real part >= 0)."""
    re, im = _chlo(r, "chlo.acosh", a, b, cd)
    y = r.abs(b)
    rows = [(c, r.abs(q), p) for c, p, q in _cacos_rows(r, a, y)]
    rows.insert(0, (r.and_(r.iszero(a), r.isnan(y)), r.c(math.nan), r.c(_PI / 2)))
    re, im = cases(r, (r.abs(re), r.abs(im)), rows)
    return re, r.copysign(im, b)


# ---------------------------------------------------------------- abs, sign, divide, pow

def cabs(r: R, a: str, b: str) -> str:
    return r.hypot(a, b)


def csign(r: R, a: str, b: str) -> Pair:
    """z / |z| (each part divided by the real |z|); as NumPy, one infinite part gives a unit
    along it and two give NaN."""
    m = r.hypot(a, b)
    zero, nan, one = r.c(0.0), r.c(math.nan), r.c(1.0)
    ai, bi = r.isinf(a), r.isinf(b)
    return cases(r, (r.div(a, m), r.div(b, m)), [
        (r.or_(r.isnan(a), r.isnan(b)), nan, nan),
        (r.and_(r.iszero(a), r.iszero(b)), zero, zero),
        (r.and_(ai, bi), nan, nan),
        (ai, r.copysign(one, a), zero),
        (bi, zero, r.copysign(one, b)),
    ])


def cdiv(r: R, a: str, b: str, c: str, d: str) -> Pair:
    """NumPy's complex division (Smith's algorithm), so results match NumPy's."""
    ac, ad = r.abs(c), r.abs(d)
    c_big = r.cmp("GE", ac, ad)
    both0 = r.and_(r.iszero(ac), r.iszero(ad))
    # |c| >= |d|
    csafe = r.sel(both0, r.c(1.0), c)
    rat = r.div(d, csafe)
    scl = r.div(r.c(1.0), r.add(c, r.mul(d, rat)))
    re1 = r.mul(r.add(a, r.mul(b, rat)), scl)
    im1 = r.mul(r.sub(b, r.mul(a, rat)), scl)
    re1 = r.sel(both0, r.div(a, ac), re1)
    im1 = r.sel(both0, r.div(b, ac), im1)
    # |c| < |d|
    rat2 = r.div(c, d)
    scl2 = r.div(r.c(1.0), r.add(d, r.mul(c, rat2)))
    re2 = r.mul(r.add(r.mul(a, rat2), b), scl2)
    im2 = r.mul(r.sub(r.mul(b, rat2), a), scl2)
    return r.sel(c_big, re1, re2), r.sel(c_big, im1, im2)


def cmul(r: R, a: str, b: str, c: str, d: str) -> Pair:
    return r.sub(r.mul(a, c), r.mul(b, d)), r.add(r.mul(a, d), r.mul(b, c))


def _int_pow(r: R, a: str, b: str, c: str) -> tuple[Pair, str]:
    """NumPy's exact path for x**n with an integer real exponent |n| < 100: repeated
    multiplication (binary powering), then 1/x**|n| for negative n. Returns the value and
    where it applies."""
    e, i32 = r.e, dt.int32
    ti = tensor_type(r.s, i32)
    n = e.op("stablehlo.convert", [r.abs(c)], ti)
    one_i = bcast(e, e.const(1, i32), (), r.s, i32)
    p: Pair = (a, b)
    acc: Pair = (r.c(1.0), r.c(0.0))
    for k in range(7):
        if k:
            p = cmul(r, *p, *p)
        bit = e.op("stablehlo.and", [e.op("stablehlo.shift_right_logical",
                                          [n, bcast(e, e.const(k, i32), (), r.s, i32)], ti),
                                     one_i], ti)
        on = compare(e, "EQ", bit, one_i, r.s, i32)
        m = cmul(r, *acc, *p)
        acc = (r.sel(on, m[0], acc[0]), r.sel(on, m[1], acc[1]))
    sq = cmul(r, a, b, a, b)
    cube = cmul(r, a, b, *sq)
    acc = cases(r, acc, [(r.cmp("EQ", c, r.c(1.0)), a, b),
                         (r.cmp("EQ", c, r.c(2.0)), *sq),
                         (r.cmp("EQ", c, r.c(3.0)), *cube)])
    inv = cdiv(r, r.c(1.0), r.c(0.0), *acc)
    neg = r.cmp("LT", c, r.c(0.0))
    acc = (r.sel(neg, inv[0], acc[0]), r.sel(neg, inv[1], acc[1]))
    is_int = r.and_(r.cmp("EQ", c, r.f("round_nearest_even", c)),
                    r.cmp("LT", r.abs(c), r.c(100.0)))
    return acc, is_int


def cpow(r: R, a: str, b: str, c: str, d: str) -> Pair:
    """x**y = exp(y * log(x)), with NumPy's cases: y == 0 gives 1; x == 0 gives 0 when
    real(y) > 0 and NaN otherwise; an integer real exponent below 100 in magnitude multiplies
    (so ``z**2 == z*z`` exactly)."""
    la, lb = clog(r, a, b)
    re, im = cexp(r, *cmul(r, c, d, la, lb))
    zero, nan = r.c(0.0), r.c(math.nan)
    x0 = r.and_(r.iszero(a), r.iszero(b))
    ip, is_int = _int_pow(r, a, b, c)
    return cases(r, (re, im), [
        (r.and_(r.iszero(c), r.iszero(d)), r.c(1.0), zero),
        (r.and_(x0, r.cmp("GT", c, zero)), zero, zero),
        (x0, nan, nan),
        (r.and_(is_int, r.iszero(d)), *ip),
    ])


_UNARY: dict[str, Any] = {
    "exp": cexp, "expm1": cexpm1, "log": clog, "log1p": clog1p, "sqrt": csqrt,
    "sinh": csinh, "cosh": ccosh, "tanh": ctanh,
    "sin": _rot(csinh, True), "cos": _rot(ccosh, False), "tan": _rot(ctanh, True),
    "sign": csign,
}
_INVERSE: dict[str, Any] = {
    "asinh": _odd_conj("chlo.asinh", _asinh_table, False),
    "asin": _odd_conj("chlo.asin", _asinh_table, True),
    "atanh": _odd_conj("chlo.atanh", _atanh_table, False),
    "atan": _odd_conj("chlo.atan", _atanh_table, True),
    "acos": cacos, "acosh": cacosh,
}
_BINARY: dict[str, Any] = {"divide": cdiv, "pow": cpow}


def crecip(r: R, a: str, b: str) -> Pair:
    """1/z as NumPy computes it (Smith's algorithm specialised to a numerator of 1). Written
    with reciprocals: XLA rewrites ``(x / y) / z`` as ``x / (y * z)``, which underflows."""
    im_small = r.cmp("LE", r.abs(b), r.abs(a))
    q1 = r.div(b, a)
    i1 = r.div(r.c(1.0), r.add(a, r.mul(b, q1)))
    q2 = r.div(a, b)
    i2 = r.div(r.c(1.0), r.add(r.mul(a, q2), b))
    return (r.sel(im_small, i1, r.mul(q2, i2)),
            r.sel(im_small, r.neg(r.mul(q1, i1)), r.neg(i2)))


_UNARY["reciprocal"] = crecip


def _parts(e: Emitter, z: str, s: tuple, d: DType) -> Pair:
    rt = tensor_type(s, dt.REAL_OF[d])
    return e.op("stablehlo.real", [z], rt), e.op("stablehlo.imag", [z], rt)


def _pack(e: Emitter, p: Pair, s: tuple, d: DType) -> str:
    return e.op("stablehlo.complex", list(p), tensor_type(s, d))


def _log_base(base: float) -> Any:
    def k(r: R, a: str, b: str) -> Pair:
        re, im = clog(r, a, b)
        k_ = r.c(1.0 / math.log(base))
        return r.mul(re, k_), r.mul(im, k_)
    return k


_UNARY["log2"] = _log_base(2.0)
_UNARY["log10"] = _log_base(10.0)


def complex_kernel(name: str) -> Any:
    """The complex kernel ``(e, args, shape, dtype) -> ssa`` for ``name``, or None."""
    if name in _UNARY:
        f = _UNARY[name]
        return lambda e, a, s, d: _pack(e, f(R(e, s, dt.REAL_OF[d]), *_parts(e, a[0], s, d)), s, d)
    if name in _INVERSE:
        g = _INVERSE[name]
        return lambda e, a, s, d: _pack(e, g(R(e, s, dt.REAL_OF[d]), *_parts(e, a[0], s, d), d),
                                        s, d)
    if name in _BINARY:
        h = _BINARY[name]
        return lambda e, a, s, d: _pack(e, h(R(e, s, dt.REAL_OF[d]), *_parts(e, a[0], s, d),
                                             *_parts(e, a[1], s, d)), s, d)
    if name == "abs":
        return lambda e, a, s, d: cabs(R(e, s, dt.REAL_OF[d]), *_parts(e, a[0], s, d))
    return None


COMPLEX_KERNELS = ("abs", *_UNARY, *_INVERSE, *_BINARY)
