"""Shape-changing, reduction and structural ops, and shared helpers.

Each op is one ``OpDef`` record: its name, its attributes' record type (a ``NamedTuple``:
``n.attrs.axes``), its shape/dtype rule (``infer``, which computes the result from the inputs
and attributes and raises at record time for anything it cannot take) and its lowering
(``lower``, which writes StableHLO). Elementwise ops live in ``elementwise`` in one table built
from the same helpers. Namespace functions never write StableHLO nor compute a rule an op owns:
they normalize their arguments, then ``record`` one of these ops.
"""

from __future__ import annotations

import math
import weakref
from typing import Any, NamedTuple

from .. import dtypes as dt
from .. import graph as _graph
from ..dtypes import DType
from ..graph import OpDef
from ..lower import Emitter, tensor_type

__all__ = ["OPS", "broadcast_shapes", "bcast", "check_shape", "convert", "Convert", "Reshape",
           "Broadcast", "Transpose", "Slice", "Reverse", "Concat", "Pad", "Iota", "DotGeneral",
           "Get", "Bitcast"]

OPS: dict[str, OpDef] = {}


HEAVY = 16  # auto-flush weight of matmuls (see OpDef.weight)
DECOMP = 8  # auto-flush weight of decompositions, solves and FFTs (custom calls)


def define(name: str, infer: Any, lower: Any, nout: int = 1, weight: int = 1,
           fuses: bool = False, attrs: Any = None, results: Any = None) -> OpDef:
    """Define op ``name`` (see ``graph.OpDef``) and enter it in ``OPS``."""
    op = OpDef(name, infer, lower, nout, weight, fuses, attrs, results)
    assert name not in OPS, name
    OPS[name] = op
    return op


# ---------------------------------------------------------------- helpers used by lowerings

def broadcast_shapes(*shapes: tuple) -> tuple:
    """NumPy broadcasting; ValueError naming the shapes when they do not broadcast."""
    if len(shapes) == 2:
        a, b = shapes
        if a == b or not b:
            return a
        if not a:
            return b
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, d in enumerate(s, ndim - len(s)):
            if d != 1:
                if out[i] != 1 and out[i] != d:
                    raise ValueError("shapes " + ", ".join(str(tuple(x)) for x in shapes)
                                     + " cannot be broadcast together")
                out[i] = d
    return tuple(out)


def bcast(e: Emitter, v: str, shape: tuple, to: tuple, dtype: DType) -> str:
    """Broadcast ``v`` (of ``shape``) to ``to`` with NumPy's right-aligned rule."""
    if tuple(shape) == tuple(to):
        return v
    off = len(to) - len(shape)
    dims = ", ".join(str(off + i) for i in range(len(shape)))
    return e.op("stablehlo.broadcast_in_dim", [v], tensor_type(to, dtype),
                f"broadcast_dimensions = array<i64{': ' + dims if dims else ''}>")


def convert(e: Emitter, v: str, shape: tuple, src: DType, dst: DType) -> str:
    if src is dst:
        return v
    if src.kind == "c" and dst.kind != "c":
        v = e.op("stablehlo.real", [v], tensor_type(shape, dt.REAL_OF[src]))
        src = dt.REAL_OF[src]
        if src is dst:
            return v
    if dst.kind == "b":
        zero = bcast(e, e.const(0, src), (), shape, src)
        return compare(e, "NE", v, zero, shape, src)
    return e.op("stablehlo.convert", [v], tensor_type(shape, dst))


def compare_type(d: DType) -> str:
    return {"b": "UNSIGNED", "u": "UNSIGNED", "i": "SIGNED"}.get(d.kind, "FLOAT")


def compare(e: Emitter, direction: str, a: str, b: str, shape: tuple, d: DType) -> str:
    return e.op("stablehlo.compare", [a, b], tensor_type(shape, dt.bool),
                f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
                f"compare_type = #stablehlo<comparison_type {compare_type(d)}>")


def select(e: Emitter, p: str, a: str, b: str, shape: tuple, d: DType) -> str:
    return e.op("stablehlo.select", [p, a, b], tensor_type(shape, d))


