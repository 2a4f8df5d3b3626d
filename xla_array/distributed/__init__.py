"""``xla_array.distributed``: one program over several processes, on XLA's distributed runtime.

Every process runs the same script; ``initialize()`` joins them (process 0 hosts the
coordinator), after which ``devices()`` lists every process's devices in one global order,
``sharding.make_mesh`` / ``Mesh`` take them, and operations on arrays over such a mesh run as
one SPMD program in every process, with XLA's collectives (gloo on CPU) between them::

    from xla_array import distributed, sharding
    distributed.initialize()               # reads XLA_ARRAY_COORDINATOR, ..._NUM_PROCESSES, ...
    mesh = sharding.make_mesh((distributed.process_count(),), ("p",))
    rows = sharding.NamedSharding(mesh, ("p", None))
    X = distributed.from_local(my_rows, rows)          # this process's rows of a global array
    print(float(xp.sum(X)))                            # the same value in every process

``python -m xla_array.distributed.launch -n N script.py`` starts N local processes with the
variables set. See docs/distributed.md.
"""

from __future__ import annotations

import math
import os
import socket
from typing import Any

import numpy as np

from ..api.array import Array
from ..core import backend as _backend
from ..core import backend_distributed as _bd
from ..core import backend_spmd as _backend_spmd
from ..core import flags as _flags
from ..core import spmd as _spmd
from ..core.devices import Device
from ..core.devices import devices as _all_devices
from ..core.dtypes import from_numpy
from ..core.graph import buffer_leaf
from ..sharding import Mesh, NamedSharding, constrain

__all__ = ["initialize", "shutdown", "is_initialized", "process_index", "process_count",
           "devices", "local_devices", "from_local", "gather"]

DEFAULT_TIMEOUT = 60.0


