"""Host rules: the ops whose value NumPy computes bit for bit as their lowering does.

A graph seen for the first time may run on the host instead of compiling (``core/hosteval.py``):
each op of this table carries a rule ``host(node, values) -> ndarray`` (``OpDef.host``) that
computes, from its inputs' NumPy values, exactly what the compiled graph computes. An op is here
only where the two agree on every input, NaN payloads aside: IEEE arithmetic, comparisons and
square roots (the lowering keeps XLA from reciprocal division and fused multiply-adds), float
sums in NumPy's order (the lowering writes out NumPy's pairwise order), integer arithmetic
(wrapping), data movement; the LAPACK calls through SciPy's wrappers of the routines the
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

from .. import flags as _flags
from ..graph import OpDef
from . import host_linalg as _host_linalg
from . import indexing as _indexing
from . import sorting as _sorting  # noqa: F401  (defines the sorts, gathers and scans)
from .elementwise import compute_dtype
from .host_common import NotExact
from .reductions import numpy_order, sum_plan
from .structural import OPS

__all__ = ["NotExact", "DTYPES", "MOVES", "COMPLEX_DTYPES", "COMPLEX_OPS"]

DTYPES = frozenset(("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                    "uint64", "float32", "float64"))


# ops that move values without computing new ones (their float inputs reach the output
# unchanged, subnormals included, as in compiled code): the evaluator checks no subnormals there
MOVES = frozenset(("reshape", "broadcast", "transpose", "slice", "reverse", "pad", "iota",
                   "get", "get_internal", "dynamic_slice", "checked", "gather", "take_axis",
                   "take_along"))
COMPLEX_DTYPES = frozenset(("complex64", "complex128"))
# the ops whose host rules give compiled code's bits for complex values too (above)
COMPLEX_OPS = MOVES | {"convert", "real", "imag", "conj", "negative", "concat", "select"}


def _cast(v: np.ndarray, d: Any) -> np.ndarray:
    """``v`` in dtype ``d`` as an elementwise op's operand (bool to numbers as 0/1)."""
    return v if v.dtype == d.np else v.astype(d.np)


def _elementwise(fn: Any) -> Any:
    def rule(n: Any, vals: list) -> np.ndarray:
        cd = compute_dtype(n)
        return np.asarray(fn([_cast(v, cd) for v in vals], cd), dtype=n.dtype.np)
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


def convert_value(v: np.ndarray, dst: Any) -> np.ndarray:
    """``structural.convert``'s value: to bool by ``!= 0``; a float to an integer only inside
    the integer's range (XLA saturates and zeroes NaN where NumPy's cast is undefined)."""
    if v.dtype == dst.np:
        return v
    if v.dtype.kind == "c" and dst.kind != "c":  # the real part first, as the lowering does
        v = v.real
        if v.dtype == dst.np:
            return v
    if dst.kind == "b":
        return v != 0
    if v.dtype.kind == "f" and dst.kind in "iu":
        info = np.iinfo(dst.np)
        with np.errstate(invalid="ignore"):
            ok = (v > float(info.min) - 1.0) & (v < float(info.max) + 1.0)
        if not ok.all():  # NaN, infinities and values off the range
            raise NotExact("float to integer outside the integer's range")
    return v.astype(dst.np)


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
            s = rows[:, 0].copy()  # (-0.0 + x0 is x0), then the identity: 0.0 + s
            for j in range(1, rows.shape[1]):
                s += rows[:, j]
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
        r = rows[:, 0].copy()
        for j in range(1, rows.shape[1]):
            f(r, rows[:, j], out=r)
        r = r.reshape(n.shape)
    else:
        r = f.reduce(x, axis=axes)
    if d.kind == "f" and (np.asarray(r) == 0).any():
        # a zero result whose values hold zeros of both signs: which one comes out follows
        # XLA's order (one sign of zero only: that one)
        zero = x == 0
        neg = np.signbit(x)
        both = np.logical_or.reduce(zero & neg, axis=axes) & \
            np.logical_or.reduce(zero & ~neg, axis=axes)
        if (both & (np.asarray(r) == 0)).any():
            raise NotExact("float max/min of zeros of both signs")
    return r


