"""The runtime layer: the only module of xla_array that imports jaxlib (never ``jax``).

It owns the PJRT clients, host<->device transfers, compilation of StableHLO text, execution with
cached result handlers, and the small shims that hide differences between jaxlib versions
(0.10.x on Python 3.11, 0.12.x on Python 3.12). See ``notes/jaxlib-runtime.md`` for the measured
facts behind each choice. Buffers are jaxlib single-device ``ArrayImpl`` objects whose ``aval``
is a private ``_Aval`` (shape, dtype); other modules treat them as opaque handles.
"""

from __future__ import annotations

import os
import threading
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import jaxlib._jax as _jax
import ml_dtypes
import numpy as np
from jaxlib import version as _jaxlib_version
from jaxlib import xla_client as xc

from . import proto as _proto
from . import scipy_lapack as _scipy_lapack
from .aligned import address, aligned_copy, unpack4

__all__ = [
    "JAXLIB_VERSION", "LLVM_OPTIONS", "BackendError", "Executable", "block", "buffer_device",
    "client", "compile", "copy_to_device", "delete", "deserialize", "devices", "is_local",
    "from_dlpack", "is_deleted", "platforms", "put", "put_batch", "register_lapack",
    "register_ffi", "ffi_include_dir",
    "to_dlpack", "to_numpy",
]

JAXLIB_VERSION: str = _jaxlib_version.__version__

# jaxlib records a Python traceback with every execution by default (for JAX's profiler), and
# keeps one per execution on arguments that stay alive: a loop running a graph on a long-lived
# array grew with every run, without bound (benchmarks/bench_soak.py shows it; flat with this
# off, and faster: docs/performance.md, "Measured choices"). Process-wide setting.
_jax.set_tracebacks_enabled(False)


class BackendError(RuntimeError):
    """A jaxlib/XLA failure (compile, transfer or run time); the message is XLA's own."""


_XLA_ERRORS = (xc.XlaRuntimeError,)  # jaxlib's JaxRuntimeError is the same class
_SEM = xc.HostBufferSemantics
_BIG_COPY = 1 << 24  # bytes: above this, copying into an aligned buffer beats XLA's own copy

# --- version shims ----------------------------------------------------------------------------
# 0.10.x: array_result_handler must get _skip_checks=True, or it calls into jax's Python code.
# 0.12.x: the parameter is gone. buffer_to_dlpack_managed_tensor takes max_version only in 0.12.
_RESULT_HANDLER_KW: dict[str, Any] = (
    {"_skip_checks": True} if "_skip_checks" in (_jax.array_result_handler.__doc__ or "") else {}
)
_DLPACK_MAX_VERSION = "max_version" in (_jax.buffer_to_dlpack_managed_tensor.__doc__ or "")


class _Aval:
    """All that jaxlib reads from an aval (shape, dtype, weak_type), plus our ``host`` slot.

    jaxlib keeps the aval object as ``buf.aval`` for the buffer's lifetime (and shares it with
    same-client copies), so ``host`` can carry a read-only host copy of an ml_dtypes buffer.
    """

    __slots__ = ("dtype", "host", "shape", "weak_type")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype,
                 host: np.ndarray | None = None) -> None:
        self.shape = shape
        self.dtype = dtype
        self.weak_type = False
        self.host = host


class _DeviceSharding(xc.SingleDeviceSharding):
    """SingleDeviceSharding with the two Python hooks jaxlib 0.10 calls (harmless on 0.12)."""

    def _to_xla_hlo_sharding(self, ndim: int) -> Any:
        return xc.HloSharding.replicate()

    @property
    def memory_kind(self) -> None:
        return None


class _HloSharding(xc.GSPMDSharding):
    """GSPMDSharding with the same hooks; used for the outputs of SPMD executables."""

    def __init__(self, device_list: Any, hlo_sharding: Any) -> None:
        super().__init__(device_list, hlo_sharding)
        self._hlo = hlo_sharding

    def _to_xla_hlo_sharding(self, ndim: int) -> Any:
        return self._hlo

    @property
    def memory_kind(self) -> None:
        return None


_SHARDINGS: dict[Any, _DeviceSharding] = {}


