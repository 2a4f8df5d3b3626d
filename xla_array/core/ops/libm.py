"""Accurate float64 kernels for the transcendental functions XLA:CPU computes less accurately
than NumPy (``fast_math`` off, the default): ``log10``, ``log2``, ``log1p``, ``expm1``, ``tanh``,
``sinh``, ``cosh``, ``atanh``, ``asinh``, ``acosh``, ``atan``; float32 and the half floats
through XLA's float64 forms, rounded once. ``exact(name, fast)`` is the kernel the elementwise
table uses. The rounding-safe division and unfused products they are built with are in
``ieee.py``; docs/dtypes.md gives the measured accuracy.

- ``log10``/``log2`` were ``log(x) / ln(base)``, i.e. ``log(x) * RN(1 / ln(base))``: two
  roundings, up to 2 ulp from NumPy, and ``log10(0.1) != -1``. They split ``x = m * 2**k``
  with integer ops (subnormal inputs too) and add ``k * log_base(2)`` and ``log(m) / ln(base)``
  with both constants in two parts: powers of two and ten come out exact, the rest within one
  ulp. ``log1p`` (XLA's: up to 128 ulp off on jaxlib 0.10, 2 on 0.12) gets the classic
  correction ``log(u) - ((u - 1) - x) / u`` with ``u = 1 + x``: within one ulp.
- ``sinh``/``cosh`` were ``exp(x - ln 2)``-based (up to 496 ulp off in float64 near overflow),
  ``atanh`` ``log((1 + x) / (1 - x)) / 2`` (129 ulp off for small x), ``tanh`` up to 7: these,
  ``asinh`` and ``acosh`` are within one ulp of the true value here (polynomials from
  scripts/fit_polynomials.py, a double-double exp or log).
"""

from __future__ import annotations

from decimal import Decimal, getcontext
from fractions import Fraction
from typing import Any

import numpy as np

from .. import dtypes as dt
from ..dtypes import DType
from ..lower import Emitter, tensor_type
from .ieee import divide, faithful, hidden, opaque
from .structural import bcast, compare, select

__all__ = ["exact", "widen"]


# ---------------------------------------------------------------- log10, log2, log1p

getcontext().prec = 60
_LOG10_2 = Decimal("0.301029995663981195213738894724493026768189881462108541310430")
_INV_LN10 = Decimal("0.434294481903251827651128918916605082294397005803666566114454")
_INV_LN2 = Decimal("1.442695040888963407359924681001892137426645954152985934135450")


def _split(c: Decimal, d: DType, hi_bits: int | None) -> tuple[float, float]:
    """``c = hi + lo`` in dtype ``d``; ``hi`` keeps ``hi_bits`` significant bits, so that its
    product with an exponent ``k`` is exact."""
    t = d.np.type
    f = Fraction(c)
    hi = t(float(f))
    if hi_bits is not None:
        m, ex = np.frexp(np.float64(hi))
        hi = t(np.ldexp(np.round(np.ldexp(m, hi_bits)), ex - hi_bits))
    return float(hi), float(t(float(f - Fraction(float(hi)))))


def _k(e: Emitter, v: Any, s: tuple, d: DType) -> str:
    return bcast(e, e.const(v, d), (), s, d)


def _op(e: Emitter, name: str, args: list, s: tuple, d: DType) -> str:
    return e.op(name, args, tensor_type(s, d))


# bits -> (int dtype, mantissa bits, bits of sqrt(1/2), exponent of the smallest subnormal,
# bits of +inf)
_LAYOUT = {64: (dt.int64, 52, 0x3FE6A09E667F3BCD, -1074.0, 0x7FF0000000000000),
           32: (dt.int32, 23, 0x3F3504F3, -149.0, 0x7F800000)}


def _decompose(e: Emitter, x: str, s: tuple, d: DType) -> tuple[str, str, str]:
    """``(k, m, ok)`` with ``x = m * 2**k`` (``k`` as a float), ``m`` in ``[sqrt(1/2),
    sqrt(2))``, for positive finite ``x``, subnormals included (read as integers, which no
    flush-to-zero touches); where ``ok`` is false, ``k = 0`` and ``m = x``."""
    it, mb, off, sub_exp, inf_bits = _LAYOUT[d.bits]
    b = e.op("stablehlo.bitcast_convert", [x], tensor_type(s, it))
    ok = _op(e, "stablehlo.and", [compare(e, "GT", b, _k(e, 0, s, it), s, it),
                                  compare(e, "LT", b, _k(e, inf_bits, s, it), s, it)], s, dt.bool)
    sub = compare(e, "LT", b, _k(e, 1 << mb, s, it), s, it)
    xs = select(e, sub, _op(e, "stablehlo.convert", [b], s, d), x, s, d)  # subnormal: its bits
    b2 = e.op("stablehlo.bitcast_convert", [xs], tensor_type(s, it))
    k = _op(e, "stablehlo.shift_right_arithmetic",
            [_op(e, "stablehlo.subtract", [b2, _k(e, off, s, it)], s, it), _k(e, mb, s, it)], s, it)
    mbits = _op(e, "stablehlo.subtract",
                [b2, _op(e, "stablehlo.shift_left", [k, _k(e, mb, s, it)], s, it)], s, it)
    m = e.op("stablehlo.bitcast_convert", [mbits], tensor_type(s, d))
    kf = _op(e, "stablehlo.add", [_op(e, "stablehlo.convert", [k], s, d),
                                  select(e, sub, _k(e, sub_exp, s, d), _k(e, 0.0, s, d), s, d)],
             s, d)
    return select(e, ok, kf, _k(e, 0.0, s, d), s, d), select(e, ok, m, x, s, d), ok


