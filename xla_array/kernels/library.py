"""Loading the native kernels (``native/*.c``), which are built when the package is built.

``setup.py`` compiles each ``native/<name>.c`` against the FFI header of the jaxlib present at
build time (``jaxlib/include/xla/ffi/api/c_api.h``) into the shared library
``xla_array/kernels/_<name>`` + the interpreter's extension suffix (a plain shared library
that ctypes loads; it is no Python module). Nothing is compiled at run time: where the
library is missing (no C compiler or no jaxlib when the package was built), cannot be loaded,
or ``XLA_ARRAY_NATIVE=0`` asks for no native code, the kernel is unavailable and the graph
keeps XLA's own ops, with the same results. Each library reports the FFI API version of the
header it was built against when XLA registers its handlers, and XLA refuses an incompatible
one (then the kernel is unavailable too). jaxlib itself stays in ``core/backend.py``
(``register`` goes through it).
"""

from __future__ import annotations

import ctypes
import importlib.machinery
import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from ..core import backend as _backend
from ..core import flags as _flags
from ..core import registry as _registry
from ..core.aligned import ALIGN, aligned_empty

__all__ = ["NativeLibrary", "handler_library", "library", "path", "register", "ALIGN",
           "aligned_empty", "numpy_loop"]

log = logging.getLogger("xla_array")


def path(name: str) -> str | None:
    """The built library of ``native/<name>.c`` (``_<name>.<suffix>`` beside this module), or
    None if the package was built without it."""
    here = os.path.dirname(os.path.abspath(__file__))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        p = os.path.join(here, f"_{name}{suffix}")
        if os.path.exists(p):
            return p
    return None


def library(name: str) -> ctypes.CDLL:
    """The loaded library of ``native/<name>.c``; RuntimeError if there is none to load."""
    if not _flags.get("native"):
        raise RuntimeError("XLA_ARRAY_NATIVE=0")
    p = path(name)
    if p is None:
        raise RuntimeError(f"xla_array was built without it (no C compiler, or no jaxlib "
                           f"headers, when the package was built: reinstall with both to "
                           f"get _{name})")
    return ctypes.CDLL(p)


class NativeLibrary:
    """Whether one native kernel can be used here: ``load()`` (load the library, register its
    handlers with XLA) runs once, by the first caller of ``available()``; a failure makes it
    False (logged once, as a warning unless ``XLA_ARRAY_NATIVE=0`` asked for it).
    ``present()`` answers without loading: the library ``native/<name>.c`` built, native code
    allowed (``registry.Kernel.present``: a kernel is loaded when a graph first needs it)."""

    def __init__(self, what: str, instead: str, load: Callable[[], None], name: str) -> None:
        self.what, self.instead, self._load, self.name = what, instead, load, name
        self._ok: bool | None = None
        self._built: bool | None = None  # (whether its library file is there: asked once)
        self.error = ""
        self._lock = threading.Lock()

    def present(self) -> bool:
        """``available()``'s answer once it was asked; before, whether it may be True: native
        code allowed and the library built (nothing is loaded)."""
        ok = self._ok
        if ok is not None:
            return ok
        if self._built is None:
            self._built = path(self.name) is not None
        return self._built and bool(_flags._values["native"])

    @property
    def ok(self) -> bool | None:
        """Whether the library loaded (None: not tried yet). Setting it (the load, a test)
        tells the registry where that changes ``present()``, what the kernel rules are
        cached by (``registry.state``)."""
        return self._ok

    @ok.setter
    def ok(self, value: bool | None) -> None:
        was = self.present()
        self._ok = value
        if self.present() != was:  # (a load that succeeds changes nothing the rules go by:
            _registry.availability_changed()  # the structures' host programs stay)

    def available(self) -> bool:
        ok = self._ok
        if ok is not None:
            return ok
        with self._lock:
            if self.ok is None:
                try:
                    self._load()
                    self.ok = True
                except Exception as e:  # noqa: BLE001  (not built, not loadable, refused by XLA)
                    level = logging.INFO if not _flags.get("native") else logging.WARNING
                    log.log(level, "xla_array: %s unavailable (%s); using %s", self.what, e,
                            self.instead)
                    self.error = str(e)
                    self.ok = False
        return self.ok


def handler_library(what: str, instead: str, name: str, symbol: str,
                    target: str) -> NativeLibrary:
    """The NativeLibrary of ``native/<name>.c``, which exports one handler ``symbol`` (an XLA
    FFI handler, registered as CPU custom-call target ``target``) and ``<symbol>_abi()``, which
    must return 1 (a library built from other sources is refused, never called)."""
    def load() -> None:
        lib = library(name)
        if getattr(lib, f"{symbol}_abi")() != 1:
            raise RuntimeError("unexpected kernel ABI version")
        register(lib, symbol, target)
    return NativeLibrary(what, instead, load, name)


def register(lib: ctypes.CDLL, symbol: str, target: str) -> None:
    """Register the handler ``symbol`` of ``lib`` as CPU custom-call target ``target``."""
    address = ctypes.cast(getattr(lib, symbol), ctypes.c_void_p).value
    if not address:
        raise RuntimeError(f"the kernel library has no symbol {symbol}")
    _backend.register_ffi(target, address)


# ---------------------------------------------------------------- NumPy's own loops
# (their operands at XLA's buffer alignment: ALIGN and aligned_empty, from core/aligned.py)

class _CallInfo(ctypes.Structure):
    # NumPy's ufunc_call_info (numpy/_core/src/umath/ufunc_object.c), read from its capsule
    _fields_ = [("strided_loop", ctypes.c_void_p), ("context", ctypes.c_void_p),
                ("auxdata", ctypes.c_void_p), ("requires_pyapi", ctypes.c_ubyte),
                ("no_floatingpoint_errors", ctypes.c_ubyte)]


_LOOPS: list = []  # NumPy's call-info capsules (they own the loops' contexts): never freed


def numpy_loop(uf: Any, dtypes: tuple, fixed_strides: tuple | None = None) -> tuple[int, int, int]:
    """(loop, context, auxiliary data) of the inner loop NumPy runs for ufunc ``uf`` (a
    generalized one too) on operands of ``dtypes`` (inputs and output), taken with NumPy's
    interface for calling its loops from C (``ufunc._get_strided_loop``) and kept for the
    process's life; RuntimeError if NumPy resolves other dtypes or the loop needs the
    interpreter."""
    got, capsule = uf._resolve_dtypes_and_context(dtypes)
    if tuple(got) != tuple(dtypes):
        raise RuntimeError(f"NumPy's {uf.__name__} loop for {dtypes} takes {got}")
    if fixed_strides is None:
        uf._get_strided_loop(capsule)
    else:
        uf._get_strided_loop(capsule, fixed_strides=fixed_strides)
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    info = _CallInfo.from_address(get(capsule, b"numpy_1.24_ufunc_call_info"))
    if info.requires_pyapi:
        raise RuntimeError(f"NumPy's {uf.__name__} loop needs the interpreter")
    _LOOPS.append(capsule)
    return info.strided_loop, info.context, info.auxdata