def _sharding(device: Any) -> _DeviceSharding:
    sh = _SHARDINGS.get(device)
    if sh is None:
        sh = _SHARDINGS.setdefault(device, _DeviceSharding(device))
    return sh


# --- clients and platforms --------------------------------------------------------------------
_LOCK = threading.RLock()
_CLIENTS: dict[str, Any] = {}
_PLATFORMS: list[str] | None = None
_LAPACK_DONE = False
def client(platform: str = "cpu") -> Any:
    """The PJRT client of ``platform``, created on first use and cached (thread-safe).

    The CPU client is asynchronous; its device count comes from ``XLA_ARRAY_CPU_DEVICES``
    (default 1), read when the client is created.
    """
    c = _CLIENTS.get(platform)
    if c is not None:
        return c
    with _LOCK:
        c = _CLIENTS.get(platform)
        if c is None:
            if platform == "cpu":
                c = _make_cpu_client()
            elif platform == "cuda" and "cuda" in platforms():
                c = _CLIENTS["cuda"]
            else:
                raise BackendError(f"platform {platform!r} is not available; have {platforms()}")
            _CLIENTS[platform] = c
    return c


def _make_cpu_client() -> Any:
    raw = os.environ.get("XLA_ARRAY_CPU_DEVICES", "").strip() or "1"
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"XLA_ARRAY_CPU_DEVICES must be a positive integer, got {raw!r}")
    n = int(raw)
    try:
        return xc.make_cpu_client(asynchronous=True, num_devices=n)
    except _XLA_ERRORS as e:
        raise BackendError(str(e)) from None


def devices(platform: str = "cpu") -> list[Any]:
    """The PJRT devices of ``platform``'s client, in the client's order; after
    ``xla_array.distributed.initialize``, every process's devices, by process (one global
    order, the same in every process)."""
    c = client(platform)
    local = list(c.local_devices())
    if c.process_index() == 0 and len(c.devices()) == len(local):
        return local
    return sorted(c.devices(), key=lambda d: (d.process_index, d.id))


def is_local(device: Any) -> bool:
    """Whether this process holds ``device`` (a PJRT device)."""
    return bool(device.process_index == device.client.process_index())


def platforms() -> list[str]:
    """``["cpu"]``, plus ``"cuda"`` when a CUDA PJRT plugin matching jaxlib is installed and loads.

    An absent plugin is silent; one that fails to load gives a single ``RuntimeWarning``.
    """
    global _PLATFORMS
    if _PLATFORMS is None:
        with _LOCK:
            if _PLATFORMS is None:
                found = ["cpu"]
                # load order: backend_cuda (GPU plugin discovery) imports this module
                from .backend_cuda import load_cuda_client
                cuda = load_cuda_client()
                if cuda is not None:
                    _CLIENTS["cuda"] = cuda
                    found.append("cuda")
                _PLATFORMS = found
    return list(_PLATFORMS)


# --- transfers --------------------------------------------------------------------------------
_PLAIN = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.complex64, np.complex128))
_PACKED4 = {np.dtype(ml_dtypes.int4): True, np.dtype(ml_dtypes.uint4): False}  # -> signed
_EXTENDED = frozenset(np.dtype(t) for t in (
    ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2)) | _PACKED4.keys()


def put(x: np.ndarray, device: Any, *, owned: bool = False) -> Any:
    """Copy a C-contiguous numpy array (any supported dtype, 0-d included) to ``device``.

    ``owned=True`` means the library owns ``x`` and never writes it: on CPU, a 64-byte aligned
    ``x`` is then aliased (zero copy) and kept alive by the buffer. Otherwise
    the data is copied (into an aligned buffer that is then aliased, from 16 MiB up).
    """
    if type(x) is not np.ndarray:
        x = np.asarray(x)
    if not x.flags.c_contiguous:
        x = np.ascontiguousarray(x)
    if not x.dtype.isnative:
        x = x.astype(x.dtype.newbyteorder("="))
    host = None
    if device.platform != "cpu":
        sem = _SEM.IMMUTABLE_UNTIL_TRANSFER_COMPLETES if owned else _SEM.IMMUTABLE_ONLY_DURING_CALL
    elif x.dtype in _PLAIN:
        if owned and x.nbytes and address(x) % 64 == 0:  # (performance.md: any size)
            sem = _SEM.ZERO_COPY
        elif x.nbytes >= _BIG_COPY:
            x, sem = aligned_copy(x), _SEM.ZERO_COPY
        else:
            sem = _SEM.IMMUTABLE_ONLY_DURING_CALL
    elif x.dtype not in _EXTENDED:
        raise TypeError(f"xla_array cannot store dtype {x.dtype} on a device")
    else:
        # ml_dtypes: jaxlib can only read these back through paths that import jax for
        # buffers made by device_put, so keep a read-only host copy on the aval. For
        # bf16/fp8 it is the (aliased, zero-copy) device memory itself.
        if not (owned and (address(x) % 64 == 0 or x.dtype in _PACKED4)):
            x = aligned_copy(x)
        host = x.view()
        host.flags.writeable = False
        sem = _SEM.ZERO_COPY
    try:
        return xc.batched_device_put(_Aval(x.shape, x.dtype, host), _sharding(device), [x],
                                     [device], True, False, sem, True)  # committed, .., x64
    except _XLA_ERRORS as e:
        raise BackendError(str(e)) from None