def widen(e: Emitter, x: str, s: tuple, d: DType) -> str:
    """``x`` as float64, exactly: XLA:CPU's convert reads a float32 subnormal as zero
    (denormals-are-zero), so those are rebuilt from their bits (``bits * 2**-149``)."""
    w = _op(e, "stablehlo.convert", [x], s, dt.float64)
    if d.bits != 32:
        return w
    b = e.op("stablehlo.bitcast_convert", [x], tensor_type(s, dt.int32))
    mag = _op(e, "stablehlo.and", [b, _k(e, 0x7FFFFFFF, s, dt.int32)], s, dt.int32)
    v = _mul(e, _op(e, "stablehlo.convert", [mag], s, dt.float64), 2.0 ** -149, s, dt.float64)
    v = select(e, compare(e, "LT", b, _k(e, 0, s, dt.int32), s, dt.int32),
               _op(e, "stablehlo.negate", [v], s, dt.float64), v, s, dt.float64)
    sub = compare(e, "LT", mag, _k(e, 1 << 23, s, dt.int32), s, dt.int32)
    return select(e, sub, v, w, s, dt.float64)


def _mul(e: Emitter, a: str, c: float, s: tuple, d: DType) -> str:
    return _op(e, "stablehlo.multiply", [a, _k(e, c, s, d)], s, d)


def _add(e: Emitter, a: str, b: str, s: tuple, d: DType) -> str:
    return _op(e, "stablehlo.add", [a, b], s, d)


def _log10(e: Emitter, a: list, s: tuple, d: DType) -> str:
    ahi, alo = _split(_LOG10_2, d, 41 if d.bits == 64 else 15)  # hi * k exact for any k
    bhi, blo = _split(_INV_LN10, d, None)
    kf, m, ok = _decompose(e, a[0], s, d)
    ln = _op(e, "stablehlo.log", [m], s, d)
    t = _add(e, _mul(e, ln, blo, s, d), _mul(e, kf, alo, s, d), s, d)
    r = _add(e, _mul(e, kf, ahi, s, d), _add(e, _mul(e, ln, bhi, s, d), t, s, d), s, d)
    return select(e, ok, r, ln, s, d)  # zero, negative, inf, NaN: log's own special values


def _log2(e: Emitter, a: list, s: tuple, d: DType) -> str:
    chi, clo = _split(_INV_LN2, d, None)
    kf, m, ok = _decompose(e, a[0], s, d)
    ln = _op(e, "stablehlo.log", [m], s, d)
    t = _add(e, _mul(e, ln, chi, s, d), _mul(e, ln, clo, s, d), s, d)
    return select(e, ok, _add(e, kf, t, s, d), ln, s, d)


def _log1p(e: Emitter, a: list, s: tuple, d: DType) -> str:
    x = a[0]
    one = _k(e, 1.0, s, d)
    u = _add(e, one, x, s, d)
    # (u - 1) - x is the rounding error of 1 + x; a plain constant 1 would let XLA fold
    # (1 + x) - 1 into x
    c = _op(e, "stablehlo.subtract",
            [_op(e, "stablehlo.subtract", [u, opaque(e, one, x, s, d)], s, d), x], s, d)
    corr = divide(e, c, u, s, d)
    corr = select(e, compare(e, "NE", corr, corr, s, d), _k(e, 0.0, s, d), corr, s, d)
    r = _op(e, "stablehlo.subtract", [_op(e, "stablehlo.log", [u], s, d), corr], s, d)
    return select(e, compare(e, "EQ", u, one, s, d), x, r, s, d)  # |x| < ulp(1)/2: x (-0.0 too)


# --------------------------------------- expm1, tanh, sinh, cosh, atanh, asinh, acosh, atan
#
# XLA's float64 forms were up to 7 ulp (tanh), 4 (sinh, cosh: exp(x - ln 2)-based, ~500 near
# overflow), 2 (atan, atanh; atanh 129 for small x) from NumPy's (glibc). expm1 and atan follow
# fdlibm's algorithms (within one ulp of NumPy); tanh, sinh, cosh, atanh, asinh and acosh are
# within one ulp of the true value (polynomials, a double-double exp or log), where glibc's are
# up to 1.6-2.1 ulp off. float32 and the half floats go through float64 and are rounded once at
# the end: correctly rounded nearly always (XLA's float32 tanh, sinh, cosh, asin, acos, atan,
# atanh were 2-4 ulp off).

def _sub(e: Emitter, a: str, b: str, s: tuple, d: DType) -> str:
    return _op(e, "stablehlo.subtract", [a, b], s, d)


def _lt(e: Emitter, a: str, c: float, s: tuple, d: DType) -> str:
    return compare(e, "LT", a, _k(e, c, s, d), s, d)


