"""Reductions: ``reduce`` (sum, prod, max, min, any, all over axes) and ``argreduce``.

Float and complex sums are written out in NumPy's order (below): pairwise over the trailing
reduced axes, row after row over the others. A sum is NumPy's, whatever the shape around it and
the graph it is fused in, unless ``fast_math`` is on (XLA's own reduction: faster, rounded by
shape).
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

from .. import dtypes as dt
from ..dtypes import DType
from ..lower import Emitter, tensor_type
from . import nan_safe as _nan_safe  # noqa: F401  (registers its lower.FACTS entry)
from .ieee import carries_product, faithful, unfoldable
from .structural import OPS, _axes_in, compare, define, i64s, plus_zero, select

__all__ = ["Reduce", "ArgReduce", "order_free_reductions", "pairwise_rows", "sum_plan",
           "regular_rows", "numpy_order", "numpy_order_sum", "SEQUENTIAL_ROWS", "WIDE"]

# ---------------------------------------------------------------- reductions

_REDUCE_BODY = {"sum": "stablehlo.add", "prod": "stablehlo.multiply", "max": "stablehlo.maximum",
                "min": "stablehlo.minimum", "any": "stablehlo.or", "all": "stablehlo.and"}


def _init_value(kind: str, d: DType) -> Any:
    if kind in ("sum", "any"):
        return 0
    if kind in ("prod", "all"):
        return 1
    if d.kind == "b":
        return kind == "min"
    if d.kind in "iu":
        ii = dt.iinfo(d)
        return ii.min if kind == "max" else ii.max
    return float("-inf") if kind == "max" else float("inf")


class Reduce(NamedTuple):
    """``kind``: sum, prod, max, min, any or all over ``axes``; the input already has the
    result's dtype (the namespace function converts it)."""
    kind: str
    axes: tuple


def _infer_reduce(inputs: tuple, attrs: Reduce) -> tuple:
    kind, axes = attrs
    s = inputs[0].shape
    if kind not in _REDUCE_BODY:
        raise ValueError(f"reduce: unknown reduction {kind!r}")
    _axes_in(axes, len(s), kind)
    return tuple(d for i, d in enumerate(s) if i not in axes), inputs[0].dtype


def _lower_reduce(e: Emitter, n: Any, a: list) -> str:
    kind, axes = n.attrs
    d = n.dtype
    if numpy_order(n):
        return numpy_order_sum(e, n, a[0])
    if kind in ("max", "min") and d.kind == "f":
        short = _short_extremum(e, n, a[0])
        if short is not None:
            return short
    init = e.const(_init_value(kind, d), d)
    body = e.scalar_body(_REDUCE_BODY[kind], d)
    r = e.op("stablehlo.reduce", [a[0], init], tensor_type(n.shape, d),
             f"dimensions = {i64s(axes)}", region=body)
    if kind in ("max", "min") and d.kind == "f" and id(n) not in e.facts.get("nan_safe", ()):
        # XLA:CPU hands float max/min reductions of 4096+ elements to YNNPACK, whose max/min
        # skip NaN (jaxlib 0.10.2 and 0.12; jax.numpy gives the same wrong answers). The
        # standard and NumPy propagate NaN. A sum of absolute values (YNNPACK too) is NaN
        # exactly where the reduced values hold a NaN (|inf| + |inf| is inf, never NaN); it
        # costs one more pass over the input, which ``nan_safe.nan_safe_reductions`` spares
        # where the graph's results are NaN on those rows anyway (softmax, logsumexp).
        x = n.inputs[0]
        f = e.op("stablehlo.abs", [a[0]], tensor_type(x.shape, d))
        s = e.op("stablehlo.reduce", [f, e.const(0, d)], tensor_type(n.shape, d),
                 f"dimensions = {i64s(axes)}", region=e.scalar_body("stablehlo.add", d))
        r = select(e, compare(e, "NE", s, s, n.shape, d), s, r, n.shape, d)
    return r


define("reduce", _infer_reduce, _lower_reduce, attrs=Reduce)

