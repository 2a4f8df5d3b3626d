"""Linear algebra and FFT ops (their Array-level recording: ``api/linalg_ops.py``).

Native StableHLO ops: ``triangular_solve``, ``fft`` and (off CPU) ``cholesky``. Everything else
goes through jaxlib's LAPACK FFI kernels (``lapack_{s,d,c,z}<name>_ffi``) on CPU, or the CUDA
plugin's cuSOLVER FFI kernels (``cusolver_<name>_ffi``, the same operands and results) on a GPU,
with one generic op, ``lapack``: a ``stablehlo.custom_call`` (API version 4) whose operand and
result layouts are column-major for the matrix-shaped values (the batch dimensions are major, as
in jax), so the kernels run over a whole stack of matrices in one call. The kernels are
registered lazily, the first time such an op is recorded or lowered
(``backend.register_lapack``, which imports scipy; ``backend_cuda.register_cusolver``).

``lu_permutation`` turns LAPACK's 1-based sequential row swaps (``ipiv``) into a 0-based
permutation with a ``stablehlo.while`` loop over the swaps (one gather and one scatter per
swap for the whole stack); on CPU, ``kernels/lu_perm.py`` does the same in a native kernel,
which costs next to nothing per pivot where the loop pays for every step.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import numpy as np

from .. import backend as _backend
from .. import dtypes as dt
from .. import registry
from ..lower import Emitter, tensor_type
from .structural import DECOMP, Get, bcast, compare, define, i64s

__all__ = ["LAPACK_DTYPES", "LAPACK_PREFIX", "layout", "char", "infer_permutation", "Lapack",
           "Cholesky", "TriangularSolve", "LuPermutation", "Fft", "lower_lapack_call",
           "matrix_operands", "numpy_fct", "fft_steps", "fft_factors", "NORM_SWAP",
           "LinAlgError", "LinalgCheck", "LINALG_CHECK", "GET_CHECKED", "NONFINITE",
           "linalg_code"]

LAPACK_DTYPES = (dt.float32, dt.float64, dt.complex64, dt.complex128)
LAPACK_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


# ---------------------------------------------------------------- LAPACK custom call

class Lapack(NamedTuple):
    """A call of jaxlib's LAPACK FFI kernel ``target`` (or cuSOLVER's, ``cusolver_...``): its
    attributes (``config``: (name, "value : type") pairs), its results' (shape, dtype) (the
    kernel's signature, as a ``stablehlo.custom_call`` declares it), which operand result 0
    reuses (``alias``: True for operand 0, an int, or False for none) and whether the
    matrices are passed column-major (``column_major=False``: every layout row-major, how the
    cuSOLVER SVD takes a wide matrix as its transpose). ``checked``: the results made NaN for
    each matrix of the stack whose call failed: the kernel's ``info`` (its last result) is not
    0, or operand 0 holds a NaN or an infinity (iterative kernels may not flag it themselves).
    Part of the op, so a graph that computes one result writes back the others' final values:
    a later graph reading U of ``svd`` does not check the operand again."""
    target: str
    config: tuple
    outs: tuple
    alias: bool | int
    column_major: bool = True
    checked: tuple = ()


def _lapack_results(inputs: tuple, attrs: Lapack) -> tuple:
    return attrs.outs


def _infer_lapack(inputs: tuple, attrs: Lapack) -> tuple:
    if not attrs.target.startswith(("lapack_", "cusolver_")) or not attrs.outs:
        raise ValueError(f"lapack: {attrs.target!r} with results {attrs.outs}")
    for x in inputs:
        if x.dtype not in LAPACK_DTYPES and x.dtype is not dt.int32:
            raise TypeError(f"lapack: {attrs.target} does not take {x.dtype.name}")
    a = attrs.alias
    if a is not False and not (a is True or 0 <= a < len(inputs)):
        raise ValueError(f"lapack: alias {a} of {len(inputs)} operands")
    if attrs.checked:
        *_, (info_shape, info_dtype) = attrs.outs
        x = inputs[0]
        if info_dtype is not dt.int32 or tuple(info_shape) != tuple(x.shape[:-2]) or \
                any(not 0 <= i < len(attrs.outs) - 1 for i in attrs.checked):
            raise ValueError(f"lapack: results {attrs.checked} checked by an info of "
                             f"{info_shape} for an operand of {x.shape}")
    return attrs.outs[0]

def layout(ndim: int, column_major: bool) -> str:
    if column_major and ndim >= 2:
        dims = (ndim - 2, ndim - 1) + tuple(range(ndim - 3, -1, -1))
    else:
        dims = tuple(range(ndim - 1, -1, -1))
    body = f"[{', '.join(map(str, dims))}]" if dims else ""
    return f"dense<{body}> : tensor<{ndim}xindex>"


def matrix_operands(attrs: Lapack, inputs: tuple) -> tuple[int, ...]:
    """The operands (``inputs``) of a ``lapack`` call (``attrs``) that the kernel takes
    column-major: the matrix-shaped ones (of the largest rank), when the call is
    column-major."""
    if not attrs.column_major:
        return ()
    nd = max(len(x.shape) for x in inputs)
    return tuple(i for i, x in enumerate(inputs) if len(x.shape) == nd and nd >= 2)


def _lower_lapack(e: Emitter, n: Any, a: list) -> str | list[str]:
    return lower_lapack_call(e, n.attrs, n.inputs, a, a)


def lower_lapack_call(e: Emitter, attrs: Lapack, inputs: tuple, a: list,
                      operands: list) -> str | list[str]:
    """The custom call of a ``lapack`` node (``attrs``, ``inputs``: their values ``a``) on
    ``operands`` (``a``, or column-major copies of some: ``kernels/layout.py``), and its NaN
    guards (``Lapack.checked``: they read ``a``). Returns the call's name, or the list of its
    results' names when some are guarded."""
    target, config, outs, alias, cm, checked = attrs
    if target.startswith("cusolver_"):
        from ..backend_cuda import register_cusolver  # (load order: GPU only)
        register_cusolver()
    else:
        _backend.register_lapack()
    nd = max(len(x.shape) for x in inputs)
    cols = matrix_operands(attrs, inputs)
    op_l = ", ".join(layout(len(x.shape), i in cols) for i, x in enumerate(inputs))
    res_l = ", ".join(layout(len(s), cm and len(s) == nd) for s, _ in outs)
    cfg = ", ".join(f"{k} = {v}" for k, v in config)
    text = (f'api_version = 4 : i32, backend_config = {{{cfg}}}, '
            f'call_target_name = "{target}", operand_layouts = [{op_l}], '
            f'result_layouts = [{res_l}]')
    if alias is not False:  # a single result is not a tuple
        tup = "[0]" if len(outs) > 1 else "[]"
        text += (f", output_operand_aliases = [#stablehlo.output_operand_alias<"
                 f"output_tuple_indices = {tup}, operand_index = {0 if alias is True else alias}, "
                 f"operand_tuple_indices = []>]")
    r = e.op("stablehlo.custom_call", operands, [tensor_type(s, d) for s, d in outs], text)
    if not checked:
        return r
    results = [f"{r}#{i}" for i in range(len(outs))]
    bad = _failed(e, inputs[0], a[0], results[-1])
    for i in checked:
        shape, d = outs[i]
        nan = complex(math.nan, math.nan) if d.kind == "c" else math.nan
        flag = e.op("stablehlo.broadcast_in_dim", [bad], tensor_type(shape, dt.bool),
                    f"broadcast_dimensions = {i64s(range(len(inputs[0].shape) - 2))}")
        results[i] = e.op("stablehlo.select", [flag, e.const(nan, d, shape), results[i]],
                          tensor_type(shape, d))
    return results  # (``get`` picks one: a multi-result op's results by position)