def _signed(e: Emitter, x: str, ax: str, r: str, tiny: float, s: tuple, d: DType) -> str:
    """``r`` (a function of ``|x|``) with the sign of ``x``; ``x`` itself where ``|x| < tiny``
    (the odd functions' result there, -0.0 included)."""
    r = select(e, _lt(e, x, 0.0, s, d), _op(e, "stablehlo.negate", [r], s, d), r, s, d)
    return select(e, _lt(e, ax, tiny, s, d), x, r, s, d)


def _horner(e: Emitter, w: str, coefs: tuple, s: tuple, d: DType) -> str:
    acc = _k(e, coefs[-1], s, d)
    for c in reversed(coefs[:-1]):
        acc = _add(e, _k(e, c, s, d), _op(e, "stablehlo.multiply", [w, acc], s, d), s, d)
    return acc


_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
_EXPM1_Q = (1.0, -3.33333333333331316428e-02, 1.58730158725481460165e-03,
            -7.93650757867487942473e-05, 4.00821782732936239552e-06, -2.01099218183624371326e-07)


def _pow2(e: Emitter, k: str, s: tuple) -> str:
    """``2.0 ** k`` for an integral float64 ``k`` in the normal exponent range, from bits:
    ``k + 1023 + 2**52`` holds ``k + 1023`` in its low bits, shifted into the exponent's place
    (no float-to-integer conversion, which XLA:CPU does not vectorize)."""
    d, i64 = dt.float64, dt.int64
    b = e.op("stablehlo.bitcast_convert", [_add(e, k, _k(e, 1023.0 + 2.0 ** 52, s, d), s, d)],
             tensor_type(s, i64))
    b = _op(e, "stablehlo.shift_left", [b, _k(e, 52, s, i64)], s, i64)
    return e.op("stablehlo.bitcast_convert", [b], tensor_type(s, d))


def _expm1(e: Emitter, a: list, s: tuple, d: DType) -> str:
    """fdlibm's ``expm1``: ``x = k ln2 + r`` with ``|r| <= ln2 / 2`` (``ln 2`` in two parts,
    ``c`` the reduction's rounding error), a rational form in ``r``, and ``2**k`` put back by
    one of fdlibm's exact reconstructions for each range of ``k``. XLA's was up to 3 ulp from
    NumPy in float64 and 5 from the correctly rounded float32 on jaxlib 0.10."""
    x = a[0]
    ax = _op(e, "stablehlo.abs", [x], s, d)
    kg = _op(e, "stablehlo.round_nearest_afz", [_mul(e, x, 1.44269504088896338700, s, d)], s, d)
    sgn = select(e, _lt(e, x, 0.0, s, d), _k(e, -1.0, s, d), _k(e, 1.0, s, d), s, d)
    kf = select(e, _lt(e, ax, 1.0397207708399179, s, d), sgn, kg, s, d)  # |x| < 1.5 ln2: +-1
    kf = select(e, compare(e, "GT", ax, _k(e, 0.34657359027997264, s, d), s, d), kf,
                _k(e, 0.0, s, d), s, d)  # |x| <= ln2 / 2: no reduction
    hi = _sub(e, x, _mul(e, kf, _LN2_HI, s, d), s, d)  # exact: ln2_hi has 21 zero low bits
    lo = _mul(e, kf, _LN2_LO, s, d)
    r = _sub(e, hi, lo, s, d)
    c = _sub(e, _sub(e, hi, r, s, d), lo, s, d)
    hfx = _mul(e, r, 0.5, s, d)
    hxs = _op(e, "stablehlo.multiply", [r, hfx], s, d)
    r1 = _horner(e, hxs, _EXPM1_Q, s, d)
    t = _sub(e, _k(e, 3.0, s, d), _op(e, "stablehlo.multiply", [r1, hfx], s, d), s, d)
    ee = _op(e, "stablehlo.multiply", [hxs, divide(
        e, _sub(e, r1, t, s, d),
        _sub(e, _k(e, 6.0, s, d), _op(e, "stablehlo.multiply", [r, t], s, d), s, d), s, d)],
        s, d)
    k0 = _sub(e, r, _sub(e, _op(e, "stablehlo.multiply", [r, ee], s, d), hxs, s, d), s, d)
    e2 = _sub(e, _sub(e, _op(e, "stablehlo.multiply", [r, _sub(e, ee, c, s, d)], s, d), c, s, d),
              hxs, s, d)
    r_e2 = _sub(e, r, e2, s, d)
    km1 = _sub(e, _mul(e, r_e2, 0.5, s, d), _k(e, 0.5, s, d), s, d)
    k1 = select(e, _lt(e, r, -0.25, s, d),
                _mul(e, _sub(e, e2, _add(e, r, _k(e, 0.5, s, d), s, d), s, d), -2.0, s, d),
                _add(e, _k(e, 1.0, s, d), _mul(e, r_e2, 2.0, s, d), s, d), s, d)
    half_scale = _pow2(e, _sub(e, kf, _k(e, 1.0, s, d), s, d), s)  # 2**(k - 1)
    scale = _mul(e, half_scale, 2.0, s, d)  # 2**k
    neg_k = _pow2(e, _op(e, "stablehlo.negate", [kf], s, d), s)  # 2**-k (k from 2 to 56)
    one = _k(e, 1.0, s, d)
    # y * 2**(k - 1) * 2, so that k = 1024 (x near the overflow threshold) does not overflow
    far = _sub(e, _op(e, "stablehlo.multiply", [_mul(e, _sub(e, one, _sub(e, e2, r, s, d), s, d),
                                                     2.0, s, d), half_scale],
                      s, d), one, s, d)
    low = _op(e, "stablehlo.multiply", [_sub(e, _sub(e, one, neg_k, s, d), _sub(e, e2, r, s, d),
                                             s, d), scale], s, d)
    high = _op(e, "stablehlo.multiply", [_add(e, _sub(e, r, _add(e, e2, neg_k, s, d), s, d), one,
                                              s, d), scale], s, d)
    y = select(e, _lt(e, kf, 20.0, s, d), low, high, s, d)
    y = select(e, _op(e, "stablehlo.or", [_lt(e, kf, -1.5, s, d), compare(
        e, "GT", kf, _k(e, 56.0, s, d), s, d)], s, dt.bool), far, y, s, d)
    y = select(e, compare(e, "EQ", kf, _k(e, 1.0, s, d), s, d), k1, y, s, d)
    y = select(e, compare(e, "EQ", kf, _k(e, -1.0, s, d), s, d), km1, y, s, d)
    y = select(e, compare(e, "EQ", kf, _k(e, 0.0, s, d), s, d), k0, y, s, d)
    y = select(e, compare(e, "GT", x, _k(e, 709.782712893383973096, s, d), s, d),
               _k(e, float("inf"), s, d), y, s, d)
    y = select(e, _lt(e, x, -38.816242111356935, s, d), _k(e, -1.0, s, d), y, s, d)  # 56 ln2
    y = select(e, compare(e, "NE", x, x, s, d), x, y, s, d)
    return select(e, _lt(e, ax, 2.0 ** -54, s, d), x, y, s, d)  # x itself, -0.0 too