def _env_int(name: str) -> int | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    if not raw.lstrip("-").isdigit():
        raise ValueError(f"{name} must be an integer, got {raw!r}")
    return int(raw)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:  # asks the OS for a free port
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, *, local_device_count: int | None = None,
               timeout: float | None = None, platform: str | None = None,
               local_device_ids: list[int] | None = None) -> None:
    """Join this process to the others: process 0 starts the coordinator at
    ``coordinator_address`` (``host:port``), every process connects to it, and xla_array's
    CPU client spans every process's devices.

    Arguments left out come from ``XLA_ARRAY_COORDINATOR``, ``XLA_ARRAY_NUM_PROCESSES`` and
    ``XLA_ARRAY_PROCESS_ID`` (what the launcher sets); with none of them set at all, this is a
    single process (a coordinator of its own on 127.0.0.1). ``local_device_count``: CPU devices
    of this process (default ``XLA_ARRAY_CPU_DEVICES``, else 1). ``timeout`` (seconds, default
    ``XLA_ARRAY_DISTRIBUTED_TIMEOUT`` or 60) bounds joining, waiting for a peer at a step, and
    noticing a peer that died.

    ``platform`` (default ``XLA_ARRAY_DISTRIBUTED_PLATFORM``, else ``"cpu"``): ``"cuda"`` spans
    the processes' GPUs instead (jaxlib's CUDA plugin, NCCL; one process per GPU, chosen by
    ``local_device_ids``, default ``XLA_ARRAY_LOCAL_DEVICE_IDS``, e.g. ``"0"``, else every GPU
    the process sees). Written as JAX does it but not run here (no GPU); without the plugin,
    RuntimeError saying what to install, before anything else.

    Must come before the first array is created (RuntimeError otherwise), once per process
    (RuntimeError the second time). An unreachable coordinator, or fewer processes than
    ``num_processes``, raises TimeoutError naming the address, after ``timeout`` seconds.
    Turns the on-disk compile cache off for this process.
    """
    if platform is None:
        platform = os.environ.get("XLA_ARRAY_DISTRIBUTED_PLATFORM", "").strip().lower() or "cpu"
    if platform not in ("cpu", "cuda"):
        raise ValueError(f"platform must be 'cpu' or 'cuda', got {platform!r}")
    if local_device_ids is None:
        raw_ids = os.environ.get("XLA_ARRAY_LOCAL_DEVICE_IDS", "").strip()
        if raw_ids:
            if not all(p.strip().isdigit() for p in raw_ids.split(",")):
                raise ValueError(f"XLA_ARRAY_LOCAL_DEVICE_IDS must be GPU ids like '0' or "
                                 f"'0,1', got {raw_ids!r}")
            local_device_ids = [int(p) for p in raw_ids.split(",")]
    if local_device_ids is not None:
        if platform != "cuda":
            raise ValueError("local_device_ids picks GPUs: it needs platform='cuda' (CPU "
                             "devices are counted by local_device_count)")
        ids = list(local_device_ids)
        if not ids or any(isinstance(i, bool) or not isinstance(i, (int, np.integer))
                          or i < 0 for i in ids):
            raise ValueError(f"local_device_ids must be GPU ids (ints >= 0), got "
                             f"{local_device_ids!r}")
        local_device_ids = [int(i) for i in ids]
    if platform == "cuda" and local_device_count is not None:
        raise ValueError("local_device_count counts CPU devices; with platform='cuda' pick "
                         "GPUs with local_device_ids")
    env_addr = os.environ.get("XLA_ARRAY_COORDINATOR", "").strip() or None
    address = coordinator_address if coordinator_address is not None else env_addr
    n = num_processes if num_processes is not None else _env_int("XLA_ARRAY_NUM_PROCESSES")
    pid = process_id if process_id is not None else _env_int("XLA_ARRAY_PROCESS_ID")
    if address is None and n is None and pid is None:
        address, n, pid = f"127.0.0.1:{_free_port()}", 1, 0
    if address is None:
        raise ValueError("initialize() needs a coordinator address: coordinator_address= or "
                         "XLA_ARRAY_COORDINATOR=host:port")
    if not isinstance(address, str) or address.rpartition(":")[0] == "" \
            or not address.rpartition(":")[2].isdigit():
        raise ValueError(f"the coordinator address must be 'host:port', got {address!r}")
    if n is None or pid is None:
        raise ValueError("initialize() needs num_processes and process_id (arguments, or "
                         "XLA_ARRAY_NUM_PROCESSES and XLA_ARRAY_PROCESS_ID)")
    for name, v in (("num_processes", n), ("process_id", pid)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{name} must be an int, got {type(v).__name__}")
    n, pid = int(n), int(pid)
    if n < 1:
        raise ValueError(f"num_processes must be at least 1, got {n}")
    if not 0 <= pid < n:
        raise ValueError(f"process_id must be in [0, {n}), got {pid}")
    if local_device_count is None:
        local_device_count = _env_int("XLA_ARRAY_CPU_DEVICES")
    if local_device_count is not None and (isinstance(local_device_count, bool)
                                           or int(local_device_count) < 1):
        raise ValueError(f"local_device_count must be a positive int, got {local_device_count!r}")
    if timeout is None:
        raw = os.environ.get("XLA_ARRAY_DISTRIBUTED_TIMEOUT", "").strip()
        timeout = float(raw) if raw else DEFAULT_TIMEOUT
    if not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if platform == "cuda":
        local_device_count = None  # (XLA_ARRAY_CPU_DEVICES is the local CPU client's)
    _bd.initialize(address, n, pid, local_device_count=(
        None if local_device_count is None else int(local_device_count)), timeout=float(timeout),
        platform=platform, local_device_ids=local_device_ids)
    # cached executables are keyed by mesh devices, which name no process: a single-process
    # program over the same device names must never be loaded here
    _flags.set(cache_dir=None)


def shutdown() -> None:
    """Leave the runtime (also done at exit). Arrays over several processes cannot be
    computed afterwards, and this process cannot ``initialize`` again."""
    _bd.shutdown()


def is_initialized() -> bool:
    return _bd.state() is not None


def _state() -> _bd.State:
    st = _bd.state()
    if st is None:
        raise RuntimeError("xla_array.distributed is not initialized: call "
                           "xla_array.distributed.initialize() first")
    return st


def process_index() -> int:
    """This process's index, 0 to ``process_count() - 1`` (0 when not initialized)."""
    st = _bd.state()
    return st.process_id if st is not None else 0


def process_count() -> int:
    """How many processes run the program (1 when not initialized)."""
    st = _bd.state()
    return st.num_processes if st is not None else 1


def devices() -> list[Device]:
    """Every CPU device of every process, in one global order (process 0's first), the same
    in every process: ``cpu:0`` ... ``cpu:N-1`` (with ``platform="cuda"``, every GPU:
    ``cuda:0`` ...)."""
    st = _bd.state()
    return list(_all_devices(st.platform if st is not None else "cpu"))


def local_devices() -> list[Device]:
    """This process's devices (those it can put data on and read back)."""
    return [d for d in devices() if d._local]


def _as_sharding(sharding: Any) -> NamedSharding:
    if isinstance(sharding, Mesh):
        raise TypeError("from_local() needs a NamedSharding (how the global array is cut), not "
                        "a Mesh")
    if not isinstance(sharding, NamedSharding):
        raise TypeError(f"from_local() takes a NamedSharding, got {type(sharding).__name__}")
    return sharding


def from_local(local_data: Any, sharding: NamedSharding,
               global_shape: tuple[int, ...] | None = None) -> Array:
    """A global Array from each process's piece: ``local_data`` (NumPy data or an xla_array
    array) is the block of the global array that this process's devices hold under
    ``sharding`` (with one process per slot of a cut axis: this process's rows, say).

    ``global_shape`` defaults to the local shape times the number of process blocks along
    each dimension. Every process must call it, with pieces of one dtype and layout.
    Dimensions that do not divide evenly, or a piece of the wrong shape, raise ValueError.
    """
    s = _as_sharding(sharding)
    if isinstance(local_data, Array):
        local = np.asarray(local_data)
    else:
        local = np.asarray(local_data)
    dt = from_numpy(local.dtype)  # TypeError for object arrays and other unsupported dtypes
    mesh = s.mesh
    ndim = local.ndim
    if len(s._norm) != ndim:
        raise ValueError(f"from_local(): the sharding's spec {s.spec} has {len(s._norm)} "
                         f"entries but the local data has {ndim} dimensions (shape "
                         f"{local.shape})")
    if not mesh._spmd:  # one device (a single process): the local data is the whole array
        if global_shape is not None and tuple(global_shape) != local.shape:
            raise ValueError(f"from_local(): on a mesh of one device the local data is the "
                             f"whole array, shape {local.shape}, not {tuple(global_shape)}")
        return Array(buffer_leaf(s._put(np.ascontiguousarray(local)), local.shape, dt, mesh,
                                 True))
    devs = mesh.device_list
    hs_text = _spmd.spec_hlo(mesh._sizes, mesh.axis_names, s._norm)
    cuts = [math.prod(mesh.shape[a] for a in d) for d in s._norm]  # pieces per dimension
    # the tile index of every device along every dimension (copies share a tile)
    tile_of = _tile_indices(mesh, s._norm)
    mine = [i for i, d in enumerate(devs) if d._local]
    if not mine:
        raise ValueError("from_local(): the mesh has none of this process's devices")
    spans = []
    for k in range(ndim):
        held = sorted({tile_of[i][k] for i in mine})
        if held != list(range(held[0], held[-1] + 1)):
            raise ValueError(f"from_local(): this process's devices hold tiles {held} of "
                             f"dimension {k}, not one contiguous block; order the mesh so each "
                             f"process's devices are adjacent")
        spans.append((held[0], len(held)))
    if global_shape is None:
        gshape = []
        for k in range(ndim):
            first, count = spans[k]
            if local.shape[k] % count:
                raise ValueError(f"from_local(): dimension {k} of the local data (size "
                                 f"{local.shape[k]}) cannot be cut evenly into the {count} "
                                 f"pieces this process's devices hold")
            gshape.append(local.shape[k] // count * cuts[k])
        global_shape = tuple(gshape)
    else:
        global_shape = tuple(int(v) for v in global_shape)
        if len(global_shape) != ndim:
            raise ValueError(f"from_local(): global_shape {global_shape} has {len(global_shape)} "
                             f"dimensions but the local data has {ndim}")
        for k in range(ndim):
            if global_shape[k] % cuts[k]:
                raise ValueError(f"from_local(): dimension {k} of global_shape {global_shape} "
                                 f"(size {global_shape[k]}) cannot be cut evenly into "
                                 f"{cuts[k]} pieces (uneven shards are not supported)")
            want = global_shape[k] // cuts[k] * spans[k][1]
            if local.shape[k] != want:
                raise ValueError(f"from_local(): this process holds {spans[k][1]} of "
                                 f"{cuts[k]} pieces of dimension {k} of {global_shape}, so "
                                 f"its local data needs size {want} there, not "
                                 f"{local.shape[k]} (local shape {local.shape})")
    tile = [global_shape[k] // cuts[k] for k in range(ndim)]
    pieces = []
    for i in mine:
        sl = tuple(slice((tile_of[i][k] - spans[k][0]) * tile[k],
                         (tile_of[i][k] - spans[k][0] + 1) * tile[k]) for k in range(ndim))
        pieces.append(_backend.put(np.ascontiguousarray(local[sl]), devs[i]._pjrt))
    buf = _backend_spmd.assemble(global_shape, local.dtype, tuple(mesh._pjrt_devices),
                                 _backend_spmd.hlo(hs_text), pieces)
    return Array(buffer_leaf(buf, global_shape, dt, mesh, True))


def _tile_indices(mesh: Mesh, spec: tuple) -> list[tuple[int, ...]]:
    """For each device of ``mesh`` (row-major), its tile's index along each dimension."""
    sizes = mesh.shape
    coords = list(np.ndindex(*mesh._sizes))
    pos = {a: i for i, a in enumerate(mesh.axis_names)}
    out = []
    for c in coords:
        idx = []
        for names in spec:
            t = 0
            for a in names:  # first name major
                t = t * sizes[a] + c[pos[a]]
            idx.append(t)
        out.append(tuple(idx))
    return out


def gather(x: Any) -> np.ndarray:
    """The whole value of ``x`` as a NumPy array, in every process (each process must call
    it: XLA all-gathers the pieces). Arrays on one device or held whole by this process
    are read directly."""
    if not isinstance(x, Array):
        raise TypeError(f"gather() takes an xla_array array, got {type(x).__name__}")
    place = x.device
    if isinstance(place, Mesh) and place._spmd and not all(d._local for d in place.device_list):
        whole = NamedSharding(place, (None,) * x.ndim)
        x = constrain(x, whole)
    return np.array(np.asarray(x))