def _failed(e: Emitter, x: Any, xv: str, info: str) -> str:
    """Per matrix of the stack ``x`` (SSA value ``xv``): LAPACK's ``info`` is not 0, or the
    matrix holds a NaN or an infinity."""
    batch = tuple(x.shape[:-2])
    anyv = _nonfinite(e, x, xv)
    failed = compare(e, "NE", info, e.const(0, dt.int32, batch), batch, dt.int32)
    return e.op("stablehlo.or", [failed, anyv], tensor_type(batch, dt.bool))


def _nonfinite(e: Emitter, x: Any, xv: str) -> str:
    """Per matrix of the stack ``x`` (SSA value ``xv``): whether it holds a NaN or an
    infinity."""
    batch = tuple(x.shape[:-2])
    d = x.dtype
    if d.kind == "c":
        part = _REAL_OF[d.name]
        re_ = e.op("stablehlo.real", [xv], tensor_type(x.shape, part))
        im = e.op("stablehlo.imag", [xv], tensor_type(x.shape, part))
        fin = e.op("stablehlo.and", [e.op("stablehlo.is_finite", [re_], tensor_type(
            x.shape, dt.bool)), e.op("stablehlo.is_finite", [im], tensor_type(x.shape, dt.bool))],
            tensor_type(x.shape, dt.bool))
    else:
        fin = e.op("stablehlo.is_finite", [xv], tensor_type(x.shape, dt.bool))
    nonfinite = e.op("stablehlo.not", [fin], tensor_type(x.shape, dt.bool))
    nd = len(x.shape)
    return e.op("stablehlo.reduce", [nonfinite, e.const(False, dt.bool)],
                tensor_type(batch, dt.bool), f"dimensions = {i64s((nd - 2, nd - 1))}",
                region=e.scalar_body("stablehlo.or", dt.bool))


