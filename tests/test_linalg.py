"""The linalg extension, differential against numpy.linalg on random stacks of matrices.

Shapes come from a small fixed set so compiled executables are shared between examples;
decompositions are checked by their invariants (reconstruction, orthonormality, ordering),
not by raw vectors, which are not unique.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xla_array as xp
from xla_array import linalg as LA

DTYPES = ["float32", "float64", "complex64", "complex128"]
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-10, "complex128": 1e-10}
REAL = {"float32": "float32", "complex64": "float32", "float64": "float64",
        "complex128": "float64"}
SQUARE = [(4, 4), (2, 3, 3)]
RECT = [(2, 5, 3), (3, 4)]
FAST = settings(max_examples=10, deadline=None)

dtypes = st.sampled_from(DTYPES)
seeds = st.integers(0, 2**32 - 1)


def rand(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def herm(a):
    return np.conj(np.swapaxes(a, -1, -2))


def well_conditioned(shape, dtype, seed):
    """Random matrices plus a multiple of the identity (never near singular)."""
    n = shape[-1]
    return (rand(shape, dtype, seed) + 3 * n * np.eye(n)).astype(dtype)


def spd(shape, dtype, seed):
    a = rand(shape, dtype, seed)
    return (a @ herm(a) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def close(got, want, dtype, scale=1.0):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    tol = TOL[dtype] * scale
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, np.abs(want).max(
        initial=0)))


def orthonormal_columns(q, dtype):
    k = q.shape[-1]
    close(herm(q) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), dtype, 10)


# ---------------------------------------------------------------- LU-based


@settings(max_examples=8, deadline=None)
@given(dtype=dtypes, shape=st.sampled_from(SQUARE), seed=seeds)
def test_det_slogdet_inv_solve_power(dtype, shape, seed):
    a = well_conditioned(shape, dtype, seed)
    b = rand(shape[:-1] + (2,), dtype, seed + 1)
    v = rand(shape[-1:], dtype, seed + 2)
    A = xp.asarray(a)
    det, (sign, logabs), inv = LA.det(A), LA.slogdet(A), LA.inv(A)
    sol, sol_v = LA.solve(A, xp.asarray(b)), LA.solve(A, xp.asarray(v))
    powers = {n: LA.matrix_power(A, n) for n in (0, 1, 3, -2)}
    xp.materialize(det, sign, logabs, inv, sol, sol_v, *powers.values())  # one executable
    assert det.dtype == A.dtype and sign.dtype == A.dtype
    assert logabs.dtype == getattr(xp, REAL[dtype])
    close(det, np.linalg.det(a), dtype, 10)
    s_np, l_np = np.linalg.slogdet(a)
    close(sign, s_np, dtype, 10)
    close(logabs, l_np, dtype, 10)
    close(inv, np.linalg.inv(a), dtype, 10)
    close(sol, np.linalg.solve(a, b), dtype, 10)
    want_v = np.linalg.solve(a, np.broadcast_to(v[:, None], shape[:-1] + (1,)))[..., 0]
    close(sol_v, want_v, dtype, 10)
    for n, p in powers.items():
        close(p, np.linalg.matrix_power(a, n), dtype, 100)


def test_solve_broadcasts_stacks_and_promotes():
    a = well_conditioned((3, 1, 4, 4), "float32", 0)
    b = rand((2, 4, 5), "float64", 1)
    out = LA.solve(xp.asarray(a), xp.asarray(b))
    assert out.shape == (3, 2, 4, 5) and out.dtype == xp.float64
    close(out, np.linalg.solve(a.astype("float64"), b), "float32")


def test_integer_input_is_promoted_to_float64():
    a = np.array([[2, 1], [1, 3]])
    d = LA.det(xp.asarray(a))
    assert d.dtype == xp.float64
    assert float(d) == pytest.approx(5.0)
    close(LA.inv(xp.asarray(a)), np.linalg.inv(a), "float64")


# ---------------------------------------------------------------- decompositions


@FAST
@given(dtype=dtypes, shape=st.sampled_from(SQUARE), seed=seeds, upper=st.booleans())
def test_cholesky(dtype, shape, seed, upper):
    a = spd(shape, dtype, seed)
    out = LA.cholesky(xp.asarray(a), upper=upper)
    want = np.linalg.cholesky(a)
    close(out, herm(want) if upper else want, dtype, 10)


@FAST
@given(dtype=dtypes, shape=st.sampled_from(SQUARE), seed=seeds)
def test_eigh_eigvalsh(dtype, shape, seed):
    a = rand(shape, dtype, seed)
    a = (a + herm(a)) / 2
    w, v = res = LA.eigh(xp.asarray(a))
    wv = LA.eigvalsh(xp.asarray(a))
    xp.materialize(w, v, wv)
    assert type(res).__name__ == "EighResult" and res.eigenvalues is w and res.eigenvectors is v
    assert w.dtype == getattr(xp, REAL[dtype]) and v.dtype == getattr(xp, dtype)
    w, v = np.asarray(w), np.asarray(v)
    close(w, np.linalg.eigvalsh(a), dtype, 10)
    assert np.all(np.diff(w, axis=-1) >= 0)
    orthonormal_columns(v, dtype)
    close(v @ (w[..., :, None] * herm(v)), a, dtype, 10)
    close(wv, np.linalg.eigvalsh(a), dtype, 10)


@FAST
@given(dtype=dtypes, shape=st.sampled_from(SQUARE), seed=seeds)
def test_eig_eigvals(dtype, shape, seed):
    a = rand(shape, dtype, seed)
    w, v = LA.eig(xp.asarray(a))
    wv = LA.eigvals(xp.asarray(a))
    xp.materialize(w, v, wv)
    cd = "complex64" if REAL[dtype] == "float32" else "complex128"
    assert w.dtype == getattr(xp, cd) and v.dtype == getattr(xp, cd)
    w, v = np.asarray(w), np.asarray(v)
    close(a @ v, v * w[..., None, :], dtype, 100)
    close(np.linalg.norm(v, axis=-2), np.ones(w.shape), dtype, 10)
    close(np.sort_complex(np.asarray(wv)),
          np.sort_complex(np.linalg.eigvals(a)), dtype, 100)


@FAST
@given(dtype=dtypes, shape=st.sampled_from(RECT), seed=seeds, full=st.booleans())
def test_svd_svdvals(dtype, shape, seed, full):
    a = rand(shape, dtype, seed)
    *batch, m, n = shape
    k = min(m, n)
    u, s, vh = res = LA.svd(xp.asarray(a), full_matrices=full)
    sv = LA.svdvals(xp.asarray(a))
    xp.materialize(u, s, vh, sv)
    assert type(res).__name__ == "SVDResult" and (res.U, res.S, res.Vh) == (u, s, vh)
    assert u.shape == (*batch, m, m if full else k) and vh.shape == (*batch, n if full else k, n)
    assert s.shape == (*batch, k) and s.dtype == getattr(xp, REAL[dtype])
    u, s, vh = np.asarray(u), np.asarray(s), np.asarray(vh)
    close(s, np.linalg.svd(a, compute_uv=False), dtype, 10)
    assert np.all(np.diff(s, axis=-1) <= 0)
    orthonormal_columns(u, dtype)
    orthonormal_columns(herm(vh), dtype)
    close((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, dtype, 10)
    close(sv, np.linalg.svd(a, compute_uv=False), dtype, 10)


def test_sibling_results_are_written_back_not_recomputed():
    """Computing one result of a decomposition writes back the others: U and Vt (their NaN
    guards are part of the op) hold their values, nothing of the SVD is left to recompute
    (Ridge/PCA rely on it: a later graph reading U does not check X again)."""
    a = np.random.default_rng(3).normal(size=(20, 4))
    u, s, vt = LA.svd(xp.asarray(a), full_matrices=False)
    assert float(s[0]) == pytest.approx(np.linalg.svd(a, compute_uv=False)[0])
    for v in (u, vt):
        with pytest.raises(ValueError, match="holds its value already"):
            xp.debug.mlir(v)
    np.testing.assert_allclose((np.asarray(u) * np.asarray(s)) @ np.asarray(vt), a, atol=1e-10)
    q, r = LA.qr(xp.asarray(a))
    assert float(xp.sum(xp.abs(r))) > 0
    assert "geqrf" not in xp.debug.mlir(q)  # (orgqr, not computed yet, stays)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), a, atol=1e-10)


@FAST
@given(dtype=dtypes, shape=st.sampled_from(RECT + [(3, 5)]), seed=seeds,
       mode=st.sampled_from(["reduced", "complete"]))
def test_qr(dtype, shape, seed, mode):
    a = rand(shape, dtype, seed)
    *batch, m, n = shape
    q, r = res = LA.qr(xp.asarray(a), mode=mode)
    assert type(res).__name__ == "QRResult" and res.Q is q and res.R is r
    kq = m if mode == "complete" else min(m, n)
    assert q.shape == (*batch, m, kq) and r.shape == (*batch, kq, n)
    q, r = np.asarray(q), np.asarray(r)
    orthonormal_columns(q, dtype)
    assert np.all(np.tril(r, -1) == 0)
    assert np.all(np.abs(np.imag(np.diagonal(r, axis1=-2, axis2=-1))) <= 1e-5)
    close(q @ r, a, dtype, 10)


# ---------------------------------------------------------------- built on SVD


@FAST
@given(dtype=dtypes, shape=st.sampled_from(RECT), seed=seeds)
def test_pinv_rank_matrix_norm(dtype, shape, seed):
    a = rand(shape, dtype, seed)
    low = a[..., :, :1] @ a[..., :1, :]  # rank 1
    A, L = xp.asarray(a), xp.asarray(low)
    ords = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)
    got = {"pinv": LA.pinv(A), "pinv_low": LA.pinv(L, rtol=1e-3), "rank_low": LA.matrix_rank(L),
           "rank": LA.matrix_rank(A), "keep": LA.matrix_norm(A, ord=2, keepdims=True)}
    got.update({o: LA.matrix_norm(A, ord=o) for o in ords})
    xp.materialize(*got.values())
    # pinv's perturbation bound: a backward-stable pinv (an SVD's) is within about
    # cond(a) * eps * ||pinv(a)|| of the exact one (a first-order bound, up to a small
    # factor for the rectangular case): NumPy's and ours each, so twice that, x 8 for the
    # factor and the dimensions (at most 5 here)
    eps = np.finfo(REAL[dtype]).eps
    want = np.linalg.pinv(a)
    bound = 16 * eps * np.linalg.cond(a.astype(np.complex128)) * np.abs(want).max(axis=(-2, -1))
    diff = np.abs(np.asarray(got["pinv"]) - want).max(axis=(-2, -1))
    assert np.all(diff <= bound), (diff, bound)
    # rank 1: the cut (rtol=1e-3) leaves sigma_1 alone, and the gap between it and the
    # singular values cut (~eps sigma_1) makes it well conditioned: u1 v1^T / sigma_1, within
    # a few eps of max|pinv| (here 64 eps: 8e-6 in float32, 1.4e-14 in float64)
    want_low = np.linalg.pinv(low, rtol=1e-3)
    np.testing.assert_allclose(np.asarray(got["pinv_low"]), want_low, rtol=0,
                               atol=64 * eps * np.abs(want_low).max())
    assert got["rank"].dtype == xp.int64
    np.testing.assert_array_equal(np.asarray(got["rank_low"]), np.linalg.matrix_rank(low))
    np.testing.assert_array_equal(np.asarray(got["rank"]), np.linalg.matrix_rank(a))
    for o in ords:
        assert got[o].dtype == getattr(xp, REAL[dtype])
        close(got[o], np.linalg.matrix_norm(a, ord=o), dtype, 10)
    close(got["keep"], np.linalg.matrix_norm(a, ord=2, keepdims=True), dtype, 10)


def test_rtol_array_broadcasts_over_the_stack():
    a = rand((2, 4, 3), "float64", 3)
    a[1] = a[1, :, :1] @ a[1, :1, :] + 1e-6 * a[1]
    r = LA.matrix_rank(xp.asarray(a), rtol=xp.asarray(np.array([1e-12, 1e-3])))
    np.testing.assert_array_equal(np.asarray(r), [3, 1])


# ---------------------------------------------------------------- norms and structure


@FAST
@given(dtype=dtypes, seed=seeds, axis=st.sampled_from([None, -1, 0, (0, 2), (2, 0, 1)]),
       ord=st.sampled_from([2, 1, 0, math.inf, -math.inf, 3, -1.5]), keepdims=st.booleans())
def test_vector_norm(dtype, seed, axis, ord, keepdims):
    a = rand((2, 3, 4), dtype, seed)
    a[0, 0, 0] = 0
    out = LA.vector_norm(xp.asarray(a), axis=axis, ord=ord, keepdims=keepdims)
    assert out.dtype == getattr(xp, REAL[dtype])
    with np.errstate(divide="ignore"):
        want = np.linalg.vector_norm(a, axis=axis, ord=ord, keepdims=keepdims)
    close(out, want, dtype, 10)


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", "complex64"])
def test_diagonal_and_trace(dtype):
    a = (np.arange(2 * 3 * 4) % 7).reshape(2, 3, 4).astype(dtype)
    A = xp.asarray(a)
    for off in (-3, -1, 0, 2, 4, 9):
        np.testing.assert_array_equal(np.asarray(LA.diagonal(A, offset=off)),
                                      np.linalg.diagonal(a, offset=off))
        t = LA.trace(A, offset=off)
        want = np.linalg.trace(a, offset=off)
        assert t.dtype == xp.sum(A).dtype
        np.testing.assert_allclose(np.asarray(t), want)
    wide = xp.complex128 if dtype.startswith("complex") else xp.float64
    assert LA.trace(A, dtype=wide).dtype == wide


def test_cross_outer_and_reexports():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((2, 4, 3)), rng.standard_normal((4, 3))
    close(LA.cross(xp.asarray(a), xp.asarray(b)), np.linalg.cross(a, b), "float64")
    at, bt = np.swapaxes(a, -1, -2), b.T
    close(LA.cross(xp.asarray(at), xp.asarray(bt), axis=-2), np.cross(at, bt, axis=-2),
          "float64")
    ai = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(LA.cross(xp.asarray(ai), xp.asarray(ai[::-1]))),
                                  np.linalg.cross(ai, ai[::-1]))
    x, y = np.arange(3.0), np.arange(4).astype(np.int32)
    out = LA.outer(xp.asarray(x), xp.asarray(y))
    assert out.dtype == xp.float64
    np.testing.assert_array_equal(np.asarray(out), np.outer(x, y))
    assert LA.matmul is xp.matmul and LA.tensordot is xp.tensordot
    assert LA.vecdot is xp.vecdot and LA.matrix_transpose is xp.matrix_transpose
    for name in LA.__all__:
        assert hasattr(LA, name), name


def _lu_perm_reference(a):
    """The row permutation of scipy's LU with partial pivoting: a[perm] == L @ U."""
    import scipy.linalg
    out = []
    for m in a.reshape((-1,) + a.shape[-2:]):
        piv = scipy.linalg.lu_factor(m, check_finite=False)[1]
        perm = np.arange(m.shape[0])
        for i, j in enumerate(piv):
            perm[[i, j]] = perm[[j, i]]
        out.append(perm)
    return np.array(out).reshape(a.shape[:-1])