def plus_zero(e: Emitter, s: str, shape: tuple, d: DType) -> str:
    """``0.0 + s`` (NumPy adds a sum to its identity: -0.0 becomes 0.0), written as a
    select, which XLA's simplifier does not drop as it drops ``s + 0``."""
    if d.kind == "c":
        r = dt.REAL_OF[d]
        re_ = plus_zero(e, e.op("stablehlo.real", [s], tensor_type(shape, r)), shape, r)
        im = plus_zero(e, e.op("stablehlo.imag", [s], tensor_type(shape, r)), shape, r)
        return e.op("stablehlo.complex", [re_, im], tensor_type(shape, d))
    zero = e.op("stablehlo.broadcast_in_dim", [e.const(0, d)], tensor_type(shape, d),
                "broadcast_dimensions = array<i64>")
    return select(e, compare(e, "EQ", s, zero, shape, d), zero, s, shape, d)


def i64s(xs: Any) -> str:
    xs = list(xs)
    return f"array<i64{': ' + ', '.join(str(int(x)) for x in xs) if xs else ''}>"


# ---------------------------------------------------------------- structural ops

class Convert(NamedTuple):
    dtype: DType


def _infer_convert(inputs: tuple, attrs: Convert) -> tuple:
    if not isinstance(attrs.dtype, DType):
        raise TypeError(f"convert: {attrs.dtype!r} is not a dtype")
    return inputs[0].shape, attrs.dtype


define("convert", _infer_convert,
       lambda e, n, a: convert(e, a[0], n.shape, n.inputs[0].dtype, n.dtype), fuses=True,
       attrs=Convert)


MAX_NDIM = 64  # NumPy's limit
_MAX_BYTES = 2**63 - 1


def check_shape(shape: tuple, dtype: DType, fname: str) -> None:
    """ValueError, as NumPy, for a shape no array can have: a negative dimension, more than
    64 dimensions, more bytes than an int64 counts."""
    if len(shape) > MAX_NDIM:
        raise ValueError(f"{fname}(): {len(shape)} dimensions requested; at most {MAX_NDIM} "
                         f"are supported")
    size = 1
    for d in shape:
        if d < 0:
            raise ValueError(f"{fname}(): negative dimensions are not allowed: {tuple(shape)}")
        size *= d
    if size * dtype.itemsize > _MAX_BYTES:
        raise ValueError(f"{fname}(): array is too big: shape {tuple(shape)} of {dtype.name} "
                         f"needs {size * dtype.itemsize} bytes")


def _axes_in(axes: tuple, ndim: int, what: str) -> None:
    if any(not 0 <= a < ndim for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"{what}: axes {tuple(axes)} are not distinct axes of a "
                         f"{ndim}-dimensional array")


class Reshape(NamedTuple):
    shape: tuple


def _infer_reshape(inputs: tuple, attrs: Reshape) -> tuple:
    x, shape = inputs[0], attrs.shape
    check_shape(shape, x.dtype, "reshape")
    if math.prod(shape) != math.prod(x.shape):
        raise ValueError(f"cannot reshape array of shape {x.shape} into shape {shape}")
    return shape, x.dtype


define("reshape", _infer_reshape,
       lambda e, n, a: e.op("stablehlo.reshape", a, tensor_type(n.shape, n.dtype)), fuses=True,
       attrs=Reshape)


class Broadcast(NamedTuple):
    shape: tuple


def _infer_broadcast(inputs: tuple, attrs: Broadcast) -> tuple:
    x, shape = inputs[0], attrs.shape
    check_shape(shape, x.dtype, "broadcast")
    s = x.shape
    lead = len(shape) - len(s)
    if lead < 0 or any(d != 1 and d != t for d, t in zip(s, shape[lead:])):
        raise ValueError(f"cannot broadcast an array of shape {s} to shape {shape}")
    return shape, x.dtype


define("broadcast", _infer_broadcast,
       lambda e, n, a: bcast(e, a[0], n.inputs[0].shape, n.shape, n.dtype), fuses=True,
       attrs=Broadcast)


class Transpose(NamedTuple):
    perm: tuple


def _infer_transpose(inputs: tuple, attrs: Transpose) -> tuple:
    s, perm = inputs[0].shape, attrs.perm
    if sorted(perm) != list(range(len(s))):
        raise ValueError(f"permute_dims: {tuple(perm)} is not a permutation of the axes of "
                         f"an array of shape {s}")
    return tuple(s[p] for p in perm), inputs[0].dtype


define("transpose", _infer_transpose,
       lambda e, n, a: e.op("stablehlo.transpose", a, tensor_type(n.shape, n.dtype),
                            f"permutation = {i64s(n.attrs.perm)}"), fuses=True, attrs=Transpose)


class Slice(NamedTuple):
    start: tuple
    limit: tuple
    step: tuple