_REAL_OF = {"complex64": dt.float32, "complex128": dt.float64}


define("lapack", _infer_lapack, _lower_lapack, nout=2, weight=DECOMP, attrs=Lapack,
       results=_lapack_results)


# ---------------------------------------------------------------- linalg_check

class LinAlgError(np.linalg.LinAlgError):
    """What NumPy raises where a matrix has no result (``numpy.linalg.LinAlgError``, which
    ``except np.linalg.LinAlgError`` catches): a singular matrix to ``solve`` or ``inv``, one
    that is not positive definite to ``cholesky``, an SVD or eigensolver that did not
    converge. Raised when the graph computing the result runs (``linalg_check``)."""


LinAlgError.__module__ = "xla_array.linalg"  # (its public name)


NONFINITE = "Array must not contain infs or NaNs"  # (NumPy's eig and eigvals)


class LinalgCheck(NamedTuple):
    """A run-time check of LAPACK calls: ``message`` (NumPy's: "Singular matrix") is raised
    when some matrix of the stack failed (its flag, input 0: LAPACK's ``info``, or bools, is
    not 0); with ``finite``, input 1 is the stack of matrices, and one holding a NaN or an
    infinity raises ``NONFINITE`` first (NumPy's eig checks its input). ``fname``: the
    function, for the message. Strings and a bool: a deserialized function's checks carry
    them (as a plain tuple: the check reads them by position)."""
    message: str
    fname: str
    finite: bool = False


def _infer_linalg_check(inputs: tuple, attrs: LinalgCheck) -> tuple:
    flags = inputs[0]
    ok = flags.dtype.kind in "biu" and len(inputs) == 1 + bool(attrs.finite)
    if ok and attrs.finite:
        x = inputs[1]
        ok = x.dtype.kind in "fc" and tuple(x.shape[:-2]) == tuple(flags.shape) and \
            len(x.shape) >= 2
    if not ok:
        raise TypeError(f"linalg_check: integer or bool flags per matrix (and, with finite, "
                        f"the matrices), got {[f'{x.dtype.name}{list(x.shape)}' for x in inputs]}")
    return (), dt.int32


def _lower_linalg_check(e: Emitter, n: Any, a: list) -> str:
    """0 when every matrix of the stack succeeded, 1 where one failed, 2 where (``finite``)
    one holds a NaN or an infinity: the largest over the stack (``linalg_code``)."""
    f = n.inputs[0]
    batch, i32 = tuple(f.shape), dt.int32
    zero = e.const(False if f.dtype.kind == "b" else 0, f.dtype, batch)
    failed = compare(e, "NE", a[0], zero, batch, f.dtype)
    code = e.op("stablehlo.convert", [failed], tensor_type(batch, i32))
    if n.attrs[2]:
        x = n.inputs[1]
        code = e.op("stablehlo.select", [_nonfinite(e, x, a[1]), e.const(2, i32, batch), code],
                    tensor_type(batch, i32))
    if not batch:
        return code
    return e.op("stablehlo.reduce", [code, e.const(0, i32)], tensor_type((), i32),
                f"dimensions = {i64s(range(len(batch)))}",
                region=e.scalar_body("stablehlo.maximum", i32))


