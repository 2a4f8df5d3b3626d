"""``__array_namespace_info__`` and the namespace returned by ``__array_namespace__``."""

from __future__ import annotations

import sys
from typing import Any

from . import _dtypes
from ._devices import Device, default_device, devices, resolve

__all__ = ["__array_namespace_info__", "namespace_for", "VERSIONS", "DEFAULT_VERSION"]

VERSIONS = ("2023.12", "2024.12", "2025.12")
DEFAULT_VERSION = "2024.12"


def namespace_for(api_version: str | None) -> Any:
    """The namespace module; every supported version is served by the same functions."""
    if api_version is not None and api_version not in VERSIONS:
        raise ValueError(f"unsupported array API version {api_version!r}; "
                         f"supported: {', '.join(VERSIONS)}")
    return sys.modules["xla_array"]


class __array_namespace_info__:  # noqa: N801 (name fixed by the standard)
    """Inspection of what this namespace offers (standard, 2023.12 and later)."""

    def capabilities(self) -> dict[str, Any]:
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": 64}

    def default_device(self) -> Device:
        return default_device()

    def default_dtypes(self, *, device: Any = None) -> dict[str, Any]:
        if device is not None:
            resolve(device)
        return {"real floating": _dtypes.default_float, "complex floating":
                _dtypes.default_complex, "integral": _dtypes.default_int,
                "indexing": _dtypes.default_index}

    def devices(self) -> list[Device]:
        return devices()

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, Any]:
        if device is not None:
            resolve(device)
        out = {d.name: d for d in _dtypes.STANDARD}
        if kind is None:
            return out
        return {k: d for k, d in out.items() if _dtypes.isdtype(d, kind)}
