"""The runtime layer for arrays spread over several devices (jaxlib comes through ``backend``).

A *global* buffer is one jaxlib ``ArrayImpl`` over several devices whose sharding is an
``HloSharding`` (tiles, device order, replicated copies). We build them from per-device
buffers (``put_global``); SPMD executables return them (``_backend.Executable.run``).

Reading the per-device pieces back must not import jax: jaxlib's own helpers for that
(``_arrays``, ``disassemble_into_single_device_arrays``, ``_fully_replicated_shard``) build
shard objects through ``jax.core``. Instead ``shards`` rotates the device order of the global
array with ``reorder_shards`` (no copy) and exports its first piece through DLPack, a zero-copy
read-only view of that device's memory. DLPack cannot describe bfloat16/float8, so those are
first bit-cast to unsigned integers of the same width by a tiny SPMD program.
"""

from __future__ import annotations

import functools
import math
import threading
from typing import Any

import numpy as np

from . import backend as _backend
from .backend import BackendError, _Aval, _Capsule, _HloSharding, _jax, xc

__all__ = ["hlo", "global_sharding", "layout", "is_global", "tiles", "shard_slices",
           "put_global", "assemble", "shards", "gather", "derived_mesh", "sdy_mesh", "sdy_sharding"]

_lock = threading.Lock()
_GLOBAL: dict[tuple, Any] = {}
_REUSE = xc.ArrayCopySemantics.REUSE_INPUT
_BITCAST = {np.dtype(d): np.dtype(u) for d, u in (
    ("bfloat16", np.uint16), ("float8_e4m3fn", np.uint8), ("float8_e5m2", np.uint8))}
_UINT_MLIR = {np.dtype(np.uint16): "ui16", np.dtype(np.uint8): "ui8"}
_MLIR = {"bfloat16": "bf16", "float8_e4m3fn": "f8E4M3FN", "float8_e5m2": "f8E5M2"}


@functools.lru_cache(maxsize=1024)
def hlo(text: str) -> Any:
    """An ``HloSharding`` from its text (``{devices=[2,1]0,1}``, ``{replicated}``...)."""
    return xc.HloSharding.from_string(text)


def global_sharding(devices: tuple, hs: Any) -> Any:
    """The (cached) jaxlib sharding object of global buffers laid out as ``hs`` on ``devices``.

    ``devices`` are PJRT devices in logical order (logical id i is ``devices[i]``).
    """
    key = (devices, str(hs))
    sh = _GLOBAL.get(key)
    if sh is None:
        with _lock:
            sh = _GLOBAL.setdefault(key, _HloSharding(xc.DeviceList(devices), hs))
    return sh


def is_global(buf: Any) -> bool:
    return type(buf._sharding) is _HloSharding


def layout(buf: Any) -> tuple[tuple, Any]:
    """(PJRT devices in logical order, HloSharding) of a global buffer."""
    sh = buf._sharding
    return tuple(sh._internal_device_list), sh._hlo


@functools.lru_cache(maxsize=4096)
def _tiles_of(text: str, ndev: int, ndim: int) -> tuple:
    hs = hlo(text)
    if hs.is_replicated():
        return ("replicated",)
    if hs.is_maximal() or hs.is_manual() or hs.is_unknown() or hs.is_unreduced():
        raise BackendError(f"xla_array cannot read arrays with sharding {text}")
    dims = list(hs.tile_assignment_dimensions())
    devs = list(hs.tile_assignment_devices())
    rep = bool(hs.replicate_on_last_tile_dim())
    extra = len(dims) - ndim - (1 if rep else 0)
    if extra or len(devs) != ndev or math.prod(dims) != ndev:
        raise BackendError(f"xla_array cannot read arrays with sharding {text} "
                           f"({ndim}-d, {ndev} devices)")
    if not rep:
        dims.append(1)
    if all(d == 1 for d in dims[:-1]):
        return ("replicated",)
    # the order of the copies of one tile does not matter: sort each replica group
    groups = np.sort(np.asarray(devs).reshape(-1, dims[-1]), axis=1)
    return (tuple(dims), tuple(int(i) for i in groups.ravel()))


def tiles(hs: Any, ndev: int, ndim: int) -> tuple:
    """``("replicated",)`` or ``(dims, devices)``: the tile grid ``dims`` (one entry per array
    dimension plus a last one counting replicated copies) and the logical device id of each
    tile, row-major. Raises BackendError for layouts that are not tilings."""
    return _tiles_of(str(hs), ndev, ndim)


