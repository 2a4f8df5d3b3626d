"""Axis argument helpers shared by namespace functions.

An axis out of bounds raises NumPy's ``AxisError`` (``numpy.exceptions.AxisError``), which is
both a ValueError and an IndexError, with NumPy's wording ("axis 3 is out of bounds for array
of dimension 2"): code written against NumPy, scikit-learn's and SciPy's among it, catches
either and matches that text. A non-integer axis raises TypeError.
"""

from __future__ import annotations

import operator
from typing import Any

from numpy.exceptions import AxisError

__all__ = ["AxisError", "axis", "axes"]


def axis(a: Any, ndim: int, fname: str) -> int:
    try:
        i = operator.index(a)
    except TypeError:
        raise TypeError(f"{fname}(): axis must be an int, got {type(a).__name__}") from None
    if not -ndim <= i < ndim:
        raise AxisError(i, ndim, f"{fname}()")
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
