"""Every elementwise op, one row each.

A row is ``name: (arity, category, result, kernel)``:
- ``category`` is the dtype category the standard accepts (``dtypes._CATEGORY``), checked at
  record time (TypeError). ``float`` rows also accept integers and bools, promoted to the
  default float (float64; NumPy picks float16/32 for small integer types, the standard leaves
  it unspecified). Numeric rows also take a bool operand beside a numeric one (``x * mask``).
- ``result`` is ``same`` (the promoted dtype), ``bool``, ``real`` (complex -> its real type) or
  ``float`` (promoted, then at least floating).
- ``kernel(e, args, shape, dtype)`` writes StableHLO over operands already broadcast to the
  result shape and converted to the compute dtype; it returns the result's SSA name. Complex
  compute dtypes of the functions in ``complex.COMPLEX_KERNELS`` use the kernels there
  (C99 Annex G special cases, as the standard asks).

Special cases follow the standard where it departs from NumPy (``floor_divide(inf, 2) = inf``,
``floor_divide(1, -inf) = -0``) and NumPy elsewhere; integers wrap on overflow, shift by
``>=`` bits as NumPy, and divide by zero to 0 (``//`` and ``%``).
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes as dt
from ..dtypes import DType
from ..lower import Emitter, tensor_type
from . import ieee as _ops_ieee
from . import libm as _libm
from .complex import COMPLEX_KERNELS, complex_kernel
from .structural import bcast, broadcast_shapes, compare, convert, define, i64s, select

__all__ = ["ELEMENTWISE", "compute_dtype", "dtypes_for", "POW_CHECK", "NEGATIVE_POWER"]


def _t(shape: tuple, d: DType) -> str:
    return tensor_type(shape, d)


def _simple(opname: str) -> Any:
    return lambda e, a, s, d: e.op(opname, a, _t(s, d))


def _full(e: Emitter, value: Any, s: tuple, d: DType) -> str:
    return bcast(e, e.const(value, d), (), s, d)


def _bool_op(opname: str, a: list, e: Emitter, s: tuple) -> str:
    return e.op(opname, a, _t(s, dt.bool))


def _cmp(direction: str) -> Any:
    return lambda e, a, s, d: compare(e, direction, a[0], a[1], s, d)


def _isnan(e: Emitter, a: list, s: tuple, d: DType) -> str:
    if d.kind == "c":
        r = e.op("stablehlo.real", a, _t(s, dt.REAL_OF[d]))
        i = e.op("stablehlo.imag", a, _t(s, dt.REAL_OF[d]))
        return _bool_op("stablehlo.or", [_isnan(e, [r], s, dt.REAL_OF[d]),
                                         _isnan(e, [i], s, dt.REAL_OF[d])], e, s)
    if d.kind != "f":
        return _full(e, False, s, dt.bool)
    return compare(e, "NE", a[0], a[0], s, d)


def _isinf(e: Emitter, a: list, s: tuple, d: DType) -> str:
    if d.kind == "c":
        r = e.op("stablehlo.real", a, _t(s, dt.REAL_OF[d]))
        i = e.op("stablehlo.imag", a, _t(s, dt.REAL_OF[d]))
        return _bool_op("stablehlo.or", [_isinf(e, [r], s, dt.REAL_OF[d]),
                                         _isinf(e, [i], s, dt.REAL_OF[d])], e, s)
    if d.kind != "f":
        return _full(e, False, s, dt.bool)
    ab = e.op("stablehlo.abs", a, _t(s, d))
    return compare(e, "EQ", ab, _full(e, float("inf"), s, d), s, d)


def _isfinite(e: Emitter, a: list, s: tuple, d: DType) -> str:
    if d.kind == "c":
        r = e.op("stablehlo.real", a, _t(s, dt.REAL_OF[d]))
        i = e.op("stablehlo.imag", a, _t(s, dt.REAL_OF[d]))
        return _bool_op("stablehlo.and", [_isfinite(e, [r], s, dt.REAL_OF[d]),
                                          _isfinite(e, [i], s, dt.REAL_OF[d])], e, s)
    if d.kind != "f":
        return _full(e, True, s, dt.bool)
    return e.op("stablehlo.is_finite", a, _t(s, dt.bool))


def _signbit(e: Emitter, a: list, s: tuple, d: DType) -> str:
    it = {16: dt.int16, 32: dt.int32, 64: dt.int64, 8: dt.int8}[d.bits]
    bits = e.op("stablehlo.bitcast_convert", a, _t(s, it))
    return compare(e, "LT", bits, _full(e, 0, s, it), s, it)


def _trunc(e: Emitter, a: list, s: tuple, d: DType) -> str:
    if d.kind != "f":
        return a[0]
    neg = compare(e, "LT", a[0], _full(e, 0, s, d), s, d)
    return select(e, neg, e.op("stablehlo.ceil", a, _t(s, d)),
                  e.op("stablehlo.floor", a, _t(s, d)), s, d)


def _int_identity(opname: str) -> Any:
    def k(e: Emitter, a: list, s: tuple, d: DType) -> str:
        return a[0] if d.kind in "biu" else e.op(opname, a, _t(s, d))
    return k


def _round(e: Emitter, a: list, s: tuple, d: DType) -> str:
    if d.kind in "biu":
        return a[0]
    if d.kind == "c":
        rd = dt.REAL_OF[d]
        parts = [e.op(p, a, _t(s, rd)) for p in ("stablehlo.real", "stablehlo.imag")]
        parts = [e.op("stablehlo.round_nearest_even", [p], _t(s, rd)) for p in parts]
        return e.op("stablehlo.complex", parts, _t(s, d))
    return e.op("stablehlo.round_nearest_even", a, _t(s, d))


def _log_base(base: float) -> Any:
    def k(e: Emitter, a: list, s: tuple, d: DType) -> str:
        ln = e.op("stablehlo.log", a, _t(s, d))
        return e.op("stablehlo.divide", [ln, _full(e, math.log(base), s, d)], _t(s, d))
    return k


def _reciprocal(e: Emitter, a: list, s: tuple, d: DType) -> str:
    return e.op("stablehlo.divide", [_full(e, 1, s, d), a[0]], _t(s, d))


def _square(e: Emitter, a: list, s: tuple, d: DType) -> str:
    return e.op("stablehlo.multiply", [a[0], a[0]], _t(s, d))


def _conj(e: Emitter, a: list, s: tuple, d: DType) -> str:
    if d.kind != "c":
        return a[0]
    rd = dt.REAL_OF[d]
    r = e.op("stablehlo.real", a, _t(s, rd))
    i = e.op("stablehlo.negate", [e.op("stablehlo.imag", a, _t(s, rd))], _t(s, rd))
    return e.op("stablehlo.complex", [r, i], _t(s, d))


def _real(e: Emitter, a: list, s: tuple, d: DType) -> str:
    return a[0] if d.kind != "c" else e.op("stablehlo.real", a, _t(s, dt.REAL_OF[d]))


def _imag(e: Emitter, a: list, s: tuple, d: DType) -> str:
    if d.kind != "c":
        return _full(e, 0, s, d)
    return e.op("stablehlo.imag", a, _t(s, dt.REAL_OF[d]))


def _abs(e: Emitter, a: list, s: tuple, d: DType) -> str:
    if d.kind in "bu":
        return a[0]
    return e.op("stablehlo.abs", a, _t(s, dt.REAL_OF.get(d, d)))


def _sign(e: Emitter, a: list, s: tuple, d: DType) -> str:
    if d.kind == "u":
        return convert(e, compare(e, "NE", a[0], _full(e, 0, s, d), s, d), s, dt.bool, d)
    sg = e.op("stablehlo.sign", a, _t(s, d))
    if d.kind == "f":  # sign(-0.0) is +0.0, as NumPy
        sg = select(e, compare(e, "EQ", a[0], _full(e, 0, s, d), s, d), _full(e, 0, s, d), sg,
                    s, d)
    return sg


def _int_div(e: Emitter, a: list, s: tuple, d: DType, want: str) -> str:
    """Floor division / remainder of integers with NumPy's rules (divisor 0 gives 0)."""
    x, y = a
    zero = _full(e, 0, s, d)
    ynz = compare(e, "NE", y, zero, s, d)
    one = _full(e, 1, s, d)
    ysafe = select(e, ynz, y, one, s, d)
    q = e.op("stablehlo.divide", [x, ysafe], _t(s, d))
    r = e.op("stablehlo.remainder", [x, ysafe], _t(s, d))
    if d.kind == "i":
        rnz = compare(e, "NE", r, zero, s, d)
        diff = compare(e, "NE", compare(e, "LT", r, zero, s, d),
                       compare(e, "LT", ysafe, zero, s, d), s, dt.bool)
        fix = _bool_op("stablehlo.and", [rnz, diff], e, s)
        if want == "q":
            q = select(e, fix, e.op("stablehlo.subtract", [q, one], _t(s, d)), q, s, d)
        else:
            r = select(e, fix, e.op("stablehlo.add", [r, ysafe], _t(s, d)), r, s, d)
    return select(e, ynz, q if want == "q" else r, zero, s, d)


