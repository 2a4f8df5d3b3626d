"""Elementwise functions of the namespace, generated from the op table
(``core/ops/elementwise.py``).

Each function normalizes its operands (Python scalars, NumPy arrays) and records one node; the
op's ``infer`` owns the rules (dtype category and promotion, broadcasting) and raises. Python
scalars are weak: ``x + 1`` keeps ``x``'s dtype and passes 1 as a runtime parameter, so
changing the scalar never recompiles.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core import backend as _backend
from ..core.graph import SCALAR, Node, Placeholder, TracedScalar, record
from ..core.ops.elementwise import ELEMENTWISE, NEGATIVE_POWER, POW_CHECK
from ..core.ops.structural import OPS
from .array import Array, as_array, as_node, operand_nodes, wrap
from .dtype_functions import astype

__all__ = sorted(ELEMENTWISE) + ["clip"]


def apply(name: str, *xs: Any) -> Array:
    """Record elementwise op ``name`` on arrays and/or Python scalars."""
    return wrap(record(OPS[name], tuple(operand_nodes(name, *xs))))


_Function = Callable[..., Array]  # an elementwise function of the namespace


# unary functions that are the identity on some dtype kinds: a new handle, nothing recorded
_IDENTITY = {"positive": "iufc", "conj": "iuf", "real": "iuf", "ceil": "iu", "floor": "iu",
             "trunc": "iu", "round": "iu", "abs": "u"}


def _make(name: str, arity: int) -> Any:
    if arity == 1:
        same_on = _IDENTITY.get(name, "")
        op1 = OPS[name]

        def f1(x: Array, /) -> Array:
            if type(x) is not Array:
                x = as_array(x, name)
            n = x._node
            if n.dtype.kind in same_on:
                return Array(n)
            return wrap(record(op1, (n,)))
        f: Any = f1
    else:
        op = OPS[name]

        def f2(x1: Any, x2: Any, /) -> Array:
            if type(x1) is Array:  # fast path: array op array / array op Python int or float
                n1 = x1._node
                t2 = type(x2)
                if t2 is Array:
                    n2 = x2._node
                elif t2 is float or t2 is int:
                    n2 = as_node(x2, n1, name)
                else:
                    return apply(name, x1, x2)
                return wrap(record(op, (n1, n2)))
            return apply(name, x1, x2)

        def dunder(slow: Any) -> Any:
            """``Array.__<op>__``: f2's fast path inlined (one call less on the hottest
            path of the library), ``slow(self, other)`` for any other operand type."""
            def forward(self: Array, other: Any) -> Any:
                t2 = type(other)
                if t2 is Array:
                    n2 = other._node
                elif t2 is float or t2 is int:
                    n2 = as_node(other, self._node, name)
                else:
                    return slow(self, other)
                return wrap(record(op, (self._node, n2)))
            return forward
        def rdunder(slow: Any) -> Any:
            """``Array.__r<op>__`` (``0.5 * x``): the Python int/float on the left, inlined
            like ``dunder``; ``slow(self, other)`` otherwise."""
            def reverse(self: Array, other: Any) -> Any:
                t1 = type(other)
                if t1 is float or t1 is int:
                    n2 = self._node
                    return wrap(record(op, (as_node(other, n2, name), n2)))
                return slow(self, other)
            return reverse
        f2.dunder = dunder  # type: ignore[attr-defined]
        f2.rdunder = rdunder  # type: ignore[attr-defined]
        f = f2
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Elementwise ``{name}`` as the array API standard specifies it "
                 f"(dtype category: {ELEMENTWISE[name][1]}).")
    return f


for _name, (_arity, *_rest) in ELEMENTWISE.items():
    globals()[_name] = _make(_name, _arity)


# NumPy computes a float array to these Python-scalar powers as these functions (its power's
# fast paths): x ** 2 is x * x, x ** 0.5 is sqrt(x), x ** -1 is 1 / x (complex powers take
# other paths in NumPy). XLA's power with the exponent a run-time parameter is pow's general
# algorithm, off by an ulp from x * x in 0.1% of values and 10-20x slower.
_general_pow = globals()["pow"]


def _half_power(x: Array) -> Array:
    """``x ** 0.5``: NumPy's sqrt, with the standard's special cases of ``pow`` where sqrt
    differs: (-0) ** 0.5 is +0 and (-inf) ** 0.5 is +inf (sqrt gives -0 and NaN)."""
    r = select(apply("equal", x, 0.0), 0.0, apply("sqrt", x))
    return select(apply("equal", x, float("-inf")), float("inf"), r)


_POWERS = {2: globals()["square"], 0.5: _half_power, -1: globals()["reciprocal"]}


_POW = OPS["pow"]


def pow(x1: Any, x2: Any, /) -> Array:
    t2 = type(x2)
    if type(x1) is Array and (t2 is float or t2 is int):
        k = x1._node.dtype.kind
        if k == "f":
            fast = _POWERS.get(x2)
            if fast is not None:
                return fast(x1)  # type: ignore[no-any-return]
        elif t2 is int and x2 < 0 and k in "biu":  # (an unsigned array: OverflowError first)
            n = record(_POW, (x1._node, as_node(x2, x1._node, "pow")))
            if math.prod(n.shape):
                raise ValueError(NEGATIVE_POWER)
            return wrap(n)
        return _general_pow(x1, x2)
    if type(x1) is Array and t2 is Array:
        n1, n2 = x1._node, x2._node
    else:
        n1, n2 = operand_nodes("pow", x1, x2)
    n = record(_POW, (n1, n2))
    if n2.dtype.kind == "i" and n1.dtype.kind in "biu" and math.prod(n.shape):
        c = _nonnegative(n2)  # an integer power: NumPy raises for a negative exponent
        if c is not n2:
            n = record(_POW, (n1, c))
    return wrap(n)


def _nonnegative(node: Node) -> Node:
    """The signed integer exponent ``node`` of an integer power, checked as NumPy does
    (ValueError for a negative one): at once when its values are known (a Python scalar, a
    computed array), else by a ``pow_check`` computed in the executable of the power (raising
    when the graph runs, naming the line that recorded it)."""
    if node.op is SCALAR:
        v = node.value
        if type(v) is not TracedScalar:
            if v < 0:
                raise ValueError(NEGATIVE_POWER)
            return node
    else:
        b = node.buffer
        if b is not None and type(b) is not Placeholder and \
                getattr(node.device, "device_list", None) is None:
            if _backend.to_numpy(b).min() < 0:
                raise ValueError(NEGATIVE_POWER)
            return node
    return record(OPS["checked"], (node, record(POW_CHECK, (node,))))


pow.__doc__ = _general_pow.__doc__


def select(condition: Array, x1: Any, x2: Any) -> Array:
    """``where(condition, x1, x2)``: elements of ``x1`` where ``condition`` holds, else of
    ``x2``, broadcast together (``searching.where`` adds the one-argument form)."""
    condition = as_array(condition, "where")
    a, b = operand_nodes("where", x1, x2) if (isinstance(x1, Array) or isinstance(x2, Array)) \
        else operand_nodes("where", condition, x1)[1:] + operand_nodes("where", condition, x2)[1:]
    return wrap(record(OPS["select"], (condition._node, a, b)))


def clip(x: Array, /, min: Any = None, max: Any = None) -> Array:
    """Clamp ``x`` to [min, max]; bounds may be scalars or arrays, broadcast with ``x``: the
    result has their broadcast shape (as NumPy's and array_api_strict's) and ``x``'s dtype."""
    x = as_array(x, "clip")
    if x.dtype.kind not in "iuf":
        raise TypeError(f"clip() needs a real numeric array, got {x.dtype.name}")
    out = x
    for bound, op in ((min, "maximum"), (max, "minimum")):
        if bound is None:
            continue
        if isinstance(bound, Array) and bound.dtype.kind != x.dtype.kind and not (
                x.dtype.kind in "iu" and bound.dtype.kind in "iu"):
            raise TypeError(f"clip(): bound dtype {bound.dtype.name} differs in kind from "
                            f"{x.dtype.name}")
        out = apply(op, out, bound)
    if out.dtype is not x.dtype:
        out = astype(out, x.dtype)
    return out


