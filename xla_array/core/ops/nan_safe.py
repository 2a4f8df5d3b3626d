"""Which float max/min reductions may skip their NaN pass (``structural``'s ``reduce``
lowering reads the answer from ``Emitter.facts["nan_safe"]``): an analysis of the whole graph,
run by ``lower.lower`` through ``lower.FACTS`` before the nodes are lowered."""

from __future__ import annotations

from typing import Any

from ..lower import FACTS

__all__ = ["nan_safe_reductions"]


# elementwise ops whose result is NaN wherever an operand is NaN, whatever the others are
# (not maximum/minimum, pow (pow(NaN, 0) = 1), comparisons, where, hypot...)
_NAN_IN_NAN_OUT = frozenset({"add", "subtract", "multiply", "divide", "negative", "positive",
                             "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "square",
                             "abs", "sin", "cos", "tan", "tanh", "sinh", "cosh", "reciprocal",
                             "sign", "convert"})


def nan_safe_reductions(order: list, outputs: list) -> set[int]:
    """The float max/min reductions of ``order`` that may skip NaN (one pass over the data,
    no NaN check): those whose every result the graph returns is NaN on a row of the
    reduced input holding a NaN whatever the reduction gives there, and that are not results
    themselves. ``m = max(x, axis=1); e = exp(x - m[:, None]); e / sum(e, axis=1)[:, None]``:
    a NaN in row i of x makes ``sum(e)[i]`` NaN through ``x - m`` itself, so the whole row of
    the softmax is NaN as NumPy's is. Decided from the structure only (the cache key).

    For each candidate ``m = reduce(x)`` over axes ``A``, a node is *poisoned* when a NaN in
    a row of x (the elements of x sharing the non-``A`` indices) makes it NaN, proven without
    looking at ``m``: x itself and NaN-propagating elementwise ops of it (``pos``: NaN where
    x is); a sum or product of a ``pos`` value over exactly ``A`` (``row``: NaN on that row,
    in the reduced or keep-dims shape); reshapes between those two shapes; elementwise ops of
    a ``row`` value (``full`` once broadcast back to x's shape: the whole row NaN)."""
    out_set = {id(o) for o in outputs}
    safe: set[int] = set()
    for m in order:
        if m.op.name != "reduce" or m.attrs.kind not in ("max", "min") or \
                m.dtype.kind != "f" or id(m) in out_set:
            continue
        x = m.inputs[0]
        axes = set(m.attrs.axes)
        xs = x.shape
        keep = tuple(1 if i in axes else d for i, d in enumerate(xs))
        red = m.shape
        kinds: dict[int, str] = {id(x): "pos"}  # id -> pos | row | full
        after: set[int] = {id(m)}  # nodes computed from m
        ok = True
        for n in order:
            ins = n.inputs
            if any(id(i) in after for i in ins):
                after.add(id(n))
            k = _poison(n, ins, kinds, xs, keep, red, m.attrs)
            if k:
                kinds[id(n)] = k
            if id(n) in after and id(n) in out_set and kinds.get(id(n)) not in ("row", "full"):
                ok = False
                break
        if ok:
            safe.add(id(m))
    return safe


def _poison(n: Any, ins: tuple, kinds: dict, xs: tuple, keep: tuple, red: tuple,
            mattrs: Any) -> str | None:
    """How node ``n`` is poisoned by a NaN in a row of x (see ``nan_safe_reductions``)."""
    name, s = n.op.name, n.shape
    if name == "ufunc_loop":  # (kernels/ufunc.py: NumPy's loop of the op it replaced)
        name = n.attrs.name
    if n.dtype.kind not in "fc":
        return None
    got = [kinds.get(id(i)) for i in ins]
    if name in _NAN_IN_NAN_OUT:
        if s == xs:
            if any(g == "full" or (g == "row" and i.shape == keep)
                   for g, i in zip(got, ins)):
                return "full"
            if any(g == "pos" and i.shape == xs for g, i in zip(got, ins)):
                return "pos"
        elif s in (keep, red) and any(g == "row" and i.shape == s for g, i in zip(got, ins)):
            return "row"
        return None
    if name == "reshape" and got[0] == "row" and s in (keep, red):
        return "row"
    if name == "broadcast" and s == xs and got[0] == "row" and ins[0].shape == keep:
        return "full"
    if name in ("reduce", "pairwise_sum") and n.attrs.kind in ("sum", "prod") \
            and got[0] in ("pos", "full") and ins[0].shape == xs \
            and set(n.attrs.axes) == set(mattrs.axes):
        return "row"
    return None


FACTS.append(("nan_safe", nan_safe_reductions))