def linalg_code(attrs: Any, flags: np.ndarray, x: Any = None) -> np.ndarray:
    """``linalg_check``'s value (its lowering's) from NumPy values: the host rule's."""
    code = (np.asarray(flags) != 0).astype(np.int32)
    if attrs[2]:
        code = np.where(~np.isfinite(x).all(axis=(-2, -1)), np.int32(2), code)
    return np.asarray(code.max() if code.size else 0, dtype=np.int32)


def _check_linalg(n: Any, value: Any) -> None:
    code = int(value)
    if code:
        message, fname = n.attrs[0], n.attrs[1]
        where = n.where
        at = f" (linalg.{fname} recorded at {where[0]}:{where[1]})" if where else ""
        raise LinAlgError((NONFINITE if code == 2 else message) + at)


# computed beside the LAPACK call whose ``info`` it reads, in the same executable, and checked
# by the executor before anything is written back (``executor.run_checks``); tied into the
# results' graph by ``checked(result, check)`` (``core/ops/indexing.py``)
LINALG_CHECK = define("linalg_check", _infer_linalg_check, _lower_linalg_check,
                      attrs=LinalgCheck)
LINALG_CHECK.keep = True
LINALG_CHECK.check = _check_linalg


def _infer_get_checked(inputs: tuple, attrs: Any) -> tuple:
    m, c = inputs
    if m.op.results is None or c.op is not LINALG_CHECK:
        raise TypeError(f"get_checked: a result of a multi-result op and its linalg_check, "
                        f"got {m.op.name} and {c.op.name}")
    return m.op.results(m.inputs, m.attrs)[attrs.result]


def _lower_get_checked(e: Emitter, n: Any, a: list) -> str:
    m = a[0]  # (as ``get``: the op's name, or the list of its results' names)
    return m[n.attrs.result] if isinstance(m, list) else f"{m}#{n.attrs.result}"


# ``get_checked(m, check)``: result ``Get(i)`` of the LAPACK call ``m`` as ``get`` reads it
# (kept: written back whenever computed), computed only with ``check``, the call's
# ``linalg_check``: what ``svd``, ``eigh`` and ``eig`` return. Every result of the call is
# one, so a graph computing any of them computes the check, and the live others are written
# back with it (the op's siblings, ``record_multi``) without an extra output: a pass-through
# ``checked`` node over a kept ``get`` would be a second output of the same value, and be
# left pending when only a sibling is computed
GET_CHECKED = define("get_checked", _infer_get_checked, _lower_get_checked, attrs=Get)
GET_CHECKED.keep = True


def char(c: str) -> str:
    """A LAPACK character attribute ('V', 'L', ...) as an FFI ``ui8`` value."""
    return f"{ord(c)} : ui8"


# ---------------------------------------------------------------- cholesky, triangular solve

def _square(x: Any, what: str) -> None:
    if len(x.shape) < 2 or x.shape[-1] != x.shape[-2] or x.dtype.kind not in "fc":
        raise ValueError(f"{what}: a stack of square floating-point matrices, got "
                         f"{x.dtype.name}{list(x.shape)}")


class Cholesky(NamedTuple):
    lower: bool


def _infer_cholesky(inputs: tuple, attrs: Cholesky) -> tuple:
    x = inputs[0]
    _square(x, "cholesky")
    return x.shape, x.dtype


define("cholesky", _infer_cholesky,
       lambda e, n, a: e.op("stablehlo.cholesky", a, tensor_type(n.shape, n.dtype),
                            f"lower = {'true' if n.attrs.lower else 'false'}"),
       attrs=Cholesky)


class TriangularSolve(NamedTuple):
    left: bool  # op(a) x = b (True) or x op(a) = b
    lower: bool
    unit: bool  # unit diagonal
    trans: str  # NO_TRANSPOSE, TRANSPOSE or ADJOINT


def _infer_trsm(inputs: tuple, attrs: TriangularSolve) -> tuple:
    """inputs (a, b) with equal batch axes; the solution has ``b``'s shape."""
    a, b = inputs
    _square(a, "triangular_solve")
    if len(b.shape) != len(a.shape) or a.shape[:-2] != b.shape[:-2] or a.dtype is not b.dtype \
            or (b.shape[-2] if attrs.left else b.shape[-1]) != a.shape[-1]:
        raise ValueError(f"triangular_solve: a {a.dtype.name}{list(a.shape)} and b "
                         f"{b.dtype.name}{list(b.shape)} do not match")
    return b.shape, b.dtype