# e**a as a double-double for sinh and cosh: k = round(a / ln 2), r = a - k ln 2 as rh + rl
# (ln 2 in two parts, k ln2_hi exact), e**r = 1 + u + e1 with u = rh + (rh**2 P(rh) + rl) and
# its rounding error e1, P a Chebyshev interpolant of (e**r - 1 - r) / r**2 on [-ln2/2, ln2/2]
# (scripts/fit_polynomials.py); then 1 + u is split into hi + lo exactly. hi + lo is within
# ~0.03 ulp of e**r, where XLA's exp is up to 1.5 ulp from e**a.
_EXP_P = (0.5, 0.16666666666666666, 0.04166666666666668, 0.008333333333333333,
          0.0013888888888879073, 0.00019841269841263298, 2.4801587336442236e-05,
          2.755731924721873e-06, 2.75572632790885e-07, 2.505207109429355e-08,
          2.0918137737642736e-09, 1.608662795678037e-10)
_SINH_P = (0.16666666666666666, 0.008333333333333333, 0.00019841269841269773,
           2.755731922404034e-06, 2.505210836405804e-08, 1.6059048396350562e-10,
           7.646625361656657e-13, 2.8445264169895285e-15)  # (sinh(a) / a - 1) / a**2, a <= 1
_COSH_P = (0.5, 0.041666666666666664, 0.001388888888888876, 2.4801587301690853e-05,
           2.755731918331876e-07, 2.0876765658642154e-09, 1.1469721885352242e-11,
           4.842346201844238e-14)  # (cosh(a) - 1) / a**2 in a**2, a <= 1


def _exp_dd(e: Emitter, ax: str, s: tuple, d: DType) -> tuple[str, str, str]:
    """``(hi, lo, k)`` with ``e**a = 2**k (hi + lo)`` to about 2**-58 relative, for ``0 <= a
    <= 711`` (``k`` as a float, at most 1026)."""
    mul = "stablehlo.multiply"
    k = _op(e, "stablehlo.round_nearest_even", [_mul(e, ax, 1.4426950408889634, s, d)], s, d)
    r1 = _sub(e, ax, _mul(e, k, _LN2_HI, s, d), s, d)  # exact
    kl = _mul(e, k, _LN2_LO, s, d)
    rh = _sub(e, r1, kl, s, d)
    rl = _sub(e, _sub(e, r1, rh, s, d), kl, s, d)
    t = _add(e, _op(e, mul, [_op(e, mul, [rh, rh], s, d), _horner(e, rh, _EXP_P, s, d)], s, d),
             rl, s, d)
    u = _add(e, rh, t, s, d)
    e1 = _add(e, _sub(e, rh, u, s, d), t, s, d)
    one = hidden(e, _k(e, 1.0, s, d), ax, s, d)  # else XLA may fold 1 - (1 + u) into -u
    hi = _add(e, one, u, s, d)
    lo = _add(e, _add(e, _sub(e, one, hi, s, d), u, s, d), e1, s, d)
    return hi, lo, k


def _two_sum(e: Emitter, a: str, b: str, s: tuple, d: DType) -> tuple[str, str]:
    """``a + b`` rounded and its exact rounding error (Knuth's TwoSum, additions only; ``a``
    must not be a constant, which XLA would fold out of ``(a + b) - a``)."""
    r = _add(e, a, b, s, d)
    bb = _sub(e, r, a, s, d)
    err = _add(e, _sub(e, a, _sub(e, r, bb, s, d), s, d), _sub(e, b, bb, s, d), s, d)
    return r, err


