"""Host rules: the ops whose value NumPy computes bit for bit as their lowering does.

A graph seen for the first time may run on the host instead of compiling (``core/hosteval.py``):
each op of this table carries a rule ``host(node, values) -> ndarray`` (``OpDef.host``) that
computes, from its inputs' NumPy values, exactly what the compiled graph computes (a rule
may offer ``rule.bind(node) -> f(values)``, the rule for that node's structure, which the
evaluator's program makes once per structure: the elementwise ops' compute dtype). An op is here
only where the two agree on every input, NaN payloads aside: IEEE arithmetic, comparisons and
square roots (the lowering keeps XLA from reciprocal division and fused multiply-adds), float
sums in NumPy's order (the lowering writes out NumPy's pairwise order), integer arithmetic
(wrapping), data movement; the indexing, sorting, scatter, search and scan ops
(``ops/host_indexing.py``); the LAPACK calls through SciPy's wrappers of the routines the
compiled kernels call (``ops/host_linalg.py``). Ops whose compiled results differ from NumPy's
(``exp``, ``log``, matrix products, XLA's own reduction orders, ``pow``) have no rule, and a
graph using one compiles. A rule raises ``NotExact`` for the inputs where it cannot promise the
compiled bits (a float converted to an integer out of range, the sign of a zero ``max``); the
graph then compiles. Subnormal numbers, which compiled code flushes to zero, are checked by
the evaluator.

The dtypes covered are bool, the integers, float32 and float64 (``DTYPES``), and complex64 and
complex128 for the ops that compute complex values bit for bit as compiled code does
(``COMPLEX_OPS``: data movement, conversions, the parts, conjugation, negation; and the
native kernels' ops, whose host rules call the kernels' code: the FFTs and complex absolute
values of NumPy's own loops); float16, bfloat16 and complex arithmetic (XLA's complex
products and quotients round otherwise) compile.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..graph import OpDef
from . import host_indexing as _host_indexing
from . import host_linalg as _host_linalg
from . import sorting as _sorting  # noqa: F401  (defines the sorts, gathers and scans)
from .elementwise import compute_dtype
from .host_common import NotExact, convert_value
from .reductions import numpy_order, sum_plan
from .structural import OPS

__all__ = ["NotExact", "DTYPES", "MOVES", "KEEPS", "COMPLEX_DTYPES", "COMPLEX_OPS",
           "keeps_values"]

DTYPES = frozenset(("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                    "uint64", "float32", "float64"))


# ops that move values without computing new ones (their float inputs reach the output
# unchanged, subnormals included, as in compiled code): the evaluator checks no subnormals there
MOVES = frozenset(("reshape", "broadcast", "transpose", "slice", "reverse", "pad", "iota",
                   "get", "get_internal", "dynamic_slice", "checked", "gather", "take_axis",
                   "take_along"))
# ops whose float results hold only their operands' values (negated or not), zeros, or whole
# numbers: signs, rounding, parts, selections, maxima, writes, sorts; from values with no
# subnormal they make none, so the evaluator does not look at their results (``keeps_values``)
KEEPS = frozenset(("negative", "positive", "conj", "real", "imag", "ceil", "floor", "round",
                   "trunc", "sign", "concat", "dynamic_update_slice", "update_slices",
                   "select", "maximum", "minimum", "sort_keyed", "sort_multi"))
COMPLEX_DTYPES = frozenset(("complex64", "complex128"))
# the ops whose host rules give compiled code's bits for complex values too (above)
COMPLEX_OPS = MOVES | {"convert", "real", "imag", "conj", "negative", "concat", "select"}


def keeps_values(n: Any) -> bool:
    """Whether node ``n`` (computed by its op's own rule) makes no float value its operands do
    not hold, up to sign, zeros and whole numbers (``KEEPS``; real ``abs``; max/min
    reductions; conversions from integers or bools, and to a float or complex type whose
    parts are as wide): its result holds no subnormal when its operands hold none."""
    name = n.op.name
    if name in KEEPS:
        return True
    if name == "abs":
        return n.inputs[0].dtype.kind != "c"
    if name == "reduce":
        return n.attrs.kind in ("max", "min")
    if name == "convert":
        src, dst = n.inputs[0].dtype, n.dtype
        if src.kind in "biu":
            return True
        part = {"f": 1, "c": 2}
        return src.kind in part and dst.kind in part and \
            dst.itemsize // part[dst.kind] >= src.itemsize // part[src.kind]
    return False


def _cast(v: np.ndarray, d: Any) -> np.ndarray:
    """``v`` in dtype ``d`` as an elementwise op's operand (bool to numbers as 0/1)."""
    return v if v.dtype == d.np else v.astype(d.np)


def _elementwise(fn: Any) -> Any:
    def rule(n: Any, vals: list) -> np.ndarray:
        cd = compute_dtype(n)
        return np.asarray(fn([_cast(v, cd) for v in vals], cd), dtype=n.dtype.np)

    def bind(n: Any) -> Any:
        """``rule`` for the nodes of ``n``'s structure (the evaluator's program binds it
        once): the compute dtype found, and no conversion where the operands have it."""
        cd = compute_dtype(n)
        cdn, out = cd.np, n.dtype.np
        same = all(x.dtype == cd for x in n.inputs)

        def run(vals: list) -> np.ndarray:
            r = fn(vals if same else [v if v.dtype == cdn else v.astype(cdn) for v in vals], cd)
            return r if type(r) is np.ndarray and r.dtype == out else np.asarray(r, dtype=out)
        return run

    rule.bind = bind  # type: ignore[attr-defined]
    return rule


def _bool_or(f: Any, g: Any) -> Any:
    """NumPy's ufunc ``f`` on numbers; ``g`` (logical) on bools, as the lowering does."""
    return lambda a, d: g(*a) if d.kind == "b" else f(*a)


def _zero_signs(r: np.ndarray, a: np.ndarray, b: np.ndarray, take_neg: Any) -> np.ndarray:
    """XLA's maximum/minimum order -0 below +0 (NumPy's return either): fix equal zeros."""
    z = (a == 0) & (b == 0)
    if z.any():
        r = np.array(r, copy=True)
        neg = take_neg(np.signbit(a), np.signbit(b))
        r[z & neg] = -0.0
        r[z & ~neg] = 0.0
    return r


def _max(a: list, d: Any) -> np.ndarray:
    if d.kind == "b":
        return np.logical_or(*a)
    r = np.maximum(*a)  # NaN propagates, as the lowering's selects make it
    return _zero_signs(r, a[0], a[1], np.logical_and) if d.kind == "f" else r


def _min(a: list, d: Any) -> np.ndarray:
    if d.kind == "b":
        return np.logical_and(*a)
    r = np.minimum(*a)
    return _zero_signs(r, a[0], a[1], np.logical_or) if d.kind == "f" else r


def _sign(a: list, d: Any) -> np.ndarray:
    if d.kind == "b":
        raise NotExact("sign of bools")
    if d.kind == "u":
        return (a[0] != 0).astype(d.np)
    return np.sign(a[0]) + np.zeros((), d.np)  # (sign(-0.0) is +0.0 in both)


def _int_identity(f: Any) -> Any:
    """``f`` on floats; integers and bools are their own value (as the lowerings)."""
    return lambda a, d: a[0] if d.kind in "biu" else f(a[0])


def _ufunc(f: Any) -> Any:
    """NumPy's ufunc ``f`` on the operands, whatever the dtype."""
    return lambda a, d: f(*a)


def _integers_only(f: Any) -> Any:
    """NumPy's ufunc ``f`` on integers: floored division and its remainder, 0 for a zero
    divisor, as the lowering (``elementwise._int_div``); float operands compile."""
    def rule(a: list, d: Any) -> np.ndarray:
        if d.kind not in "iu":
            raise NotExact("a float floored division")
        return f(*a)
    return rule


_ELEMENTWISE = {
    "floor_divide": _integers_only(np.floor_divide),
    "remainder": _integers_only(np.remainder),
    "add": _bool_or(np.add, np.logical_or),
    "subtract": _ufunc(np.subtract),
    "multiply": _bool_or(np.multiply, np.logical_and),
    "divide": _ufunc(np.divide),
    "negative": _ufunc(np.negative),
    "positive": lambda a, d: a[0],
    "abs": lambda a, d: a[0] if d.kind in "bu" else np.abs(a[0]),
    "square": lambda a, d: np.multiply(a[0], a[0]),
    "sqrt": _ufunc(np.sqrt),
    "reciprocal": lambda a, d: np.divide(np.ones((), d.np), a[0]),
    "floor": _int_identity(np.floor),
    "ceil": _int_identity(np.ceil),
    "trunc": _int_identity(np.trunc),
    "round": _int_identity(np.rint),  # (half to even, as round_nearest_even)
    "sign": _sign,
    "maximum": _max,
    "minimum": _min,
    "equal": _ufunc(np.equal),
    "not_equal": _ufunc(np.not_equal),
    "less": _ufunc(np.less),
    "less_equal": _ufunc(np.less_equal),
    "greater": _ufunc(np.greater),
    "greater_equal": _ufunc(np.greater_equal),
    "logical_and": _ufunc(np.logical_and),
    "logical_or": _ufunc(np.logical_or),
    "logical_xor": _ufunc(np.logical_xor),
    "logical_not": _ufunc(np.logical_not),
    "bitwise_and": _ufunc(np.bitwise_and),
    "bitwise_or": _ufunc(np.bitwise_or),
    "bitwise_xor": _ufunc(np.bitwise_xor),
    "bitwise_invert": _ufunc(np.invert),
    "isfinite": _ufunc(np.isfinite),
    "isinf": _ufunc(np.isinf),
    "isnan": _ufunc(np.isnan),
}


def _convert(n: Any, vals: list) -> np.ndarray:
    return convert_value(vals[0], n.dtype)


def _short_rows(x: np.ndarray, axes: tuple) -> np.ndarray | None:
    """``x`` as (rows, m) when the reduced axes are its trailing ones (size-1 axes aside) and
    the rows are short and many (2 <= m <= ``SHORT_ROW``, at least ``MANY_ROWS``), else None.
    NumPy reduces such rows one inner-loop call per row (20 ns each: 0.2 ms for 10,000 rows
    of 3); the columns added as vectors take 1/10 of that."""
    m, r = sum_plan(x.shape, axes)
    if r != 1 or not 2 <= m <= SHORT_ROW or x.size < MANY_ROWS * m or \
            x.dtype not in _SHORT_DTYPES:
        return None
    return x.reshape(-1, m)


SHORT_ROW = 7  # (from 8 values up, NumPy's eight lanes: its own loop is as fast)
MANY_ROWS = 64
_SHORT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _reduce(n: Any, vals: list) -> np.ndarray:
    kind, axes = n.attrs
    x = np.ascontiguousarray(vals[0])  # NumPy's order is that of a C-ordered operand
    d = n.dtype
    if kind == "sum":
        if d.kind == "f" and x.size and not numpy_order(n):
            raise NotExact("float sum in XLA's order (fast_math)")
        rows = _short_rows(x, axes) if d.kind == "f" else None
        if rows is not None:  # NumPy's order for fewer than 8 values: -0.0 + x0 + x1 + ...
            s = _fold_columns(np.add, rows)  # (-0.0 + x0 is x0), then the identity: 0.0 + s
            s += 0.0
            return s.reshape(n.shape)
        return np.add.reduce(x, axis=axes, dtype=d.np)
    if kind == "prod":
        if d.kind == "f":
            raise NotExact("float product in XLA's order")
        return np.multiply.reduce(x, axis=axes, dtype=d.np)
    if kind == "any":
        return np.logical_or.reduce(x, axis=axes)
    if kind == "all":
        return np.logical_and.reduce(x, axis=axes)
    if not x.size:
        raise NotExact(f"{kind} of an empty array")
    if d.kind == "b":
        return (np.logical_or if kind == "max" else np.logical_and).reduce(x, axis=axes)
    f = np.maximum if kind == "max" else np.minimum
    rows = _short_rows(x, axes)
    if rows is not None:  # (the same value in any order: NaN payloads and zero signs aside)
        r = _fold_columns(f, rows).reshape(n.shape)
    else:
        r = f.reduce(x, axis=axes)
    if d.kind == "f" and ((float(r) == 0.0) if np.ndim(r) == 0 else bool((r == 0).any())):
        # a zero result whose values hold zeros of both signs: which one comes out follows
        # XLA's order (one sign of zero only: that one)
        zero = x == 0
        neg = np.signbit(x)
        if rows is not None:  # (short rows: their columns or-ed as vectors, as above)
            both = (_fold_columns(np.logical_or, (zero & neg).reshape(rows.shape)) &
                    _fold_columns(np.logical_or, (zero & ~neg).reshape(rows.shape))
                    ).reshape(n.shape)
        else:
            both = np.logical_or.reduce(zero & neg, axis=axes) & \
                np.logical_or.reduce(zero & ~neg, axis=axes)
        if (both & (np.asarray(r) == 0)).any():
            raise NotExact("float max/min of zeros of both signs")
    return r


def _fold_columns(f: Any, rows: np.ndarray) -> np.ndarray:
    """Per row of the (rows, k) ``rows``, its k values folded with the ufunc ``f`` from the
    first on, one column at a time (``_short_rows``: a vector operation per column)."""
    out = rows[:, 0].copy()
    for j in range(1, rows.shape[1]):
        f(out, rows[:, j], out=out)
    return out


def _argreduce(n: Any, vals: list) -> np.ndarray:
    kind, axis = n.attrs
    f = np.argmax if kind == "max" else np.argmin  # first index of ties and of NaN, as ours
    return np.asarray(f(vals[0], axis=axis), dtype=np.int64)


def _broadcast(n: Any, vals: list) -> np.ndarray:
    return np.broadcast_to(vals[0], n.shape)


def _slice(n: Any, vals: list) -> np.ndarray:
    start, limit, step = n.attrs
    return vals[0][tuple(slice(a, b, c) for a, b, c in zip(start, limit, step))]


def _concat(n: Any, vals: list) -> np.ndarray:
    return np.concatenate([convert_value(v, n.dtype) for v in vals], axis=n.attrs.axis)


def _pad(n: Any, vals: list) -> np.ndarray:
    low, high, interior = n.attrs
    if min(low, default=0) < 0 or min(high, default=0) < 0:
        raise NotExact("pad with negative edges")
    x = vals[0]
    out = np.zeros(n.shape, dtype=n.dtype.np)
    out[tuple(slice(lo, lo + (s - 1) * (i + 1) + 1 if s else lo, i + 1)
              for lo, s, i in zip(low, x.shape, interior))] = x
    return out


def _select(n: Any, vals: list) -> np.ndarray:
    c, a, b = vals
    return np.where(c, convert_value(a, n.dtype), convert_value(b, n.dtype))


def _iota(n: Any, vals: list) -> np.ndarray:
    shape, dim, d = n.attrs
    line = np.arange(shape[dim] if shape else 1, dtype=d.np)
    if not shape:
        return line.reshape(())
    return np.broadcast_to(line.reshape([-1 if i == dim else 1 for i in range(len(shape))]),
                           shape)


def _get(n: Any, vals: list) -> np.ndarray:
    # (C order: a multi-result rule may give LAPACK's Fortran-ordered arrays, and rules
    # reading a value in memory order, NumPy's pairwise sums among them, expect C order)
    return np.asarray(vals[0][n.attrs.result], order="C")


def _imag(n: Any, vals: list) -> np.ndarray:
    v = vals[0]
    return v.imag if v.dtype.kind == "c" else np.zeros(n.shape, n.dtype.np)


_STRUCTURAL = {
    "convert": _convert,
    "real": lambda n, v: v[0].real,
    "imag": _imag,
    "conj": lambda n, v: np.conjugate(v[0]) if v[0].dtype.kind == "c" else v[0],
    "reshape": lambda n, v: np.reshape(v[0], n.shape),
    "broadcast": _broadcast,
    "transpose": lambda n, v: np.transpose(v[0], n.attrs.perm),
    "slice": _slice,
    "reverse": lambda n, v: np.flip(v[0], axis=n.attrs.axes) if n.attrs.axes else v[0],
    "concat": _concat,
    "pad": _pad,
    "select": _select,
    "iota": _iota,
    "get": _get,
    "get_internal": _get,
    "reduce": _reduce,
    "argreduce": _argreduce,
    "checked": lambda n, v: v[0],
}


def _attach() -> None:
    for name, fn in _ELEMENTWISE.items():
        OPS[name].host = _elementwise(fn)
    # the LAPACK calls and LU permutations: their own module (SciPy's LAPACK wrappers)
    for name, rule in {**_STRUCTURAL, **_host_indexing.RULES, **_host_linalg.RULES}.items():
        op: OpDef = OPS[name]
        op.host = rule


_attach()
