"""The operands of a LAPACK call made column-major by a native copy (``native/layout_ffi.c``,
``xla_array_column_major``) rather than by XLA's layout assignment.

LAPACK takes its matrices column-major, and the ``lapack`` op's custom call says so in its
operand layouts. XLA meets that constraint by carrying it back through the steps that compute
the operand: ``svd(X - mean)``'s subtraction (LDA: the gathers, the concatenation, the
scaling) is written column-major, then copied row-major again for every reader that wants
rows (the user's centered array, a column sum in NumPy's order), each copy one more pass over
the matrix and one more compiled kernel. Through this kernel the operand is computed row-major
like every other value and transposed once, into the buffer LAPACK then overwrites.

Its selection rule is a rewrite of the planned graph (``core/rewrite.py``): a ``lapack`` node
on a CPU device with column-major matrix operands is lowered as ``lapack_from_rows`` (same
inputs and attributes), whose lowering copies each such operand through the kernel and then
makes the same LAPACK call. Values are unchanged (a copy), so the host rule of ``lapack``
stands."""

from __future__ import annotations

from typing import Any

from ..core import registry
from ..core.devices import Device
from ..core.lower import Emitter, tensor_type
from ..core.ops.linalg import Lapack, layout, lower_lapack_call, matrix_operands
from ..core.ops.structural import DECOMP, OPS, define
from . import library

__all__ = ["TARGET", "available", "error", "rule"]

TARGET = "xla_array_column_major"
_LIB = library.handler_library("column-major copy kernel", "XLA's layout assignment",
                               "layout_ffi", "xa_column_major", TARGET)


def _lower(e: Emitter, n: Any, a: list) -> str | list[str]:
    operands = list(a)
    for i in matrix_operands(n):
        x = n.inputs[i]
        nd = len(x.shape)
        operands[i] = e.op("stablehlo.custom_call", [a[i]], tensor_type(x.shape, x.dtype),
                           f'api_version = 4 : i32, backend_config = {{}}, '
                           f'call_target_name = "{TARGET}", '
                           f'operand_layouts = [{layout(nd, False)}], '
                           f'result_layouts = [{layout(nd, True)}]')
    return lower_lapack_call(e, n, a, operands)


_LAPACK = OPS["lapack"]
# the same as core/ops/linalg.py's lapack, its column-major operands copied by the kernel
LAPACK_FROM_ROWS = define("lapack_from_rows", _LAPACK.infer, _lower, nout=_LAPACK.nout,
                          weight=DECOMP, attrs=Lapack, results=_LAPACK.results)


def available() -> bool:
    """Load (once) and register the kernel; False if it was not built or cannot be used."""
    return _LIB.available()


def error() -> str:
    """Why ``available()`` is False ('' when it is not)."""
    return _LIB.error


def rule(n: Any) -> tuple[tuple, Lapack] | None:
    """The selection rule: a LAPACK call on a CPU device with column-major matrix operands
    whose dtype the kernel copies."""
    d = n.device
    if type(d) is not Device or d.platform != "cpu" or not n.attrs.target.startswith("lapack_"):
        return None
    cols = matrix_operands(n)
    if not cols or any(n.inputs[i].dtype.itemsize not in (4, 8, 16) for i in cols):
        return None
    return n.inputs, n.attrs


registry.register(registry.Kernel(
    kind="layout", title="column-major copy kernel", source="native/layout_ffi.c",
    targets=(TARGET,), op=LAPACK_FROM_ROWS, replaces="lapack", rule=rule,
    available=available, error=error))
