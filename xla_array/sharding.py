"""``xla_array.sharding``: arrays spread over several devices, compiled by XLA's SPMD partitioner.

A ``Mesh`` arranges devices in a grid with named axes; a ``NamedSharding(mesh, spec)`` says how
an array is cut: ``spec`` has one entry per array dimension, ``None`` (not cut) or a mesh axis
name (or a tuple of names) whose devices each hold one piece of that dimension. Both are
accepted wherever the standard takes ``device=`` (creation functions, ``to_device``,
``asarray``)::

    mesh = sharding.make_mesh((2,), ("x",))               # the first two devices
    x = xp.asarray(data, device=sharding.NamedSharding(mesh, ("x", None)))  # rows cut in two
    y = xp.sum(xp.exp(x), axis=0)                          # one SPMD program, collectives by XLA

Operations on arrays of one mesh are recorded as usual and compiled into one SPMD program over
the mesh; Shardy propagates the layouts and inserts the communication, so every operation
gives the values it gives unsharded. ``x.device`` of an array on a mesh is the ``Mesh`` (arrays
on one mesh can be mixed in operations and compare equal by ``.device``); ``x.sharding`` is
its layout. ``constrain`` pins the layout of an intermediate result. Arrays on different
meshes (or on a mesh and a single device) cannot be mixed: move one with ``to_device``.

``device=mesh`` places data on every device of the mesh and lets XLA choose the layout of
results (host data is copied whole to each device).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .api.array import Array, wrap
from .core import backend_spmd as _backend_spmd
from .core import spmd as _spmd
from .core.devices import Device, default_device
from .core.devices import devices as _all_devices
from .core.devices import resolve as _resolve
from .core.graph import record

__all__ = ["Mesh", "NamedSharding", "SingleDeviceSharding", "make_mesh", "constrain",
           "local_shards", "shard_shape"]


class Mesh:
    """Devices in a grid with named axes: ``Mesh(devices, ("x", "y"))``.

    ``devices`` is a flat sequence (for one axis) or a nested sequence with one nesting level
    per axis name; Device objects or device strings (``"cpu:1"``). Hashable; two meshes are
    equal when they have the same devices in the same grid with the same axis names. A mesh
    is also a device for ``device=``: data on every device, layout chosen by XLA.
    """

    __slots__ = ("axis_names", "_grid", "_flat", "_sizes", "_spmd", "__weakref__")

    def __init__(self, devices: Any, axis_names: Any) -> None:
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if not names or not all(isinstance(a, str) and a for a in names):
            raise ValueError(f"axis_names must be non-empty strings, got {axis_names!r}")
        if len(set(names)) != len(names):
            raise ValueError(f"axis names must be distinct, got {names}")
        src = np.asarray(devices, dtype=object)
        grid = np.empty(src.shape, dtype=object)
        if grid.ndim != len(names) or grid.size == 0:
            raise ValueError(f"a mesh with axes {names} needs a {len(names)}-d grid of devices, "
                             f"got shape {grid.shape}")
        for idx in np.ndindex(*grid.shape):
            grid[idx] = _resolve(src[idx]) if not isinstance(src[idx], Device) else src[idx]
            if not isinstance(grid[idx], Device):
                raise ValueError(f"a mesh holds single devices, got {src[idx]!r}")
        flat = tuple(grid.ravel())
        if len(set(flat)) != len(flat):
            raise ValueError(f"a device appears twice in the mesh: {list(flat)}")
        if len({d.platform for d in flat}) != 1:
            raise ValueError("the devices of a mesh must be of one platform")
        grid.flags.writeable = False
        self.axis_names: tuple[str, ...] = names
        self._grid = grid
        self._flat = flat
        self._sizes: tuple[int, ...] = tuple(grid.shape)
        self._spmd = len(flat) > 1

    @property
    def devices(self) -> np.ndarray:
        """The device grid (a read-only NumPy object array)."""
        return self._grid

    @property
    def device_list(self) -> tuple[Device, ...]:
        """The devices in row-major grid order (the order of the SPMD partitions)."""
        return self._flat

    @property
    def shape(self) -> dict[str, int]:
        """Axis name -> number of devices along it, in axis order."""
        return dict(zip(self.axis_names, self._sizes))

    @property
    def size(self) -> int:
        return len(self._flat)

    @property
    def platform(self) -> str:
        return self._flat[0].platform

    @property
    def id(self) -> int:
        """The id of the first device (what DLPack reports for a host copy of an array)."""
        return self._flat[0].id

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Mesh) and other.axis_names == self.axis_names
                                 and other._sizes == self._sizes and other._flat == self._flat)

    def __hash__(self) -> int:
        return hash((self.axis_names, self._sizes, self._flat))

    def __repr__(self) -> str:
        axes = ", ".join(f"'{a}': {s}" for a, s in zip(self.axis_names, self._sizes))
        return f"Mesh({{{axes}}}, devices=[{', '.join(map(str, self._flat))}])"

    __str__ = __repr__

    # ------------------------------------------------ placement protocol (see _devices.Device)
    @property
    def _place(self) -> Mesh:
        return self

    @property
    def _pjrt_devices(self) -> list[Any]:
        return [d._pjrt for d in self._flat] if self._spmd else [self._flat[0]._pjrt]

    def _put(self, x: np.ndarray, owned: bool = False) -> Any:
        if not self._spmd:
            return self._flat[0]._put(x, owned)
        return _backend_spmd.put_global(x, tuple(self._pjrt_devices),
                                        _backend_spmd.hlo("{replicated}"))

    def _constrain(self, x: Any) -> Any:
        return x

    def _annotations(self, bufs: list, scalars: list, outs: list) -> Any:
        return _spmd.Annotator(self, bufs) if self._spmd else None

    def _layout_key(self, bufs: list) -> tuple:
        return _spmd.layout_key(self, bufs)


def make_mesh(axis_shapes: Any, axis_names: Any, *, devices: Any = None) -> Mesh:
    """A mesh of the first ``prod(axis_shapes)`` devices of ``devices`` (default: those of the
    default device's platform), e.g. ``make_mesh((2, 2), ("x", "y"))``."""
    shape = (int(axis_shapes),) if np.ndim(axis_shapes) == 0 else tuple(map(int, axis_shapes))
    if devices is None:
        devices = _all_devices(default_device().platform)
    devs = list(devices)
    n = math.prod(shape)
    if n > len(devs) or n < 1:
        raise ValueError(f"a mesh of shape {shape} needs {n} devices; {len(devs)} available "
                         f"(set XLA_ARRAY_CPU_DEVICES=N before first use for N CPU devices)")
    grid = np.empty(n, dtype=object)
    grid[:] = devs[:n]
    return Mesh(grid.reshape(shape), axis_names)


class NamedSharding:
    """How an array is cut over a mesh: ``NamedSharding(mesh, ("x", None))`` cuts dimension 0
    into ``mesh.shape["x"]`` pieces and keeps dimension 1 whole.

    ``spec`` has one entry per array dimension: None, a mesh axis name, or a tuple of names
    (cut over the product of those axes, first name major). Mesh axes not named hold copies.
    Dimensions must divide evenly. Hashable; two are equal when they lay arrays out alike:
    same mesh, same spec up to the spelling of entries and mesh axes of size 1.
    """

    __slots__ = ("mesh", "spec", "_norm", "_key")

    def __init__(self, mesh: Mesh, spec: Any) -> None:
        if not isinstance(mesh, Mesh):
            raise TypeError(f"NamedSharding needs a Mesh, got {type(mesh).__name__}")
        self.mesh = mesh
        self._norm = _spmd.normalize_spec(spec, mesh.axis_names)
        self.spec: tuple = tuple(None if not d else d[0] if len(d) == 1 else d
                                 for d in self._norm)
        sizes = mesh.shape
        self._key = tuple(tuple(a for a in d if sizes[a] > 1) for d in self._norm)

    @property
    def is_fully_replicated(self) -> bool:
        return not any(self._key)

    @property
    def device_set(self) -> set[Device]:
        return set(self.mesh.device_list)

    def shard_shape(self, shape: Any) -> tuple[int, ...]:
        """The shape of each device's piece of an array of ``shape``."""
        shape = tuple(shape)
        _spmd.check_spec(self.mesh, self._norm, shape, "shard_shape()")
        sizes = self.mesh.shape
        return tuple(n // math.prod(sizes[a] for a in d) for n, d in zip(shape, self._norm))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, NamedSharding) and other.mesh == self.mesh
                and other._key == self._key)

    def __hash__(self) -> int:
        return hash((self.mesh, self._key))

    def __repr__(self) -> str:
        return f"NamedSharding({self.mesh!r}, spec={self.spec})"

    # ------------------------------------------------ placement protocol
    @property
    def _place(self) -> Mesh:
        return self.mesh

    def _hlo(self) -> Any:
        m = self.mesh
        return _backend_spmd.hlo(_spmd.spec_hlo(m._sizes, m.axis_names, self._norm))

    def _put(self, x: np.ndarray, owned: bool = False) -> Any:
        _spmd.check_spec(self.mesh, self._norm, x.shape, "device=NamedSharding")
        if not self.mesh._spmd:
            return self.mesh._put(x, owned)
        return _backend_spmd.put_global(x, tuple(self.mesh._pjrt_devices), self._hlo())

    def _constrain(self, x: Any) -> Any:
        if x._node.buffer is not None and x.device == self.mesh and sharding_of(x) == self:
            return x  # already laid out so (to_device / asarray onto its own layout)
        return constrain(x, self)


class SingleDeviceSharding:
    """The sharding of an array on one device (what ``x.sharding`` gives for such arrays)."""

    __slots__ = ("device",)

    def __init__(self, device: Any) -> None:
        self.device: Device = _resolve(device)
        if not isinstance(self.device, Device):
            raise ValueError(f"SingleDeviceSharding needs one device, got {device!r}")

    @property
    def is_fully_replicated(self) -> bool:
        return True

    @property
    def device_set(self) -> set[Device]:
        return {self.device}

    def shard_shape(self, shape: Any) -> tuple[int, ...]:
        return tuple(shape)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleDeviceSharding) and other.device == self.device

    def __hash__(self) -> int:
        return hash(("single", self.device))

    def __repr__(self) -> str:
        return f"SingleDeviceSharding({self.device!r})"

    @property
    def _place(self) -> Device:
        return self.device

    def _put(self, x: np.ndarray, owned: bool = False) -> Any:
        return self.device._put(x, owned)

    def _constrain(self, x: Any) -> Any:
        return x


