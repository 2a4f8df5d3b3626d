"""Build configuration beyond pyproject.toml: the optional native code, all built here, never
at run time.

- ``xla_array.core._graphcore`` (``xla_array/core/graphcore.c``) implements the graph's hot path
  (nodes, ``record``, leaves, the user-frame walk); ``xla_array.core.graph`` holds the same in
  pure Python and uses it when the extension was not built or ``XLA_ARRAY_NATIVE=0``.
- The native kernels (``xla_array/kernels/native/<name>.c``: XLA FFI handlers) become the
  shared libraries ``xla_array/kernels/_<name>.<suffix>``, which ``kernels/library.py`` loads
  with ctypes (they are no Python modules). They include jaxlib's FFI header
  (``jaxlib/include/xla/ffi/api/c_api.h``), so they are built only where jaxlib is importable
  by the build: ``scripts/_venv.sh`` installs the dependencies first and then the package
  with ``--no-build-isolation``, so the header is the runtime jaxlib's; a plain ``pip install``
  gets jaxlib from ``[build-system] requires`` in its isolated build environment. They are
  built for the architecture's baseline; the row pass picks its AVX2/FMA paths at run time.

Everything is ``optional``: without a C compiler (or without jaxlib's headers for the kernels)
the build prints a warning and the install succeeds; the pure-Python and pure-XLA paths then
give the same results.
"""

import importlib.util
import os
import sys

from setuptools import Extension, setup


def _ffi_include() -> str | None:
    """jaxlib's C header folder, found without importing jaxlib (None when it is missing)."""
    spec = importlib.util.find_spec("jaxlib")
    for d in (spec.submodule_search_locations or []) if spec else []:
        inc = os.path.join(d, "include")
        if os.path.exists(os.path.join(inc, "xla", "ffi", "api", "c_api.h")):
            return inc
    return None


KERNELS = ("rowpass_ffi", "lu_perm_ffi", "pairwise_ffi", "blas_ffi", "ufunc_ffi", "layout_ffi",
           "pocketfft_ffi")

extensions = [Extension("xla_array.core._graphcore", ["xla_array/core/graphcore.c"],
                        extra_compile_args=["-O2"], optional=True)]
include = _ffi_include()
if include is None:
    print("setup.py: jaxlib's FFI headers not found: building xla_array without its native "
          "kernels (XLA's own ops run instead)", file=sys.stderr)
else:
    # -fopenmp-simd only honours the ``omp simd`` pragmas (no OpenMP runtime)
    unix = sys.platform != "win32"
    flags = ["-O3", "-std=c99"] + (["-fopenmp-simd"] if unix else [])
    extensions += [Extension(f"xla_array.kernels._{name}", [f"xla_array/kernels/native/{name}.c"],
                             include_dirs=[include],
                             depends=["xla_array/kernels/native/ffi_common.h"],
                             extra_compile_args=flags, libraries=["m"] if unix else [],
                             optional=True)
                   for name in KERNELS]

setup(ext_modules=extensions)
