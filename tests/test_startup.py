"""First-touch costs (issue 23, item 5): what a fresh process pays on its first use of a
facility, checked for what it loads, never timed (timings live in benchmarks/)."""

import os
import subprocess
import sys
import textwrap


def _fresh(code: str) -> str:
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=300, env={**os.environ, "XLA_ARRAY_CACHE_DIR": "off"})
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_first_lapack_use_loads_scipys_lapack_modules_without_the_scipy_linalg_package():
    """The LAPACK kernels come from scipy.linalg.cython_blas/cython_lapack; importing them as
    submodules would run scipy.linalg's __init__ (most of a first solve's cost). They are
    loaded on their own, and a later ``import scipy.linalg`` still finds them as its
    attributes and works."""
    out = _fresh("""
        import sys
        import numpy as np
        import xla_array as xp
        a = np.random.default_rng(0).standard_normal((6, 6)) + 6 * np.eye(6)
        b = np.arange(6.0)
        x = np.asarray(xp.linalg.solve(xp.asarray(a, device="cpu"), xp.asarray(b, device="cpu")))
        print(np.allclose(a @ x, b), "scipy.linalg" in sys.modules,
              "scipy.linalg.cython_lapack" in sys.modules)
        import scipy.linalg
        from scipy.linalg import cython_blas
        print(scipy.linalg.cython_lapack is sys.modules["scipy.linalg.cython_lapack"],
              cython_blas is scipy.linalg.cython_blas,
              np.allclose(scipy.linalg.solve(a, b), x))
    """)
    assert out == ["True", "False", "True", "True", "True", "True"]


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
