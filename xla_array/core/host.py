"""Host data going to and coming from arrays: ``host_leaf`` (a buffer leaf holding a copy of
host data) and ``HostCopy`` (what ``np.asarray(x)`` holds: a writable copy whose writes reach ``x``
when released). Below ``array``: it knows an Array only as an object with ``_node`` and
``_rebind``."""

from __future__ import annotations

import sys as _sys
import warnings as _warnings
from typing import Any

import numpy as np

from . import dtypes as _dtypes
from . import metrics as _metrics
from .devices import target
from .dtypes import DType
from .graph import Node, buffer_leaf, record
from .ops.structural import OPS
from .scalars import packed_buffer

__all__ = ["HostCopy", "host_leaf", "small_leaf"]


def host_leaf(x: np.ndarray, device: Any, dtype: DType | None = None,
              committed: bool = False) -> Node:
    """A buffer leaf holding a copy of host data."""
    d = dtype or _dtypes.from_numpy(x.dtype)
    x = np.asarray(x, dtype=d.np, order="C")  # ascontiguousarray would make 0-d 1-d
    base: Any = x
    while isinstance(base, np.ndarray):
        if isinstance(base, HostCopy):  # jaxlib keeps the last array it copied from: a copy
            x = x.copy()  # of its own, so that the HostCopy is released (and writes back)
            break
        base = base.base
    dev = target(device)  # a Device, or a Mesh / NamedSharding (each device gets its piece)
    _metrics.count("bytes_to_device", x.nbytes)
    return buffer_leaf(dev._put(x), x.shape, d, dev._place, committed)


def small_leaf(x: np.ndarray, device: Any) -> Node:
    """A buffer leaf holding the small host array ``x`` (fresh, never written afterwards) on
    the single device ``device``, its buffer shared by value (``scalars.packed_buffer``)."""
    return buffer_leaf(packed_buffer(x, device), x.shape, _dtypes.from_numpy(x.dtype), device)


class HostCopy(np.ndarray):
    """What ``np.asarray(x)`` holds: a writable host copy of ``x``'s value that remembers
    ``x``. When it is released (``np.asarray(x)`` returns a plain ndarray viewing it, so: when
    the last NumPy array using its memory goes), it compares itself with the value it was
    copied from and, if NumPy code wrote into it, rebinds ``x`` to the written value (a write
    into a view of a base Array reaches the base too, see the module docstring). So
    ``scipy.ndimage.correlate(a, w, output=x)``, Cython code filling a buffer and
    ``np.copyto(np.asarray(x), ...)`` work as with NumPy arrays, except that ``x`` shows the
    writes once that NumPy array is released rather than at once. If ``x`` itself changed in
    the meantime (``x += 1``, ``x[0] = ...``), the NumPy writes are not applied and a
    RuntimeWarning says so. The comparison costs one pass over the bytes at release."""

    _xla_owner: Any = None
    _xla_node: Any = None
    _xla_source: Any = None

    @classmethod
    def of(cls, owner: Any, node: Node, source: np.ndarray) -> np.ndarray:
        h = cls(source.shape, source.dtype)  # owning its memory: NumPy's views of it keep it
        np.copyto(h, source, casting="no")  # (not a view of a copy, which views would skip)
        h._xla_owner, h._xla_node, h._xla_source = owner, node, source
        return h

    def __array_finalize__(self, obj: Any) -> None:
        self._xla_owner = None  # views of a HostCopy remember nothing

    def __array_wrap__(self, arr: Any, context: Any = None, return_scalar: bool = False) -> Any:
        arr = arr.view(np.ndarray)  # ufunc results are plain NumPy arrays
        return arr[()] if return_scalar else arr

    def __repr__(self) -> str:
        return repr(self.view(np.ndarray))

    def __str__(self) -> str:
        return str(self.view(np.ndarray))

    def __del__(self) -> None:
        owner = self._xla_owner
        if owner is None or _sys.is_finalizing():
            return
        try:
            _write_back(owner, self._xla_node, self._xla_source, self)
        except Exception as exc:  # noqa: BLE001  (a finalizer: report, never raise)
            _warnings.warn(f"xla_array: writing np.asarray(x) back into x failed: {exc!r}",
                           RuntimeWarning, stacklevel=1)


def _write_back(owner: Any, node: Node, source: np.ndarray, h: np.ndarray) -> None:
    if h.shape != source.shape:
        return
    raw = h.view(np.ndarray)
    bits = f"u{min(raw.dtype.itemsize, 8)}"  # compared as bits: NaNs, -0.0 and all
    if np.array_equal(raw.reshape(-1).view(bits), source.reshape(-1).view(bits)):
        return
    leaf = host_leaf(raw.copy(), node.device, node.dtype, node.committed)
    cur = owner._node
    if cur is node:
        owner._rebind(leaf)
        return
    # x changed since np.asarray(x) (another write, or a write through a sibling view): the
    # elements NumPy wrote go over x's current value, as into shared memory
    if cur.shape != node.shape or cur.dtype != node.dtype:
        _warnings.warn("xla_array: writes into np.asarray(x) were not applied to x, because x "
                       "changed shape or dtype after np.asarray(x) was taken", RuntimeWarning,
                       stacklevel=2)
        return
    n = raw.dtype.itemsize // np.dtype(bits).itemsize
    words = (raw.reshape(-1).view(bits) != source.reshape(-1).view(bits)).reshape(-1, n)
    written = host_leaf(words.any(axis=1).reshape(raw.shape), node.device, _dtypes.bool,
                        node.committed)
    owner._rebind(record(OPS["select"], (written, leaf, cur)))
