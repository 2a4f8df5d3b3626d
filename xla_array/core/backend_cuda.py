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
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import importlib.util
import os
import warnings
from typing import Any

from .backend import JAXLIB_VERSION, xc

_CUDA_PLUGINS = (("jax_plugins.xla_cuda13", "jax-cuda13-pjrt"),
                 ("jax_plugins.xla_cuda12", "jax-cuda12-pjrt"))
_GPU_ENV = (("preallocate", "XLA_ARRAY_GPU_PREALLOCATE", lambda s: s.lower() not in ("0", "false")),
            ("memory_fraction", "XLA_ARRAY_GPU_MEMORY_FRACTION", float),
            ("allocator", "XLA_ARRAY_GPU_ALLOCATOR", str.lower))
_NVIDIA_LIBS = ("cuda_runtime/lib/libcudart", "cuda_nvrtc/lib/libnvrtc", "cublas/lib/libcublasLt",
                "cublas/lib/libcublas", "nccl/lib/libnccl", "cuda_cupti/lib/libcupti",
                "cusparse/lib/libcusparse", "cusolver/lib/libcusolver", "cufft/lib/libcufft",
                "nvshmem/lib/libnvshmem_host", "cudnn/lib/libcudnn")  # + ".so.*", in this order



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
    if not xc.pjrt_plugin_loaded("cuda"):
        xc.load_pjrt_plugin_dynamically("cuda", path)
    if not xc.pjrt_plugin_initialized("cuda"):
        xc.initialize_pjrt_plugin("cuda")


def _options() -> Any:
    opts = xc.generate_pjrt_gpu_plugin_options()  # reads XLA_PYTHON_CLIENT_* too
    for key, env, conv in _GPU_ENV:  # EXLA-like settings: XLA_ARRAY_GPU_*
        if os.environ.get(env, "").strip():
            opts[key] = conv(os.environ[env].strip())  # type: ignore[index]  # (a dict)
    return opts


def _preload_nvidia_libraries() -> None:
    """Best effort: load CUDA libraries from the nvidia-* pip wheels, as jax does."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return
    roots = list(spec.submodule_search_locations or []) if spec else []
    for lib in _NVIDIA_LIBS:
        for path in sorted(p for root in roots for p in glob.glob(f"{root}/{lib}.so.*")):
            with contextlib.suppress(OSError):
                ctypes.cdll.LoadLibrary(path)