def _lower_trsm(e: Emitter, n: Any, a: list) -> str:
    left, lower, unit, trans = n.attrs
    b = lambda v: "true" if v else "false"  # noqa: E731
    return e.op("stablehlo.triangular_solve", a, tensor_type(n.shape, n.dtype),
                f"left_side = {b(left)}, lower = {b(lower)}, unit_diagonal = {b(unit)}, "
                f"transpose_a = #stablehlo<transpose {trans}>")


define("triangular_solve", _infer_trsm, _lower_trsm, weight=DECOMP, attrs=TriangularSolve)


# ---------------------------------------------------------------- LU pivots -> permutation

class LuPermutation(NamedTuple):
    m: int  # the number of rows the pivots permute


def infer_permutation(inputs: tuple, attrs: LuPermutation) -> tuple:
    piv = inputs[0]
    if piv.dtype is not dt.int32 or not piv.shape or piv.shape[-1] > attrs.m:
        raise ValueError(f"lu_permutation: int32 pivots (..., k <= {attrs.m}), got "
                         f"{piv.dtype.name}{list(piv.shape)}")
    return piv.shape[:-1] + (attrs.m,), dt.int32


def _lower_perm(e: Emitter, n: Any, a: list) -> str:
    """perm = arange(m); for i < k: swap perm[i] and perm[ipiv[i] - 1], every matrix of the
    stack at once. perm and the pivots are flattened (matrix b's entries start at b*m, b*k), so
    each step is two one-element-per-matrix gathers and two scatters: O(stack) work per step,
    not O(stack * m) (jax's CPU lowering does the same with dynamic slices)."""
    piv_shape = n.inputs[0].shape
    batch, k = piv_shape[:-1], piv_shape[-1]
    m = n.attrs.m
    nb = math.prod(batch)
    i32 = dt.int32
    fp, fv = tensor_type((nb * m,), i32), tensor_type((nb * k,), i32)
    vec, col, si = tensor_type((nb,), i32), tensor_type((nb, 1), i32), tensor_type((), i32)
    init = e.op("stablehlo.iota", [], tensor_type((nb, m), i32), "iota_dimension = 1 : i64")
    init = e.op("stablehlo.reshape", [init], fp)
    piv = e.op("stablehlo.reshape", [a[0]], fv)
    rows = e.op("stablehlo.iota", [], vec, "iota_dimension = 0 : i64")
    start_m = e.op("stablehlo.multiply", [rows, bcast(e, e.const(m, i32), (), (nb,), i32)], vec)
    start_k = e.op("stablehlo.multiply", [rows, bcast(e, e.const(k, i32), (), (nb,), i32)], vec)
    ci, cp, cv, cm, ck = (e.fresh() for _ in range(5))
    args = [(ci, si), (cp, fp), (cv, fv), (cm, vec), (ck, vec)]
    dims = "collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1"
    sdims = "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1"

    def cond(b: Emitter) -> list:
        return [compare(b, "LT", ci, b.const(k, i32), (), i32)]

    def gather(b: Emitter, v: str, idx: str) -> str:
        return b.op("stablehlo.gather", [v, idx], vec,
                    f"dimension_numbers = #stablehlo.gather<{dims}>, "
                    "indices_are_sorted = false, slice_sizes = array<i64: 1>")

    def scatter(b: Emitter, v: str, idx: str, upd: str) -> str:
        old, new = b.fresh(), b.fresh()
        region = b.block([(old, si), (new, si)], lambda r: [new])
        return b.op("stablehlo.scatter", [v, idx, upd], fp,
                    f"indices_are_sorted = false, "
                    f"scatter_dimension_numbers = #stablehlo.scatter<{sdims}>, "
                    "unique_indices = true", region=region)

    def body(b: Emitter) -> list:
        at = bcast(b, ci, (), (nb,), i32)
        j = gather(b, cv, b.op("stablehlo.reshape", [b.op("stablehlo.add", [ck, at], vec)], col))
        ii = b.op("stablehlo.reshape", [b.op("stablehlo.add", [cm, at], vec)], col)
        jm = b.op("stablehlo.subtract", [cm, bcast(b, b.const(1, i32), (), (nb,), i32)], vec)
        jj = b.op("stablehlo.reshape", [b.op("stablehlo.add", [jm, j], vec)], col)
        p_i, p_j = gather(b, cp, ii), gather(b, cp, jj)
        new = scatter(b, scatter(b, cp, ii, p_j), jj, p_i)
        return [b.op("stablehlo.add", [ci, b.const(1, i32)], si), new, cv, cm, ck]

    c_text = e.block(args, cond)
    b_text = e.block(args, body)
    region = f"{c_text}\n{e.indent}}}, {{\n{b_text}"
    r = e.op("stablehlo.while", [e.const(0, i32), init, piv, start_m, start_k],
             [si, fp, fv, vec, vec], region=region)
    return e.op("stablehlo.reshape", [f"{r}#1"], tensor_type(n.shape, i32))