def _remainder(e: Emitter, a: list, s: tuple, d: DType) -> str:
    if d.kind in "iu":
        return _int_div(e, a, s, d, "r")
    x, y = a
    zero = _full(e, 0, s, d)
    r = e.op("stablehlo.remainder", [x, y], _t(s, d))  # C fmod: sign of x
    rnz = compare(e, "NE", r, zero, s, d)
    diff = compare(e, "NE", _signbit(e, [r], s, d), _signbit(e, [y], s, d), s, dt.bool)
    fix = _bool_op("stablehlo.and", [rnz, diff], e, s)
    r = select(e, fix, e.op("stablehlo.add", [r, y], _t(s, d)), r, s, d)
    # a zero remainder takes the sign of the divisor (NumPy); infinite divisor keeps x when
    # the signs agree (handled by fmod), NaN propagates through fmod.
    return select(e, rnz, r, _copysign(e, [zero, y], s, d), s, d)


def _floor_divide(e: Emitter, a: list, s: tuple, d: DType) -> str:
    """NumPy's floored quotient for finite operands; otherwise ``x / y``, which gives the
    standard's special cases (``inf // 2 = inf``, ``1 // -inf = -0``, ``1 // 0 = inf``)."""
    if d.kind in "iu":
        return _int_div(e, a, s, d, "q")
    x, y = a
    zero = _full(e, 0, s, d)
    mod = e.op("stablehlo.remainder", [x, y], _t(s, d))
    div = _ops_ieee.divide(e, e.op("stablehlo.subtract", [x, mod], _t(s, d)), y, s, d)
    mnz = compare(e, "NE", mod, zero, s, d)
    diff = compare(e, "NE", compare(e, "LT", y, zero, s, d),
                   compare(e, "LT", mod, zero, s, d), s, dt.bool)
    fix = _bool_op("stablehlo.and", [mnz, diff], e, s)
    div = select(e, fix, e.op("stablehlo.subtract", [div, _full(e, 1, s, d)], _t(s, d)), div, s, d)
    fl = e.op("stablehlo.floor", [div], _t(s, d))
    big = compare(e, "GT", e.op("stablehlo.subtract", [div, fl], _t(s, d)),
                  _full(e, 0.5, s, d), s, d)
    fl = select(e, big, e.op("stablehlo.add", [fl, _full(e, 1, s, d)], _t(s, d)), fl, s, d)
    plain = _ops_ieee.divide(e, x, y, s, d)
    res = select(e, compare(e, "NE", div, zero, s, d), fl, _copysign(e, [zero, plain], s, d),
                 s, d)
    ok = _bool_op("stablehlo.and", [_isfinite(e, [x], s, d), _isfinite(e, [y], s, d)], e, s)
    ok = _bool_op("stablehlo.and", [ok, compare(e, "NE", y, zero, s, d)], e, s)
    return select(e, ok, res, plain, s, d)


