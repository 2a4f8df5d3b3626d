"""LU's pivots to a row permutation in a native kernel (``native/lu_perm_ffi.c``,
``xla_array_lu_perm``): O(m) per matrix and a few nanoseconds per pivot, where the XLA loop
of ``core/ops/linalg.py``'s ``lu_permutation`` pays a loop iteration's overhead per pivot
(figures in docs/architecture.md, "Native kernels").

Its selection rule is a rewrite of the planned graph (``core/rewrite.py``): every
``lu_permutation`` node on a CPU device is lowered as ``lu_permutation_kernel`` (same input,
same attributes) when the kernel is available."""

from __future__ import annotations

from typing import Any

from ..core import dtypes as dt
from ..core import registry
from ..core.devices import Device
from ..core.lower import Emitter, tensor_type
from ..core.ops.linalg import LuPermutation, infer_permutation, layout
from ..core.ops.structural import define
from . import library

__all__ = ["TARGET", "available", "error", "rule"]

TARGET = "xla_array_lu_perm"
_LIB = library.handler_library("LU permutation kernel", "an XLA loop", "lu_perm_ffi",
                               "xa_lu_perm", TARGET)


def _lower_perm_kernel(e: Emitter, n: Any, a: list) -> str:
    op_l, res_l = layout(len(n.inputs[0].shape), False), layout(len(n.shape), False)
    return e.op("stablehlo.custom_call", a, tensor_type(n.shape, dt.int32),
                f'api_version = 4 : i32, backend_config = {{}}, '
                f'call_target_name = "{TARGET}", operand_layouts = [{op_l}], '
                f'result_layouts = [{res_l}]')


# the same as core/ops/linalg.py's lu_permutation, through the native kernel
LU_PERMUTATION_KERNEL = define("lu_permutation_kernel", infer_permutation, _lower_perm_kernel,
                               attrs=LuPermutation)


def available() -> bool:
    """Load (once) and register the kernel; False if it was not built or cannot be used."""
    return _LIB.available()


def error() -> str:
    """Why ``available()`` is False ('' when it is not)."""
    return _LIB.error


def rule(n: Any) -> tuple[tuple, LuPermutation] | None:
    """The selection rule: a permutation of pivots on a CPU device goes through the kernel."""
    d = n.device
    return (n.inputs, n.attrs) if type(d) is Device and d.platform == "cpu" else None


registry.register(registry.Kernel(
    kind="lu_perm", title="LU permutation kernel", source="native/lu_perm_ffi.c",
    targets=(TARGET,), op=LU_PERMUTATION_KERNEL, replaces="lu_permutation", rule=rule,
    available=available, present=_LIB.present, error=error))