# float max/min over trailing axes of at most this many values per result are written out as
# a chain of elementwise maxima (minima) of the row's columns, in order. XLA:CPU's reduction
# of short rows runs one row at a time, and one of 4096+ values goes to YNNPACK, which needs
# the NaN guard above; the chain is one vectorized loop and propagates NaN itself. The max of
# 10,000 rows of 3 float64, compiled: 0.23 ms of work as a reduction (0.27-0.55 ms a call),
# ~0.02 ms as a chain (2-core VM, 2026-11-28). Where zeros of both signs tie the result's
# sign follows the order (columns in order, as NumPy's loop for a row), which the host rule
# refuses to promise either way.
SHORT_EXTREMA = 8


def _short_extremum(e: Emitter, n: Any, v: str) -> str | None:
    """``n`` (a float max/min) as a chain over its rows' columns, or None where its reduced
    axes are not trailing or hold more than ``SHORT_EXTREMA`` (or fewer than 2) values."""
    x, axes = n.inputs[0], n.attrs.axes
    r = len(x.shape)
    m = math.prod([x.shape[i] for i in axes])
    if tuple(sorted(axes)) != tuple(range(r - len(axes), r)) or not 2 <= m <= SHORT_EXTREMA \
            or 0 in n.shape:
        return None
    d, rows = n.dtype, n.shape
    if len(axes) != 1:
        v = e.op("stablehlo.reshape", [v], tensor_type(rows + (m,), d))
    op = _REDUCE_BODY[n.attrs.kind]
    acc = None
    k = len(rows)
    for j in range(m):
        col = e.op("stablehlo.slice", [v], tensor_type(rows + (1,), d),
                   f"start_indices = {i64s((0,) * k + (j,))}, "
                   f"limit_indices = {i64s(rows + (j + 1,))}, strides = {i64s((1,) * (k + 1))}")
        col = e.op("stablehlo.reshape", [col], tensor_type(rows, d))
        acc = col if acc is None else e.op(op, [acc, col], tensor_type(rows, d))
    return acc




# XLA:CPU's tree_reduction_rewriter cuts reduced axes longer than this into windows
TREE_WINDOW = 32


def order_free_reductions(order: list, by_kernel: Any = None) -> bool:
    """Whether the graph ``order`` reduces bool/integer values over trailing axes, and every
    reduction XLA would compute is such: then it compiles without XLA's
    ``tree_reduction_rewriter`` (``executor``). ``by_kernel(n)``: whether a native kernel
    lowers node ``n`` (the column-sum kernel takes float sums of many rows,
    ``kernels/pairwise.py``); float sums written out in NumPy's order with no XLA reduction
    (few rows, added in order) or lowered by a kernel do not count.

    XLA:CPU rewrites a large reduction into a tree of windowed reductions (for the accuracy of
    float sums); YNNPACK takes big float sums and max/min, but bool and integer reductions go
    through the tree: 3-5 kernels, each compiled by LLVM. Their result does not depend on the
    order (wrapping integer sums included), and over trailing axes one loop compiles and runs
    faster than the tree. Leading axes keep the tree: there one loop runs slower (figures in
    docs/performance.md, "Measured choices"). A float sum XLA adds (more than
    ``SEQUENTIAL_ROWS`` rows without the kernel) or a float max/min (the sign of a zero result
    follows XLA's order) keeps it too: their bits would change with it. Reductions of at
    most ``TREE_WINDOW`` values per result are left whole either way."""
    reduce_op = OPS["reduce"]
    found = False
    for n in order:
        if n.op.name == "index_check":  # an int64 max over every axis of the indices
            found = True
        elif n.op is reduce_op:
            x, axes = n.inputs[0], n.attrs.axes
            if math.prod([x.shape[a] for a in axes]) <= TREE_WINDOW:
                continue  # (XLA leaves it whole either way, even with its axes merged)
            if x.dtype.kind not in "biu":
                if numpy_order(n) and (sum_plan(x.shape, axes)[1] <= SEQUENTIAL_ROWS or (
                        by_kernel is not None and by_kernel(n))):
                    continue  # (no XLA reduction: rows in order, or the kernel's calls)
                return False
            r = len(x.shape)
            if tuple(sorted(axes)) != tuple(range(r - len(axes), r)):
                return False
            found = True
    return found


