"""Sorting functions: sort, argsort (one ``stablehlo.sort`` each).

Order: NumPy's ascending order with NaN after every number and ``-0.0 == +0.0`` (so a stable
sort keeps signed zeros in input order). ``descending=True`` is the exact reverse *by value*
and still keeps equal elements in input order when ``stable`` (NaNs then come first, as in
array-api-strict). Complex arrays, which the standard leaves unordered, sort like NumPy: by
class first (``R + Rj``, ``R + nanj``, ``nan + Rj``, ``nan + nanj``), then lexicographically by
(real, imag), each part NaN-last. ``stable=False`` lets XLA use an
unstable sort.

Speed: XLA's CPU sort is several times faster for one operand with a plain comparator, so
``sort`` of a real array sorts order-preserving integer keys (floats by their bits, NaNs made
the canonical NaN), and ``argsort`` of a real dtype of at most 32 bits sorts one uint64 per
element, ``(rank << 32) | index`` (stable by construction). Consequence for ``sort`` only:
``-0.0`` comes out before ``+0.0`` (the standard leaves their order unspecified); ``argsort``
treats them as equal, as NumPy does. Other dtypes use a multi-operand sort with a NaN-aware
comparator.
"""

from __future__ import annotations

from typing import Any

from ..core import axes as _axes
from ..core.graph import record
from ..core.ops import sorting as _ops_sort  # noqa: F401  (sorting registers the ops)
from ..core.ops.sorting import SortKeyed, SortMulti
from ..core.ops.structural import OPS, record_multi
from .array import Array, as_array, wrap
from .creation import iota
from .utility import take_in_bounds

__all__ = ["sort", "argsort"]


_arr = as_array  # an array argument; NumPy arrays are converted (see _array.as_array)


def sort_arrays(keys: list[Array], payloads: list[Array], axis: int, descending: bool = False,
                stable: bool = True) -> list[Array]:
    """Sort ``keys`` (lexicographically) and ``payloads`` along ``axis``; all of one shape."""
    ins = keys + payloads
    nodes = record_multi(OPS["sort_multi"], tuple(a._node for a in ins),
                         SortMulti(axis, bool(descending), bool(stable), len(keys)))
    return [wrap(n) for n in nodes]


def _prepare(x: Any, axis: Any, fname: str) -> tuple[Array, int]:
    x = _arr(x, fname)
    return x, _axes.axis(axis, x.ndim, fname)


def sort(x: Array, /, *, axis: int = -1, descending: bool = False,
         stable: bool = True) -> Array:
    """A sorted copy of ``x`` along ``axis`` (order: see the module docstring)."""
    x, a = _prepare(x, axis, "sort")
    if x.shape[a] <= 1 or x.size == 0:
        return Array(x._node)
    if x.dtype.kind in "biuf":
        return wrap(record(OPS["sort_keyed"], (x._node,), SortKeyed(a, bool(descending), "values")))
    return sort_arrays([x], [], a, descending, stable)[0]


def argsort(x: Array, /, *, axis: int = -1, descending: bool = False,
            stable: bool = True) -> Array:
    """int64 indices that sort ``x`` along ``axis`` (order: see the module docstring)."""
    x, a = _prepare(x, axis, "argsort")
    if x.shape[a] <= 1 or x.size == 0:
        return iota(x.shape, a, x.device)
    if x.dtype.kind in "biuf" and x.dtype.bits <= 32 and x.shape[a] < 2 ** 32:
        return wrap(record(OPS["sort_keyed"], (x._node,),
                           SortKeyed(a, bool(descending), "argsort32")))
    return sort_arrays([x], [iota(x.shape, a, x.device)], a, descending, stable)[1]


def sort_with_indices(flat: Array) -> tuple[Array, Array]:
    """(ascending stable sort of the 1-D ``flat``, the int64 permutation that gives it)."""
    if flat.dtype.kind in "biuf" and flat.dtype.bits <= 32:
        perm = argsort(flat)
        return take_in_bounds(flat, perm, 0), perm
    sv, perm = sort_arrays([flat], [iota(flat.shape, 0, flat.device)], 0)
    return sv, perm
