"""Lowerings that round as NumPy does where XLA:CPU would not (``fast_math`` off, the default).

XLA:CPU rewrites some float arithmetic so that it no longer rounds as NumPy's step-by-step
evaluation does, and no compile option turns these rewrites off at an acceptable cost
(measured on jaxlib 0.10.2 and 0.12; docs/dtypes.md gives the figures):

- Division by a broadcast value or a constant becomes a multiply by the reciprocal (the
  algebraic simplifier's ``HandleDivide`` on CPU, not gated by fast math): ``s / 34.0`` is off
  by one ulp. ``divide`` hides the divisor behind ``opaque`` (a select equal to it wherever the
  dividend is not NaN), which the simplifier cannot see through; the result is bit-identical.
- A float multiply feeding an add or subtract is contracted into a fused multiply-add (XLA's
  CPU compiler sets LLVM's ``AllowFPOpFusion = Fast``, hard-coded): ``a * b + c`` rounds once.
  The add gets a second use of the product (``opaque`` again); LLVM's DAG combiner contracts
  only a product with one use.
- ``log10``/``log2`` were ``log(x) / ln(base)``, i.e. ``log(x) * RN(1 / ln(base))``: two
  roundings, up to 2 ulp from NumPy, and ``log10(0.1) != -1``. They split ``x = m * 2**k``
  with integer ops (subnormal inputs too) and add ``k * log_base(2)`` and ``log(m) / ln(base)``
  with both constants in two parts: powers of two and ten come out exact, the rest within one
  ulp. ``log1p`` (XLA's: up to 128 ulp off on jaxlib 0.10, 2 on 0.12) gets the classic
  correction ``log(u) - ((u - 1) - x) / u`` with ``u = 1 + x``: within one ulp.

- ``sinh``/``cosh`` were ``exp(x - ln 2)``-based (up to 496 ulp off in float64 near overflow),
  ``atanh`` ``log((1 + x) / (1 - x)) / 2`` (129 ulp off for small x): rewritten below.

``XLA_ARRAY_FAST_MATH=1`` (or ``xp.flags.using(fast_math=True)``) keeps XLA's faster forms.
"""

from __future__ import annotations

from decimal import Decimal, getcontext
from fractions import Fraction
from typing import Any

import numpy as np

from . import _dtypes as dt
from . import _flags
from ._dtypes import DType
from ._lower import Emitter, tensor_type
from ._ops import bcast, compare, select

__all__ = ["faithful", "opaque", "divide", "unfused", "exact"]


def faithful() -> bool:
    """Whether lowerings written now must round as NumPy does (the ``fast_math`` setting)."""
    return not _flags._values["fast_math"]


def opaque(e: Emitter, v: str, like: str, s: tuple, d: DType) -> str:
    """``v``, in a form XLA's algebraic simplifier cannot see through: ``select(like != like,
    like, v)``, equal to ``v`` wherever ``like`` (an operand of the same op) is not NaN, and
    the op's result is NaN anyway where ``like`` is."""
    return select(e, compare(e, "NE", like, like, s, d), like, v, s, d)


def hidden(e: Emitter, v: str, other: str, s: tuple, d: DType) -> str:
    """``v`` as ``select(iota == -1, other, v)``: equal to it, but no longer a broadcast or a
    constant for XLA's algebraic simplifier."""
    it = tensor_type(s, dt.int32)
    i = (e.op("stablehlo.iota", [], it, "iota_dimension = 0 : i64") if s
         else e.const(0, dt.int32))
    never = compare(e, "EQ", i, bcast(e, e.const(-1, dt.int32), (), s, dt.int32), s, dt.int32)
    return select(e, never, other, v, s, d)


def divide(e: Emitter, x: str, y: str, s: tuple, d: DType) -> str:
    """``x / y`` correctly rounded: the divisor is ``hidden``, neither a broadcast nor a
    constant any more, so the reciprocal rewrite does not apply. (An ``opaque`` of the dividend,
    which may be an expensive expression such as ``exp(x)``, made XLA compute it more often.)
    The ``divide`` op also passes a broadcast divisor through ``unfoldable`` before broadcasting
    it (``_ops_elementwise._lower``): else XLA puts the broadcast into the producing reduction's
    YNNPACK fusion and writes the full matrix (softmax 4.5x slower)."""
    if d.kind == "f" and faithful():
        y = hidden(e, y, x, s, d)
    return e.op("stablehlo.divide", [x, y], tensor_type(s, d))


