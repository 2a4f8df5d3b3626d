"""Structural keys in words: why a graph had to be compiled (``XLA_ARRAY_MAX_COMPILES``'s
error, ``xla_array.debug.explain``). A key is ``(device, structure)``, the structure built by
``graph.plan_graph``: one item per input, scalar parameter and
operation in graph order, then the positions of the outputs."""

from __future__ import annotations

from typing import Any

from .cache import executables

__all__ = ["explain_key"]


def _describe(struct: tuple, n: int) -> str:
    """Item ``n`` of the structural key ``struct`` in words (inputs, scalar parameters and
    operations numbered from 0 in the order the graph visits them)."""
    part = struct[n]
    if len(part) == 5:
        index = sum(1 for p in struct[:n] if len(p) == 5)
        attrs = f" ({', '.join(map(str, part[1]))})" if part[1] else ""
        return f"operation {index}, {part[0]}{attrs} -> {part[3]}{list(part[2])}"
    if part[0] in ("B", "S"):
        index = sum(1 for p in struct[:n] if p[0] == part[0])
        if part[0] == "B":
            return f"input {index} of shape {part[1]} and dtype {part[2]}"
        return f"scalar parameter {index} of dtype {part[1]}"
    return "the results written back"  # (the last item: positions of the outputs)


def explain_key(key: Any) -> str:
    """Where the graph of ``key`` first differs from the closest cached one (why it had to be
    compiled): an input's shape or dtype, an operation, or the graph's size."""
    keys = [k for k in executables.keys() if k != key and isinstance(k, tuple) and len(k) == 2]
    if not keys:
        return "first compile (the cache was empty)"
    device, struct = key
    same_dev = [k for k in keys if k[0] == device]
    if not same_dev:
        return f"device {device} has no cached executable"
    best = None
    for _dev, other in same_dev:  # the cached graph sharing the most items in place
        score = sum(p == q for p, q in zip(struct, other)) - abs(len(struct) - len(other))
        if best is None or score > best[0]:
            best = (score, other)
    assert best is not None  # (same_dev is not empty)
    other = best[1]
    n = next((i for i, (p, q) in enumerate(zip(struct, other)) if p != q),
             min(len(struct), len(other)))
    if n >= len(struct) or n >= len(other):
        return (f"graph size: {len(struct)} items (closest cached graph: {len(other)}), "
                f"same up to item {n}")
    here, there = _describe(struct, n), _describe(other, n)
    if here != there:
        return f"{here}, where the closest cached graph has {there}"
    if len(struct[n]) == 5:
        return f"{here}: its operands differ from the closest cached graph's"
    return (f"{here}: the closest cached graph writes back other results (the arrays your "
            f"variables still hold decide which intermediates are results)")
