"""Matrix products through NumPy's own BLAS (kernels/blas.py, native/blas_ffi.c): the bits of
NumPy's ``a @ b`` for every routine NumPy picks (gemm, gemv both ways, dot, syrk, its plain
loop), the same bits on the host (first use) and compiled, and where XLA's dot stays."""

import itertools

import numpy as np
import pytest

import xla_array as xp
from xla_array.kernels import blas

# CPU products (the kernel is a CPU custom call); the CPU is the default device on a GPU
# machine too
pytestmark = [pytest.mark.usefixtures("on_cpu"),
              pytest.mark.skipif(not blas.available(), reason=f"BLAS kernel unavailable: "
                                                              f"{blas.error()}")]

_sizes = itertools.count(2)


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), np.max(np.abs(got - want))


# (m, k, n): gemm at every transposition, the vectors' gemv and dot, NumPy's plain loop for
# k == 1 and one-row/one-column matrices, a long contraction (OpenBLAS's threads)
SHAPES = [(5, 7, 3), (50, 2000, 50), (16, 10000, 16), (1, 30, 5), (5, 30, 1), (4, 1, 6),
          (1, 1, 1), (33, 17, 1)]


def _random(rng, shape, dtype):
    v = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        v = v + 1j * rng.standard_normal(shape)
    return v.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("m, k, n", SHAPES)
def test_products_are_numpys_bit_for_bit(m, k, n, dtype):
    rng = np.random.default_rng(m * k + n)
    A, B = _random(rng, (m, k), dtype), _random(rng, (k, n), dtype)
    X, Y = _random(rng, (k, m), dtype), _random(rng, (n, k), dtype)
    a, b = A[0].copy(), B[:, 0].copy()  # (NumPy's strided vectors take other BLAS kernels)
    xa, xb, xX, xY, va, vb = map(xp.asarray, (A, B, X, Y, a, b))
    _same(xa @ xb, A @ B)
    _same(xX.T @ xb, X.T @ B)
    _same(xa @ xY.T, A @ Y.T)
    _same(xX.T @ xY.T, X.T @ Y.T)
    _same(xa @ vb, A @ b)
    _same(xX.T @ vb, X.T @ b)
    _same(va @ xb, a @ B)
    _same(va @ xY.T, a @ Y.T)
    _same(va @ vb, a @ b)
    _same(xX.T @ xX, X.T @ X)  # syrk and its mirrored triangle
    _same(xa @ xa.T, A @ A.T)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_stacks_empty_contractions_and_tensordot(dtype):
    rng = np.random.default_rng(7)
    A3 = _random(rng, (3, 20, 30), dtype)
    B3 = _random(rng, (3, 30, 10), dtype)
    _same(xp.asarray(A3) @ xp.asarray(B3), A3 @ B3)
    _same(xp.asarray(A3) @ xp.asarray(B3[0]), A3 @ B3[0])
    e1, e2 = np.ones((4, 0), dtype), np.ones((0, 5), dtype)
    _same(xp.asarray(e1) @ xp.asarray(e2), e1 @ e2)  # zeros
    A, B = A3[0], B3[0]
    _same(xp.tensordot(xp.asarray(A), xp.asarray(B), axes=1), np.tensordot(A, B, axes=1))


def test_special_values_and_subnormals_as_numpy():
    """NaN, infinities, and subnormal products: compiled code runs with flush-to-zero on, the
    kernel turns it off around the BLAS call, as NumPy runs."""
    A = np.array([[1e-160, 2.0, 0.0], [np.nan, 1.0, 0.0], [1e-300, -1e-10, np.inf]])
    B = np.array([[1e-160, 1.0], [0.0, np.inf], [0.0, -1.0]])
    with xp.flags.using(host_first=False):
        got = np.asarray(xp.asarray(A) @ xp.asarray(B))
    with np.errstate(invalid="ignore"):
        want = A @ B
    assert np.array_equal(got, want, equal_nan=True)
    assert got[0, 0] == want[0, 0] == 1e-320  # a subnormal result, not flushed to zero


def test_a_product_runs_on_the_host_first_with_the_compiled_bits(metrics):
    """First sight: NumPy's BLAS through the kernel's own C function, no compile; the second
    run compiles and gives the same bits."""
    n = next(_sizes) + 20
    rng = np.random.default_rng(n)
    X, w = rng.standard_normal((200, n)), rng.standard_normal(n)
    x, v = xp.asarray(X), xp.asarray(w)
    with xp.flags.using(host_first=True, host_first_budget=0.0):
        before = metrics()
        first = np.asarray(x.T @ (x @ v - 1.0) + x.T @ x @ v)
        mid = metrics()
        second = np.asarray(x.T @ (x @ v - 1.0) + x.T @ x @ v)
        after = metrics()
    assert mid["host_runs"] > before["host_runs"] and mid["compiles"] == before["compiles"]
    assert after["compiles"] > mid["compiles"]
    assert first.tobytes() == second.tobytes()
    assert np.allclose(first, X.T @ (X @ w - 1.0) + X.T @ X @ w)


def test_where_xlas_dot_stays():
    """Large results (XLA fuses the product into what reads it) or much work (OpenBLAS's
    threads), other dtypes, several contracted axes, fast_math, and the setting off."""
    rng = np.random.default_rng(1)
    side = int(np.sqrt(blas.LARGE))
    big = xp.asarray(rng.standard_normal((side, 4)).astype(np.float32))
    small = xp.asarray(rng.standard_normal((6, 4)))
    i = xp.asarray(rng.integers(0, 5, (6, 4)))
    assert "xla_array_matmul" in xp.debug.mlir(small @ small.T)
    assert "xla_array_matmul" not in xp.debug.mlir(big @ big.T)  # side * side == LARGE
    assert "xla_array_matmul" in xp.debug.mlir(big[:-1] @ big.T)
    tall = xp.ones((blas.WORK // 64 // 64, 64))  # 64 x 64 from WORK multiply-adds
    assert "xla_array_matmul" not in xp.debug.mlir(tall.T @ tall)
    assert "xla_array_matmul" in xp.debug.mlir(tall[1:].T @ tall[1:])
    h = xp.astype(small, xp.float16)
    assert "xla_array_matmul" not in xp.debug.mlir(h @ h.T)
    assert "xla_array_matmul" not in xp.debug.mlir(i @ i.T)
    assert "xla_array_matmul" not in xp.debug.mlir(xp.tensordot(small, small, axes=2))
    with xp.flags.using(fast_math=True):
        assert "xla_array_matmul" not in xp.debug.mlir(small @ small.T)
    with xp.flags.using(blas=False):
        assert "xla_array_matmul" not in xp.debug.mlir(small @ small.T)
        S = np.asarray(small)
        assert np.allclose(np.asarray(small @ small.T), S @ S.T)
