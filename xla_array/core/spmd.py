"""How a sharding flows through the engine: specs, the constraint op, SPMD lowering, cache keys.

A graph over arrays on a mesh is recorded like any other (``Node.device`` is the ``Mesh``).
When it is lowered, ``Annotator`` adds what XLA's SPMD partitioner (Shardy) needs: the module's
partition count, an ``sdy.mesh`` and an ``sdy.sharding`` on every parameter (each buffer's own
layout; scalar parameters are replicated). Results are left open, so Shardy propagates
shardings through the graph and picks the output layouts (and the collectives), except the
results of ``sharding_constraint`` ops, which are pinned. The executable's output shardings
come back with the result buffers, so computed arrays know their layout.

Specs are normalized to one tuple of mesh axis names per dimension (``()`` = replicated).
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any, NamedTuple

import numpy as np

from . import backend_spmd as bs
from .lower import tensor_type
from .ops.structural import OPS, define

__all__ = ["ShardingConstraint", "normalize_spec", "check_spec", "spec_hlo", "named_spec",
           "Annotator",
           "layout_key", "leaf_layout"]

MESH = "mesh"


def normalize_spec(spec: Any, axis_names: tuple) -> tuple:
    """``("x", None, ("x", "y"))`` -> ``(("x",), (), ("x", "y"))``; ValueError on unknown or
    repeated mesh axes."""
    if isinstance(spec, str) or not hasattr(spec, "__iter__"):
        raise TypeError(f"a sharding spec is a sequence with one entry per dimension, got "
                        f"{spec!r}")
    out = []
    used: set = set()
    for entry in spec:
        names = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
        for a in names:
            if a not in axis_names:
                raise ValueError(f"sharding spec {tuple(spec)!r} names axis {a!r}, which the "
                                 f"mesh (axes {axis_names}) does not have")
            if a in used:
                raise ValueError(f"sharding spec {tuple(spec)!r} uses mesh axis {a!r} twice")
            used.add(a)
        out.append(names)
    return tuple(out)


def check_spec(mesh: Any, spec: tuple, shape: tuple, what: str) -> None:
    """ValueError unless ``spec`` fits ``shape``: one entry per dimension, each dimension
    divisible by the number of pieces it is cut into."""
    if len(spec) != len(shape):
        raise ValueError(f"{what}: sharding spec {spec} has {len(spec)} entries but the array "
                         f"has shape {shape} ({len(shape)} dimensions)")
    sizes = mesh.shape
    for i, (names, n) in enumerate(zip(spec, shape)):
        k = math.prod(sizes[a] for a in names)
        if n % k:
            raise ValueError(f"{what}: dimension {i} of shape {shape} (size {n}) cannot be cut "
                             f"evenly into {k} pieces along mesh axes {names}")


def _tiling(sizes: tuple, names: tuple, spec: tuple) -> tuple[list, int, Any]:
    """(pieces per array dim, replication factor, device ids in tile order) of ``spec``."""
    pos = {a: i for i, a in enumerate(names)}
    order = [pos[a] for d in spec for a in d]
    unused = [i for i in range(len(names)) if i not in order]
    dims = [math.prod(sizes[pos[a]] for a in d) for d in spec]
    rep = math.prod(sizes[i] for i in unused)
    ids = np.arange(math.prod(sizes)).reshape(sizes).transpose(order + unused)
    return dims, rep, ids


@functools.lru_cache(maxsize=4096)
def spec_tiles(sizes: tuple, names: tuple, spec: tuple) -> tuple:
    """The tile grid of ``spec`` on a mesh, in the normalized form of ``bs.tiles``."""
    dims, rep, ids = _tiling(sizes, names, spec)
    if all(d == 1 for d in dims):
        return ("replicated",)
    groups = np.sort(ids.reshape(-1, rep), axis=1)
    return (tuple(dims) + (rep,), tuple(int(i) for i in groups.ravel()))


@functools.lru_cache(maxsize=4096)
def spec_hlo(sizes: tuple, names: tuple, spec: tuple) -> str:
    """The HloSharding text of ``spec`` (explicit device list, logical ids = mesh order)."""
    dims, rep, ids = _tiling(sizes, names, spec)
    if all(d == 1 for d in dims):
        return "{replicated}"
    ids = ids.ravel()
    shape = dims + ([rep] if rep > 1 else [])
    tail = " last_tile_dim_replicate" if rep > 1 else ""
    return (f"{{devices=[{','.join(map(str, shape))}]{','.join(map(str, ids))}{tail}}}")


_MAX_CANDIDATES = 20000


@functools.lru_cache(maxsize=4096)
def named_spec(sizes: tuple, names: tuple, hs_text: str, ndim: int) -> tuple | None:
    """The spec on the mesh whose layout is ``hs_text``, or None when there is none (XLA may
    split a mesh axis, e.g. 6 rows over an axis of 4 devices become 2 tiles)."""
    n = math.prod(sizes)
    target = bs.tiles(bs.hlo(hs_text), n, ndim)
    if target[0] == "replicated":
        return tuple(() for _ in range(ndim))
    dims = target[0][:-1]
    # each mesh axis is unused (-1) or cuts a dimension whose tile count it divides
    choices = [[-1] + [d for d in range(ndim) if dims[d] > 1 and dims[d] % s == 0]
               if s > 1 else [-1] for s in sizes]
    tried = 0
    for assign in itertools.product(*choices):
        groups: list[list[int]] = [[] for _ in range(ndim)]
        for ax, d in enumerate(assign):
            if d >= 0:
                groups[d].append(ax)
        if any(math.prod(sizes[a] for a in g) != dims[i] for i, g in enumerate(groups)):
            continue
        for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
            spec = tuple(tuple(names[a] for a in p) for p in perms)
            if spec_tiles(sizes, names, spec) == target:
                return spec
            tried += 1
            if tried > _MAX_CANDIDATES:
                return None
    return None


def leaf_layout(buf: Any, mesh: Any, ndim: int) -> tuple:
    """``("named", spec)`` on ``mesh`` or ``("derived", axes, ids, spec)`` for a global buffer.

    Cached on the buffer's sharding object (shared by every buffer with that layout)."""
    sh = getattr(buf, "_sharding", None)
    if sh is None or not hasattr(sh, "_hlo"):
        raise TypeError("this graph has a parameter on a mesh without a device buffer (arrays on "
                        "a mesh cannot be traced by xla_array.jit); call the function unjitted")
    cache = sh.__dict__.setdefault("_xa_layouts", {})
    key = (mesh, ndim)
    out = cache.get(key)
    if out is None:
        text = str(sh._hlo)
        spec = named_spec(mesh._sizes, mesh.axis_names, text, ndim)
        if spec is not None:
            out = ("named", spec)
        else:
            axes, ids, dspec = bs.derived_mesh(sh._hlo, mesh.size, ndim)
            out = ("derived", tuple(axes), None if ids is None else tuple(ids), tuple(dspec))
        cache[key] = out
    return out


