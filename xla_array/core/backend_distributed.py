"""The runtime layer for several processes (jaxlib comes through ``backend``).

XLA's distributed runtime: process 0 hosts the coordination service
(``get_distributed_runtime_service``), every process connects a client to it
(``get_distributed_runtime_client``), CPU collectives go over gloo
(``make_gloo_tcp_collectives``), and the CPU client is built with both
(``make_cpu_client(distributed_client=..., node_id=..., num_nodes=..., collectives=...)``): its
``devices()`` are every process's devices, its ``local_devices()`` this process's. The client
is installed as ``backend``'s CPU client, so every later array and executable uses it.
With ``platform="cuda"`` (one process per GPU) the CUDA plugin's client is made with the
distributed client instead (``backend_cuda.distributed_cuda_client``: NCCL collectives; not
run here, there being no GPU) and installed as ``backend``'s CUDA client; the CPU client then
stays this process's own.

Executables whose devices span processes (``SpanningExecutable``) check, before each run,
through the coordinator's key-value store, that every process runs the same program at the
same step (a digest of its text), and wait for the run to finish, so that a mismatch raises
ValueError and a peer that died raises an error naming it, instead of a collective waiting.
"""

from __future__ import annotations

import atexit
import hashlib
import socket
import sys
import threading
import time
from typing import Any

import numpy as np

from . import backend as _backend
from . import backend_cuda as _cuda
from .backend import BackendError, Executable, _jax, xc

__all__ = ["State", "initialize", "shutdown", "state", "ProgramMismatch", "PeerTimeout",
           "SpanningExecutable"]

_KV_PREFIX = "xla_array"
_JOIN_BACKSTOP = 3600  # seconds added to XLA's own join deadlines (see initialize)


class ProgramMismatch(BackendError, ValueError):
    """Processes were about to run different programs at the same step."""


class PeerTimeout(BackendError, TimeoutError):
    """A peer did not reach the same step (or the coordinator) in time."""


class State:
    """The distributed runtime of this process (one per process, for its lifetime)."""

    def __init__(self, address: str, num_processes: int, process_id: int, timeout: float,
                 service: Any, client: Any, cpu: Any, platform: str = "cpu") -> None:
        self.platform = platform  # whose client spans the processes: "cpu" or "cuda"
        self.address = address
        self.num_processes = num_processes
        self.process_id = process_id
        self.timeout = timeout
        self.service = service
        self.client = client
        self.cpu = cpu
        self.step = 0
        self.lock = threading.Lock()
        self.closed = False


_STATE: list[State] = []
_ABANDONED: list[Any] = []  # the service and client of a join that timed out (see _connect)
_ENDED: list[bool] = []


def _default_known() -> bool:
    """Whether this process's default device was settled already (an array was made: on a
    GPU, where the CPU client may not exist yet)."""
    from . import devices  # (load order: devices reads state())
    return bool(devices._default)


def state() -> State | None:
    """This process's distributed runtime, or None before ``initialize`` / after ``shutdown``."""
    return _STATE[0] if _STATE and not _STATE[0].closed else None


def _err_text(e: Exception) -> str:
    return str(e).splitlines()[0][:300] if str(e) else type(e).__name__


