"""Array keys in indexing: integer arrays and boolean masks, for reading and writing.

Semantics are NumPy's advanced indexing: integer arrays (any integer dtype; also NumPy arrays
and Python lists) and the integers beside them broadcast together; their result dims replace
the indexed axes in place when the advanced indices are adjacent in the key, and go first when
a slice, ``None`` or ``...`` separates them (even an ``...`` that expands to no axes). An
``M``-d boolean mask stands for the ``M`` index arrays of its nonzero positions (row-major); a
0-d mask (``True``/``False``, or a 0-d bool array) adds an axis of length 1 or 0. As the standard
allows, a mask axis of size 0 may stand against an axis of any size (it selects nothing).

How it is lowered: the key is rewritten into one entry per axis of a reshaped view of ``x``
(``None`` and 0-d masks insert length-1 axes, an ``M``-d mask merges its ``M`` axes into one
indexed by the flat positions of its True elements). Slices apply first (basic indexing),
then one ``stablehlo.gather`` (read) or ``stablehlo.scatter`` (write) handles all index arrays.

What is computed when:
- Index arrays known on the host (lists, NumPy arrays, Python ints) and device index arrays
  already computed are bounds-checked at once (IndexError, as NumPy) and uploaded; a negative
  index counts from the end. A pending device index array stays lazy: its bounds check is
  computed in the same executable as the gather or scatter using it (``checked_indices``),
  and an out-of-bounds index raises IndexError naming the line that indexed, when the graph
  runs, before any result is written back. ``XLA_ARRAY_CHECK_INDICES=0`` turns the check
  off: then a negative index wraps once and the index is clamped to ``[0, n - 1]`` (what
  XLA's gather does; the standard leaves out-of-bounds behaviour unspecified).
- A boolean mask decides the result's size, so reading with a device mask materializes the
  mask alone (cause ``"boolean_index"``), never ``x``; the gather stays lazy.
- ``x[mask] = v`` (the mask alone, or after full slices) with ``v`` broadcasting without the
  selected count (a scalar, or shaped like the trailing axes) is lazy: ``where(mask, v, x)``.
  Only a value laid out over the True positions (shape ``(count, ...)``) needs the count, and
  then a device mask is materialized.
- Index arrays are runtime parameters (values never enter the compile cache key), but a
  mask's True count is a static shape: reading with masks of different counts compiles one
  executable per count. ``where``-style mask writes do not depend on the count.
- Duplicate indices in a write: one of the updates wins (the last one on CPU); the standard
  leaves it unspecified.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from ..core import backend as _backend
from ..core import dtypes as _dtypes
from ..core import flags as _flags
from ..core import metrics as _metrics
from ..core import spmd as _spmd
from ..core.executor import materialize_nodes
from ..core.graph import SCALAR, Node, Placeholder, record, scalar_leaf
from ..core.ops.indexing import INDEX_CHECK, Gather, IndexCheck, IndexNorm, Scatter, index_error
from ..core.ops.structural import OPS, Broadcast, Concat, Reshape, broadcast_shapes
from .array import Array, host_leaf, wrap
from .indexing import getitem, value_node
from .indexing import setitem as basic_setitem

__all__: list[str] = []  # (nothing for the namespace: indexing goes through Array)


def checked_indices(node: Node, size: int, axis: int) -> Node:
    """The device integer indices ``node`` into an axis of ``size``, bounds-checked as NumPy
    does (``-size <= i < size``): at once when their values are known (computed already),
    else by an ``index_check`` computed in the executable that uses them (see the module
    doc). Off with the ``check_indices`` setting."""
    if not _flags._values["check_indices"]:
        return node
    b = node.buffer
    if node.op is SCALAR or (b is not None and type(b) is not Placeholder
                             and not _spans_processes(node)):
        a = np.asarray(node.value if node.op is SCALAR else _backend.to_numpy(b))
        if a.size:
            lo, hi = a.min(), a.max()
            if lo < -size or hi >= size:
                raise index_error(int(lo) if lo < -size else int(hi), size, axis)
        return node
    return record(OPS["checked"], (node, record(INDEX_CHECK, (node,), IndexCheck(size, axis))))


def empty_result(out: Node, indices: list[tuple[Node, int, int]]) -> Node:
    """``out``, a result with no elements, still bounds-checking the device ``indices``
    ((node, axis size, axis) each) as NumPy does: ``zeros(0)[idx]`` raises for any index."""
    for node, size, axis in indices:
        c = checked_indices(node, size, axis)
        if c is not node:  # a pending index: its check travels with the result
            out = record(OPS["checked"], (out, c.inputs[1]))
    return out

_I64 = _dtypes.int64


# ---------------------------------------------------------------- key parsing

def _classify(k: Any) -> tuple:
    """One key entry -> (kind, payload). kinds: none, ell, slice, int, iarr, mask, bool0."""
    if k is None:
        return ("none", None)
    if k is Ellipsis:
        return ("ell", None)
    if isinstance(k, slice):
        return ("slice", k)
    if isinstance(k, (bool, np.bool_)):
        return ("bool0", bool(k))
    if isinstance(k, Array):
        if k.dtype is _dtypes.bool:
            return ("mask", k._node) if k.ndim else ("bool0", k._node)
        if k.dtype.kind in "iu":
            return ("iarr", k._node)
        raise IndexError(f"arrays used as indices must be of integer or boolean type, not "
                         f"{k.dtype.name} (index of shape {k.shape})")
    if isinstance(k, (list, np.ndarray)):
        try:
            a = np.asarray(k)
        except ValueError:
            raise IndexError("a list used as an index must be rectangular (ragged lists are "
                             "not valid indices)") from None
        if isinstance(k, list) and a.size == 0 and a.dtype.kind == "f":
            a = a.astype(np.int64)
        if a.dtype.kind == "b":
            return ("mask", a) if a.ndim else ("bool0", bool(a))
        if a.dtype.kind in "iu":
            return ("iarr", a)
        raise IndexError(f"arrays used as indices must be of integer or boolean type, not "
                         f"{a.dtype} (index of shape {a.shape})")
    try:
        return ("int", operator.index(k))
    except TypeError:
        raise IndexError(f"only integers, slices, '...', None, integer and boolean arrays are "
                         f"valid indices, not {type(k).__name__}") from None


def _ndim_used(kind: str, p: Any) -> int:
    if kind in ("slice", "int", "iarr"):
        return 1
    if kind == "mask":
        return len(p.shape)
    return 0


def _expand(x_shape: tuple, key: Any) -> list:
    """Classified entries with the ellipsis expanded into full slices; an ``ell`` marker stays
    (it separates advanced indices, as in NumPy)."""
    ents = [_classify(k) for k in (key if isinstance(key, tuple) else (key,))]
    n_ell = sum(1 for kind, _ in ents if kind == "ell")
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(_ndim_used(kind, p) for kind, p in ents)
    ndim = len(x_shape)
    if used > ndim:
        raise IndexError(f"too many indices: array of shape {x_shape} is {ndim}-dimensional, "
                         f"but {used} were indexed")
    out: list = []
    for kind, p in ents:
        out.append((kind, p))
        if kind == "ell":
            out.extend([("slice", slice(None))] * (ndim - used))
    if not n_ell:
        out.extend([("slice", slice(None))] * (ndim - used))
    d = 0
    for kind, p in out:
        if kind == "mask":
            m = tuple(p.shape)
            xs = x_shape[d:d + len(m)]
            if any(ms != xd and ms != 0 for ms, xd in zip(m, xs)):
                raise IndexError(f"boolean index of shape {m} does not match the indexed array "
                                 f"of shape {x_shape} at axes {d}..{d + len(m) - 1} "
                                 f"(sizes {xs})")
        d += _ndim_used(kind, p)
    return out


def _spans_processes(node: Node) -> bool:
    """Whether ``node`` lives on a mesh with devices of other processes (distributed)."""
    devs = getattr(node.device, "device_list", None)
    return devs is not None and not all(d._local for d in devs)


def _whole(node: Node) -> Node:
    """``node``, laid out whole on every device when its mesh spans processes: every
    process indexes with the same mask, so each needs all of it (one all-gather, in the
    executable that computes the mask)."""
    if not _spans_processes(node):
        return node
    return record(_spmd.CONSTRAINT, (node,), _spmd.ShardingConstraint(((),) * len(node.shape)))


def _to_host(nodes: list[Node]) -> list[np.ndarray]:
    """Materialize the device masks of a key (nothing else) and copy them to the host."""
    nodes = [_whole(n) for n in nodes]
    materialize_nodes(nodes, "boolean_index")
    out = []
    for n in nodes:
        _metrics.count("bytes_to_host", math.prod(n.shape) * n.dtype.itemsize)
        out.append(np.asarray(_backend.to_numpy(n.buffer)))
    return out


def _host_masks(ents: list) -> list:
    dev = [p for kind, p in ents if kind in ("mask", "bool0") and isinstance(p, Node)]
    if not dev:
        return ents
    vals = dict(zip(map(id, dev), _to_host(dev)))
    out = []
    for kind, p in ents:
        if isinstance(p, Node) and id(p) in vals:
            v = vals[id(p)]
            p = bool(v) if kind == "bool0" else v
        out.append((kind, p))
    return out


class Plan:
    """A key rewritten over a reshaped view of ``x``: one entry per view axis, either a slice
    or an index (host int64 array already in ``[0, n)``, or a device integer Node)."""

    __slots__ = ("view_shape", "entries", "adv", "adjacent", "batch")

    def __init__(self, x_shape: tuple, ents: list) -> None:
        view: list[int] = []
        entries: list = []
        seq: list[str] = []
        d = 0
        for kind, p in ents:
            if kind == "none":
                view.append(1)
                entries.append(slice(None))
                seq.append("s")
            elif kind == "ell":
                seq.append("s")
            elif kind == "slice":
                view.append(x_shape[d])
                entries.append(p)
                seq.append("s")
                d += 1
            elif kind in ("int", "iarr"):
                n = x_shape[d]
                if kind == "int" or not isinstance(p, Node):
                    p = _check_host_index(np.asarray(p), n, d, x_shape)
                view.append(n)
                entries.append(p)
                seq.append("a")
                d += 1
            elif kind == "mask":
                m = len(p.shape)
                view.append(math.prod(x_shape[d:d + m]))
                entries.append(np.flatnonzero(p).astype(np.int64))
                seq.append("a")
                d += m
            else:  # bool0 (host)
                view.append(1)
                entries.append(np.zeros(1 if p else 0, np.int64))
                seq.append("a")
        self.view_shape = tuple(view)
        self.entries = entries
        self.adv = [i for i, en in enumerate(entries) if not isinstance(en, slice)]
        s = "".join(seq)
        self.adjacent = "a" not in s[s.find("a"):].lstrip("a") if "a" in s else True
        shapes = [en.shape for en in entries if not isinstance(en, slice)]
        try:
            self.batch = broadcast_shapes(*shapes)
        except ValueError:
            raise IndexError(f"shape mismatch: indexing arrays could not be broadcast together "
                             f"with shapes {' '.join(str(tuple(s)) for s in shapes)}") from None


def _check_host_index(a: np.ndarray, n: int, axis: int, shape: tuple) -> np.ndarray:
    if a.size:
        lo, hi = int(a.min()), int(a.max())
        if lo < -n or hi >= n:
            bad = lo if lo < -n else hi
            raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n} "
                             f"(array of shape {shape})")
    a = a.astype(np.int64)
    return np.where(a < 0, a + n, a) if a.size and a.min() < 0 else a


# ---------------------------------------------------------------- building blocks

def _sliced(node: Node, plan: Plan) -> tuple[Node, tuple]:
    """Apply the plan's slices (static); the key of full slices is () when nothing to do."""
    key = tuple(en if isinstance(en, slice) else slice(None) for en in plan.entries)
    full = all(en.indices(n) == (0, n, 1) for en, n in zip(key, node.shape))
    if full:
        return node, ()
    return getitem(Array(node), key)._node, key


