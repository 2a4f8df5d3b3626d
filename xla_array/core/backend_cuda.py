"""CUDA PJRT plugin discovery and client creation (jaxlib comes through ``backend``).

The plugin package (``jax-cuda12-pjrt`` / ``jax-cuda13-pjrt``) ships ``xla_cuda_plugin.so`` in the
``jax_plugins.xla_cudaNN`` namespace package; we find the file without importing that package
(its ``__init__`` imports jax), check its version against jaxlib's, and load it. Absent plugin:
nothing happens. A plugin that fails to load: one ``RuntimeWarning``, CPU only.

Several processes (``xla_array.distributed.initialize(platform="cuda")``, one process per GPU):
``distributed_cuda_client`` makes the plugin's client with the distributed runtime's client and
this process's ``node_id`` / ``num_nodes`` in its options, as JAX's ``xla_bridge`` does for PJRT
plugins, so the GPU clients exchange their topology and NCCL ids through the coordinator's
key-value store and their collectives go over NCCL. Written from JAX's calls, not run here
(no GPU): see docs/distributed.md.

Linear algebra on a GPU calls the plugin's cuSOLVER FFI kernels (``cusolver_getrf_ffi``, ...,
in the ``jax_cudaNN_plugin`` package's ``_solver`` module). ``register_cusolver`` registers
them with the loaded plugin the first time such an op is recorded, as jax's plugin
initialization does (through the plugin's ``cuda_plugin_extension``).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib
import importlib.util
import os
import threading
import warnings
from typing import Any

from .aligned import unpack4
from .backend import _PACKED4, JAXLIB_VERSION, xc

_CUDA_PLUGINS = (("jax_plugins.xla_cuda13", "jax-cuda13-pjrt"),
                 ("jax_plugins.xla_cuda12", "jax-cuda12-pjrt"))
_KERNEL_PACKAGES = ("jax_cuda13_plugin", "jax_cuda12_plugin")  # cuSOLVER kernels, the extension
_C_API: list = []  # the plugin's C API capsule, when this module loaded the plugin
_SOLVER_LOCK = threading.Lock()
_SOLVER_READY: list = []  # [True] once register_cusolver succeeded
_CUDART: list = []  # [the CUDA runtime library, or None], once looked for
_CUDA_MEMCPY_DEFAULT = 4  # cudaMemcpyDefault: the direction from the (unified) addresses
_GPU_ENV = (("preallocate", "XLA_ARRAY_GPU_PREALLOCATE", lambda s: s.lower() not in ("0", "false")),
            ("memory_fraction", "XLA_ARRAY_GPU_MEMORY_FRACTION", float),
            ("allocator", "XLA_ARRAY_GPU_ALLOCATOR", str.lower))
# the CUDA libraries of the nvidia-* wheels, loaded before the plugin in this order (as jax's
# plugin does): CUDA 12 wheels keep one folder per library, CUDA 13 wheels share nvidia/cu13
_NVIDIA_LIBS = (("cuda_runtime", "libcudart.so.12"), ("cu13", "libcudart.so.13"),
                ("cuda_nvrtc", "libnvrtc.so.12"), ("cu13", "libnvrtc.so.13"),
                ("cublas", "libcublas.so.12"), ("cublas", "libcublasLt.so.12"),
                ("cu13", "libcublas.so.13"), ("cu13", "libcublasLt.so.13"),
                ("nccl", "libnccl.so.2"), ("cuda_cupti", "libcupti.so.12"),
                ("cu13", "libcupti.so.13"), ("cusparse", "libcusparse.so.12"),
                ("cu13", "libcusparse.so.12"), ("cusolver", "libcusolver.so.11"),
                ("cu13", "libcusolver.so.12"), ("cufft", "libcufft.so.11"),
                ("cu13", "libcufft.so.12"), ("nvshmem", "libnvshmem_host.so.3"),
                ("cudnn", "libcudnn.so.9"))



def _cuda_plugin() -> tuple[str, str] | None:
    """(path of xla_cuda_plugin.so, distribution name); imports only the namespace package."""
    for module, dist in _CUDA_PLUGINS:
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        for location in (spec.submodule_search_locations or []) if spec else []:
            path = os.path.join(location, "xla_cuda_plugin.so")
            if os.path.isfile(path):
                return path, dist
    return None


def load_cuda_client() -> Any:
    found = _cuda_plugin()
    if found is None:
        return None
    path, dist = found
    try:
        _load_plugin(path, dist)
        return xc.make_c_api_client("cuda", _options())
    except Exception as e:  # noqa: BLE001  (any failure means: no CUDA, say why once)
        warnings.warn(f"xla_array: CUDA plugin {path} failed to load ({e}); using CPU only",
                      RuntimeWarning, stacklevel=3)
        return None


def require_cuda_plugin() -> tuple[str, str]:
    """(path, distribution) of the CUDA plugin; RuntimeError saying what to install when
    there is none (checked before anything else by a multi-process CUDA ``initialize``)."""
    found = _cuda_plugin()
    if found is None:
        major = JAXLIB_VERSION.split(".")[0]
        raise RuntimeError(
            f"platform='cuda' needs jaxlib's CUDA PJRT plugin, and none is installed: install "
            f"jax-cuda12-pjrt or jax-cuda13-pjrt {JAXLIB_VERSION} (the version of jaxlib "
            f"{major}.x here), e.g. pip install 'jax-cuda12-pjrt=={JAXLIB_VERSION}', or use "
            f"platform='cpu'")
    return found


def distributed_cuda_client(distributed_client: Any, node_id: int, num_nodes: int,
                            local_device_ids: list[int] | None = None) -> Any:
    """The CUDA client of process ``node_id`` of ``num_nodes``, joined through
    ``distributed_client`` (connected): every process's GPUs in ``devices()``, this process's
    (``local_device_ids``, default all it sees) in ``local_devices()``, NCCL between them.
    RuntimeError when the plugin is missing, does not match jaxlib, or fails."""
    path, dist = require_cuda_plugin()
    try:
        _load_plugin(path, dist)
        opts = _options()
        opts["node_id"] = int(node_id)  # type: ignore[index]  # (a dict)
        opts["num_nodes"] = int(num_nodes)  # type: ignore[index]
        if local_device_ids is not None:
            opts["visible_devices"] = [int(i) for i in local_device_ids]  # type: ignore[index]
        return xc.make_c_api_client("cuda", opts, distributed_client)
    except Exception as e:  # noqa: BLE001  (said once, with the plugin's words)
        raise RuntimeError(f"cannot make the CUDA client of process {node_id} of {num_nodes} "
                           f"with {path}: {e}") from None


def _load_plugin(path: str, dist: str) -> None:
    """Check the plugin's version against jaxlib's, load and initialize it (once)."""
    import importlib.metadata  # (load order: 20 ms to import; only a found plugin needs it)
    try:
        version = importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        version = None
    if version is not None and version.split(".")[:3] != JAXLIB_VERSION.split(".")[:3]:
        raise RuntimeError(f"{dist} {version} does not match jaxlib {JAXLIB_VERSION}")
    _preload_nvidia_libraries()
    if not xc.pjrt_plugin_loaded("cuda"):  # (else jax loaded it in this process)
        _C_API.append(xc.load_pjrt_plugin_dynamically("cuda", path))
    if not xc.pjrt_plugin_initialized("cuda"):
        xc.initialize_pjrt_plugin("cuda")


def _options() -> Any:
    opts = xc.generate_pjrt_gpu_plugin_options()  # reads XLA_PYTHON_CLIENT_* too
    for key, env, conv in _GPU_ENV:  # EXLA-like settings: XLA_ARRAY_GPU_*
        if os.environ.get(env, "").strip():
            opts[key] = conv(os.environ[env].strip())  # type: ignore[index]  # (a dict)
    return opts


def _preload_nvidia_libraries() -> None:
    """Best effort: load CUDA libraries from the nvidia-* pip wheels, as jax does (the
    plugin then finds them already loaded; without the wheels, the system's are used)."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return
    roots = list(spec.submodule_search_locations or []) if spec else []
    for folder, lib in _NVIDIA_LIBS:
        for root in roots:
            path = os.path.join(root, folder, "lib", lib)
            if os.path.exists(path):
                with contextlib.suppress(OSError):
                    ctypes.cdll.LoadLibrary(path)
                break


def _kernel_module(name: str) -> Any:
    """``jax_cudaNN_plugin.<name>`` (the plugin's kernel package, matching the loaded plugin
    first), or None."""
    for pkg in _KERNEL_PACKAGES:
        try:
            return importlib.import_module(f"{pkg}.{name}")
        except ImportError:
            continue
    return None


def register_cusolver() -> None:
    """Register the CUDA plugin's cuSOLVER and LU kernels (``cusolver_*_ffi``,
    ``cu_lu_pivots_to_permutation``) with the loaded plugin, once per process. RuntimeError
    naming the package to install when the kernels are not there."""
    if _SOLVER_READY:
        return
    with _SOLVER_LOCK:
        if _SOLVER_READY:
            return
        ext, solver = _kernel_module("cuda_plugin_extension"), _kernel_module("_solver")
        if solver is None or ext is None:
            raise RuntimeError(
                f"linalg on a CUDA device needs the cuSOLVER kernels of jaxlib's CUDA plugin "
                f"package: install jax-cuda13-plugin (or jax-cuda12-plugin) {JAXLIB_VERSION}")
        if _C_API:  # (when jax loaded the plugin, it registered its handler itself)
            xc.register_custom_call_handler(
                "CUDA", functools.partial(ext.register_custom_call_target, _C_API[0]))
        targets = [(name, fn, int(name.endswith("_ffi")))
                   for mod in (solver, _kernel_module("_linalg")) if mod is not None
                   for name, fn in mod.registrations().items()]
        for name, fn, api_version in targets:
            # a target jax registered already in this process is left as it is
            with contextlib.suppress(Exception):
                xc.register_custom_call_target(name, fn, platform="CUDA",
                                               api_version=api_version)
        _SOLVER_READY.append(True)


def _cudart() -> Any:
    """The CUDA runtime library (the nvidia wheels' preloaded one, else the system's), or
    None."""
    if not _CUDART:
        lib = None
        for name in ("libcudart.so.13", "libcudart.so.12", "libcudart.so"):
            try:
                lib = ctypes.CDLL(name)
                break
            except OSError:
                continue
        if lib is not None:
            lib.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                       ctypes.c_int]
            lib.cudaMemcpy.restype = ctypes.c_int
        _CUDART.append(lib)
    return _CUDART[0]


