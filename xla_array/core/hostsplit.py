"""The host's share of graphs that compile (``core/hosteval.py`` runs whole graphs on the host
before they compile; this module finds the parts of a compiling graph the host computes
instead, with the same exact host rules): values held by Arrays that come from small integer
or boolean buffers alone, computed first (``held_first``), and the tail of small steps after
a graph over large values (``tail``), which ``compiling._compile_split`` leaves out of the
executable."""

from __future__ import annotations

from typing import Any

from . import flags as _flags
from . import hosteval
from .graph import BUFFER, SCALAR, Node
from .ops.host import MOVES

__all__ = ["held_first", "tail", "TAIL_BYTES", "TAIL_MIN_BYTES", "TAIL_MIN_NODES"]


def held_first(order: list[Node], outs: list[Node], device: Any) -> list[Node]:
    """The held values of a graph that compiles which the host can compute from small
    integer or boolean buffers alone (labels, indices, masks): outputs (``outs``) whose every
    step has an exact host rule and whose values and leaves are at most ``MAX_BYTES``, reading
    at least one such buffer. Computed first (on the host), they are buffers when the rest
    compiles, as they are in the later graphs of a library that computes them once and keeps
    them (LogisticRegression's encoded labels and one-hot targets): the rest then has those
    graphs' structure and shares their executable. (Values from float buffers are left in
    the graph: a model's parameters change at every step, and computing their functions
    apart only cut GaussianMixture's EM steps into more graphs: two fits on 100,000 x 64
    compiled 12 graphs instead of 9.)"""
    if not hosteval.host_side(device):
        return []
    found = hosteval.kernels_in_use()
    ok: dict[int, bool] = {}  # id(node) -> reads a buffer; present when the host may compute it
    for n in order:
        if hosteval.nbytes(n) > hosteval.MAX_BYTES or hosteval.exact_rule(n, found) is None:
            continue
        leaf = False
        for x in n.inputs:
            op = x.op
            if op is SCALAR:
                continue
            if op is BUFFER:
                if hosteval.nbytes(x) > hosteval.MAX_BYTES or x.dtype.kind not in "biu":
                    break
                leaf = True
                continue
            st = ok.get(id(x))
            if st is None:
                break
            leaf = leaf or st
        else:
            ok[id(n)] = leaf
    return [n for n in outs if ok.get(id(n))]


# A compiled graph over large values leaves its tail to the host: the nodes that compute small
# values from small values only, with exact host rules, and that no other node reads (what a
# library does after a decomposition or a reduction: scaling the singular values, ratios,
# signs, a rank). XLA compiles each of them as a kernel of its own, 7-8 ms apiece on the 2-core
# VM whatever its size (a one-add graph: 23-28 ms, an empty one 10), while NumPy computes one in
# microseconds: PCA's graph at 100,000 x 64 compiled in 200-246 ms, without its tail of 29 such
# nodes in 71 (docs/performance.md, "Measured choices"). Only where some value is above
# TAIL_MIN_BYTES (the host tier's bound: graphs whose runs take milliseconds) and the tail has
# TAIL_MIN_NODES computing nodes or more: a tail runs as a graph of its own, on the host until
# its runs have taken the host budget, then compiled (GaussianMixture's EM steps end in tails
# of 4 ops, a convergence test, run once per iteration: they compiled after 20 iterations,
# 100 ms each, more than they saved).
TAIL_BYTES = 1 << 16
TAIL_MIN_BYTES = hosteval.MAX_BYTES
TAIL_MIN_NODES = 5


def tail(order: list[Node], device: Any) -> tuple[frozenset, frozenset] | None:
    """The positions in ``order`` of the graph's host tail (above) and the ids of the nodes its
    rules read, or None where it has none: the setting off, ``device`` not a local CPU one, no
    value above ``TAIL_MIN_BYTES``, fewer than ``TAIL_MIN_NODES`` computing nodes in the tail
    (data movement aside)."""
    if not _flags._values["host_first"] or not hosteval.host_side(device) or \
            max(map(hosteval.nbytes, order), default=0) <= TAIL_MIN_BYTES:
        return None
    found = hosteval.kernels_in_use()
    inputs = []  # per node, the values its host rule reads (None: no exact rule)
    read: dict[int, list[int]] = {}  # node id -> positions of the nodes reading it
    for i, n in enumerate(order):
        rule = hosteval.rule_of(n, found)  # (a kernel's rewrite reads its own inputs: compiled too)
        xs = n.inputs if rule[1] is None else rule[1][0]
        inputs.append(None if hosteval.refused_rule(n, rule) else xs)
        for x in {*n.inputs, *xs}:
            read.setdefault(id(x), []).append(i)
    host: set[int] = set()
    for i in range(len(order) - 1, -1, -1):
        n, xs = order[i], inputs[i]
        if xs is None or n.op.nout > 1 or hosteval.nbytes(n) > TAIL_BYTES or \
                any(x.op.nout > 1 or hosteval.nbytes(x) > TAIL_BYTES for x in xs):
            continue
        if all(j in host for j in read.get(id(n), ())):
            host.add(i)
    if sum(order[i].op.name not in MOVES for i in host) < TAIL_MIN_NODES:
        return None  # (moves fuse into their readers: they save no kernel)
    return frozenset(host), frozenset(id(x) for i in host
                                      for x in {*order[i].inputs, *(inputs[i] or ())})