class ArgReduce(NamedTuple):
    kind: str  # max or min
    axis: int


def _infer_argreduce(inputs: tuple, attrs: ArgReduce) -> tuple:
    kind, axis = attrs
    s = inputs[0].shape
    if kind not in ("max", "min"):
        raise ValueError(f"argreduce: unknown reduction {kind!r}")
    _axes_in((axis,), len(s), f"arg{kind}")
    return tuple(d for i, d in enumerate(s) if i != axis), dt.int64


def _lower_argreduce(e: Emitter, n: Any, a: list) -> str:
    """argmax/argmin: a two-operand reduce; ties and NaN pick the first index (as NumPy)."""
    kind, axis = n.attrs
    x = n.inputs[0]
    d, i64 = x.dtype, dt.int64
    idx = e.op("stablehlo.iota", [], tensor_type(x.shape, i64), f"iota_dimension = {axis} : i64")
    tv, ti = tensor_type((), d), tensor_type((), i64)
    va, ia, vb, ib = e.fresh(), e.fresh(), e.fresh(), e.fresh()

    def body(b: Emitter) -> list:
        direction = "GT" if kind == "max" else "LT"
        better = compare(b, direction, va, vb, (), d)
        eq = compare(b, "EQ", va, vb, (), d)
        if d.kind in "fc":
            a_nan = compare(b, "NE", va, va, (), d)
            b_nan = compare(b, "NE", vb, vb, (), d)
            b_ok = b.op("stablehlo.not", [b_nan], tensor_type((), dt.bool))
            better = b.op("stablehlo.or", [better, b.op("stablehlo.and", [a_nan, b_ok],
                                                          tensor_type((), dt.bool))],
                          tensor_type((), dt.bool))
            eq = b.op("stablehlo.or", [eq, b.op("stablehlo.and", [a_nan, b_nan],
                                                  tensor_type((), dt.bool))],
                      tensor_type((), dt.bool))
        first = compare(b, "LT", ia, ib, (), i64)
        tie = b.op("stablehlo.and", [eq, first], tensor_type((), dt.bool))
        take = b.op("stablehlo.or", [better, tie], tensor_type((), dt.bool))
        return [select(b, take, va, vb, (), d), select(b, take, ia, ib, (), i64)]

    region = e.block([(va, tv), (ia, ti), (vb, tv), (ib, ti)], body)
    init_v = e.const(_init_value(kind, d), d)
    init_i = e.const(2**63 - 1, i64)
    r = e.op("stablehlo.reduce", [a[0], idx, init_v, init_i],
             [tensor_type(n.shape, d), tensor_type(n.shape, i64)],
             f"dimensions = {i64s([axis])}", region=region)
    return f"{r}#1"


define("argreduce", _infer_argreduce, _lower_argreduce, attrs=ArgReduce)




WIDE = {"float16": dt.float32, "bfloat16": dt.float32}  # NumPy adds float16 in float32


def numpy_order(n: Any) -> bool:
    """Whether reduce node ``n`` is a float or complex sum written out in NumPy's order."""
    return n.attrs.kind == "sum" and n.dtype.kind in "fc" and faithful() and \
        bool(math.prod(n.inputs[0].shape))


# the longest run of rows a column sum adds with XLA's ops, one after the other (longer runs:
# the column-sum kernel, or XLA's reduction without it)
SEQUENTIAL_ROWS = 16


