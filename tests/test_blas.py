"""The BLAS matmul kernel (xla_array/kernels/blas.py, kernels/native/blas_ffi.c): values
against NumPy for every dtype, transpose flag and batch, the rule that picks it, and the
fallbacks."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xla_array as xp
from xla_array.kernels import blas as _blas

pytestmark = pytest.mark.skipif(not _blas.available(), reason="no C compiler: BLAS kernel off")

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
TOL = {np.float32: 2e-5, np.float64: 1e-12, np.complex64: 2e-5, np.complex128: 1e-12}


def _rand(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _uses_blas(*arrays) -> bool:
    return "xla_array_gemm" in xp.debug.hlo(*arrays)


@pytest.fixture
def small_blas(monkeypatch):
    """Send every float matmul to BLAS, so small shapes (few, cheap compiles) reach the kernel."""
    for name, value in (("MIN_K", 1), ("MIN_MN", 1), ("MIN_FLOPS", 0)):
        monkeypatch.setattr(_blas, name, value)


@pytest.mark.parametrize("dtype", DTYPES)
def test_products_match_numpy(dtype, small_blas):
    rng = np.random.default_rng(0)
    a, b = _rand(rng, (5, 7), dtype), _rand(rng, (7, 3), dtype)
    at, bt = np.ascontiguousarray(a.T), np.ascontiguousarray(b.T)
    x, y, xt, yt = (xp.asarray(v) for v in (a, b, at, bt))
    cases = {  # each flag combination of the kernel: op(A) @ op(B)
        "nn": (x @ y, a @ b),
        "tn": (xt.T @ y, a @ b),
        "nt": (x @ yt.T, a @ b),
        "tt": (xt.T @ yt.T, a @ b),
        "x.T @ x": (x.T @ x, a.T @ a),
    }
    for name, (got, want) in cases.items():
        assert _uses_blas(got), name
        assert got.dtype == xp.asarray(want).dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=TOL[dtype], atol=TOL[dtype],
                                   err_msg=name)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_batched_and_broadcast_products(dtype, small_blas):
    rng = np.random.default_rng(1)
    a, b, c = _rand(rng, (2, 3, 4, 5), dtype), _rand(rng, (2, 3, 5, 6), dtype), \
        _rand(rng, (5, 6), dtype)
    got, got2 = xp.asarray(a) @ xp.asarray(b), xp.asarray(a) @ xp.asarray(c)
    assert _uses_blas(got) and _uses_blas(got2)
    np.testing.assert_allclose(np.asarray(got), a @ b, rtol=TOL[dtype], atol=TOL[dtype])
    np.testing.assert_allclose(np.asarray(got2), a @ c, rtol=TOL[dtype], atol=TOL[dtype])


def test_mixed_dtypes_are_promoted_first(small_blas):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((4, 6)).astype(np.float32), rng.standard_normal((6, 3))
    got = xp.asarray(a) @ xp.asarray(b)
    assert got.dtype == xp.float64 and _uses_blas(got)
    np.testing.assert_allclose(np.asarray(got), a.astype(np.float64) @ b, rtol=1e-12)


def test_empty_contraction_gives_zeros(monkeypatch):
    for name in ("MIN_K", "MIN_MN", "MIN_FLOPS"):
        monkeypatch.setattr(_blas, name, 0)
    got = xp.ones((3, 0), dtype=xp.float32) @ xp.ones((0, 4), dtype=xp.float32)
    assert _uses_blas(got)
    np.testing.assert_array_equal(np.asarray(got), np.zeros((3, 4), np.float32))


def test_which_products_use_blas():
    big = xp.ones((128, 128), dtype=xp.float32)
    assert _uses_blas(big @ big)
    assert _uses_blas(xp.astype(big, xp.complex64) @ xp.astype(big, xp.complex64))
    thin = xp.ones((4096, 64), dtype=xp.float32)         # k = 64 < MIN_K: XLA fuses these
    assert not _uses_blas(thin @ thin.T)
    assert not _uses_blas(xp.astype(thin, xp.float64) @ xp.astype(thin, xp.float64).T)
    gram = xp.ones((4096, 32), dtype=xp.float64)         # X.T @ X: k = 4096, m = n = 32
    assert _uses_blas(gram.T @ gram)
    narrow = xp.ones((4096, 16), dtype=xp.float64)       # m = n = 16 < MIN_MN
    assert not _uses_blas(narrow.T @ narrow)
    assert not _uses_blas(big @ xp.ones(128, dtype=xp.float32))        # matrix-vector
    ints = xp.ones((128, 128), dtype=xp.int32)
    assert not _uses_blas(ints @ ints)
    small = xp.ones((32, 128), dtype=xp.float32)         # 32 * 32 * 128 < MIN_FLOPS
    assert not _uses_blas(small @ small.T)
    with xp.flags.using(blas=False):
        off = big @ big
    assert not _uses_blas(off)
    np.testing.assert_array_equal(np.asarray(off), np.asarray(big @ big))


def test_independent_products_and_threads(run_threads):
    """XLA may run independent gemms at once, and Python threads call the kernel together."""
    rng = np.random.default_rng(4)
    a = [rng.standard_normal((160, 200)) for _ in range(3)]
    b = [rng.standard_normal((200, 150)) for _ in range(3)]
    xa, xb = [xp.asarray(v) for v in a], [xp.asarray(v) for v in b]
    total = xa[0] @ xb[0] + xa[1] @ xb[1] + xa[2] @ xb[2]
    assert _uses_blas(total)
    np.testing.assert_allclose(np.asarray(total), sum(p @ q for p, q in zip(a, b)), rtol=1e-12)

    def work(i):
        for _ in range(10):
            np.testing.assert_allclose(np.asarray(xa[i] @ xb[i]), a[i] @ b[i], rtol=1e-12)

    assert run_threads(work, 3) == []


def test_inside_jit():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((200, 80)), rng.standard_normal((200, 70))  # k = 200: BLAS
    f = xp.jit(lambda x, y: x.T @ y + 1.0)
    assert "xla_array_gemm_tn" in f.compile(xp.asarray(a), xp.asarray(b)).as_text()
    got = f(xp.asarray(a), xp.asarray(b))
    np.testing.assert_allclose(np.asarray(got), a.T @ b + 1.0, rtol=1e-12)


def _run(code: str, env: dict) -> str:
    full = {**os.environ, **env}
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


_CHECK = """
    import numpy as np, xla_array as xp
    from xla_array.kernels import blas as _blas
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((128, 160)), rng.standard_normal((160, 144))
    got = xp.asarray(a) @ xp.asarray(b)
    uses = "xla_array_gemm" in xp.debug.hlo(got)
    np.testing.assert_allclose(np.asarray(got), a @ b, rtol=1e-12)
    print(_blas.available(), uses, _blas._state.get("blas_lib"),
          xp.debug.metrics().get("disk_hits", 0))
