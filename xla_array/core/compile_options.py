"""The compile options of a graph and the context of its disk-cache entries.

The options are the process's (``opt_level``) and those a graph's structure calls for: no
tree of windowed reductions where no reduction's bits depend on it, LLVM's loop unrolling off
for exact graphs. The disk cache's context names everything besides the graph's key that
changes the code XLA generates: jaxlib, xla_array's own sources, the CPU, the options, the
native kernels, XLA_FLAGS.
"""

from __future__ import annotations

import os
from typing import Any

from . import backend as _backend
from . import flags as _flags
from . import hosteval, registry, rewrite
from .cache import cpu_features
from .graph import Node
from .ops.reductions import order_free_reductions

__all__ = ["EXACT_LLVM", "source_digest"]


def _options() -> dict[str, Any]:
    """The compile options set for the whole process (part of every disk cache context)."""
    options: dict[str, Any] = {}
    if _flags.get("opt_level") is not None:
        options["xla_backend_optimization_level"] = int(_flags.get("opt_level"))
    return options


# LLVM's options for graphs whose bits do not depend on how LLVM optimizes them: no loop
# unrolling. LLVM unrolls every loop of known short length in full (a kernel over 64 values
# becomes 64 copies of its body, 16 vector steps of a polynomial for exp) and then optimizes
# and emits the copies: without it, kernels on small values compile in a third less time,
# large ones (vectorized loops, which the vectorizer still interleaves) in about the same,
# and they run as fast (benchmarks/bench.py, docs/results-log.md). It changes the bits of
# XLA's own float reductions (a product of 3 values, fully unrolled, multiplies in order; not
# unrolled, the vectorizer's order), so it is only for graphs of exact ops, whose bits the
# lowering writes out whatever LLVM does (they are identical at every optimization level).
EXACT_LLVM = "-unroll-threshold=0"


def _graph_options(order: list[Node], device: Any) -> dict[str, Any]:
    """The compile options of one graph: the process's, and what its structure calls for."""
    options = _options()
    if order_free_reductions(order, _by_kernel):  # one loop instead of a tree of kernels
        options["xla_disable_hlo_passes"] = "tree_reduction_rewriter"
    if hosteval.exact(order, device):
        options[_backend.LLVM_OPTIONS] = EXACT_LLVM
    return options


def _by_kernel(n: Node) -> bool:
    """Whether a native kernel lowers node ``n`` (as the lowering decides)."""
    return rewrite.match(n) is not None


_SOURCE_DIGEST: list[str] = []


def source_digest() -> str:
    """A digest of xla_array's own sources: a changed lowering never reuses stale executables
    from the on-disk cache (computed once per process)."""
    if not _SOURCE_DIGEST:
        import hashlib
        h = hashlib.sha256()
        pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # xla_array/
        names = sorted(os.path.relpath(os.path.join(d, f), pkg)
                       for d, _, files in os.walk(pkg) for f in files if f.endswith(".py"))
        for name in names:
            with open(os.path.join(pkg, name), "rb") as f:
                h.update(name.encode() + b"\0" + f.read())
        _SOURCE_DIGEST.append(h.hexdigest()[:16])
    return _SOURCE_DIGEST[0]


def _disk_context(options: dict) -> str:
    # XLA_FLAGS (read by the client: --xla_cpu_max_isa...) change the code XLA generates
    return (f"jaxlib {_backend.JAXLIB_VERSION}; xla_array {source_digest()}; "
            f"cpu {cpu_features()}; options {sorted(options.items())}; "
            f"fast_math {_flags._values['fast_math']}; "
            f"kernels {registry.context()}; "  # (they rewrite graphs after keying: rewrite.py)
            f"xla_flags {os.environ.get('XLA_FLAGS', '').strip()}")
