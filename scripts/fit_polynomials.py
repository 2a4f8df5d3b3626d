"""Derive the polynomial coefficients of xla_array's float64 ``tanh``, ``sinh``, ``cosh`` and
double-double ``exp``/``log`` (``xla_array/core/ops/ieee.py``: ``_TANH_SMALL``, ``_TANH_MID``,
``_EXP_P``, ``_SINH_P``, ``_COSH_P``, ``_ATANH_T``) and check the ``tanh`` ones.

A development tool, not used at run time; needs ``mpmath``::

    python3 scripts/fit_polynomials.py

Each polynomial interpolates its function at Chebyshev nodes, solved at 50 digits and rounded to
float64; the check evaluates the float64 forms the lowering builds for ``tanh`` below 1.25
(Horner, no fused multiply-add) over random arguments and prints the largest distance from the
true value in ulp (the long double ``tanh`` where it is wider than float64). The functions built
on them are checked by tests/test_rounding.py (``test_within_one_ulp_of_the_true_value``).
"""

from __future__ import annotations

import mpmath as mp
import numpy as np

mp.mp.dps = 50
SMALL_END = mp.mpf("0.625")  # |x| below it: |x| + |x|**3 P(x**2)
MID_AT, MID_HALF = mp.mpf("0.9375"), mp.mpf("0.3125")  # [0.625, 1.25]: tanh(at) + y Q(y)


def chebyshev_fit(f, lo, hi, degree: int) -> list:
    """Monomial coefficients of the polynomial interpolating ``f`` at the Chebyshev nodes of
    ``[lo, hi]`` (first-kind, ``degree + 1`` of them)."""
    n = degree + 1
    nodes = [(lo + hi) / 2 + (hi - lo) / 2 * mp.cos(mp.pi * (2 * k + 1) / (2 * n))
             for k in range(n)]
    a = mp.matrix([[u ** j for j in range(n)] for u in nodes])
    c = mp.lu_solve(a, mp.matrix([f(u) for u in nodes]))
    return [c[j] for j in range(n)]


def small(z):
    """``(tanh(a) / a - 1) / a**2`` as a function of ``z = a**2``."""
    if z == 0:
        return mp.mpf(-1) / 3
    a = mp.sqrt(z)
    return (mp.tanh(a) / a - 1) / z


def mid(y):
    """``(tanh(at + y) - tanh(at)) / y``."""
    if abs(y) < mp.mpf(10) ** -30:  # (the middle node of an odd count is 0 up to rounding)
        return 1 - mp.tanh(MID_AT) ** 2
    return (mp.tanh(MID_AT + y) - mp.tanh(MID_AT)) / y


def exp_p(r):
    """``(e**r - 1 - r) / r**2``, on ``[-ln2 / 2, ln2 / 2]`` (a little wider)."""
    if abs(r) < mp.mpf(10) ** -30:
        return mp.mpf(1) / 2
    return (mp.exp(r) - 1 - r) / r ** 2


def sinh_p(z):
    """``(sinh(a) / a - 1) / a**2`` in ``z = a**2``."""
    if z == 0:
        return mp.mpf(1) / 6
    a = mp.sqrt(z)
    return (mp.sinh(a) / a - 1) / z


def cosh_p(z):
    """``(cosh(a) - 1) / a**2`` in ``z = a**2``."""
    if z == 0:
        return mp.mpf(1) / 2
    a = mp.sqrt(z)
    return (mp.cosh(a) - 1) / z


def atanh_t(w):
    """``(atanh(r) / r - 1) / r**2`` in ``w = r**2`` (``log(1 + F) = 2 atanh(F / (2 + F))``,
    ``|F / (2 + F)| <= 0.1716`` for ``1 + F`` in ``[sqrt(1/2), sqrt(2))``)."""
    if w == 0:
        return mp.mpf(1) / 3
    r = mp.sqrt(w)
    return (mp.atanh(r) / r - 1) / w


def horner(w, coefs):
    acc = np.full_like(w, coefs[-1])
    for c in reversed(coefs[:-1]):
        acc = c + w * acc
    return acc


def main() -> None:
    p = [float(c) for c in chebyshev_fit(small, mp.mpf(0), SMALL_END ** 2, 11)]
    q = [float(c) for c in chebyshev_fit(mid, -MID_HALF, MID_HALF, 15)]
    at = float(MID_AT)
    hi = float(mp.tanh(MID_AT))
    lo = float(mp.tanh(MID_AT) - mp.mpf(hi))
    print("_TANH_SMALL =", tuple(p))
    print("_TANH_MID =", tuple(q))
    print("_TANH_MID_AT, _TANH_MID_HI, _TANH_MID_LO =", float(MID_AT), hi, lo)
    half_ln2 = mp.log(2) / 2 * mp.mpf("1.0001")
    print("_EXP_P =", tuple(float(c) for c in chebyshev_fit(exp_p, -half_ln2, half_ln2, 11)))
    print("_SINH_P =", tuple(float(c) for c in chebyshev_fit(sinh_p, mp.mpf(0), mp.mpf(1), 7)))
    print("_COSH_P =", tuple(float(c) for c in chebyshev_fit(cosh_p, mp.mpf(0), mp.mpf(1), 7)))
    print("_ATANH_T =", tuple(float(c) for c in chebyshev_fit(atanh_t, mp.mpf(0),
                                                                mp.mpf("0.0295"), 7)))
    rng = np.random.default_rng(0)
    a = np.concatenate([rng.uniform(0, 0.625, 300000), rng.uniform(0, 1e-3, 30000)])
    b = rng.uniform(0.625, 1.25, 300000)
    z = a * a
    got = np.concatenate([a + a * (z * horner(z, p)), hi + (lo + (b - at) * horner(b - at, q))])
    x = np.concatenate([a, b])
    wide = np.longdouble if np.finfo(np.longdouble).nmant > 52 else None
    if wide is None:
        want = np.array([float(mp.tanh(v)) for v in x[::50]])
        got, x = got[::50], x[::50]
        err = np.abs(got - want) / np.spacing(want)
    else:
        want = np.tanh(x.astype(wide))
        err = np.abs((got.astype(wide) - want) / np.spacing(want.astype(np.float64)).astype(wide))
    worst = float(err.max())
    print(f"largest error below 1.25: {worst:.3f} ulp (within one: {worst < 1})")


if __name__ == "__main__":
    main()
