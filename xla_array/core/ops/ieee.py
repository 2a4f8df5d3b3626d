"""Lowerings that round as NumPy does where XLA:CPU would not (``fast_math`` off, the default).

XLA:CPU rewrites some float arithmetic so that it no longer rounds as NumPy's step-by-step
evaluation does, and no compile option turns these rewrites off at an acceptable cost
(measured on jaxlib 0.10.2 and 0.12; docs/dtypes.md gives the figures):

- Division by a broadcast value or a constant becomes a multiply by the reciprocal (the
  algebraic simplifier's ``HandleDivide`` on CPU, not gated by fast math): ``s / 34.0`` is off
  by one ulp. ``divide`` hides the divisor behind ``opaque`` (a select equal to it wherever the
  dividend is not NaN), which the simplifier cannot see through; the result is bit-identical.
- A float multiply feeding an add or subtract is contracted into a fused multiply-add (XLA's
  CPU compiler sets LLVM's ``AllowFPOpFusion = Fast``, hard-coded): ``a * b + c`` rounds once.
  The add gets a second use of the product (``opaque`` again); LLVM's DAG combiner contracts
  only a product with one use.
- Transcendental functions less accurate than NumPy's (``log10``, ``tanh``, ...) get their own
  kernels, built with these: ``libm.py``.

``XLA_ARRAY_FAST_MATH=1`` (or ``xp.flags.using(fast_math=True)``) keeps XLA's faster forms.
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes as dt
from .. import flags as _flags
from ..dtypes import DType
from ..lower import Emitter, tensor_type
from .structural import bcast, compare, select

__all__ = ["faithful", "opaque", "hidden", "divide", "unfoldable", "produced_by", "unfused",
           "carries_product", "PRODUCTS", "UNFOLDED"]


def faithful() -> bool:
    """Whether lowerings written now must round as NumPy does (the ``fast_math`` setting)."""
    return not _flags._values["fast_math"]


def opaque(e: Emitter, v: str, like: str, s: tuple, d: DType) -> str:
    """``v``, in a form XLA's algebraic simplifier cannot see through: ``select(like != like,
    like, v)``, equal to ``v`` wherever ``like`` (an operand of the same op) is not NaN, and
    the op's result is NaN anyway where ``like`` is."""
    return select(e, compare(e, "NE", like, like, s, d), like, v, s, d)


def hidden(e: Emitter, v: str, other: str, s: tuple, d: DType) -> str:
    """``v`` as ``select(iota == -1, other, v)``: equal to it, but no longer a broadcast or a
    constant for XLA's algebraic simplifier. Where ``s`` has one element, every iota is a
    constant 0 that the simplifier folds (``1.0 - a[i] / b[i]`` of shape (1,) became a multiply
    by the reciprocal): there ``opaque(v, other)``, equal to ``v`` wherever ``other`` is not
    NaN (a NaN ``other`` gives NaN results anyway; one element: recomputing it costs nothing)."""
    if math.prod(s) == 1:
        return opaque(e, v, other, s, d)
    it = tensor_type(s, dt.int32)
    # along the longest axis: an iota along an axis of length 1 is a constant 0, which the
    # simplifier folds (x / 12 for x of shape (1, 50) became x * (1 / 12))
    axis = max(range(len(s)), key=lambda a: s[a]) if s else 0
    i = e.op("stablehlo.iota", [], it, f"iota_dimension = {axis} : i64")
    never = compare(e, "EQ", i, bcast(e, e.const(-1, dt.int32), (), s, dt.int32), s, dt.int32)
    return select(e, never, other, v, s, d)