# (op, the producers of its operand it must not be folded with): XLA's algebraic simplifier
# rewrites log(pow(a, b)) as b * log(a), log(sqrt(a)) as 0.5 * log(a), log(exp(x)) as x and
# pow(exp(a), b) as exp(a * b), which are wrong where the inner result overflows, underflows
# or is NaN (log(exp(1000.0)) gave 1000, log((-2.0) ** 0.5) a number, exp(nan) ** 0 NaN).
# acosh and asinh are expanded through log. Not a matter of rounding: done whatever fast_math.
UNFOLDED = {"log": ("pow", "sqrt", "exp"), "acosh": ("pow", "sqrt", "exp"),
            "asinh": ("pow", "sqrt", "exp"), "pow": ("exp",)}
_LAYOUT_OPS = ("reshape", "broadcast", "transpose", "convert")


def unfoldable(e: Emitter, v: str, s: tuple, d: DType) -> str:
    """``v`` as ``select(v != v, NaN, v)``: the same value (a NaN stays a NaN), which the
    simplifier cannot fold with the op producing ``v`` (an iota predicate is folded away for
    one-element shapes)."""
    nan = bcast(e, e.const(float("nan"), d), (), s, d)
    return select(e, compare(e, "NE", v, v, s, d), nan, v, s, d)


def produced_by(node: Any, names: tuple) -> bool:
    """Whether ``node`` is the result of one of the ops ``names``, through layout ops."""
    while node.op.name in _LAYOUT_OPS and node.inputs:
        node = node.inputs[0]
    return node.op.name in names


def unfused(e: Emitter, r: str, inputs: tuple, args: list, s: tuple, d: DType) -> str:
    """The result ``r`` of a float add/subtract whose operands ``args`` (of the nodes
    ``inputs``) may be products: each product gets a second use, so it is not fused."""
    if d.kind != "f" or not faithful():
        return r
    for x, v in zip(inputs, args):
        if x.op.name == "multiply":
            r = opaque(e, r, v, s, d)
    return r


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


def _in_f32_or_f64(kernel: Any) -> Any:
    """``kernel`` on float32/float64 as they are, on float16/bfloat16 through float32."""
    def k(e: Emitter, a: list, s: tuple, d: DType) -> str:
        if d.bits in (32, 64):
            return kernel(e, a, s, d)
        x = _op(e, "stablehlo.convert", [a[0]], s, dt.float32)
        return _op(e, "stablehlo.convert", [kernel(e, [x], s, dt.float32)], s, d)
    return k


def _mul(e: Emitter, a: str, c: float, s: tuple, d: DType) -> str:
    return _op(e, "stablehlo.multiply", [a, _k(e, c, s, d)], s, d)


def _add(e: Emitter, a: str, b: str, s: tuple, d: DType) -> str:
    return _op(e, "stablehlo.add", [a, b], s, d)


@_in_f32_or_f64
def _log10(e: Emitter, a: list, s: tuple, d: DType) -> str:
    ahi, alo = _split(_LOG10_2, d, (53 if d.bits == 64 else 24) - (12 if d.bits == 64 else 9))
    bhi, blo = _split(_INV_LN10, d, None)
    kf, m, ok = _decompose(e, a[0], s, d)
    ln = _op(e, "stablehlo.log", [m], s, d)
    t = _add(e, _mul(e, ln, blo, s, d), _mul(e, kf, alo, s, d), s, d)
    r = _add(e, _mul(e, kf, ahi, s, d), _add(e, _mul(e, ln, bhi, s, d), t, s, d), s, d)
    return select(e, ok, r, ln, s, d)  # zero, negative, inf, NaN: log's own special values