def _copysign(e: Emitter, a: list, s: tuple, d: DType) -> str:
    """``a[0]``'s magnitude bits with ``a[1]``'s sign bit: exact for NaNs too (a select of
    ``-|x|`` and ``|x|`` loses a NaN's sign on GPUs)."""
    it = {16: dt.uint16, 32: dt.uint32, 64: dt.uint64, 8: dt.uint8}[d.bits]
    sign = 1 << (d.bits - 1)
    mag, sgn = (e.op("stablehlo.bitcast_convert", [v], _t(s, it)) for v in a)
    mag = e.op("stablehlo.and", [mag, _full(e, sign - 1, s, it)], _t(s, it))
    sgn = e.op("stablehlo.and", [sgn, _full(e, sign, s, it)], _t(s, it))
    return e.op("stablehlo.bitcast_convert", [e.op("stablehlo.or", [mag, sgn], _t(s, it))],
                _t(s, d))


def _hypot(e: Emitter, a: list, s: tuple, d: DType) -> str:
    x, y = (e.op("stablehlo.abs", [v], _t(s, d)) for v in a)
    m = e.op("stablehlo.maximum", [x, y], _t(s, d))
    n = e.op("stablehlo.minimum", [x, y], _t(s, d))
    zero = _full(e, 0, s, d)
    msafe = select(e, compare(e, "EQ", m, zero, s, d), _full(e, 1, s, d), m, s, d)
    q = e.op("stablehlo.divide", [n, msafe], _t(s, d))
    one_q2 = e.op("stablehlo.add", [_full(e, 1, s, d), _square(e, [q], s, d)], _t(s, d))
    r = e.op("stablehlo.multiply", [m, e.op("stablehlo.sqrt", [one_q2], _t(s, d))], _t(s, d))
    inf = _bool_op("stablehlo.or", [_isinf(e, [x], s, d), _isinf(e, [y], s, d)], e, s)
    return select(e, inf, _full(e, float("inf"), s, d), r, s, d)


