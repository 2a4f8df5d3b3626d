"""``X.T @ f(X @ w)`` in one pass over X: the native row-pass kernel and the rewrite that
selects it.

A gradient step of a linear model is ``X.T @ f(X @ w)`` with ``f`` elementwise: ``X @ w - y``
(least squares), ``sigmoid(X @ w) - y`` (logistic regression), plain ``X @ w`` (power iteration
on ``X.T X``). XLA runs the two matrix-vector products as two passes over X, each on one
thread; the kernel (``native/rowpass_ffi.c``, target ``xla_array_rowpass``) reads each block
of rows once, applying ``f`` in between, and splits the rows over XLA's CPU thread pool.

Its selection rule is a rewrite of the planned graph (``core/rewrite.py``): for a
matrix-vector ``dot_general`` contracting the rows of a matrix X with a pending vector ``v``
(``X.T @ v`` or ``v @ X``, as ``matmul`` records them), ``fuse`` checks whether ``v`` is an
elementwise expression of ``t = X @ w`` (the same X node), of other length-n vectors and of
scalars; if so, the product is lowered as one ``rowpass`` node whose operands are X, w and
those vectors and scalars, and ``f`` a small program (the opcodes of the C file). The
recorded graph is left as it is: ``t`` and ``v`` are still computed where an Array holds them,
and XLA drops them otherwise. ``XLA_ARRAY_ROWPASS=0`` turns the kernel off.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..core import dtypes as dt
from ..core import registry
from ..core.devices import Device
from ..core.graph import SCALAR
from ..core.lower import Emitter, tensor_type
from ..core.ops.elementwise import compute_dtype
from ..core.ops.linalg import layout
from ..core.ops.structural import define
from . import library

__all__ = ["available", "error", "fuse", "rule", "RowPass", "TARGET", "MIN_SIZE", "MIN_ROWS",
           "OPCODES"]

TARGET = "xla_array_rowpass"

# Which products take the kernel: X of at least MIN_SIZE elements and MIN_ROWS rows. Below
# that, handing rows to a second thread costs more than the pass saves (figures in
# docs/architecture.md, "Native kernels").
MIN_SIZE = 1 << 17
MIN_ROWS = 512

# elementwise op name -> opcode of rowpass_ffi.c (binary ops 10-15, unary 20-29)
OPCODES = {"add": 10, "subtract": 11, "multiply": 12, "divide": 13, "maximum": 14,
           "minimum": 15, "negative": 20, "abs": 21, "square": 22, "sqrt": 23, "exp": 24,
           "expm1": 25, "log": 26, "log1p": 27, "tanh": 28, "reciprocal": 29}
_WALK = {**OPCODES, "positive": 0}  # ops f may contain (positive: no instruction)
_LOADV, _LOADS = 1, 2
_MAX_PROG, _MAX_IN = 64, 16  # the C file's limits
_DTYPES = (dt.float32, dt.float64)


_LIB = library.handler_library("row-pass kernel", "XLA's dots", "rowpass_ffi", "xa_rowpass",
                               TARGET)


def available() -> bool:
    """Load (once) and register the kernel; False if it was not built or cannot be used."""
    return _LIB.available()


def error() -> str:
    """Why ``available()`` is False ('' when it is not)."""
    return _LIB.error


def rule(n: Any) -> tuple[tuple, RowPass] | None:
    """The selection rule: for a matrix-vector ``dot_general`` node that contracts the rows of
    a matrix X with a vector v (``X.T @ v``, ``v @ X``), the (inputs, attrs) of the ``rowpass``
    node computing it when v is ``f(X @ w)``; else None."""
    at = n.attrs
    if at.lhs_batch or len(n.shape) != 1 or at.lhs_contract != (0,) or at.rhs_contract != (0,):
        return None
    a, b = n.inputs
    if len(a.shape) == 2 and len(b.shape) == 1:
        X, v = a, b  # X.T @ v
    elif len(a.shape) == 1 and len(b.shape) == 2:
        X, v = b, a  # v @ X
    else:
        return None
    m = fuse(X, v, n.device)
    return None if m is None else (m[0], RowPass(m[1]))


def _is_xw(t: Any, X: Any) -> Any:
    """The w of ``t = X @ w`` (or ``w @ X.T``) recorded on this very X node, with X's dtype
    throughout, else None."""
    if t.op.name != "dot_general" or t.buffer is not None or t.dtype is not X.dtype:
        return None
    a, b = t.inputs
    at = t.attrs
    if at.lhs_batch or at.rhs_batch:
        return None
    if a is X and len(b.shape) == 1 and at.lhs_contract == (1,) and at.rhs_contract == (0,):
        w = b
    elif b is X and len(a.shape) == 1 and at.lhs_contract == (0,) and at.rhs_contract == (1,):
        w = a
    else:
        return None
    return w if w.dtype is X.dtype else None


def fuse(X: Any, v: Any, device: Any) -> tuple[tuple, tuple] | None:
    """For ``X.T @ v`` (nodes): (operands, program) of the row-pass kernel, or None.

    Operands are X, w, then the length-n vectors and the scalars ``f`` reads; the program lists
    ``f`` as (opcode, a, b, 0) per instruction, register 0 being ``X @ w``."""
    n, d = X.shape
    dtype = X.dtype
    if (v.buffer is not None or v.op.nout != 1 or dtype not in _DTYPES or v.dtype is not dtype
            or n * d < MIN_SIZE or n < MIN_ROWS or type(device) is not Device
            or device.platform != "cpu"):
        return None
    m = _one_op(X, v, n, dtype)
    return m if m is not None else _walk(X, v, n, dtype)


def _one_op(X: Any, v: Any, n: int, dtype: Any) -> tuple[tuple, tuple] | None:
    """``fuse`` for the commonest ``f``, one binary op of ``t = X @ w`` and a computed vector
    or a scalar (``X @ w - y``, ``y - X @ w``, ``X @ w * s``): the same operands and program as
    ``_walk`` at a third of its cost (the record path of a GD step). None: ask ``_walk``."""
    code = OPCODES.get(v.op.name)
    if (code is None or code >= 20 or v.shape != (n,) or v.dtype is not dtype
            or compute_dtype(v) is not dtype):
        return None
    a, b = v.inputs
    w = _is_xw(a, X)
    if w is not None:
        u, prog_op = b, (code, 0, 1, 0)
    else:
        w = _is_xw(b, X)
        if w is None:
            return None
        u, prog_op = a, (code, 1, 0, 0)
    if (u.buffer is None and u.op is not SCALAR) or u.dtype is not dtype:
        return None
    if u.shape == (n,):
        return (X, w, u), (_LOADV, 0, 0, 0) + prog_op
    if u.shape == ():
        return (X, w, u), (_LOADS, 0, 0, 0) + prog_op
    return None


def _walk(X: Any, v: Any, n: int, dtype: Any) -> tuple[tuple, tuple] | None:
    """``fuse``'s general case: an iterative post-order walk of ``v``'s expression."""
    w = None
    vecs: list[Any] = []
    scalars: list[Any] = []
    prog: list[int] = []
    reg: dict[Any, int] = {}  # node -> register holding it
    # iterative post-order walk of v's expression, stopping at X @ w, vectors and scalars
    stack: list[tuple[Any, int]] = [(v, 0)]
    while stack:
        node, i = stack.pop()
        if node in reg:
            continue
        if i == 0:
            ww = _is_xw(node, X)
            if ww is not None:
                if w is not None and ww is not w:
                    return None  # X @ w1 and X @ w2: not one pass
                w = ww
                reg[node] = 0
                continue
            code = _WALK.get(node.op.name) if node.buffer is None else None
            if (code is None or node.shape != (n,) or node.dtype is not dtype
                    or compute_dtype(node) is not dtype):  # an operand of f, computed by XLA
                if node is v or node.dtype is not dtype:
                    return None
                if node.shape == (n,):  # computed by XLA, read by the kernel
                    if len(vecs) == _MAX_IN:
                        return None
                    vecs.append(node)
                    prog += (_LOADV, len(vecs) - 1, 0, 0)  # (length checked at the end)
                    reg[node] = len(prog) // 4
                    continue
                if node.shape == ():
                    if len(scalars) == _MAX_IN:
                        return None
                    scalars.append(node)
                    prog += (_LOADS, len(scalars) - 1, 0, 0)
                    reg[node] = len(prog) // 4
                    continue
                return None
        ins = node.inputs
        if i < len(ins):
            stack.append((node, i + 1))
            stack.append((ins[i], 0))
            continue
        if node.op.name == "positive":
            reg[node] = reg[ins[0]]
            continue
        code = OPCODES[node.op.name]
        prog += (code, reg[ins[0]], reg[ins[1]] if len(ins) > 1 else 0, 0)
        reg[node] = len(prog) // 4
        if len(prog) > 4 * _MAX_PROG:  # too long for the kernel: stop walking
            return None
    # the kernel reads v from the last register (register 0 when v is X @ w itself)
    if w is None or len(prog) // 4 > _MAX_PROG or reg[v] != len(prog) // 4:
        return None
    return (X, w, *vecs, *scalars), tuple(prog)


# ---------------------------------------------------------------- the op

class RowPass(NamedTuple):
    """``f`` as the kernel's program: instructions of four integers (opcode, a, b, 0), register
    0 holding ``t = X @ w``, instruction i writing register i + 1 (opcodes in ``OPCODES``;
    ``_LOADV``/``_LOADS`` load row vector or scalar operand a)."""
    program: tuple


def _infer_rowpass(inputs: tuple, attrs: RowPass) -> tuple:
    """inputs (X, w, row vectors..., scalars...), one float dtype: the result is (d,)."""
    if len(inputs) < 2 or len(inputs[0].shape) != 2:
        raise ValueError("rowpass: operands (X, w, vectors..., scalars...) with X a matrix")
    X, w, *rest = inputs
    n, d = X.shape
    nvec = sum(1 for x in rest if x.shape == (n,))
    if (X.dtype not in _DTYPES or any(x.dtype is not X.dtype for x in inputs)
            or w.shape != (d,) or any(x.shape != (n,) for x in rest[:nvec])
            or any(x.shape != () for x in rest[nvec:]) or nvec > _MAX_IN
            or len(rest) - nvec > _MAX_IN):
        raise ValueError(f"rowpass: X {X.dtype.name}{list(X.shape)} needs w of shape ({d},), "
                         f"then at most {_MAX_IN} vectors of shape ({n},) and {_MAX_IN} scalars, "
                         f"all float32 or all float64")
    prog = attrs.program
    codes = set(OPCODES.values()) | {_LOADV, _LOADS}
    if (len(prog) % 4 or len(prog) > 4 * _MAX_PROG
            or any(prog[i] not in codes for i in range(0, len(prog), 4))):
        raise ValueError(f"rowpass: not a program of at most {_MAX_PROG} instructions: {prog}")
    return (d,), X.dtype


def _lower_rowpass(e: Emitter, n: Any, a: list) -> str:
    """``X.T @ f(X @ w)`` through ``xla_array_rowpass``."""
    program = n.attrs.program
    lays = ", ".join(layout(len(x.shape), False) for x in n.inputs)
    return e.op("stablehlo.custom_call", a, tensor_type(n.shape, n.dtype),
                f'api_version = 4 : i32, backend_config = {{program = array<i64'
                f'{": " + ", ".join(map(str, program)) if program else ""}>}}, '
                f'call_target_name = "{TARGET}", '
                f'operand_layouts = [{lays}], result_layouts = [{layout(1, False)}]')


ROWPASS = define("rowpass", _infer_rowpass, _lower_rowpass, weight=4, attrs=RowPass)

registry.register(registry.Kernel(
    kind="rowpass", title="row-pass kernel", source="native/rowpass_ffi.c", targets=(TARGET,),
    op=ROWPASS, replaces="dot_general", rule=rule, available=available,
    present=_LIB.present, error=error, flag="rowpass"))
