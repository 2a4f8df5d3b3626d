"""The op table's contract (docs/architecture.md, "Adding an op"): every node holds attributes
of its op's record type (or none), and ``infer`` computes and checks shape and dtype itself
rather than echoing what the caller passed. Nothing here compiles: graphs are only recorded."""

import numpy as np
import pytest

import xla_array as xp
from xla_array.core import dtypes as dt
from xla_array.core.graph import PURE, record
from xla_array.core.ops import indexing as ops_indexing
from xla_array.core.ops import linalg as ops_linalg
from xla_array.core.ops import reductions as R
from xla_array.core.ops import sorting as ops_sorting
from xla_array.core.ops import structural as S
from xla_array.core.ops.elementwise import ELEMENTWISE

# ops no namespace call below records on a CPU device without a mesh (or a compiler-less host)
# (positive: the namespace returns its operand, of every dtype positive takes, unrecorded)
_NOT_RECORDED_HERE = {"sharding_constraint", "cholesky", "triangular_solve", "lu_permutation",
                      "rowpass", "lu_permutation_kernel", "pairwise_sum", "cumreduce_kernel", "get",
                      "positive", "blas_matmul", "ufunc_loop", "lapack_from_rows",
                      "pocketfft"}


def _sample_graphs():
    """Pending results of namespace calls covering the op table (recorded, never run)."""
    a = xp.asarray(np.arange(12.0).reshape(3, 4))
    m = xp.asarray(np.eye(3) * 2.0 + 1.0)
    i = xp.asarray(np.array([2, 0, 1]))
    c = xp.asarray(np.ones(4, dtype=np.complex128))
    out = [xp.reshape(a, (4, 3)), xp.broadcast_to(a[0], (2, 3, 4)), a.mT, a[1:, ::2],
           xp.flip(a, axis=0), xp.concat([a, a + 1]), xp.where(a > 2, a, 0.0), xp.arange(5),
           a @ a.mT, xp.sum(a, axis=0), xp.argmax(a, axis=1), xp.astype(a, xp.int32),
           a.view(xp.int64) if hasattr(a, "view") else a, xp.sort(a, axis=1),
           xp.argsort(a, axis=1), xp.take(a, i, axis=0),
           xp.take_along_axis(a, xp.argsort(a), axis=1),
           xp.searchsorted(xp.arange(5.0), a), xp.cumulative_sum(a, axis=1),
           a[i], a[i, i], a[xp.asarray(np.array([True, False, True]))],
           xp.unique_inverse(xp.asarray(np.array([3, 1, 3])))[1], xp.nonzero(a > 2)[1],
           xp.linalg.solve(m, m),
           xp.linalg.svd(m)[1], xp.linalg.det(m), xp.fft.fft(c), xp.fft.rfft(a[0]),
           xp.fft.irfft(c), xp.linalg.qr(m, mode="complete")[0], xp.linalg.inv(m),
           xp.linalg.cholesky(m @ m.mT)]
    x = xp.asarray(np.zeros(6))
    k = xp.asarray(np.int64(2))
    x[k] = 1.0  # a dynamic update
    y = xp.asarray(np.zeros(6))
    y[1:5:2] = 5.0  # a strided update: pad, dynamic_update_slice
    z, d = xp.zeros((20, 20)) + 1.0, xp.arange(20.0)
    for j in range(20):  # writes of a loop, combined: update_slices
        z[j, j] = d[j]
    out += [x, x[k], x[::2], a[i] + 1, xp.fft.ifft(c), y, z, xp.fft.fft(c, n=8), xp.conj(c),
            xp.real(c), xp.linalg.eigvals(m), i ** (i + 1),
            xp.random.default_rng(0).standard_normal(3)]
    for name in ELEMENTWISE:
        try:
            arity = ELEMENTWISE[name][0]
            out.append(getattr(xp, name)(*([a] * arity)))
        except TypeError:  # (bitwise ops of floats)
            out.append(getattr(xp, name)(*([i] * ELEMENTWISE[name][0])))
    return out