def _logaddexp(e: Emitter, a: list, s: tuple, d: DType) -> str:
    x, y = a
    m = e.op("stablehlo.maximum", [x, y], _t(s, d))
    diff = e.op("stablehlo.abs", [e.op("stablehlo.subtract", [x, y], _t(s, d))], _t(s, d))
    t = e.op("stablehlo.log_plus_one", [e.op("stablehlo.exponential", [
        e.op("stablehlo.negate", [diff], _t(s, d))], _t(s, d))], _t(s, d))
    r = e.op("stablehlo.add", [m, t], _t(s, d))
    # equal infinities: x - y is NaN; the answer is the shared infinity
    same_inf = _bool_op("stablehlo.and", [compare(e, "EQ", x, y, s, d), _isinf(e, [x], s, d)], e, s)
    return select(e, same_inf, x, r, s, d)


def _shift(kind: str) -> Any:
    def k(e: Emitter, a: list, s: tuple, d: DType) -> str:
        if kind == "left":
            opname = "stablehlo.shift_left"
        else:
            opname = "stablehlo.shift_right_" + ("arithmetic" if d.kind == "i" else "logical")
        return e.op(opname, a, _t(s, d))
    return k


def _logical(opname: str) -> Any:
    return lambda e, a, s, d: e.op(opname, a, _t(s, d))


