"""Devices: value objects over PJRT devices, the default device, and ``device=`` validation.

What ``device=`` accepts (a *target*): a ``Device``, a device string (``"cpu"``, ``"cpu:1"``,
``"cuda:0"``), ``None`` (the default device), or from ``xla_array.sharding`` a ``Mesh``, a
``NamedSharding`` or a ``SingleDeviceSharding``. Every target has a *placement* (``_place``):
the Device or the Mesh an array lives on, stored as ``Node.device``; arrays of different
placements cannot be mixed in one operation (ValueError at record time).

Targets implement a small protocol the engine calls (duck-typed, so the engine never imports
``sharding``): ``_place``; ``_spmd`` (several devices: one SPMD program); ``_pjrt_devices``
(compile for these); ``_put(host_array, owned)`` (a buffer laid out for this target);
``_constrain(array)`` (record the target's layout on a result); ``_annotations(...)`` (the
SPMD lowering hooks, None for one device); ``_layout_key(bufs)`` (compile-cache key part).

The default device is the first CUDA device when the CUDA plugin is installed and loads, else
``cpu:0``; ``XLA_ARRAY_DEFAULT_DEVICE`` (read at import) or ``using_device(...)`` (a context
manager, per thread) override it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import backend as _backend

__all__ = ["Device", "devices", "default_device", "resolve", "target", "using_device"]

_ALIASES = {"gpu": "cuda"}


_CAPACITY: dict[Any, int | None] = {}


class Device:
    """One device, e.g. ``Device('cpu', 0)``. Hashable; equal when platform and id are equal."""

    __slots__ = ("platform", "id", "_pjrt", "_hash", "_local")
    _spmd = False

    def __init__(self, platform: str, id: int, pjrt: Any) -> None:
        self.platform = platform
        self.id = id
        self._pjrt = pjrt
        self._hash = hash((platform, id))  # devices key every cache lookup: hash once
        # False: another process's device (xla_array.distributed)
        self._local = pjrt is None or _backend.is_local(pjrt)

    def __repr__(self) -> str:
        return f"Device('{self.platform}', {self.id})"

    def __str__(self) -> str:
        return f"{self.platform}:{self.id}"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Device) and other.platform == self.platform
                and other.id == self.id)

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> Any:
        return (_parse, (str(self),))

    # ---------------------------------------------------------------- placement protocol
    @property
    def _place(self) -> Device:
        return self

    @property
    def _pjrt_devices(self) -> list[Any]:
        if not self._local:
            self._refuse()
        return [self._pjrt]

    def _put(self, x: np.ndarray, owned: bool = False) -> Any:
        if not self._local:
            self._refuse()
        return _backend.put(x, self._pjrt, owned=owned)

    def _refuse(self) -> None:
        raise ValueError(f"device {self} belongs to process {self._pjrt.process_index}; this "
                         f"process can only compute on its own devices (arrays over every "
                         f"process's devices live on a mesh: xla_array.distributed.from_local)")

    def _capacity(self) -> int | None:
        """The most bytes this device can hold (None if unknown); asked once per device."""
        cap = _CAPACITY.get(self, -1)
        if cap == -1:
            cap = _CAPACITY[self] = _backend.memory_capacity(self._pjrt)
        return cap

    def _constrain(self, x: Any) -> Any:
        return x

    def _annotations(self, bufs: list, scalars: list, outs: list) -> None:
        return None

    def _layout_key(self, bufs: list) -> tuple:
        return ()


_lock = threading.Lock()
_devices: dict[str, list[Device]] = {}
_local = threading.local()
_default_env = os.environ.get("XLA_ARRAY_DEFAULT_DEVICE", "").strip()
_default: list[Any] = []  # the process default, computed once


def devices(platform: str | None = None) -> list[Device]:
    """All devices (every platform: ``cpu``, then ``cuda`` when available), or one platform's.

    ``XLA_ARRAY_CPU_DEVICES=N`` (set before first use) gives N CPU devices.
    """
    plats = [_ALIASES.get(platform, platform)] if platform else _backend.platforms()
    out: list[Device] = []
    for p in plats:
        devs = _devices.get(p)
        if devs is None:
            pjrt = _backend.devices(p)  # raises BackendError for an unavailable platform
            with _lock:
                devs = _devices.setdefault(p, [Device(p, i, d) for i, d in enumerate(pjrt)])
        out.extend(devs)
    return out


def _parse(spec: str) -> Device:
    plat, _, idx = spec.strip().lower().partition(":")
    plat = _ALIASES.get(plat, plat)
    if plat not in _backend.platforms():
        raise ValueError(f"no device {spec!r}: platform {plat!r} is not available (have "
                         f"{', '.join(_backend.platforms())})")
    devs = devices(plat)
    try:
        i = int(idx or 0)
    except ValueError:
        raise ValueError(f"bad device string {spec!r}; expected e.g. 'cpu' or 'cpu:1'") from None
    if not 0 <= i < len(devs):
        raise ValueError(f"no device {spec!r}; have {', '.join(map(str, devs))}")
    return devs[i]


def default_device() -> Any:
    """The device used when ``device=None``: the innermost ``using_device`` of this thread,
    else ``XLA_ARRAY_DEFAULT_DEVICE``, else (after ``xla_array.distributed.initialize``) this
    process's first device of the platform the processes span, else the first CUDA device
    if any, else ``cpu:0``."""
    d = getattr(_local, "device", None)
    if d is not None:
        return d
    if _default:
        return _default[0]
    if _default_env:
        d = _check_default(target(_default_env))
    else:
        # several processes: the platform they span, this process's first device (their
        # module is loaded by ``initialize``: not loaded, no runtime, and no import of it and
        # its socket module, ~5 ms, on a first array)
        dist = sys.modules.get(__package__ + ".backend_distributed")
        st = dist.state() if dist is not None else None
        plat = st.platform if st is not None else (
            "cuda" if "cuda" in _backend.platforms() else "cpu")
        d = next(d for d in devices(plat) if d._local)
    with _lock:
        if not _default:
            _default.append(d)
    return _default[0]


def _check_default(t: Any) -> Any:
    if t is not t._place:
        raise ValueError(f"the default device must be a device or a mesh, not {t!r} (a layout "
                         f"depends on the array's shape; pass it as device= instead)")
    return t


@contextlib.contextmanager
def using_device(device: Any) -> Iterator[Any]:
    """Make ``device`` (a Device, device string or Mesh) the default for creation functions in
    this thread, for a block: ``with xp.using_device("cpu:1"): x = xp.zeros(3)``."""
    d = _check_default(target(device))
    old = getattr(_local, "device", None)
    _local.device = d
    try:
        yield d
    finally:
        _local.device = old


def target(device: Any) -> Any:
    """The target for a ``device=`` argument (see the module docstring); ValueError if invalid."""
    if device is None:
        return default_device()
    if isinstance(device, Device):
        return device
    if isinstance(device, str):
        return _parse(device)
    if getattr(type(device), "_place", None) is not None:  # Mesh, NamedSharding, ...
        return device
    raise ValueError(f"{device!r} is not an xla_array device (expected a Device, a device "
                     f"string like 'cpu:0', or a Mesh/NamedSharding from xla_array.sharding)")


def resolve(device: Any) -> Any:
    """The placement (Device or Mesh) of a ``device=`` argument (None: the default device)."""
    if device is None:
        d = getattr(_local, "device", None)
        return d if d is not None else (_default[0] if _default else default_device())
    if type(device) is Device:
        return device
    return target(device)._place