# the sample graphs of the CPU (eig is LAPACK on the host elsewhere)
@pytest.mark.usefixtures("on_cpu")
def test_every_node_holds_its_ops_attribute_record():
    arrays = _sample_graphs()
    seen = set()
    for arr in arrays:
        node = arr._node
        if node.buffer is not None:
            continue
        order = PURE["plan_graph"]([node])[0]
        for n in order:
            seen.add(n.op.name)
            want = n.op.attrs
            if want is None:
                assert n.attrs == (), (n.op.name, n.attrs)
            else:
                assert type(n.attrs) is want, (n.op.name, n.attrs, n.where)
            # infer reproduces the node's shape and dtype from its inputs and attributes
            assert n.op.infer(n.inputs, n.attrs) == (n.shape, n.dtype), n.op.name
    missing = set(S.OPS) - seen - _NOT_RECORDED_HERE
    assert not missing, f"ops no sample graph records: {sorted(missing)}"


def test_every_op_with_attributes_declares_a_named_record():
    for name, op in S.OPS.items():
        if op.attrs is not None:
            assert issubclass(op.attrs, tuple) and op.attrs._fields, name
        if op.nout > 1:
            assert op.results is not None, name


def _leaf(shape, dtype=dt.float64):
    return xp.asarray(np.zeros(shape, dtype=dtype.np))._node


@pytest.mark.parametrize("op, inputs, attrs, error", [
    ("reshape", ((2, 3),), S.Reshape((4, 2)), ValueError),
    ("broadcast", ((2, 3),), S.Broadcast((3, 3)), ValueError),
    ("transpose", ((2, 3),), S.Transpose((0, 0)), ValueError),
    ("slice", ((4,),), S.Slice((0,), (5,), (1,)), ValueError),
    ("reverse", ((4,),), S.Reverse((1,)), ValueError),
    ("concat", ((2, 3), (2, 4)), S.Concat(0), ValueError),
    ("pad", ((2, 3),), S.Pad((0,), (0,), (0,)), ValueError),
    ("iota", (), S.Iota((3,), 1, dt.int64), ValueError),
    ("dot_general", ((2, 3), (4, 2)), S.DotGeneral((), (), (1,), (0,)), ValueError),
    ("reduce", ((2, 3),), R.Reduce("sum", (2,)), ValueError),
    ("reduce", ((2, 3),), R.Reduce("mean", (0,)), ValueError),
    ("argreduce", ((2, 3),), R.ArgReduce("max", 2), ValueError),
    ("take_axis", ((2, 3), ((2,), dt.int64)), ops_sorting.Take(2), ValueError),
    ("searchsorted", ((4,), (2,)), ops_sorting.SearchSorted("middle"), ValueError),
    ("cumreduce", ((2, 3),), ops_sorting.CumReduce("sum", 3, False), ValueError),
    ("gather", ((4, 3), ((2, 1), dt.int64)), ops_indexing.Gather((1,), (0,), (1, 5)),
     ValueError),
    ("fft", ((8,),), ops_linalg.Fft("FFT", (8,)), ValueError),  # a real input
    ("complex", ((3,), (4,)), None, TypeError),
    ("convert", ((3,),), S.Convert("float64"), TypeError),
    ("add", ((3,), (4,)), None, ValueError),
    ("bitwise_and", ((3,), (3,)), None, TypeError),
])
def test_infer_refuses_what_its_op_cannot_take(op, inputs, attrs, error):
    nodes = tuple(_leaf(*x) if isinstance(x[0], tuple) else _leaf(x) for x in inputs)
    with pytest.raises(error):
        record(S.OPS[op], nodes, () if attrs is None else attrs)


def test_elementwise_dtype_rule_lives_in_infer():
    """An elementwise node is recorded with no attributes; its dtype comes from the op."""
    i32, f32 = _leaf((3,), dt.int32), _leaf((3,), dt.float32)
    n = record(S.OPS["add"], (i32, f32))
    assert n.attrs == () and n.dtype is dt.promote(dt.int32, dt.float32)
    assert record(S.OPS["equal"], (f32, f32)).dtype is dt.bool
    assert record(S.OPS["sqrt"], (i32,)).dtype is dt.default_float