def _int_pow(e: Emitter, a: list, s: tuple, d: DType) -> str:
    """Integer power, wrapping on overflow as NumPy's (exact modulo 2**bits). XLA's kernel is
    exact only for exponents below 64 (``3 ** 64`` gave 1 in int32, ``3 ** 100`` -1953380655
    for NumPy's -818408495): it takes the exponent's low 6 bits, and a loop the rest, one bit
    a step over ``x ** 64`` squared, run while some exponent has bits left (for exponents
    under 64, none: the cost is one reduction). A negative exponent gives 1/x**n truncated:
    1 for x == 1, +-1 for x == -1, else 0 (NumPy raises; the standard leaves it
    unspecified)."""
    x, y = a
    t = _t(s, d)
    one, zero = _full(e, 1, s, d), _full(e, 0, s, d)
    acc = e.op("stablehlo.power", [x, e.op("stablehlo.and", [y, _full(e, 63, s, d)], t)], t)
    base = x
    for _ in range(6):  # x ** 64, wrapped
        base = e.op("stablehlo.multiply", [base, base], t)
    pos = y if d.kind == "u" else select(e, compare(e, "LT", y, zero, s, d), zero, y, s, d)
    rest = e.op("stablehlo.shift_right_logical", [pos, _full(e, 6, s, d)], t)
    names = [e.fresh() for _ in range(3)]
    ca, cb, cr = names
    args = [(ca, t), (cb, t), (cr, t)]
    tb = _t((), dt.bool)

    def cond(c: Emitter) -> list:
        left = compare(c, "NE", cr, _full(c, 0, s, d), s, d)
        if not s:
            return [left]
        return [c.op("stablehlo.reduce", [left, c.const(False, dt.bool)], tb,
                     f"dimensions = {i64s(range(len(s)))}",
                     region=c.scalar_body("stablehlo.or", dt.bool))]

    def body(c: Emitter) -> list:
        bit = compare(c, "NE", c.op("stablehlo.and", [cr, _full(c, 1, s, d)], t),
                      _full(c, 0, s, d), s, d)
        nacc = select(c, bit, c.op("stablehlo.multiply", [ca, cb], t), ca, s, d)
        return [nacc, c.op("stablehlo.multiply", [cb, cb], t),
                c.op("stablehlo.shift_right_logical", [cr, _full(c, 1, s, d)], t)]

    c_text = e.block(args, cond)
    b_text = e.block(args, body)
    r = e.op("stablehlo.while", [acc, base, rest], [t, t, t],
             region=f"{c_text}\n{e.indent}}}, {{\n{b_text}")
    acc = f"{r}#0"
    if d.kind == "i":
        m1 = _full(e, -1, s, d)
        odd = compare(e, "NE", e.op("stablehlo.and", [y, one], t), zero, s, d)
        inv = select(e, compare(e, "EQ", x, one, s, d), one, zero, s, d)
        inv = select(e, compare(e, "EQ", x, m1, s, d), select(e, odd, m1, one, s, d), inv, s, d)
        acc = select(e, compare(e, "LT", y, zero, s, d), inv, acc, s, d)
    return acc


def _pow(e: Emitter, a: list, s: tuple, d: DType) -> str:
    if d.kind == "b":
        return _bool_op("stablehlo.or", [a[0], e.op("stablehlo.not", [a[1]], _t(s, d))], e, s)
    if d.kind in "iu":
        return _int_pow(e, a, s, d)
    if d.kind == "f" and d.bits < 64 and _ops_ieee.faithful():
        # XLA:CPU's float32 pow is not libm's on every CPU (on an AVX-512 Xeon, 12.116777 **
        # 3 came out an ulp under the correctly rounded 1778.9404): computed in float64,
        # whose pow is libm's, and rounded once, as libm.exact does for the other functions
        wide = [_libm.widen(e, x, s, d) for x in a]
        r = e.op("stablehlo.power", wide, _t(s, dt.float64))
        return e.op("stablehlo.convert", [r], _t(s, d))
    return e.op("stablehlo.power", a, _t(s, d))


def _minmax(opname: str) -> Any:
    def k(e: Emitter, a: list, s: tuple, d: DType) -> str:
        if d.kind == "b":
            return e.op("stablehlo.or" if opname.endswith("maximum") else "stablehlo.and", a,
                        _t(s, d))
        r = e.op(opname, a, _t(s, d))
        if d.kind == "f":  # explicit NaN propagation: without it, XLA:CPU may fuse the op
            # into a YNNPACK reduction, whose max/min skip NaN (``sum(maximum(x, 0))`` was
            # finite for an x holding NaN); compare and select keep it in XLA's own loops
            for v in a:
                r = e.op("stablehlo.select", [compare(e, "NE", v, v, s, d), v, r], _t(s, d))
        return r
    return k


def _arith(opname: str, bool_op: str) -> Any:
    def k(e: Emitter, a: list, s: tuple, d: DType) -> str:
        return e.op(bool_op if d.kind == "b" else opname, a, _t(s, d))
    return k


def _positive(e: Emitter, a: list, s: tuple, d: DType) -> str:
    return a[0]