def _indices(plan: Plan, shape: tuple, device: Any) -> Node:
    """The int64 indices tensor ``batch + (k,)`` of the plan's advanced axes."""
    b = plan.batch
    ents = [plan.entries[i] for i in plan.adv]
    if all(isinstance(en, np.ndarray) for en in ents):
        host = np.stack([np.broadcast_to(en, b) for en in ents], axis=-1)
        return host_leaf(host, device, _I64)
    parts = []
    for i, en in zip(plan.adv, ents):
        if isinstance(en, np.ndarray):
            nd = host_leaf(en, device, _I64)
        else:
            nd = record(OPS["index_norm"], (checked_indices(en, shape[i], i),), IndexNorm(shape[i]))
        if nd.shape != b:
            nd = record(OPS["broadcast"], (nd,), Broadcast(b))
        parts.append(record(OPS["reshape"], (nd,), Reshape(b + (1,))))
    if len(parts) == 1:
        return parts[0]
    return record(OPS["concat"], tuple(parts), Concat(len(b)))


def _layout(plan: Plan, shape: tuple) -> tuple[tuple, list, int]:
    """(result shape, window dims of the result, position of the batch dims)."""
    rest = [n for i, n in enumerate(shape) if i not in plan.adv]
    p = plan.adv[0] if plan.adjacent else 0
    b = plan.batch
    out = tuple(rest[:p]) + b + tuple(rest[p:])
    window = list(range(p)) + list(range(p + len(b), len(out)))
    return out, window, p


