"""What a user looks at: metrics, the StableHLO and optimized HLO of pending arrays, costs."""

from __future__ import annotations

from typing import Any

from . import _backend, _metrics
from ._array import Array
from ._cache import executables
from ._executor import compile_graph, plan

__all__ = ["metrics", "reset_metrics", "mlir", "hlo", "cost", "memory", "explain",
           "explain_key"]


def metrics() -> dict[str, Any]:
    """Counters and timers: compiles, compile_seconds, cache_hits, cache_misses, executions,
    materializations (and by cause / by user line), auto_flushes, bytes moved."""
    return _metrics.snapshot()


def reset_metrics() -> None:
    _metrics.reset()


def _pending(arrays: tuple) -> list:
    nodes = []
    for a in arrays:
        if not isinstance(a, Array):
            raise TypeError(f"expected arrays, got {type(a).__name__}")
        if a._node.buffer is None:
            nodes.append(a._node)
    return nodes


def _compiled(arrays: tuple) -> Any:
    nodes = _pending(arrays)
    if not nodes:
        raise ValueError("these arrays are already computed: nothing pending to inspect")
    order, bufs, scalars, outs, key = plan(nodes)
    c = executables.get(key)
    if c is None:
        c = compile_graph(key, order, bufs, scalars, outs, nodes[0].device)
        executables.put(key, c)
    return c


def mlir(*arrays: Array) -> str:
    """The StableHLO text that computing ``arrays`` would run (with user-line locations)."""
    from ._lower import lower
    nodes = _pending(arrays)
    if not nodes:
        return ""
    order, bufs, scalars, outs, _key = plan(nodes)
    return lower(order, bufs, scalars, outs)


def hlo(*arrays: Array) -> str:
    """The optimized HLO (after XLA's passes) for computing ``arrays``."""
    return str(_compiled(arrays).exe.hlo_text())


def cost(*arrays: Array) -> dict[str, float]:
    """XLA's cost analysis: flops, transcendentals, bytes accessed."""
    return dict(_compiled(arrays).exe.cost())


def memory(*arrays: Array) -> dict[str, int]:
    """Compiled memory statistics: argument, output, temp bytes."""
    return dict(_compiled(arrays).exe.memory())


def explain_key(key: Any) -> str:
    """Which part of ``key`` no cached executable shares (for recompile diagnostics)."""
    keys = [k for k in executables.keys() if k != key]
    if not keys:
        return "first compile (the cache was empty)"
    device, struct = key
    best = None
    for other in keys:
        if other[0] != device:
            continue
        o = other[1]
        if o[0] != struct[0]:
            why = f"input shapes/dtypes {struct[0]} (cached: {o[0]})"
        elif o[1] != struct[1]:
            why = f"scalar parameter dtypes {struct[1]} (cached: {o[1]})"
        elif len(o) != len(struct):
            why = f"op count {len(struct) - 3} (cached: {len(o) - 3})"
        else:
            diffs = [i for i, (p, q) in enumerate(zip(struct[2:], o[2:])) if p != q]
            why = (f"op #{diffs[0]}: {struct[2 + diffs[0]]} (cached: {o[2 + diffs[0]]})"
                   if diffs else "outputs")
        if best is None or len(why) < len(best):
            best = why
    return best or f"device {device} has no cached executable"


def explain() -> str:
    """Why the last compile happened."""
    key = executables.last_miss
    return "no compile yet" if key is None else explain_key(key)


def jaxlib_version() -> str:
    return _backend.JAXLIB_VERSION