def divide(e: Emitter, x: str, y: str, s: tuple, d: DType) -> str:
    """``x / y`` correctly rounded: the divisor is ``hidden``, neither a broadcast nor a
    constant any more, so the reciprocal rewrite does not apply. (An ``opaque`` of the dividend,
    which may be an expensive expression such as ``exp(x)``, made XLA compute it more often.)
    The ``divide`` op also passes a broadcast divisor through ``unfoldable`` before broadcasting
    it (``elementwise._lower``): else XLA puts the broadcast into the producing reduction's
    YNNPACK fusion and writes the full matrix (softmax several times slower: docs/performance.md,
    "Rounding like NumPy")."""
    if d.kind == "f" and faithful():
        y = hidden(e, y, x, s, d)
    return e.op("stablehlo.divide", [x, y], tensor_type(s, d))


# (op, the producers of its operand it must not be folded with): XLA's algebraic simplifier
# rewrites log(pow(a, b)) as b * log(a), log(sqrt(a)) as 0.5 * log(a), log(exp(x)) as x and
# pow(exp(a), b) as exp(a * b), which are wrong where the inner result overflows, underflows
# or is NaN (log(exp(1000.0)) gave 1000, log((-2.0) ** 0.5) a number, exp(nan) ** 0 NaN).
# acosh and asinh are expanded through log. Not a matter of rounding: done whatever fast_math.
UNFOLDED = {"log": ("pow", "sqrt", "exp"), "acosh": ("pow", "sqrt", "exp"),
            "asinh": ("pow", "sqrt", "exp"), "pow": ("exp",)}
_LAYOUT_OPS = ("reshape", "broadcast", "transpose", "convert")
# float products: an add or subtract taking one (directly or through ops that move its values
# without computing, which fuse into the same loop) is contracted with it into an FMA
PRODUCTS = ("multiply", "square")
# op -> the inputs whose values it moves into its result unchanged
_MOVES_VALUES = {"reshape": (0,), "broadcast": (0,), "transpose": (0,), "convert": (0,),
                 "slice": (0,), "reverse": (0,), "dynamic_slice": (0,), "pad": (0,),
                 "concat": None, "select": (1, 2), "gather": (0,), "take_axis": (0,),
                 "take_along": (0,), "dynamic_update_slice": (0, 1), "update_slices": (0, 1),
                 "positive": (0,),
                 "negative": (0,)}  # (LLVM folds a negated product into an FMA too)


def unfoldable(e: Emitter, v: str, s: tuple, d: DType) -> str:
    """``v`` as ``select(v != v, NaN, v)``: the same value (a NaN stays a NaN), which the
    simplifier cannot fold with the op producing ``v`` (an iota predicate is folded away for
    one-element shapes)."""
    nan = bcast(e, e.const(float("nan"), d), (), s, d)
    return select(e, compare(e, "NE", v, v, s, d), nan, v, s, d)


def produced_by(node: Any, names: tuple) -> bool:
    """Whether ``node`` is the result of one of the ops ``names``, through layout ops."""
    while node.op.name in _LAYOUT_OPS and node.inputs:
        node = node.inputs[0]
    return node.op.name in names


def carries_product(node: Any, depth: int = 16) -> bool:
    """Whether ``node``'s values are (some of) a float product's, moved by ops that compute
    nothing (``_MOVES_VALUES``: reshapes, slices, concatenations, selects, gathers)."""
    name = node.op.name
    if name in PRODUCTS:
        return True
    which = _MOVES_VALUES.get(name, ())
    if depth <= 0 or not node.inputs or which == ():
        return False
    ins = node.inputs if which is None else [node.inputs[i] for i in which]
    return any(carries_product(x, depth - 1) for x in ins)


def unfused(e: Emitter, r: str, inputs: tuple, args: list, s: tuple, d: DType) -> str:
    """The result ``r`` of a float add/subtract whose operands ``args`` (of the nodes
    ``inputs``) may carry products: each such operand gets a second use, so no product is
    fused into the addition (a product moved by a reshape, slice or concatenation reaches the
    addition in the same loop: contracted too, 2026-11-27)."""
    if d.kind != "f" or not faithful():
        return r
    for x, v in zip(inputs, args):
        if carries_product(x):
            r = opaque(e, r, v, s, d)
    return r
