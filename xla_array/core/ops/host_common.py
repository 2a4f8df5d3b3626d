"""What the host rules share (``ops/host.py``, ``ops/host_linalg.py``)."""

from __future__ import annotations

__all__ = ["NotExact"]


class NotExact(Exception):
    """This node's inputs are ones where the host rule cannot promise the compiled bits."""
