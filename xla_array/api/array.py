"""The Array class: a handle on a graph node, with metadata known at record time.

``.shape``, ``.dtype``, ``.device``, ``.ndim``, ``.size`` and ``len()`` never compute anything.
Values are computed only at the materialization points (``__array__``, ``__dlpack__``,
``__bool__``/``__int__``/``__float__``/``__complex__``/``__index__``, ``repr``/``str``,
``tolist``, iteration, and ``xla_array.materialize``). In-place operators and ``__setitem__``
record a new node and rebind this handle to it, so every reference to the Array sees the change.

Views, as NumPy: ``v = x[key]`` with a basic key (integers, slices, ``...``, ``None``; not
integers for every axis, which gives a copy in NumPy too) remembers ``x`` weakly, and a write
to ``v`` (``v[k] = ...``, ``v += ...``) is written back into ``x`` (libraries rely on this, e.g.
scikit-learn adds to the diagonal of ``covariances[k, :, :]``). Views see writes made through
their base or another view of it, as NumPy's views, which share memory, do (docs/laziness.md,
"In-place updates and views").
"""

from __future__ import annotations

import math
import sys as _sys
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import backend as _backend
from ..core import dtypes as _dtypes
from ..core import executor as _executor
from ..core import flags as _flags
from ..core import graph as _graph
from ..core import metrics as _metrics
from ..core.devices import Device, resolve
from ..core.dtypes import DType
from ..core.executor import check_buffers, materialize_nodes, value_buffer, value_host
from ..core.graph import Node, Placeholder, TracedScalar, record, scalar_leaf
from ..core.host import HostCopy, host_leaf
from ..core.ops.structural import OPS, Transpose
from . import views as _views
from .dlpack import dlpack_device, to_dlpack
from .inspection import namespace_for

__all__ = ["Array", "wrap", "as_array", "as_node", "operand_nodes", "host_leaf"]

_PYSCALAR = (bool, int, float, complex)
_WEAK = (bool, int, float, complex, TracedScalar)


class _ArrayBase:
    """The handle part of Array: its node, its view record and the node's count of Array
    handles (``users``, kept as handles are made and freed). The C core replaces it with
    ``_graphcore.ArrayBase`` (same attributes; ``Array()`` with no node is for unpickling)."""

    __slots__ = ("_node", "_view", "__weakref__")

    def __init__(self, node: Node | None = None) -> None:
        self._view: Any = None  # a _views.View when this array is a view of another
        if node is not None:
            self._node = node
            node.users += 1

    def __del__(self) -> None:
        try:
            self._node.users -= 1
        except AttributeError:  # half-built object or interpreter shutdown
            pass


if _graph.NATIVE:
    from ..core._graphcore import ArrayBase as _ArrayBase  # type: ignore[assignment,no-redef]


