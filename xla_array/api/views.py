"""Views: arrays that NumPy would give as views of another, so that writes reach that base.

``x[1:]``, ``x.T``, ``permute_dims``/``moveaxis``/``swapaxes``, ``flip``, ``expand_dims``,
``squeeze`` and a ``reshape`` NumPy can do without copying give an Array holding a ``View``
record: its base (held, as NumPy's ``.base``), how it was made from the base (an index key, or a
``Transform``: one recorded op each way), the base's node when the view was last in step with
it, and the view's depth. A write into the view (``v[...] = ...``, ``v += 1``, NumPy writing into
``np.asarray(v)``) is written back into the base by ``Array._rebind``, and a write into the base
(or through one of its views) is carried forward into its other live views (each a new lazy
node computed from the base), so views see each other's writes as NumPy's, which share memory,
do. A view whose base changed otherwise is refreshed from it before the next write
(``Array._sync``).

Whether a reshape is a view is NumPy's own rule, asked of NumPy on a model of the strides: an
array that is no view is C-contiguous; a view's model is its base's model put through the same
key or transform (``numpy.lib.stride_tricks.as_strided`` over one byte, never read). Views of
views deeper than ``MAX_DEPTH`` (64; SciPy's oaconvolve writes through 9 levels) are copies.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np

from ..core.graph import Node, record
from ..core.ops.structural import OPS, Transpose

__all__ = ["LOCK", "MAX_DEPTH", "TRANSPOSE_2D", "Transform", "View", "attach", "has_views",
           "reshaped_model", "strides_model", "views_of"]

MAX_DEPTH = 64


class Transform:
    """A whole-array view: ``fwd`` and ``back`` are ``(op name, attrs)`` of one recorded op each
    (base -> view, view -> base), or None for the identity; ``model`` maps the base's stride
    model to the view's."""

    __slots__ = ("fwd", "back", "model")

    def __init__(self, fwd: tuple | None, back: tuple | None, model: Any) -> None:
        self.fwd, self.back, self.model = fwd, back, model

    def apply(self, node: Node, which: tuple | None) -> Node:
        return node if which is None else record(OPS[which[0]], (node,), which[1])


TRANSPOSE_2D = Transform(("transpose", Transpose((1, 0))), ("transpose", Transpose((1, 0))),
                         lambda m: m.T)


class View:
    """The view record of an Array (see the module docstring)."""

    __slots__ = ("base", "how", "base_node", "depth", "_model")

    def __init__(self, base: Any, how: Any, depth: int) -> None:
        self.base, self.how, self.depth = base, how, depth
        self.base_node = weakref.ref(base._node)
        self._model: np.ndarray | None = None

    def model(self) -> np.ndarray:
        if self._model is None:
            m = strides_model(self.base)
            self._model = self.how.model(m) if isinstance(self.how, Transform) else m[self.how]
        return self._model


def strides_model(a: Any) -> np.ndarray:
    """An ndarray of ``a``'s shape with the strides NumPy would give it (no memory behind it
    that is ever read)."""
    v = a._view
    if v is not None:
        return v.model()
    shape = a._node.shape
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return np.lib.stride_tricks.as_strided(_BYTE, shape, tuple(reversed(strides)),
                                           writeable=False)


_BYTE = np.zeros(1, np.int8)


def reshaped_model(a: Any, shape: tuple) -> np.ndarray | None:
    """The stride model of the view ``a`` reshaped to ``shape`` when NumPy can reshape it
    without a copy, else None (an array that is no view always can: ``reshape`` asks only of
    views)."""
    m = strides_model(a)
    try:
        return m.reshape(shape, copy=False)
    except ValueError:  # NumPy would copy
        return None
    except TypeError:  # NumPy 2.0: no copy= yet, setting the shape is the no-copy reshape
        r = m.view()
        try:
            r.shape = shape
        except AttributeError:
            return None
        return r


# held while a write goes through views (write-back into bases, carrying into sibling views), so
# that threads writing into sibling views of one base (SciPy's ndimage with output=out[i]) do
# not lose each other's writes
# ``base[key]`` and ``base[key] = value`` (api/indexing.py, which is built on Array):
# array_methods.py installs them; a view of a basic key reads and writes its base through them
index_get: Any = None
index_set: Any = None

LOCK = threading.RLock()

# id(base) -> weak references to its views, so that a write into the base (or through another
# of its views) reaches the live ones, as NumPy's views share memory; entries whose views are all
# gone are pruned as the table grows
_children: dict[int, list] = {}
# held while ``_children`` changes: threads creating views of one base, or pruning the table
# while another adds to it, lost registrations (a view that no longer saw writes into its base)
# or raised "dictionary changed size during iteration" (tests/test_threads.py, 1 run in ~3)
_TABLE = threading.Lock()


def attach(out: Any, base: Any, how: Any) -> Any:
    """Make ``out`` a view of ``base`` (``how``: an index key or a Transform); returns ``out``.
    Past ``MAX_DEPTH`` views of views, ``out`` stays a copy."""
    depth = 1 if base._view is None else base._view.depth + 1
    if depth <= MAX_DEPTH:
        out._view = View(base, how, depth)
        ref = weakref.ref(out)
        with _TABLE:
            kids = _children.get(id(base))
            if kids is None:
                if len(_children) >= _prune_at[0]:
                    _prune()
                kids = _children[id(base)] = []
            elif len(kids) >= 16:
                kids[:] = [r for r in kids if r() is not None]
            kids.append(ref)
    return out


_prune_at = [1024]


def _prune() -> None:
    """Drop the entries whose views are all gone (a view holds its base, so a base that is
    gone has no live view: its id may be reused, and ``views_of`` checks the base). Called
    with ``_TABLE`` held."""
    for k in [k for k, kids in list(_children.items()) if all(r() is None for r in kids)]:
        del _children[k]
    _prune_at[0] = max(1024, 2 * len(_children))


def has_views(a: Any) -> bool:
    """Whether ``a`` may have live views (cheap; ``views_of`` says which)."""
    return id(a) in _children


def views_of(base: Any) -> list:
    """The live views of ``base``."""
    kids = _children.get(id(base))
    if not kids:
        return []
    live = [v for v in (r() for r in kids) if v is not None and v._view is not None
            and v._view.base is base]
    if len(live) != len(kids):
        with _TABLE:  # (another thread may have added a view meanwhile: keep it)
            kids = _children.get(id(base))
            if kids is not None:
                kids[:] = [r for r in kids if (v := r()) is not None and v._view is not None
                           and v._view.base is base]
                if not kids:
                    del _children[id(base)]
    return live


VIEW_ITEM = (int, slice, type(Ellipsis), type(None), np.integer)


def is_view_key(key: Any, ndim: int) -> bool:
    """Whether NumPy gives a view for ``x[key]``: basic items only, not an integer per axis."""
    ks = key if type(key) is tuple else (key,)
    ints = 0
    for k in ks:
        if type(k) is bool or isinstance(k, np.bool_) or not isinstance(k, VIEW_ITEM):
            return False
        if k is not None and k is not Ellipsis and type(k) is not slice:
            ints += 1
    return ints < ndim or ints < len(ks)