def _sinh_cosh(e: Emitter, ax: str, sign: float, s: tuple, d: DType) -> str:
    """``(e**a + sign * e**-a) / 2`` for ``a`` at least 1/2 (cosh) or 1 (sinh), within one ulp:
    ``E = 2**k (hi + lo)`` and ``1 / E`` rounded once (its error is at most 1/16 ulp of the
    result there), the two added exactly, the low parts after; from 22 on ``(hi + lo) 2**(k - 1)``,
    scaled in two steps so that ``k`` up to 1025 does not overflow early."""
    hi, lo, k = _exp_dd(e, _op(e, "stablehlo.minimum", [ax, _k(e, 711.0, s, d)], s, d), s, d)
    kk = _op(e, "stablehlo.minimum", [k, _k(e, 40.0, s, d)], s, d)
    scale = _pow2(e, kk, s)
    eh = _op(e, "stablehlo.multiply", [hi, scale], s, d)
    el = _op(e, "stablehlo.multiply", [lo, scale], s, d)
    inv = divide(e, _k(e, sign, s, d), eh, s, d)
    r, err = _two_sum(e, eh, inv, s, d)
    mid = _mul(e, _add(e, r, _add(e, err, el, s, d), s, d), 0.5, s, d)
    big = _op(e, "stablehlo.multiply", [_add(e, hi, lo, s, d),
                                        _pow2(e, _sub(e, k, _k(e, 2.0, s, d), s, d), s)], s, d)
    return select(e, _lt(e, ax, 22.0, s, d), mid, _mul(e, big, 2.0, s, d), s, d)


# tanh below 1.25: Chebyshev interpolants (scripts/fit_polynomials.py, mpmath at 50 digits) of
# (tanh(a) / a - 1) / a**2 in a**2 on [0, 0.625] and of (tanh(0.9375 + y) - tanh(0.9375)) / y on
# [-0.3125, 0.3125]; each adds a small correction to an exact or two-part leading term, so the
# result is within one ulp of the true value (fdlibm's -t / (t + 2) with t = expm1(-2|x|) was up
# to 2.1 ulp from it below 1, and NumPy's own SIMD tanh is up to 1.2). From 1.25 on,
# 1 - 2 / (exp(2|x|) + 1) is within one ulp too (0.85 at most, measured).
_TANH_SMALL = (-0.3333333333333333, 0.13333333333333042, -0.05396825396789699,
               0.021869488519008305, -0.008863235103240878, 0.0035921217511549622,
               -0.0014557754120478055, 0.0005896606577757043, -0.0002375906496055562,
               9.257116129556769e-05, -3.12011014257974e-05, 6.485163482793113e-06)
_TANH_MID = (0.4611390041057729, -0.33850900949275736, 0.09477682162950617, 0.04326337102074014,
             -0.053103148957805296, 0.017037963145435642, 0.006324161976086191,
             -0.008643878889852328, 0.0029541193599769183, 0.0009281778267256964,
             -0.0014031123578773634, 0.0005087706166668913, 0.00013643064475992852,
             -0.0002280333845475696, 7.313912459531309e-05, 2.432410767209737e-05)
_TANH_MID_AT, _TANH_MID_HI, _TANH_MID_LO = 0.9375, 0.7340715196043415, 2.1218821924074105e-17


def _tanh(e: Emitter, a: list, s: tuple, d: DType) -> str:
    """``|x| + |x|**3 P(x**2)`` below 0.625, ``tanh(0.9375)`` (in two parts) plus ``y Q(y)``
    with ``y = |x| - 0.9375`` (exact) below 1.25, ``1 - 2 / (exp(2|x|) + 1)`` below 22, then
    1."""
    x = a[0]
    ax = _op(e, "stablehlo.abs", [x], s, d)
    mul = "stablehlo.multiply"
    z = _op(e, mul, [ax, ax], s, d)
    small = _add(e, ax, _op(e, mul, [ax, _op(e, mul, [z, _horner(e, z, _TANH_SMALL, s, d)], s, d)],
                            s, d), s, d)
    y = _sub(e, ax, _k(e, _TANH_MID_AT, s, d), s, d)
    # the low part hidden: XLA would fold hi + (lo + v) into (hi + lo) + v = hi + v
    lo = hidden(e, _k(e, _TANH_MID_LO, s, d), ax, s, d)
    mid = _add(e, _k(e, _TANH_MID_HI, s, d), _add(e, lo, _op(
        e, mul, [y, _horner(e, y, _TANH_MID, s, d)], s, d), s, d), s, d)
    one = _k(e, 1.0, s, d)
    ex = _op(e, "stablehlo.exponential", [_mul(e, ax, 2.0, s, d)], s, d)
    big = _sub(e, one, divide(e, _k(e, 2.0, s, d), _add(e, ex, one, s, d), s, d), s, d)
    r = select(e, _lt(e, ax, 1.25, s, d), mid, big, s, d)
    r = select(e, _lt(e, ax, 0.625, s, d), small, r, s, d)
    r = select(e, _lt(e, ax, 22.0, s, d), r, one, s, d)  # NaN: kept below
    r = select(e, compare(e, "NE", x, x, s, d), x, r, s, d)
    return _signed(e, x, ax, r, 2.0 ** -55, s, d)


