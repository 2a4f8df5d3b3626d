"""Linear algebra of the main namespace: matmul, matrix_transpose, tensordot, vecdot.

``matmul`` records one ``dot_general`` with batch and contracting dimensions. When an operand
is a recorded transpose of the last two axes, the transpose is folded into the contracting
dimensions, so ``X.T @ v`` never materializes ``X.T``. Which products a native kernel computes
is no concern here: the kernels rewrite the planned graph before it is lowered
(``core/rewrite.py``; ``X.T @ f(X @ w)`` becomes one ``rowpass`` call, ``kernels/rowpass.py``).
"""

from __future__ import annotations

import operator
from typing import Any

from ..core import axes as _axes
from ..core import dtypes as _dtypes
from ..core import flags as _flags
from ..core.graph import record
from ..core.ops.structural import MATVEC, OPS, DotGeneral, broadcast_shapes
from ..kernels import rowpass as _rowpass  # noqa: F401  (registers the row-pass rewrite)
from .array import Array, as_array, wrap
from .elementwise import conj
from .manipulation import broadcast_to, permute_dims, reshape
from .statistical import sum as _sum

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot"]


_arr = as_array  # an array argument; NumPy arrays are converted (see _array.as_array)


def _precision(a: Array) -> str | None:
    """None (XLA's default), "HIGH" or "HIGHEST", from the ``matmul_precision`` setting;
    ``auto`` (the setting's default): float32 products and sums on every device, which is
    XLA's default on CPU and HIGHEST elsewhere (XLA's default on GPUs rounds float32
    operands to TF32 or bfloat16)."""
    p = _flags.get("matmul_precision")
    if p == "auto":
        return None if a.device.platform == "cpu" else "HIGHEST"
    if p == "default":
        return None
    if p not in ("high", "highest"):
        raise ValueError(f"matmul_precision must be auto, default, high or highest, not {p!r}")
    return str(p.upper())


def _numeric(a: Array, b: Array, fname: str) -> _dtypes.DType:
    d = _dtypes.promote(a.dtype, b.dtype)
    if a.dtype.kind == "b" or b.dtype.kind == "b":
        raise TypeError(f"{fname}() needs numeric arrays, got {a.dtype.name} and {b.dtype.name}")
    return d


def matrix_transpose(x: Array, /) -> Array:
    x = _arr(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError("matrix_transpose() needs an array of at least 2 dimensions")
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return permute_dims(x, perm)


def _untransposed(x: Array) -> tuple[Any, bool]:
    """(node, swapped): the node under a 2-D transpose, so dot_general can read it directly."""
    n = x._node
    if n.op.name == "transpose" and n.buffer is None and n.attrs.perm == (1, 0):
        return n.inputs[0], True
    return n, False


def matmul(x1: Array, x2: Array, /) -> Array:
    a = x1 if type(x1) is Array else _arr(x1, "matmul")
    b = x2 if type(x2) is Array else _arr(x2, "matmul")
    sa, sb = a._node.shape, b._node.shape
    if not sa or not sb:
        raise ValueError("matmul() does not take 0-d arrays; use multiply")
    _numeric(a, b, "matmul")
    if len(sa) <= 2 and len(sb) <= 2:  # one dot_general, vectors contracted directly
        ka, kb = sa[-1], sb[0]
        if ka != kb:
            raise ValueError(f"matmul(): shapes {sa} and {sb} do not align ({ka} != {kb})")
        (na, ta), (nb, tb) = _untransposed(a), _untransposed(b)
        # matrix-vector products count 1 towards the auto-flush depth (MATVEC), so a flush
        # rarely lands between X @ w and the X.T @ f(X @ w) the row pass takes whole
        op = OPS["dot_general"] if len(sa) == 2 and len(sb) == 2 else MATVEC
        dims = DotGeneral((), (), (0 if ta else len(sa) - 1,), (1 if tb else 0,), _precision(a))
        return wrap(record(op, (na, nb), dims))
    va, vb = a.ndim == 1, b.ndim == 1
    if va:
        a = reshape(a, (1, a.shape[0]))
    if vb:
        b = reshape(b, (b.shape[0], 1))
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul(): shapes {x1.shape} and {x2.shape} do not align "
                         f"({a.shape[-1]} != {b.shape[-2]})")
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = broadcast_to(a, batch + a.shape[-2:])
    b = broadcast_to(b, batch + b.shape[-2:])
    nbat = tuple(range(len(batch)))
    k = len(batch)
    dims = DotGeneral(nbat, nbat, (k + 1,), (k,), _precision(a))
    out = wrap(record(OPS["dot_general"], (a._node, b._node), dims))
    if va and vb:
        return reshape(out, batch)
    if va:
        return reshape(out, batch + (out.shape[-1],))
    if vb:
        return reshape(out, batch + (out.shape[-2],))
    return out


def tensordot(x1: Array, x2: Array, /, *, axes: Any = 2) -> Array:
    a, b = _arr(x1, "tensordot"), _arr(x2, "tensordot")
    _numeric(a, b, "tensordot")
    if isinstance(axes, int) or (hasattr(axes, "__index__") and not isinstance(axes, tuple)):
        n = operator.index(axes)
        if n < 0 or n > min(a.ndim, b.ndim):
            raise ValueError(f"tensordot(): axes={n} out of range")
        ca = tuple(range(a.ndim - n, a.ndim))
        cb = tuple(range(n))
    else:
        if len(axes) != 2 or len(axes[0]) != len(axes[1]):
            raise ValueError("tensordot(): axes must be an int or two sequences of equal length")
        ca = tuple(_axes.axis(i, a.ndim, "tensordot") for i in axes[0])
        cb = tuple(_axes.axis(i, b.ndim, "tensordot") for i in axes[1])
    for i, j in zip(ca, cb):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot(): axis {i} of {a.shape} and axis {j} of {b.shape} "
                             f"differ in size")
    return wrap(record(OPS["dot_general"], (a._node, b._node),
                       DotGeneral((), (), ca, cb, _precision(a))))


def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    a, b = _arr(x1, "vecdot"), _arr(x2, "vecdot")
    _numeric(a, b, "vecdot")
    shape = broadcast_shapes(a.shape, b.shape)
    ax = _axes.axis(axis, len(shape), "vecdot")
    if axis >= 0 and (axis >= a.ndim or axis >= b.ndim):
        raise ValueError("vecdot(): a non-negative axis must exist in both arrays")
    na, nb = ax - len(shape) + a.ndim, ax - len(shape) + b.ndim
    if na < 0 or nb < 0 or a.shape[na] != b.shape[nb]:
        raise ValueError(f"vecdot(): shapes {a.shape} and {b.shape} differ on axis {axis}")
    prod = (conj(a) if a.dtype.kind == "c" else a) * b
    return _sum(prod, axis=ax, dtype=prod.dtype)