def initialize(address: str, num_processes: int, process_id: int, *,
               local_device_count: int | None, timeout: float, platform: str = "cpu",
               local_device_ids: list[int] | None = None) -> State:
    """Start (process 0) or join the coordination service at ``address`` and make the CPU
    (or CUDA) client over every process's devices. RuntimeError when that platform's client
    exists already, or (CUDA) when the plugin is missing."""
    with _backend._LOCK:
        if _STATE or _ENDED:
            raise RuntimeError("xla_array.distributed.initialize() was already called in this "
                               "process (it runs once per process; shutdown() ends it for good)")
        if platform == "cuda":
            _cuda.require_cuda_plugin()  # before any network: RuntimeError naming the package
            if _backend._PLATFORMS is not None:
                raise RuntimeError("xla_array.distributed.initialize(platform='cuda') must be "
                                   "called before the first array is created (or devices "
                                   "are listed): this process already looked for its GPUs")
        elif "cpu" in _backend._CLIENTS or _default_known():
            raise RuntimeError("xla_array.distributed.initialize() must be called before the "
                               "first array is created (or devices are listed): this process "
                               "already made its single-process CPU client")
        ms = max(1, int(timeout))
        # XLA's own deadlines for joining are a backstop well past ``timeout``: when one of
        # them passes, its connect() does not return an error but ends the process (see
        # _connect); ``timeout`` itself is kept here, in Python
        backstop = ms + _JOIN_BACKSTOP
        service = None
        if process_id == 0:
            try:
                service = _jax.get_distributed_runtime_service(
                    address, num_processes, heartbeat_timeout=ms,
                    cluster_register_timeout=backstop, shutdown_timeout=ms, recoverable=True)
            except _backend._XLA_ERRORS as e:
                raise RuntimeError(f"cannot start the coordinator at {address}: "
                                   f"{_err_text(e)}") from None
        deadline = time.monotonic() + timeout
        if process_id != 0:  # XLA aborts the process when connect() finds nobody: ask first
            _wait_reachable(address, process_id, num_processes, timeout)
        try:
            client = _jax.get_distributed_runtime_client(
                address, process_id, init_timeout=backstop, shutdown_timeout=ms,
                heartbeat_timeout=ms, shutdown_on_destruction=False)
        except _backend._XLA_ERRORS as e:
            raise RuntimeError(f"cannot make the client of the coordinator at {address}: "
                               f"{_err_text(e)}") from None
        _ABANDONED.append((service, client))  # kept alive while connect() may be pending
        _connect(client, address, process_id, num_processes, timeout, deadline)
        _ABANDONED.clear()
        if platform == "cuda":
            gpu = _cuda.distributed_cuda_client(client, process_id, num_processes,
                                                local_device_ids)
            st = State(address, num_processes, process_id, float(timeout), service, client, gpu,
                       "cuda")
            _backend._CLIENTS["cuda"] = gpu
            _backend._PLATFORMS = ["cpu", "cuda"]  # (no second, single-process CUDA client)
        else:
            try:
                collectives = _jax.make_gloo_tcp_collectives(distributed_client=client)
                cpu = xc.make_cpu_client(asynchronous=True, distributed_client=client,
                                         node_id=process_id, num_nodes=num_processes,
                                         collectives=collectives,
                                         num_devices=local_device_count)
            except _backend._XLA_ERRORS as e:
                raise RuntimeError(f"cannot make the distributed CPU client: "
                                   f"{_err_text(e)}") from None
            st = State(address, num_processes, process_id, float(timeout), service, client, cpu)
            _backend._CLIENTS["cpu"] = cpu
        _backend._SPANNING[:] = [SpanningExecutable]
        _STATE.append(st)
    atexit.register(shutdown)
    return st


def _connect(client: Any, address: str, process_id: int, num_processes: int,
             timeout: float, deadline: float) -> None:
    """``client.connect()``, bounded by ``deadline`` in Python: TimeoutError naming the address
    and the process counts when not every process has joined by then.

    XLA's connect() returns only once all ``num_processes`` processes have registered, and
    when its own deadline passes it does not return an error: it calls the client's error
    callback, whose default ends the process (``LOG(QFATAL)``, "Terminating process because
    the JAX distributed service detected fatal errors"); a Python callback cannot stand in
    (jaxlib cannot convert the ``absl::Status`` argument: ``std::bad_cast``, fatal on XLA's
    background threads). So connect() runs on a helper thread, with XLA's deadlines an hour
    later, and this thread waits for it until ``deadline``: a wrong count or a process that
    never started gives TimeoutError here, in every process that did start, and the process
    exits as usual (the pending connect dies with it)."""
    done: list[BaseException | None] = []

    def join() -> None:
        try:
            client.connect()
        except BaseException as e:  # noqa: BLE001  (handed to the waiting thread)
            done.append(e)
        else:
            done.append(None)

    t = threading.Thread(target=join, name="xla_array-distributed-connect", daemon=True)
    t.start()
    t.join(max(0.0, deadline - time.monotonic()))
    if not done:
        _ENDED.append(True)  # (a second initialize would meet the pending join)
        raise TimeoutError(
            f"process {process_id} reached the coordinator at {address}, but not all "
            f"{num_processes} processes joined it within {timeout:g} s (is num_processes="
            f"{num_processes} right, and did every process from 0 to {num_processes - 1} "
            f"start?); this process cannot use xla_array.distributed any more") from None
    err = done[0]
    if err is not None:
        raise TimeoutError(
            f"process {process_id} could not join the coordinator at {address} with "
            f"{num_processes} processes within {timeout:g} s (is the address right, is process "
            f"0 running, and did all {num_processes} processes start?): "
            f"{_err_text(err) if isinstance(err, Exception) else type(err).__name__}") from None