def numpy_order_scans() -> bool:
    """Whether float scans are lowered in NumPy's order (with the scan kernel): fast_math off."""
    return not _flags._values["fast_math"]


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


def _dynamic_slice(n: Any, vals: list) -> np.ndarray:
    sizes, dyn = n.attrs
    x = vals[0]
    starts = dict(zip(dyn, (int(s) for s in vals[1:])))
    idx = []
    for i, (size, dim) in enumerate(zip(sizes, x.shape)):
        s = min(max(starts.get(i, 0), 0), dim - size)  # clamped into the array, as XLA does
        idx.append(slice(s, s + size))
    return x[tuple(idx)]


def _dynamic_update_slice(n: Any, vals: list) -> np.ndarray:
    x, upd = vals[0], convert_value(vals[1], n.dtype)
    starts = dict(zip(n.attrs.dyn, (int(s) for s in vals[2:])))
    out = np.array(x, copy=True)
    idx = []
    for i, (size, dim) in enumerate(zip(upd.shape, x.shape)):
        s = min(max(starts.get(i, 0), 0), dim - size)
        idx.append(slice(s, s + size))
    out[tuple(idx)] = upd
    return out


def _update_slices(n: Any, vals: list) -> np.ndarray:
    dyn, kind, window, rdyn, rsizes = n.attrs
    out = np.array(vals[0], copy=True)
    at = vals[-1]
    if kind == "fill":
        ups = vals[1]
    else:
        src, frm = vals[1], vals[2]
    for j in range(at.shape[0]):
        idx = [slice(None)] * out.ndim
        for a, s in zip(dyn, at[j]):
            idx[a] = slice(int(s), int(s) + window[a])  # (in bounds: parsed keys)
        if kind == "fill":
            out[tuple(idx)] = ups[j]
            continue
        reads = [slice(0, size) for size in rsizes]
        for a, s in zip(rdyn, frm[j]):  # clamped into the source, as a gather does
            s = min(max(int(s), 0), src.shape[a] - rsizes[a])
            reads[a] = slice(s, s + rsizes[a])
        out[tuple(idx)] = src[tuple(reads)].reshape(window)
    return out


# ---------------------------------------------------------------- indices, gathers, sorts

_I64 = np.int64


def _wrapped(idx: np.ndarray, size: int) -> np.ndarray:
    """int64 indices, negative ones wrapped once (``sorting._index``)."""
    v = idx.astype(_I64) if idx.dtype.kind != "u" or idx.dtype.itemsize < 8 else \
        np.minimum(idx, np.uint64(2**63 - 1)).astype(_I64)
    return v if idx.dtype.kind == "u" else np.where(v < 0, v + size, v)


def _clamped(idx: np.ndarray, size: int) -> np.ndarray:
    """Start indices of one-element slices, clamped into the axis as ``stablehlo.gather``."""
    if size < 1:
        raise NotExact("a gather from an empty axis")
    return np.clip(_wrapped(idx, size), 0, size - 1)


def _index_norm(n: Any, vals: list) -> np.ndarray:
    size, x = n.attrs.size, vals[0]
    if x.dtype.kind == "u":
        return np.minimum(x, min(size - 1, np.iinfo(x.dtype).max)).astype(_I64)
    v = x.astype(_I64)
    return np.clip(np.where(v < 0, v + size, v), 0, size - 1)


def _index_check(n: Any, vals: list) -> np.ndarray:
    size, x = n.attrs.size, vals[0]
    v = np.minimum(x, np.uint64(2**63 - 1)).astype(_I64) if x.dtype == np.uint64 else \
        x.astype(_I64)
    bad = v[(v < -size) | (v >= size)]
    return np.asarray(bad.max() if bad.size else _indexing._NONE, dtype=_I64)


def _gather(n: Any, vals: list) -> np.ndarray:
    offset_dims, collapsed, slice_sizes = n.attrs
    x, idx = vals
    k = len(collapsed)
    kept = [i for i in range(x.ndim) if i not in collapsed]
    # kept axes from 0 (no start index), collapsed axes moved first and indexed
    x = x[tuple(slice(0, slice_sizes[i]) if i in kept else slice(None) for i in range(x.ndim))]
    x = np.moveaxis(x, list(collapsed), list(range(k)))
    starts = tuple(np.clip(idx[..., j], 0, x.shape[j] - 1) for j in range(k))
    if any(x.shape[j] < 1 for j in range(k)):
        raise NotExact("a gather from an empty axis")
    r = x[starts] if k else np.broadcast_to(x, idx.shape[:-1] + x.shape)  # batch + kept
    nb = r.ndim - len(kept)
    batch, pos = iter(range(nb)), iter(range(nb, r.ndim))
    perm = [next(pos) if i in offset_dims else next(batch) for i in range(r.ndim)]
    return np.transpose(r, perm)


