"""Sorting, searching, gathers, scatters and scans.

- ``sort_multi``: ``stablehlo.sort`` of several same-shaped operands along one axis; the first
  ``nkeys`` operands are keys compared lexicographically, the rest are carried along. The
  order is NumPy's: NaN after every number (complex: by class, ``R + Rj``, ``R + nanj``,
  ``nan + Rj``, ``nan + nanj``, then lexicographic on (real, imag), each part NaN-last),
  ``-0.0 == +0.0``. Descending swaps the comparator's arguments, so a stable
  descending sort keeps equal elements in their original order (and NaNs come first).
- ``sort_keyed``: the fast path for one real operand: XLA's CPU sort is several times faster
  with a single operand and a plain comparator, so floats sort order-preserving integer keys
  made from their bits; ``argsort`` of dtypes of at most 32 bits sorts ``(rank << 32) |
  index`` as one uint64 (stable by construction).
- ``take_axis``: ``stablehlo.gather`` of whole slices along one axis (``take``).
- ``take_along``: a point gather (``take_along_axis``).
- ``scatter1d``: a 1-D overwriting scatter into zeros, or (``combine="min"``, integers) the
  minimum of the updates per slot (untouched slots: the dtype's maximum); indices outside
  ``[0, size)`` are dropped through a spare slot, so nothing relies on XLA's out-of-bounds
  behaviour.
- ``searchsorted``: a binary search unrolled at lowering time (``M.bit_length()`` steps of
  gather + compare + select), consistent with ``sort_multi``'s order.
- ``cumreduce``: an inclusive scan, optionally with the identity prepended: one
  ``stablehlo.reduce_window`` whose window spans the whole axis (XLA rewrites such windows
  into a linear-time scan, far faster than a Hillis-Steele scan of shifted adds, which makes
  log2(n) passes; figures in docs/performance.md, "Measured choices").

Negative indices of the gathers wrap once (``i + n``); indices still outside the axis are
clamped by ``stablehlo.gather`` (the standard leaves out-of-bounds behaviour unspecified).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import dtypes as dt
from ..dtypes import DType
from ..lower import Emitter, tensor_type
from .structural import bcast, compare, convert, define, i64s, select

__all__ = ["less", "equiv", "SortMulti", "SortKeyed", "Take", "Scatter1d", "SearchSorted",
           "CumReduce"]

_I64 = dt.int64


def _t(shape: tuple, d: DType) -> str:
    return tensor_type(shape, d)


def _and(e: Emitter, a: str, b: str, shape: tuple) -> str:
    return e.op("stablehlo.and", [a, b], _t(shape, dt.bool))


def _or(e: Emitter, a: str, b: str, shape: tuple) -> str:
    return e.op("stablehlo.or", [a, b], _t(shape, dt.bool))


def _parts(e: Emitter, a: str, shape: tuple, d: DType) -> tuple[str, str]:
    rd = dt.REAL_OF[d]
    return (e.op("stablehlo.real", [a], _t(shape, rd)),
            e.op("stablehlo.imag", [a], _t(shape, rd)))


def less(e: Emitter, a: str, b: str, shape: tuple, d: DType) -> str:
    """``a < b`` in sort order: NaN last, signed zeros equal; complex as NumPy sorts it, by
    class first (``R + Rj``, ``R + nanj``, ``nan + Rj``, ``nan + nanj``), then
    lexicographically by (real, imag), each part NaN-last."""
    if d.kind == "c":
        rd = dt.REAL_OF[d]
        (ar, ai), (br, bi) = _parts(e, a, shape, d), _parts(e, b, shape, d)
        tail = _and(e, equiv(e, ar, br, shape, rd), less(e, ai, bi, shape, rd), shape)
        lex = _or(e, less(e, ar, br, shape, rd), tail, shape)
        bt = _t(shape, dt.bool)
        a_rn, a_in = (compare(e, "NE", v, v, shape, rd) for v in (ar, ai))
        b_rn, b_in = (compare(e, "NE", v, v, shape, rd) for v in (br, bi))
        same_rn = e.op("stablehlo.not", [e.op("stablehlo.xor", [a_rn, b_rn], bt)], bt)
        same_in = e.op("stablehlo.not", [e.op("stablehlo.xor", [a_in, b_in], bt)], bt)
        rn_lt = _and(e, e.op("stablehlo.not", [a_rn], bt), b_rn, shape)
        in_lt = _and(e, e.op("stablehlo.not", [a_in], bt), b_in, shape)
        class_lt = _or(e, rn_lt, _and(e, same_rn, in_lt, shape), shape)
        same = _and(e, same_rn, same_in, shape)
        return _or(e, class_lt, _and(e, same, lex, shape), shape)
    lt = compare(e, "LT", a, b, shape, d)
    if d.kind != "f":
        return lt
    a_num = compare(e, "EQ", a, a, shape, d)
    b_nan = compare(e, "NE", b, b, shape, d)
    return _or(e, lt, _and(e, a_num, b_nan, shape), shape)


def equiv(e: Emitter, a: str, b: str, shape: tuple, d: DType) -> str:
    """Neither sorts before the other: equal, or both NaN (per part for complex)."""
    if d.kind == "c":
        rd = dt.REAL_OF[d]
        (ar, ai), (br, bi) = _parts(e, a, shape, d), _parts(e, b, shape, d)
        return _and(e, equiv(e, ar, br, shape, rd), equiv(e, ai, bi, shape, rd), shape)
    eq = compare(e, "EQ", a, b, shape, d)
    if d.kind != "f":
        return eq
    both = _and(e, compare(e, "NE", a, a, shape, d), compare(e, "NE", b, b, shape, d), shape)
    return _or(e, eq, both, shape)


def _gather_dims(offset: list, collapsed: list, start_map: list, ivd: int) -> str:
    def lst(xs: list) -> str:
        return "[" + ", ".join(str(x) for x in xs) + "]"
    return (f"dimension_numbers = #stablehlo.gather<offset_dims = {lst(offset)}, "
            f"collapsed_slice_dims = {lst(collapsed)}, start_index_map = {lst(start_map)}, "
            f"index_vector_dim = {ivd}>")


def _index(e: Emitter, v: str, shape: tuple, d: DType, n: int) -> str:
    """Indices as int64 with negative ones wrapped once (``i + n``)."""
    v = convert(e, v, shape, d, _I64)
    if d.kind == "u":
        return v
    zero = bcast(e, e.const(0, _I64), (), shape, _I64)
    neg = compare(e, "LT", v, zero, shape, _I64)
    shifted = e.op("stablehlo.add", [v, bcast(e, e.const(n, _I64), (), shape, _I64)],
                   _t(shape, _I64))
    return select(e, neg, shifted, v, shape, _I64)


# ---------------------------------------------------------------- sort

class SortMulti(NamedTuple):
    """The first ``nkeys`` operands are keys (compared lexicographically), the rest payloads."""
    axis: int
    descending: bool
    stable: bool
    nkeys: int


def _sort_results(inputs: tuple, attrs: SortMulti) -> tuple:
    """Every operand, sorted (one result each)."""
    return tuple((x.shape, x.dtype) for x in inputs)


def _infer_sort(inputs: tuple, attrs: SortMulti) -> tuple:
    s = inputs[0].shape
    for x in inputs[1:]:
        if x.shape != s:
            raise ValueError(f"sort operands differ in shape: {[x.shape for x in inputs]}")
    if not 0 <= attrs.axis < len(s) or not 1 <= attrs.nkeys <= len(inputs):
        raise ValueError(f"sort: axis {attrs.axis} of shape {s}, {attrs.nkeys} keys of "
                         f"{len(inputs)} operands")
    return _sort_results(inputs, attrs)[0]


def _lower_sort(e: Emitter, n: Any, a: list) -> str:
    axis, descending, stable, nkeys = n.attrs
    args: list[tuple[str, str]] = []
    pairs = []
    for x in n.inputs:
        t = _t((), x.dtype)
        lhs, rhs = e.fresh(), e.fresh()
        args += [(lhs, t), (rhs, t)]
        pairs.append((lhs, rhs, x.dtype))

    def body(b: Emitter) -> list:
        res = None
        for lhs, rhs, d in reversed(pairs[:nkeys]):
            if descending:
                lhs, rhs = rhs, lhs
            lt = less(b, lhs, rhs, (), d)
            res = lt if res is None else _or(b, lt, _and(b, equiv(b, lhs, rhs, (), d), res, ()),
                                             ())
        return [res]

    region = e.block(args, body)
    types = [_t(x.shape, x.dtype) for x in n.inputs]
    return e.op("stablehlo.sort", a, types,
                f"dimension = {axis} : i64, is_stable = {'true' if stable else 'false'}",
                region=region)


# inputs: keys then payloads (one shape)
define("sort_multi", _infer_sort, _lower_sort, nout=2, attrs=SortMulti, results=_sort_results)


# ---------------------------------------------------------------- single-operand fast sorts
# XLA's CPU sort is several times faster with one operand and a plain LT/GT comparator than
# with a NaN-aware comparator or carried operands, so real dtypes sort integer keys instead.

_INT_OF = {8: dt.int8, 16: dt.int16, 32: dt.int32, 64: dt.int64}


def _ordered_key(e: Emitter, v: str, shape: tuple, d: DType, merge_zeros: bool) -> tuple:
    """(key, key dtype): a signed integer whose order is ``d``'s sort order with every NaN
    (made the canonical quiet NaN) last; ``merge_zeros`` gives ``-0.0`` the key of ``+0.0``,
    otherwise ``-0.0`` sorts just before ``+0.0``. Integers and bool are their own key."""
    if d.kind != "f":
        return v, d
    it = _INT_OF[d.bits]
    bits = e.op("stablehlo.bitcast_convert", [v], _t(shape, it))
    if merge_zeros:
        zero = compare(e, "EQ", v, bcast(e, e.const(0, d), (), shape, d), shape, d)
        bits = select(e, zero, bcast(e, e.const(0, it), (), shape, it), bits, shape, it)
    nan_bits = int(np.array(np.nan, dtype=d.np).view(it.np))
    nan = compare(e, "NE", v, v, shape, d)
    bits = select(e, nan, bcast(e, e.const(nan_bits, it), (), shape, it), bits, shape, it)
    return _flip_negative(e, bits, shape, it), it


def _flip_negative(e: Emitter, bits: str, shape: tuple, it: DType) -> str:
    """Flip every bit but the sign of negative values (an involution)."""
    neg = compare(e, "LT", bits, bcast(e, e.const(0, it), (), shape, it), shape, it)
    mask = bcast(e, e.const(2 ** (it.bits - 1) - 1, it), (), shape, it)
    return select(e, neg, e.op("stablehlo.xor", [bits, mask], _t(shape, it)), bits, shape, it)


def _plain_sort(e: Emitter, v: str, shape: tuple, d: DType, axis: int, descending: bool,
                stable: bool) -> str:
    t = _t((), d)
    lhs, rhs = e.fresh(), e.fresh()
    region = e.block([(lhs, t), (rhs, t)],
                     lambda b: [compare(b, "GT" if descending else "LT", lhs, rhs, (), d)])
    return e.op("stablehlo.sort", [v], _t(shape, d),
                f"dimension = {axis} : i64, is_stable = {'true' if stable else 'false'}",
                region=region)


class SortKeyed(NamedTuple):
    axis: int
    descending: bool
    mode: str  # "values" or "argsort32"


def _infer_sort_keyed(inputs: tuple, attrs: SortKeyed) -> tuple:
    x = inputs[0]
    mode = attrs.mode
    if x.dtype.kind not in "biuf" or (mode == "argsort32" and x.dtype.bits > 32):
        raise TypeError(f"sort_keyed({mode}) does not take {x.dtype.name}")
    if not 0 <= attrs.axis < len(x.shape) or mode not in ("values", "argsort32"):
        raise ValueError(f"sort_keyed: axis {attrs.axis} of shape {x.shape}, mode {mode!r}")
    return x.shape, (x.dtype if mode == "values" else _I64)


def _lower_sort_keyed(e: Emitter, n: Any, a: list) -> str:
    axis, descending, mode = n.attrs
    x = n.inputs[0]
    s, d = x.shape, x.dtype
    if mode == "values":
        key, kt = _ordered_key(e, a[0], s, d, merge_zeros=False)
        out = _plain_sort(e, key, s, kt, axis, descending, stable=False)
        if kt is d:
            return out
        return e.op("stablehlo.bitcast_convert", [_flip_negative(e, out, s, kt)], _t(s, d))
    # argsort32: one uint64 per element, (rank << 32) | index, sorted ascending: stable
    key, kt = _ordered_key(e, a[0], s, d, merge_zeros=True)
    u64 = dt.uint64
    rank = convert(e, key, s, kt, _I64)
    if kt.kind == "i":
        rank = e.op("stablehlo.add", [rank, bcast(e, e.const(2 ** 31, _I64), (), s, _I64)],
                    _t(s, _I64))
    if descending:
        top = bcast(e, e.const(2 ** 32 - 1, _I64), (), s, _I64)
        rank = e.op("stablehlo.subtract", [top, rank], _t(s, _I64))
    idx = e.op("stablehlo.iota", [], _t(s, u64), f"iota_dimension = {axis} : i64")
    hi = e.op("stablehlo.shift_left", [convert(e, rank, s, _I64, u64),
                                       bcast(e, e.const(32, u64), (), s, u64)], _t(s, u64))
    packed = e.op("stablehlo.or", [hi, idx], _t(s, u64))
    out = _plain_sort(e, packed, s, u64, axis, False, stable=False)
    low = e.op("stablehlo.and", [out, bcast(e, e.const(2 ** 32 - 1, u64), (), s, u64)],
               _t(s, u64))
    return convert(e, low, s, u64, _I64)


# a sort of one real operand: mode "values" (the sorted values; -0.0 sorts before +0.0, NaNs
# come out as the canonical NaN) or "argsort32" (stable int64 indices, dtypes of <= 32 bits,
# axis shorter than 2**32)
define("sort_keyed", _infer_sort_keyed, _lower_sort_keyed, attrs=SortKeyed)


# ---------------------------------------------------------------- gathers

class Take(NamedTuple):
    axis: int


def _infer_take(inputs: tuple, attrs: Take) -> tuple:
    x, idx = inputs
    axis = attrs.axis
    if idx.dtype.kind not in "iu":
        raise TypeError(f"indices must have an integer dtype, got {idx.dtype.name}")
    if not 0 <= axis < len(x.shape):
        raise ValueError(f"take: axis {axis} is not an axis of shape {x.shape}")
    return x.shape[:axis] + idx.shape + x.shape[axis + 1:], x.dtype


def _lower_take(e: Emitter, n: Any, a: list) -> str:
    x, idx = n.inputs
    axis = n.attrs.axis
    k = len(idx.shape)
    iv = _index(e, a[1], idx.shape, idx.dtype, x.shape[axis])
    offset = list(range(axis)) + list(range(axis + k, len(n.shape)))
    sizes = [1 if i == axis else s for i, s in enumerate(x.shape)]
    return e.op("stablehlo.gather", [a[0], iv], _t(n.shape, n.dtype),
                _gather_dims(offset, [axis], [axis], k) + f", slice_sizes = {i64s(sizes)}, "
                "indices_are_sorted = false")


# x[..., idx, ...] with idx (any shape) replacing axis
define("take_axis", _infer_take, _lower_take, attrs=Take)


def _infer_take_along(inputs: tuple, attrs: Take) -> tuple:
    x, idx = inputs
    axis = attrs.axis
    if idx.dtype.kind not in "iu":
        raise TypeError(f"indices must have an integer dtype, got {idx.dtype.name}")
    if len(x.shape) != len(idx.shape) or any(
            p != q for i, (p, q) in enumerate(zip(x.shape, idx.shape)) if i != axis):
        raise ValueError(f"take_along: shapes {x.shape} and {idx.shape} differ off axis {axis}")
    return idx.shape, x.dtype


def _lower_take_along(e: Emitter, n: Any, a: list) -> str:
    x, idx = n.inputs
    axis = n.attrs.axis
    s, nd = idx.shape, len(idx.shape)
    one = s + (1,)
    cols = []
    for j in range(nd):
        if j == axis:
            c = _index(e, a[1], s, idx.dtype, x.shape[axis])
        else:
            c = e.op("stablehlo.iota", [], _t(s, _I64), f"iota_dimension = {j} : i64")
        cols.append(e.op("stablehlo.reshape", [c], _t(one, _I64)))
    full = s + (nd,)
    iv = cols[0] if nd == 1 else e.op("stablehlo.concatenate", cols, _t(full, _I64),
                                      f"dimension = {nd} : i64")
    dims = list(range(nd))
    return e.op("stablehlo.gather", [a[0], iv], _t(n.shape, n.dtype),
                _gather_dims([], dims, dims, nd) + f", slice_sizes = {i64s([1] * nd)}, "
                "indices_are_sorted = false")


# out[i] = x[i with i[axis] replaced by idx[i]]; idx has the output shape, x matches it off
# axis
define("take_along", _infer_take_along, _lower_take_along, attrs=Take)


# ---------------------------------------------------------------- scatter

class Scatter1d(NamedTuple):
    size: int
    combine: str = "set"  # "set": one of the updates to a slot wins; "min": their minimum


_SCATTER_COMBINE = ("set", "min")


def _infer_scatter(inputs: tuple, attrs: Scatter1d) -> tuple:
    idx, upd = inputs
    if len(idx.shape) != 1 or idx.shape != upd.shape:
        raise ValueError(f"scatter1d: indices {idx.shape} and updates {upd.shape} must be one "
                         f"equal 1-D shape")
    if idx.dtype.kind not in "iu" or attrs.size < 0:
        raise TypeError(f"scatter1d: integer indices into a size >= 0, got {idx.dtype.name} "
                        f"and {attrs.size}")
    if attrs.combine not in _SCATTER_COMBINE or (attrs.combine == "min"
                                                 and upd.dtype.kind not in "iu"):
        raise ValueError(f"scatter1d: combine {attrs.combine!r} of {upd.dtype.name} updates "
                         f"(one of {_SCATTER_COMBINE}; 'min' takes integers)")
    return (attrs.size,), upd.dtype


def _lower_scatter(e: Emitter, n: Any, a: list) -> str:
    size = n.attrs.size
    idx = n.inputs[0]
    d = n.dtype
    m = idx.shape
    iv = convert(e, a[0], m, idx.dtype, _I64)
    lo = compare(e, "LT", iv, bcast(e, e.const(0, _I64), (), m, _I64), m, _I64)
    spare = bcast(e, e.const(size, _I64), (), m, _I64)
    hi = compare(e, "GE", iv, spare, m, _I64)
    iv = select(e, _or(e, lo, hi, m), spare, iv, m, _I64)
    if n.attrs.combine == "min":  # untouched slots hold the dtype's largest value
        base = bcast(e, e.const(int(np.iinfo(d.np).max), d), (), (size + 1,), d)
        region = e.scalar_body("stablehlo.minimum", d)
    else:
        base = bcast(e, e.const(0, d), (), (size + 1,), d)
        t = _t((), d)
        p, q = e.fresh(), e.fresh()
        region = e.block([(p, t), (q, t)], lambda b: [q])
    dims = ("scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], "
            "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
            "index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false")
    r = e.op("stablehlo.scatter", [base, iv, a[1]], _t((size + 1,), d), dims, region=region)
    return e.op("stablehlo.slice", [r], _t((size,), d),
                f"start_indices = {i64s([0])}, limit_indices = {i64s([size])}, "
                f"strides = {i64s([1])}")


# out = zeros(size); out[idx[i]] = upd[i] (for repeated indices, one of the updates wins);
# combine "min": out = full(size, max), out[idx[i]] = min(out[idx[i]], upd[i]) (deterministic);
# indices outside [0, size) are dropped
define("scatter1d", _infer_scatter, _lower_scatter, attrs=Scatter1d)


# ---------------------------------------------------------------- searchsorted

class SearchSorted(NamedTuple):
    side: str  # "left" or "right"


def _infer_searchsorted(inputs: tuple, attrs: SearchSorted) -> tuple:
    x1, v = inputs
    if attrs.side not in ("left", "right"):
        raise ValueError(f"searchsorted(): side must be 'left' or 'right', not {attrs.side!r}")
    if len(x1.shape) != 1:
        raise ValueError(f"searchsorted(): x1 must be 1-D, got shape {x1.shape}")
    if x1.dtype is not v.dtype:
        raise TypeError(f"searchsorted: dtypes {x1.dtype.name} and {v.dtype.name} differ")
    return v.shape, _I64


def _lower_searchsorted(e: Emitter, n: Any, a: list) -> str:
    x1, v = n.inputs
    side = n.attrs.side
    s, d, m = v.shape, v.dtype, x1.shape[0]
    lo = bcast(e, e.const(0, _I64), (), s, _I64)
    if m == 0:
        return lo
    hi = bcast(e, e.const(m, _I64), (), s, _I64)
    steps = m.bit_length()
    if steps <= _UNROLL_MAX:
        for _ in range(steps):
            lo, hi = _search_step(e, a[0], a[1], lo, hi, s, d, m, side)
        return lo
    # a loop: its compile time does not grow with M (unrolled, 10 steps took ~6x one step's)
    si, vs, tx, tv = _t((), _I64), _t(s, _I64), _t((m,), d), _t(s, d)
    names = [e.fresh() for _ in range(5)]
    ci, clo, chi, cx, cv = names
    args = list(zip(names, [si, vs, vs, tx, tv]))

    def cond(b: Emitter) -> list:
        return [compare(b, "LT", ci, b.const(steps, _I64), (), _I64)]

    def body(b: Emitter) -> list:
        nlo, nhi = _search_step(b, cx, cv, clo, chi, s, d, m, side)
        return [b.op("stablehlo.add", [ci, b.const(1, _I64)], si), nlo, nhi, cx, cv]

    c_text = e.block(args, cond)
    b_text = e.block(args, body)
    r = e.op("stablehlo.while", [e.const(0, _I64), lo, hi, a[0], a[1]], [si, vs, vs, tx, tv],
             region=f"{c_text}\n{e.indent}}}, {{\n{b_text}")
    return f"{r}#1"


# searches of at most this many steps (M < 2**_UNROLL_MAX) are unrolled, longer ones a loop
_UNROLL_MAX = 3


def _search_step(e: Emitter, x1: str, v: str, lo: str, hi: str, s: tuple, d: DType, m: int,
                 side: str) -> tuple[str, str]:
    """One bisection step of every active ``[lo, hi)`` (left: first ``x1[i]`` not less than
    ``v``; right: first greater)."""
    one = bcast(e, e.const(1, _I64), (), s, _I64)
    last = bcast(e, e.const(m - 1, _I64), (), s, _I64)
    gather = (_gather_dims([], [0], [0], len(s)) + f", slice_sizes = {i64s([1])}, "
              "indices_are_sorted = false")
    active = compare(e, "LT", lo, hi, s, _I64)
    mid = e.op("stablehlo.shift_right_logical",
               [e.op("stablehlo.add", [lo, hi], _t(s, _I64)), one], _t(s, _I64))
    at = e.op("stablehlo.minimum", [mid, last], _t(s, _I64))
    val = e.op("stablehlo.gather", [x1, at], _t(s, d), gather)
    if side == "left":
        right = less(e, val, v, s, d)
    else:
        right = e.op("stablehlo.not", [less(e, v, val, s, d)], _t(s, dt.bool))
    go = _and(e, active, right, s)
    stay = _and(e, active, e.op("stablehlo.not", [right], _t(s, dt.bool)), s)
    lo = select(e, go, e.op("stablehlo.add", [mid, one], _t(s, _I64)), lo, s, _I64)
    hi = select(e, stay, mid, hi, s, _I64)
    return lo, hi


# index of each v in sorted 1-D x1 (one dtype)
define("searchsorted", _infer_searchsorted, _lower_searchsorted, attrs=SearchSorted)


# ---------------------------------------------------------------- scans

class CumReduce(NamedTuple):
    kind: str  # "sum" or "prod"
    axis: int
    include_initial: bool


def _infer_cum(inputs: tuple, attrs: CumReduce) -> tuple:
    kind, axis, initial = attrs
    s = list(inputs[0].shape)
    if kind not in ("sum", "prod") or not 0 <= axis < len(s):
        raise ValueError(f"cumreduce: {kind!r} over axis {axis} of shape {tuple(s)}")
    if initial:
        s[axis] += 1
    return tuple(s), inputs[0].dtype


def _lower_cum(e: Emitter, n: Any, a: list) -> str:
    kind, axis, initial = n.attrs
    x = n.inputs[0]
    d, s = x.dtype, x.shape
    size = s[axis]
    opname = {"sum": "stablehlo.add", "prod": "stablehlo.multiply"}[kind]
    ident = e.const(0 if kind == "sum" else 1, d)
    if size == 0:  # only the initial value: a window of size 0 is invalid
        return bcast(e, ident, (), n.shape, d)
    window = [size if i == axis else 1 for i in range(len(s))]
    low = size if initial else size - 1
    pads = ", ".join(f"[{low}, 0]" if i == axis else "[0, 0]" for i in range(len(s)))
    return e.op("stablehlo.reduce_window", [a[0], ident], _t(n.shape, d),
                f"window_dimensions = {i64s(window)}, window_strides = {i64s([1] * len(s))}, "
                f"padding = dense<[{pads}]> : tensor<{len(s)}x2xi64>",
                region=e.scalar_body(opname, d))


# inclusive scan along axis, input already of the result dtype
define("cumreduce", _infer_cum, _lower_cum, attrs=CumReduce)
