"""The op table, part 3: linear algebra and FFT ops, plus Array-level helpers built on them.

Native StableHLO ops: ``triangular_solve``, ``fft`` and (off CPU) ``cholesky``. Everything else
goes through jaxlib's LAPACK FFI kernels (``lapack_{s,d,c,z}<name>_ffi``) with one generic op,
``lapack``: a ``stablehlo.custom_call`` (API version 4) whose operand and result layouts are
column-major for the matrix-shaped values (the batch dimensions are major, as in jax), so the
kernels run over a whole stack of matrices in one call. The kernels are registered lazily, the
first time such an op is recorded or lowered (``_backend.register_lapack``; it imports scipy).

``lu_permutation`` turns LAPACK's 1-based sequential row swaps (``ipiv``) into a 0-based
permutation with a ``stablehlo.while`` loop over the swaps (one gather and one scatter per
swap for the whole stack); on CPU, ``lu_permutation_kernel`` does the same in the native
kernel ``kernels/native/lu_perm_ffi.c`` (``xla_array_lu_perm``), ~1 ms less per 512x512 solve.
"""

from __future__ import annotations

import math
from typing import Any

from ...api.array import Array, wrap
from ...kernels import blas as _blas
from ...kernels import build as _kernels
from ...kernels import rowpass as _rowpass
from .. import backend as _backend
from .. import dtypes as dt
from ..devices import Device
from ..dtypes import DType
from ..graph import record
from ..lower import Emitter, tensor_type
from .structural import DECOMP, HEAVY, OPS, bcast, compare, convert, define, i64s, record_multi

__all__ = ["lapack", "getrf", "pivots_to_perm", "tri_solve", "cholesky_lower", "nan_where",
           "make_complex", "fft_node", "LAPACK_DTYPES"]

LAPACK_DTYPES = (dt.float32, dt.float64, dt.complex64, dt.complex128)
_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


def _multi(inputs: tuple, attrs: tuple) -> tuple:
    return (), dt.bool


# ---------------------------------------------------------------- LAPACK custom call

def _layout(ndim: int, column_major: bool) -> str:
    if column_major and ndim >= 2:
        dims = (ndim - 2, ndim - 1) + tuple(range(ndim - 3, -1, -1))
    else:
        dims = tuple(range(ndim - 1, -1, -1))
    body = f"[{', '.join(map(str, dims))}]" if dims else ""
    return f"dense<{body}> : tensor<{ndim}xindex>"


def _lower_lapack(e: Emitter, n: Any, a: list) -> str:
    target, config, outs, alias = n.attrs
    _backend.register_lapack()
    nd = max(len(x.shape) for x in n.inputs)
    op_l = ", ".join(_layout(len(x.shape), len(x.shape) == nd) for x in n.inputs)
    res_l = ", ".join(_layout(len(s), len(s) == nd) for s, _ in outs)
    cfg = ", ".join(f"{k} = {v}" for k, v in config)
    attrs = (f'api_version = 4 : i32, backend_config = {{{cfg}}}, '
             f'call_target_name = "{target}", operand_layouts = [{op_l}], '
             f'result_layouts = [{res_l}]')
    if alias is not False:  # a single result is not a tuple
        tup = "[0]" if len(outs) > 1 else "[]"
        attrs += (f", output_operand_aliases = [#stablehlo.output_operand_alias<"
                  f"output_tuple_indices = {tup}, operand_index = {0 if alias is True else alias}, "
                  f"operand_tuple_indices = []>]")
    return e.op("stablehlo.custom_call", a, [tensor_type(s, d) for s, d in outs], attrs)


# attrs: (target, ((attr name, "value : type"), ...), ((shape, dtype) per result), alias 0->0)
define("lapack", _multi, _lower_lapack, nout=2, weight=DECOMP)


def lapack(base: str, dtype: DType, inputs: list[Array], outs: list[tuple[tuple, DType]],
           config: tuple = (), alias: bool | int = True, keep: bool = True) -> list[Array]:
    """Record LAPACK FFI kernel ``lapack_<s|d|c|z><base>`` on ``inputs``; one Array per result.

    ``config`` holds the kernel's attributes as (name, "value : type") pairs, e.g.
    ``(("mode", "86 : ui8"),)``; ``alias`` makes result 0 reuse operand 0's buffer (True) or
    operand ``alias``'s (an int), or no operand's (False). ``keep=False`` when the caller
    returns a single array built from the results (``record_multi``); a single result is
    never kept: it is an ordinary intermediate.
    """
    dev = inputs[0].device
    if dev.platform != "cpu":
        raise ValueError(f"linalg: the LAPACK kernel {base} runs on CPU devices only; the "
                         f"array is on {dev} (move it with to_device)")
    _backend.register_lapack()
    target = f"lapack_{_PREFIX[dtype.name]}{base}"
    outs_t = tuple((tuple(s), d) for s, d in outs)
    nodes = record_multi(OPS["lapack"], tuple(x._node for x in inputs),
                         (target, tuple(config), outs_t, alias), list(outs_t),
                         keep and len(outs_t) > 1)
    return [wrap(n) for n in nodes]


