"""The native kernels (``native/*.c``): built on first use, cached per user, loaded with ctypes.

xla_array ships a few XLA FFI handlers as C source (BLAS gemm: ``blas``, ``blas_ffi.c``; the
one-pass ``X.T @ f(X @ w)``: ``rowpass``, ``rowpass_ffi.c``; LU pivots to a permutation:
``linalg``, ``lu_perm_ffi.c``). ``library(name)`` compiles
``native/<name>.c`` into a shared library with the system C compiler (``$CC``, else ``cc``,
``gcc`` or ``clang``) against the installed jaxlib's FFI header
(``jaxlib/include/xla/ffi/api/c_api.h``, the header jax.ffi documents for this), tuned for the
host CPU (``-march=native`` where the compiler takes it). Each library is built when first
needed (gemm ~0.1 s, the row pass ~1-1.5 s) and kept in ``<cache_dir>/native/`` (the private
on-disk cache folder), named by a digest of its source, the header, the jaxlib version and the
host CPU's features, so a second process only loads it (~1 ms) and a cache folder shared
between machines never hands one a library built for another CPU; with the on-disk cache off
it is built into a private temporary folder per process. Each library is written 0600 beside
a ``.sha256`` file holding its digest, and a library is loaded only if its bytes still match
it: a damaged one (truncated, overwritten; loading a truncated ELF kills the process with
SIGBUS) is rebuilt, with a warning, instead. Without a compiler, or if anything
fails, ``library()`` raises ``RuntimeError`` and the callers fall back to XLA's own ops: the
kernels are accelerations, never requirements. jaxlib itself stays in ``backend``
(``register`` goes through it).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
from typing import Any

from ..core import backend as _backend
from ..core.cache import disk

__all__ = ["Kernel", "handler_kernel", "library", "register", "source"]

log = logging.getLogger("xla_array")
# tried in order: the first set the compiler accepts is used (the last one always is, by any
# C99 compiler); -fopenmp-simd only honours the ``omp simd`` pragmas, no OpenMP runtime
_FLAG_SETS = (["-O3", "-march=native", "-fopenmp-simd"], ["-O3", "-fopenmp-simd"], ["-O2"])

_state: dict[str, object] = {}  # "tmp": the per-process build folder
_libs: dict[str, ctypes.CDLL] = {}
_errors: dict[str, str] = {}
_lock = threading.Lock()


def source(name: str) -> str:
    """The path of kernel ``name``'s C source."""
    return os.path.join(os.path.dirname(__file__), "native", f"{name}.c")


def library(name: str) -> ctypes.CDLL:
    """The loaded kernel library ``name`` (``native/<name>.c``, built the first time);
    RuntimeError if it cannot be had."""
    lib = _libs.get(name)
    if lib is not None:
        return lib
    with _lock:
        if name not in _libs:
            if name in _errors:
                raise RuntimeError(_errors[name])
            try:
                _libs[name] = _load(name)
            except Exception as e:  # noqa: BLE001  (no compiler, build error, unreadable folder)
                _errors[name] = str(e)
                raise RuntimeError(str(e)) from None
    return _libs[name]


class Kernel:
    """Whether one native kernel can be used here: ``load()`` (build, load, register) runs once,
    by the first caller of ``available()``; any failure is logged once and makes it False."""

    def __init__(self, what: str, instead: str, load: Any) -> None:
        self.what, self.instead, self._load = what, instead, load
        self.ok: bool | None = None
        self.error = ""
        self._lock = threading.Lock()

    def available(self) -> bool:
        ok = self.ok
        if ok is not None:
            return ok
        with self._lock:
            if self.ok is None:
                try:
                    self._load()
                    self.ok = True
                except Exception as e:  # noqa: BLE001  (no compiler, build error, missing BLAS)
                    log.warning("xla_array: %s unavailable (%s); using %s", self.what, e,
                                self.instead)
                    self.error = str(e)
                    self.ok = False
        return self.ok


def handler_kernel(what: str, instead: str, name: str, symbol: str, target: str) -> Kernel:
    """The Kernel of a library with one handler: ``native/<name>.c`` exports ``symbol`` (an
    XLA FFI handler, registered as CPU custom-call target ``target``) and ``<symbol>_abi()``,
    which must return 1 (a library built from other sources is refused, never called)."""
    def load() -> None:
        lib = library(name)
        if getattr(lib, f"{symbol}_abi")() != 1:
            raise RuntimeError("unexpected kernel ABI version")
        register(lib, symbol, target)
    return Kernel(what, instead, load)