def _without_lu_kernel(monkeypatch):
    """As where the package was built without the kernel (executables compiled with it go)."""
    from xla_array.core.cache import executables
    from xla_array.kernels import lu_perm
    monkeypatch.setattr(lu_perm._LIB, "ok", False)
    executables.clear()


@pytest.mark.parametrize("shape", [(1, 1), (6, 6), (3, 5, 5), (2, 2, 4, 4)])
def test_lu_permutation_kernel_and_xla_loop_agree(shape, monkeypatch):
    """getrf's pivots -> row permutation: the native kernel (CPU, where it was built: the
    rewrite swaps it in) and the XLA loop (other platforms, or no kernel) give scipy's
    permutation, matrix by matrix."""
    from xla_array.api.linalg_ops import getrf, pivots_to_perm
    from xla_array.kernels import lu_perm
    a = rand(shape, "float64", 11)
    a[..., 0, :] *= 1e-3  # pivoting certain in the first column
    m = shape[-1]
    want = _lu_perm_reference(a)
    kernel = pivots_to_perm(getrf(xp.asarray(a))[1], m)
    assert kernel._node.op.name == "lu_permutation"  # recorded as the XLA loop, always
    assert ("xla_array_lu_perm" in xp.debug.mlir(kernel)) == lu_perm.available()
    np.testing.assert_array_equal(np.asarray(kernel), want)
    _without_lu_kernel(monkeypatch)
    loop = pivots_to_perm(getrf(xp.asarray(a))[1], m)
    assert "xla_array_lu_perm" not in xp.debug.mlir(loop)
    np.testing.assert_array_equal(np.asarray(loop), want)