# input: 1-based int32 pivots (..., k); result: 0-based int32 permutation (..., m)
define("lu_permutation", infer_permutation, _lower_perm, attrs=LuPermutation)


def _infer_complex(inputs: tuple, attrs: tuple) -> tuple:
    re, im = inputs
    if re.shape != im.shape or re.dtype is not im.dtype or re.dtype.kind != "f":
        raise TypeError(f"complex: real and imaginary parts of one float dtype and shape, got "
                        f"{re.dtype.name}{list(re.shape)} and {im.dtype.name}{list(im.shape)}")
    return re.shape, dt.complex_of(re.dtype)


define("complex", _infer_complex,
       lambda e, n, a: e.op("stablehlo.complex", a, tensor_type(n.shape, n.dtype)), fuses=True)


# ---------------------------------------------------------------- FFT

class Fft(NamedTuple):
    kind: str  # FFT, IFFT, RFFT or IRFFT
    lengths: tuple  # the FFT lengths over the trailing 1-3 axes
    norm: str = "backward"  # numpy.fft's ``norm`` of the call
    # the order numpy.fft transforms the axes of an FFT/IFFT node in: the last first (fftn,
    # ifftn, rfftn), or the first first (the complex axes of irfftn); ``fft_steps``
    ascending: bool = False
    # whether the first step reads float16 data (converted to float32 by the namespace):
    # NumPy computes that step's factor in float16 (``fft_factors``)
    half: bool = False


# the norm of a transform in the opposite direction (numpy.fft's _swap_direction)
NORM_SWAP = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


@functools.lru_cache(maxsize=1024)  # (the NumPy-FFT kernel's rule asks at every plan)
def numpy_fct(norm: str, n: int, inverse: bool, real: Any) -> tuple[float, bool]:
    """NumPy's normalization factor of one transform of length ``n`` along one axis
    (``numpy.fft``'s ``_raw_fft``: the Python int 1, or 1/n or 1/sqrt(n) computed in the real
    dtype ``real``), and whether it is a scalar of that dtype (NumPy then picks its loop of
    that precision; for the int 1 its float64 loop, float32 data included)."""
    if inverse:
        norm = NORM_SWAP[norm]
    if norm == "backward":
        return 1.0, False
    rd = np.dtype(real.np)
    if norm == "ortho":
        return float(np.reciprocal(np.sqrt(n, dtype=rd))), True
    return float(np.reciprocal(n, dtype=rd)), True


def fft_steps(attrs: Fft) -> list[tuple[int, str, int]]:
    """The one-axis transforms numpy.fft runs for an ``fft`` node, in its order: (position
    among the node's trailing axes, FFT/IFFT/RFFT/IRFFT, length)."""
    kind, lengths, _, ascending = attrs[:4]
    k = len(lengths)
    if kind == "RFFT":
        return [(k - 1, "RFFT", lengths[-1])] + [(i, "FFT", lengths[i])
                                                 for i in range(k - 2, -1, -1)]
    if kind == "IRFFT":
        return [(i, "IFFT", lengths[i]) for i in range(k - 1)] + [(k - 1, "IRFFT", lengths[-1])]
    return [(i, kind, lengths[i]) for i in (range(k) if ascending else range(k - 1, -1, -1))]


