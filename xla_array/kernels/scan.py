"""Cumulative sums and products of floats in NumPy's order, in native kernels
(``native/pairwise_ffi.c``: ``xla_array_cumsum``, ``xla_array_cumprod``).

NumPy's ``cumsum``/``cumprod`` (``add.accumulate``) add each value to the running total, one
after the other. XLA lowers ``cumreduce`` (a ``reduce_window`` over the whole axis) to a scan
of its own association: for rows of 31 values or more most results differed from NumPy's in
the last bits (92% of a (2000, 50) cumulative sum over axis 0, 2026-11-27). The kernels run
NumPy's order at NumPy's speed.

Its selection rule is a rewrite of the planned graph (``core/rewrite.py``): a float32/float64
``cumreduce`` on a CPU device with ``fast_math`` off is lowered as ``cumreduce_kernel`` (same
input, same attributes). Without the kernels (``XLA_ARRAY_NATIVE=0``, not built) XLA's scan
runs (NumPy's value up to rounding); integers and complex values always take XLA's scan (exact
for integers).
"""

from __future__ import annotations

import math
from typing import Any

from ..core import registry
from ..core.devices import Device
from ..core.lower import Emitter, tensor_type
from ..core.ops.ieee import faithful
from ..core.ops.linalg import layout
from ..core.ops.sorting import CumReduce
from ..core.ops.structural import OPS, bcast, define
from . import library

__all__ = ["TARGETS", "available", "error", "rule"]

TARGETS = {"sum": "xla_array_cumsum", "prod": "xla_array_cumprod"}
_LIBS = [library.handler_library(f"cumulative {kind} kernel", "XLA's scan", "pairwise_ffi",
                                 f"xa_cum{kind}", target) for kind, target in TARGETS.items()]


def _lower_scan(e: Emitter, n: Any, a: list) -> str:
    kind, axis, initial = n.attrs
    x = n.inputs[0]
    s, d = x.shape, x.dtype
    p, r, k = math.prod(s[:axis]), s[axis], math.prod(s[axis + 1:])
    v = e.op("stablehlo.reshape", [a[0]], tensor_type((p, r, k), d))
    v = e.op("stablehlo.custom_call", [v], tensor_type((p, r, k), d),
             f'api_version = 4 : i32, backend_config = {{}}, '
             f'call_target_name = "{TARGETS[kind]}", '
             f'operand_layouts = [{layout(3, False)}], result_layouts = [{layout(3, False)}]')
    v = e.op("stablehlo.reshape", [v], tensor_type(s, d))
    if not initial:
        return v
    first = s[:axis] + (1,) + s[axis + 1:]
    ident = bcast(e, e.const(0 if kind == "sum" else 1, d), (), first, d)
    return e.op("stablehlo.concatenate", [ident, v], tensor_type(n.shape, d),
                f"dimension = {axis} : i64")


# the same as sorting.py's cumreduce (an inclusive scan), its float sums and products in the
# kernels, in NumPy's order
CUMREDUCE_KERNEL = define("cumreduce_kernel", OPS["cumreduce"].infer, _lower_scan,
                          attrs=CumReduce)


def present() -> bool:
    """Whether ``available()`` may be True, asked without loading the libraries."""
    return all(lib.present() for lib in _LIBS)


def available() -> bool:
    """Load (once) and register the kernels; False if they were not built or cannot be used."""
    return all(lib.available() for lib in _LIBS)


def error() -> str:
    """Why ``available()`` is False ('' when it is not)."""
    return next((lib.error for lib in _LIBS if lib.error), "")


def rule(n: Any) -> tuple[tuple, CumReduce] | None:
    """The selection rule: a float32/float64 scan on a CPU device, fast_math off."""
    d, x = n.device, n.inputs[0]
    if type(d) is not Device or d.platform != "cpu" or not faithful() or \
            x.dtype.name not in ("float32", "float64") or not x.shape[n.attrs.axis]:
        return None
    return n.inputs, n.attrs


registry.register(registry.Kernel(
    kind="scan", title="cumulative sum/product kernels", source="native/pairwise_ffi.c",
    targets=tuple(TARGETS.values()), op=CUMREDUCE_KERNEL, replaces="cumreduce", rule=rule,
    available=available, present=present, error=error))