def _zeros(shape: tuple, x: Array) -> Array:
    z = scalar_leaf(0, x.dtype, x.device)
    return wrap(record(OPS["broadcast"], (z,), Broadcast(shape)))


def _view(x: Array, plan: Plan) -> Node:
    if plan.view_shape == x.shape:
        return x._node
    return record(OPS["reshape"], (x._node,), Reshape(plan.view_shape))


# ---------------------------------------------------------------- getitem

def getitem_advanced(x: Array, key: Any) -> Array:
    """``x[key]`` for keys holding integer arrays or boolean masks (see the module doc)."""
    ents = _host_masks(_expand(x.shape, key))
    plan = Plan(x.shape, ents)
    node, _ = _sliced(_view(x, plan), plan)
    shape = node.shape
    out, window, _ = _layout(plan, shape)
    if math.prod(out) == 0 or any(shape[i] == 0 for i in plan.adv):
        dev = [(plan.entries[i], shape[i], i) for i in plan.adv
               if isinstance(plan.entries[i], Node)]
        return wrap(empty_result(_zeros(out, x)._node, dev))
    idx = _indices(plan, shape, x.device)
    sizes = tuple(1 if i in plan.adv else n for i, n in enumerate(shape))
    return wrap(record(OPS["gather"], (node, idx), Gather(tuple(window), tuple(plan.adv), sizes)))