@_in_f32_or_f64
def _log2(e: Emitter, a: list, s: tuple, d: DType) -> str:
    chi, clo = _split(_INV_LN2, d, None)
    kf, m, ok = _decompose(e, a[0], s, d)
    ln = _op(e, "stablehlo.log", [m], s, d)
    t = _add(e, _mul(e, ln, chi, s, d), _mul(e, ln, clo, s, d), s, d)
    return select(e, ok, _add(e, kf, t, s, d), ln, s, d)


@_in_f32_or_f64
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


# ---------------------------------------------------------------- sinh, cosh, atanh

def _exp_halves(e: Emitter, ax: str, s: tuple, d: DType) -> str:
    """``exp(a) / 2`` for ``a >= 0`` as ``(exp(a / 2) / 2) * exp(a / 2)``: ``a / 2`` is exact,
    where XLA's ``exp(a - ln 2)`` rounds ``a - ln 2`` and loses up to ~500 ulp near 710."""
    h = _op(e, "stablehlo.exponential", [_mul(e, ax, 0.5, s, d)], s, d)
    return _op(e, "stablehlo.multiply", [_mul(e, h, 0.5, s, d), h], s, d)


@_in_f32_or_f64
def _sinh(e: Emitter, a: list, s: tuple, d: DType) -> str:
    x = a[0]
    ax = _op(e, "stablehlo.abs", [x], s, d)
    m1 = _op(e, "stablehlo.exponential_minus_one", [ax], s, d)
    # |x| < 1: (m1 + m1 / (m1 + 1)) / 2 keeps the small result's digits; else e/2 - 1/(2e)
    small = _mul(e, _add(e, m1, divide(e, m1, _add(e, m1, _k(e, 1.0, s, d), s, d), s, d), s, d),
                 0.5, s, d)
    big = _exp_halves(e, ax, s, d)
    mid = _op(e, "stablehlo.subtract", [big, divide(e, _k(e, 0.25, s, d), big, s, d)], s, d)
    r = select(e, compare(e, "LT", ax, _k(e, 1.0, s, d), s, d), small, mid, s, d)
    neg = compare(e, "LT", x, _k(e, 0.0, s, d), s, d)
    r = select(e, neg, _op(e, "stablehlo.negate", [r], s, d), r, s, d)
    return select(e, compare(e, "EQ", ax, _k(e, 0.0, s, d), s, d), x, r, s, d)  # keeps -0.0


@_in_f32_or_f64
def _cosh(e: Emitter, a: list, s: tuple, d: DType) -> str:
    ax = _op(e, "stablehlo.abs", [a[0]], s, d)
    big = _exp_halves(e, ax, s, d)
    return _add(e, big, divide(e, _k(e, 0.25, s, d), big, s, d), s, d)


@_in_f32_or_f64
def _atanh(e: Emitter, a: list, s: tuple, d: DType) -> str:
    """``sign(x) * log1p(2|x| / (1 - |x|)) / 2``: XLA's ``log((1 + x) / (1 - x)) / 2`` lost up
    to 129 ulp for small x."""
    x = a[0]
    ax = _op(e, "stablehlo.abs", [x], s, d)
    q = divide(e, _mul(e, ax, 2.0, s, d),
               _op(e, "stablehlo.subtract", [_k(e, 1.0, s, d), ax], s, d), s, d)
    r = _mul(e, _log1p(e, [q], s, d), 0.5, s, d)
    r = select(e, compare(e, "LT", x, _k(e, 0.0, s, d), s, d),
               _op(e, "stablehlo.negate", [r], s, d), r, s, d)
    return select(e, compare(e, "EQ", ax, _k(e, 0.0, s, d), s, d), x, r, s, d)


_EXACT = {"log10": _log10, "log2": _log2, "log1p": _log1p, "sinh": _sinh, "cosh": _cosh,
          "atanh": _atanh}


def exact(name: str, fast: Any) -> Any:
    """The kernel of elementwise ``name``: the accurate form above unless ``fast_math`` is
    on when a graph is lowered, then XLA's ``fast``."""
    accurate = _EXACT[name]
    return lambda e, a, s, d: (accurate if faithful() else fast)(e, a, s, d)
