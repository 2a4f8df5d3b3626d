"""The ``linalg`` extension of the array API standard.

Every function records lazily and fuses with the surrounding graph; stacks of matrices (any
leading batch dimensions) go to XLA or LAPACK as one batched call. Triangular solves are native
StableHLO; LU (``getrf``), Cholesky (``potrf``: on CPU it compiles and runs several times
faster than XLA's expansion of ``stablehlo.cholesky``, which is used on other platforms), QR
(``geqrf`` + ``orgqr``/``ungqr``), symmetric eigen (``syevd``/``heevd``), general eigen
(``geev``) and SVD (``gesdd``) are jaxlib's LAPACK kernels, called through
``stablehlo.custom_call`` on CPU devices (other platforms raise ValueError at the call).

Dtypes: float32, float64, complex64 and complex128 are computed natively. Integer input is
promoted to float64 (as NumPy does); bool, float16, bfloat16 and float8 input raise TypeError
in the decompositions and solvers.

Failures raise as NumPy's do: ``LinAlgError`` (this module's, a subclass of
``numpy.linalg.LinAlgError``, so ``except np.linalg.LinAlgError`` catches it), with NumPy's
message and the line that recorded the call. What only the values tell is checked when the
graph computing the result runs, from LAPACK's ``info`` (a ``linalg_check`` computed in the
same executable, one int32 read back per run), before anything is written back, so recording
forces nothing; the error comes from the materialization (``float(x)``, ``np.asarray(x)``,
``xp.materialize``), as an out-of-bounds index's does. Per matrix of a stack (one failed
matrix is enough):

* "Singular matrix": ``inv``, ``solve`` and ``matrix_power`` with ``n < 0`` (an exactly zero
  pivot of the LU factorization). ``det`` gives 0 and ``slogdet`` (0, -inf), as in NumPy.
* "Matrix is not positive definite": ``cholesky``.
* "SVD did not converge": ``svd``, ``svdvals`` and what is built on them (``pinv``,
  ``matrix_rank``, ``matrix_norm`` with ord 2, -2 or 'nuc'); a matrix holding a NaN is one.
* "Eigenvalues did not converge": ``eigh``, ``eigvalsh``, ``eig``, ``eigvals``; ``eig`` and
  ``eigvals`` first raise "Array must not contain infs or NaNs" for such a matrix.
* ``qr``, ``det``, ``slogdet`` never fail; NaN input propagates to NaN output.

With the ``linalg_errors`` setting off (``XLA_ARRAY_LINALG_ERRORS=0``, or
``xla_array.flags.using(linalg_errors=False)``, read when the call is recorded), nothing
raises and every result of a failed matrix is NaN, as in JAX: ``inv``, ``solve``,
``matrix_power`` and ``cholesky`` give NaN matrices, and ``eigh``, ``eigvalsh``, ``eig``,
``eigvals``, ``svd`` and ``svdvals`` give NaN for a matrix with any NaN or infinite entry
too (LAPACK may return partial values there), as do ``pinv``, ``matrix_rank`` and
``matrix_norm`` with ord 2, -2 or 'nuc'. (Those NaN guards stay on in the raising mode:
a matrix holding an infinity raises nothing there, as in NumPy, and its results are NaN.)
"""

from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple

from .api.array import Array, as_array, wrap
from .api.creation import arange, eye, full, iota, tril, triu, zeros
from .api.dtype_functions import astype
from .api.elementwise import abs as _abs
from .api.elementwise import conj, isfinite, isnan, log, logical_not, not_equal, sign, sqrt
from .api.linalg_ops import (
    EIG_FAILED,
    NOT_PD,
    SINGULAR,
    SVD_FAILED,
    cholesky_lower,
    cusolver,
    diagonal,
    flag,
    getrf,
    lapack,
    make_complex,
    nan_where,
    pivots_to_perm,
    raise_failed,
    raises,
    tri_solve,
)
from .api.manipulation import broadcast_to, reshape, stack
from .api.matmul import matmul, matrix_transpose, tensordot, vecdot
from .api.searching import where
from .api.statistical import any as _any
from .api.statistical import max as _max
from .api.statistical import min as _min
from .api.statistical import prod as _prod
from .api.statistical import sum as _sum
from .api.utility import take_in_bounds
from .core import axes as _axes
from .core import dtypes as dt
from .core.dtypes import DType
from .core.graph import record
from .core.ops.linalg import LAPACK_DTYPES, LinAlgError, char
from .core.ops.structural import OPS, Pad, broadcast_shapes

__all__ = ["cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv",
           "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose",
           "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace",
           "vecdot", "vector_norm", "EighResult", "EigResult", "QRResult", "SlogdetResult",
           "SVDResult", "LinAlgError"]


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