if TYPE_CHECKING:  # the functions made by _make above, declared for type checkers
    abs: _Function
    acos: _Function
    acosh: _Function
    add: _Function
    asin: _Function
    asinh: _Function
    atan: _Function
    atan2: _Function
    atanh: _Function
    bitwise_and: _Function
    bitwise_invert: _Function
    bitwise_left_shift: _Function
    bitwise_or: _Function
    bitwise_right_shift: _Function
    bitwise_xor: _Function
    ceil: _Function
    conj: _Function
    copysign: _Function
    cos: _Function
    cosh: _Function
    divide: _Function
    equal: _Function
    exp: _Function
    expm1: _Function
    floor: _Function
    floor_divide: _Function
    greater: _Function
    greater_equal: _Function
    hypot: _Function
    imag: _Function
    isfinite: _Function
    isinf: _Function
    isnan: _Function
    less: _Function
    less_equal: _Function
    log: _Function
    log10: _Function
    log1p: _Function
    log2: _Function
    logaddexp: _Function
    logical_and: _Function
    logical_not: _Function
    logical_or: _Function
    logical_xor: _Function
    maximum: _Function
    minimum: _Function
    multiply: _Function
    negative: _Function
    nextafter: _Function
    not_equal: _Function
    positive: _Function
    real: _Function
    reciprocal: _Function
    remainder: _Function
    round: _Function
    sign: _Function
    signbit: _Function
    sin: _Function
    sinh: _Function
    sqrt: _Function
    square: _Function
    subtract: _Function
    tan: _Function
    tanh: _Function
    trunc: _Function