def _take_axis(n: Any, vals: list) -> np.ndarray:
    x, idx = vals
    axis = n.attrs.axis
    return np.take(x, _clamped(idx, x.shape[axis]), axis=axis)


def _take_along(n: Any, vals: list) -> np.ndarray:
    x, idx = vals
    axis = n.attrs.axis
    return np.take_along_axis(x, _clamped(idx, x.shape[axis]), axis=axis)


_INT_OF: dict[int, Any] = {2: np.int16, 4: np.int32, 8: np.int64}


def _ordered_key(x: np.ndarray, merge_zeros: bool) -> np.ndarray:
    """``sorting._ordered_key``: signed integers in the sort order (NaN last, one NaN)."""
    if x.dtype.kind != "f":
        return x
    it = _INT_OF[x.dtype.itemsize]
    bits = np.array(x).view(it)
    if merge_zeros:
        bits = np.where(x == 0, it(0), bits)
    bits = np.where(x != x, np.array(np.nan, dtype=x.dtype).view(it), bits)
    mask = it(np.iinfo(it).max)
    return np.where(bits < 0, bits ^ mask, bits)


def _sort_keyed(n: Any, vals: list) -> np.ndarray:
    axis, descending, mode = n.attrs
    x = vals[0]
    if mode == "values":
        key = _ordered_key(x, merge_zeros=False)
        out = np.sort(key, axis=axis)  # distinct keys are distinct bits: any sort agrees
        if descending:
            out = np.flip(out, axis=axis)
        if x.dtype.kind != "f":
            return out
        mask = out.dtype.type(np.iinfo(out.dtype).max)
        return np.where(out < 0, out ^ mask, out).view(x.dtype)
    key = _ordered_key(x, merge_zeros=True).astype(_I64)
    if descending:
        key = ~key  # (reverses the order; equal keys keep their index order: stable)
    return np.argsort(key, axis=axis, kind="stable").astype(_I64)


def _sort_multi(n: Any, vals: list) -> tuple:
    axis, descending, stable, nkeys = n.attrs
    keys = [_ordered_key(v, merge_zeros=True) for v in vals[:nkeys]]
    keys = [k.astype(np.uint8) if k.dtype == np.bool_ else k for k in keys]
    if descending:
        keys = [~k for k in keys]
    keys = [np.moveaxis(k, axis, -1) for k in keys]
    order = np.lexsort(keys[::-1])  # stable: equal keys keep their order
    if not stable and keys[0].shape[-1] > 1:
        # an unstable sort may order equal keys either way: exact only without ties
        ranked = [np.take_along_axis(k, order, axis=-1) for k in keys]
        same = np.ones(ranked[0][..., 1:].shape, dtype=bool)
        for k in ranked:
            same &= k[..., 1:] == k[..., :-1]
        if same.any():
            raise NotExact("an unstable sort with equal keys")
    order = np.moveaxis(order, -1, axis)
    return tuple(np.take_along_axis(v, order, axis=axis) for v in vals)


def _scatter1d(n: Any, vals: list) -> np.ndarray:
    size, combine = n.attrs
    idx, upd = vals
    iv = _wrapped(idx, 0) if idx.dtype.kind == "u" else idx.astype(_I64)
    iv = np.where((iv < 0) | (iv >= size), size, iv)
    d = n.dtype.np
    if combine == "min":
        out = np.full(size + 1, np.iinfo(d).max, dtype=d)
        np.minimum.at(out, iv, upd)
        return out[:size]
    inside = iv < size
    slots, first = np.unique(iv[inside], return_index=True)
    if len(slots) != int(inside.sum()):  # repeated slots: XLA keeps one of the updates
        u = upd[inside]
        rep = u[first][np.searchsorted(slots, iv[inside])]
        if not np.array_equal(rep.view(np.uint8), u.view(np.uint8)):
            raise NotExact("a scatter of different values into one slot")
    out = np.zeros(size + 1, dtype=d)
    out[iv] = upd
    return out[:size]


