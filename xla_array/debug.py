"""What a user looks at: metrics, the StableHLO and optimized HLO of pending arrays, costs."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

from . import _backend, _metrics, _telemetry
from ._array import Array
from ._cache import executables
from ._executor import compile_graph, packs_scalars, plan
from ._graph import toposort
from ._ops_elementwise import ELEMENTWISE

__all__ = ["metrics", "reset_metrics", "mlir", "hlo", "cost", "memory", "explain",
           "explain_key", "on_compile", "on_materialize", "graph", "dot", "draw"]


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
        n = a._node  # (read once: another thread may rebind the handle)
        if n.buffer is None:
            nodes.append(n)
    return nodes


def _compiled(arrays: tuple) -> Any:
    nodes = _pending(arrays)
    if not nodes:
        raise ValueError("these arrays are already computed: nothing pending to inspect")
    order, bufs, scalars, outs, key = plan(nodes)
    c = executables.get(key)
    if c is None:
        c = compile_graph(key, order, bufs, scalars, outs, nodes[0].device,
                          pack=packs_scalars(order, scalars, nodes[0].device))
        executables.put(key, c)
    return c


def mlir(*arrays: Any, **kwargs: Any) -> str:
    """The StableHLO text that computing ``arrays`` would run (with user-line locations).

    ``mlir(fn, *example_args)`` gives the text of a function traced as ``xla_array.jit``
    would trace it (like ``jax.xla_computation``)."""
    from ._lower import lower
    if arrays and callable(arrays[0]) and not isinstance(arrays[0], Array):
        from ._jit import Jitted
        fn = arrays[0]
        j = fn if isinstance(fn, Jitted) else Jitted(fn)
        return j.lower(*arrays[1:], **kwargs)
    nodes = _pending(arrays)
    if not nodes:
        return ""
    order, bufs, scalars, outs, _key = plan(nodes)
    return lower(order, bufs, scalars, outs, frozenset(),
                 nodes[0].device._annotations(bufs, scalars, outs),
                 packs_scalars(order, scalars, nodes[0].device))


def hlo(*arrays: Array) -> str:
    """The optimized HLO (after XLA's passes) for computing ``arrays``."""
    return str(_compiled(arrays).exe.hlo_text())


def cost(*arrays: Array) -> dict[str, float]:
    """XLA's cost analysis: flops, transcendentals, bytes accessed."""
    return dict(_compiled(arrays).exe.cost())


def memory(*arrays: Array) -> dict[str, int]:
    """Compiled memory statistics: argument, output, temp bytes."""
    return dict(_compiled(arrays).exe.memory())


def _describe(part: Any) -> str:
    if part[0] == "B":
        return f"an input of shape {part[1]} and dtype {part[2]}"
    if part[0] == "S":
        return f"a scalar parameter of dtype {part[1]}"
    if isinstance(part[0], str) and len(part) == 5:
        return f"op {part[0]} -> {part[3]}{list(part[2])} (attributes {part[1]})"
    return f"outputs {part}"


def explain_key(key: Any) -> str:
    """Which part of ``key`` no cached executable shares (for recompile diagnostics)."""
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
    other = best[1]
    n = next((i for i, (p, q) in enumerate(zip(struct, other)) if p != q),
             min(len(struct), len(other)))
    if n >= len(struct) or n >= len(other):
        return (f"graph size: {len(struct)} items (closest cached graph: {len(other)}), "
                f"same up to item {n}")
    return f"item {n}: {_describe(struct[n])} (closest cached graph has {_describe(other[n])})"


def explain() -> str:
    """Why the last compile happened."""
    key = executables.last_miss
    return "no compile yet" if key is None else explain_key(key)


def jaxlib_version() -> str:
    return _backend.JAXLIB_VERSION


def on_compile(fn: Any) -> Any:
    """Call ``fn(event)`` after every compilation (event: key, ops, lower_seconds,
    compile_seconds, total_seconds, where). Returns a function that unregisters it."""
    return _telemetry.on("compile", fn)


def on_materialize(fn: Any) -> Any:
    """Call ``fn(event)`` at every materialization (event: cause, where, arrays)."""
    return _telemetry.on("materialize", fn)


def _graph_nodes(arrays: tuple) -> tuple[list, list, list, list]:
    nodes = _pending(arrays)
    order, bufs, scalars = toposort(nodes) if nodes else ([], [], [])
    return order, bufs, scalars, nodes


def _label(n: Any) -> str:
    op = n.op.name
    if op == "buffer":
        return f"buffer {n.dtype.name}{list(n.shape)}"
    if op == "scalar":
        return f"scalar {n.dtype.name}"
    extra = ""
    if op in ELEMENTWISE:
        extra = ""
    elif n.attrs:
        extra = " " + ", ".join(str(a) for a in n.attrs if not isinstance(a, tuple) or
                                len(a) < 8)
    return f"{op}{extra} -> {n.dtype.name}{list(n.shape)}"


def graph(*arrays: Array) -> str:
    """A text drawing of the pending graph of ``arrays``: one line per node, inputs by name."""
    order, bufs, scalars, roots = _graph_nodes(arrays)
    names = {}
    lines = []
    for i, n in enumerate(bufs):
        names[id(n)] = f"in{i}"
        lines.append(f"in{i} = {_label(n)}")
    for i, n in enumerate(scalars):
        names[id(n)] = f"s{i}"
        lines.append(f"s{i} = {_label(n)}")
    for i, n in enumerate(order):
        names[id(n)] = f"v{i}"
        where = f"  # {os.path.basename(n.where[0])}:{n.where[1]}" if n.where else ""
        args = ", ".join(names[id(x)] for x in n.inputs)
        lines.append(f"v{i} = {_label(n)}({args}){where}")
    lines.append("outputs: " + ", ".join(names[id(n)] for n in roots))
    return "\n".join(lines)


def dot(*arrays: Array) -> str:
    """The pending graph of ``arrays`` in Graphviz dot syntax."""
    order, bufs, scalars, roots = _graph_nodes(arrays)
    out = ["digraph xla_array {", "  rankdir=TB; node [shape=box, fontname=monospace];"]
    ids = {}
    for i, n in enumerate(bufs + scalars + order):
        ids[id(n)] = f"n{i}"
        style = ", style=filled, fillcolor=lightgrey" if n.op.name in ("buffer", "scalar") else ""
        bold = ", penwidth=2" if any(n is r for r in roots) else ""
        label = _label(n).replace('"', "'")
        out.append(f'  n{i} [label="{label}"{style}{bold}];')
    for n in order:
        for x in n.inputs:
            out.append(f"  {ids[id(x)]} -> {ids[id(n)]};")
    out.append("}")
    return "\n".join(out) + "\n"


def draw(*arrays: Array, path: str) -> str:
    """Write the pending graph to ``path``: ``.dot`` as text, ``.svg``/``.png`` through
    Graphviz's ``dot`` program when it is installed (RuntimeError otherwise)."""
    text = dot(*arrays)
    ext = os.path.splitext(path)[1].lower()
    if ext in (".dot", ".gv", ""):
        with open(path, "w") as f:
            f.write(text)
        return path
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError("drawing to SVG/PNG needs Graphviz's 'dot' program; write a .dot "
                           "file instead")
    subprocess.run([exe, f"-T{ext[1:]}", "-o", path], input=text.encode(), check=True)
    return path