"""


def test_without_a_compiler_matmul_falls_back_to_xla(tmp_path):
    out = _run(_CHECK, {"CC": str(tmp_path / "no-such-cc"), "PATH": str(tmp_path),
                        "XLA_ARRAY_CACHE_DIR": str(tmp_path / "cache")})
    assert out.split()[:2] == ["False", "False"]


def test_scipy_blas_when_asked(tmp_path):
    out = _run(_CHECK, {"XLA_ARRAY_BLAS_LIB": "scipy", "XLA_ARRAY_CACHE_DIR": "off"})
    assert out.startswith("True True SciPy's")


def test_kernel_and_executable_reused_from_the_disk_cache(tmp_path):
    env = {"XLA_ARRAY_CACHE_DIR": str(tmp_path)}
    first = _run(_CHECK, env)
    assert first.startswith("True True")
    built = list((tmp_path / "native").glob("blas_ffi-*.so"))
    assert len(built) == 1 and (tmp_path / "native").stat().st_mode & 0o077 == 0
    second = _run(_CHECK, env)  # loads the kernel and the executable calling it from disk
    assert second.startswith("True True") and int(second.split()[-1]) >= 1
    assert list((tmp_path / "native").glob("blas_ffi-*.so")) == built


def test_deserialized_function_registers_the_kernel(tmp_path):
    """A process that only loads a serialized function (records no matmul) still runs it."""
    blob = tmp_path / "f.bin"
    _run(f"""
        import numpy as np, xla_array as xp
        f = xp.jit(lambda x, y: x.T @ y)
        x = xp.asarray(np.ones((200, 80))); y = xp.asarray(np.ones((200, 70)))
        c = f.compile(x, y)
        assert "xla_array_gemm" in c.as_text()
        open({str(blob)!r}, "wb").write(c.serialize())
    """, {"XLA_ARRAY_CACHE_DIR": "off"})
    out = _run(f"""
        import numpy as np, xla_array as xp
        g = xp.deserialize(open({str(blob)!r}, "rb").read())
        out = g(xp.asarray(np.ones((200, 80))), xp.asarray(np.ones((200, 70))))
        print(float(np.asarray(out)[3, 4]))
    """, {"XLA_ARRAY_CACHE_DIR": "off"})
    assert out.split() == ["200.0"]
