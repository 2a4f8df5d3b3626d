"""A planned graph: the one object that travels from planning through compiling to running.

``plan(roots)`` walks the pending graph of ``roots`` once (``graph.plan_graph``) and returns a
``Planned``: the nodes in dependency order, the executable's parameters (buffer and scalar
leaves), the outputs it writes back, its device and its structural key. The executor
(``core/executor.py``) decides where it runs and runs it, ``core/compiling.py`` compiles it,
``core/hosteval.py`` evaluates it on the host, ``xla_array.jit`` and the debug inspectors
lower it: each reads the lists from here, none passes them around one by one.
"""

from __future__ import annotations

from typing import Any

from .graph import Node, plan_graph

__all__ = ["Planned", "plan", "where_text"]


class Planned:
    """A graph ready to lower, compile or run.

    ``order``: the pending nodes in dependency order; ``bufs``, ``scalars``: the buffer and
    scalar leaves (the executable's parameters, in first-use order); ``outs``: the nodes it
    computes and writes back (the roots first); ``device``; ``key``: the structural key (its
    device, on a mesh with the parameters' layouts, and the structure; with donations, the
    donated parameters' positions too); ``donate``: those positions (``donating``)."""

    __slots__ = ("order", "bufs", "scalars", "outs", "key", "device", "donate")

    def __init__(self, order: list[Node], bufs: list[Node], scalars: list[Node],
                 outs: list[Node], key: Any, device: Any,
                 donate: frozenset = frozenset()) -> None:
        self.order = order
        self.bufs = bufs
        self.scalars = scalars
        self.outs = outs
        self.key = key
        self.device = device
        self.donate = donate

    def donating(self, donate: frozenset) -> None:
        """XLA may write results into the parameters at ``donate``: part of the key."""
        if donate:
            self.donate = donate
            self.key = (*self.key, donate)

    def part(self, order: list[Node], bufs: list[Node], scalars: list[Node],
             outs: list[Node]) -> Planned:
        """A part of this graph (its device part, without a host tail), under the same key."""
        return Planned(order, bufs, scalars, outs, self.key, self.device, self.donate)

    def annotations(self) -> Any:
        """The lowering's SPMD hooks for these parameters and outputs (on a Mesh)."""
        return self.device._annotations(self.bufs, self.scalars, self.outs)

    def where(self, limit: int = 8) -> str:
        """The user lines that recorded the graph (error messages, compile logs)."""
        return where_text(self.order, limit)

    def __repr__(self) -> str:
        return (f"<planned graph: {len(self.order)} ops, {len(self.bufs)} buffers, "
                f"{len(self.scalars)} scalars, {len(self.outs)} outputs>")


def plan(roots: list[Node]) -> Planned:
    """The graph a materialization of ``roots`` computes (one device: theirs)."""
    order, bufs, scalars, outs, struct = plan_graph(roots)
    device = roots[0].device
    if device._spmd:  # on a mesh, the parameters' layouts are part of the structure
        return Planned(order, bufs, scalars, outs,
                       ((device, device._layout_key(bufs)), struct), device)
    return Planned(order, bufs, scalars, outs, (device, struct), device)


def where_text(nodes: list[Node], limit: int = 8) -> str:
    """'file:line (op); ...' of the first ``limit`` distinct user lines that recorded
    ``nodes``, or '<unknown>'."""
    seen: list[str] = []
    for n in nodes:
        if n.where and n.where[0] != "<unknown>":
            s = f"{n.where[0]}:{n.where[1]} ({n.op.name})"
            if s not in seen:
                seen.append(s)
        if len(seen) >= limit:
            break
    return "; ".join(seen) or "<unknown>"
