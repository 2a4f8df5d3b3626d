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

__all__ = ["AxisError", "axis", "axes", "int_tuple"]


def int_tuple(a: Any, fname: str, what: str = "axis") -> tuple:
    """An int or a sequence of ints (tuple, list, ...) as a tuple, as NumPy reads an axis or
    shift argument; TypeError for anything else (never a list taken as one axis)."""
    try:
        return (operator.index(a),)
    except TypeError:
        pass
    if isinstance(a, (str, bytes)) or not hasattr(a, "__iter__"):
        raise TypeError(f"{fname}(): {what} must be an int or a sequence of ints, got "
                        f"{type(a).__name__}")
    out = []
    for v in a:
        try:
            out.append(operator.index(v))
        except TypeError:
            raise TypeError(f"{fname}(): {what} must be an int or a sequence of ints, got an "
                            f"element of type {type(v).__name__}") from None
    return tuple(out)


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
    if type(a) is not tuple:
        a = int_tuple(a, fname)
    out = [axis(x, ndim, fname) for x in a]
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}(): repeated axis in {tuple(a)}")
    return tuple(sorted(out))