def numpy_order_sum(e: Emitter, n: Any, x: str, row_call: Any = None,
                    column_call: Any = None) -> str:
    """The sum ``n`` (``numpy_order(n)``) in NumPy's order: over the trailing run of reduced
    axes (size-1 axes aside), each row's pairwise sum; over the other reduced axes, the row
    sums (or the values, when the last axis is kept: ``sum(x, axis=0)``) added one after the
    other in index order, as NumPy's loop adds rows into its result. ``row_call(e, v, p, m,
    d)`` and ``column_call(e, v, r, k, d)`` are the native kernels' forms (``kernels/
    pairwise.py``), or None: then irregular rows take the gather form and runs of more than
    ``SEQUENTIAL_ROWS`` rows XLA's reduction (whose order is its own)."""
    src = n.inputs[0]
    d = n.dtype
    sq = [(i, s) for i, s in enumerate(src.shape) if s != 1]
    red = [j for j, (i, _) in enumerate(sq) if i in n.attrs.axes]
    acc = WIDE.get(d.name, d)
    v = x
    if acc is not d:
        v = e.op("stablehlo.convert", [v], tensor_type(src.shape, acc))
    elif d.kind == "f" and carries_product(src):
        # a second use of the products (var's squares), or LLVM contracts each into the
        # addition that takes it: a fused multiply-add, rounded once where NumPy rounds twice
        v = unfoldable(e, v, src.shape, d)
    dims = tuple(s for _, s in sq)
    t0 = len(dims)
    while t0 and t0 - 1 in red:
        t0 -= 1
    lead = dims[:t0]
    p, m = math.prod(lead), math.prod(dims[t0:])
    buffered = False  # the last step a kernel's call: its result is a buffer, not adds
    if t0 < len(dims):
        v = e.op("stablehlo.reshape", [v], tensor_type((p, m), acc))
        buffered = row_call is not None and not regular_rows(m, 4 if acc.kind == "c" else 8)
        v = row_call(e, v, p, m, acc) if buffered else pairwise_rows(e, v, p, m, acc)
    v = e.op("stablehlo.reshape", [v], tensor_type(lead, acc))
    rest = [j for j in red if j < t0]
    kept = [j for j in range(t0) if j not in rest]
    out = tuple(lead[j] for j in kept)
    if rest:  # the other reduced axes: (r, K), the rows added one after the other
        r, k = math.prod(lead[j] for j in rest), math.prod(out)
        if rest + kept != list(range(t0)):
            v = e.op("stablehlo.transpose", [v],
                     tensor_type(tuple(lead[j] for j in rest + kept), acc),
                     f"permutation = {i64s(rest + kept)}")
        v = e.op("stablehlo.reshape", [v], tensor_type((r, k), acc))
        buffered = False
        if r <= SEQUENTIAL_ROWS:
            v = _Rows(e, acc).in_order(v, (r, k), 0, r)
        elif column_call is not None:
            v = column_call(e, v, r, k, acc)
            buffered = True
        else:
            v = e.op("stablehlo.reduce", [v, e.const(0, acc)], tensor_type((k,), acc),
                     "dimensions = array<i64: 0>", region=e.scalar_body("stablehlo.add", acc))
        v = e.op("stablehlo.reshape", [v], tensor_type(out, acc))
    v = plus_zero(e, v, out, acc)
    # the sums computed once: written out of reshapes, slices and adds, they are elementwise
    # code to XLA, which fused them into consumers that broadcast them and so recomputed each
    # sum per element read (pairwise distances' row norms: 2x slower). A kernel's result is a
    # buffer already: its select fuses into the consumers instead of being a kernel of its
    # own behind the barrier (LDA's graph at 100,000 x 64: 25 kernels to compile, then 24)
    if not buffered:
        v = e.op("stablehlo.optimization_barrier", [v], tensor_type(out, acc))
    if acc is not d:
        v = e.op("stablehlo.convert", [v], tensor_type(out, d))
    return e.op("stablehlo.reshape", [v], tensor_type(n.shape, d))


# ---------------------------------------------------------------- NumPy's order for float sums
#
# NumPy adds the values of a row (a reduction over the trailing, contiguous axes) in the order
# of its pairwise summation (``pairwise_sum`` in numpy/_core/src/umath/loops_utils.h.src):
# fewer than 8 values are added one after the other; up to 128, eight lanes each accumulate
# every eighth value, the lanes are added as ((0+1)+(2+3))+((4+5)+(6+7)) and the values past
# the last multiple of 8 are added one by one; above 128 the row is cut after
# ``n/2 - (n/2) % 8`` values and the two sums added. Complex rows work the same on (re, im)
# pairs: four complex lanes, (0+1)+(2+3), rows of up to 64. The result is then added to the
# identity 0.0. XLA:CPU associates a row's additions by shape (its vectorized loops, its
# windowed tree, YNNPACK), so the sum of a row depended on how many rows were beside it and
# on the graph around it; written out in NumPy's order here, it is NumPy's value, bit for bit,
# in any graph. XLA does not reassociate floating-point additions, so the order written is
# the order run.
#
# The cut points depend on the row length only. In blocks of W lanes (k blocks and t values
# left over, which ride with the last block), the recursion ends at depth D or D + 1: the
# nodes at depth D either are leaves or split into two leaves (``_tree`` asserts it; the
# tests cover regular and irregular lengths). Regular rows (every node one leaf of the same
# length) are reshaped to (rows, nodes, blocks, W); others take one slice per leaf, -0.0 past
# its length (x + -0.0 == x for every x, -0.0 included), or the native kernel. Then the
# blocks of each leaf are added lane by lane, the lanes as NumPy adds them, the leftover
# values to the last leaf, the two leaves of each node, and the 2**D node sums pairwise.