# ---------------------------------------------------------------- BLAS matmul custom call

def _lower_blas_gemm(e: Emitter, n: Any, a: list) -> str:
    """``op(A) @ op(B)`` per batch element through ``xla_array_gemm_<ta><tb>`` (see ``_blas``)."""
    _shape, d, ta, tb = n.attrs
    vals = [convert(e, v, x.shape, x.dtype, d) for v, x in zip(a, n.inputs)]
    lay = _layout(len(n.shape), False)
    return e.op("stablehlo.custom_call", vals, tensor_type(n.shape, d),
                f'api_version = 4 : i32, backend_config = {{}}, '
                f'call_target_name = "{_blas.TARGETS[(ta, tb)]}", '
                f'operand_layouts = [{lay}, {lay}], result_layouts = [{lay}]')


# inputs (a, b): matrices or stacks with equal batch dims (row-major); attrs: (shape, dtype,
# ta, tb): the product op(a) @ op(b), op transposing the last two dims where the flag is set
define("blas_gemm", lambda ins, attrs: (attrs[0], attrs[1]), _lower_blas_gemm, weight=HEAVY)


# ---------------------------------------------------------------- X.T @ f(X @ w) in one pass

def _lower_rowpass(e: Emitter, n: Any, a: list) -> str:
    """``X.T @ f(X @ w)`` through ``xla_array_rowpass`` (see ``_rowpass``)."""
    shape, d, program = n.attrs
    lays = ", ".join(_layout(len(x.shape), False) for x in n.inputs)
    return e.op("stablehlo.custom_call", a, tensor_type(shape, d),
                f'api_version = 4 : i32, backend_config = {{program = array<i64'
                f'{": " + ", ".join(map(str, program)) if program else ""}>}}, '
                f'call_target_name = "{_rowpass.TARGET}", '
                f'operand_layouts = [{lays}], result_layouts = [{_layout(1, False)}]')


# inputs (X, w, row vectors..., scalars...); attrs: ((d,), dtype, program): X.T @ f(X @ w),
# f given as the kernel's program (opcodes in _rowpass.OPCODES)
define("rowpass", lambda ins, attrs: (attrs[0], attrs[1]), _lower_rowpass, weight=4)


def char(c: str) -> str:
    """A LAPACK character attribute ('V', 'L', ...) as an FFI ``ui8`` value."""
    return f"{ord(c)} : ui8"


# ---------------------------------------------------------------- cholesky, triangular solve

define("cholesky", lambda ins, attrs: (ins[0].shape, ins[0].dtype),
       lambda e, n, a: e.op("stablehlo.cholesky", a, tensor_type(n.shape, n.dtype),
                            f"lower = {'true' if n.attrs[0] else 'false'}"))


def _lower_trsm(e: Emitter, n: Any, a: list) -> str:
    left, lower, unit, trans = n.attrs
    b = lambda v: "true" if v else "false"  # noqa: E731
    return e.op("stablehlo.triangular_solve", a, tensor_type(n.shape, n.dtype),
                f"left_side = {b(left)}, lower = {b(lower)}, unit_diagonal = {b(unit)}, "
                f"transpose_a = #stablehlo<transpose {trans}>")


# inputs (a, b) with equal batch dims; attrs: (left_side, lower, unit_diagonal, transpose_a)
define("triangular_solve", lambda ins, attrs: (ins[1].shape, ins[1].dtype), _lower_trsm,
       weight=DECOMP)


def cholesky_lower(x: Array, keep: bool = True) -> tuple[Array, Array | None]:
    """(lower Cholesky factor, info or None). On CPU, LAPACK potrf (compiles ~4x and runs up
    to ~9x faster than XLA's expansion of ``stablehlo.cholesky``); elsewhere the native op.
    The strict upper triangle of the factor is left as garbage: apply ``tril``."""
    if x.device.platform == "cpu":
        low, info = lapack("potrf_ffi", x.dtype, [x], [(x.shape, x.dtype),
                                                       (x.shape[:-2], dt.int32)],
                           (("uplo", char("L")),), keep=keep)
        return low, info
    return wrap(record(OPS["cholesky"], (x._node,), (True,))), None


def tri_solve(a: Array, b: Array, *, lower: bool, unit: bool = False, left: bool = True,
              trans: str = "NO_TRANSPOSE") -> Array:
    """Solve ``op(a) x = b`` (left) or ``x op(a) = b`` with triangular ``a``; the batch
    dimensions of ``a`` and ``b`` are broadcast together first."""
    from ...api.manipulation import broadcast_to
    from .structural import broadcast_shapes
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = broadcast_to(a, batch + a.shape[-2:])
    b = broadcast_to(b, batch + b.shape[-2:])
    if a.device.platform == "cpu" and a.size and b.size and a.dtype.name in _PREFIX:
        # LAPACK/BLAS trsm (as jax on CPU): XLA's own expansion runs ~2.5x slower
        t = {"NO_TRANSPOSE": "N", "TRANSPOSE": "T", "ADJOINT": "C"}[trans]
        return lapack("trsm_ffi", a.dtype, [a, b], [(b.shape, b.dtype)],
                      (("side", char("L" if left else "R")), ("uplo", char("L" if lower else "U")),
                       ("trans_x", char(t)), ("diag", char("U" if unit else "N"))), alias=1)[0]
    return wrap(record(OPS["triangular_solve"], (a._node, b._node), (left, lower, unit, trans)))