def _sinh(e: Emitter, a: list, s: tuple, d: DType) -> str:
    """``|x| + |x|**3 P(x**2)`` below 1, ``_sinh_cosh`` above: within one ulp of the true value
    (fdlibm's, glibc's, is up to 1.7 ulp off)."""
    x = a[0]
    ax = _op(e, "stablehlo.abs", [x], s, d)
    z = _op(e, "stablehlo.multiply", [ax, ax], s, d)
    small = _add(e, ax, _op(e, "stablehlo.multiply", [ax, _op(
        e, "stablehlo.multiply", [z, _horner(e, z, _SINH_P, s, d)], s, d)], s, d), s, d)
    r = select(e, _lt(e, ax, 1.0, s, d), small, _sinh_cosh(e, ax, -1.0, s, d), s, d)
    r = select(e, compare(e, "NE", x, x, s, d), x, r, s, d)
    return _signed(e, x, ax, r, 2.0 ** -28, s, d)


def _cosh(e: Emitter, a: list, s: tuple, d: DType) -> str:
    """``1 + x**2 P(x**2)`` below 1/2, ``_sinh_cosh`` above: within one ulp of the true value
    (XLA's was up to 1.9 ulp off)."""
    x = a[0]
    ax = _op(e, "stablehlo.abs", [x], s, d)
    z = _op(e, "stablehlo.multiply", [ax, ax], s, d)
    small = _add(e, _k(e, 1.0, s, d), _op(e, "stablehlo.multiply", [
        z, _horner(e, z, _COSH_P, s, d)], s, d), s, d)
    r = select(e, _lt(e, ax, 0.5, s, d), small, _sinh_cosh(e, ax, 1.0, s, d), s, d)
    return select(e, compare(e, "NE", x, x, s, d), x, r, s, d)


# ---------------------------------------- atanh, asinh, acosh on a double-double logarithm
#
# fdlibm's forms (glibc's, NumPy's) are up to 1.6 (atanh), 1.6 (asinh) and 2.1 (acosh) ulp off;
# ours on XLA's log/log1p were up to 2.3. These evaluate the logarithm of a double-double
# argument (the argument's rounding error kept) as a double-double, and round once: within
# about 0.53 ulp of the true value.
_ATANH_T = (0.3333333333333333, 0.20000000000000445, 0.14285714285397716, 0.11111111196783305,
            0.09090897721185992, 0.07693125223970095, 0.06634242840327213,
            0.06544814580337312)  # (atanh(r) / r - 1) / r**2, r**2 <= 0.0295 (fit_polynomials.py)
_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's splitting constant


def _split_hi_lo(e: Emitter, a: str, s: tuple, d: DType) -> tuple[str, str]:
    c = _mul(e, a, _SPLIT, s, d)
    h = _sub(e, c, _sub(e, c, a, s, d), s, d)
    return h, _sub(e, a, h, s, d)


def _two_prod(e: Emitter, a: str, b: str, s: tuple, d: DType) -> tuple[str, str]:
    """``a * b`` rounded and its exact rounding error (Dekker's product: every partial
    product is exact, so a fused multiply-add XLA may form changes nothing)."""
    mul = "stablehlo.multiply"
    p = _op(e, mul, [a, b], s, d)
    ah, al = _split_hi_lo(e, a, s, d)
    bh, bl = _split_hi_lo(e, b, s, d)
    err = _add(e, _add(e, _add(e, _sub(e, _op(e, mul, [ah, bh], s, d), p, s, d),
                                 _op(e, mul, [ah, bl], s, d), s, d),
                       _op(e, mul, [al, bh], s, d), s, d), _op(e, mul, [al, bl], s, d), s, d)
    return p, err


def _log_dd(e: Emitter, xh: str, xl: str, s: tuple, d: DType,
            k_plus: str | None = None) -> tuple[str, str]:
    """``log(xh + xl)`` as a double-double for positive normal ``xh`` (``|xl|`` below half an
    ulp of it): ``xh = m 2**k``, ``1 + F = (xh + xl) / 2**k`` with ``F = f + ml``, ``f = m - 1``
    exact; ``log(1 + F) = 2 atanh(s)`` with ``s = F / (2 + F)`` as ``sh + sl`` (the residual
    ``F - sh (2 + F)`` from an exact product), ``2 atanh(s) = 2 sh + 2 sl + 2 sh^3 T(sh^2)``;
    ``k ln 2`` with ``ln 2`` in two parts (``k ln2_hi`` exact). ``k_plus`` (0 or 1 per
    element) adds that many ``ln 2``: ``log(2 x)`` for ``x`` up to the largest float."""
    mul = "stablehlo.multiply"
    kf, m, _ = _decompose(e, xh, s, d)
    if k_plus is not None:
        kf = _add(e, kf, k_plus, s, d)
    clamp = _op(e, "stablehlo.clamp", [_k(e, -1000.0, s, d), _op(e, "stablehlo.negate", [kf], s, d),
                                       _k(e, 1000.0, s, d)], s, d)
    ml = _op(e, mul, [xl, _pow2(e, clamp, s)], s, d)
    f = _sub(e, m, _k(e, 1.0, s, d), s, d)
    den = _add(e, _k(e, 2.0, s, d), f, s, d)
    sh = divide(e, _add(e, f, ml, s, d), den, s, d)
    p, pe = _two_prod(e, sh, f, s, d)
    num = _add(e, _sub(e, _sub(e, _sub(e, f, _mul(e, sh, 2.0, s, d), s, d), p, s, d), pe, s, d),
               _sub(e, ml, _op(e, mul, [sh, ml], s, d), s, d), s, d)
    sl = divide(e, num, den, s, d)
    w = _op(e, mul, [sh, sh], s, d)
    c = _add(e, _mul(e, sl, 2.0, s, d), _op(e, mul, [sh, _mul(
        e, _op(e, mul, [w, _horner(e, w, _ATANH_T, s, d)], s, d), 2.0, s, d)], s, d), s, d)
    ah, ae = _two_sum(e, _mul(e, kf, _LN2_HI, s, d), _mul(e, sh, 2.0, s, d), s, d)
    return ah, _add(e, ae, _add(e, _mul(e, kf, _LN2_LO, s, d), c, s, d), s, d)