def _infer_slice(inputs: tuple, attrs: Slice) -> tuple:
    s = inputs[0].shape
    start, limit, step = attrs
    if not len(start) == len(limit) == len(step) == len(s) or any(
            not 0 <= lo <= hi <= d or st < 1 for lo, hi, st, d in zip(start, limit, step, s)):
        raise ValueError(f"slice: start {start}, limit {limit} and step {step} do not describe "
                         f"a slice of shape {s}")
    return (tuple(max(0, -(-(hi - lo) // st)) for lo, hi, st in zip(start, limit, step)),
            inputs[0].dtype)


define("slice", _infer_slice,
       lambda e, n, a: e.op("stablehlo.slice", a, tensor_type(n.shape, n.dtype),
                            f"start_indices = {i64s(n.attrs.start)}, "
                            f"limit_indices = {i64s(n.attrs.limit)}, "
                            f"strides = {i64s(n.attrs.step)}"),
       fuses=True, attrs=Slice)


class Reverse(NamedTuple):
    axes: tuple


def _infer_reverse(inputs: tuple, attrs: Reverse) -> tuple:
    _axes_in(attrs.axes, len(inputs[0].shape), "flip")
    return inputs[0].shape, inputs[0].dtype


define("reverse", _infer_reverse,
       lambda e, n, a: e.op("stablehlo.reverse", a, tensor_type(n.shape, n.dtype),
                            f"dimensions = {i64s(n.attrs.axes)}"), fuses=True, attrs=Reverse)


class Concat(NamedTuple):
    axis: int


def _infer_concat(inputs: tuple, attrs: Concat) -> tuple:
    """The inputs' promoted dtype (``concat``); equal shapes off ``axis``."""
    axis, first = attrs.axis, inputs[0].shape
    d = inputs[0].dtype
    for x in inputs[1:]:
        if len(x.shape) != len(first) or any(
                a != b for i, (a, b) in enumerate(zip(x.shape, first)) if i != axis):
            raise ValueError(f"concat: shapes {[x.shape for x in inputs]} differ off axis "
                             f"{axis}")
        d = dt.promote(d, x.dtype)
    if not 0 <= axis < len(first):
        raise ValueError(f"concat: axis {axis} is not an axis of shape {first}")
    shape = list(first)
    shape[axis] = sum(x.shape[axis] for x in inputs)
    return tuple(shape), d


def _lower_concat(e: Emitter, n: Any, a: list) -> str:
    vals = [convert(e, v, x.shape, x.dtype, n.dtype) for v, x in zip(a, n.inputs)]
    return e.op("stablehlo.concatenate", vals, tensor_type(n.shape, n.dtype),
                f"dimension = {n.attrs.axis} : i64")


define("concat", _infer_concat, _lower_concat, fuses=True, attrs=Concat)


class Pad(NamedTuple):
    """Zeros (False for bool) before, after and between the elements of each axis."""
    low: tuple
    high: tuple
    interior: tuple


def _infer_pad(inputs: tuple, attrs: Pad) -> tuple:
    lo, hi, interior = attrs
    s = inputs[0].shape
    if not len(lo) == len(hi) == len(interior) == len(s) or min(interior, default=0) < 0:
        raise ValueError(f"pad: low {lo}, high {hi} and interior {interior} do not describe "
                         f"a padding of shape {s}")
    return (tuple(lo[i] + hi[i] + s[i] + max(0, s[i] - 1) * interior[i] for i in range(len(s))),
            inputs[0].dtype)


def _lower_pad(e: Emitter, n: Any, a: list) -> str:
    zero = e.const(0, n.dtype)
    return e.op("stablehlo.pad", [a[0], zero], tensor_type(n.shape, n.dtype),
                f"edge_padding_low = {i64s(n.attrs.low)}, "
                f"edge_padding_high = {i64s(n.attrs.high)}, "
                f"interior_padding = {i64s(n.attrs.interior)}")


define("pad", _infer_pad, _lower_pad, fuses=True, attrs=Pad)


def _infer_select(inputs: tuple, attrs: tuple) -> tuple:
    """``where(c, x, y)``: broadcast shapes, the promoted dtype of ``x`` and ``y``."""
    c, x, y = inputs
    if c.dtype is not dt.bool:
        raise TypeError(f"where(): condition must be a bool array, got {c.dtype.name}")
    return broadcast_shapes(c.shape, x.shape, y.shape), dt.promote(x.dtype, y.dtype)


def _lower_select(e: Emitter, n: Any, a: list) -> str:
    vals = []
    for v, x, d in zip(a, n.inputs, (dt.bool, n.dtype, n.dtype)):
        vals.append(bcast(e, convert(e, v, x.shape, x.dtype, d), x.shape, n.shape, d))
    return select(e, vals[0], vals[1], vals[2], n.shape, n.dtype)


define("select", _infer_select, _lower_select, fuses=True)


class Iota(NamedTuple):
    shape: tuple
    dim: int
    dtype: DType


def _infer_iota(inputs: tuple, attrs: Iota) -> tuple:
    check_shape(attrs.shape, attrs.dtype, "iota")
    if not 0 <= attrs.dim < max(len(attrs.shape), 1):
        raise ValueError(f"iota: dimension {attrs.dim} is not an axis of shape {attrs.shape}")
    return attrs.shape, attrs.dtype


define("iota", _infer_iota,
       lambda e, n, a: e.op("stablehlo.iota", [], tensor_type(n.shape, n.dtype),
                            f"iota_dimension = {n.attrs.dim} : i64"), fuses=True, attrs=Iota)


class DotGeneral(NamedTuple):
    """``stablehlo.dot_general``'s dimension numbers; ``precision``: None (the default), "HIGH"
    or "HIGHEST" (``matmul_precision``). The result: batch axes, then the free axes of the
    left operand, then those of the right, in the operands' promoted dtype."""
    lhs_batch: tuple
    rhs_batch: tuple
    lhs_contract: tuple
    rhs_contract: tuple
    precision: str | None = None


def _infer_dot(inputs: tuple, attrs: DotGeneral) -> tuple:
    x, y = inputs
    lb, rb, lc, rc = attrs[:4]
    xs, ys = x.shape, y.shape
    if (len(lb) != len(rb) or len(lc) != len(rc)
            or any(xs[i] != ys[j] for i, j in zip(lb + lc, rb + rc))):
        raise ValueError(f"dot_general: shapes {xs} and {ys} do not match over batch axes "
                         f"{lb}/{rb} and contracted axes {lc}/{rc}")
    free_x = tuple(d for i, d in enumerate(xs) if i not in lb and i not in lc)
    free_y = tuple(d for i, d in enumerate(ys) if i not in rb and i not in rc)
    return tuple(xs[i] for i in lb) + free_x + free_y, dt.promote(x.dtype, y.dtype)


def _lower_dot(e: Emitter, n: Any, a: list) -> str:
    lb, rb, lc, rc, precision = n.attrs
    d = n.dtype
    x, y = n.inputs
    va = convert(e, a[0], x.shape, x.dtype, d)
    vb = convert(e, a[1], y.shape, y.dtype, d)
    dims = (f"#stablehlo.dot<lhs_batching_dimensions = [{', '.join(map(str, lb))}], "
            f"rhs_batching_dimensions = [{', '.join(map(str, rb))}], "
            f"lhs_contracting_dimensions = [{', '.join(map(str, lc))}], "
            f"rhs_contracting_dimensions = [{', '.join(map(str, rc))}]>")
    if precision is not None:
        p = f"#stablehlo<precision {precision}>"
        dims += f", precision_config = [{p}, {p}]"
    if d is dt.bool:  # logical matmul: int, then != 0
        i = dt.int32
        va, vb = convert(e, va, x.shape, d, i), convert(e, vb, y.shape, d, i)
        r = e.op("stablehlo.dot_general", [va, vb], tensor_type(n.shape, i),
                 f"dot_dimension_numbers = {dims}")
        return convert(e, r, n.shape, i, d)
    r = e.op("stablehlo.dot_general", [va, vb], tensor_type(n.shape, d),
             f"dot_dimension_numbers = {dims}")
    if d.kind in "fc" and math.prod(x.shape[i] for i in lc):
        # NumPy's matmul adds the products to 0.0, so products that are all -0.0 sum to 0.0
        # (``1 / (a @ b)`` shows it); XLA's dot gave -0.0 (one product a result: its
        # simplifier makes the dot a multiply; a vector times a matrix: a reduce)
        r = plus_zero(e, r, n.shape, d)
    return r


define("dot_general", _infer_dot, _lower_dot, weight=HEAVY, attrs=DotGeneral)
# matrix-vector products (matmul of a matrix and a vector): the same op under the same name,
# counted 1 towards the auto-flush depth, so an auto-flush lands on the ``X.T @ f(X @ w)``
# that takes ``X @ w`` into one pass (see rowpass) rather than between the two
MATVEC = OpDef("dot_general", _infer_dot, _lower_dot, weight=1, attrs=DotGeneral)


class Get(NamedTuple):
    result: int  # which result of the multi-result op


def _infer_get(inputs: tuple, attrs: Get) -> tuple:
    m = inputs[0]
    if m.op.results is None:
        raise TypeError(f"get: {m.op.name} has a single result")
    return m.op.results(m.inputs, m.attrs)[attrs.result]


def _lower_get(e: Emitter, n: Any, a: list) -> str:
    m = a[0]  # the multi-result op's name, or the list of its results' names (``lapack``)
    return m[n.attrs.result] if isinstance(m, list) else f"{m}#{n.attrs.result}"


# one result of a multi-result op (its shape and dtype: the op's ``results``). ``get`` results
# are written back whenever they are computed (other pending arrays may still use them: the
# info flag behind the NaN guards of U, S and Vt); ``get_internal`` results are ordinary
# intermediates, for ops whose results all end up in one returned array (det, solve, inv,
# eigvalsh, ...): writing those back would only copy them out
GET = define("get", _infer_get, _lower_get, attrs=Get)
GET.keep = True
define("get_internal", _infer_get, _lower_get, attrs=Get)


def record_multi(op: OpDef, inputs: tuple, attrs: tuple, keep: bool = True) -> list:
    """Record a multi-result op (``op.nout > 1``: its ``results`` give each result's shape and
    dtype) and one ``get`` node per result; returns the ``get`` nodes (what Arrays should
    hold). ``keep``: results are written back whenever computed (False: only where an Array
    holds them, for callers that return one array built from all of them)."""
    get = OPS["get" if keep else "get_internal"]
    m = _graph.record(op, inputs, attrs)
    gets = [_graph.record(get, (m,), Get(i)) for i in range(len(op.results(inputs, attrs)))]
    # the op remembers its results weakly: a graph computing one of them also writes back the
    # live siblings (U, s, Vt = svd(x); float(s[0]) must not leave U and Vt to a second svd)
    m.results = tuple([weakref.ref(g) for g in gets])
    return gets


# ---------------------------------------------------------------- bit reinterpretation

class Bitcast(NamedTuple):
    dtype: DType


def _infer_bitcast(inputs: tuple, attrs: Bitcast) -> tuple:
    """NumPy's ``x.view(dtype)``: the same bytes read as ``dtype``; with another item size the
    last axis is rescaled (it must hold a whole number of the new items)."""
    (x,), (dtype,) = inputs, attrs
    if x.dtype.kind == "c" or dtype.kind == "c":
        raise TypeError("bitcast of complex values is lowered through their parts (x.view)")
    s, d = x.dtype.itemsize, dtype.itemsize
    if s == d:
        return x.shape, dtype
    if not x.shape:
        raise ValueError(f"Changing the dtype of a 0d array is only supported if the itemsize "
                         f"is unchanged ({x.dtype.name} to {dtype.name})")
    if (x.shape[-1] * s) % d:
        raise ValueError(f"When changing to a larger dtype, its size must be a divisor of the "
                         f"total size in bytes of the last axis of the array ({x.dtype.name} "
                         f"to {dtype.name}, last axis of {x.shape[-1]})")
    return x.shape[:-1] + (x.shape[-1] * s // d,), dtype


def _lower_bitcast(e: Emitter, n: Any, a: list) -> str:
    x, dst = n.inputs[0], n.dtype
    v, src, shape = a[0], x.dtype, x.shape
    if src == dt.bool:
        v, src = convert(e, v, shape, src, dt.uint8), dt.uint8
    raw = dt.uint8 if dst == dt.bool else dst
    s, d = src.itemsize, raw.itemsize
    if s == d:
        out = e.op("stablehlo.bitcast_convert", [v], tensor_type(shape, raw))
    elif s > d:
        wide = shape + (s // d,)
        out = e.op("stablehlo.bitcast_convert", [v], tensor_type(wide, raw))
        out = e.op("stablehlo.reshape", [out], tensor_type(n.shape, raw))
    else:
        split = shape[:-1] + (shape[-1] * s // d, d // s)
        v = e.op("stablehlo.reshape", [v], tensor_type(split, src))
        out = e.op("stablehlo.bitcast_convert", [v], tensor_type(n.shape, raw))
    if dst == dt.bool:
        out = convert(e, out, n.shape, dt.uint8, dt.bool)
    return out


define("bitcast", _infer_bitcast, _lower_bitcast, fuses=True, attrs=Bitcast)
