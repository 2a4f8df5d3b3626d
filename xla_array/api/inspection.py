"""``__array_namespace_info__`` and the namespace returned by ``__array_namespace__``."""

from __future__ import annotations

import sys
import types
from typing import Any

from ..core import dtypes as _dtypes
from ..core.devices import Device, default_device, devices, resolve

__all__ = ["__array_namespace_info__", "namespace_for", "VERSIONS", "DEFAULT_VERSION"]

VERSIONS = ("2023.12", "2024.12", "2025.12")
DEFAULT_VERSION = "2025.12"


_namespaces: dict[str, Any] = {}


def namespace_for(api_version: str | None) -> Any:
    """The namespace for ``api_version``: the module itself for the newest version, and for
    older ones a view of it whose few version-dependent functions behave as that version says
    (``meshgrid``/``broadcast_arrays``/``devices()`` return lists before 2025.12)."""
    base = sys.modules["xla_array"]
    if api_version is None or api_version == base.__array_api_version__:
        return base
    if api_version not in VERSIONS:
        raise ValueError(f"unsupported array API version {api_version!r}; "
                         f"supported: {', '.join(VERSIONS)}")
    ns: Any = _namespaces.get(api_version)
    if ns is None:
        ns = types.ModuleType("xla_array", base.__doc__)
        ns.__dict__.update({k: v for k, v in base.__dict__.items() if not k.startswith("__")
                            or k in ("__all__", "__version__")})
        ns.__array_api_version__ = api_version
        ns.meshgrid = lambda *arrays, indexing="xy": list(base.meshgrid(*arrays,
                                                                          indexing=indexing))
        ns.broadcast_arrays = lambda *arrays: list(base.broadcast_arrays(*arrays))
        ns.__array_namespace_info__ = lambda: __array_namespace_info__(lists=True)
        ns = _namespaces.setdefault(api_version, ns)
    return ns


class __array_namespace_info__:
    """Inspection of what this namespace offers (standard, 2023.12 and later)."""

    def __init__(self, lists: bool = False) -> None:
        self._lists = lists  # devices() as a list (before 2025.12) rather than a tuple

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

    def devices(self) -> Any:
        return list(devices()) if self._lists else tuple(devices())

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, Any]:
        if device is not None:
            resolve(device)
        out = {d.name: d for d in _dtypes.STANDARD}
        if kind is None:
            return out
        return {k: d for k, d in out.items() if _dtypes.isdtype(d, kind)}