class Array(_ArrayBase):
    """A lazily computed n-dimensional array (see the module docstring)."""

    __slots__ = ()
    __array_priority__ = 100

    def _rebind(self, node: Node, source: Array | None = None) -> None:
        """Make ``node`` this array's value: written back into the base when this is a view,
        carried into this array's own views but ``source`` (the view that wrote it)."""
        if self._view is None and not _views.has_views(self):
            node.users += 1
            old, self._node = self._node, node
            old.users -= 1
            return
        with _views.LOCK:
            self._rebind_view(node, source)

    def _rebind_view(self, node: Node, source: Array | None) -> None:
        node.users += 1
        old, self._node = self._node, node
        old.users -= 1
        v = self._view
        if v is not None:  # a view: write the new value back into its base (see views)
            base = v.base
            base._sync()
            how = v.how
            if isinstance(how, _views.Transform):
                back = how.apply(node, how.back)
            else:
                back = _views.index_set(base, how, self)._node
            base._rebind(back, self)
            v.base_node = weakref.ref(base._node)
        for w in _views.views_of(self):
            if w is not source:
                w._refresh()

    def _refresh(self) -> None:
        """Recompute this view from its base (which was just written), then its own views."""
        v = self._view
        base, how = v.base, v.how
        if isinstance(how, _views.Transform):
            node = how.apply(base._node, how.fwd)
        else:
            node = _views.index_get(base, how)._node
        node.users += 1
        self._node.users -= 1
        self._node = node
        v.base_node = weakref.ref(base._node)
        for w in _views.views_of(self):
            w._refresh()

    def _sync(self) -> None:
        """Refresh a view from its base when the base changed since (before a write)."""
        v = self._view
        if v is None:
            return
        base = v.base
        base._sync()
        if base._node is not v.base_node():
            self._refresh()

    # ---------------------------------------------------------------- metadata
    @property
    def dtype(self) -> DType:
        return self._node.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self._node.shape

    @property
    def ndim(self) -> int:
        return len(self._node.shape)

    @property
    def size(self) -> int:
        return math.prod(self._node.shape)

    @property
    def device(self) -> Device:
        """The Device, or for an array spread over several devices the ``sharding.Mesh``."""
        return self._node.device

    def __len__(self) -> int:
        if not self._node.shape:
            raise TypeError("len() of a 0-d array")
        return self._node.shape[0]

    @property
    def T(self) -> Array:
        n = self._node
        if len(n.shape) != 2:
            raise ValueError(f"x.T needs a 2-D array, got {len(n.shape)}-D; use "
                             f"matrix_transpose or permute_dims")
        return _views.attach(wrap(record(OPS["transpose"], (n,), Transpose((1, 0)))), self,
                             _views.TRANSPOSE_2D)

    @property
    def is_pending(self) -> bool:
        """True while this array's value has not been computed yet."""
        return self._node.buffer is None

    # ---------------------------------------------------------------- materialization
    # ``self._node`` is read once: another thread may rebind this handle (``x += 1``) at any
    # moment, and the node read first is the value these return
    def _buffer(self, cause: str) -> Any:
        return value_buffer(self._node, cause)

    def _host(self, cause: str) -> np.ndarray:
        return value_host(self._node, cause)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """The value as a writable NumPy array, as NumPy's ``asarray`` gives for NumPy input:
        libraries write into ``np.asarray(x)`` (SciPy's ``ndimage`` fills ``output=`` arrays
        so, ``signal.sosfilt`` hands it to Cython as a writable buffer). With ``copy=None``
        (``np.asarray(x)``) writes into it reach ``x`` when that NumPy array is released, as
        NumPy's own write-back-if-copy arrays do (see ``HostCopy``); ``copy=True``
        (``np.array(x)``) gives an independent copy; ``copy=False``
        (``np.asarray(x, copy=False)``) the zero-copy read-only view of a CPU buffer."""
        n = self._node  # (once: see _buffer)
        a = self._host("__array__")
        if dtype is not None and np.dtype(dtype) != a.dtype:
            if copy is False:
                raise ValueError(f"__array__(copy=False): converting {a.dtype} to "
                                 f"{np.dtype(dtype)} needs a copy")
            return a.astype(dtype)
        if copy is False:
            return a
        if copy or n.dtype.np != a.dtype:  # (int4 values come unpacked: not a view of x)
            return a.copy()
        return HostCopy.of(self, n, a)

    def _scalar(self, cause: str) -> Any:
        n = self._node
        if n.shape and math.prod(n.shape) != 1:
            raise TypeError(f"only arrays of one element can be converted to Python scalars "
                            f"({cause}() of an array of shape {n.shape})")
        if n.buffer is None:  # (inlined _buffer: bool()/float() of a fresh result is hot)
            materialize_nodes([n], cause)
        buf = n.buffer
        if type(buf) is Placeholder:
            check_buffers([n])
        _metrics.count("bytes_to_host", n.dtype.itemsize)
        a = _backend.to_numpy(buf)
        return a[()] if not n.shape else a.reshape(())[()]

    def __bool__(self) -> bool:
        n = self._node
        if n.shape and math.prod(n.shape) != 1:  # NumPy's exception and words
            if math.prod(n.shape) == 0:
                raise ValueError("The truth value of an empty array is ambiguous. Use "
                                 "`array.size > 0` to check that an array is not empty.")
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self._scalar("bool"))

    def __int__(self) -> int:
        if self.dtype.kind == "c":
            raise TypeError("int() of a complex array")
        v = self._scalar("int")
        if self.dtype.kind == "f" and not np.isfinite(v):
            raise (OverflowError if np.isinf(v) else ValueError)(f"cannot convert {v} to int")
        return int(v)

    def __float__(self) -> float:
        if self.dtype.kind == "c":
            raise TypeError("float() of a complex array; use real() first")
        return float(self._scalar("float"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __index__(self) -> int:
        if self.dtype.kind not in "iu":
            raise TypeError(f"only integer arrays can be used as an index, not {self.dtype}")
        return int(self._scalar("index"))

    def tolist(self) -> Any:
        return self._host("tolist").tolist()

    def item(self) -> Any:
        return self._scalar("item").item()

    def __iter__(self) -> Any:
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        a = self._host("repr")
        body = np.array2string(a, separator=", ", prefix="Array(", threshold=1000)
        return f"Array({body}, dtype={self.dtype.name})"

    def __str__(self) -> str:
        a = self._host("str")
        if a.ndim == 0:  # NumPy's: the scalar's text (3.0, not 3.)
            return str(a[()])
        return np.array2string(a, threshold=1000)

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self._scalar("str").item(), spec)
        return str(self)

    # ---------------------------------------------------------------- dlpack
    def __dlpack__(self, *, stream: Any = None, max_version: tuple | None = None,
                   dl_device: tuple | None = None, copy: bool | None = None) -> Any:
        return to_dlpack(self, stream=stream, max_version=max_version, dl_device=dl_device,
                         copy=copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        return dlpack_device(self)

    # ---------------------------------------------------------------- namespace / devices
    def __array_namespace__(self, *, api_version: str | None = None) -> Any:
        # called tens of thousands of times per scikit-learn fit: no import on the fast path
        if api_version is None:
            return _sys.modules["xla_array"]
        return namespace_for(api_version)

    def __copy__(self) -> Array:
        return Array(self._node)

    def __deepcopy__(self, memo: Any) -> Array:
        return Array(self._node)

    def __getstate__(self) -> Any:
        return {"data": np.array(self), "device": str(self.device),
                "committed": self._node.committed}

    def __setstate__(self, state: Any) -> None:
        node = host_leaf(np.asarray(state["data"]), state["device"],
                         committed=state.get("committed", False))
        object.__setattr__(self, "_node", node)
        object.__setattr__(self, "_view", None)
        node.users += 1

    __hash__ = None  # type: ignore[assignment]

    if TYPE_CHECKING:  # installed from above (array_methods.py, sharding.py): declared here
        @property
        def mT(self) -> Array: ...
        @property
        def sharding(self) -> Any: ...
        def to_device(self, device: Any, /, *, stream: Any = None) -> Array: ...
        def __getitem__(self, key: Any, /) -> Array: ...
        def __setitem__(self, key: Any, value: Any, /) -> None: ...
        def __add__(self, other: Any, /) -> Array: ...
        def __radd__(self, other: Any, /) -> Array: ...
        def __iadd__(self, other: Any, /) -> Array: ...
        def __sub__(self, other: Any, /) -> Array: ...
        def __rsub__(self, other: Any, /) -> Array: ...
        def __isub__(self, other: Any, /) -> Array: ...
        def __mul__(self, other: Any, /) -> Array: ...
        def __rmul__(self, other: Any, /) -> Array: ...
        def __imul__(self, other: Any, /) -> Array: ...
        def __truediv__(self, other: Any, /) -> Array: ...
        def __rtruediv__(self, other: Any, /) -> Array: ...
        def __itruediv__(self, other: Any, /) -> Array: ...
        def __floordiv__(self, other: Any, /) -> Array: ...
        def __rfloordiv__(self, other: Any, /) -> Array: ...
        def __ifloordiv__(self, other: Any, /) -> Array: ...
        def __mod__(self, other: Any, /) -> Array: ...
        def __rmod__(self, other: Any, /) -> Array: ...
        def __imod__(self, other: Any, /) -> Array: ...
        def __pow__(self, other: Any, /) -> Array: ...
        def __rpow__(self, other: Any, /) -> Array: ...
        def __ipow__(self, other: Any, /) -> Array: ...
        def __matmul__(self, other: Any, /) -> Array: ...
        def __rmatmul__(self, other: Any, /) -> Array: ...
        def __imatmul__(self, other: Any, /) -> Array: ...
        def __and__(self, other: Any, /) -> Array: ...
        def __rand__(self, other: Any, /) -> Array: ...
        def __iand__(self, other: Any, /) -> Array: ...
        def __or__(self, other: Any, /) -> Array: ...
        def __ror__(self, other: Any, /) -> Array: ...
        def __ior__(self, other: Any, /) -> Array: ...
        def __xor__(self, other: Any, /) -> Array: ...
        def __rxor__(self, other: Any, /) -> Array: ...
        def __ixor__(self, other: Any, /) -> Array: ...
        def __lshift__(self, other: Any, /) -> Array: ...
        def __rlshift__(self, other: Any, /) -> Array: ...
        def __ilshift__(self, other: Any, /) -> Array: ...
        def __rshift__(self, other: Any, /) -> Array: ...
        def __rrshift__(self, other: Any, /) -> Array: ...
        def __irshift__(self, other: Any, /) -> Array: ...
        def __lt__(self, other: Any, /) -> Array: ...
        def __le__(self, other: Any, /) -> Array: ...
        def __gt__(self, other: Any, /) -> Array: ...
        def __ge__(self, other: Any, /) -> Array: ...
        def __eq__(self, other: Any, /) -> Array: ...  # type: ignore[override]
        def __ne__(self, other: Any, /) -> Array: ...  # type: ignore[override]
        def __neg__(self) -> Array: ...
        def __pos__(self) -> Array: ...
        def __abs__(self) -> Array: ...
        def __invert__(self) -> Array: ...


# last node's site, over_seen, armed, seq of the node that turned the loop (see wrap)
_wrap_state: list = [None, False, False, 0]
# [whether a loop was cut since the last explicit materialization, weak references to the
# Arrays recorded since its last cut]: the next explicit materialization also computes those
# still held (``_held_loop_state``), so that the next run of the loop starts with nothing
# pending and its graphs are cut where this run's were. At most _LOOP_CAP references (then
# the loop is forgotten until its next cut)
_loop: list = [False, []]
_LOOP_CAP = 4096


def wrap(node: Node) -> Array:
    """Make an Array of a freshly recorded node, flushing long pending graphs: once past
    ``max_pending``, at the start of the next loop iteration (``_cut``), else at half of
    ``max_pending`` more (``_flush``). The same rule as the C core's wrap (``graphcore.c``,
    where it is explained)."""
    st = _wrap_state
    lim = _flags._values["max_pending"]
    if node.depth > lim and _graph.refresh_depth(node) > lim:
        st[1] = True
    site, prev = node.site, st[0]
    if site is not None:
        if st[1] and prev is not None and site[0] is prev[0] and site[1] <= prev[1]:
            st[2], st[3] = True, node.seq  # the loop went round
        st[0] = site
    if st[2] and any(x.pending and x.depth > lim and x.seq < st[3] for x in node.inputs):
        st[1] = st[2] = False
        _cut(node)
    elif node.depth - lim > lim // 2:
        st[1] = st[2] = False
        _flush(node)
    a = Array(node)
    if _loop[0]:
        refs = _loop[1]
        refs.append(weakref.ref(a))
        if len(refs) > _LOOP_CAP:
            _loop[0] = False
            del refs[:]
    return a


def _flush(node: Node) -> None:
    _metrics.count("auto_flushes")
    materialize_nodes([node], "auto_flush")


def _cut(node: Node) -> None:
    """Auto-flush before ``node`` (just recorded, the first of a loop iteration): compute its
    pending inputs and what they reach, so that ``node`` starts the next graph."""
    roots = [x for x in node.inputs if x.pending]
    if not roots or any(x.op.nout != 1 for x in roots):  # a multi-result op: compute node
        _flush(node)
        return
    _metrics.count("auto_flushes")
    materialize_nodes(roots, "auto_flush")
    node.depth = node.op.weight  # its inputs are buffers now
    _loop[0] = True
    del _loop[1][:]


def _held_loop_state() -> list[Node]:
    """The pending nodes of the Arrays recorded since the last cut of a loop and still held
    (the state the loop carries: ``w`` in ``for ...: p = f(w); w = w - g(p)``), computed with
    any explicit materialization. Without them, a loop run again (an epoch, a function called
    again) started with the previous run's last iterations still pending, so its graphs were cut
    at other places than the previous run's: new structures, a compile, on every run. Only
    between a cut and the next explicit materialization: elsewhere laziness is unchanged."""
    refs = _loop[1]
    _loop[0] = False
    out = []
    for r in refs:
        a = r()
        if a is not None:
            n = a._node
            if n.buffer is None and n.op is not _graph.SCALAR:
                out.append(n)
    del refs[:]
    return out


_executor.SYNC_EXTRA[:] = [_held_loop_state, _loop[1]]

if _graph.NATIVE:  # the same in C (every recorded op returns through wrap)
    _graph._graphcore.configure_array(Array, _flush, _cut, _flags._values, _loop)
    wrap = _graph._graphcore.wrap  # type: ignore[assignment]


def as_array(x: Any, fname: str) -> Array:
    """An array argument of a namespace function: an Array as it is; a NumPy array or NumPy
    scalar converted as ``asarray`` would (uncommitted: it follows the device of the other
    operands); anything else (lists, Python scalars...) raises TypeError, as the standard
    wants arrays there. ``fname`` names the function in the message."""
    if isinstance(x, Array):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        a = np.asarray(x)
        try:
            d = _dtypes.from_numpy(a.dtype)
        except TypeError:
            raise TypeError(f"{fname}(): unsupported dtype {a.dtype}") from None
        return Array(host_leaf(a, None, d))
    raise TypeError(f"{fname}() expects an array, got {type(x).__name__}")


def as_node(x: Any, like: Node | None, fname: str) -> Node:
    """The node of an operand: an Array, a Python scalar (a weak runtime parameter shaped by
    ``like``), a NumPy scalar (a strongly typed parameter) or a NumPy array (copied over)."""
    t = type(x)
    if t is Array:
        return x._node
    if t is float:  # (inlined weak typing: the hot path of `x * 0.5`)
        if like is None:
            raise TypeError(f"{fname}() needs at least one array argument")
        d = like.dtype
        if d.kind not in "fc":
            d = _dtypes.default_float
        return scalar_leaf(x, d, like.device)
    if t is int:
        if like is None:
            raise TypeError(f"{fname}() needs at least one array argument")
        d = like.dtype
        if d.kind in "iu":
            _check_range(x, d, fname)
        elif d.kind == "b":
            d = _dtypes.default_int
        return scalar_leaf(x, d, like.device)
    if isinstance(x, Array):
        return x._node
    if isinstance(x, np.generic):
        d = _dtypes.from_numpy(x.dtype)
        dev = like.device if like is not None else resolve(None)
        return scalar_leaf(x, d, dev)
    if isinstance(x, _PYSCALAR):
        if like is None:
            raise TypeError(f"{fname}() needs at least one array argument")
        d = _dtypes.weak_result(like.dtype, x)
        _check_range(x, d, fname)
        return scalar_leaf(x, d, like.device)
    if t is TracedScalar:
        if like is None:
            raise TypeError(f"{fname}() needs at least one array argument")
        return scalar_leaf(x, _dtypes.weak_result(like.dtype, x.sample), like.device)
    if isinstance(x, np.ndarray):
        return host_leaf(x, like.device if like is not None else None)
    raise TypeError(f"{fname}() got an argument of type {type(x).__name__}; expected an "
                    f"array or a Python scalar")


_BOUNDS: dict[DType, tuple[int, int]] = {}


def _check_range(x: Any, d: DType, fname: str) -> None:
    if d.kind in "iu" and type(x) is not bool and isinstance(x, int):
        b = _BOUNDS.get(d)
        if b is None:
            ii = _dtypes.iinfo(d)
            b = _BOUNDS[d] = (ii.min, ii.max)
        if not b[0] <= x <= b[1]:
            raise OverflowError(f"{fname}(): Python integer {x} is out of bounds for {d.name}")


def operand_nodes(fname: str, *xs: Any) -> list[Node]:
    """Nodes of an op's operands, with Python scalars typed after the first array operand."""
    if len(xs) == 2:  # fast path: array op array, array op Python scalar
        a, b = xs
        if type(a) is Array:
            if type(b) is Array:
                return [a._node, b._node]
            if type(b) in _PYSCALAR:
                return [a._node, as_node(b, a._node, fname)]
        elif type(b) is Array and type(a) in _PYSCALAR:
            return [as_node(a, b._node, fname), b._node]
    nodes: list[Node | None] = [None] * len(xs)
    like = None
    for i, x in enumerate(xs):
        if not isinstance(x, _WEAK) or isinstance(x, np.generic):
            nodes[i] = as_node(x, like, fname)
            if like is None or isinstance(x, Array) and like.op.name == "scalar":
                like = nodes[i]
    if like is None:
        raise TypeError(f"{fname}() needs at least one array argument")
    return [n if n is not None else as_node(x, like, fname) for n, x in zip(nodes, xs)]
