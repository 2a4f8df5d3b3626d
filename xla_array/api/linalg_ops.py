"""Recording the linear algebra and FFT ops (``core/ops/linalg.py``) on Arrays: LAPACK calls,
Cholesky, triangular solves, LU and its permutation, FFTs; what ``linalg.py`` and ``fft.py``
build on."""

from __future__ import annotations

import operator
import weakref

from ..core import dtypes as dt
from ..core import flags as _flags
from ..core.dtypes import DType
from ..core.graph import record
from ..core.ops.linalg import (
    GET_CHECKED,
    LAPACK_PREFIX,
    LINALG_CHECK,
    Cholesky,
    Fft,
    Lapack,
    LinalgCheck,
    LuPermutation,
    TriangularSolve,
    char,
)
from ..core.ops.structural import OPS, Get, Slice, broadcast_shapes, record_multi
from ..kernels import lu_perm as _lu_perm  # noqa: F401  (registers its rewrite)
from .array import Array, as_array, wrap
from .manipulation import broadcast_to, reshape
from .searching import where

__all__ = ["lapack", "cusolver", "flag", "getrf", "pivots_to_perm", "tri_solve",
           "cholesky_lower", "nan_where", "make_complex", "fft_node", "diagonal", "raises",
           "raise_failed", "SINGULAR", "NOT_PD", "SVD_FAILED", "EIG_FAILED"]

# NumPy's messages (numpy.linalg.LinAlgError) for a matrix whose LAPACK call failed
SINGULAR = "Singular matrix"
NOT_PD = "Matrix is not positive definite"
SVD_FAILED = "SVD did not converge"
EIG_FAILED = "Eigenvalues did not converge"


def raises() -> bool:
    """Whether a failed matrix raises ``LinAlgError`` (the ``linalg_errors`` setting, read
    when recorded) rather than giving NaN results."""
    return bool(_flags._values["linalg_errors"])


def raise_failed(outs: list[Array], failed: Array, message: str, fname: str,
                 x: Array | None = None) -> list[Array]:
    """``outs``, each computed only with one ``linalg_check`` of the per-matrix flags
    ``failed`` (LAPACK's ``info``, or bools: not 0 where the matrix failed): the graph that
    computes any of them raises ``LinAlgError(message)`` naming the user's line, before
    anything is written back. ``x``: the matrices, raising NumPy's "Array must not contain
    infs or NaNs" where one holds a NaN or an infinity (as NumPy's eig checks first)."""
    ins = (failed._node,) if x is None else (failed._node, x._node)
    check = record(LINALG_CHECK, ins, LinalgCheck(message, fname, x is not None))
    tie = OPS["checked"]
    return [wrap(record(tie, (o._node, check))) for o in outs]


# LAPACK kernels whose cuSOLVER counterpart takes the same operands, results and (no)
# attributes: one name for every dtype (cusolver_orgqr_ffi also forms complex Q)
_SAME_ON_GPU = {"getrf_ffi": "getrf_ffi", "geqrf_ffi": "geqrf_ffi", "orgqr_ffi": "orgqr_ffi",
                "ungqr_ffi": "orgqr_ffi"}


