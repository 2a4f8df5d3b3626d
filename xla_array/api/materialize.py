"""``xla_array.materialize``: compute several arrays in one executable; ``host_values`` for
the namespace functions whose result shape depends on values (``nonzero``, ``unique_*``,
``repeat``)."""

from __future__ import annotations

import numpy as np

from ..core import backend as _backend
from ..core.executor import materialize_nodes
from ..core.graph import user_frame
from .array import Array

__all__ = ["materialize", "block_until_ready"]


def materialize(*arrays: Array) -> None:
    """Compute every pending array given, in one XLA executable per device.

    Results stay on the device; later uses of these arrays (and of every live array that the
    graph computed along the way) start from the results.

    Asynchronous: it returns once the executable is dispatched, possibly before the run ends
    (anything that reads the values waits for it). To time a computation, or to wait for its
    end, use ``xla_array.block_until_ready(*arrays)``.
    """
    materialize_nodes(_nodes(arrays), "materialize", user_frame())  # (one frame less to walk)


def _nodes(arrays: tuple) -> list:
    # each handle's node read once: another thread may rebind it (``x += 1``) meanwhile
    nodes = []
    for a in arrays:
        if not isinstance(a, Array):
            raise TypeError(f"materialize() takes arrays, got {type(a).__name__}")
        nodes.append(a._node)
    return nodes


def block_until_ready(*arrays: Array) -> None:
    """Compute the pending arrays (as ``materialize``) and wait until every result is ready.

    XLA runs asynchronously: ``materialize`` returns once the work is queued. Use this for
    timing, or before handing buffers to code that does not wait on its own (reading values,
    ``np.asarray``, DLPack, already waits)."""
    nodes = _nodes(arrays)
    materialize_nodes(nodes, "materialize", user_frame())
    _backend.block([n.buffer for n in nodes])


def host_values(cause: str, *arrays: Array, keep: tuple = ()) -> list[np.ndarray]:
    """Compute ``arrays`` and ``keep`` in one executable (with every live pending array they
    depend on, so intermediates held by the caller stay on the device); copy only ``arrays``
    to the host."""
    materialize_nodes([a._node for a in arrays + tuple(keep)], cause)
    return [a._host(cause) for a in arrays]