class HostValue:
    """A value the host tier computed (``core/hosteval.py``), kept in host memory: read on
    the host as it is (the next host run, ``float()``, ``np.asarray``), and put on its device
    only when a compiled graph or a device operation first needs it (``device_buffer``),
    once. A loop that runs on the host then pays no transfer per step: putting a result on
    the device (jaxlib's ``batched_device_put``) costs about 20 us, several NumPy calls on
    arrays of a few thousand values. ``value``: C-contiguous, read-only, owning its memory
    (the host tier's results are 64-byte aligned: the device buffer aliases it)."""

    __slots__ = ("value", "_device", "_buf", "__weakref__")

    def __init__(self, value: np.ndarray, device: Any) -> None:
        value.flags.writeable = False
        self.value = value
        self._device = device
        self._buf: Any = None

    def device_buffer(self) -> Any:
        """The value as a device buffer (put there on the first call)."""
        b = self._buf
        if b is None:
            b = self._buf = put(self.value, self._device, owned=True)
        return b

    def is_deleted(self) -> bool:
        return False


def device_buffer(buf: Any) -> Any:
    """``buf`` as a device buffer: a ``HostValue``'s (put on first use), else ``buf``."""
    return buf.device_buffer() if type(buf) is HostValue else buf


def put_batch(xs: list[np.ndarray], device: Any) -> list[Any]:
    """Copy several host arrays to ``device`` (a loop: jaxlib has no cheap batched host put)."""
    return [put(x, device) for x in xs]


class _PointerView:
    """Exposes raw host memory of a CPU buffer to numpy, keeping the buffer alive."""

    def __init__(self, buf: Any, nbytes: int) -> None:
        self._buf = buf
        self.__array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "version": 3,
                                    "data": (buf.unsafe_buffer_pointer(), True)}