def test_solve_without_the_permutation_kernel(monkeypatch):
    """Where the kernel was not built, solve and inv run the XLA loop, same results."""
    _without_lu_kernel(monkeypatch)
    a = well_conditioned((2, 4, 4), "float64", 5)
    b = rand((2, 4, 3), "float64", 6)
    sol = LA.solve(xp.asarray(a), xp.asarray(b))
    assert "xla_array_lu_perm" not in xp.debug.mlir(sol)
    close(sol, np.linalg.solve(a, b), "float64", 10)
    close(LA.inv(xp.asarray(a)), np.linalg.inv(a), "float64", 10)


def _n_results(arr):
    head = next(line for line in xp.debug.mlir(arr).splitlines() if "@main" in line)
    return head.split("->", 1)[1].count("tensor<")


@pytest.mark.usefixtures("on_cpu")  # the CPU's LAPACK graphs (on a GPU, eig runs on the host)
def test_single_array_results_write_back_only_that_array():
    """Functions returning one array from a decomposition compute it and nothing else: the
    factors behind it are intermediates, not outputs copied out (inv(512x512) ran ~25%
    slower with them)."""
    a = well_conditioned((2, 5, 5), "float32", 3)
    A = xp.asarray(a)
    S = A @ LA.matrix_transpose(A)
    xp.materialize(S)  # else a pending S would be an output of every graph below
    outs = {"inv": LA.inv(A), "solve": LA.solve(A, A[..., :2]), "det": LA.det(A),
            "cholesky": LA.cholesky(S), "eigvalsh": LA.eigvalsh(S), "svdvals": LA.svdvals(A),
            "eigvals": LA.eigvals(A)}
    for name, out in outs.items():  # (and the LinAlgError check's int32 where it can fail)
        assert _n_results(out) == (1 if name == "det" else 2), name
        assert name == "det" or "-> (tensor<" in xp.debug.mlir(out) and \
            ", tensor<i32>)" in xp.debug.mlir(out), name
    close(outs["inv"], np.linalg.inv(a), "float32", 10)
    close(outs["det"], np.linalg.det(a), "float32", 10)
    # several arrays from one decomposition: computing one still writes back what the others
    # need (sign's graph also writes back the LU factors and pivots that logabsdet uses)
    sign, logabs = LA.slogdet(A)
    assert _n_results(sign) > 1
    xp.materialize(sign)
    assert "getrf" not in xp.debug.mlir(logabs)
    close(logabs, np.linalg.slogdet(a)[1], "float32", 10)


