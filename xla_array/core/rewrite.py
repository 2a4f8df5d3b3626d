"""Rewrites of a planned graph before it is lowered: where a native kernel replaces XLA's ops.

``apply(order, outputs)`` runs the selection rule of every kernel in use
(``registry.Kernel.rule``) on the nodes of the op it may replace, in dependency order. A
node a rule matches is lowered as a node of the kernel's op with the inputs and attributes the
rule returned (the row pass: ``X.T @ f(X @ w)`` as one ``rowpass`` node reading X, w and the
operands of ``f``); a node reading a replaced node is lowered reading its replacement. The
recorded graph is never changed: the rewritten nodes are ``Rewritten`` stand-ins that live
only while one module is lowered, so the structural key, the write-back and the user's
Arrays all see the graph as recorded. Nodes the replacement no longer reads (``X @ w`` when
no Array holds it) stay in the module; XLA drops what no output needs.

``lower.lower`` calls it, so a materialization, ``xla_array.jit`` (and the text it
serializes) and ``debug.mlir`` all lower the same rewritten module. A rule may look at the
structure only (ops, attributes, shapes, dtypes, devices, which node feeds which, whether an
input is a buffer or scalar parameter), never at values: the rewrite of a graph is then
decided by its structural key and by which kernels are in use (``registry.context``).
"""

from __future__ import annotations

from typing import Any

from . import registry

__all__ = ["Rewritten", "apply", "rules"]


class Rewritten:
    """A node as lowered after a rewrite: a kernel's replacement for a recorded node, or a
    recorded node reading one (same op and attributes, remapped inputs)."""

    __slots__ = ("op", "inputs", "attrs", "shape", "dtype", "device", "where")

    def __init__(self, op: Any, inputs: tuple, attrs: Any, like: Any) -> None:
        self.op, self.inputs, self.attrs = op, inputs, attrs
        self.shape, self.dtype, self.device, self.where = (like.shape, like.dtype, like.device,
                                                           like.where)

    def __repr__(self) -> str:
        return f"<rewritten {self.op.name} {self.dtype.name}{list(self.shape)}>"


def rules() -> dict[str, list[registry.Kernel]]:
    """Op name -> the kernels that may be used (``registry.may_use``: loaded or not yet) and
    may replace its nodes, in the order they are tried (``Kernel.order``: the row pass before
    the BLAS products, so ``X.T @ f(X @ w)`` is one row pass)."""
    state = registry.state()
    cached = _RULES
    if cached and cached[0] == state:
        return cached[1]  # (every materialization and host run asks: built once per state)
    rules: dict[str, list[registry.Kernel]] = {}
    for k in sorted(registry.KERNELS.values(), key=lambda k: k.order):
        if registry.may_use(k):
            for name in (k.replaces,) if isinstance(k.replaces, str) else k.replaces:
                rules.setdefault(name, []).append(k)
    # (kept under the state before the build: a change meanwhile, another thread's setting
    # or a library this build loaded, makes the next call build again, never keeps stale ones)
    _RULES[:] = [state, rules]
    return rules


# [the registry's state (``registry.state``), the rules built under it] (callers only read them)
_RULES: list = []


def match(n: Any, found: dict | None = None) -> tuple[registry.Kernel, tuple] | None:
    """(kernel, (inputs, attrs)) of the first kernel in use (``found``: ``rules()``) whose
    rule takes node ``n``, or None: how the lowering decides (``apply``), asked as well by
    the host tier and by the compile options. A kernel not loaded yet is loaded here, the
    first time a node of an op it replaces is asked about (before its rule, which may read
    what the load sets up); one that fails to load is passed over."""
    if found is None:
        found = rules() if registry.KERNELS else {}
    for k in found.get(n.op.name, ()):
        if not k.available():
            continue
        m = k.rule(n)
        if m is not None:
            return k, m
    return None


def apply(order: list, outputs: list) -> tuple[list, list]:
    """(order, outputs) with every node a kernel in use replaces rewritten (the same lists
    when nothing matched)."""
    if not registry.KERNELS:
        return order, outputs
    found = rules()
    if not found:
        return order, outputs
    new: dict[int, Any] = {}  # id(recorded node) -> what is lowered in its place
    out = []
    for n in order:
        rep = None
        hit = match(n, found)
        if hit is not None:
            k, m = hit
            inputs = tuple([new.get(id(x), x) for x in m[0]])
            shape, dtype = k.op.infer(inputs, m[1])  # (validates the rule's result)
            if shape != n.shape or dtype is not n.dtype:
                raise AssertionError(f"the {k.title} rewrote a {n.op.name} node of "
                                     f"{n.dtype.name}{list(n.shape)} into one of "
                                     f"{dtype.name}{list(shape)}")
            rep = Rewritten(k.op, inputs, m[1], n)
        if rep is None and new:
            inputs = tuple([new.get(id(x), x) for x in n.inputs])
            if any(a is not b for a, b in zip(inputs, n.inputs)):
                rep = Rewritten(n.op, inputs, n.attrs, n)
        if rep is None:
            out.append(n)
        else:
            new[id(n)] = rep
            out.append(rep)
    if not new:
        return order, outputs
    return out, [new.get(id(o), o) for o in outputs]
