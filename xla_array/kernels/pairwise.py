"""Row sums in NumPy's pairwise order in a native kernel (``native/pairwise_ffi.c``,
``xla_array_pairwise_sum``).

``core/ops/reductions.py`` writes a float or complex sum over trailing axes in NumPy's order
with XLA's ops; where the row length makes NumPy's recursion irregular (halves of unequal
lengths: most lengths above 128), that form needs a gather and runs 2-15x slower than XLA's
own reduction. The kernel adds the same values in the same order at NumPy's speed; the price
is that the summed values are written out first instead of fused into the sum.

Its selection rule is a rewrite of the planned graph (``core/rewrite.py``): a ``reduce`` sum
on a CPU device written in NumPy's order (``fast_math`` off) over trailing axes whose rows are
irregular is lowered as ``pairwise_sum`` (same input, same attributes). Without the kernel
(``XLA_ARRAY_NATIVE=0``, not built) the XLA form gives the same bits.
"""

from __future__ import annotations

from typing import Any

from ..core import registry
from ..core.devices import Device
from ..core.lower import Emitter, tensor_type
from ..core.ops.linalg import layout
from ..core.ops.reductions import WIDE, Reduce, numpy_order, regular_rows, row_plan
from ..core.ops.structural import OPS, define
from . import library

__all__ = ["TARGET", "available", "error", "rule"]

TARGET = "xla_array_pairwise_sum"
_LIB = library.handler_library("pairwise-sum kernel", "XLA's ops in NumPy's order",
                               "pairwise_ffi", "xa_pairwise_sum", TARGET)


def _lower_pairwise(e: Emitter, n: Any, a: list) -> str:
    x, d = n.inputs[0], n.dtype
    acc = WIDE.get(d.name, d)
    v = a[0]
    if acc is not d:
        v = e.op("stablehlo.convert", [v], tensor_type(x.shape, acc))
    op_l, res_l = layout(len(x.shape), False), layout(len(n.shape), False)
    r = e.op("stablehlo.custom_call", [v], tensor_type(n.shape, acc),
             f'api_version = 4 : i32, backend_config = {{}}, '
             f'call_target_name = "{TARGET}", operand_layouts = [{op_l}], '
             f'result_layouts = [{res_l}]')
    if acc is not d:
        r = e.op("stablehlo.convert", [r], tensor_type(n.shape, d))
    return r


# the same as reductions.py's reduce (a sum), through the native kernel
PAIRWISE_SUM = define("pairwise_sum", OPS["reduce"].infer, _lower_pairwise, attrs=Reduce)


def available() -> bool:
    """Load (once) and register the kernel; False if it was not built or cannot be used."""
    return _LIB.available()


def error() -> str:
    """Why ``available()`` is False ('' when it is not)."""
    return _LIB.error


def rule(n: Any) -> tuple[tuple, Reduce] | None:
    """The selection rule: a sum in NumPy's order over trailing axes, on a CPU device, whose
    rows XLA's ops cannot write out without a gather."""
    d = n.device
    if type(d) is not Device or d.platform != "cpu" or not numpy_order(n):
        return None
    plan = row_plan(n.inputs[0].shape, n.attrs.axes)
    if plan is None or regular_rows(plan[1], 4 if n.dtype.kind == "c" else 8):
        return None
    return n.inputs, n.attrs


registry.register(registry.Kernel(
    kind="pairwise", title="pairwise-sum kernel", source="native/pairwise_ffi.c",
    targets=(TARGET,), op=PAIRWISE_SUM, replaces="reduce", rule=rule,
    available=available, error=error))