# ---------------------------------------------------------------- failures, laziness, errors


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_singular_and_nonfinite_input_give_nan_per_matrix(dtype):
    good = np.diag([2.0, 3.0, 4.0])
    sing = np.array([[1.0, 2, 3], [2, 4, 6], [1, 1, 1]])
    nanm = good.copy()
    nanm[1, 1] = np.nan
    A = xp.asarray(np.stack([sing, good]).astype(dtype))
    N = xp.asarray(np.stack([nanm, good]).astype(dtype))
    not_pd = xp.asarray(np.stack([-good, good]).astype(dtype))
    with xp.flags.using(linalg_errors=False):  # (raising: tests/test_runtime_checks.py)
        nan_rows = [LA.inv(A), LA.solve(A, xp.asarray(np.ones(3, dtype))),
                    LA.matrix_power(A, -1), LA.cholesky(A), LA.cholesky(not_pd), *LA.svd(N),
                    LA.svdvals(N), *LA.eigh(N), LA.eigvalsh(N), *LA.eig(N), LA.pinv(N),
                    LA.matrix_norm(N, ord=2)]
    det, (sign, logabs) = LA.det(A), LA.slogdet(A)
    xp.materialize(*nan_rows, det, sign, logabs)  # nothing raises, nothing is computed twice
    for out in nan_rows:
        out = np.asarray(out)
        assert np.all(np.isnan(out[0])) and np.all(np.isfinite(out[1]))
    assert np.asarray(det)[0] == 0
    assert np.asarray(sign)[0] == 0 and np.asarray(logabs)[0] == -np.inf


