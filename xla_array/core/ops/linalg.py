"""Linear algebra and FFT ops (their Array-level recording: ``api/linalg_ops.py``).

Native StableHLO ops: ``triangular_solve``, ``fft`` and (off CPU) ``cholesky``. Everything else
goes through jaxlib's LAPACK FFI kernels (``lapack_{s,d,c,z}<name>_ffi``) with one generic op,
``lapack``: a ``stablehlo.custom_call`` (API version 4) whose operand and result layouts are
column-major for the matrix-shaped values (the batch dimensions are major, as in jax), so the
kernels run over a whole stack of matrices in one call. The kernels are registered lazily, the
first time such an op is recorded or lowered (``backend.register_lapack``; it imports scipy).

``lu_permutation`` turns LAPACK's 1-based sequential row swaps (``ipiv``) into a 0-based
permutation with a ``stablehlo.while`` loop over the swaps (one gather and one scatter per
swap for the whole stack); on CPU, ``kernels/lu_perm.py`` does the same in a native kernel,
~1 ms less per 512x512 solve.
"""

from __future__ import annotations

import math
from typing import Any

from .. import backend as _backend
from .. import dtypes as dt
from ..lower import Emitter, tensor_type
from .structural import DECOMP, bcast, compare, define, i64s

__all__ = ["LAPACK_DTYPES", "LAPACK_PREFIX", "layout", "char", "infer_permutation"]

LAPACK_DTYPES = (dt.float32, dt.float64, dt.complex64, dt.complex128)
LAPACK_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


def _multi(inputs: tuple, attrs: tuple) -> tuple:
    return (), dt.bool


# ---------------------------------------------------------------- LAPACK custom call

def layout(ndim: int, column_major: bool) -> str:
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
    op_l = ", ".join(layout(len(x.shape), len(x.shape) == nd) for x in n.inputs)
    res_l = ", ".join(layout(len(s), len(s) == nd) for s, _ in outs)
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


# ---------------------------------------------------------------- LU pivots -> permutation

def infer_permutation(inputs: tuple, attrs: tuple) -> tuple:
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
define("lu_permutation", infer_permutation, _lower_perm)


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
