"""Explicit compilation: ``jit``, ``compile``, ``cached`` and serialized compiled functions.

``jit(fn)`` traces ``fn`` once per argument signature (shapes, dtypes, devices of the array
arguments, Python types of scalar arguments, values of static arguments, and the structure of
nested tuples/lists/dicts) into one executable, then calls it with a single dispatch. Array
arguments are parameters; Python scalar arguments are weak-typed runtime parameters (a new value
never retraces); arrays captured from the enclosing scope become constant parameters of the
executable. Inside the traced function nothing may be materialized (no ``float(x)``, ``if x``).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import json
import threading
from typing import Any

import numpy as np

from ..core import backend as _backend
from ..core import dtypes as _dtypes
from ..core import flags as _flags
from ..core.compile_options import _disk_context, _options
from ..core.devices import default_device, resolve
from ..core.executor import (
    Compiled,
    check_buffers,
    compile_graph,
    custom_targets,
    materialize_nodes,
    register_targets,
    run_checks,
)
from ..core.graph import Placeholder, TracedScalar, buffer_leaf, plan_graph
from ..core.lower import lower
from ..core.ops.structural import OPS
from ..core.planned import Planned
from ..core.scalars import scalar_buffer_of
from .array import Array

__all__ = ["jit", "compile", "cached", "deserialize", "Jitted", "CompiledFunction"]

_MAGIC = b"XLA_ARRAY_FN 1\n"
_SCALAR_TYPES = (int, float, complex)


# ---------------------------------------------------------------- tiny pytrees
def _flatten(tree: Any, leaves: list) -> Any:
    """Structure of ``tree`` (tuples, lists, str-keyed dicts) with leaves appended to
    ``leaves``; returns a hashable description."""
    stack: list = [(tree, None, None)]
    out_root: list = []
    # iterative build: each frame fills a child slot of its parent description
    while stack:
        obj, parent, slot = stack.pop()
        if isinstance(obj, (tuple, list)):
            d: list[Any] = ["tuple" if isinstance(obj, tuple) else "list", [None] * len(obj)]
            for i in reversed(range(len(obj))):
                stack.append((obj[i], d, i))
        elif isinstance(obj, dict):
            keys = sorted(obj)
            if not all(isinstance(k, str) for k in keys):
                raise TypeError("jit: dict arguments/results need str keys")
            d = ["dict", [None] * len(keys), tuple(keys)]
            for i in reversed(range(len(keys))):
                stack.append((obj[keys[i]], d, i))
        else:
            d = ["leaf", len(leaves)]
            leaves.append(obj)
        if parent is None:
            out_root.append(d)
        else:
            parent[1][slot] = d
    return _to_tuple(out_root[0])


def _to_tuple(d: Any) -> Any:
    """Nested lists -> nested tuples (argument structures are shallow)."""
    return tuple(_to_tuple(x) for x in d) if isinstance(d, list) else d


def _unflatten(desc: Any, leaves: list) -> Any:
    kind = desc[0]
    if kind == "leaf":
        return leaves[desc[1]]
    items = [_unflatten(c, leaves) for c in desc[1]]
    if kind == "tuple":
        return tuple(items)
    if kind == "list":
        return items
    return dict(zip(desc[2], items))


class _Static:
    """A static argument (its value is part of the signature)."""

    __slots__ = ("v",)

    def __init__(self, v: Any) -> None:
        self.v = v


class _Donated:
    """An array argument that XLA may overwrite."""

    __slots__ = ("v",)

    def __init__(self, v: Any) -> None:
        self.v = v


def _mark(args: tuple, static: set, donate: set) -> tuple:
    return tuple(_Static(a) if i in static else _Donated(a) if i in donate and
                 isinstance(a, Array) else a for i, a in enumerate(args))


def _unmark(x: Any) -> Any:
    return x.v if isinstance(x, (_Static, _Donated)) else x


# ---------------------------------------------------------------- tracing
class _Trace:
    """A traced and compiled specialization: parameter/scalar maps and the executable."""

    __slots__ = ("compiled", "params", "scalars", "out_desc", "out_specs", "outs", "device",
                 "donate_args", "text", "consts", "checks")
    compiled: Compiled | None
    params: list  # per parameter: an argument position, or a captured buffer
    scalars: list  # (value or TracedScalar, dtype) per scalar parameter
    out_desc: Any
    out_specs: list
    outs: list  # per output: (shape, dtype) of a result, or a value returned as it is
    device: Any
    donate_args: list
    text: str
    consts: list
    checks: tuple  # (nodes by output position, positions of the check outputs)

    def run(self, leaves: list) -> Any:
        bufs = []
        for p in self.params:
            bufs.append(leaves[p]._buffer("jit") if isinstance(p, int) else p)
        for v, d in self.scalars:
            bufs.append(scalar_buffer_of(leaves[v.index] if isinstance(v, TracedScalar) else v,
                                         d, self.device))
        assert self.compiled is not None  # (a trace computing no array is never run)
        results = self.compiled.exe.run(bufs, self.out_specs)
        for i in self.donate_args:
            leaves[i]._node.buffer = Placeholder(-1)
        if self.checks:  # bounds checks of traced indices: extra outputs after the results
            run_checks(self.checks[0], results, self.checks[1])
        arrays: list = []
        k = 0
        # committed when an argument is (JAX's rule)
        committed = any([type(x) is Array and x._node.committed for x in leaves])
        for o in self.outs:
            if isinstance(o, tuple):
                shape, d = o
                arrays.append(Array(buffer_leaf(results[k], shape, d, self.device, committed)))
                k += 1
            else:
                arrays.append(o)
        return _unflatten(self.out_desc, arrays)


def _trace(fn: Any, args: tuple, kwargs: dict) -> _Trace:
    """Trace ``fn`` on marked arguments (``_mark``) and compile the graph it records."""
    leaves: list = []
    desc = _flatten((args, kwargs), leaves)
    donate = {i for i, x in enumerate(leaves) if isinstance(x, _Donated)}
    static = {i for i, x in enumerate(leaves) if isinstance(x, _Static)}
    leaves = [_unmark(x) for x in leaves]
    traced: list = []
    device = None
    for i, x in enumerate(leaves):
        if i in static:
            traced.append(x)
        elif isinstance(x, Array):
            device = device or x.device
            # committed: a traced argument cannot move (other operands follow it)
            traced.append(Array(buffer_leaf(Placeholder(i), x.shape, x.dtype, x.device, True)))
        elif type(x) in _SCALAR_TYPES:
            traced.append(TracedScalar(i, type(x)()))
        else:
            traced.append(x)
    targs, tkwargs = _unflatten(desc, traced)
    with _flags.using(max_pending=1 << 62):
        out = fn(*targs, **tkwargs)
    out_leaves: list = []
    out_desc = _flatten(out, out_leaves)
    roots = [a._node for a in out_leaves if isinstance(a, Array) and a._node.buffer is None]
    t = _Trace()
    t.device = device or (roots[0].device if roots else default_device())
    # the results, then the run-time checks computed beside them; ``struct``: the structural
    # key, from the same builder as a materialization's
    order, bufs, scalars, nodes, struct = (plan_graph(roots, writeback=False) if roots
                                           else ([], [], [], [], ()))
    checks = nodes[len(roots):]
    t.checks = ([None] * len(roots) + checks, tuple(range(len(roots), len(nodes))))
    t.params = [n.buffer.index if type(n.buffer) is Placeholder else
                _backend.device_buffer(n.buffer) for n in bufs]
    t.scalars = [(n.value, n.dtype) for n in scalars]
    t.donate_args = sorted(i for i in donate if i < len(leaves) and isinstance(leaves[i], Array))
    donate_params = frozenset(j for j, p in enumerate(t.params)
                              if isinstance(p, int) and p in donate)
    t.outs = []
    for a in out_leaves:
        if isinstance(a, Array) and a._node.buffer is None:
            t.outs.append((a.shape, a.dtype))
        elif isinstance(a, Array) and type(a._node.buffer) is Placeholder:
            t.outs.append(leaves[a._node.buffer.index])  # an argument returned as it is
        else:
            t.outs.append(a)
    t.out_desc = out_desc
    t.out_specs = [(n.shape, n.dtype.np) for n in nodes]
    key = ("jit", t.device, struct, donate_params)
    t.compiled = (compile_graph(Planned(order, bufs, scalars, nodes, key, t.device,
                                        donate_params)) if roots else None)
    t.text = lower(order, bufs, scalars, nodes, donate_params) if roots else ""
    t.consts = [_backend.device_buffer(n.buffer) for n in bufs
                if type(n.buffer) is not Placeholder]
    return t


def _signature(leaves: list, desc: Any) -> tuple:
    sig: list = []
    for i, x in enumerate(leaves):
        if isinstance(x, _Static):
            try:
                hash(x.v)
            except TypeError:
                raise TypeError(f"jit: a static argument must be hashable, got "
                                f"{type(x.v).__name__}") from None
            sig.append(("static", type(x.v).__name__, x.v))
        elif isinstance(x, _Donated):
            sig.append(("donated", x.v.shape, x.v.dtype.name, x.v.device))
        elif isinstance(x, Array):
            sig.append((x.shape, x.dtype.name, x.device))
        elif type(x) in _SCALAR_TYPES:
            sig.append(type(x).__name__)
        else:
            try:
                hash(x)
            except TypeError:
                raise TypeError(f"jit: argument {i} of type {type(x).__name__} is neither an "
                                f"array, a Python scalar nor hashable") from None
            sig.append(("value", type(x).__name__, x))
    return (desc, tuple(sig))


class Jitted:
    """A function compiled per argument signature; call it like the original."""

    def __init__(self, fn: Any, static_argnums: Any = (), donate_argnums: Any = ()) -> None:
        self.fn = fn
        self.static = {static_argnums} if isinstance(static_argnums, int) else set(static_argnums)
        self.donate = {donate_argnums} if isinstance(donate_argnums, int) else set(donate_argnums)
        self._traces: dict[Any, _Trace] = {}
        self._lock = threading.Lock()
        functools.update_wrapper(self, fn)

    def _lookup(self, args: tuple, kwargs: dict, trace: bool) -> tuple[Any, list]:
        margs = _mark(args, self.static, self.donate)
        leaves: list = []
        desc = _flatten((margs, kwargs), leaves)
        sig = _signature(leaves, desc)
        t = self._traces.get(sig)
        if t is None and trace:
            with self._lock:
                t = self._traces.get(sig)
                if t is None:
                    t = self._traces[sig] = _trace(self.fn, margs, kwargs)
        return t, [_unmark(x) for x in leaves]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        t, leaves = self._lookup(args, kwargs, True)
        pending = [x._node for x in leaves if isinstance(x, Array) and x._node.buffer is None]
        if pending:
            materialize_nodes(pending, "jit arguments")
        check_buffers([x._node for x in leaves if isinstance(x, Array)])
        if t.compiled is None:  # nothing to compute: outputs are arguments or constants
            return _unflatten(t.out_desc, list(t.outs))
        return t.run(leaves)

    def lower(self, *args: Any, **kwargs: Any) -> str:
        """The StableHLO text for these arguments (traces and compiles if needed)."""
        return self._lookup(args, kwargs, True)[0].text

    def compile(self, *args: Any, **kwargs: Any) -> CompiledFunction:
        t, _ = self._lookup(args, kwargs, True)
        return CompiledFunction(self, t, args, kwargs)

    def is_cached(self, *args: Any, **kwargs: Any) -> bool:
        return self._lookup(args, kwargs, False)[0] is not None


def jit(fn: Any = None, *, static_argnums: Any = (), donate_argnums: Any = ()) -> Any:
    """Compile ``fn`` per argument signature (see the module docstring). Usable as a decorator,
    with or without arguments. ``donate_argnums``: array arguments XLA may overwrite; they
    cannot be used after the call (RuntimeError)."""
    if fn is None:
        return lambda f: Jitted(f, static_argnums, donate_argnums)
    return Jitted(fn, static_argnums, donate_argnums)


class CompiledFunction:
    """``fn`` compiled ahead of time for one argument signature."""

    def __init__(self, jitted: Jitted | None, trace: _Trace, args: tuple, kwargs: dict) -> None:
        self._jitted = jitted
        self._trace = trace
        self._static = jitted.static if jitted else set()
        self._donate = jitted.donate if jitted else set()
        self._sig = self._signature_of(args, kwargs)[0]

    def _signature_of(self, args: tuple, kwargs: dict) -> tuple[Any, list]:
        leaves: list = []
        desc = _flatten((_mark(args, self._static, self._donate), kwargs), leaves)
        return _signature(leaves, desc), [_unmark(x) for x in leaves]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        sig, leaves = self._signature_of(args, kwargs)
        if sig != self._sig:
            raise TypeError("this compiled function was compiled for other argument shapes, "
                            "dtypes or static values; use jit() to compile per signature")
        pending = [x._node for x in leaves if isinstance(x, Array) and x._node.buffer is None]
        if pending:
            materialize_nodes(pending, "jit arguments")
        if self._trace.compiled is None:
            return _unflatten(self._trace.out_desc, list(self._trace.outs))
        return self._trace.run(leaves)

    def as_text(self) -> str:
        return self._trace.text

    def hlo(self) -> str:
        return str(self._trace.compiled.exe.hlo_text()) if self._trace.compiled else ""

    def cost(self) -> dict:
        return dict(self._trace.compiled.exe.cost()) if self._trace.compiled else {}

    def memory(self) -> dict:
        return dict(self._trace.compiled.exe.memory()) if self._trace.compiled else {}

    def serialize(self) -> bytes:
        """Bytes that ``xla_array.deserialize`` loads in another process (same jaxlib and
        CPU), without recompiling. Constants captured by the function travel inside."""
        t = self._trace
        if t.compiled is None:
            raise ValueError("nothing compiled: the function computes no array")
        consts = []
        for p in t.params:
            if not isinstance(p, int):
                buf = io.BytesIO()
                np.save(buf, np.asarray(_backend.to_numpy(p)), allow_pickle=False)
                consts.append(base64.b64encode(buf.getvalue()).decode())
        scalars = []
        for v, d in t.scalars:
            if isinstance(v, TracedScalar):
                scalars.append({"arg": v.index, "dtype": d.name})
            else:
                scalars.append({"value": _encode_scalar(v), "dtype": d.name})
        outs = [{"shape": list(o[0]), "dtype": o[1].name} if isinstance(o, tuple) else
                {"const": _encode_scalar(o)} for o in t.outs]
        meta = {"context": _disk_context(_options()), "sig": repr(self._sig),
                "platform": t.device.platform,
                "params": [p if isinstance(p, int) else None for p in t.params],
                "consts": consts, "scalars": scalars, "outs": outs,
                "out_desc": t.out_desc, "donate": t.donate_args, "text": t.text,
                "static_pos": sorted(self._static), "donate_pos": sorted(self._donate),
                "targets": custom_targets(t.text),
                "checks": [{"op": n.op.name, "attrs": list(n.attrs), "where": list(n.where),
                            "shape": list(n.shape), "dtype": n.dtype.name}
                           for n in t.checks[0][len(t.checks[0]) - len(t.checks[1]):]]}
        payload = t.compiled.exe.serialize()
        head = json.dumps(meta).encode()
        digest = hashlib.sha256(head + b"\n" + payload).hexdigest()
        return _MAGIC + digest.encode() + b"\n" + head + b"\n" + payload


class _CheckedOutput:
    """A check output of a deserialized function (what ``OpDef.check`` reads of its node)."""

    __slots__ = ("op", "attrs", "where", "shape", "dtype")

    def __init__(self, op: Any, attrs: tuple, where: tuple, shape: tuple, dtype: Any) -> None:
        self.op, self.attrs, self.where, self.shape, self.dtype = op, attrs, where, shape, dtype


def _check_attrs(op: Any, attrs: list) -> Any:
    """A check's attributes read back from JSON: its op's record type (``IndexCheck(size,
    axis)``: its ``check`` reads them by name), lists made tuples again."""
    def tup(v: Any) -> Any:
        return tuple(tup(x) for x in v) if isinstance(v, list) else v
    values = tup(attrs)
    return op.attrs(*values) if op.attrs is not None else values


def _encode_scalar(v: Any) -> Any:
    if isinstance(v, complex):
        return {"complex": [v.real, v.imag]}
    if isinstance(v, (bool, int, float)) or v is None:
        return v
    if isinstance(v, np.generic):
        return {"np": v.dtype.name, "v": v.item() if v.dtype.kind != "c" else
                [v.real.item(), v.imag.item()]}
    raise TypeError(f"cannot serialize a constant of type {type(v).__name__}")


def _decode_scalar(v: Any) -> Any:
    if isinstance(v, dict):
        if "complex" in v:
            return complex(*v["complex"])
        val: Any = complex(*v["v"]) if isinstance(v["v"], list) else v["v"]
        return np.dtype(v["np"]).type(val)
    return v


def deserialize(blob: bytes, device: Any = None) -> CompiledFunction:
    """Load a function written by ``CompiledFunction.serialize``. The blob is checked (magic,
    checksum, jaxlib version and CPU features) before anything is loaded; only load blobs you
    trust, as with any compiled code. It runs on ``device`` (default: the default device, or
    the first device of the platform it was compiled for, when the default is another's);
    ValueError for a device of another platform."""
    if not blob.startswith(_MAGIC):
        raise ValueError("not a serialized xla_array function")
    digest, _, rest = blob[len(_MAGIC):].partition(b"\n")
    head, _, payload = rest.partition(b"\n")
    if hashlib.sha256(head + b"\n" + payload).hexdigest().encode() != digest:
        raise ValueError("serialized function is corrupt or truncated (checksum mismatch)")
    meta = json.loads(head)
    if meta["context"] != _disk_context(_options()):
        raise ValueError(f"serialized for another jaxlib/CPU ({meta['context']})")
    dev = resolve(device)
    plat = meta.get("platform", "cpu")
    if device is None and dev.platform != plat:  # (a CPU function where a GPU is the default)
        dev = resolve(plat)
    if dev.platform != plat:
        raise ValueError(f"deserialize(): the function was compiled for a {plat} device, "
                         f"not {dev}")
    register_targets(meta.get("targets", []))
    exe = _backend.deserialize(payload, [dev._pjrt])
    t = _Trace()
    t.device = dev
    consts = iter(meta["consts"])
    t.params = [p if p is not None else _backend.put(
        np.load(io.BytesIO(base64.b64decode(next(consts))), allow_pickle=False), dev._pjrt)
        for p in meta["params"]]
    t.scalars = [(TracedScalar(s["arg"], 0) if "arg" in s else _decode_scalar(s["value"]),
                  _dtypes.as_dtype(s["dtype"])) for s in meta["scalars"]]
    t.outs = [(tuple(o["shape"]), _dtypes.as_dtype(o["dtype"])) if "shape" in o else
              _decode_scalar(o["const"]) for o in meta["outs"]]
    t.out_specs = [(o[0], o[1].np) for o in t.outs if isinstance(o, tuple)]
    checks = [_CheckedOutput(OPS[c["op"]], _check_attrs(OPS[c["op"]], c["attrs"]),
                             tuple(c["where"]), tuple(c["shape"]), _dtypes.as_dtype(c["dtype"]))
              for c in meta.get("checks", [])]
    n = len(t.out_specs)
    t.out_specs += [(c.shape, c.dtype.np) for c in checks]
    t.checks = ([None] * n + checks, tuple(range(n, n + len(checks))))
    t.out_desc = _to_tuple(meta["out_desc"])
    t.donate_args = meta["donate"]
    t.text = meta["text"]
    t.consts = []
    t.compiled = Compiled(exe, t.text, None, 0.0, 0.0)
    loaded = _Loaded(t, meta["sig"])
    loaded._static = set(meta["static_pos"])
    loaded._donate = set(meta["donate_pos"])
    return loaded


class _Loaded(CompiledFunction):
    """A deserialized function: checks argument count, shapes and dtypes at call time."""

    def __init__(self, trace: _Trace, sig_text: str) -> None:
        self._trace = trace
        self._jitted = None
        self._static = set()
        self._donate = set(trace.donate_args)
        self._sig_text = sig_text

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        sig, leaves = self._signature_of(args, kwargs)
        if repr(sig) != self._sig_text:
            raise TypeError("arguments differ from those the function was compiled for")
        pending = [x._node for x in leaves if isinstance(x, Array) and x._node.buffer is None]
        if pending:
            materialize_nodes(pending, "jit arguments")
        return self._trace.run(leaves)


def compile(fn: Any, *example_args: Any, **example_kwargs: Any) -> CompiledFunction:
    """Compile ``fn`` ahead of time for arguments like ``example_args``."""
    j = fn if isinstance(fn, Jitted) else Jitted(fn)
    return j.compile(*example_args, **example_kwargs)


def cached(fn: Any, *args: Any, **kwargs: Any) -> bool:
    """Whether ``fn`` (a jitted function) already has an executable for these arguments."""
    if not isinstance(fn, Jitted):
        raise TypeError("cached() takes a function made by xla_array.jit")
    return fn.is_cached(*args, **kwargs)
