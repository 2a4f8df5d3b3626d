"""First-touch costs (issue 23, item 5): what a fresh process pays on its first use of a
facility, checked for what it loads, never timed (timings live in benchmarks/)."""

import os
import subprocess
import sys
import textwrap

import pytest

import xla_array as xp
from xla_array.kernels import library


def _fresh(code: str) -> str:
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=300, env={**os.environ, "XLA_ARRAY_CACHE_DIR": "off"})
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_first_lapack_use_loads_scipys_lapack_modules_without_the_scipy_linalg_package():
    """A first ``solve`` run on the host calls SciPy's f2py wrappers (``_flapack``), loaded on
    their own: neither the ``scipy`` package (25-45 ms) nor jaxlib's LAPACK targets are
    needed. A compiled one registers jaxlib's LAPACK kernels, which come from
    scipy.linalg.cython_blas/cython_lapack; importing them as submodules would run
    scipy.linalg's __init__ (most of a first solve's cost): they are loaded on their own
    too. A later ``import scipy.linalg`` still finds them all as its attributes and works."""
    out = _fresh("""
        import sys
        import numpy as np
        import xla_array as xp
        xp.flags.set(host_first=True)  # (the suite's check mode compiles every graph)
        a = np.random.default_rng(0).standard_normal((6, 6)) + 6 * np.eye(6)
        b = np.arange(6.0)
        x = np.asarray(xp.linalg.solve(xp.asarray(a, device="cpu"), xp.asarray(b, device="cpu")))
        print(np.allclose(a @ x, b), xp.debug.metrics()["host_runs"] > 0,
              "scipy" in sys.modules, "scipy.linalg._flapack" in sys.modules,
              "scipy.linalg.cython_lapack" in sys.modules)
        with xp.flags.using(host_first=False):
            y = np.asarray(xp.linalg.solve(xp.asarray(a), xp.asarray(b + 1.0)))
        print(np.allclose(a @ y, b + 1.0), "scipy.linalg" in sys.modules,
              "scipy.linalg.cython_lapack" in sys.modules)
        import scipy.linalg
        from scipy.linalg import cython_blas, lapack
        print(scipy.linalg.cython_lapack is sys.modules["scipy.linalg.cython_lapack"],
              cython_blas is scipy.linalg.cython_blas,
              scipy.linalg._flapack is sys.modules["scipy.linalg._flapack"],
              np.allclose(scipy.linalg.solve(a, b), x),
              lapack.get_lapack_funcs("getrf", (a,)).typecode == "d")
    """)
    assert out == ["True", "True", "False", "True", "False", "True", "False", "True",
                   "True", "True", "True", "True", "True"]


def test_lapack_after_scipy_linalg_was_imported_uses_the_ordinary_import():
    out = _fresh("""
        import sys
        import numpy as np
        import scipy.linalg
        import xla_array as xp
        a = np.eye(3) * 2.0
        print(np.allclose(np.asarray(xp.linalg.inv(xp.asarray(a))), np.eye(3) / 2),
              type(sys.meta_path[0]).__name__ != "_Adopt")
    """)
    assert out == ["True", "True"]


def test_a_first_array_does_not_load_the_multi_process_runtime():
    """The default device looks for a multi-process runtime only where ``initialize`` loaded
    its module (which imports ``socket``, ~5 ms): a first array in a single process loads
    neither; with ``xla_array.distributed`` imported and no ``initialize``, the default is
    still this process's first CPU device."""
    out = _fresh("""
        import sys
        import xla_array as xp
        x = xp.asarray([1.0, 2.0]) * 3.0
        print(float(xp.sum(x)), x.device, "xla_array.core.backend_distributed" in sys.modules,
              "socket" in sys.modules)
    """)
    assert out == ["9.0", "cpu:0", "False", "False"]
    out = _fresh("""
        import sys
        import xla_array as xp
        import xla_array.distributed
        print("xla_array.core.backend_distributed" in sys.modules, xp.zeros(2).device)
    """)
    assert out == ["True", "cpu:0"]


@pytest.mark.skipif(not xp.flags.get("native") or library.path("pocketfft_ffi") is None,
                    reason="no native kernels (XLA_ARRAY_NATIVE=0, or not built)")
def test_a_native_kernel_is_loaded_when_a_graph_first_needs_it():
    """A kernel's library is loaded (and, for the FFT kernel, NumPy's loops looked up: 2 ms)
    when a graph first has a node of an op it replaces, not with the first graph whatever it
    is; the disk cache's context names the kernels that may be used without loading them.
    Compiled and on the host alike."""
    out = _fresh("""
        import sys
        import numpy as np
        import xla_array as xp
        from xla_array.core import registry
        from xla_array.kernels.library import NativeLibrary

        def loaded():  # the kinds whose libraries are all loaded
            kinds = []
            for k in registry.KERNELS.values():
                found = vars(sys.modules[k.available.__module__]).values()
                libs = [v for v in found if isinstance(v, NativeLibrary)] + [
                    v for f in found if isinstance(f, list) for v in f
                    if isinstance(v, NativeLibrary)]
                if libs and all(lib.ok for lib in libs):
                    kinds.append(k.kind)
            return ",".join(sorted(kinds)) or "-"

        x = xp.asarray(np.linspace(0.0, 1.0, 8))
        print(registry.context(), loaded())
        print(float(xp.sum(x * 2.0)), loaded())  # a host run: the sum's kernel only
        with xp.flags.using(host_first=False):  # compiled
            print(float(xp.sum(xp.exp(x))) > 0, loaded())
        f = np.asarray(xp.fft.rfft(x))
        print(np.allclose(f, np.fft.rfft(np.linspace(0.0, 1.0, 8))), loaded())
    """)
    assert out[0] == "blas,layout,lu_perm,pairwise,pocketfft,rowpass,scan,ufunc"
    assert out[1] == "-"
    assert out[2:4] == ["8.0", "pairwise"]
    assert out[4:6] == ["True", "pairwise,ufunc"]
    assert out[6:8] == ["True", "pairwise,pocketfft,ufunc"]