def test_lazy_and_fused(metrics):
    a = well_conditioned((3, 3), "float64", 7)
    A = xp.asarray(a)
    out = LA.det(LA.inv(A) @ A) + LA.svdvals(A)[0] + LA.eigvalsh(A @ A.T)[-1]
    assert out.is_pending
    assert metrics()["compiles"] == 0 and metrics()["executions"] == 0
    want = 1 + np.linalg.svd(a, compute_uv=False)[0] + np.linalg.eigvalsh(a @ a.T)[-1]
    assert float(out) == pytest.approx(want)
    assert metrics()["executions"] == 1


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3), (3, 0), (0, 2)])
def test_empty_matrices(shape):
    a = np.zeros(shape)
    A = xp.asarray(a)
    square = shape[-1] == shape[-2]
    if square:
        np.testing.assert_array_equal(np.asarray(LA.det(A)), np.linalg.det(a))
        assert LA.inv(A).shape == shape and LA.cholesky(A).shape == shape
        assert LA.eigh(A).eigenvalues.shape == shape[:-1]
    for full in (True, False):
        u, s, vh = LA.svd(A, full_matrices=full)
        uu, ss, vv = np.linalg.svd(a, full_matrices=full)
        assert (u.shape, s.shape, vh.shape) == (uu.shape, ss.shape, vv.shape)
    q, r = LA.qr(A)
    assert (q.shape, r.shape) == tuple(t.shape for t in np.linalg.qr(a))
    assert LA.pinv(A).shape == np.linalg.pinv(a).shape
    assert LA.matrix_rank(A).shape == shape[:-2]


