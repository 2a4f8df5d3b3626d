"""``xla_array.materialize``: compute several arrays in one executable."""

from __future__ import annotations

from ._array import Array
from ._executor import materialize_nodes

__all__ = ["materialize"]


def materialize(*arrays: Array) -> None:
    """Compute every pending array given, in one XLA executable per device.

    Results stay on the device; later uses of these arrays (and of every live array that the
    graph computed along the way) start from the results.
    """
    nodes = []
    for a in arrays:
        if not isinstance(a, Array):
            raise TypeError(f"materialize() takes arrays, got {type(a).__name__}")
        nodes.append(a._node)
    materialize_nodes(nodes, "materialize")
