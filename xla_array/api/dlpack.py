"""DLPack export (``__dlpack__``, ``__dlpack_device__``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import backend as _backend

_DL_CPU, _DL_CUDA = 1, 2


def dlpack_device(x: Any) -> tuple[int, int]:
    d = x.device
    return (_DL_CUDA if d.platform in ("cuda", "gpu") else _DL_CPU, d.id)


def to_dlpack(x: Any, *, stream: Any, max_version: tuple | None, dl_device: tuple | None,
              copy: bool | None) -> Any:
    """A DLPack capsule of ``x``'s value (computed first if pending).

    Zero-copy and read-only where the consumer speaks DLPack >= 1.0; a legacy (unversioned)
    request gets jaxlib's export of the buffer. BufferError where export is impossible
    (for example bfloat16/float8, which DLPack cannot describe, or a foreign ``dl_device``).
    """
    own = dlpack_device(x)
    if dl_device is not None and tuple(dl_device) != own:
        if tuple(dl_device)[0] != _DL_CPU or copy is False:
            raise BufferError(f"cannot export an array on {x.device} to DLPack device "
                              f"{dl_device}")
        copy = True
    if stream is not None and own[0] == _DL_CPU:
        raise ValueError("__dlpack__: stream must be None for CPU arrays")
    if x.dtype.kind not in "biufc" or x.dtype.name in ("bfloat16", "float8_e4m3fn",
                                                        "float8_e5m2"):
        raise BufferError(f"DLPack cannot describe dtype {x.dtype.name}")
    versioned = max_version is not None and tuple(max_version) >= (1, 0)
    if own[0] == _DL_CPU or copy:
        host = x._host("__dlpack__")
        if copy:
            host = np.array(host)
        try:
            if versioned:
                return host.__dlpack__(max_version=tuple(max_version or ()))
            if copy:
                return host.__dlpack__()
        except (BufferError, TypeError) as err:
            raise BufferError(str(err)) from None
    try:
        return _backend.to_dlpack(x._buffer("__dlpack__"))
    except Exception as err:  # noqa: BLE001  (jaxlib raises several types here)
        raise BufferError(f"DLPack export failed: {err}") from None