# ---------------------------------------------------------------- helpers

def _arr(x: Any, fname: str) -> Array:
    return x if type(x) is Array else as_array(x, "linalg." + fname)


def _float(x: Array, fname: str) -> Array:
    """``x`` in a LAPACK dtype: integers become float64; other dtypes raise TypeError."""
    if x.dtype.kind in "iu":
        return astype(x, dt.default_float)
    if x.dtype not in LAPACK_DTYPES:
        raise TypeError(f"linalg.{fname}() needs a float32/float64/complex64/complex128 "
                        f"array, got {x.dtype.name}")
    return x


def _matrix(x: Any, fname: str, square: bool = False, lapack_dtype: bool = True) -> Array:
    x = _arr(x, fname)
    if x.ndim < 2:
        raise ValueError(f"linalg.{fname}() needs an array of at least 2 dimensions, got "
                         f"shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"linalg.{fname}() needs square matrices, got shape {x.shape}")
    return _float(x, fname) if lapack_dtype else x


def _real(d: DType) -> DType:
    return dt.REAL_OF.get(d, d)


def _h(x: Array) -> Array:
    """Conjugate transpose of the last two axes."""
    t = matrix_transpose(x)
    return conj(t) if x.dtype.kind == "c" else t


def _eye(batch: tuple, n: int, m: int, d: DType, device: Any) -> Array:
    e = eye(n, m, dtype=d, device=device)
    return broadcast_to(e, tuple(batch) + (n, m)) if batch else e


def _bad(info: Array, x: Array | None = None) -> Array:
    """Flags of the failed matrices: LAPACK's ``info != 0``, or (given ``x``) a matrix with
    a non-finite entry, which iterative kernels may not flag themselves."""
    bad = not_equal(info, 0)
    if x is not None:
        bad = bad | _any(logical_not(isfinite(x)), axis=(-2, -1))
    return bad


# ---------------------------------------------------------------- decompositions

def cholesky(x: Array, /, *, upper: bool = False) -> Array:
    """Lower (or upper) Cholesky factor; reads the lower triangle of ``x`` only. A matrix
    that is not positive definite raises LinAlgError (a NaN matrix with ``linalg_errors``
    off)."""
    x = _matrix(x, "cholesky", square=True)
    if x.size == 0:
        return astype(x, x.dtype)
    low, info = cholesky_lower(x, keep=False)
    if raises():
        low = tril(low)
        low = _h(low) if upper else low
        return raise_failed([low], info if info is not None else
                            _any(isnan(low), axis=(-2, -1)), NOT_PD, "cholesky")[0]
    bad = _bad(info) if info is not None else _any(isnan(low), axis=(-2, -1))
    low = nan_where(bad, tril(low))
    return _h(low) if upper else low


def eigh(x: Array, /) -> EighResult:
    """Eigenvalues in ascending order and orthonormal eigenvectors (as columns); reads the
    lower triangle of ``x`` only."""
    x = _matrix(x, "eigh", square=True)
    if x.size == 0:
        return EighResult(zeros(x.shape[:-1], dtype=_real(x.dtype), device=x.device),
                          astype(x, x.dtype))
    v, w, _ = _evd(x, True, "eigh")
    return EighResult(w, v)


def eigvalsh(x: Array, /) -> Array:
    """Eigenvalues in ascending order (the lower triangle of ``x`` is read)."""
    x = _matrix(x, "eigvalsh", square=True)
    if x.size == 0:
        return zeros(x.shape[:-1], dtype=_real(x.dtype), device=x.device)
    _, w, info = _evd(x, False, "eigvalsh")
    return raise_failed([w], info, EIG_FAILED, "eigvalsh")[0] if raises() else w


def _evd(x: Array, vectors: bool, fname: str) -> list[Array]:
    """(vectors, values, info) of LAPACK syevd/heevd (cuSOLVER syevd on a GPU, which always
    computes the vectors), reading the lower triangle; vectors and values NaN for a matrix
    whose call failed or that holds a NaN or an infinity. With ``vectors``, a failed call
    raises (``linalg_errors``) when they are computed; without, the caller checks."""
    prefix = "he" if x.dtype.kind == "c" else "sy"
    return lapack(f"{prefix}evd_ffi", x.dtype, [x],
                  [(x.shape, x.dtype), (x.shape[:-1], _real(x.dtype)), (x.shape[:-2], dt.int32)],
                  (("mode", char("V" if vectors else "N")), ("uplo", char("L"))), keep=vectors,
                  gpu=("syevd_ffi", (("lower", "true"), ("algorithm", "0 : ui8"))),
                  checked=(0, 1), check=(EIG_FAILED, fname, None) if raises() else None)


def _geev(x: Array, vectors: bool, fname: str) -> tuple[Array, Array | None]:
    if x.device.platform != "cpu":
        # LAPACK geev on the host (as jax's hybrid kernel does on GPUs): x is computed, copied
        # to the CPU and the results copied back (committed to x's device)
        dev = x.device
        vals, vecs = _geev(x.to_device("cpu"), vectors, fname)
        return vals.to_device(dev), (vecs.to_device(dev) if vecs is not None else None)
    cd = dt.complex_of(x.dtype)
    outs = [(x.shape[:-1], x.dtype)] * (1 if x.dtype.kind == "c" else 2)
    outs += [(x.shape, cd), (x.shape, cd), (x.shape[:-2], dt.int32)]
    nw = len(outs) - 3  # the eigenvalues' parts; NaN guards in the op, as svd's and eigh's
    *w, _vl, vr, info = lapack("geev_ffi", x.dtype, [x], outs,
                            (("compute_left", char("N")),
                             ("compute_right", char("V" if vectors else "N"))),
                            alias=False, keep=vectors,
                            checked=(*range(nw), nw + 1) if vectors else tuple(range(nw)),
                            check=(EIG_FAILED, fname, x) if raises() else None)
    w0 = make_complex(w[0], w[1]) if len(w) == 2 else w[0]
    if raises() and not vectors:  # (with vectors: the call's results are checked, above)
        # (NumPy's eig refuses NaN and infinite entries before LAPACK runs: raised first)
        w0 = raise_failed([w0], info, EIG_FAILED, fname, x)[0]
    return w0, (vr if vectors else None)


def eig(x: Array, /) -> EigResult:
    """Eigenvalues (complex, unsorted, as LAPACK's geev returns them) and right eigenvectors
    (complex columns of unit norm)."""
    x = _matrix(x, "eig", square=True)
    cd = dt.complex_of(x.dtype)
    if x.size == 0:
        return EigResult(zeros(x.shape[:-1], dtype=cd, device=x.device), astype(x, cd))
    w, v = _geev(x, True, "eig")
    assert v is not None  # (asked for)
    return EigResult(w, v)


def eigvals(x: Array, /) -> Array:
    x = _matrix(x, "eigvals", square=True)
    if x.size == 0:
        return zeros(x.shape[:-1], dtype=dt.complex_of(x.dtype), device=x.device)
    return _geev(x, False, "eigvals")[0]


def _gesdd(x: Array, mode: str, fname: str) -> list[Array]:
    *batch, m, n = x.shape
    k = min(m, n)
    us = {"A": (m, m), "S": (m, k), "N": (1, 1)}[mode]
    vs = {"A": (n, n), "S": (k, n), "N": (1, 1)}[mode]
    if x.device.platform == "cuda":  # (cuSOLVER's SVD takes its operands otherwise)
        return _gesvd_gpu(x, mode, (*batch, *us), (*batch, *vs), fname)
    # (U, s and Vt NaN where the call failed: part of the op, so a graph computing s writes
    # back the final U and Vt, and a later graph reading them does not check x again)
    _, s, u, vt, info = lapack("gesdd_ffi", x.dtype, [x],
                            [(x.shape, x.dtype), ((*batch, k), _real(x.dtype)),
                             ((*batch, *us), x.dtype), ((*batch, *vs), x.dtype),
                             (tuple(batch), dt.int32)], (("mode", char(mode)),),
                            keep=mode != "N", checked=(1,) if mode == "N" else (1, 2, 3),
                            check=(SVD_FAILED, fname, None) if raises() else None)
    if mode == "N":  # (with U and Vt, the call's results are checked, above)
        return raise_failed([s], info, SVD_FAILED, fname) if raises() else [s]
    return [u, s, vt]


def _gesvd_gpu(x: Array, mode: str, us: tuple, vs: tuple, fname: str) -> list[Array]:
    """cuSOLVER gesvd (as jax's GPU lowering calls it): it needs rows >= columns, so a wide
    matrix goes in row-major, read as its transpose, and U and V^H come back swapped."""
    *batch, m, n = x.shape
    wide = m < n
    uv = mode != "N"
    if not uv:
        us = vs = ()
    outs = [(x.shape, x.dtype), ((*batch, min(m, n)), _real(x.dtype)),
            (vs, x.dtype) if wide else (us, x.dtype), (us, x.dtype) if wide else (vs, x.dtype),
            (tuple(batch), dt.int32)]
    _, s, p, q, info = cusolver("gesvd_ffi", [x], outs,
                                (("full_matrices", flag(mode == "A")), ("compute_uv", flag(uv)),
                                 ("transposed", flag(wide))),
                                keep=uv, column_major=not wide)
    bad = _bad(info, x)
    u, vt = (q, p) if wide else (p, q)
    out = [nan_where(bad, v) for v in ([u, s, vt] if uv else [s])]
    return raise_failed(out, info, SVD_FAILED, fname) if raises() else out


def svd(x: Array, /, *, full_matrices: bool = True) -> SVDResult:
    """``U, S, Vh`` with ``S`` descending (LAPACK gesdd)."""
    x = _matrix(x, "svd")
    *batch, m, n = x.shape
    k = min(m, n)
    if x.size == 0:
        mu, nv = (m, n) if full_matrices else (k, k)
        return SVDResult(_eye(tuple(batch), m, mu, x.dtype, x.device),
                         zeros((*batch, k), dtype=_real(x.dtype), device=x.device),
                         _eye(tuple(batch), nv, n, x.dtype, x.device))
    u, s, vt = _gesdd(x, "A" if full_matrices else "S", "svd")
    return SVDResult(u, s, vt)


def svdvals(x: Array, /) -> Array:
    """Singular values, descending."""
    return _svdvals(_matrix(x, "svdvals"), "svdvals")


def _svdvals(x: Array, fname: str) -> Array:
    if x.size == 0:
        return zeros((*x.shape[:-2], min(x.shape[-2:])), dtype=_real(x.dtype), device=x.device)
    return _gesdd(x, "N", fname)[0]


def qr(x: Array, /, *, mode: str = "reduced") -> QRResult:
    """Householder QR (LAPACK geqrf, then orgqr/ungqr to form Q); R has a real diagonal."""
    x = _matrix(x, "qr")
    if mode not in ("reduced", "complete"):
        raise ValueError(f"linalg.qr(): mode must be 'reduced' or 'complete', got {mode!r}")
    *batch, m, n = x.shape
    k = min(m, n)
    kq = m if mode == "complete" else k
    if x.size == 0:
        return QRResult(_eye(tuple(batch), m, kq, x.dtype, x.device),
                        zeros((*batch, kq, n), dtype=x.dtype, device=x.device))
    r, tau = lapack("geqrf_ffi", x.dtype, [x], [(x.shape, x.dtype), ((*batch, k), x.dtype)])
    gqr = "ungqr_ffi" if x.dtype.kind == "c" else "orgqr_ffi"
    if m < n:
        a = r[..., :m, :m]
    elif mode == "complete" and m > n:
        nb = len(batch)
        a = wrap(record(OPS["pad"], (r._node,),
                        Pad((0,) * (nb + 2), (0,) * (nb + 1) + (m - n,), (0,) * (nb + 2))))
    else:
        a = r
    q = lapack(gqr, x.dtype, [a, tau], [(a.shape, x.dtype)])[0]
    if mode == "reduced" and m > n:
        r = r[..., :n, :]
    return QRResult(q, triu(r))


# ---------------------------------------------------------------- LU-based

def _lu_parts(x: Array, keep: bool) -> tuple[Array, Array, Array, Array]:
    """(packed LU, diagonal of U, sign of the row permutation (+-1 in x.dtype), info);
    ``keep``: see ``lapack``."""
    lu_, piv, info = getrf(x, keep)
    k = piv.shape[-1]
    swaps = _sum(astype(not_equal(piv, arange(1, k + 1, dtype=dt.int32, device=x.device)),
                     dt.int32), axis=-1)
    parity = 1 - 2 * (swaps % 2)
    return lu_, diagonal(lu_), astype(parity, x.dtype), info


def det(x: Array, /) -> Array:
    """Determinant via LU; an exactly singular matrix gives 0."""
    x = _matrix(x, "det", square=True)
    if x.size == 0:
        return _empty_reduce(x, 1)
    _, d, parity, _ = _lu_parts(x, keep=False)
    return _prod(d, axis=-1) * parity


def _empty_reduce(x: Array, value: Any, dtype: DType | None = None) -> Array:
    return full(x.shape[:-2], value, dtype=dtype or x.dtype, device=x.device)


def slogdet(x: Array, /) -> SlogdetResult:
    """Sign and log|det| via LU; a singular matrix gives (0, -inf)."""
    x = _matrix(x, "slogdet", square=True)
    rd = _real(x.dtype)
    if x.size == 0:
        return SlogdetResult(_empty_reduce(x, 1), _empty_reduce(x, 0, rd))
    _, d, parity, _ = _lu_parts(x, keep=True)
    ad = _abs(d)
    if x.dtype.kind == "c":
        unit = where(ad == 0, 0, d / astype(where(ad == 0, 1, ad), x.dtype))
    else:
        unit = sign(d)
    return SlogdetResult(_prod(unit, axis=-1) * parity, _sum(log(ad), axis=-1))


def _permute_rows(b: Array, perm: Array) -> Array:
    """``b[..., perm, :]`` matrix by matrix (``perm``: one row permutation per matrix of the
    stack, broadcast with ``b``'s): the stack is flattened into one row gather."""
    batch = broadcast_shapes(perm.shape[:-1], b.shape[:-2])
    m, k = b.shape[-2:]
    nb = math.prod(batch)
    rows = reshape(broadcast_to(b, batch + (m, k)), (nb * m, k))
    idx = reshape(broadcast_to(perm, batch + (m,)), (nb, m))
    if nb > 1:
        idx = idx + iota((nb, 1), 0, b.device, dt.int32) * m
    return reshape(take_in_bounds(rows, reshape(idx, (nb * m,)), 0), batch + (m, k))


def _lu_solve(x: Array, b: Array, fname: str) -> Array:
    """Solve x @ out = b (b of shape batch' + (M, K)); singular matrices raise LinAlgError
    when computed (NaN with ``linalg_errors`` off)."""
    lu_, piv, info = getrf(x, keep=False)
    perm = pivots_to_perm(piv, x.shape[-1])  # x[..., perm, :] == L @ U
    y = tri_solve(lu_, _permute_rows(b, perm), lower=True, unit=True)
    out = tri_solve(lu_, y, lower=False)
    if raises():
        return raise_failed([out], info, SINGULAR, fname)[0]
    bad = broadcast_to(info > 0, out.shape[:-2])
    return nan_where(bad, out)


def inv(x: Array, /) -> Array:
    """Inverse via LU with partial pivoting; a singular matrix raises LinAlgError when
    computed (NaN with ``linalg_errors`` off)."""
    return _inv(_matrix(x, "inv", square=True), "inv")


def _inv(x: Array, fname: str) -> Array:
    if x.size == 0:
        return astype(x, x.dtype)
    return _lu_solve(x, _eye(x.shape[:-2], x.shape[-1], x.shape[-1], x.dtype, x.device),
                     fname)


def solve(x1: Array, x2: Array, /) -> Array:
    """Solve ``x1 @ out = x2``; a 1-D ``x2`` of shape (M,) is one right-hand side for every
    matrix of the stack. A singular matrix raises LinAlgError when computed (NaN with
    ``linalg_errors`` off)."""
    a = _matrix(x1, "solve", square=True)
    b = _float(_arr(x2, "solve"), "solve")
    d = dt.promote(a.dtype, b.dtype)
    a, b = astype(a, d, copy=False), astype(b, d, copy=False)
    m = a.shape[-1]
    vec = b.ndim == 1
    if vec:
        b = reshape(b, (m, 1)) if b.shape[0] == m else b
    if b.ndim < 2 or b.shape[-2] != m:
        raise ValueError(f"linalg.solve(): shapes {x1.shape} and {x2.shape} do not align")
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if math.prod(batch) * m * b.shape[-1] == 0:
        out = zeros(batch + b.shape[-2:], dtype=d, device=a.device)
    else:
        out = _lu_solve(a, b, "solve")
    return reshape(out, batch + (m,)) if vec else out


# ---------------------------------------------------------------- built on the above

def _rtol(x: Array, rtol: Any, fname: str) -> Any:
    """The relative tolerance: a Python float, or an Array broadcast over the stack."""
    if rtol is None:
        return max(x.shape[-2:]) * dt.finfo(x.dtype).eps
    if isinstance(rtol, Array):
        if rtol.dtype.kind not in "fiu":
            raise TypeError(f"linalg.{fname}(): rtol must be real, got {rtol.dtype.name}")
        return reshape(rtol, rtol.shape + (1,))
    return float(rtol)


def matrix_rank(x: Array, /, *, rtol: float | Array | None = None) -> Array:
    """Number of singular values greater than ``rtol * largest``."""
    x = _matrix(x, "matrix_rank")
    if x.size == 0:
        return _empty_reduce(x, 0, dt.default_int)
    s = _svdvals(x, "matrix_rank")
    tol = _rtol(x, rtol, "matrix_rank") * _max(s, axis=-1, keepdims=True)
    return _sum(astype(s > tol, dt.default_int), axis=-1)


def pinv(x: Array, /, *, rtol: float | Array | None = None) -> Array:
    """Moore-Penrose pseudo-inverse from the reduced SVD; singular values not greater than
    ``rtol * largest`` are treated as zero."""
    x = _matrix(x, "pinv")
    *batch, m, n = x.shape
    if x.size == 0:
        return zeros((*batch, n, m), dtype=x.dtype, device=x.device)
    u, s, vt = _gesdd(x, "S", "pinv")
    tol = _rtol(x, rtol, "pinv") * _max(s, axis=-1, keepdims=True)
    big = s > tol
    sinv = where(big, 1 / where(big, s, 1), 0)
    sinv = astype(reshape(sinv, sinv.shape[:-1] + (1, sinv.shape[-1])), x.dtype)
    return matmul(_h(vt) * sinv, _h(u))


def matrix_power(x: Array, n: int, /) -> Array:
    """``x`` multiplied by itself ``n`` times (repeated squaring); ``n < 0`` inverts first
    (LinAlgError for a singular matrix, as ``inv``). Integer matrices are allowed for
    ``n >= 0``."""
    x = _matrix(x, "matrix_power", square=True, lapack_dtype=False)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"linalg.matrix_power(): n must be an integer, got "
                        f"{type(n).__name__}") from None
    if x.dtype.kind == "b":
        raise TypeError("linalg.matrix_power() needs a numeric array, got bool")
    if n == 0:
        return _eye(x.shape[:-2], x.shape[-1], x.shape[-1], x.dtype, x.device)
    if n < 0:
        x, n = _inv(_float(x, "matrix_power"), "matrix_power"), -n
    result: Array | None = None
    base = x
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            break
        base = matmul(base, base)
    assert result is not None  # (n > 0 here)
    return result if result is not x else astype(x, x.dtype)