# ---------------------------------------------------------------- setitem

def _fits(v: tuple, sel: tuple) -> bool:
    try:
        return broadcast_shapes(v, sel) == tuple(sel)
    except ValueError:
        return False


def _lazy_mask_set(x: Array, ents: list, v: Node) -> Array | None:
    """``where(mask, v, x)`` when the key is one mask (after full slices only) matching ``x``
    and ``v`` does not need the count of True; None when that does not apply."""
    real = [(kind, p) for kind, p in ents if kind != "ell"]
    masks = [i for i, (kind, p) in enumerate(real) if kind in ("mask", "bool0")]
    if len(masks) != 1 or isinstance(real[masks[0]][1], bool):
        return None
    j = masks[0]
    others = real[:j] + real[j + 1:]
    if any(kind != "slice" for kind, _ in others):
        return None
    m = real[j][1]
    mshape = tuple(m.shape)
    M = len(mshape)
    d = j
    if mshape != x.shape[d:d + M]:
        return None
    dims = list(range(d)) + list(range(d + M, x.ndim))
    for i, (_, p) in zip(dims, others):
        if p.indices(x.shape[i]) != (0, x.shape[i], 1):
            return None
    pre, rest = x.shape[:d], x.shape[d + M:]
    vs = v.shape
    if len(vs) <= len(rest):
        if not _fits(vs, rest):
            return None
        vn = v
    else:
        c = len(vs) - len(rest) - 1
        if vs[c] != 1 or not _fits(vs[:c], pre) or not _fits(vs[c + 1:], rest):
            return None
        vn = record(OPS["reshape"], (v,), Reshape(vs[:c] + (1,) * M + vs[c + 1:]))
    mn = host_leaf(m, x.device, _dtypes.bool) if isinstance(m, np.ndarray) else m
    if M and rest:
        mn = record(OPS["reshape"], (mn,), Reshape(mshape + (1,) * len(rest)))
    return wrap(record(OPS["select"], (mn, vn, x._node)))


def setitem_advanced(x: Array, key: Any, value: Any) -> Array:
    """The array ``x`` with ``x[key] = value`` for keys holding integer arrays or masks."""
    ents = _expand(x.shape, key)
    v = value_node(x, value)
    lazy = _lazy_mask_set(x, ents, v)
    if lazy is not None:
        return lazy
    plan = Plan(x.shape, _host_masks(ents))
    view = _view(x, plan)
    node, skey = _sliced(view, plan)
    shape = node.shape
    sel, window, _ = _layout(plan, shape)
    if not _fits(v.shape, sel):
        raise ValueError(f"shape mismatch: a value of shape {v.shape} could not be broadcast "
                         f"to the indexing result of shape {sel}")
    if math.prod(sel) == 0 or any(shape[i] == 0 for i in plan.adv):
        dev = [(plan.entries[i], shape[i], i) for i in plan.adv
               if isinstance(plan.entries[i], Node)]
        return wrap(empty_result(x._node, dev)) if dev else x
    if v.shape != sel:
        v = record(OPS["broadcast"], (v,), Broadcast(sel))
    idx = _indices(plan, shape, x.device)
    new = record(OPS["scatter"], (node, idx, v), Scatter(tuple(window), tuple(plan.adv)))
    if skey:
        new = basic_setitem(Array(view), skey, Array(new))._node
    if new.shape != x.shape:
        new = record(OPS["reshape"], (new,), Reshape(x.shape))
    return wrap(new)