def _wait_reachable(address: str, process_id: int, num_processes: int, timeout: float) -> None:
    """Wait until the coordinator's port accepts connections (a probe: nothing is sent);
    TimeoutError naming the address after ``timeout`` s."""
    host, _, port = address.rpartition(":")
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=1.0):
                return
        except OSError as e:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"process {process_id} of {num_processes} could not reach "
                                   f"the coordinator at {address} within {timeout:g} s ({e}); "
                                   f"is process 0 running, and is the address right?") from None
        time.sleep(0.1)


def shutdown() -> None:
    """Leave the runtime: say so in the key-value store (peers name this process if they
    wait for it), then disconnect; process 0 (the coordinator's host) first waits, up to the
    timeout, for the others to leave. Idempotent."""
    st = state()
    if st is None:
        return
    st.closed = True
    _ENDED.append(True)
    exc = getattr(sys, "last_value", None)
    why = f"exited after {type(exc).__name__}: {exc}" if exc is not None else "shut down"
    try:
        st.client.key_value_set(f"{_KV_PREFIX}/left/{st.process_id}", why[:500])
    except Exception:  # noqa: BLE001  (the coordinator may be gone already)
        pass
    try:
        st.client.shutdown()  # (no barrier: the service is "recoverable", see below)
    except Exception:  # noqa: BLE001
        pass
    if st.service is not None:
        # the coordinator lives in this process: stopping it while a peer still runs ends
        # that peer (XLA's runtime aborts it), so first wait, up to the timeout, until every
        # other process has left or stopped answering
        _wait_others_left(st)
        try:
            st.service.shutdown()
        except Exception:  # noqa: BLE001
            pass


def _wait_others_left(st: State) -> None:
    others = set(range(st.num_processes)) - {st.process_id}
    deadline = time.monotonic() + st.timeout
    next_live = time.monotonic() + 1.0
    while others and time.monotonic() < deadline:
        others -= set(left_peers(st))
        if others and time.monotonic() >= next_live:  # killed peers never say they left
            live = _live_nodes(st, 1.0)
            if live is not None:
                others &= live
            next_live = time.monotonic() + 1.0
        if others:
            time.sleep(0.02)


def left_peers(st: State) -> dict[int, str]:
    """Processes that announced leaving (``shutdown``, at exit): id -> why."""
    try:
        items = st.client.key_value_dir_get(f"{_KV_PREFIX}/left/")
    except Exception:  # noqa: BLE001
        return {}
    out = {}
    for key, value in items:
        try:
            out[int(key.rsplit("/", 1)[1])] = value
        except ValueError:
            continue
    return out


def _gone(st: State, wait: float) -> str:
    """Name the peers that left or stopped answering (waits up to ``wait`` s for the news)."""
    deadline = time.monotonic() + wait
    while True:
        left = {p: w for p, w in left_peers(st).items() if p != st.process_id}
        if left or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    if left:
        return "; ".join(f"process {p} (of {st.num_processes}) has left: {w}"
                         for p, w in sorted(left.items()))
    live = _live_nodes(st, max(0.0, deadline - time.monotonic()) + 1.0)
    if live is not None:
        dead = [p for p in range(st.num_processes) if p not in live]
        if dead:
            return ", ".join(f"process {p}" for p in dead) + \
                f" (of {st.num_processes}) stopped answering the coordinator (died?)"
    return "a peer process has gone (it did not say why; killed?)"


