"""LU's pivots to a row permutation in a native kernel (``native/lu_perm_ffi.c``,
``xla_array_lu_perm``): O(m) per matrix where the XLA loop of ``core/ops/linalg.py``'s
``lu_permutation`` costs ~1-2 us per pivot on XLA:CPU (~1 ms less per 512x512 solve)."""

from __future__ import annotations

from typing import Any

from ..core import dtypes as dt
from ..core import registry
from ..core.devices import Device
from ..core.lower import Emitter, tensor_type
from ..core.ops.linalg import LuPermutation, infer_permutation, layout
from ..core.ops.structural import define
from . import build

__all__ = ["TARGET", "usable"]

TARGET = "xla_array_lu_perm"
_KERNEL = build.handler_kernel("LU permutation kernel", "an XLA loop", "lu_perm_ffi", "xa_lu_perm",
                              TARGET)


def _lower_perm_kernel(e: Emitter, n: Any, a: list) -> str:
    op_l, res_l = layout(len(n.inputs[0].shape), False), layout(len(n.shape), False)
    return e.op("stablehlo.custom_call", a, tensor_type(n.shape, dt.int32),
                f'api_version = 4 : i32, backend_config = {{}}, '
                f'call_target_name = "{TARGET}", operand_layouts = [{op_l}], '
                f'result_layouts = [{res_l}]')


# the same as core/ops/linalg.py's lu_permutation, through the native kernel
define("lu_permutation_kernel", infer_permutation, _lower_perm_kernel, attrs=LuPermutation)


def available() -> bool:
    """Build (once), load and register the kernel; False if that is not possible here."""
    return _KERNEL.available()


def error() -> str:
    """Why ``available()`` is False ('' when it is not)."""
    return _KERNEL.error


def usable(device: Any) -> bool:
    """Whether the permutation of pivots on ``device`` goes through the kernel (a CPU device
    where it could be built)."""
    return type(device) is Device and device.platform == "cpu" and available()


registry.register(registry.Kernel("lu_perm", f'"{TARGET}"', "LU permutation kernel", available,
                                  error))