def layout_key(mesh: Any, bufs: list) -> tuple:
    """The part of the compile-cache key that the parameters' layouts add."""
    return tuple(leaf_layout(n.buffer, mesh, len(n.shape)) for n in bufs)


class Annotator:
    """Writes the SPMD parts of one module (see the module docstring); used by ``lower``."""

    def __init__(self, mesh: Any, bufs: list) -> None:
        self.mesh = mesh
        self.nbufs = len(bufs)
        self.extra: dict[tuple, str] = {}  # derived meshes: (axes, ids) -> symbol

    def arg(self, j: int, node: Any) -> str:
        if j >= self.nbufs or node.buffer is None:  # a scalar parameter: replicated
            return f"sdy.sharding = {bs.sdy_sharding(MESH, ())}"
        lay = leaf_layout(node.buffer, self.mesh, len(node.shape))
        if lay[0] == "named":
            return f"sdy.sharding = {bs.sdy_sharding(MESH, lay[1])}"
        _tag, axes, ids, spec = lay
        name = self.extra.setdefault((axes, ids), f"m{len(self.extra) + 1}")
        return f"sdy.sharding = {bs.sdy_sharding(name, spec)}"

    def result(self, node: Any) -> str:
        if node.op is CONSTRAINT:
            return f" {{sdy.sharding = {bs.sdy_sharding(MESH, node.attrs.spec)}}}"
        return ""

    def module_head(self) -> str:
        m = self.mesh
        lines = [f"module @xla_array attributes {{mhlo.num_partitions = {m.size} : i32, "
                 f"mhlo.num_replicas = 1 : i32}} {{",
                 f"  sdy.mesh @{MESH} = {bs.sdy_mesh(list(m.shape.items()), None)}"]
        for (axes, ids), name in self.extra.items():
            lines.append(f"  sdy.mesh @{name} = {bs.sdy_mesh(list(axes), ids)}")
        return "\n".join(lines)


# ---------------------------------------------------------------- the constraint op

class ShardingConstraint(NamedTuple):
    spec: tuple  # normalized (sharding._norm); the mesh is the node's device (in the cache key)


def _infer_constraint(inputs: tuple, attrs: ShardingConstraint) -> tuple:
    x = inputs[0]
    if len(attrs.spec) > len(x.shape):
        raise ValueError(f"sharding constraint: spec {attrs.spec} has more entries than an "
                         f"array of shape {x.shape} has axes")
    return x.shape, x.dtype


def _lower_constraint(e: Any, n: Any, a: list) -> str:
    if n.device.size == 1:
        return a[0]
    ty = tensor_type(n.shape, n.dtype)
    return e.op("sdy.sharding_constraint", [a[0]], ty,
                f"sharding = {bs.sdy_sharding(MESH, n.attrs.spec)}")


CONSTRAINT = OPS.get("sharding_constraint") or define(
    "sharding_constraint", _infer_constraint, _lower_constraint, attrs=ShardingConstraint)