# name: (arity, category, result, kernel)
ELEMENTWISE: dict[str, tuple[int, str, str, Any]] = {
    "abs": (1, "numeric", "real", _abs),
    "acos": (1, "float", "float", _libm.exact("acos", _simple("chlo.acos"))),
    "acosh": (1, "float", "float", _libm.exact("acosh", _simple("chlo.acosh"))),
    "asin": (1, "float", "float", _libm.exact("asin", _simple("chlo.asin"))),
    "asinh": (1, "float", "float", _libm.exact("asinh", _simple("chlo.asinh"))),
    "atan": (1, "float", "float", _libm.exact("atan", _simple("chlo.atan"))),
    "atanh": (1, "float", "float", _libm.exact("atanh", _simple("chlo.atanh"))),
    "bitwise_invert": (1, "integer or boolean", "same", _simple("stablehlo.not")),
    "ceil": (1, "real numeric", "same", _int_identity("stablehlo.ceil")),
    "conj": (1, "numeric", "same", _conj),
    "cos": (1, "float", "float", _simple("stablehlo.cosine")),
    "cosh": (1, "float", "float", _libm.exact("cosh", _simple("chlo.cosh"))),
    "exp": (1, "float", "float", _simple("stablehlo.exponential")),
    "expm1": (1, "float", "float",
              _libm.exact("expm1", _simple("stablehlo.exponential_minus_one"))),
    "floor": (1, "real numeric", "same", _int_identity("stablehlo.floor")),
    "imag": (1, "numeric", "real", _imag),
    "isfinite": (1, "numeric", "bool", _isfinite),
    "isinf": (1, "numeric", "bool", _isinf),
    "isnan": (1, "numeric", "bool", _isnan),
    "log": (1, "float", "float", _simple("stablehlo.log")),
    "log1p": (1, "float", "float", _libm.exact("log1p", _simple("stablehlo.log_plus_one"))),
    "log2": (1, "float", "float", _libm.exact("log2", _log_base(2.0))),
    "log10": (1, "float", "float", _libm.exact("log10", _log_base(10.0))),
    "logical_not": (1, "any", "bool", _logical("stablehlo.not")),
    "negative": (1, "numeric", "same", _simple("stablehlo.negate")),
    "positive": (1, "numeric", "same", _positive),
    "real": (1, "numeric", "real", _real),
    "reciprocal": (1, "float", "float", _reciprocal),
    "round": (1, "numeric", "same", _round),
    "sign": (1, "numeric", "same", _sign),
    "signbit": (1, "real floating-point", "bool", _signbit),
    "sin": (1, "float", "float", _simple("stablehlo.sine")),
    "sinh": (1, "float", "float", _libm.exact("sinh", _simple("chlo.sinh"))),
    "sqrt": (1, "float", "float", _simple("stablehlo.sqrt")),
    "square": (1, "numeric", "same", _square),
    "tan": (1, "float", "float", _simple("chlo.tan")),
    "tanh": (1, "float", "float", _libm.exact("tanh", _simple("stablehlo.tanh"))),
    "trunc": (1, "real numeric", "same", _trunc),
    "add": (2, "numeric", "same", _arith("stablehlo.add", "stablehlo.or")),
    "atan2": (2, "real float", "float", _simple("stablehlo.atan2")),
    "bitwise_and": (2, "integer or boolean", "same", _simple("stablehlo.and")),
    "bitwise_left_shift": (2, "integer", "same", _shift("left")),
    "bitwise_or": (2, "integer or boolean", "same", _simple("stablehlo.or")),
    "bitwise_right_shift": (2, "integer", "same", _shift("right")),
    "bitwise_xor": (2, "integer or boolean", "same", _simple("stablehlo.xor")),
    "copysign": (2, "real float", "float", _copysign),
    "divide": (2, "float", "float", lambda e, a, s, d: _ops_ieee.divide(e, a[0], a[1], s, d)),
    "equal": (2, "any", "bool", _cmp("EQ")),
    "floor_divide": (2, "real numeric", "same", _floor_divide),
    "greater": (2, "real numeric", "bool", _cmp("GT")),
    "greater_equal": (2, "real numeric", "bool", _cmp("GE")),
    "hypot": (2, "real float", "float", _hypot),
    "less": (2, "real numeric", "bool", _cmp("LT")),
    "less_equal": (2, "real numeric", "bool", _cmp("LE")),
    "logaddexp": (2, "real float", "float", _logaddexp),
    "logical_and": (2, "any", "bool", _logical("stablehlo.and")),
    "logical_or": (2, "any", "bool", _logical("stablehlo.or")),
    "logical_xor": (2, "any", "bool", _logical("stablehlo.xor")),
    "maximum": (2, "real numeric", "same", _minmax("stablehlo.maximum")),
    "minimum": (2, "real numeric", "same", _minmax("stablehlo.minimum")),
    "multiply": (2, "numeric", "same", _arith("stablehlo.multiply", "stablehlo.and")),
    "nextafter": (2, "real float", "float", _simple("chlo.next_after")),
    "not_equal": (2, "any", "bool", _cmp("NE")),
    "pow": (2, "numeric", "same", _pow),
    "remainder": (2, "real numeric", "same", _remainder),
    "subtract": (2, "numeric", "same", _simple("stablehlo.subtract")),
}