def _log_of_sum_with_sqrt(e: Emitter, x: str, c: float, s: tuple, d: DType) -> str:
    """``log(x + sqrt(x*x + c))`` rounded once, ``x*x + c`` and its square root as
    double-doubles (``asinh``: ``c = 1``; ``acosh``: ``c = -1``); from 2**28 on ``log(x) +
    ln 2`` (``x*x`` would overflow), through the same logarithm."""
    ph, pl = _two_prod(e, x, x, s, d)
    qh, qe = _two_sum(e, ph, _k(e, c, s, d), s, d)
    ql = _add(e, qe, pl, s, d)
    sh = _op(e, "stablehlo.sqrt", [qh], s, d)
    rh, re = _two_prod(e, sh, sh, s, d)
    sl = divide(e, _add(e, _sub(e, _sub(e, qh, rh, s, d), re, s, d), ql, s, d),
                _mul(e, sh, 2.0, s, d), s, d)
    xh, xe = _two_sum(e, x, sh, s, d)
    big = compare(e, "GE", x, _k(e, 2.0 ** 28, s, d), s, d)
    zero = _k(e, 0.0, s, d)
    h, lo = _log_dd(e, select(e, big, x, xh, s, d), select(e, big, zero, _add(e, xe, sl, s, d),
                                                             s, d), s, d,
                    k_plus=select(e, big, _k(e, 1.0, s, d), zero, s, d))
    return _add(e, h, lo, s, d)


def _atanh(e: Emitter, a: list, s: tuple, d: DType) -> str:
    """``log(1 + y) / 2`` with ``y = 2|x| / (1 - |x|)``, ``1 - |x|``, ``y`` and ``1 + y`` as
    double-doubles; +-inf at +-1, NaN beyond."""
    x = a[0]
    ax = _op(e, "stablehlo.abs", [x], s, d)
    one = hidden(e, _k(e, 1.0, s, d), ax, s, d)  # else XLA folds (1 + a) - 1 into a
    v, ve = _two_sum(e, one, _op(e, "stablehlo.negate", [ax], s, d), s, d)
    t = _mul(e, ax, 2.0, s, d)
    yh = divide(e, t, v, s, d)
    p, pe = _two_prod(e, yh, v, s, d)
    yl = divide(e, _sub(e, _sub(e, _sub(e, t, p, s, d), pe, s, d),
                        _op(e, "stablehlo.multiply", [yh, ve], s, d), s, d), v, s, d)
    u, ue = _two_sum(e, one, yh, s, d)
    h, lo = _log_dd(e, u, _add(e, ue, yl, s, d), s, d)
    r = _mul(e, _add(e, h, lo, s, d), 0.5, s, d)
    r = select(e, compare(e, "EQ", ax, one, s, d), _k(e, float("inf"), s, d), r, s, d)
    r = select(e, compare(e, "GT", ax, one, s, d), _k(e, float("nan"), s, d), r, s, d)
    r = select(e, compare(e, "NE", x, x, s, d), x, r, s, d)
    return _signed(e, x, ax, r, 2.0 ** -28, s, d)


def _asinh(e: Emitter, a: list, s: tuple, d: DType) -> str:
    """``log(|x| + sqrt(x*x + 1))`` up to 2**28, ``log(|x|) + ln 2`` above, each rounded once
    from a double-double."""
    x = a[0]
    ax = _op(e, "stablehlo.abs", [x], s, d)
    inf = _k(e, float("inf"), s, d)
    r = select(e, compare(e, "EQ", ax, inf, s, d), inf, _log_of_sum_with_sqrt(e, ax, 1.0, s, d),
               s, d)
    r = select(e, compare(e, "NE", x, x, s, d), x, r, s, d)
    return _signed(e, x, ax, r, 2.0 ** -28, s, d)