def to_numpy_cuda(buf: Any, dtype: Any, shape: tuple) -> Any:
    """A CUDA buffer's value (``backend.to_numpy``), copied by the CUDA runtime's
    ``cudaMemcpy`` once the buffer is ready into a new read-only array; None where that
    cannot be done (no runtime library found, a layout other than row-major, a failed copy:
    the caller then uses jaxlib's copy, which imports jax where it is installed)."""
    import numpy as np
    lib = _cudart()
    ndim = len(shape)
    if lib is None or buf.platform() not in ("cuda", "gpu") or \
            str(buf._pjrt_layout) != "{" + ",".join(map(str, range(ndim - 1, -1, -1))) + "}":
        return None
    size = int(np.prod(shape, dtype=np.int64))
    signed = _PACKED4.get(dtype)
    nbytes = size * dtype.itemsize if signed is None else (size + 1) // 2
    buf.block_until_ready()
    raw = np.empty(nbytes, np.uint8)
    if nbytes and lib.cudaMemcpy(raw.ctypes.data, buf.unsafe_buffer_pointer(), nbytes,
                                 _CUDA_MEMCPY_DEFAULT) != 0:
        return None
    out = raw.view(dtype).reshape(shape) if signed is None else \
        unpack4(raw, size, signed, dtype, shape)
    out.flags.writeable = False
    return out