def to_numpy(buf: Any) -> np.ndarray:
    """The buffer's value on the host; a zero-copy read-only view for CPU buffers.

    Blocks until the buffer is ready. int4/uint4 (stored packed on the device) are unpacked
    into a new array. Buffers on other platforms are copied to the host. A ``HostValue``
    gives its value.
    """
    if type(buf) is HostValue:
        return buf.value
    aval = buf.aval
    dtype, shape = aval.dtype, aval.shape
    try:
        if buf.is_deleted():
            raise BackendError("the buffer has been deleted or donated")
        if dtype in _PLAIN and buf.platform() == "cpu":
            try:
                out = np.asarray(memoryview(buf))  # the buffer protocol waits for the value
            except BufferError as err:  # refused for a global array over several devices,
                if type(buf._sharding) is _HloSharding:  # or the run computing it failed
                    return _gather(buf)
                raise BackendError(str(err)) from None
            return out if out.dtype == dtype else out.view(dtype)
        if aval.host is not None:
            return aval.host
        if type(buf._sharding) is _HloSharding:  # a global array over several devices
            return _gather(buf)
        if buf.platform() != "cpu":
            from .backend_cuda import to_numpy_cuda  # (load order: GPU only)
            copied = to_numpy_cuda(buf, dtype, shape)
            if copied is not None:
                return copied
            # jaxlib's host copy for non-CPU buffers; it makes jaxlib import jax where jax is
            # installed (to build the shard's aval), which to_numpy_cuda avoids
            return buf._single_device_array_to_np_array_did_copy()[0]
        buf.block_until_ready()  # an executable's output: its unsafe_buffer_pointer is safe
        size = int(np.prod(shape, dtype=np.int64))
        if size == 0:
            out = np.empty(shape, dtype)
            out.flags.writeable = False
            return out
        signed = _PACKED4.get(dtype)
        if signed is None:  # bfloat16, float8_*: one element per itemsize bytes
            raw = np.asarray(_PointerView(buf, size * dtype.itemsize))
            return raw.view(dtype).reshape(shape)
        return unpack4(np.asarray(_PointerView(buf, (size + 1) // 2)), size, signed, dtype, shape)
    except _XLA_ERRORS as e:
        raise BackendError(str(e)) from None


def _gather(buf: Any) -> np.ndarray:
    # load order: backend_spmd (the SPMD half of this layer) imports this module
    from . import backend_spmd as _backend_spmd
    return _backend_spmd.gather(buf)


def block(bufs: list[Any]) -> None:
    """Wait until every buffer in ``bufs`` is ready (re-raises an asynchronous failure)."""
    bufs = [b for b in bufs if type(b) is not HostValue]
    if bufs:
        try:
            xc.batched_block_until_ready(list(bufs))
        except _XLA_ERRORS as e:
            raise BackendError(str(e)) from None


def memory_capacity(device: Any) -> int | None:
    """How many bytes ``device`` can hold at most: the allocator's limit where the device
    reports one (GPUs), the machine's physical memory for a CPU device; None if unknown."""
    try:
        stats = device.memory_stats()
    except Exception:  # noqa: BLE001  (not implemented by every client)
        stats = None
    if stats and stats.get("bytes_limit"):
        return int(stats["bytes_limit"])
    if device.platform == "cpu" and hasattr(os, "sysconf"):
        try:
            return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError):
            return None
    return None


def is_deleted(buf: Any) -> bool:
    return bool(buf.is_deleted())


def delete(buf: Any) -> None:
    """Free the device memory now (later use of ``buf`` raises BackendError)."""
    buf.delete()


def buffer_device(buf: Any) -> Any:
    """The PJRT device holding ``buf`` (the first device, for a sharded buffer)."""
    sharding = buf._sharding
    device = getattr(sharding, "_device", None)
    if device is not None:
        return device
    return next(iter(sharding._internal_device_list))


def copy_to_device(buf: Any, device: Any) -> Any:
    """A copy of ``buf`` on ``device``: direct within one client, through the host across."""
    if device.client is buffer_device(buf).client:
        try:
            return _jax.batched_copy_array_to_devices_with_sharding(
                [buf], [xc.DeviceList((device,))], [_sharding(device)],
                [xc.ArrayCopySemantics.ALWAYS_COPY])[0]
        except _XLA_ERRORS as e:
            raise BackendError(str(e)) from None
    return put(to_numpy(buf), device)


def to_dlpack(buf: Any, *, max_version: tuple[int, int] | None = None) -> Any:
    """A DLPack capsule sharing ``buf``'s memory (plain numpy dtypes only).

    ``max_version`` is passed on where jaxlib accepts it (0.12+), else ignored.
    """
    try:
        if max_version is not None and _DLPACK_MAX_VERSION:
            return _jax.buffer_to_dlpack_managed_tensor(buf, max_version=tuple(max_version))
        return _jax.buffer_to_dlpack_managed_tensor(buf)
    except _XLA_ERRORS as e:
        raise BackendError(str(e)) from None


class _Capsule:
    """Lets numpy consume a bare DLPack capsule (assumed to be host memory)."""

    def __init__(self, capsule: Any) -> None:
        self._capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


def from_dlpack(obj: Any, device: Any) -> Any:
    """Import a host DLPack producer (or capsule) onto ``device``, by copying through numpy."""
    host = np.from_dlpack(obj if hasattr(obj, "__dlpack__") else _Capsule(obj))
    return put(np.ascontiguousarray(host), device)


# --- compilation and execution ----------------------------------------------------------------
LLVM_OPTIONS = "xla_backend_extra_options"  # (a map XLA's overrides cannot set: core/proto.py)


def _with_llvm_options(llvm: str) -> Any:
    """New CompileOptions carrying the LLVM options ``llvm`` ("-name=value,..."), with
    XLA's defaults (and XLA_FLAGS') for everything else."""
    base = xc.CompileOptions().SerializeAsString()
    return xc.CompileOptions.ParseFromString(base + _proto.llvm_options(llvm))


def _compile_options(devices: list[Any], options: dict[str, Any] | None) -> Any:
    options = dict(options or {})
    llvm = options.pop(LLVM_OPTIONS, None)
    opts = _with_llvm_options(str(llvm)) if llvm else xc.CompileOptions()
    n = len(devices)
    if n > 1:  # SPMD: one replica, n partitions; Shardy works for sdy and GSPMD annotations
        opts.num_replicas, opts.num_partitions = 1, n
        build = opts.executable_build_options
        build.num_replicas, build.num_partitions = 1, n
        build.use_spmd_partitioning = True
        build.use_shardy_partitioner = True
    # Without this, a single-device executable runs on the client's first device.
    opts.device_assignment = xc.DeviceAssignment.create(np.array([[d.id for d in devices]]))
    if options:
        try:
            opts.env_option_overrides = [(str(k), v) for k, v in sorted(options.items())]
        except TypeError:
            msg = f"compile option values must be bool, int, float or str: {options}"
            raise BackendError(msg) from None
    return opts


def compile(text: str | bytes, devices: list[Any], *,
            options: dict[str, Any] | None = None) -> Executable:
    """Compile StableHLO (text, bytecode or portable artifact; entry ``@main``) for ``devices``.

    Several devices compile one SPMD program (one partition per device, Shardy partitioner).
    ``options`` are XLA debug options (``xla_backend_optimization_level``, ``xla_dump_to``, ...);
    an unknown name, like a compile error, raises BackendError with XLA's message.
    ``LLVM_OPTIONS`` takes LLVM's own, as "-name=value,-name2=value2".
    """
    if not devices:
        raise ValueError("compile needs at least one device")
    try:
        opts = _compile_options(devices, options)
        exe = devices[0].client.compile_and_load(text, xc.DeviceList(tuple(devices)), opts)
    except _XLA_ERRORS as e:
        raise BackendError(str(e)) from None
    return _executable(exe, devices, text)


def deserialize(blob: bytes, devices: list[Any]) -> Executable:
    """Load an executable written by ``Executable.serialize`` (trusted blobs only)."""
    try:
        exe = devices[0].client.deserialize_executable(
            blob, xc.DeviceList(tuple(devices)), _compile_options(devices, None))
    except _XLA_ERRORS as e:
        raise BackendError(str(e)) from None
    return _executable(exe, devices, blob)


# backend_distributed.initialize puts its SpanningExecutable class here: executables whose
# devices belong to several processes check that every process runs the same program
_SPANNING: list[Any] = []


def _executable(exe: Any, devices: list[Any], text: str | bytes) -> Executable:
    if _SPANNING and len({d.process_index for d in devices}) > 1:
        return _SPANNING[0](exe, devices, text)  # type: ignore[no-any-return]
    return Executable(exe, devices)


class Executable:
    """A loaded executable; ``run`` builds outputs with cached jaxlib result handlers."""

    __slots__ = ("__weakref__", "_devices", "_exe", "_handlers", "_last")

    def __init__(self, exe: Any, devices: list[Any]) -> None:
        self._exe = exe
        self._devices = list(devices)
        self._handlers: dict[tuple[Any, ...], list[Any]] = {}
        self._last: tuple[Any, list[Any]] = (None, [])

    def run(self, args: list[Any], out_specs: list[tuple[tuple[int, ...], np.dtype]]) -> list[Any]:
        """Execute with device buffers ``args``; one (shape, dtype) per output in ``out_specs``.

        Asynchronous: returns the output buffers at once; failures may surface when they are
        read or blocked on (as BackendError). Passing the same ``out_specs`` object each time
        (an immutable tuple is best) skips even the handler-cache lookup.
        """
        last = self._last
        handlers = last[1] if last[0] is out_specs else self._lookup(out_specs)
        try:
            return self._exe.execute_sharded(args).consume_with_handlers(handlers)
        except (*_XLA_ERRORS, ValueError) as e:
            for i, arg in enumerate(args):
                if arg.is_deleted():
                    raise BackendError(f"argument {i} has been deleted or donated") from None
            raise BackendError(str(e)) from None

    def _lookup(self, out_specs: list[tuple[tuple[int, ...], np.dtype]]) -> list[Any]:
        try:
            key = tuple(out_specs)
            handlers = self._handlers.get(key)
        except TypeError:  # a shape given as a list
            key = tuple((tuple(shape), dtype) for shape, dtype in out_specs)
            handlers = self._handlers.get(key)
        if handlers is None:
            shardings = self._output_shardings(len(key))
            handlers = [
                xc.array_result_handler(_Aval(tuple(shape), np.dtype(dtype)), sharding, True,
                                        **_RESULT_HANDLER_KW)
                for (shape, dtype), sharding in zip(key, shardings, strict=True)
            ]
            self._handlers[key] = handlers
        self._last = (out_specs, handlers)
        return handlers

    def _output_shardings(self, n: int) -> list[Any]:
        if len(self._devices) == 1:
            return [_sharding(self._devices[0])] * n
        device_list = xc.DeviceList(tuple(self._devices))
        return [_HloSharding(device_list, xc.HloSharding.from_proto(s))
                for s in self._exe.get_output_shardings()]

    def hlo_text(self) -> str:
        """The optimized HLO module, after XLA's passes."""
        return "\n".join(m.to_string() for m in self._exe.hlo_modules())

    def cost(self) -> dict[str, float]:
        """XLA's cost analysis; always has 'flops', 'transcendentals' and 'bytes accessed'."""
        raw = self._exe.cost_analysis()
        if isinstance(raw, (list, tuple)):
            raw = raw[0] if raw else {}
        out = {str(k): float(v) for k, v in dict(raw).items()}
        for key in ("flops", "transcendentals", "bytes accessed"):
            out.setdefault(key, 0.0)
        return out

    def memory(self) -> dict[str, int]:
        """Compiled memory sizes in bytes (argument, output, temp, alias, generated code, peak)."""
        stats = self._exe.get_compiled_memory_stats()
        names = ("argument", "output", "temp", "alias", "generated_code")
        out = {f"{n}_bytes": int(getattr(stats, f"{n}_size_in_bytes")) for n in names}
        out["peak_bytes"] = int(getattr(stats, "peak_memory_in_bytes", 0))
        return out

    def serialize(self) -> bytes:
        """A blob for ``deserialize``; valid for the same jaxlib version and CPU features."""
        try:
            return bytes(self._exe.serialize())
        except _XLA_ERRORS as e:
            raise BackendError(str(e)) from None


# --- extras -----------------------------------------------------------------------------------
def register_lapack() -> None:
    """Register jaxlib's LAPACK FFI kernels (``lapack_*_ffi``) as CPU custom-call targets.

    Idempotent and thread-safe. The LAPACK routines come from SciPy's Cython modules
    ``scipy.linalg.cython_blas``/``cython_lapack``, which ``_lapack.initialize`` imports; see
    ``scipy_lapack.preload`` for how that stays cheap.
    """
    global _LAPACK_DONE
    if _LAPACK_DONE:
        return
    with _LOCK:
        if _LAPACK_DONE:
            return
        from jaxlib import lapack
        from jaxlib.cpu import _lapack

        _scipy_lapack.preload()
        _lapack.initialize()  # without it the kernels segfault
        for name, fn, api_version in lapack.registrations()["cpu"]:
            xc.register_custom_call_target(name, fn, platform="cpu", api_version=api_version)
        _LAPACK_DONE = True


def ffi_include_dir() -> str:
    """The folder of the installed jaxlib's XLA FFI C headers (``xla/ffi/api/c_api.h``)."""
    import jaxlib
    return os.path.join(os.path.dirname(jaxlib.__file__), "include")


def register_ffi(name: str, address: int) -> None:
    """Register the XLA FFI handler at ``address`` (a native function) as CPU custom-call
    target ``name`` (typed FFI, API version 1)."""
    import ctypes
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
    xc.register_custom_call_target(name, new(address, None, None), platform="cpu",
                                   api_version=1)
