"""Indexing ops (index normalization, gather, scatter).

These are the lowered forms of integer-array and boolean-mask indexing (``advanced_indexing``):

- ``index_norm``: an integer index array of any integer dtype -> int64 in ``[0, n)``:
  negative values wrap once (``i + n``), then values still out of bounds are clamped to
  ``[0, n - 1]``. attrs: ``IndexNorm(size)`` (the axis size: a shape, never data).
- ``gather``: ``stablehlo.gather`` taking one element per advanced axis (slice size 1,
  collapsed) and whole extents of every other axis. inputs: ``(operand, indices)`` where
  ``indices`` is int64 of shape ``batch + (k,)`` (already normalized). attrs:
  ``Gather(offset_dims, collapsed, slice_sizes)``.
- ``dynamic_slice`` / ``dynamic_update_slice``: basic indexing with runtime start positions
  (int64 scalar inputs, one per axis listed in attrs ``dyn``; other axes start at 0), so
  ``x[i]``, ``x[i:i + 3]`` or ``x[i] = v`` share one executable for every ``i``.
  attrs: ``DynamicSlice(sizes, dyn)`` and ``DynamicUpdateSlice(dyn)``.
- ``update_slices``: the writes of a loop such as ``x[i, i] = v[i]`` or ``x[i] = 0.5`` as one
  ``stablehlo.scatter`` (``api/indexing.py`` combines them as they are recorded, so the
  pending graph grows by no level per write). Windows of one shape at disjoint positions, so
  the order of the writes does not matter. inputs: ``(operand, values, at)`` (attrs ``kind``
  "fill": ``values`` holds one element per window, broadcast over it) or ``(operand, source,
  frm, at)`` ("copy": each window's values read from ``source`` as a dynamic_slice of
  ``rsizes`` at the row of ``frm``, int64 ``(N, len(rdyn))``); ``at`` is int64
  ``(N, len(dyn))``, the windows' start positions. attrs: ``UpdateSlices(dyn, kind, window,
  rdyn, rsizes)``.
- ``scatter``: ``stablehlo.scatter`` whose update computation replaces the old value (for
  duplicate indices XLA picks one of the updates; on CPU the last one wins). inputs:
  ``(operand, indices, updates)``; attrs: ``Scatter(window, inserted)`` (update window and
  inserted window dimensions).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .. import dtypes as dt
from ..lower import Emitter, tensor_type
from .structural import bcast, compare, convert, define, select

__all__ = ["IndexNorm", "IndexCheck", "Gather", "DynamicSlice", "DynamicUpdateSlice",
           "UpdateSlices", "Scatter"]


def _ints(xs: Any) -> str:
    return "[" + ", ".join(str(int(x)) for x in xs) + "]"


def _i64s(xs: Any) -> str:
    xs = list(xs)
    return f"array<i64{': ' + ', '.join(str(int(x)) for x in xs) if xs else ''}>"


# ---------------------------------------------------------------- index_norm

class IndexNorm(NamedTuple):
    size: int


def _infer_index_norm(inputs: tuple, attrs: IndexNorm) -> tuple:
    x = inputs[0]
    if x.dtype.kind not in "iu":
        raise IndexError(f"index arrays must have an integer dtype, got {x.dtype.name}")
    if attrs.size < 1:
        raise IndexError(f"cannot index an axis of size {attrs.size}")
    return x.shape, dt.int64


def _lower_index_norm(e: Emitter, n: Any, a: list) -> str:
    size = n.attrs.size
    x = n.inputs[0]
    s, src, i64 = x.shape, x.dtype, dt.int64
    v = a[0]
    if src.kind == "u":
        # clamp in the unsigned domain first: uint64 values above int64's range stay positive
        hi = min(size - 1, dt.iinfo(src).max)
        lo_c, hi_c = e.const(0, src), e.const(hi, src)
        v = e.op("stablehlo.clamp", [lo_c, v, hi_c], tensor_type(s, src))
        return convert(e, v, s, src, i64)
    v = convert(e, v, s, src, i64)
    zero = bcast(e, e.const(0, i64), (), s, i64)
    neg = compare(e, "LT", v, zero, s, i64)
    wrapped = e.op("stablehlo.add", [v, bcast(e, e.const(size, i64), (), s, i64)],
                   tensor_type(s, i64))
    v = select(e, neg, wrapped, v, s, i64)
    return e.op("stablehlo.clamp", [e.const(0, i64), v, e.const(size - 1, i64)],
                tensor_type(s, i64))


define("index_norm", _infer_index_norm, _lower_index_norm, attrs=IndexNorm)


# ---------------------------------------------------------------- index_check, checked

_NONE = -(2**63)  # index_check's value when every index is in bounds


class IndexCheck(NamedTuple):
    size: int
    axis: int  # (for the error message)


def _infer_index_check(inputs: tuple, attrs: IndexCheck) -> tuple:
    if inputs[0].dtype.kind not in "iu":
        raise IndexError(f"index arrays must have an integer dtype, got {inputs[0].dtype.name}")
    return (), dt.int64


def _lower_index_check(e: Emitter, n: Any, a: list) -> str:
    """The largest index out of ``[-size, size)`` (an int64; ``_NONE`` when there is none)."""
    size = n.attrs.size
    x = n.inputs[0]
    s, src, i64 = x.shape, x.dtype, dt.int64
    v = a[0]
    if src.kind == "u" and dt.iinfo(src).max > 2**63 - 1:  # uint64: saturate into int64
        v = e.op("stablehlo.clamp", [e.const(0, src), v, e.const(2**63 - 1, src)],
                 tensor_type(s, src))
    v = convert(e, v, s, src, i64)
    lo, hi = bcast(e, e.const(-size, i64), (), s, i64), bcast(e, e.const(size, i64), (), s, i64)
    bad = e.op("stablehlo.or", [compare(e, "LT", v, lo, s, i64), compare(e, "GE", v, hi, s, i64)],
               tensor_type(s, dt.bool))
    v = select(e, bad, v, bcast(e, e.const(_NONE, i64), (), s, i64), s, i64)
    return e.op("stablehlo.reduce", [v, e.const(_NONE, i64)], tensor_type((), i64),
                f"dimensions = {_i64s(range(len(s)))}",
                region=e.scalar_body("stablehlo.maximum", i64))


def index_error(bad: int, size: int, axis: int, where: Any = None) -> IndexError:
    """NumPy's IndexError for index ``bad`` on an axis of ``size``, naming the user line."""
    at = f" (index recorded at {where[0]}:{where[1]})" if where else ""
    return IndexError(f"index {bad} is out of bounds for axis {axis} with size {size}{at}")