@functools.lru_cache(maxsize=1024)
def sum_plan(shape: tuple, axes: tuple) -> tuple[int, int]:
    """How ``numpy_order_sum`` adds a sum over ``axes`` of ``shape``: (the length of the rows
    summed pairwise, 0 when the last axis is kept; how many row sums or values are then
    added one after the other, 1 when none). Size-1 axes count for nothing. Memoized: the
    host tier asks it for every reduction it runs (4 us a call, as much as the reduction of
    a few hundred values)."""
    sq = [(i, s) for i, s in enumerate(shape) if s != 1]
    red = [j for j, (i, _) in enumerate(sq) if i in axes]
    t0 = len(sq)
    while t0 and t0 - 1 in red:
        t0 -= 1
    m = math.prod(s for _, s in sq[t0:]) if t0 < len(sq) else 0
    return m, math.prod(sq[j][1] for j in red if j < t0)


@functools.lru_cache(maxsize=256)
def regular_rows(m: int, lanes: int) -> bool:
    """Whether NumPy's recursion over a row of ``m`` values (``lanes``: 8 real, 4 complex)
    writes out as reshapes alone: every node at its last depth one leaf of equal length."""
    k, t = divmod(m, lanes)
    if k == 0:
        return True
    return len(_leaf_kinds(k, t, lanes)) == 1


@functools.lru_cache(maxsize=1024)
def _leaf_kinds(c: int, tail: int, w: int) -> frozenset:
    """The (depth, blocks) of the leaves of ``_tree``'s recursion over ``c`` blocks of ``w``
    lanes and ``tail`` leftover values: one kind for a regular row. Subproblems repeat (a
    depth has at most a few distinct sizes), so this takes a few dozen steps where listing
    the leaves of a row of millions of values took 160 ms."""
    halves = _halves(c, tail, w)
    if halves is None:
        return frozenset(((0, c),))
    (h0, t0), (h1, t1) = halves
    return frozenset((d + 1, b) for d, b in _leaf_kinds(h0, t0, w) | _leaf_kinds(h1, t1, w))


def _halves(c: int, tail: int, w: int) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """NumPy's cut of ``c`` blocks of ``w`` lanes and ``tail`` leftover values: None for a leaf
    (at most 16 blocks' worth: 128 real values), else the two halves' (blocks, leftovers), the
    leftovers riding with the second."""
    if w * c + tail <= 16 * w:
        return None
    h = c // 2
    return (h, 0), (c - h, tail)


@functools.lru_cache(maxsize=256)
def _tree(k: int, t: int, w: int) -> tuple[int, list[tuple[int, int, int]], int]:
    """NumPy's recursion over ``k`` blocks of ``w`` lanes (and ``t`` leftover values):
    the depth ``D`` and the 2**D nodes at that depth as (first block, part 0's blocks,
    part 1's blocks), and which part of the last node the leftover values go to."""
    leaves: list[tuple[int, int, int]] = []

    def rec(s: int, c: int, tail: int, depth: int) -> None:
        halves = _halves(c, tail, w)
        if halves is None:
            leaves.append((s, c, depth))
            return
        (h0, t0), (h1, t1) = halves
        rec(s, h0, t0, depth + 1)
        rec(s + h0, h1, t1, depth + 1)

    rec(0, k, t, 0)
    depth = min(d for _, _, d in leaves)
    nodes, i, last_part = [], 0, 0
    while i < len(leaves):
        s, c, d = leaves[i]
        if d == depth:
            nodes.append((s, c, 0))
            last_part, i = 0, i + 1
        else:  # two leaves one level deeper (asserted: NumPy's halving gives no deeper leaf)
            s2, c2, d2 = leaves[i + 1]
            assert d == d2 == depth + 1 and s2 == s + c, (k, t, w)
            nodes.append((s, c, c2))
            last_part, i = 1, i + 2
    assert len(nodes) == 1 << depth, (k, t, w)
    return depth, nodes, last_part


