"""Values moving between devices: ``to_device``'s copies and the operands ``graph.record``
moves to where an op's committed operands are (JAX's placement rule, ``graph._mixed_devices``).

The graph cannot import this module (moving a pending operand may compute it: the executor,
which is built on the graph), so this module installs ``transfer`` into it when imported;
``api/creation.py`` imports it, so it is in place before any array exists.
"""

from __future__ import annotations

from typing import Any

from . import backend as _backend
from . import graph as _graph
from . import metrics as _metrics
from .devices import Device, target
from .executor import value_buffer, value_host
from .graph import SCALAR, Node, Placeholder, buffer_leaf, plan_graph, scalar_leaf

__all__ = ["copy_to", "transfer"]


def copy_to(x: Node, t: Any, dev: Any, committed: bool) -> Node:
    """A buffer leaf with ``x``'s value (computed if pending) on target ``t`` (a ``Device``,
    ``Mesh`` or ``NamedSharding``), placement ``dev``: device to device within one client,
    else through the host."""
    if type(dev) is Device and type(x.device) is Device:
        nb = _backend.copy_to_device(value_buffer(x, "to_device"), dev._pjrt)
        return buffer_leaf(nb, x.shape, x.dtype, dev, committed)
    return buffer_leaf(t._put(value_host(x, "to_device")), x.shape, x.dtype, dev, committed)


_CLONE_LIMIT = 256  # pending ops of an uncommitted operand re-recorded on the new device
# ops whose attributes name one platform's kernels (LAPACK on CPU, cuSOLVER on GPUs): a graph
# holding one is not re-recorded on another platform but computed where it is, then copied
_PLATFORM_BOUND = frozenset({"lapack"})


def transfer(node: Node, place: Any) -> Node:
    """An uncommitted operand's value on ``place`` (where the committed operands of an op
    are; called by ``graph.record``), as an uncommitted node.

    A scalar parameter is re-made there. A pending operand computed from scalars and buffers
    through at most ``_CLONE_LIMIT`` ops (``zeros(n)``, ``arange(n) * 0.5``...) is recorded
    again on ``place`` (only its buffers are copied: nothing is computed on the old device);
    a larger one is computed where it is, and its result copied. A traced argument of
    ``xla_array.jit`` cannot move: ValueError."""
    if node.op is SCALAR:
        return scalar_leaf(node.value, node.dtype, place)
    if type(node.buffer) is Placeholder:
        raise ValueError(f"arrays are on different devices ({node.device} and {place}): a "
                         f"traced argument cannot be moved; move it with to_device() first")
    _metrics.count("device_transfers")
    if node.buffer is None and type(place) is Device and type(node.device) is Device:
        order, bufs, scalars = plan_graph([node], writeback=False)[:3]
        if len(order) <= _CLONE_LIMIT and (place.platform == node.device.platform or not any(
                n.op.name in _PLATFORM_BOUND for n in order)):
            new: dict[int, Node] = {}
            for n in bufs:
                new[id(n)] = transfer(n, place)
            for n in scalars:
                new[id(n)] = scalar_leaf(n.value, n.dtype, place)
            for n in order:
                new[id(n)] = Node(n.op, tuple([new[id(i)] for i in n.inputs]), n.attrs,
                                  n.shape, n.dtype, place, n.depth, n.where)
            return new[id(node)]
    return copy_to(node, target(place), place, False)


_graph.transfer = transfer
