"""SciPy's LAPACK for jaxlib's CPU kernels, loaded without the ``scipy.linalg`` package
(``backend.register_lapack`` calls ``preload`` before jaxlib's ``_lapack.initialize``), and
SciPy's f2py wrappers of the same routines for the host rules of ``ops/host_linalg.py``
(``wrappers``)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from typing import Any

__all__ = ["preload", "wrappers"]

_CHILDREN = ["cython_blas", "cython_lapack"]  # loaded on their own, adopted by scipy.linalg
_WRAPPERS: list = []  # [(_flapack, _fblas)] once loaded


def wrappers() -> tuple[Any, Any]:
    """``scipy.linalg._flapack`` and ``_fblas`` (the f2py wrappers of the LAPACK and BLAS
    routines ``cython_lapack`` exposes), loaded without the ``scipy.linalg`` package when it
    is not imported yet, as ``preload`` does, and without the ``scipy`` package itself (a
    first ``solve`` run on the host needs nothing else of SciPy). ImportError when SciPy has
    not got them."""
    if not _WRAPPERS:
        if "scipy.linalg" not in sys.modules:
            _load(["_flapack", "_fblas"])
        mods = [sys.modules.get(f"scipy.linalg.{m}") for m in ("_flapack", "_fblas")]
        if None in mods:  # (not loaded on their own: the ordinary import)
            from scipy.linalg import _fblas, _flapack
            mods = [_flapack, _fblas]
        _WRAPPERS.append(tuple(mods))
    return _WRAPPERS[0]


def preload() -> None:
    """Load ``scipy.linalg.cython_blas`` and ``cython_lapack`` without importing the
    ``scipy.linalg`` package, when it is not imported yet: importing a submodule runs its
    package's ``__init__`` first, and ``scipy.linalg``'s imports most of SciPy's array-API
    layer (the bulk of a first ``solve`` with a warm compile cache), while the two
    extension modules load in a few ms. They stay in ``sys.modules`` under their own names
    (Cython modules load once per process), so a later ``import scipy.linalg`` finds them
    there, and ``_Adopt`` makes them its attributes as an ordinary import would. Any failure
    leaves it to the ordinary import in ``_lapack.initialize``."""
    if "scipy.linalg" in sys.modules:
        return
    _load(["cython_blas", "cython_lapack"])


def _load(names: list) -> None:
    """Load the extension modules ``scipy.linalg.<name>`` on their own (see ``preload``);
    any layout or loading problem leaves them to the ordinary import."""
    try:  # (the folder found without importing the scipy package: 25-45 ms, and the f2py
        # wrappers the host rules call load without it, 10-15 ms for both)
        spec = importlib.util.find_spec("scipy")
        if spec is None or not spec.submodule_search_locations:
            return
        folder = os.path.join(list(spec.submodule_search_locations)[0], "linalg")
        for name in names:
            full = f"scipy.linalg.{name}"
            if full in sys.modules:
                continue
            path = next(p for p in (os.path.join(folder, name + suffix) for suffix in
                                    importlib.machinery.EXTENSION_SUFFIXES) if os.path.exists(p))
            spec = importlib.util.spec_from_file_location(full, path)
            if spec is None or spec.loader is None:
                return
            module = importlib.util.module_from_spec(spec)
            sys.modules[full] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[full]
                raise
            if name not in _CHILDREN:
                _CHILDREN.append(name)
        if not any(isinstance(h, _Adopt) for h in sys.meta_path):
            sys.meta_path.insert(0, _Adopt())
    except Exception:  # noqa: BLE001  (any layout or loading problem: the ordinary import)
        return


class _Adopt:
    """A one-shot import hook: when ``scipy.linalg`` is imported after ``_load``, its module
    gets the preloaded submodules as attributes once its ``__init__`` ran
    (``scipy.linalg.cython_blas`` works as after an ordinary import)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "scipy.linalg":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        loader = getattr(spec, "loader", None)
        run = getattr(loader, "exec_module", None)
        if run is None:
            return spec

        def exec_module(module: Any) -> None:
            run(module)
            for child in _CHILDREN:
                sub = sys.modules.get(f"scipy.linalg.{child}")
                if sub is not None and not hasattr(module, child):
                    setattr(module, child, sub)
        loader.exec_module = exec_module  # type: ignore[union-attr]
        return spec
