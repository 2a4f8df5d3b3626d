"""Sums in NumPy's order in native kernels (``native/pairwise_ffi.c``): rows by pairwise
summation (``xla_array_pairwise_sum``), columns row after row (``xla_array_column_sum``).

``core/ops/reductions.py`` writes a float or complex sum in NumPy's order with XLA's ops. Two
parts of it are slow there: rows whose length makes NumPy's recursion irregular (halves of
unequal lengths: most lengths above 128) need a gather, 2-4x slower than XLA's own reduction;
and NumPy adds the rows of a reduction over leading axes (``sum(x, axis=0)``) one after the
other, which XLA's ops can write out only for a few rows (``SEQUENTIAL_ROWS``) and its
reduction does in an order of its own. The kernels add the same values in the same order at
NumPy's speed; the price is that the summed values are written out first instead of fused
into the sum.

Its selection rule is a rewrite of the planned graph (``core/rewrite.py``): a ``reduce`` sum
on a CPU device written in NumPy's order (``fast_math`` off) with irregular rows or more than
``SEQUENTIAL_ROWS`` rows to add is lowered as ``pairwise_sum`` (same input, same attributes),
whose lowering is the same as ``reduce``'s but for those two parts. Without the kernels
(``XLA_ARRAY_NATIVE=0``, not built) irregular rows take the gather form (the same bits) and
long column sums XLA's reduction (NumPy's value up to rounding).
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

import numpy as np

from ..core import registry
from ..core.aligned import address
from ..core.devices import Device
from ..core.dtypes import DType
from ..core.lower import Emitter, tensor_type
from ..core.ops.linalg import layout
from ..core.ops.reductions import (
    SEQUENTIAL_ROWS,
    Reduce,
    numpy_order,
    numpy_order_sum,
    regular_rows,
    sum_plan,
)
from ..core.ops.structural import OPS, define
from . import library

__all__ = ["TARGET", "COLUMN_TARGET", "available", "error", "rule"]

TARGET = "xla_array_pairwise_sum"
COLUMN_TARGET = "xla_array_column_sum"
_LIB = library.handler_library("pairwise-sum kernel", "XLA's ops in NumPy's order",
                               "pairwise_ffi", "xa_pairwise_sum", TARGET)
_COLUMNS = library.handler_library("column-sum kernel", "XLA's ops", "pairwise_ffi",
                                   "xa_column_sum", COLUMN_TARGET)
_CODES = {np.dtype(np.float64): 0, np.dtype(np.float32): 1, np.dtype(np.complex128): 2,
          np.dtype(np.complex64): 3}
_HOST: list = []  # the library's xa_sums_host, once looked up (None: not there)


def _call(e: Emitter, target: str, v: str, shape: tuple, out: tuple, d: DType) -> str:
    return e.op("stablehlo.custom_call", [v], tensor_type(out, d),
                f'api_version = 4 : i32, backend_config = {{}}, '
                f'call_target_name = "{target}", '
                f'operand_layouts = [{layout(len(shape), False)}], '
                f'result_layouts = [{layout(len(out), False)}]')


def _rows(e: Emitter, v: str, p: int, m: int, d: DType) -> str:
    return _call(e, TARGET, v, (p, m), (p,), d)


def _columns(e: Emitter, v: str, r: int, k: int, d: DType) -> str:
    return _call(e, COLUMN_TARGET, v, (r, k), (k,), d)


def _lower_pairwise(e: Emitter, n: Any, a: list) -> str:
    return numpy_order_sum(e, n, a[0], row_call=_rows, column_call=_columns)


# the same as reductions.py's reduce (a sum in NumPy's order), its slow parts in the kernels
PAIRWISE_SUM = define("pairwise_sum", OPS["reduce"].infer, _lower_pairwise, attrs=Reduce)


def present() -> bool:
    """Whether ``available()`` may be True, asked without loading the libraries."""
    return _LIB.present() and _COLUMNS.present()


def available() -> bool:
    """Load (once) and register the kernels; False if they were not built or cannot be used."""
    return _LIB.available() and _COLUMNS.available()


def error() -> str:
    """Why ``available()`` is False ('' when it is not)."""
    return _LIB.error or _COLUMNS.error


def rule(n: Any) -> tuple[tuple, Reduce] | None:
    """The selection rule: a sum in NumPy's order on a CPU device with irregular rows or more
    than ``SEQUENTIAL_ROWS`` rows to add one after the other."""
    d = n.device
    if type(d) is not Device or d.platform != "cpu" or not numpy_order(n):
        return None
    m, r = sum_plan(n.inputs[0].shape, n.attrs.axes)
    if (m and not regular_rows(m, 4 if n.dtype.kind == "c" else 8)) or r > SEQUENTIAL_ROWS:
        return n.inputs, n.attrs
    return None


def _sums_host() -> Any:
    if not _HOST:
        fn = getattr(library.library("pairwise_ffi"), "xa_sums_host", None)
        if fn is not None:
            fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64,
                           ctypes.c_void_p, ctypes.c_void_p]
        _HOST.append(fn)
    return _HOST[0]


def host(n: Any, vals: list, attrs: Reduce) -> np.ndarray:
    """The host rule: the kernels' own loops on the host values where the sum is one of
    theirs alone, the rows of its trailing axes (``sum(x, axis=-1)``) or the rows added one
    after the other over its leading ones (``sum(x, axis=0)``); else the reduce's own rule
    (NumPy's ``add.reduce``: the same order). NumPy's ``add.reduce`` over a leading axis
    runs its inner loop once per row: 210 us for 10,000 x 3, the kernel's loop 10."""
    x = np.ascontiguousarray(vals[0])
    code = _CODES.get(x.dtype)
    fn = _sums_host() if code is not None and x.size else None
    if fn is not None:
        mode, length = _host_plan(x.shape, attrs.axes)
        if mode >= 0:
            out = np.empty(n.shape, x.dtype)
            if mode == 0:  # rows summed pairwise
                fn(0, code, out.size, length, address(x), address(out))
                return out
            # rows added in order: the identity 0.0 after them, as NumPy's result starts
            fn(1, code, length, out.size, address(x), address(out))
            out += 0.0
            return out
    return OPS["reduce"].host(n, vals)


@functools.lru_cache(maxsize=1024)
def _host_plan(shape: tuple, axes: tuple) -> tuple[int, int]:
    """How ``host`` sums over ``axes`` of ``shape`` (``sum_plan``): (0, the rows' length) for
    rows summed pairwise, (1, how many rows) for rows added one after the other over leading
    axes, (-1, 0) for neither (a structure's sums repeat: planned once per shape)."""
    m, r = sum_plan(shape, axes)
    if m and r == 1:
        return 0, m
    kept = [i for i, s in enumerate(shape) if s != 1 and i not in axes]
    if not m and all(i > j for i in kept for j in axes if shape[j] != 1):
        return 1, r
    return -1, 0


def host_also(n: Any) -> bool:
    """Whether the host rule computes a sum the kernels do not take (``rule``): a float32 or
    float64 one in NumPy's order on a CPU device over trailing axes, rows of 8 values or
    more (10,000 rows of 16: 248 us with NumPy's ``add.reduce``, 80 with the kernel's loop;
    shorter rows: the reduce's own rule adds columns as vectors, 27 us for 10,000 of 3)."""
    d = n.device
    if n.attrs.kind != "sum" or n.dtype.name not in ("float32", "float64") or \
            type(d) is not Device or d.platform != "cpu" or not numpy_order(n):
        return False
    m, r = sum_plan(n.inputs[0].shape, n.attrs.axes)
    return m >= 8 and r == 1


registry.register(registry.Kernel(
    kind="pairwise", title="pairwise-sum kernels", source="native/pairwise_ffi.c",
    targets=(TARGET, COLUMN_TARGET), op=PAIRWISE_SUM, replaces="reduce", rule=rule,
    available=available, present=present, error=error, host=host, host_also=host_also))