# ---------------------------------------------------------------- LU pivots -> permutation

def _infer_perm(inputs: tuple, attrs: tuple) -> tuple:
    return inputs[0].shape[:-1] + (attrs[0],), dt.int32


def _lower_perm(e: Emitter, n: Any, a: list) -> str:
    """perm = arange(m); for i < k: swap perm[i] and perm[ipiv[i] - 1], every matrix of the
    stack at once. perm and the pivots are flattened (matrix b's entries start at b*m, b*k), so
    each step is two one-element-per-matrix gathers and two scatters: O(stack) work per step,
    not O(stack * m) (jax's CPU lowering does the same with dynamic slices)."""
    piv_shape = n.inputs[0].shape
    batch, k = piv_shape[:-1], piv_shape[-1]
    m = n.attrs[0]
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


# input: 1-based int32 pivots (..., k); attrs: (m,); result: 0-based int32 permutation (..., m)
define("lu_permutation", _infer_perm, _lower_perm)


def getrf(x: Array, keep: bool = True) -> tuple[Array, Array, Array]:
    """LU with partial pivoting of a stack of square matrices: (packed LU, 1-based int32
    pivots, info); ``info > 0`` flags an exactly singular U. ``keep``: see ``lapack``."""
    *batch, m, n = x.shape
    lu, piv, info = lapack("getrf_ffi", x.dtype, [x], [(x.shape, x.dtype),
                                                        ((*batch, min(m, n)), dt.int32),
                                                        (tuple(batch), dt.int32)], keep=keep)
    return lu, piv, info


def _lower_perm_kernel(e: Emitter, n: Any, a: list) -> str:
    op_l, res_l = _layout(len(n.inputs[0].shape), False), _layout(len(n.shape), False)
    return e.op("stablehlo.custom_call", a, tensor_type(n.shape, dt.int32),
                f'api_version = 4 : i32, backend_config = {{}}, '
                f'call_target_name = "{_PERM_TARGET}", operand_layouts = [{op_l}], '
                f'result_layouts = [{res_l}]')


# the same through the native kernel (kernels/native/lu_perm_ffi.c), on CPU where it could be built
define("lu_permutation_kernel", _infer_perm, _lower_perm_kernel)

_PERM_TARGET = "xla_array_lu_perm"


_PERM_KERNEL = _kernels.handler_kernel("LU permutation kernel", "an XLA loop", "lu_perm_ffi",
                                       "xa_lu_perm", _PERM_TARGET)


def pivots_to_perm(piv: Array, m: int) -> Array:
    """The 0-based row permutation ``perm`` of getrf's pivots: ``x[..., perm, :] == L @ U``.
    On a CPU device, a native kernel (O(m) per matrix); elsewhere, or if the kernel cannot
    be built, an XLA loop over the pivots (~1-2 us per pivot on XLA:CPU)."""
    dev = piv.device
    kernel = type(dev) is Device and dev.platform == "cpu" and _PERM_KERNEL.available()
    op = OPS["lu_permutation_kernel" if kernel else "lu_permutation"]
    return wrap(record(op, (piv._node,), (m,)))


def make_complex(re: Array, im: Array) -> Array:
    return wrap(record(OPS["complex"], (re._node, im._node), ()))


def nan_where(bad: Array, x: Array) -> Array:
    """``x`` with every matrix (or vector) of the stack whose ``bad`` flag is set made NaN."""
    from ...api.manipulation import reshape
    from ...api.searching import where
    extra = x.ndim - bad.ndim
    flag = reshape(bad, bad.shape + (1,) * extra) if extra else bad
    nan = complex(float("nan"), float("nan")) if x.dtype.kind == "c" else float("nan")
    return where(flag, nan, x)


define("complex", lambda ins, attrs: (ins[0].shape, dt.complex_of(ins[0].dtype)),
       lambda e, n, a: e.op("stablehlo.complex", a, tensor_type(n.shape, n.dtype)), fuses=True)


# ---------------------------------------------------------------- FFT

def _infer_fft(inputs: tuple, attrs: tuple) -> tuple:
    return attrs[2], attrs[3]


def _lower_fft(e: Emitter, n: Any, a: list) -> str:
    kind, lengths = n.attrs[0], n.attrs[1]
    return e.op("stablehlo.fft", a, tensor_type(n.shape, n.dtype),
                f"fft_type = #stablehlo<fft_type {kind}>, fft_length = {i64s(lengths)}")


# attrs: (FFT|IFFT|RFFT|IRFFT, fft_length over the trailing 1-3 dims, out shape, out dtype)
define("fft", _infer_fft, _lower_fft, weight=DECOMP)


def fft_node(x: Array, kind: str, lengths: tuple, shape: tuple, dtype: DType) -> Array:
    return wrap(record(OPS["fft"], (x._node,), (kind, tuple(lengths), tuple(shape), dtype)))