def _norm_input(x: Array, fname: str) -> Array:
    if x.dtype.kind in "iu":
        return astype(x, dt.default_float)
    if x.dtype.kind not in "fc":
        raise TypeError(f"linalg.{fname}() needs a numeric array, got {x.dtype.name}")
    return x


def matrix_norm(x: Array, /, *, keepdims: bool = False,
                ord: int | float | str | None = "fro") -> Array:
    """Matrix norms of the standard's table; the result dtype is real."""
    x = _arr(x, "matrix_norm")
    if x.ndim < 2:
        raise ValueError(f"linalg.matrix_norm() needs at least 2 dimensions, got {x.shape}")
    x = _norm_input(x, "matrix_norm")
    if ord is None:
        ord = "fro"
    if ord == "fro":
        out = sqrt(_sum(_abs(x) ** 2, axis=(-2, -1)))
    elif ord == "nuc":
        out = _sum(_svdvals(_float(x, "matrix_norm"), "matrix_norm"), axis=-1)
    elif ord in (2, -2):
        s = _svdvals(_float(x, "matrix_norm"), "matrix_norm")
        out = _max_or_zero(s, -1) if ord == 2 else _min(s, axis=-1)
    elif ord in (1, -1, math.inf, -math.inf):
        sums = _sum(_abs(x), axis=-2 if ord in (1, -1) else -1)
        out = _max_or_zero(sums, -1) if ord > 0 else _min(sums, axis=-1)
    else:
        raise ValueError(f"linalg.matrix_norm(): invalid ord {ord!r}")
    return reshape(out, out.shape + (1, 1)) if keepdims else out