class _Rows:
    """Emits the ops of one sum lowering on values of dtype ``d``."""

    def __init__(self, e: Emitter, d: DType) -> None:
        self.e, self.d = e, d

    def reshape(self, v: str, to: tuple) -> str:
        return self.e.op("stablehlo.reshape", [v], tensor_type(to, self.d))

    def slice(self, v: str, start: tuple, limit: tuple) -> str:
        shape = tuple(b - a for a, b in zip(start, limit))
        return self.e.op("stablehlo.slice", [v], tensor_type(shape, self.d),
                         f"start_indices = {i64s(start)}, limit_indices = {i64s(limit)}, "
                         f"strides = {i64s([1] * len(start))}")

    def add(self, a: str, b: str, shape: tuple) -> str:
        return self.e.op("stablehlo.add", [a, b], tensor_type(shape, self.d))

    def column(self, v: str, shape: tuple, axis: int, i: int) -> str:
        """``v[..., i, ...]`` along ``axis``, that axis dropped."""
        start = tuple(i if a == axis else 0 for a in range(len(shape)))
        limit = tuple(i + 1 if a == axis else s for a, s in enumerate(shape))
        out = tuple(s for a, s in enumerate(shape) if a != axis)
        return self.reshape(self.slice(v, start, limit), out)

    def halves(self, v: str, shape: tuple) -> tuple[str, tuple]:
        """Adds neighbours along the last axis (even length): (..., 2j) + (..., 2j + 1)."""
        pairs = (*shape[:-1], shape[-1] // 2, 2)
        r = self.reshape(v, pairs)
        out = pairs[:-1]
        return self.add(self.column(r, pairs, len(pairs) - 1, 0),
                        self.column(r, pairs, len(pairs) - 1, 1), out), out

    def in_order(self, v: str, shape: tuple, axis: int, count: int) -> str:
        """The first ``count`` slices of ``v`` along ``axis`` added one after the other."""
        out = tuple(s for a, s in enumerate(shape) if a != axis)
        acc = self.column(v, shape, axis, 0)
        for i in range(1, count):
            acc = self.add(acc, self.column(v, shape, axis, i), out)
        return acc


def _gather_parts(e: Emitter, body: str, k: int, cmax: int, parts: list, p: int, w: int,
                  d: DType) -> str:
    """(P, len(parts), cmax, W): the ``cmax`` blocks from each part's first block (one slice
    per part), -0.0 past the part's length. ``body``: the (P, k * W) values."""
    n = len(parts)
    blocks = e.op("stablehlo.reshape", [body], tensor_type((p, k, w), d))
    neg0 = e.const(-0.0, d)
    blocks = e.op("stablehlo.pad", [blocks, neg0], tensor_type((p, k + cmax, w), d),
                  f"edge_padding_low = {i64s([0, 0, 0])}, "
                  f"edge_padding_high = {i64s([0, cmax, 0])}, "
                  f"interior_padding = {i64s([0, 0, 0])}")
    ity = tensor_type((n, 1), dt.int32)
    starts = e.op("stablehlo.constant", [], ity,
                  f"value = dense<{_int_list([s for s, _ in parts], (n, 1))}> : {ity}")
    fields = "offset_dims = [0, 2, 3], start_index_map = [1], index_vector_dim = 1"
    gshape = (p, n, cmax, w)
    g = e.op("stablehlo.gather", [blocks, starts], tensor_type(gshape, d),
             f"dimension_numbers = #stablehlo.gather<{fields}>, indices_are_sorted = true, "
             f"slice_sizes = {i64s([p, cmax, w])}")
    lty = tensor_type((n,), dt.int32)
    lens = e.op("stablehlo.constant", [], lty,
                f"value = dense<{_int_list([c for _, c in parts], (n,))}> : {lty}")
    gi = tensor_type(gshape, dt.int32)
    lens = e.op("stablehlo.broadcast_in_dim", [lens], gi, "broadcast_dimensions = array<i64: 1>")
    r = e.op("stablehlo.iota", [], gi, "iota_dimension = 2 : i64")
    inside = compare(e, "LT", r, lens, gshape, dt.int32)
    pad = e.op("stablehlo.broadcast_in_dim", [neg0], tensor_type(gshape, d),
               "broadcast_dimensions = array<i64>")
    return select(e, inside, g, pad, gshape, d)


def _int_list(vals: list, shape: tuple) -> str:
    """A nested MLIR literal of ``vals`` in ``shape``."""
    def nest(off: int, dims: tuple) -> tuple[str, int]:
        if not dims:
            return str(vals[off]), off + 1
        parts = []
        for _ in range(dims[0]):
            s, off = nest(off, dims[1:])
            parts.append(s)
        return "[" + ", ".join(parts) + "]", off
    return nest(0, shape)[0]


def pairwise_rows(e: Emitter, x: str, p: int, m: int, d: DType) -> str:
    """The sums of the rows of ``x`` (shape (P, m), ``m`` > 0, float or complex ``d``) in
    NumPy's pairwise order, before the identity is added: shape (P,)."""
    rows = _Rows(e, d)
    w = 4 if d.kind == "c" else 8
    k, t = divmod(m, w)
    if k == 0:  # fewer than W values: one after the other
        return rows.in_order(x, (p, m), 1, m)
    depth, nodes, last_part = _tree(k, t, w)
    n = len(nodes)
    body = x if t == 0 else rows.slice(x, (0, 0), (p, k * w))
    if regular_rows(m, w):  # every node one leaf of c blocks: a reshape
        cmax, parts = nodes[0][1], 1
        g = rows.reshape(body, (p, n, cmax, w))
        gshape = (p, n, cmax, w)
    else:  # nodes of unequal lengths, or split: one slice per part
        parts = 2 if any(c1 for _, _, c1 in nodes) else 1
        spans = [(s, c0) for s, c0, _ in nodes] if parts == 1 else \
            [sp for s, c0, c1 in nodes for sp in ((s, c0), (s + c0, c1))]
        cmax = max(c for _, c in spans)
        g = _gather_parts(e, body, k, cmax, spans, p, w, d)
        gshape = (p, len(spans), cmax, w)
    # the lanes: each accumulates its part's blocks in order
    lanes = rows.in_order(g, gshape, 2, cmax)
    # the lanes added pairwise: ((0+1)+(2+3))+((4+5)+(6+7))
    vshape: tuple[int, ...]
    v, vshape = lanes, (p, gshape[1], w)
    while vshape[-1] > 1:
        v, vshape = rows.halves(v, vshape)
    v = rows.reshape(v, vshape[:-1])  # (P, parts * n)
    if t:  # the leftover values go to the last leaf, one by one
        pos = (n - 1) * parts + (last_part if parts == 2 else 0)
        leaf = rows.column(v, (p, n * parts), 1, pos)
        for i in range(t):
            leaf = rows.add(leaf, rows.column(x, (p, m), 1, k * w + i), (p,))
        pieces = [rows.reshape(leaf, (p, 1))]
        if pos:
            pieces.insert(0, rows.slice(v, (0, 0), (p, pos)))
        if pos + 1 < n * parts:
            pieces.append(rows.slice(v, (0, pos + 1), (p, n * parts)))
        v = pieces[0] if len(pieces) == 1 else \
            e.op("stablehlo.concatenate", pieces, tensor_type((p, n * parts), d),
                 "dimension = 1 : i64")
    vshape = (p, n * parts)
    if parts == 2:  # a node's two leaves (an empty part is -0.0)
        v, vshape = rows.halves(v, vshape)
    while vshape[-1] > 1:  # the nodes, pairwise, as the recursion unwinds
        v, vshape = rows.halves(v, vshape)
    return rows.reshape(v, (p,))