def _check_index(n: Any, value: Any) -> None:
    bad = int(value)
    if bad != _NONE:
        raise index_error(bad, n.attrs.size, n.attrs.axis, n.where)


# computed beside the gather that uses the indices, in the same executable, and checked by
# the executor before anything is written back
INDEX_CHECK = define("index_check", _infer_index_check, _lower_index_check, attrs=IndexCheck)
INDEX_CHECK.keep = True
INDEX_CHECK.check = _check_index


def _infer_checked(inputs: tuple, attrs: tuple) -> tuple:
    if len(inputs) != 2 or inputs[1].op.check is None:
        raise TypeError("checked(x, check): check must be a run-time check (OpDef.check)")
    return inputs[0].shape, inputs[0].dtype


# ``checked(x, check)`` is ``x``, computed only with ``check`` (an op with a run-time check:
# ``index_check``, ``linalg_check``, ``pow_check``): the indices a gather or scatter reads
# carry their bounds check into its graph, a solve's result its LAPACK check
define("checked", _infer_checked, lambda e, n, a: a[0])


# ---------------------------------------------------------------- gather

class Gather(NamedTuple):
    offset_dims: tuple
    collapsed: tuple
    slice_sizes: tuple


def _infer_gather(inputs: tuple, attrs: Gather) -> tuple:
    """StableHLO's rule: the batch axes of ``indices`` (all but the last), with the sizes of
    the operand's uncollapsed slice axes placed at ``offset_dims``."""
    operand, indices = inputs
    offset_dims, collapsed, slice_sizes = attrs
    if indices.dtype is not dt.int64:
        raise TypeError(f"gather: indices must be int64, got {indices.dtype.name}")
    kept = [d for i, d in enumerate(slice_sizes) if i not in collapsed]
    if (len(slice_sizes) != len(operand.shape) or indices.shape[-1:] != (len(collapsed),)
            or len(kept) != len(offset_dims)
            or any(not 0 <= d <= n for d, n in zip(slice_sizes, operand.shape))):
        raise ValueError(f"gather: operand {operand.shape} and indices {indices.shape} do "
                         f"not match the collapsed axes {collapsed}")
    batch = iter(indices.shape[:-1])
    slices = iter(kept)
    rank = len(indices.shape) - 1 + len(offset_dims)
    return (tuple(next(slices) if i in offset_dims else next(batch) for i in range(rank)),
            operand.dtype)