def shard_shape(x: Any) -> tuple[int, ...]:
    """The shape of each device's piece of ``x`` (computes ``x`` if its layout is not known)."""
    return sharding_of(x).shard_shape(x.shape)


def constrain(x: Any, sharding: NamedSharding) -> Any:
    """``x`` laid out as ``sharding`` from here on: records a sharding-constraint op, so XLA
    reshards there (if needed) and keeps that layout for the result. ``sharding.mesh`` must be
    ``x``'s mesh (use ``to_device`` to move between meshes or from a single device)."""
    if not isinstance(x, Array):
        raise TypeError(f"constrain() takes an array, got {type(x).__name__}")
    if not isinstance(sharding, NamedSharding):
        raise TypeError(f"constrain() takes a NamedSharding, got {type(sharding).__name__}")
    if x.device != sharding.mesh:
        raise ValueError(f"constrain(): the array is on {x.device}, not on the sharding's mesh "
                         f"{sharding.mesh}; move it with to_device()")
    _spmd.check_spec(sharding.mesh, sharding._norm, x.shape, "constrain()")
    return wrap(record(_spmd.CONSTRAINT, (x._node,), _spmd.ShardingConstraint(sharding._norm)))


def sharding_of(x: Any) -> Any:
    """``x.sharding``: SingleDeviceSharding or NamedSharding (see the module docstring).

    Known without computing for arrays on one device, arrays created or constrained with a
    NamedSharding, and computed arrays; otherwise the array is computed (XLA picks the layout).
    When XLA picks a layout that mesh axes cannot name (it may split an axis), the result is a
    NamedSharding over an equivalent derived mesh of the same devices (axes ``t0``, ``t1``...
    cutting dimensions 0, 1..., and ``r`` for copies).
    """
    n = x._node
    place = n.device
    if isinstance(place, Device):
        return SingleDeviceSharding(place)
    if not place._spmd:
        return NamedSharding(place, (None,) * len(n.shape))
    if n.buffer is None and n.op is _spmd.CONSTRAINT:
        return NamedSharding(place, n.attrs.spec)
    buf = x._buffer("sharding")
    lay = _spmd.leaf_layout(buf, place, len(n.shape))
    if lay[0] == "named":
        return NamedSharding(place, lay[1])
    _tag, axes, ids, spec = lay
    flat = place.device_list
    order = [flat[i] for i in ids] if ids is not None else list(flat)
    grid = np.empty(len(order), dtype=object)
    grid[:] = order
    mesh = Mesh(grid.reshape([s for _a, s in axes]), [a for a, _s in axes])
    return NamedSharding(mesh, spec)


def local_shards(x: Any) -> list[tuple[Device, np.ndarray]]:
    """(device, NumPy array) for each device holding a piece of ``x``, in mesh order.

    Computes ``x`` first if needed. The arrays are read-only views of device memory on CPU
    (copies on other platforms); devices holding copies of one piece each appear.
    """
    if not isinstance(x, Array):
        raise TypeError(f"local_shards() takes an array, got {type(x).__name__}")
    place = x.device
    if isinstance(place, Device):
        return [(place, np.asarray(x, copy=False))]
    if not place._spmd:
        return [(place.device_list[0], np.asarray(x, copy=False))]
    buf = x._buffer("local_shards")
    by_pjrt = {d._pjrt: d for d in place.device_list}
    return [(by_pjrt[d], a) for d, a in _backend_spmd.shards(buf)]


# x.sharding (may compute a pending array on a mesh, whose layout XLA chooses)
setattr(Array, "sharding", property(sharding_of, doc=sharding_of.__doc__))  # noqa: B010