def lapack(base: str, dtype: DType, inputs: list[Array], outs: list[tuple[tuple, DType]],
           config: tuple = (), alias: bool | int = True, keep: bool = True,
           gpu: tuple | None = None, checked: tuple = (),
           check: tuple | None = None) -> list[Array]:
    """Record LAPACK FFI kernel ``lapack_<s|d|c|z><base>`` on ``inputs``; one Array per result.

    ``config`` holds the kernel's attributes as (name, "value : type") pairs, e.g.
    ``(("mode", "86 : ui8"),)``; ``alias`` makes result 0 reuse operand 0's buffer (True) or
    operand ``alias``'s (an int), or no operand's (False). ``keep=False`` when the caller
    returns a single array built from the results (``record_multi``); a single result is
    never kept: it is an ordinary intermediate. On a CUDA device the CUDA plugin's cuSOLVER
    kernel with the same operands and results is recorded instead: ``gpu`` = (its base name,
    its config) where they differ from LAPACK's (getrf, geqrf, orgqr/ungqr map by name).
    ``checked``: the results made NaN for each matrix whose call failed (``Lapack.checked``).
    ``check``: (message, function name, matrices or None) of a kept call (``keep`` and several
    results) whose failure raises ``LinAlgError`` (``raise_failed``): every result is read
    through a ``get_checked`` of the call's ``linalg_check`` of its ``info`` (the last
    result).
    """
    dev = inputs[0].device
    if dev.platform == "cuda" and (gpu is not None or base in _SAME_ON_GPU):
        gbase, gconfig = gpu if gpu is not None else (_SAME_ON_GPU[base], ())
        return cusolver(gbase, inputs, outs, gconfig, alias, keep, checked=checked,
                        check=check)
    if dev.platform != "cpu":
        raise ValueError(f"linalg: the LAPACK kernel {base} runs on CPU devices only; the "
                         f"array is on {dev} (move it with to_device)")
    # (jaxlib's LAPACK targets are registered when a graph calling one is lowered or loaded,
    # ``compiling.register_targets``: a graph the host runs needs only SciPy's wrappers)
    return _record(f"lapack_{LAPACK_PREFIX[dtype.name]}{base}", inputs, outs, config, alias,
                   keep, True, checked, check)


def cusolver(base: str, inputs: list[Array], outs: list[tuple[tuple, DType]],
             config: tuple = (), alias: bool | int = True, keep: bool = True,
             column_major: bool = True, checked: tuple = (),
             check: tuple | None = None) -> list[Array]:
    """Record the CUDA plugin's cuSOLVER FFI kernel ``cusolver_<base>`` (one kernel for every
    dtype) on arrays on a CUDA device; as ``lapack`` otherwise."""
    from ..core.backend_cuda import register_cusolver  # (load order: GPU only)
    register_cusolver()
    return _record(f"cusolver_{base}", inputs, outs, config, alias, keep, column_major,
                   checked, check)


def _record(target: str, inputs: list[Array], outs: list[tuple[tuple, DType]], config: tuple,
            alias: bool | int, keep: bool, column_major: bool,
            checked: tuple = (), check: tuple | None = None) -> list[Array]:
    outs_t = tuple((tuple(s), d) for s, d in outs)
    attrs = Lapack(target, tuple(config), outs_t, alias, column_major, tuple(checked))
    ins = tuple(x._node for x in inputs)
    k = len(outs_t)
    if check is None or not keep or k < 2:
        return [wrap(n) for n in record_multi(OPS["lapack"], ins, attrs, keep and k > 1)]
    # every result computed only with the call's check (and its siblings written back with
    # it: the op remembers the get_checked nodes, as record_multi does its gets); nothing is
    # wrapped before all are recorded (a wrap may flush)
    message, fname, x = check
    m = record(OPS["lapack"], ins, attrs)
    info = record(OPS["get_internal"], (m,), Get(k - 1))
    c = record(LINALG_CHECK, (info,) if x is None else (info, x._node),
               LinalgCheck(message, fname, x is not None))
    gets = [record(GET_CHECKED, (m, c), Get(i)) for i in range(k)]
    m.results = tuple([weakref.ref(g) for g in gets])
    return [wrap(g) for g in gets]


def flag(value: bool) -> str:
    """A boolean FFI attribute's value."""
    return "true" if value else "false"


def cholesky_lower(x: Array, keep: bool = True) -> tuple[Array, Array | None]:
    """(lower Cholesky factor, info or None). On CPU, LAPACK potrf (compiles and runs several
    times faster than XLA's expansion of ``stablehlo.cholesky``); elsewhere the native op.
    The strict upper triangle of the factor is left as garbage: apply ``tril``."""
    if x.device.platform == "cpu":
        low, info = lapack("potrf_ffi", x.dtype, [x], [(x.shape, x.dtype),
                                                       (x.shape[:-2], dt.int32)],
                           (("uplo", char("L")),), keep=keep)
        return low, info
    return wrap(record(OPS["cholesky"], (x._node,), Cholesky(True))), None