def _lower_gather(e: Emitter, n: Any, a: list) -> str:
    offset_dims, collapsed, slice_sizes = n.attrs
    ivd = len(n.inputs[1].shape) - 1
    fields = []
    if offset_dims:
        fields.append(f"offset_dims = {_ints(offset_dims)}")
    if collapsed:
        fields.append(f"collapsed_slice_dims = {_ints(collapsed)}")
        fields.append(f"start_index_map = {_ints(collapsed)}")
    fields.append(f"index_vector_dim = {ivd}")
    return e.op("stablehlo.gather", a, tensor_type(n.shape, n.dtype),
                f"dimension_numbers = #stablehlo.gather<{', '.join(fields)}>, "
                f"indices_are_sorted = false, slice_sizes = {_i64s(slice_sizes)}")


define("gather", _infer_gather, _lower_gather, attrs=Gather)


# ---------------------------------------------------------------- dynamic slices

def _starts(e: Emitter, n: Any, names: list, ndim: int, dyn: tuple) -> list:
    """One int64 start per axis: the runtime scalar for axes in ``dyn``, else constant 0."""
    given = dict(zip(dyn, names))
    zero = None
    out = []
    for i in range(ndim):
        if i in given:
            out.append(given[i])
        else:
            zero = zero or e.const(0, dt.int64)
            out.append(zero)
    return out


def _check_starts(starts: tuple, dyn: tuple, where: str) -> None:
    ok = len(starts) == len(dyn)
    for s in starts:  # (a loop, not any(): x[i] records this)
        if s.shape != () or s.dtype is not dt.int64:
            ok = False
    if not ok:
        raise TypeError(f"{where}: start positions must be {len(dyn)} int64 scalars")


class DynamicSlice(NamedTuple):
    sizes: tuple
    dyn: tuple  # the axes with a run-time start (one int64 scalar input each)


def _infer_dynamic_slice(inputs: tuple, attrs: DynamicSlice) -> tuple:
    x, starts = inputs[0], inputs[1:]
    sizes, dyn = attrs
    _check_starts(starts, dyn, "dynamic_slice")
    shape = x.shape
    ok = len(sizes) == len(shape)
    for s, n in zip(sizes, shape):
        if not 0 <= s <= n:
            ok = False
    if not ok:
        raise ValueError(f"dynamic_slice: sizes {sizes} do not fit an array of shape {shape}")
    return tuple(sizes), x.dtype


def _lower_dynamic_slice(e: Emitter, n: Any, a: list) -> str:
    sizes, dyn = n.attrs
    starts = _starts(e, n, a[1:], len(sizes), dyn)
    return e.op("stablehlo.dynamic_slice", [a[0], *starts], tensor_type(n.shape, n.dtype),
                f"slice_sizes = {_i64s(sizes)}")


define("dynamic_slice", _infer_dynamic_slice, _lower_dynamic_slice, attrs=DynamicSlice)


class DynamicUpdateSlice(NamedTuple):
    dyn: tuple  # the axes with a run-time start (one int64 scalar input each)


def _infer_dynamic_update_slice(inputs: tuple, attrs: DynamicUpdateSlice) -> tuple:
    x, upd, starts = inputs[0], inputs[1], inputs[2:]
    _check_starts(starts, attrs.dyn, "dynamic_update_slice")
    if len(upd.shape) != len(x.shape) or any(u > s for u, s in zip(upd.shape, x.shape)):
        raise ValueError(f"dynamic_update_slice: an update of shape {upd.shape} does not fit "
                         f"an array of shape {x.shape}")
    return x.shape, x.dtype


def _lower_dynamic_update_slice(e: Emitter, n: Any, a: list) -> str:
    upd = n.inputs[1]
    v = convert(e, a[1], upd.shape, upd.dtype, n.dtype)
    starts = _starts(e, n, a[2:], len(n.shape), n.attrs.dyn)
    return e.op("stablehlo.dynamic_update_slice", [a[0], v, *starts],
                tensor_type(n.shape, n.dtype))


define("dynamic_update_slice", _infer_dynamic_update_slice, _lower_dynamic_update_slice,
       attrs=DynamicUpdateSlice)


class UpdateSlices(NamedTuple):
    dyn: tuple  # the written axes (one column of ``at`` each; the others are written whole)
    kind: str  # "fill" or "copy"
    window: tuple  # the shape of each write
    rdyn: tuple  # "copy": the axes of ``source`` read from (one column of ``frm`` each)
    rsizes: tuple  # "copy": the shape of each read (as many elements as a window)


