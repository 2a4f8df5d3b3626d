"""Axis argument helpers shared by namespace functions (IndexError/TypeError like NumPy)."""

from __future__ import annotations

import operator
from typing import Any


def axis(a: Any, ndim: int, fname: str) -> int:
    try:
        i = operator.index(a)
    except TypeError:
        raise TypeError(f"{fname}(): axis must be an int, got {type(a).__name__}") from None
    if not -ndim <= i < ndim:
        raise IndexError(f"{fname}(): axis {i} is out of bounds for an array of "
                         f"{ndim} dimensions")
    return i % ndim


def axes(a: Any, ndim: int, fname: str) -> tuple[int, ...]:
    """None -> all axes; int or tuple -> sorted unique normalized axes (duplicates raise)."""
    if a is None:
        return tuple(range(ndim))
    if not isinstance(a, (tuple, list)):
        a = (a,)
    out = [axis(x, ndim, fname) for x in a]
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}(): repeated axis in {tuple(a)}")
    return tuple(sorted(out))