def register(lib: ctypes.CDLL, symbol: str, target: str) -> None:
    """Register the handler ``symbol`` of ``lib`` as CPU custom-call target ``target``."""
    address = ctypes.cast(getattr(lib, symbol), ctypes.c_void_p).value
    if not address:
        raise RuntimeError(f"the kernel library has no symbol {symbol}")
    _backend.register_ffi(target, address)


def _digest(src: str) -> str:
    h = hashlib.sha256()
    native = os.path.dirname(src)
    headers = sorted(n for n in os.listdir(native) if n.endswith(".h"))  # ffi_common.h
    for path in [src] + [os.path.join(native, n) for n in headers]:
        with open(path, "rb") as f:
            h.update(os.path.basename(path).encode() + b"\0" + f.read())
    with open(os.path.join(_backend.ffi_include_dir(), "xla", "ffi", "api", "c_api.h"), "rb") as f:
        h.update(f.read())
    h.update(f"{_backend.JAXLIB_VERSION} {platform.machine()} {sys.platform} "
             f"{_backend.cpu_features()} {_FLAG_SETS}".encode())
    return h.hexdigest()[:20]


def _folder() -> str:
    d = disk.folder()
    if d is not None:
        native = os.path.join(d, "native")
        with contextlib.suppress(OSError):
            os.makedirs(native, mode=0o700, exist_ok=True)
            st = os.stat(native)
            if st.st_uid == os.getuid() and not st.st_mode & 0o022:
                return native
    tmp = _state.get("tmp")
    if tmp is None:
        tmp = _state["tmp"] = tempfile.mkdtemp(prefix="xla_array_native_")
        atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    return str(tmp)


def _compiler() -> str:
    for cand in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if cand and shutil.which(cand):
            return cand
    raise RuntimeError("no C compiler found (set CC, or install cc/gcc/clang)")


def _build(src: str, path: str) -> None:
    """Compile ``src`` into the library ``path`` (mode 0600) and write its ``.sha256``."""
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    cc = _compiler()
    err = ""
    try:
        for flags in _FLAG_SETS:
            cmd = [cc, *flags, "-shared", "-fPIC", "-std=c99", "-I", _backend.ffi_include_dir(),
                   "-o", tmp, src, "-lm"]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            if r.returncode == 0:
                os.chmod(tmp, 0o600)  # (the compiler writes it executable, per the umask)
                with open(tmp, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
                _write_private(path + ".sha256", digest.encode())
                os.replace(tmp, path)
                return
            err = r.stderr.strip()[:500]
        raise RuntimeError(f"compiling {os.path.basename(src)} failed: {err}")
    finally:
        with contextlib.suppress(OSError):
            os.remove(tmp)


def _write_private(path: str, data: bytes) -> None:
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _intact(path: str) -> bool:
    """Whether the library at ``path`` exists and matches the digest written beside it; a
    damaged library (or digest) is removed, with a warning, so that it is built again."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return False
    except OSError as err:
        raise RuntimeError(f"cannot read the kernel library {path}: {err}") from None
    try:
        with open(path + ".sha256", "rb") as f:
            want = f.read().decode("ascii", "replace").strip()
    except OSError:
        want = ""
    if hashlib.sha256(data).hexdigest() == want:
        return True
    log.warning("xla_array: the kernel library %s is damaged (its digest does not match); "
                "rebuilding it", path)
    for p in (path, path + ".sha256"):
        with contextlib.suppress(OSError):
            os.remove(p)
    return False


def _load(name: str) -> ctypes.CDLL:
    src = source(name)
    if not os.path.exists(src):
        raise RuntimeError(f"the kernel source {src} is missing")
    folder = _folder()
    path = os.path.join(folder, f"{name}-{_digest(src)}.so")
    if not _intact(path):
        _build(src, path)
        if not _intact(path):
            raise RuntimeError(f"the kernel library {path} changed while it was built")
    lib = ctypes.CDLL(path)
    if folder == _state.get("tmp"):  # a per-process build: the mapping outlives the file
        for p in (path, path + ".sha256"):
            with contextlib.suppress(OSError):
                os.remove(p)
    return lib