@pytest.mark.parametrize("blas", [True, False])
def test_products_of_negative_zeros_sum_to_zero_as_numpys(blas):
    """NumPy's matmul adds the products to 0.0, so products that are all -0.0 give 0.0
    (``1 / (a @ b)`` is inf, not -inf). XLA's dot gave -0.0: one product a result (a
    multiply), a vector times a matrix (a reduce); mixed dtypes, large results, stacks and
    complex values, with and without the BLAS kernel, on the host first and compiled."""
    cases = [(-np.ones((3, 1), np.float32), np.zeros((1, 3))),
             (np.array([-0.75, 0.5, -5.5], np.float32).reshape(3, 1, 1), np.zeros(1)),
             (-np.ones((1200, 1)), np.zeros((1, 1200))),
             (np.array([[-1 - 1j], [1 + 0j]]), np.array([[0j, complex(-0.0, 0.0)]])),
             (-np.ones((2, 3, 1)), np.zeros((2, 1, 2))),
             (np.zeros(2), np.array([[-4.75, -7.75, 1.5], [2.0, -3.0, 1.0]], np.float32)),
             (-np.ones((3, 2), np.float32), np.zeros((2, 4))),
             (-np.ones((2, 4, 3)), np.zeros((2, 3, 2)))]
    for host_first in (True, False):
        with xp.flags.using(blas=blas, host_first=host_first):
            for a, b in cases:
                got, want = np.asarray(xp.asarray(a) @ xp.asarray(b)), a @ b
                assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (a, b)


def test_errors():
    sq = xp.asarray(np.eye(3))
    with pytest.raises(ValueError):
        LA.inv(xp.asarray(np.ones((2, 3))))
    with pytest.raises(ValueError):
        LA.det(xp.asarray(np.ones(3)))
    with pytest.raises(TypeError):
        LA.cholesky(xp.asarray(np.eye(2, dtype=bool)))
    with pytest.raises(TypeError):
        LA.eigh(xp.astype(sq, xp.float16))
    with pytest.raises(ValueError):
        LA.solve(sq, xp.asarray(np.ones(4)))
    with pytest.raises(ValueError):
        LA.qr(sq, mode="r")
    with pytest.raises(ValueError):
        LA.matrix_norm(sq, ord=3)
    with pytest.raises(TypeError):
        LA.matrix_power(sq, 1.5)
    with pytest.raises(ValueError):
        LA.cross(xp.asarray(np.ones((2, 4))), xp.asarray(np.ones((2, 4))))
    with pytest.raises(ValueError):
        LA.outer(sq, sq)
    with pytest.raises(TypeError):
        LA.det([[1.0, 0.0], [0.0, 1.0]])  # a list is no array (a NumPy array is converted)
    assert float(LA.det(np.eye(2))) == 1.0
