"""Devices: value objects over PJRT devices, the default device, and ``device=`` validation."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

from . import _backend

__all__ = ["Device", "devices", "default_device", "resolve", "using_device"]


class Device:
    """One device, e.g. ``Device('cpu', 0)``. Hashable; equal when platform and id are equal."""

    __slots__ = ("platform", "id", "_pjrt")

    def __init__(self, platform: str, id: int, pjrt: Any) -> None:  # noqa: A002
        self.platform = platform
        self.id = id
        self._pjrt = pjrt

    def __repr__(self) -> str:
        return f"Device('{self.platform}', {self.id})"

    def __str__(self) -> str:
        return f"{self.platform}:{self.id}"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Device) and other.platform == self.platform
                and other.id == self.id)

    def __hash__(self) -> int:
        return hash((self.platform, self.id))


_lock = threading.Lock()
_devices: dict[str, list[Device]] = {}
_local = threading.local()
_default_env = os.environ.get("XLA_ARRAY_DEFAULT_DEVICE")


def devices(platform: str | None = None) -> list[Device]:
    """All devices, or those of one platform ('cpu', 'cuda')."""
    plats = [platform] if platform else _backend.platforms()
    out: list[Device] = []
    for p in plats:
        with _lock:
            if p not in _devices:
                _devices[p] = [Device(p, i, d) for i, d in enumerate(_backend.devices(p))]
        out.extend(_devices[p])
    return out


def _parse(spec: str) -> Device:
    plat, _, idx = spec.partition(":")
    devs = devices(plat)
    i = int(idx or 0)
    if not 0 <= i < len(devs):
        raise ValueError(f"no device {spec!r}; have {devs}")
    return devs[i]


def default_device() -> Device:
    d = getattr(_local, "device", None)
    if d is not None:
        return d
    if _default_env:
        return _parse(_default_env)
    return devices("cpu")[0]


@contextlib.contextmanager
def using_device(device: Any) -> Iterator[Device]:
    """Make ``device`` the default for creation functions in this thread, for a block."""
    d = resolve(device)
    old = getattr(_local, "device", None)
    _local.device = d
    try:
        yield d
    finally:
        _local.device = old


def resolve(device: Any) -> Device:
    """The Device for a ``device=`` argument (None means the default device)."""
    if device is None:
        return default_device()
    if isinstance(device, Device):
        return device
    if isinstance(device, str):
        return _parse(device)
    raise ValueError(f"{device!r} is not an xla_array device")
