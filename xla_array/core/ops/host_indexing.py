"""Host rules of the indexing, sorting, scatter, search and scan ops (``core/ops/host.py``
gives the rules' contract): dynamic slices and updates, the combined writes of a loop,
gathers and takes, index normalization and checks, the keyed and multi-key sorts, scatters,
``searchsorted`` and cumulative sums and products. Each computes, from its inputs' NumPy
values, exactly what the compiled graph computes, or raises ``NotExact``."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import flags as _flags
from . import indexing as _indexing
from . import sorting as _sorting  # noqa: F401  (defines the sorts, gathers and scans)
from .host_common import NotExact, convert_value

__all__ = ["RULES", "numpy_order_scans"]


def numpy_order_scans() -> bool:
    """Whether float scans are lowered in NumPy's order (with the scan kernel): fast_math off."""
    return not _flags._values["fast_math"]


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
    if idx.size and 0 <= idx.min() and idx.max() < size:  # (in range: as they are; NumPy's
        return idx  # clip of 10,000 int64 took 32 us, with the wrap 50, min and max 8)
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


RULES = {
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice,
    "update_slices": _update_slices,
    "index_norm": _index_norm,
    "index_check": _index_check,
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
