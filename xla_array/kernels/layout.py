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
on a CPU device with column-major matrix operands that XLA would compute (an elementwise step,
a gather, a buffer parameter) is lowered as ``lapack_from_rows`` (same inputs), whose lowering
copies those operands through the kernel and then makes the same LAPACK call. Operands that
are column-major already are left to XLA: the results of another LAPACK call (``solve``'s
triangular solves read ``getrf``'s factor), and transposes (XLA passes ``x.T`` of a row-major
``x`` as it is). Values are unchanged (a copy), so the host rule of ``lapack`` stands."""

from __future__ import annotations

from typing import Any, NamedTuple

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


class FromRows(NamedTuple):
    """A ``lapack`` call (``lapack``: its attributes) whose operands ``rows`` are row-major
    values that the kernel copies column-major."""
    lapack: Lapack
    rows: tuple


def _infer(inputs: tuple, attrs: FromRows) -> tuple:
    if any(i not in matrix_operands(attrs.lapack, inputs) for i in attrs.rows):
        raise ValueError(f"lapack_from_rows: operands {attrs.rows} are not all matrices the "
                         f"call takes column-major")
    return _LAPACK.infer(inputs, attrs.lapack)


def _results(inputs: tuple, attrs: FromRows) -> tuple:
    return _LAPACK.results(inputs, attrs.lapack)


def _lower(e: Emitter, n: Any, a: list) -> str | list[str]:
    operands = list(a)
    for i in n.attrs.rows:
        x = n.inputs[i]
        nd = len(x.shape)
        operands[i] = e.op("stablehlo.custom_call", [a[i]], tensor_type(x.shape, x.dtype),
                           f'api_version = 4 : i32, backend_config = {{}}, '
                           f'call_target_name = "{TARGET}", '
                           f'operand_layouts = [{layout(nd, False)}], '
                           f'result_layouts = [{layout(nd, True)}]')
    return lower_lapack_call(e, n.attrs.lapack, n.inputs, a, operands)


_LAPACK = OPS["lapack"]
# the same as core/ops/linalg.py's lapack, operands ``rows`` copied column-major by the kernel
LAPACK_FROM_ROWS = define("lapack_from_rows", _infer, _lower, nout=_LAPACK.nout,
                          weight=DECOMP, attrs=FromRows, results=_results)
# results of LAPACK calls (column-major already) and transposes (a bitcast for XLA)
_COLUMN_MAJOR_ALREADY = ("get", "get_internal", "transpose")


def available() -> bool:
    """Load (once) and register the kernel; False if it was not built or cannot be used."""
    return _LIB.available()


def error() -> str:
    """Why ``available()`` is False ('' when it is not)."""
    return _LIB.error


def rule(n: Any) -> tuple[tuple, FromRows] | None:
    """The selection rule: a LAPACK call on a CPU device with column-major matrix operands
    that are not column-major already (above), of a dtype the kernel copies."""
    d = n.device
    if type(d) is not Device or d.platform != "cpu" or not n.attrs.target.startswith("lapack_"):
        return None
    rows = tuple(i for i in matrix_operands(n.attrs, n.inputs)
                 if n.inputs[i].op.name not in _COLUMN_MAJOR_ALREADY and
                 n.inputs[i].dtype.itemsize in (4, 8, 16))
    return (n.inputs, FromRows(n.attrs, rows)) if rows else None


registry.register(registry.Kernel(
    kind="layout", title="column-major copy kernel", source="native/layout_ffi.c",
    targets=(TARGET,), op=LAPACK_FROM_ROWS, replaces="lapack", rule=rule,
    available=available, present=_LIB.present, error=error))