def _acosh(e: Emitter, a: list, s: tuple, d: DType) -> str:
    """``log(x + sqrt(x*x - 1))`` up to 2**28, ``log(x) + ln 2`` above, each rounded once from
    a double-double; 0 at 1, NaN below."""
    x = a[0]
    one = _k(e, 1.0, s, d)
    inf = _k(e, float("inf"), s, d)
    r = select(e, compare(e, "EQ", x, one, s, d), _k(e, 0.0, s, d),
               _log_of_sum_with_sqrt(e, x, -1.0, s, d), s, d)
    r = select(e, compare(e, "EQ", x, inf, s, d), inf, r, s, d)
    return select(e, compare(e, "GE", x, one, s, d), r, _k(e, float("nan"), s, d), s, d)


# fdlibm's atan: the breakpoints' atan in two parts, and the odd polynomial's coefficients
_ATAN_HI = (4.63647609000806093515e-01, 7.85398163397448278999e-01,
            9.82793723247329054082e-01, 1.57079632679489655800e+00)
_ATAN_LO = (2.26987774529616870924e-17, 3.06161699786838301793e-17,
            1.39033110312309984516e-17, 6.12323399573676603587e-17)
_AT = (3.33333333333329318027e-01, -1.99999999998764832476e-01, 1.42857142725034663711e-01,
       -1.11111104054623557880e-01, 9.09088713343650656196e-02, -7.69187620504482999495e-02,
       6.66107313738753120669e-02, -5.83357013379057348645e-02, 4.97687799461593236017e-02,
       -3.65315727442169155270e-02, 1.62858201153657823623e-02)


def _atan(e: Emitter, a: list, s: tuple, d: DType) -> str:
    """fdlibm: ``|x|`` reduced to ``[-7/16, 7/16]`` around one of four breakpoints (one
    division), an odd polynomial of degree 23, the breakpoint's atan added in two parts."""
    x = a[0]
    ax = _op(e, "stablehlo.abs", [x], s, d)
    one, zero = _k(e, 1.0, s, d), _k(e, 0.0, s, d)
    cuts = [_lt(e, ax, c, s, d) for c in (0.4375, 0.6875, 1.1875, 2.4375)]
    # (numerator, denominator) per interval, the first one |x| / 1
    nums = [ax, _sub(e, _mul(e, ax, 2.0, s, d), one, s, d), _sub(e, ax, one, s, d),
            _sub(e, ax, _k(e, 1.5, s, d), s, d), _k(e, -1.0, s, d)]
    dens = [one, _add(e, _k(e, 2.0, s, d), ax, s, d), _add(e, ax, one, s, d),
            _add(e, one, _mul(e, ax, 1.5, s, d), s, d), ax]
    his, los = [zero] + [_k(e, c, s, d) for c in _ATAN_HI], [zero] + [_k(e, c, s, d)
                                                                     for c in _ATAN_LO]

    def pick(vals: list) -> str:
        r = vals[4]
        for i in (3, 2, 1, 0):
            r = select(e, cuts[i], vals[i], r, s, d)
        return r
    y = divide(e, pick(nums), pick(dens), s, d)
    z = _op(e, "stablehlo.multiply", [y, y], s, d)
    w = _op(e, "stablehlo.multiply", [z, z], s, d)
    s1 = _op(e, "stablehlo.multiply", [z, _horner(e, w, _AT[0::2], s, d)], s, d)
    s2 = _op(e, "stablehlo.multiply", [w, _horner(e, w, _AT[1::2], s, d)], s, d)
    p = _op(e, "stablehlo.multiply", [y, _add(e, s1, s2, s, d)], s, d)
    r = _sub(e, pick(his), _sub(e, _sub(e, p, pick(los), s, d), y, s, d), s, d)
    big = compare(e, "GE", ax, _k(e, 2.0 ** 66, s, d), s, d)  # inf too: pi/2
    r = select(e, big, _k(e, _ATAN_HI[3] + _ATAN_LO[3], s, d), r, s, d)
    r = select(e, compare(e, "NE", x, x, s, d), x, r, s, d)
    return _signed(e, x, ax, r, 2.0 ** -27, s, d)


# float64 kernels; None: XLA's own (within one ulp of NumPy in float64)
_EXACT: dict[str, Any] = {
    "log10": _log10, "log2": _log2, "log1p": _log1p, "expm1": _expm1, "tanh": _tanh,
    "sinh": _sinh, "cosh": _cosh, "atanh": _atanh, "atan": _atan, "asin": None, "acos": None,
    "asinh": _asinh, "acosh": _acosh}
# accurate in float32 as they are (within one ulp of the correctly rounded result), and faster
# than through float64 (XLA:CPU's float64 log is much slower than its float32 one)
_OWN_F32 = ("log1p", "log10")


def exact(name: str, fast: Any) -> Any:
    """The kernel of elementwise ``name``: XLA's ``fast`` when ``fast_math`` is on when a graph
    is lowered; else in float64 the accurate form above, and in float32 and the half floats
    XLA's form computed in float64 and rounded once (correctly rounded nearly always: XLA's
    float64 error is far below float32's half ulp), unless the function has its own."""
    accurate = _EXACT[name]

    def k(e: Emitter, a: list, s: tuple, d: DType) -> str:
        if not faithful():
            return fast(e, a, s, d)
        if d.bits == 64 or (d.bits == 32 and name in _OWN_F32):
            return (accurate or fast)(e, a, s, d)
        r = fast(e, [widen(e, a[0], s, d)], s, dt.float64)
        return _op(e, "stablehlo.convert", [r], s, d)
    return k
