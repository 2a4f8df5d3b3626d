"""Set functions: unique_all, unique_counts, unique_inverse, unique_values, isin (2025.12).

The ``unique_*`` functions have data-dependent shapes. Each records, lazily, a stable sort of
the flattened input (with the original positions when indices are asked for), the flags
"differs from its predecessor" (value equality: every NaN is its own group, ``-0.0`` and
``+0.0`` are one group) and their running count; then it materializes exactly one int64
scalar, the number of unique values ``k`` (the sort and the flags are computed in the same
executable and stay on the device). Everything else is recorded with the static size ``k``:
a scatter finds each group's first sorted position, gathers read the values and first
indices, differences of those positions give the counts and a scatter through the sort
permutation gives ``inverse_indices``. The first executable is shared by every input of one
shape and dtype; each distinct ``k`` compiles its own second one.

Values come out sorted, NaNs last. For a group holding both ``-0.0`` and ``+0.0``,
``unique_all``/``unique_inverse`` return the zero that occurs first and ``unique_values``/
``unique_counts`` return ``-0.0`` (the standard leaves the choice to the implementation).

``isin`` sorts ``x2`` and binary-searches it (no materialization); elements compare by value
equality after promotion to a common dtype (NumPy's rules where the standard has none), so
NaN is never found.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..core import dtypes as _dtypes
from ..core.graph import record
from ..core.ops.sorting import Scatter1d, SearchSorted, Take
from ..core.ops.structural import OPS, Convert
from .array import Array, as_array, operand_nodes, wrap
from .creation import full, zeros
from .elementwise import apply
from .manipulation import concat, reshape
from .materialize import host_values
from .searching import compact, empty_int
from .sorting import sort, sort_with_indices
from .statistical import cumulative_sum
from .utility import take_in_bounds

__all__ = ["unique_all", "unique_counts", "unique_inverse", "unique_values", "isin"]


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


class _Groups:
    """The sorted flat input and its groups; ``k`` is the materialized number of groups."""

    __slots__ = ("x", "n", "sv", "perm", "gid", "first", "k")

    def __init__(self, x: Any, fname: str, with_perm: bool) -> None:
        x = as_array(x, fname)
        self.x = x
        n = self.n = x.size
        self.perm: Array | None = None
        if n == 0:
            self.k = 0
            return
        flat = reshape(x, (n,))
        if n == 1:  # one group: nothing to materialize
            self.sv, self.perm = flat, empty_int((1,), x.device)
            self.gid = self.first = self.perm
            self.k = 1
            return
        if with_perm:
            self.sv, self.perm = sort_with_indices(flat)
        else:
            self.sv = sort(flat)
        first_flag = full((1,), True, dtype=_dtypes.bool, device=x.device)
        new = concat([first_flag, apply("not_equal", self.sv[1:], self.sv[:-1])])
        self.gid = cumulative_sum(new, dtype=_dtypes.int64) - 1
        del flat, first_flag  # not outputs of the executable that computes k
        keep = (self.perm,) if self.perm is not None else ()
        (k,) = host_values(fname, self.gid[n - 1], keep=keep)
        self.k = int(k) + 1
        self.first = compact(new, self.gid, self.k)

    def values(self) -> Array:
        if self.k == 0:
            return zeros((0,), dtype=self.x.dtype, device=self.x.device)
        return take_in_bounds(self.sv, self.first, 0)

    def indices(self) -> Array:
        if self.k == 0:
            return empty_int((0,), self.x.device)
        assert self.perm is not None
        return take_in_bounds(self.perm, self.first, 0)

    def counts(self) -> Array:
        if self.k == 0:
            return empty_int((0,), self.x.device)
        end = full((1,), self.n, dtype=_dtypes.int64, device=self.x.device)
        bounds = concat([self.first, end])
        return bounds[1:] - bounds[:-1]

    def inverse(self) -> Array:
        if self.k == 0:
            return empty_int(self.x.shape, self.x.device)
        assert self.perm is not None
        inv = wrap(record(OPS["scatter1d"], (self.perm._node, self.gid._node),
                          Scatter1d(self.n)))
        return reshape(inv, self.x.shape)


def unique_all(x: Array, /) -> UniqueAllResult:
    """Unique values, first indices, inverse indices and counts (sorted; see the module)."""
    g = _Groups(x, "unique_all", True)
    return UniqueAllResult(g.values(), g.indices(), g.inverse(), g.counts())


def unique_counts(x: Array, /) -> UniqueCountsResult:
    """Unique values (sorted) and how often each occurs."""
    g = _Groups(x, "unique_counts", False)
    return UniqueCountsResult(g.values(), g.counts())


def unique_inverse(x: Array, /) -> UniqueInverseResult:
    """Unique values (sorted) and the indices into them that rebuild ``x`` (shaped like x)."""
    g = _Groups(x, "unique_inverse", True)
    return UniqueInverseResult(g.values(), g.inverse())


def unique_values(x: Array, /) -> Array:
    """Unique values of the flattened ``x``, sorted (every NaN kept; see the module)."""
    return _Groups(x, "unique_values", False).values()


def isin(x1: Array | int, x2: Array | int, /, *, invert: bool = False) -> Array:
    """Whether each element of ``x1`` equals some element of ``x2`` (bool, shaped like x1)."""
    if type(x1) is not Array and isinstance(x1, np.ndarray):
        x1 = as_array(x1, "isin")
    if type(x2) is not Array and isinstance(x2, np.ndarray):
        x2 = as_array(x2, "isin")
    if not isinstance(x1, Array) and not isinstance(x2, Array):
        raise TypeError("isin() needs at least one array argument")
    a, b = operand_nodes("isin", x1, x2)
    d = _dtypes.promote(a.dtype, b.dtype)
    if a.dtype is not d:
        a = record(OPS["convert"], (a,), Convert(d))
    if b.dtype is not d:
        b = record(OPS["convert"], (b,), Convert(d))
    xa, xb = wrap(a), wrap(b)
    m = xb.size
    if m == 0:
        return full(xa.shape, bool(invert), dtype=_dtypes.bool, device=xa.device)
    if m == 1:
        found = apply("equal", xa, reshape(xb, ()))
    else:
        s = sort(reshape(xb, (m,)))
        pos = wrap(record(OPS["searchsorted"], (s._node, xa._node), SearchSorted("left")))
        pos = apply("minimum", pos, m - 1)
        hit = wrap(record(OPS["take_axis"], (s._node, pos._node), Take(0)))
        found = apply("equal", hit, xa)
    return apply("logical_not", found) if invert else found