def fft_factors(attrs: Fft, real: Any) -> list[tuple[float, bool]]:
    """``numpy_fct`` of each of ``fft_steps(attrs)`` for data of real dtype ``real``: the first
    step's in float16 where the node's data was float16 (``Fft.half``)."""
    return [numpy_fct(attrs.norm, m, k in ("IFFT", "IRFFT"),
                      dt.float16 if i == 0 and attrs.half else real)
            for i, (_, k, m) in enumerate(fft_steps(attrs))]


def _infer_fft(inputs: tuple, attrs: Fft) -> tuple:
    """FFT/IFFT: complex to complex of the same shape; RFFT: real (last axis ``n``) to
    complex (``n // 2 + 1``); IRFFT: complex to real (last axis: the last length)."""
    x = inputs[0]
    kind, lengths = attrs.kind, attrs.lengths
    k = len(lengths)
    s = x.shape
    ok = 1 <= k <= 3 and len(s) >= k
    if kind == "RFFT":
        ok = ok and x.dtype.kind == "f" and s[-k:] == tuple(lengths)
        out = (s[:-1] + (lengths[-1] // 2 + 1,), dt.complex_of(x.dtype) if ok else x.dtype)
    elif kind == "IRFFT":
        ok = ok and x.dtype.kind == "c" and s[len(s) - k:-1] == tuple(lengths[:-1]) \
            and s[-1] == lengths[-1] // 2 + 1
        out = (s[:-1] + (lengths[-1],), dt.REAL_OF.get(x.dtype, x.dtype))
    else:
        ok = ok and kind in ("FFT", "IFFT") and x.dtype.kind == "c" and s[-k:] == tuple(lengths)
        out = (s, x.dtype)
    if not ok:
        raise ValueError(f"fft: {kind} of lengths {tuple(lengths)} does not apply to "
                         f"{x.dtype.name}{list(s)}")
    return out


def _lower_fft(e: Emitter, n: Any, a: list) -> str:
    """XLA's transform over the node's axes at once, then the product of NumPy's factors (XLA's
    inverse transforms divide by the product of the lengths themselves: undone)."""
    kind, lengths = n.attrs.kind, n.attrs.lengths
    y = e.op("stablehlo.fft", a, tensor_type(n.shape, n.dtype),
             f"fft_type = #stablehlo<fft_type {kind}>, fft_length = {i64s(lengths)}")
    if n.device.platform == "cpu" and not registry.kind_in_use("layout"):
        # XLA:CPU's FFT thunk wants its values row-major, but layout assignment let a LAPACK
        # call's column-major operand layout reach back into the FFT (RET_CHECK failure in
        # fft_thunk.cc: ``inv(fft(m))`` failed to compile, or to run): read out flat through
        # a barrier, the result is row-major whatever reads it. (The layout kernel copies
        # LAPACK's operands itself, so no such layout reaches the FFT; and the barrier costs
        # a copy of the result: |rfft| of 1024 x 4096 float32 took ~20% longer.)
        flat = tensor_type((math.prod(n.shape),), n.dtype)
        y = e.op("stablehlo.reshape", [e.op("stablehlo.optimization_barrier", [
            e.op("stablehlo.reshape", [y], flat)], flat)], tensor_type(n.shape, n.dtype))
    real = dt.REAL_OF.get(n.dtype, n.dtype)
    scale = 1.0
    for f, _ in fft_factors(n.attrs, real):
        scale *= f
    if kind in ("IFFT", "IRFFT"):
        scale *= math.prod(lengths)
    if scale == 1.0:
        return y
    if n.dtype.kind != "c":
        return e.op("stablehlo.multiply", [y, e.const(scale, n.dtype, n.shape)],
                    tensor_type(n.shape, n.dtype))
    # each part times the factor, as NumPy's pocketfft scales (a complex product by
    # (scale, 0) would make NaNs of infinite parts)
    rd = dt.REAL_OF[n.dtype]
    rt = tensor_type(n.shape, rd)
    k = e.const(scale, rd, n.shape)
    re = e.op("stablehlo.multiply", [e.op("stablehlo.real", [y], rt), k], rt)
    im = e.op("stablehlo.multiply", [e.op("stablehlo.imag", [y], rt), k], rt)
    return e.op("stablehlo.complex", [re, im], tensor_type(n.shape, n.dtype))


define("fft", _infer_fft, _lower_fft, weight=DECOMP, attrs=Fft)