@functools.lru_cache(maxsize=4096)
def _slices_of(text: str, ndev: int, shape: tuple) -> tuple:
    t = _tiles_of(text, ndev, len(shape))
    if t[0] == "replicated":
        full = tuple(slice(0, n) for n in shape)
        return tuple(full for _ in range(ndev))
    dims, devs = t
    out: list[Any] = [None] * ndev
    grid = np.asarray(devs).reshape(dims)
    for idx in np.ndindex(*dims):
        sl = []
        for i, n in enumerate(shape):
            chunk = -(-n // dims[i])
            start = min(idx[i] * chunk, n)
            sl.append(slice(start, min(start + chunk, n)))
        out[int(grid[idx])] = tuple(sl)
    return tuple(out)


def shard_slices(hs: Any, ndev: int, shape: tuple) -> tuple:
    """The index (a tuple of slices into the global array) held by each logical device."""
    return _slices_of(str(hs), ndev, tuple(shape))


def put_global(x: np.ndarray, devices: tuple, hs: Any) -> Any:
    """Copy host array ``x`` onto ``devices`` laid out as ``hs``: each device gets its piece.

    Over several processes (``xla_array.distributed``) each process passes the whole ``x`` and
    puts only the pieces of its own devices."""
    x = np.asarray(x, order="C")  # (np.ascontiguousarray would make a 0-d array 1-d)
    slices = shard_slices(hs, len(devices), x.shape)
    pieces = [_backend.put(np.asarray(x[s], order="C") if x.ndim else x, d)
              for s, d in zip(slices, devices) if _backend.is_local(d)]
    return assemble(x.shape, x.dtype, devices, hs, pieces, x)


def assemble(shape: tuple, dtype: np.dtype, devices: tuple, hs: Any, pieces: list,
             x: np.ndarray | None = None) -> Any:
    """A global buffer from this process's per-device ``pieces`` (one per local device of
    ``devices``, in order); ``x``: the whole value, when known (kept for bfloat16/float8)."""
    host = None
    if x is not None and dtype in _BITCAST:  # reading back needs no program: keep a host copy
        host = x.copy()
        host.flags.writeable = False
    try:
        return xc.ArrayImpl(_Aval(tuple(shape), dtype, host), global_sharding(devices, hs), pieces,
                            True, True)  # committed, skip checks (jaxlib's would import jax)
    except (xc.XlaRuntimeError, ValueError) as e:
        raise BackendError(str(e)) from None


def _first_piece(buf: Any) -> np.ndarray:
    return np.from_dlpack(_Capsule(_jax.buffer_to_dlpack_managed_tensor(buf)))


def shards(buf: Any) -> list[tuple[Any, np.ndarray]]:
    """(PJRT device, read-only host view of its piece) for each device of a global buffer,
    in logical order. Zero copy on CPU; other platforms copy each piece to the host."""
    devices, hs = layout(buf)
    dtype = buf.aval.dtype
    if buf.is_deleted():
        raise BackendError("the buffer has been deleted or donated")
    if devices[0].platform != "cpu":
        # jaxlib offers no jax-free per-device read for accelerator memory; this path makes
        # jaxlib try `import jax` (a single-device GPU buffer is read without it:
        # backend_cuda.to_numpy_cuda; not run on several GPUs yet).
        return [(a._sharding._device, a._single_device_array_to_np_array_did_copy()[0])
                for a in buf._arrays]
    if dtype in _BITCAST:
        if buf.aval.host is not None:
            return [(d, buf.aval.host[s]) for d, s in
                    zip(devices, shard_slices(hs, len(devices), buf.aval.shape))]
        raw = _bitcast(buf, devices, hs)
        return [(d, a.view(dtype)) for d, a in shards(raw)]
    out = []
    n = len(devices)
    try:
        buf.block_until_ready()
        for k in range(n):
            if not _backend.is_local(devices[k]):  # another process's (distributed)
                continue
            if k == 0:
                piece = _first_piece(buf)
            else:
                order = devices[k:] + devices[:k]
                rot = _jax.reorder_shards(buf, global_sharding(order, hs), _REUSE)
                piece = _first_piece(rot)
            if piece.dtype != dtype:
                piece = piece.view(dtype)
            out.append((devices[k], piece))
    except (xc.XlaRuntimeError, BufferError, TypeError) as e:
        raise BackendError(f"cannot read the pieces of a sharded array: {e}") from None
    return out


def gather(buf: Any) -> np.ndarray:
    """The value of a global buffer on the host (a read-only array; zero copy if replicated)."""
    aval = buf.aval
    if aval.host is not None:
        return aval.host
    devices, hs = layout(buf)
    shape = tuple(aval.shape)
    n = len(devices)
    replicated = tiles(hs, n, len(shape))[0] == "replicated"
    if not replicated and not all(_backend.is_local(d) for d in devices):
        held = sum(map(_backend.is_local, devices))
        raise BackendError(f"this array (shape {shape}) is spread over the devices of several "
                           f"processes and this process holds only {held} of its {n} pieces: "
                           f"use xla_array.distributed.gather(x) for the whole value in every "
                           f"process, or sharding.local_shards(x) for this process's pieces")
    if replicated and devices[0].platform == "cpu" and aval.dtype not in _BITCAST:
        out = _first_piece(buf)
        return out if out.dtype == aval.dtype else out.view(aval.dtype)
    out = np.empty(shape, aval.dtype)
    done: set = set()
    for (_d, piece), sl in zip(shards(buf), shard_slices(hs, n, shape)):
        key = tuple((s.start, s.stop) for s in sl)
        if key in done:
            continue
        done.add(key)
        region = out[sl]
        region[...] = piece[tuple(slice(0, m) for m in region.shape)]
    out.flags.writeable = False
    return out


def derived_mesh(hs: Any, ndev: int, ndim: int) -> tuple[list, list | None, list]:
    """A mesh on which ``hs`` is a plain named sharding: (axes as (name, size), logical device
    ids or None when in order, per-dimension axis-name tuples)."""
    t = tiles(hs, ndev, ndim)
    if t[0] == "replicated":
        return [("r", ndev)], None, [() for _ in range(ndim)]
    dims, devs = t
    axes = [(f"t{i}", d) for i, d in enumerate(dims[:-1]) if d > 1]
    if dims[-1] > 1:
        axes.append(("r", dims[-1]))
    spec = [((f"t{i}",) if d > 1 else ()) for i, d in enumerate(dims[:-1])]
    ids = list(devs)
    return axes, (None if ids == list(range(ndev)) else ids), spec


def sdy_mesh(axes: list, ids: list | None) -> str:
    """The body of an ``sdy.mesh`` op: ``<["x"=2, "y"=2]>`` (plus device ids when not in order)."""
    body = ", ".join(f'"{a}"={s}' for a, s in axes)
    return f"<[{body}]" + (f", device_ids=[{', '.join(map(str, ids))}]>" if ids else ">")


def sdy_sharding(mesh_name: str, spec: Any) -> str:
    """``#sdy.sharding<@mesh, [{"x"}, {}]>``: one tuple of mesh axis names per dimension."""
    dims = ", ".join("{" + ", ".join(f'"{a}"' for a in d) + "}" for d in spec)
    return f"#sdy.sharding<@{mesh_name}, [{dims}]>"


def _bitcast(buf: Any, devices: tuple, hs: Any) -> Any:
    """Run ``bitcast_convert`` to the same-width unsigned type, keeping the layout."""
    aval = buf.aval
    shape, dtype = tuple(aval.shape), aval.dtype
    udt = _BITCAST[dtype]
    exe = _bitcast_exe(devices, str(hs), shape, dtype.name)
    return exe.run([buf], [(shape, udt)])[0]


@functools.lru_cache(maxsize=64)
def _bitcast_exe(devices: tuple, hs_text: str, shape: tuple, dtname: str) -> Any:
    n = len(devices)
    axes, ids, spec = derived_mesh(hlo(hs_text), n, len(shape))
    s = sdy_sharding("m", spec)
    dims = "x".join(map(str, shape))
    src = f"tensor<{dims}x{_MLIR[dtname]}>" if shape else f"tensor<{_MLIR[dtname]}>"
    u = _UINT_MLIR[_BITCAST[np.dtype(dtname)]]
    dst = f"tensor<{dims}x{u}>" if shape else f"tensor<{u}>"
    text = (f"module @bitcast attributes {{mhlo.num_partitions = {n} : i32, "
            f"mhlo.num_replicas = 1 : i32}} {{\n  sdy.mesh @m = {sdy_mesh(axes, ids)}\n"
            f"  func.func public @main(%arg0: {src} {{sdy.sharding = {s}}}) -> "
            f"({dst} {{sdy.sharding = {s}}}) {{\n"
            f'    %0 = "stablehlo.bitcast_convert"(%arg0) : ({src}) -> {dst}\n'
            f'    "func.return"(%0) : ({dst}) -> ()\n  }}\n}}\n')
    return _backend.compile(text, list(devices))