def _max_or_zero(a: Array, axis: Any, keepdims: bool = False) -> Array:
    """The max of the non-negative ``a`` over ``axis``; 0 over an empty extent (a norm of no
    elements, as NumPy), where a max has no identity."""
    ax = _axes.axes(axis, a.ndim, "linalg.norm")
    if any(a.shape[i] == 0 for i in ax):
        return _sum(a, axis=ax, keepdims=keepdims)
    return _max(a, axis=ax, keepdims=keepdims)


def vector_norm(x: Array, /, *, axis: int | tuple[int, ...] | None = None,
                keepdims: bool = False, ord: int | float = 2) -> Array:
    """p-norms over ``axis`` (all axes when None); ord 0 counts non-zero elements."""
    x = _norm_input(_arr(x, "vector_norm"), "vector_norm")
    ax = _axes.axes(axis, x.ndim, "linalg.vector_norm")
    if isinstance(ord, str) or isinstance(ord, bool):
        raise ValueError(f"linalg.vector_norm(): invalid ord {ord!r}")
    a = _abs(x)
    if ord == math.inf:
        return _max_or_zero(a, ax, keepdims)
    if ord == -math.inf:
        return _min(a, axis=ax, keepdims=keepdims)
    if ord == 0:
        return _sum(astype(a != 0, a.dtype), axis=ax, keepdims=keepdims)
    if ord == 1:
        return _sum(a, axis=ax, keepdims=keepdims)
    if ord == 2:
        return sqrt(_sum(a * a, axis=ax, keepdims=keepdims))
    p = float(ord)
    return _sum(a ** p, axis=ax, keepdims=keepdims) ** (1.0 / p)


