"""Graph -> StableHLO text. Deterministic for equal structure (names come from graph order).

Ops are written in MLIR's generic form (``%3 = "stablehlo.add"(%1, %2) : (...) -> ...``), which
is uniform for every op; each op line carries ``loc("file":line:0)`` of the user line that
recorded it, so XLA's errors and dumps point at user code.
"""

from __future__ import annotations

import math
import struct
from typing import Any

from . import dtypes as _dtypes
from . import rewrite as _rewrite
from .dtypes import DType
from .graph import Node

__all__ = ["Emitter", "lower", "tensor_type", "dense"]


def tensor_type(shape: tuple, dtype: DType) -> str:
    dims = "x".join(str(d) for d in shape)
    return f"tensor<{dims}x{dtype.mlir}>" if shape else f"tensor<{dtype.mlir}>"


def _float_lit(v: float, dtype: DType) -> str:
    if math.isfinite(v):
        return repr(float(v))
    if dtype.bits == 64:
        return "0x" + struct.pack(">d", v).hex().upper()
    raw = dtype.np.type(v).view(f"u{dtype.np.itemsize}")
    return "0x" + format(int(raw), f"0{dtype.np.itemsize * 2}X")


def dense(value: Any, dtype: DType) -> str:
    """A splat literal for ``dense<...>`` of ``dtype``."""
    k = dtype.kind
    if k == "b":
        return "true" if value else "false"
    if k in "iu":
        return str(int(value))
    if k == "f":
        return _float_lit(float(value), dtype)
    re_ = _float_lit(complex(value).real, _REAL[dtype.bits])
    im = _float_lit(complex(value).imag, _REAL[dtype.bits])
    return f"({re_}, {im})"


_REAL = {64: _dtypes.float32, 128: _dtypes.float64}  # complex bits -> the parts' dtype


# What the op modules learn about a whole graph before its nodes are lowered, for lowerings
# that depend on more than their node: (name, fn(order, outputs)); ``lower`` stores each
# result in ``Emitter.facts[name]`` (ops/structural.py: the max reductions that need no NaN
# check). Filled when the op modules are imported; a function of the structure only.
FACTS: list[tuple[str, Any]] = []


class Emitter:
    """Writes one function body. ``op`` appends a generic-form op and returns its SSA name."""

    def __init__(self) -> None:
        self.facts: dict[str, Any] = {}  # see FACTS
        self.lines: list[str] = []
        self.types: dict[str, str] = {}
        self.k = 0
        self.loc = ""
        self.indent = "    "

    def fresh(self) -> str:
        self.k += 1
        return f"%{self.k}"

    def op(self, name: str, operands: list[str], ty: str | list[str], attrs: str = "",
           region: str = "") -> str:
        """Emit ``name(operands)`` with result type(s) ``ty``; returns the result name
        (for several results, the base name: use ``name#i``)."""
        r = self.fresh()
        ins = ", ".join(operands)
        its = ", ".join(self.types[o] for o in operands)
        a = f" {{{attrs}}}" if attrs else ""
        reg = f" ({{\n{region}\n{self.indent}}})" if region else ""
        if isinstance(ty, list):
            self.lines.append(f'{self.indent}{r}:{len(ty)} = "{name}"({ins}){reg}{a} : '
                              f'({its}) -> ({", ".join(ty)}){self.loc}')
            for i, t in enumerate(ty):
                self.types[f"{r}#{i}"] = t
        else:
            self.lines.append(f'{self.indent}{r} = "{name}"({ins}){reg}{a} : ({its}) -> {ty}'
                              f'{self.loc}')
            self.types[r] = ty
        return r

    def const(self, value: Any, dtype: DType, shape: tuple = ()) -> str:
        ty = tensor_type(shape, dtype)
        return self.op("stablehlo.constant", [], ty, f"value = dense<{dense(value, dtype)}> : {ty}")

    def block(self, args: list[tuple[str, str]], body: Any) -> str:
        """A region with one block. ``body(emitter)`` emits ops and returns the values to
        return; the block's arguments are given as (name, type)."""
        saved = (self.lines, self.indent, self.loc)
        self.lines, self.indent = [], saved[1] + "    "
        self.loc = ""
        for name, t in args:
            self.types[name] = t
        rets = body(self)
        rt = ", ".join(self.types[r] for r in rets)
        self.lines.append(f'{self.indent}"stablehlo.return"({", ".join(rets)}) : ({rt}) -> ()')
        head = f"{saved[1]}  ^bb0({', '.join(f'{n}: {t}' for n, t in args)}):"
        text = "\n".join([head, *self.lines])
        self.lines, self.indent, self.loc = saved
        return text

    def scalar_body(self, opname: str, dtype: DType) -> str:
        """A reduction body applying ``opname`` to two scalars of ``dtype``."""
        t = tensor_type((), dtype)
        a, b = self.fresh(), self.fresh()
        return self.block([(a, t), (b, t)], lambda e: [e.op(opname, [a, b], t)])


