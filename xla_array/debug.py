"""What a user looks at: metrics, the StableHLO and optimized HLO of pending arrays, costs.

The inspectors (``graph``, ``dot``, ``draw``, ``mlir``, ``hlo``, ``cost``, ``memory``) look at
the graph that computing their arrays would run. An array that already holds its value (it was
computed, or made from data) has no such graph: given only such arrays, every inspector raises
``ValueError`` saying so, rather than describing an empty graph.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

from .api.array import Array
from .api.jit import Jitted
from .core import backend as _backend
from .core import flags as _flags
from .core import metrics as _metrics
from .core import telemetry as _telemetry
from .core import tiers as _tiers
from .core.cache import executables
from .core.compiling import compile_graph, lowered_text
from .core.compiling import lock as _executor_lock
from .core.executor import plan
from .core.graph import SCALAR, plan_graph
from .core.keys import explain_key
from .core.ops.elementwise import ELEMENTWISE
from .core.scalars import packs_scalars

__all__ = ["metrics", "reset_metrics", "mlir", "hlo", "cost", "memory", "explain", "settle",
           "explain_key", "on_compile", "on_materialize", "graph", "dot", "draw"]

# the whole-program entries of XLA's cost analysis (its other entries, such as
# 'bytes accessed0{}' or 'utilization1{}', are per operand of the entry computation's root)
_COST_KEYS = ("flops", "transcendentals", "bytes accessed")


def metrics() -> dict[str, Any]:
    """Counters and timers since the start or the last ``reset_metrics()`` (a copy).

    Counters: ``compiles`` (XLA compilations), ``cache_hits`` (runs of an executable found in
    memory), ``cache_misses`` (graphs a materialization or an inspection did not find in
    memory: each was then loaded from the on-disk cache or compiled), ``disk_hits``
    (executables loaded from the on-disk cache), ``executions``, ``materializations``,
    ``auto_flushes`` (deep graphs computed on their own, see ``XLA_ARRAY_MAX_PENDING``),
    ``device_transfers`` (operands moved to another placement), ``bytes_to_device``,
    ``bytes_to_host``, ``host_runs`` (graphs met for the first time and computed with NumPy
    instead of compiling, see ``XLA_ARRAY_HOST_FIRST``), ``host_checks`` (runs whose bits
    were compared with the host's, ``XLA_ARRAY_HOST_FIRST=check``), ``fast_compiles``
    (compiles in the fast tier, ``XLA_ARRAY_TIERED``; counted in ``compiles`` too),
    ``background_compiles`` (their optimized recompiles, on a background thread), ``swaps``
    (optimized executables swapped in), ``compiles_behind`` (compiles on the background
    thread of graphs whose host runs took the budget, while the host went on running them,
    ``XLA_ARRAY_COMPILE_BEHIND``; counted in ``compiles`` too), ``structures`` (graph
    structures met for the first time: a loop that repeats its graph adds none after its
    first steps, whether they then run on the host, compile or load from disk). Timers, in seconds:
    ``compile_seconds`` (XLA),
    ``lower_seconds`` (graph to StableHLO), ``execute_seconds`` (dispatching executables: runs
    are asynchronous, so not how long they run; ``block_until_ready`` waits for one),
    ``disk_load_seconds``
    (reading and loading on-disk cache entries), ``host_seconds`` (the host runs),
    ``background_compile_seconds``. And ``materializations_by_cause`` (``{'float': 2, ...}``) and
    ``materializations_by_line`` (``{'float at train.py:12': 2, ...}``: which of your lines
    forced values)."""
    return _metrics.snapshot()


def reset_metrics() -> None:
    """Set every counter and timer of ``metrics()`` back to zero."""
    _metrics.reset()


def _pending(arrays: tuple, inspector: str) -> list:
    """The nodes of ``arrays`` still to be computed; ValueError when there are none."""
    if not arrays:
        raise TypeError(f"xla_array.debug.{inspector}() needs at least one array")
    nodes = []
    for a in arrays:
        if not isinstance(a, Array):
            raise TypeError(f"expected arrays, got {type(a).__name__}")
        n = a._node  # (read once: another thread may rebind the handle)
        if n.buffer is None and n.op is not SCALAR:
            nodes.append(n)
    if not nodes:
        what = "this array holds its value" if len(arrays) == 1 else \
            "these arrays hold their values"
        raise ValueError(f"xla_array.debug.{inspector}: nothing pending to inspect: {what} "
                         f"already (computed, or made from data); inspect an array before "
                         f"it is computed (by float(), print(), np.asarray(), "
                         f"xp.materialize(), ...)")
    return nodes


def _compiled(arrays: tuple, inspector: str) -> Any:
    """The executable computing ``arrays``: from the in-memory cache, else compiled (counted
    as a cache miss, as a materialization's would be) and kept there for the computation."""
    nodes = _pending(arrays, inspector)
    g = plan(nodes)
    c = executables.get(g.key)
    if c is None:
        _metrics.count("cache_misses")
        executables.note_miss(g.key)
        c = compile_graph(g, pack=packs_scalars(g.order, g.scalars, g.device))
        executables.put(g.key, c)
    return c


def mlir(*arrays: Any, **kwargs: Any) -> str:
    """The StableHLO text that computing ``arrays`` would run (with user-line locations).

    ``mlir(fn, *example_args)`` gives the text of a function traced as ``xla_array.jit``
    would trace it (like ``jax.xla_computation``)."""
    if arrays and callable(arrays[0]) and not isinstance(arrays[0], Array):
        fn = arrays[0]
        j = fn if isinstance(fn, Jitted) else Jitted(fn)
        return j.lower(*arrays[1:], **kwargs)
    nodes = _pending(arrays, "mlir")
    g = plan(nodes)
    return lowered_text(g, packs_scalars(g.order, g.scalars, g.device))


def hlo(*arrays: Array) -> str:
    """The optimized HLO (after XLA's passes) for computing ``arrays``, its ``source_file``
    and ``source_line`` metadata naming the lines that recorded them.

    An executable loaded from the on-disk compile cache carries the metadata of the program
    that compiled it first (another script, other lines): for one, the graph is compiled once
    more here, with the disk cache off for that compile and the result not kept (it counts
    in ``metrics()['compiles']``)."""
    c = _compiled(arrays, "hlo")
    if not c.text and not c.compile_seconds:   # (what compiling.py's disk loads leave)
        g = plan(_pending(arrays, "hlo"))
        with _flags.using(cache_dir=""):
            c = compile_graph(g, pack=packs_scalars(g.order, g.scalars, g.device))
    return str(c.exe.hlo_text())


def cost(*arrays: Array) -> dict[str, float]:
    """XLA's cost analysis of computing ``arrays``: ``flops`` (floating-point operations),
    ``transcendentals`` (evaluations of exp, log, sin, ...) and ``bytes accessed`` (bytes
    read and written by all operations: the memory traffic XLA estimates)."""
    raw = _compiled(arrays, "cost").exe.cost()
    return {k: raw[k] for k in _COST_KEYS}


def memory(*arrays: Array) -> dict[str, int]:
    """The compiled executable's memory in bytes: ``argument_bytes``, ``output_bytes``,
    ``temp_bytes`` (scratch), ``alias_bytes`` (outputs written into donated arguments),
    ``generated_code_bytes`` and ``peak_bytes``."""
    return dict(_compiled(arrays, "memory").exe.memory())


def explain() -> str:
    """Why the last compile happened (see ``explain_key``); "no compile yet" before any. Once
    a graph compiled in the fast tier, a line says where tiered compilation stands; once one
    compiled behind the host's runs (``compile_behind``), a line counts those compiles."""
    key = executables.last_miss
    why = "no compile yet" if key is None else explain_key(key)
    m = _metrics.snapshot()
    if m["fast_compiles"]:
        why += "\n" + _tiers.status()
    if m["compiles_behind"]:
        why += (f"\n{m['compiles_behind']} compiles behind the host's runs; "
                f"{_tiers.pending()} background compiles queued or running")
    return why


def settle(timeout: float | None = None) -> bool:
    """Wait until the background compiles are done and their executables in the cache: the
    optimized recompiles of tiered compilation and the compiles behind the host's runs
    (``timeout`` seconds at most; False if some are still running then). Not from a
    ``on_compile``/``on_materialize`` hook: those run while the engine computes (or, for a
    compile behind the host's runs, on the background thread itself)."""
    if _executor_lock_held() or _tiers.on_worker():
        raise RuntimeError("xla_array.debug.settle() called while the engine computes (from "
                           "an on_compile or on_materialize hook): it would wait for itself")
    return _tiers.settle(timeout)


def jaxlib_version() -> str:
    """The version of the jaxlib that compiles and runs the graphs."""
    return _backend.JAXLIB_VERSION


def on_compile(fn: Any) -> Any:
    """Call ``fn(event)`` after every compilation (event: key, ops, lower_seconds,
    compile_seconds, total_seconds, where; and ``behind: True`` for a compile behind the
    host's runs, whose event comes from the background thread). Returns a function that
    unregisters it."""
    return _telemetry.on("compile", fn)


def on_materialize(fn: Any) -> Any:
    """Call ``fn(event)`` at every materialization (event: cause, where, arrays)."""
    return _telemetry.on("materialize", fn)


def _graph_nodes(arrays: tuple, inspector: str) -> tuple[list, list, list, list]:
    """(order, buffer leaves, scalar leaves, roots) of the pending graph of ``arrays``."""
    nodes = _pending(arrays, inspector)
    order, bufs, scalars = plan_graph(nodes, writeback=False)[:3]
    return order, bufs, scalars, nodes


def _label(n: Any) -> str:
    """A node in words: op, attributes (not those of elementwise ops), dtype and shape."""
    op = n.op.name
    if op == "buffer":
        return f"buffer {n.dtype.name}{list(n.shape)}"
    if op == "scalar":
        return f"scalar {n.dtype.name}"
    extra = ""
    if n.attrs and op not in ELEMENTWISE:  # named attributes: ``kind=sum, axes=(1,)``
        a = n.attrs
        names = getattr(a, "_fields", None) or [""] * len(a)
        extra = " " + ", ".join(f"{k}={v}" if k else str(v) for k, v in zip(names, a)
                                if not isinstance(v, tuple) or len(v) < 8)
    return f"{op}{extra} -> {n.dtype.name}{list(n.shape)}"


def graph(*arrays: Array) -> str:
    """A text drawing of the pending graph of ``arrays``: one line per node, inputs by name."""
    order, bufs, scalars, roots = _graph_nodes(arrays, "graph")
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
    return _dot(arrays, "dot")


def _dot(arrays: tuple, inspector: str) -> str:
    """``dot``'s text, errors naming ``inspector``."""
    order, bufs, scalars, roots = _graph_nodes(arrays, inspector)
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
    text = _dot(arrays, "draw")
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


def _executor_lock_held() -> bool:
    return bool(_executor_lock._is_owned())  # type: ignore[attr-defined]