def _infer_update_slices(inputs: tuple, attrs: UpdateSlices) -> tuple:
    dyn, kind, window, rdyn, rsizes = attrs
    x, at = inputs[0], inputs[-1]
    fill = kind == "fill"
    ok = len(inputs) == (3 if fill else 4) and at.dtype is dt.int64 and len(at.shape) == 2 \
        and at.shape[1] == len(dyn) and len(window) == len(x.shape) and \
        all(0 < w <= s for w, s in zip(window, x.shape))
    n = at.shape[0] if ok else 0
    if ok and fill:
        ok = inputs[1].shape == (n,) and inputs[1].dtype is x.dtype
    elif ok:
        src, frm = inputs[1], inputs[2]
        ok = frm.dtype is dt.int64 and frm.shape == (n, len(rdyn)) and \
            src.dtype is x.dtype and len(rsizes) == len(src.shape) and \
            all(0 < r <= s for r, s in zip(rsizes, src.shape))
        size = 1
        for w in window:
            size *= w
        for r in rsizes:
            size //= r
        ok = ok and size == 1
    if not ok:
        raise ValueError(f"update_slices: inputs of shapes {[i.shape for i in inputs]} do not "
                         f"fit {attrs}")
    return x.shape, x.dtype


def _lower_update_slices(e: Emitter, n: Any, a: list) -> str:
    dyn, kind, window, rdyn, rsizes = n.attrs
    d = n.dtype
    count = n.inputs[-1].shape[0]
    full = tensor_type((count, *window), d)
    if kind == "fill":
        upd = e.op("stablehlo.broadcast_in_dim", [a[1]], full, "broadcast_dimensions = "
                   f"{_i64s([0])}")
    else:
        fields = (f"offset_dims = {_ints(range(1, len(rsizes) + 1))}, "
                  f"start_index_map = {_ints(rdyn)}, index_vector_dim = 1")
        got = e.op("stablehlo.gather", [a[1], a[2]], tensor_type((count, *rsizes), d),
                   f"dimension_numbers = #stablehlo.gather<{fields}>, "
                   f"indices_are_sorted = false, slice_sizes = {_i64s(rsizes)}")
        upd = got if tuple(rsizes) == tuple(window) else e.op("stablehlo.reshape", [got], full)
    t = tensor_type((), d)
    old, new = e.fresh(), e.fresh()
    region = e.block([(old, t), (new, t)], lambda b: [new])
    fields = (f"update_window_dims = {_ints(range(1, len(window) + 1))}, "
              f"scatter_dims_to_operand_dims = {_ints(dyn)}, index_vector_dim = 1")
    return e.op("stablehlo.scatter", [a[0], a[-1], upd], tensor_type(n.shape, d),
                f"indices_are_sorted = false, "
                f"scatter_dimension_numbers = #stablehlo.scatter<{fields}>, "
                f"unique_indices = false", region=region)


define("update_slices", _infer_update_slices, _lower_update_slices, attrs=UpdateSlices)


# ---------------------------------------------------------------- scatter

class Scatter(NamedTuple):
    window: tuple  # update_window_dims
    inserted: tuple  # inserted_window_dims (= scatter_dims_to_operand_dims)


def _infer_scatter(inputs: tuple, attrs: Scatter) -> tuple:
    operand, indices, updates = inputs
    window, inserted = attrs
    if indices.dtype is not dt.int64:
        raise TypeError(f"scatter: indices must be int64, got {indices.dtype.name}")
    if len(updates.shape) != len(indices.shape) - 1 + len(window):
        raise ValueError(f"scatter: updates of shape {updates.shape} do not fit indices of "
                         f"shape {indices.shape} into an operand of shape {operand.shape}")
    return operand.shape, operand.dtype


def _lower_scatter(e: Emitter, n: Any, a: list) -> str:
    window, inserted = n.attrs
    operand, indices, updates = n.inputs
    d = n.dtype
    upd = convert(e, a[2], updates.shape, updates.dtype, d)
    ivd = len(indices.shape) - 1
    fields = []
    if window:
        fields.append(f"update_window_dims = {_ints(window)}")
    if inserted:
        fields.append(f"inserted_window_dims = {_ints(inserted)}")
        fields.append(f"scatter_dims_to_operand_dims = {_ints(inserted)}")
    fields.append(f"index_vector_dim = {ivd}")
    t = tensor_type((), d)
    old, new = e.fresh(), e.fresh()
    region = e.block([(old, t), (new, t)], lambda b: [new])
    return e.op("stablehlo.scatter", [a[0], a[1], upd], tensor_type(n.shape, d),
                f"indices_are_sorted = false, "
                f"scatter_dimension_numbers = #stablehlo.scatter<{', '.join(fields)}>, "
                f"unique_indices = false", region=region)


define("scatter", _infer_scatter, _lower_scatter, attrs=Scatter)
