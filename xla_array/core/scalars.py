"""Runtime scalar parameters as device buffers: Python scalars are parameters of the compiled
graph, never constants, so each run passes their values. Buffers are cached by exact value bits
per device (a loop passes the same learning rate every step), and a graph of fusing ops with
many scalars passes them packed, one vector per dtype (``packs_scalars``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .graph import Node

__all__ = ["PACK_MIN", "scalar_buffer_of", "packs_scalars", "packed_buffer", "scalar_args"]

# One dict per device (found by id(): hashing a Device or Mesh runs Python code); the entry
# holds the device itself, so its id cannot be reused while the entry exists.
_scalars: dict[int, tuple[Any, dict[Any, Any]]] = {}
_SCALAR_CACHE = 4096


def _value_key(v: Any) -> Any:
    t = type(v)
    if t is float:
        return v.hex()  # distinguishes -0.0 from 0.0, and NaN payloads compare equal as text
    if t is int or t is bool:
        return (t, v)
    if t is complex:
        return (v.real.hex(), v.imag.hex())
    return np.asarray(v).tobytes()


def _scalar_cache(device: Any) -> dict[Any, Any]:
    entry = _scalars.get(id(device))
    if entry is None or entry[0] is not device:
        entry = _scalars[id(device)] = (device, {})
    return entry[1]


def _new_scalar(cache: dict[Any, Any], key: Any, value: Any, dtype: Any, device: Any) -> Any:
    buf = device._put(np.asarray(value, dtype=dtype.np), owned=True)  # a Device, or a Mesh
    if len(cache) >= _SCALAR_CACHE:  # drop the oldest quarter (dicts keep order)
        for k in list(cache)[:_SCALAR_CACHE // 4]:
            cache.pop(k, None)
    cache[key] = buf
    return buf


def scalar_buffer_of(value: Any, dtype: Any, device: Any) -> Any:
    """A device buffer holding a runtime scalar parameter (cached by exact value bits)."""
    cache = _scalar_cache(device)
    t = type(value)
    # a nonzero, non-NaN float or an int is its own key (equal values convert to the same
    # bits); zeros (-0.0 == 0.0), NaNs, bools and other types go by their exact bits
    key = ((dtype, value) if (t is float and value and value == value) or t is int
           else (dtype, _value_key(value)))
    buf = cache.get(key)
    return buf if buf is not None else _new_scalar(cache, key, value, dtype, device)


# From this many scalars on, a graph of fusing ops only (``OpDef.fuses``: elementwise and
# layout ops, which XLA compiles into one loop) takes its scalars packed in one vector per
# dtype, sliced apart in the module: one argument per dtype instead of one per scalar, since
# jaxlib pays a fixed cost per argument of an execution. Never in other graphs: each fusion
# that reads a slice has its offset baked in, so the repeated steps of a loop become distinct
# fusions and XLA compiles a kernel for each, where with 0-d parameters the steps share one
# (figures in docs/performance.md, "Measured choices").
PACK_MIN = 8


def packs_scalars(order: list[Node], scalars: list[Node], device: Any) -> bool:
    """Whether the graph ``order`` passes its ``scalars`` packed (see ``PACK_MIN``)."""
    if len(scalars) < PACK_MIN or device._spmd:
        return False
    for n in order:
        if not n.op.fuses:
            return False
    return True


# small host arrays (packed scalar vectors, the positions of combined writes: host.small_leaf)
# by exact bytes and shape: a loop flushed every few steps passes the same values each time
# and needs no host->device copy after the first
_packed: dict[int, tuple[Any, dict[Any, Any]]] = {}
_PACKED_CACHE = 1024


def packed_buffer(v: np.ndarray, device: Any) -> Any:
    """A device buffer holding the small host array ``v`` (fresh, never written afterwards),
    shared with the earlier calls of equal dtype, shape and bytes."""
    entry = _packed.get(id(device))
    if entry is None or entry[0] is not device:
        entry = _packed[id(device)] = (device, {})
    cache = entry[1]
    key = (v.dtype.char, v.shape, v.tobytes())
    buf = cache.get(key)
    if buf is None:
        buf = device._put(v, owned=True)
        if len(cache) >= _PACKED_CACHE:  # drop the oldest quarter
            for k in list(cache)[:_PACKED_CACHE // 4]:
                cache.pop(k, None)
        cache[key] = buf
    return buf


def scalar_args(scalars: list[Node], device: Any, args: list) -> None:
    """Append the device buffers of runtime scalar parameters ``scalars`` to ``args``
    (``scalar_buffer_of`` for each, inlined: a graph flushed from a loop has dozens)."""
    cache = _scalar_cache(device)
    get = cache.get
    for n in scalars:
        v = n.value
        t = type(v)
        key = ((n.dtype, v) if (t is float and v and v == v) or t is int
               else (n.dtype, _value_key(v)))
        buf = get(key)
        args.append(buf if buf is not None else _new_scalar(cache, key, v, n.dtype, device))
