"""The graph's C core (``xla_array.core._graphcore``) against its pure-Python reference
in ``core/graph.py``.

The rest of the suite runs on whichever the install provided (the C core where a compiler
was there); this file checks that both give the same nodes, user lines and plans, that the
C core leaks no references, and that the pure-Python fallback runs on its own.
"""

import gc
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest

import xla_array as xp
from xla_array.core import graph as _graph
from xla_array.core.ops import structural as _ops
from xla_array.core.ops.elementwise import dtypes_for

native = pytest.mark.skipif(not _graph.NATIVE, reason="the C core was not built")


def _pending_graphs():
    """A few pending graphs: shared subexpressions, repeated inputs, leaves as roots, a
    multi-result op with live siblings, scalars, several roots."""
    a = xp.asarray(np.arange(6.0).reshape(2, 3))
    b = xp.asarray(np.ones(3))
    xp.materialize(a, b)
    c = a * 2.0 + b
    d = xp.sum(c * c, axis=0) - b
    e = c + c
    yield [d._node], (c, d)
    yield [d._node, e._node, a._node], (c, d, e)
    yield [(a + 1.0)._node], ()
    m = xp.asarray(np.arange(9.0).reshape(3, 3) + np.eye(3) * 5)
    u, s, vt = xp.linalg.svd(m * 1.0)
    yield [s._node], (u, s, vt)
    yield [b._node], ()


@native
def test_plan_graph_equals_the_python_reference():
    pure = _graph.PURE["plan_graph"]
    for roots, _keep in _pending_graphs():
        got = _graph.plan_graph(roots)
        want = pure(roots)
        assert got[4] == want[4]  # the structural key
        for g, w in zip(got[:4], want[:4]):
            assert [id(n) for n in g] == [id(n) for n in w]


@native
def test_record_and_leaves_equal_the_python_reference():
    pure = _graph.PURE
    x = xp.asarray(np.arange(4.0))
    n = x._node
    s = pure["scalar_leaf"](2.5, n.dtype, n.device)
    at = dtypes_for("add", [n.dtype, s.dtype])
    for rec in (_graph.record, pure["record"]):
        r = rec(_ops.OPS["add"], (n, s), at)
        line = sys._getframe().f_lineno - 1
        assert (r.op, r.inputs, r.attrs, r.shape, r.dtype, r.device) == (
            _ops.OPS["add"], (n, s), at, (4,), n.dtype, n.device)
        assert r.where == (__file__, line)
        assert (r.depth, r.users, r.committed, r.buffer, r.value) == (1, 0, False, None, None)
        assert r.pending and not n.pending and not s.pending
    for leaf in (_graph.scalar_leaf, pure["scalar_leaf"]):
        s = leaf(3, n.dtype, n.device)
        assert (s.op, s.value, s.shape, s.inputs, s.depth, s.where) == (
            _graph.SCALAR, 3, (), (), 0, None)
    for leaf in (_graph.buffer_leaf, pure["buffer_leaf"]):
        b = leaf(n.buffer, (4,), n.dtype, n.device, committed=True)
        assert (b.op, b.buffer, b.shape, b.committed, b.pending) == (
            _graph.BUFFER, n.buffer, (4,), True, False)
    assert repr(r) == "<node add float64[4]>"
    assert _graph.user_frame() == pure["user_frame"]() == (__file__, sys._getframe().f_lineno)


@native
def test_record_errors_and_node_attributes():
    x = xp.asarray(np.arange(4.0))
    at = dtypes_for("add", [x.dtype, x.dtype])
    with pytest.raises(ValueError, match="broadcast"):
        _graph.record(_ops.OPS["add"], (x._node, xp.asarray(np.ones(3))._node), at)
    with pytest.raises(TypeError, match="not a Node"):
        _graph.record(_ops.OPS["negative"], (np.ones(3),), ())
    with pytest.raises(TypeError):
        _graph.record(_ops.OPS["negative"])
    n = (x + 1.0)._node
    n.users += 2
    n.depth = 7
    n.committed = True
    assert (n.users, n.depth, n.committed) == (2, 7, True)
    r = weakref.ref(n)
    n.set_buffer(x._node.buffer)
    assert (n.op, n.inputs, n.depth, n.pending) == (_graph.BUFFER, (), 0, False)
    del n
    gc.collect()
    assert r() is None


@native
def test_the_c_core_leaks_no_references():
    x = xp.asarray(np.arange(8.0))
    xp.materialize(x)
    n = x._node
    op, dt, dev = _ops.OPS["add"], n.dtype, n.device

    def work():
        for _ in range(200):
            y = x + 1.0
            z = xp.sum(y * y) - 2.0
            xp.materialize(z, y)
            float(z)

    work()
    gc.collect()
    before = [sys.getrefcount(o) for o in (op, dt, dev, __file__, _graph.SCALAR)]
    work()
    gc.collect()
    after = [sys.getrefcount(o) for o in (op, dt, dev, __file__, _graph.SCALAR)]
    assert after == before


def test_array_handles_count_their_node_users():
    x = xp.asarray(np.arange(3.0))
    y = x + 1.0
    n = y._node
    assert n.users == 1
    z = xp.Array(n)
    assert n.users == 2 and z._view is None
    del z
    assert n.users == 1
    y._rebind(x._node)
    assert n.users == 0 and x._node.users == 2
    e = xp.Array()  # what unpickling starts from
    with pytest.raises(AttributeError):
        e._node  # noqa: B018  (the attribute read is what is tested)
    del e
    with pytest.raises(TypeError):
        xp.Array(n, n)


def test_deep_chain_frees_without_recursion():
    with xp.flags.using(max_pending=10**9):
        x = xp.asarray(np.ones(2))
        first = None
        for i in range(200_000):
            x = -x
            if i == 0:
                first = weakref.ref(x._node)
        del x  # freeing 200,000 nodes, each holding the next: no deep C recursion
        gc.collect()
        assert first() is None


def test_the_pure_python_fallback_runs():
    code = textwrap.dedent("""
        import numpy as np, xla_array as xp
        from xla_array.core import graph as _graph
        assert not _graph.NATIVE and _graph.Node is _graph.PURE["Node"]
        x = xp.asarray(np.arange(6.0))
        y = xp.sum(x * 2.0 + 1.0)  # line 6
        assert y._node.where[1] == 6, y._node.where
        assert float(y) == 36.0
        u, s, vt = xp.linalg.svd(xp.reshape(x, (2, 3)))
        np.testing.assert_allclose(np.asarray(s), np.linalg.svd(np.arange(6.0).reshape(2, 3))[1])
        try:
            x + xp.ones(4)
        except ValueError as e:
            print("ok", e)
    """)
    env = {**__import__("os").environ, "XLA_ARRAY_NATIVE": "0"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok")