# categories accepted per row, beyond the strict ones in _dtypes (which check_category uses)
_ACCEPT = {"float": "biufc", "real float": "biuf"}
_MIXES_WITH_BOOL = ("numeric", "real numeric", "integer")
_LOGICAL = ("logical_and", "logical_or", "logical_xor", "logical_not")


# (compute dtype, result dtype) of each op per operand dtypes: the dtype rule, memoized
_RULES: dict[str, dict] = {}


def _infer(name: str) -> Any:
    """The op's shape and dtype rule: broadcast shapes; the dtype from ``dtypes_for``
    (TypeError for dtypes the op does not take), memoized per operand dtypes (the hot path of
    recording). Elementwise ops have no attributes."""
    arity = ELEMENTWISE[name][0]
    memo = _RULES[name] = {}

    if arity == 1:
        def infer1(inputs: tuple, attrs: tuple) -> tuple:
            x = inputs[0]
            r = memo.get(x.dtype)
            if r is None:
                r = memo[x.dtype] = dtypes_for(name, [x.dtype])
            return x.shape, r[1]
        return infer1

    def infer2(inputs: tuple, attrs: tuple) -> tuple:
        a, b = inputs
        r = memo.get((a.dtype, b.dtype))
        if r is None:
            r = memo[a.dtype, b.dtype] = dtypes_for(name, [a.dtype, b.dtype])
        sa, sb = a.shape, b.shape
        return sa if (sa == sb or not sb) else broadcast_shapes(sa, sb), r[1]
    return infer2


def compute_dtype(n: Any) -> DType:
    """The dtype elementwise node ``n`` computes in (its operands are converted to it; the
    result may differ: ``equal`` of floats computes in float and gives bool)."""
    ds = [x.dtype for x in n.inputs]
    r = _RULES[n.op.name].get(ds[0] if len(ds) == 1 else tuple(ds))
    return (r or dtypes_for(n.op.name, ds))[0]


def _convert(e: Emitter, v: str, shape: tuple, src: DType, dst: DType) -> str:
    """``structural.convert``, except that a complex value is true when either part is nonzero, and
    bool goes to floats through uint8: XLA rewrites ``convert(pred) * y`` as
    ``select(pred, y, 0)``, which loses ``0 * inf = NaN`` (and ``0 / 0``)."""
    if src.kind == "c" and dst.kind == "b":
        return _bool_op("stablehlo.not", [compare(e, "EQ", v, _full(e, 0, shape, src), shape,
                                                  src)], e, shape)
    if src.kind == "b" and dst.kind in "fc":
        v, src = e.op("stablehlo.convert", [v], _t(shape, dt.uint8)), dt.uint8
    return convert(e, v, shape, src, dst)


def _lower(name: str) -> Any:
    kernel = ELEMENTWISE[name][3]
    ckernel = complex_kernel(name) if name in COMPLEX_KERNELS else None
    sums = name in ("add", "subtract")  # (a product feeding them must not fuse: _ops_ieee)
    unfolded = _ops_ieee.UNFOLDED.get(name)
    divides = name == "divide"
    # (reciprocal: ``1 / (b / c)`` became ``c / b`` and ``1 / (1 / x)`` x, one rounding fewer)
    refolds = divides or name == "reciprocal"

    def lower(e: Emitter, n: Any, a: list) -> str:
        cd = compute_dtype(n)
        vals = [_convert(e, v, x.shape, x.dtype, cd) for v, x in zip(a, n.inputs)]
        if divides and cd.kind == "f" and n.inputs[1].shape != n.shape and _ops_ieee.faithful():
            # a broadcast divisor: kept out of the producer's fusion (see _ops_ieee.divide)
            vals[1] = _ops_ieee.unfoldable(e, vals[1], n.inputs[1].shape, cd)
        args = [bcast(e, v, x.shape, n.shape, cd) for v, x in zip(vals, n.inputs)]
        if unfolded and cd.kind == "f" and _ops_ieee.produced_by(n.inputs[0], unfolded):
            args[0] = _ops_ieee.unfoldable(e, args[0], n.shape, cd)
        elif refolds and cd.kind == "f" and _ops_ieee.faithful() and \
                _ops_ieee.produced_by(n.inputs[0], ("divide", "reciprocal")):
            # XLA's simplifier rewrites (a / b) / c as a / (b * c) and 1 / (b / c) as c / b:
            # one rounding fewer, not NumPy's (x / h / h, var / 59 / sum(...),
            # vector_norm(x, axis=(), ord=-1): found by host_first's check)
            args[0] = _ops_ieee.unfoldable(e, args[0], n.shape, cd)
        if ckernel is not None and cd.kind == "c":
            return ckernel(e, args, n.shape, cd)
        if sums:
            return _ops_ieee.unfused(e, kernel(e, args, n.shape, cd), n.inputs, args, n.shape,
                                     cd)
        return kernel(e, args, n.shape, cd)
    return lower