def tri_solve(a: Array, b: Array, *, lower: bool, unit: bool = False, left: bool = True,
              trans: str = "NO_TRANSPOSE") -> Array:
    """Solve ``op(a) x = b`` (left) or ``x op(a) = b`` with triangular ``a``; the batch
    dimensions of ``a`` and ``b`` are broadcast together first."""
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = broadcast_to(a, batch + a.shape[-2:])
    b = broadcast_to(b, batch + b.shape[-2:])
    if a.device.platform == "cpu" and a.size and b.size and a.dtype.name in LAPACK_PREFIX:
        # LAPACK/BLAS trsm (as jax on CPU): XLA's own expansion runs slower
        t = {"NO_TRANSPOSE": "N", "TRANSPOSE": "T", "ADJOINT": "C"}[trans]
        return lapack("trsm_ffi", a.dtype, [a, b], [(b.shape, b.dtype)],
                      (("side", char("L" if left else "R")), ("uplo", char("L" if lower else "U")),
                       ("trans_x", char(t)), ("diag", char("U" if unit else "N"))), alias=1)[0]
    return wrap(record(OPS["triangular_solve"], (a._node, b._node),
                       TriangularSolve(left, lower, unit, trans)))


def getrf(x: Array, keep: bool = True) -> tuple[Array, Array, Array]:
    """LU with partial pivoting of a stack of square matrices: (packed LU, 1-based int32
    pivots, info); ``info > 0`` flags an exactly singular U. ``keep``: see ``lapack``."""
    *batch, m, n = x.shape
    lu, piv, info = lapack("getrf_ffi", x.dtype, [x], [(x.shape, x.dtype),
                                                        ((*batch, min(m, n)), dt.int32),
                                                        (tuple(batch), dt.int32)], keep=keep)
    return lu, piv, info


def pivots_to_perm(piv: Array, m: int) -> Array:
    """The 0-based row permutation ``perm`` of getrf's pivots: ``x[..., perm, :] == L @ U``:
    an XLA loop over the pivots, which the native kernel of ``kernels/lu_perm.py`` replaces
    on a CPU device where it was built (a rewrite of the planned graph)."""
    return wrap(record(OPS["lu_permutation"], (piv._node,), LuPermutation(m)))


def make_complex(re: Array, im: Array) -> Array:
    return wrap(record(OPS["complex"], (re._node, im._node)))


def nan_where(bad: Array, x: Array) -> Array:
    """``x`` with every matrix (or vector) of the stack whose ``bad`` flag is set made NaN."""
    extra = x.ndim - bad.ndim
    flag = reshape(bad, bad.shape + (1,) * extra) if extra else bad
    nan = complex(float("nan"), float("nan")) if x.dtype.kind == "c" else float("nan")
    return where(flag, nan, x)


def fft_node(x: Array, kind: str, lengths: tuple, norm: str = "backward",
             ascending: bool = False, half: bool = False) -> Array:
    return wrap(record(OPS["fft"], (x._node,), Fft(kind, tuple(lengths), norm, ascending, half)))


def diagonal(x: Array, /, *, offset: int = 0) -> Array:
    """The ``offset`` diagonal of each matrix: one strided slice of the flattened matrix."""
    x = x if type(x) is Array else as_array(x, "linalg.diagonal")
    if x.ndim < 2:
        raise ValueError(f"linalg.diagonal() needs at least 2 dimensions, got {x.shape}")
    k = operator.index(offset)
    *batch, m, n = x.shape
    size = max(0, min(m, n - k) if k >= 0 else min(m + k, n))
    flat = reshape(x, (*batch, m * n))
    start = k if k >= 0 else -k * n
    if size == 0:
        start = 0
    limit = start + (size - 1) * (n + 1) + 1 if size else 0
    nb = len(batch)
    return wrap(record(OPS["slice"], (flat._node,),
                       Slice((0,) * nb + (start,), tuple(batch) + (limit,), (1,) * nb + (n + 1,))))