def _scatter(n: Any, vals: list) -> np.ndarray:
    """``stablehlo.scatter`` replacing values (``ops/indexing.py``): each index row of
    ``indices`` picks one element along the inserted axes, the update's window covers the
    other axes from 0. Out-of-bounds rows (XLA skips them) and repeated ones (XLA keeps one of
    their updates) are ``NotExact``."""
    window, inserted = n.attrs
    x, idx, upd = vals
    d = n.dtype.np
    k = len(inserted)
    if upd.dtype != d or not k:
        raise NotExact("a scatter converting its updates, or with no index axis")
    out = np.array(x, dtype=d, order="C", copy=True)
    o = np.moveaxis(out, list(inserted), list(range(k)))  # (a view of out)
    rows = [i for i in range(upd.ndim) if i not in window]
    u = np.transpose(upd, rows + list(window))
    wshape, kept = u.shape[len(rows):], o.shape[k:]
    if len(wshape) != len(kept) or any(w > s for w, s in zip(wshape, kept)):
        raise NotExact("a scatter window beyond the operand")
    ind = tuple(idx[..., j] for j in range(k))
    if any(((i < 0) | (i >= o.shape[j])).any() for j, i in enumerate(ind)):
        raise NotExact("a scatter index out of bounds")
    if idx[..., 0].size and np.unique(np.ravel_multi_index(ind, o.shape[:k])).size != \
            idx[..., 0].size:
        raise NotExact("a scatter of several updates into one place")
    o[ind + tuple(slice(0, w) for w in wshape)] = u
    return out


def _less(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``sorting.less``: NaN after every number, signed zeros equal."""
    if a.dtype.kind != "f":
        return a < b
    return (a < b) | ((a == a) & (b != b))


def _searchsorted(n: Any, vals: list) -> np.ndarray:
    x1, v = vals
    m = x1.shape[0]
    lo = np.zeros(v.shape, dtype=_I64)
    if m == 0:
        return lo
    hi = np.full(v.shape, m, dtype=_I64)
    for _ in range(m.bit_length()):  # the lowering's bisection, step for step
        active = lo < hi
        mid = (lo + hi) >> 1
        val = x1[np.minimum(mid, m - 1)]
        right = _less(val, v) if n.attrs.side == "left" else ~_less(v, val)
        lo = np.where(active & right, mid + 1, lo)
        hi = np.where(active & ~right, mid, hi)
    return lo


def _cumreduce(n: Any, vals: list) -> np.ndarray:
    """Integers: exact in any order. Floats: NumPy's order is the scan kernel's
    (``kernels/scan.py``; ``hosteval.eligible`` admits float scans only where it is in use)."""
    kind, axis, initial = n.attrs
    x = vals[0]
    if x.dtype.kind == "f" and not numpy_order_scans():
        raise NotExact("a float scan in XLA's order (fast_math)")
    d = x.dtype
    r = (np.cumsum if kind == "sum" else np.cumprod)(x, axis=axis, dtype=d)
    if initial:
        shape = list(x.shape)
        shape[axis] = 1
        r = np.concatenate([np.full(shape, 0 if kind == "sum" else 1, dtype=d), r], axis=axis)
    return r


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
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice,
    "update_slices": _update_slices,
    "index_norm": _index_norm,
    "index_check": _index_check,
    "checked": lambda n, v: v[0],
    "gather": _gather,
    "take_axis": _take_axis,
    "take_along": _take_along,
    "sort_keyed": _sort_keyed,
    "sort_multi": _sort_multi,
    "scatter1d": _scatter1d,
    "scatter": _scatter,
    "searchsorted": _searchsorted,
    "cumreduce": _cumreduce,
}


def _attach() -> None:
    for name, fn in _ELEMENTWISE.items():
        OPS[name].host = _elementwise(fn)
    # the LAPACK calls and LU permutations: their own module (SciPy's LAPACK wrappers)
    for name, rule in {**_STRUCTURAL, **_host_linalg.RULES}.items():
        op: OpDef = OPS[name]
        op.host = rule


_attach()