# ---------------------------------------------------------------- structural

def trace(x: Array, /, *, offset: int = 0, dtype: Any = None) -> Array:
    """Sum of the ``offset`` diagonal; accumulation dtype as in ``sum``."""
    return _sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def outer(x1: Array, x2: Array, /) -> Array:
    a, b = _arr(x1, "outer"), _arr(x2, "outer")
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"linalg.outer() takes 1-D arrays, got shapes {a.shape} and {b.shape}")
    if a.dtype.kind == "b" or b.dtype.kind == "b":
        raise TypeError("linalg.outer() needs numeric arrays")
    return reshape(a, (a.shape[0], 1)) * reshape(b, (1, b.shape[0]))


def cross(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Cross product of 3-vectors along ``axis`` (counted from the end when negative; a
    non-negative ``axis`` needs arrays of equal rank); other axes broadcast."""
    a, b = _arr(x1, "cross"), _arr(x2, "cross")
    if a.dtype.kind == "b" or b.dtype.kind == "b":
        raise TypeError("linalg.cross() needs numeric arrays")
    ax = operator.index(axis)
    if ax >= 0:
        if a.ndim != b.ndim:
            raise ValueError("linalg.cross(): a non-negative axis needs arrays of equal rank")
        ax -= a.ndim
    if not -min(a.ndim, b.ndim) <= ax < 0:
        raise ValueError(f"linalg.cross(): axis {axis} out of range for shapes {a.shape} and "
                         f"{b.shape}")
    if a.shape[ax] != 3 or b.shape[ax] != 3:
        raise ValueError(f"linalg.cross(): axis {axis} must have size 3, got shapes {a.shape} "
                         f"and {b.shape}")
    broadcast_shapes(a.shape, b.shape)
    tail = (slice(None),) * (-ax - 1)
    a0, a1, a2 = (a[(Ellipsis, i) + tail] for i in range(3))
    b0, b1, b2 = (b[(Ellipsis, i) + tail] for i in range(3))
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=ax)


# ---------------------------------------------------------------- NumPy's numpy.linalg extras
# (NumPy's ``norm``, ``lstsq``, ``cond``, ``multi_dot``, ``tensorsolve`` and ``tensorinv``,
# beside the standard's functions: NumPy scripts call them as ``np.linalg.norm``...)

import numpy as np  # noqa: E402

from .api.creation import asarray  # noqa: E402
from .api.manipulation import permute_dims  # noqa: E402

_LinAlgError = np.linalg.LinAlgError  # (core/ops/linalg's LinAlgError derives from it)

__all__ += ["norm", "lstsq", "cond", "multi_dot", "tensorsolve", "tensorinv"]


def _np_arr(x: Any) -> Array:
    return x if isinstance(x, Array) else asarray(x)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Array:
    """NumPy's ``linalg.norm``: the 2-norm of the flattened array (``ord=None, axis=None``),
    a vector norm over one axis, or a matrix norm over two (``'fro'``, ``'nuc'``, +-1, +-2,
    +-inf)."""
    a = _np_arr(x)
    if a.dtype.kind in "iub":
        a = astype(a, dt.float64)
    nd = a.ndim
    if axis is None:
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            r = vector_norm(a, axis=None)
            return reshape(r, (1,) * nd) if keepdims else r
        axes = tuple(range(nd))
    elif isinstance(axis, (int,)) or not isinstance(axis, (tuple, list)):
        axes = (operator.index(axis),)
    else:
        axes = tuple(axis)
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ValueError(f"Invalid norm order '{ord}' for vectors")
        return vector_norm(a, axis=axes[0], keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axes) != 2:
        raise ValueError("Improper number of dimensions to norm.")
    r0, c0 = (_axes.axis(v, nd, "norm") for v in axes)
    if r0 == c0:
        raise ValueError("Duplicate axes given.")
    if ord not in (None, "fro", "f", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        raise ValueError("Invalid norm order for matrices.")
    rest = [i for i in range(nd) if i not in (r0, c0)]
    m = a if (r0, c0) == (nd - 2, nd - 1) else permute_dims(a, (*rest, r0, c0))
    o = "fro" if ord in (None, "f") else ord
    r = matrix_norm(m, ord=o)
    if keepdims:
        r = reshape(r, tuple(1 if i in (r0, c0) else a.shape[i] for i in range(nd)))
    return r


def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple[Array, Array, Array, Array]:
    """NumPy's ``linalg.lstsq``: the minimum-norm least-squares solution from the SVD (singular
    values at most ``rcond * largest`` are dropped; default ``eps * max(M, N)``), the residual
    sums of squares (empty unless ``M > N`` and full rank), the rank and the singular values."""
    A, B = _np_arr(a), _np_arr(b)
    if A.ndim != 2:
        raise _LinAlgError(f"{A.ndim}-dimensional array given. Array must be two-dimensional")
    if B.ndim not in (1, 2):
        raise _LinAlgError(f"{B.ndim}-dimensional array given. Array must be one or "
                          f"two-dimensional")
    m, n = A.shape
    if B.shape[0] != m:
        raise _LinAlgError("Incompatible dimensions")
    d = dt.from_numpy(np.result_type(A.dtype.np, B.dtype.np, np.float64 if
                                     A.dtype.kind in "iub" and B.dtype.kind in "iub" else
                                     np.float16))
    A, B = astype(A, d), astype(B, d)
    vec = B.ndim == 1
    B2 = reshape(B, (m, 1)) if vec else B
    if rcond is None:
        rcond = float(np.finfo(d.np).eps) * max(m, n)
    u, s, vt = svd(A, full_matrices=False)
    big = s > rcond * _max(s) if s.shape[0] else s > 0
    sinv = where(big, 1 / where(big, s, 1), 0)
    uh_b = matmul(_h(u), B2)
    xs = matmul(_h(vt), reshape(astype(sinv, d), (-1, 1)) * uh_b)
    rank = _sum(astype(big, dt.int64))
    rk = int(rank)
    if rk == n and m > n:
        res = matmul(A, xs) - B2
        resid = _sum(astype(_abs(res), _real(d)) ** 2, axis=0)
    else:
        resid = zeros((0,), dtype=_real(d))
    return (reshape(xs, (n,)) if vec else xs), resid, rank, s


def cond(x: Any, p: Any = None) -> Array:
    """NumPy's ``linalg.cond``: ``s[0] / s[-1]`` from the singular values (``p=None, 2``),
    their inverse ratio (``p=-2``), else ``norm(x, p) * norm(inv(x), p)``."""
    a = _np_arr(x)
    if a.dtype.kind in "iub":
        a = astype(a, dt.float64)
    if p is None or p == 2 or p == -2:
        s = svdvals(a)
        r = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
        return r
    return norm(a, p, axis=(-2, -1)) * norm(inv(a), p, axis=(-2, -1))


def multi_dot(arrays: Any, *, out: Any = None) -> Array:
    """NumPy's ``linalg.multi_dot``: the chain of products in the order of fewest
    multiplications (NumPy's dynamic programme over the shapes, at record time)."""
    arrs = [_np_arr(v) for v in arrays]
    n = len(arrs)
    if n < 2:
        raise ValueError("Expecting at least two arrays.")
    first_1d, last_1d = arrs[0].ndim == 1, arrs[-1].ndim == 1
    if first_1d:
        arrs[0] = reshape(arrs[0], (1, -1))
    if last_1d:
        arrs[-1] = reshape(arrs[-1], (-1, 1))
    for v in arrs:
        if v.ndim != 2:
            raise _LinAlgError(f"{v.ndim}-dimensional array given. Array must be "
                              f"two-dimensional")
    dims = [arrs[0].shape[0]] + [v.shape[1] for v in arrs]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf  # type: ignore[call-overload]
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def chain(i: int, j: int) -> Array:
        if i == j:
            return arrs[i]
        k = split[i][j]
        return matmul(chain(i, k), chain(k + 1, j))
    r = chain(0, n - 1)
    if first_1d and last_1d:
        return reshape(r, ())
    if first_1d:
        return reshape(r, (r.shape[1],))
    if last_1d:
        return reshape(r, (r.shape[0],))
    return r


def tensorsolve(a: Any, b: Any, axes: Any = None) -> Array:
    """NumPy's ``linalg.tensorsolve``: ``x`` with ``tensordot(a, x, x.ndim) == b``."""
    A, B = _np_arr(a), _np_arr(b)
    an = A.ndim
    if axes is not None:
        allaxes = list(range(an))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(an, k)
        A = permute_dims(A, tuple(allaxes))
    oldshape = A.shape[-(an - B.ndim):]
    prod = math.prod(oldshape)
    if math.prod(A.shape) != prod ** 2:
        raise _LinAlgError("Input arrays must satisfy the requirement prod(a.shape[b.ndim:]) "
                          "== prod(a.shape[:b.ndim])")
    x = solve(reshape(A, (prod, prod)), reshape(B, (prod, 1)))
    return reshape(x, oldshape)


def tensorinv(a: Any, ind: int = 2) -> Array:
    """NumPy's ``linalg.tensorinv``: the inverse of ``a`` seen as a matrix of its first ``ind``
    axes by the others."""
    A = _np_arr(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    oldshape = A.shape
    prod = math.prod(oldshape[:ind])
    invshape = oldshape[ind:] + oldshape[:ind]
    if math.prod(oldshape[ind:]) != prod:
        raise _LinAlgError("Last 2 dimensions of the array must be square")
    return reshape(inv(reshape(A, (prod, -1))), invshape)