def dtypes_for(name: str, in_dtypes: list[DType]) -> tuple[DType, DType]:
    """(compute dtype, result dtype) for op ``name``; TypeError for dtypes it does not take.

    Beyond the standard's categories, a bool operand mixes with a numeric one (promoted, as
    NumPy: ``x * mask``); bool-only arithmetic stays a TypeError.
    """
    _arity, category, result, _k = ELEMENTWISE[name]
    cd = in_dtypes[0]
    for d in in_dtypes[1:]:
        cd = dt.promote(cd, d)
    accept = _ACCEPT.get(category)
    if accept is None:
        for d in in_dtypes:
            if d.kind == "b" and cd.kind != "b" and category in _MIXES_WITH_BOOL:
                continue
            dt.check_category(d, category, name)
    elif any(d.kind not in accept for d in in_dtypes):
        raise TypeError(f"{name}() does not accept dtype "
                        f"{', '.join(d.name for d in in_dtypes)} (needs "
                        f"{'real ' if category == 'real float' else ''}floating-point dtypes)")
    if name in _LOGICAL:
        cd = dt.bool
    if result == "float" and cd.kind in "biu":
        cd = dt.default_float
    if result in ("same", "float"):
        return cd, cd
    if result == "bool":
        return cd, dt.bool
    return cd, dt.REAL_OF.get(cd, cd)  # real


for _name in ELEMENTWISE:
    define(_name, _infer(_name), _lower(_name), fuses=True)


# ---------------------------------------------------------------- pow_check

NEGATIVE_POWER = "Integers to negative integer powers are not allowed."  # (NumPy's ValueError)


def _infer_pow_check(inputs: tuple, attrs: tuple) -> tuple:
    if len(inputs) != 1 or inputs[0].dtype.kind != "i":
        raise TypeError(f"pow_check: a signed integer exponent, got "
                        f"{[f'{x.dtype.name}{list(x.shape)}' for x in inputs]}")
    return (), dt.bool


def _lower_pow_check(e: Emitter, n: Any, a: list) -> str:
    """Whether some exponent is negative (a bool: an integer power raises there)."""
    x = n.inputs[0]
    s, d = tuple(x.shape), x.dtype
    neg = compare(e, "LT", a[0], e.const(0, d, s), s, d)
    if not s:
        return neg
    return e.op("stablehlo.reduce", [neg, e.const(False, dt.bool)], tensor_type((), dt.bool),
                f"dimensions = {i64s(range(len(s)))}",
                region=e.scalar_body("stablehlo.or", dt.bool))


def _check_pow(n: Any, value: Any) -> None:
    if bool(value):
        where = n.where
        at = f" (pow recorded at {where[0]}:{where[1]})" if where else ""
        raise ValueError(NEGATIVE_POWER + at)


# the check of an integer power's pending exponent: computed in the executable of the power
# (``checked(exponent, pow_check(exponent))``), checked by the executor before anything is
# written back (``executor.run_checks``); NumPy raises ValueError for a negative exponent
POW_CHECK = define("pow_check", _infer_pow_check, _lower_pow_check)
POW_CHECK.keep = True
POW_CHECK.check = _check_pow