def _live_nodes(st: State, wait: float) -> set[int] | None:
    out: list[Any] = []

    def ask() -> None:
        try:
            out.append(set(st.client.get_live_nodes(list(range(st.num_processes)))))
        except Exception:  # noqa: BLE001
            pass

    t = threading.Thread(target=ask, daemon=True)
    t.start()
    t.join(wait)
    return out[0] if out else None


class SpanningExecutable(Executable):
    """An SPMD executable over devices of several processes (see the module docstring)."""

    __slots__ = ("_digest",)

    def __init__(self, exe: Any, devices: list[Any], text: Any) -> None:
        super().__init__(exe, devices)
        raw = text.encode() if isinstance(text, str) else bytes(text)
        self._digest = hashlib.sha256(raw).hexdigest()[:24]

    def run(self, args: list[Any], out_specs: list[tuple[tuple[int, ...], np.dtype]]) -> list[Any]:
        st = state()
        if st is None:
            raise BackendError("the distributed runtime was shut down; arrays over several "
                               "processes can no longer be computed")
        with st.lock:
            st.step += 1
            step = st.step
            _agree(st, step, self._digest)
            outs = super().run(args, out_specs)
            try:
                xc.batched_block_until_ready(list(outs))
            except _backend._XLA_ERRORS as e:
                raise BackendError(f"{_gone(st, min(st.timeout, 5.0))} (the collective failed: "
                                   f"{_err_text(e)})") from None
        return outs


def _agree(st: State, step: int, digest: str) -> None:
    """Publish this process's program for ``step``; raise unless every peer's is the same."""
    c = st.client
    me = st.process_id
    try:
        c.key_value_set(f"{_KV_PREFIX}/run/{step}/{me}", digest)
    except _backend._XLA_ERRORS as e:
        raise BackendError(f"the coordinator at {st.address} is gone: {_err_text(e)}") from None
    for p in range(st.num_processes):
        if p == me:
            continue
        theirs = _wait_for(st, f"{_KV_PREFIX}/run/{step}/{p}", p, step)
        if theirs != digest:
            raise ProgramMismatch(
                f"process {p} runs a different program than process {me} at step {step} "
                f"(program digests {theirs} and {digest}): every process must record the same "
                f"operations on arrays of the same shapes and layouts")
    if step > 2:  # every peer has read step - 2 (they all published step - 1 after it)
        try:
            c.key_value_delete(f"{_KV_PREFIX}/run/{step - 2}/{me}")
        except _backend._XLA_ERRORS:
            pass


def _wait_for(st: State, key: str, p: int, step: int) -> str:
    """Process ``p``'s value of ``key``: waits in slices of at most a second, between which a
    peer that announced leaving is noticed; after ``st.timeout`` s, names who is gone."""
    deadline = time.monotonic() + st.timeout
    while True:
        ms = int(min(1.0, max(0.001, deadline - time.monotonic())) * 1000)
        try:
            return str(st.client.blocking_key_value_get(key, max(1, ms)))
        except _backend._XLA_ERRORS as e:
            err = e
        if "UNAVAILABLE" in str(err):  # (not a time-out: nobody answers at the address)
            raise BackendError(f"the coordinator at {st.address} (process 0) is gone: "
                               f"{_err_text(err)}; this process (process {st.process_id}) "
                               f"was about to run program {step}") from None
        late = time.monotonic() >= deadline
        left = {q: w for q, w in left_peers(st).items() if q != st.process_id}
        if left or late:
            why = _gone(st, 0.0)
            if "has left" in why or "stopped" in why:
                raise BackendError(f"{why}; this process (process {st.process_id}) was about "
                                   f"to run program {step} with it") from None
            raise PeerTimeout(f"process {p} did not reach program {step} within {st.timeout:g} "
                              f"s (it is stuck, slower than the timeout, or running fewer "
                              f"programs than process {st.process_id}): "
                              f"{_err_text(err)}") from None