def _loc(where: Any) -> str:
    if not where:
        return ""
    fname, line = where
    fname = fname.replace("\\", "\\\\").replace('"', '\\"')
    return f' loc("{fname}":{line}:0)'


def scalar_groups(scalars: list[Node]) -> list[tuple[Any, list[int]]]:
    """The packed scalar parameters: (dtype, positions in ``scalars``), by first appearance."""
    groups: dict[Any, list[int]] = {}
    for i, n in enumerate(scalars):
        groups.setdefault(n.dtype, []).append(i)
    return list(groups.items())


def lower(order: list[Node], bufs: list[Node], scalars: list[Node],
          outputs: list[Node], donate: frozenset = frozenset(), spmd: Any = None,
          pack: bool = False) -> str:
    """The StableHLO module for computing ``outputs``; parameters are buffers then scalars.
    Parameters whose index is in ``donate`` are marked as donors (XLA may reuse them).
    ``spmd`` (``spmd.Annotator``, for graphs on a mesh) adds the sharding annotations.
    Each scalar is a 0-d parameter; with ``pack`` (``scalars.packs_scalars`` decides; never
    with ``spmd``), the scalars of each dtype come as one vector parameter that the module
    slices apart (``scalar_groups``). The native kernels in use first rewrite the graph
    (``rewrite.apply``: the recorded nodes are left as they are)."""
    order, outputs = _rewrite.apply(order, outputs)
    e = Emitter()
    for name, fn in FACTS:
        e.facts[name] = fn(order, outputs)
    names: dict[int, str] = {}
    params = []
    packed = pack and spmd is None
    for j, n in enumerate(bufs if packed else bufs + scalars):
        name = f"%arg{j}"
        ty = tensor_type(n.shape, n.dtype)
        names[id(n)] = name
        e.types[name] = ty
        attrs = ([spmd.arg(j, n)] if spmd else []) + (["jax.buffer_donor = true"] if j in donate
                                                      else [])
        params.append(f"{name}: {ty}" + (f" {{{', '.join(attrs)}}}" if attrs else ""))
    if packed:
        for j, (d, idxs) in enumerate(scalar_groups(scalars), len(bufs)):
            name = f"%arg{j}"
            ty = tensor_type((len(idxs),), d)
            e.types[name] = ty
            params.append(f"{name}: {ty}")
            for k, i in enumerate(idxs):
                one = e.op("stablehlo.slice", [name], tensor_type((1,), d),
                           f"start_indices = array<i64: {k}>, limit_indices = array<i64: "
                           f"{k + 1}>, strides = array<i64: 1>")
                names[id(scalars[i])] = e.op("stablehlo.reshape", [one], tensor_type((), d))
    for n in order:
        e.loc = _loc(n.where)
        names[id(n)] = n.op.lower(e, n, [names[id(x)] for x in n.inputs])
    e.loc = ""
    outs = [names[id(n)] for n in outputs]
    out_types = [e.types[o] for o in outs]
    ret = (f'    "func.return"({", ".join(outs)}) : ({", ".join(out_types)}) -> ()')
    res = [t + spmd.result(n) for t, n in zip(out_types, outputs)] if spmd else out_types
    head = f"func.func public @main({', '.join(params)}) -> ({', '.join(res)}) {{"
    top = spmd.module_head() if spmd else "module {"
    return "\n".join([top, head, *e.lines, ret, "  }", "}"]) + "\n"
