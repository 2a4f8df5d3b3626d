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
from hypothesis import given, settings
from hypothesis import strategies as st

import xla_array as xp
from xla_array.core import graph as _graph
from xla_array.core.ops import reductions as _reductions
from xla_array.core.ops import structural as _ops
from xla_array.core.ops.indexing import INDEX_CHECK, IndexCheck
from xla_array.core.ops.sorting import SortMulti

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


def _plan(plan_graph, roots, writeback):
    """(key, [ids of order, buffers, scalars, outputs]) of a plan, holding none of its nodes
    afterwards: a node held beyond the graph is an output, so a plan kept alive while the
    other core plans the same graph would make every node an output of the second plan."""
    got = plan_graph(roots, writeback=writeback)
    return got[4], [[id(n) for n in g] for g in got[:4]]


@native
def test_plan_graph_equals_the_python_reference():
    pure = _graph.PURE["plan_graph"]
    for roots, _keep in _pending_graphs():
        for writeback in (True, False):
            assert _plan(_graph.plan_graph, roots, writeback) == _plan(pure, roots, writeback)


def test_an_intermediate_a_pending_node_outside_the_graph_needs_is_an_output():
    """Nothing is computed twice: a loop's state that the step's check does not reach (``x``
    in ``dx = f(x); x = x - dx; if bool(g(dx)): ...``) reads the step's intermediates, so the
    check's run writes them back, and the next step starts from buffers. Both cores."""
    a = xp.asarray(np.linspace(1.0, 2.0, 5))
    xp.materialize(a)
    for plan_graph in (_graph.plan_graph, _graph.PURE["plan_graph"]):
        x = a * 1.0
        dx = x * x - a         # held by an Array: an output
        y = x - 0.5 * dx       # x is needed by y, outside the check's graph
        check = xp.max(dx) < 0.0
        order, _b, _s, outs, _k = plan_graph([check._node])
        names = [n.op.name for n in outs]
        assert outs[0] is check._node and dx._node in outs and x._node in outs, names
        assert y._node not in order
        # an intermediate nothing outside needs (max(dx)) is not written back
        assert len(outs) == 3, names
        del order, outs, _b, _s
        x = None  # (now only y holds x's node)
        order, _b, _s, outs, _k = plan_graph([check._node])
        assert len(outs) == 3, [n.op.name for n in outs]
        del order, outs, _b, _s
        y = None  # nothing holds x now but the graph itself
        order, _b, _s, outs, _k = plan_graph([check._node])
        assert [n.op.name for n in outs] == ["less", "subtract"]
        del order, outs, _b, _s


# a random program: each step applies one op to operands picked (modulo the pool's size) from
# the nodes made so far; ``hold``: the node gets an Array-like handle (users > 0)
_STEP = st.tuples(st.sampled_from(["neg", "exp", "add", "mul", "sum", "sort", "check",
                                   "scalar"]),
                  st.integers(0, 10**6), st.integers(0, 10**6), st.booleans())


def _build(rec, buffer_leaf, scalar_leaf, steps, base):
    """Nodes of ``steps`` made with ``rec`` (C or pure ``record``) on leaves of ``base``
    (float64 (2, 3), float64 (3,), int64 (2,)); a step whose operands the op refuses (an int
    and a float) records nothing, with either core."""
    pool = [buffer_leaf(b.buffer, b.shape, b.dtype, b.device) for b in base]
    x = base[0]
    pool.append(scalar_leaf(1.5, x.dtype, x.device))
    keep = []  # the multi-result ops' results, alive as long as the graph
    for kind, i, j, hold in steps:
        a, b = pool[i % len(pool)], pool[j % len(pool)]
        if kind == "check":  # of an integer node
            ints = [n for n in pool if n.dtype.kind == "i"]
            a = ints[i % len(ints)]
        try:
            n = _step(rec, scalar_leaf, kind, a, b, i, j, keep)
        except (TypeError, ValueError, IndexError):
            continue
        if n is None:
            continue
        if hold:
            n.users += 1
        pool.append(n)
    return pool, keep


def _step(rec, scalar_leaf, kind, a, b, i, j, keep):
    """One step's node (None: the step does not apply to ``a``)."""
    ops = _ops.OPS
    if kind in ("neg", "exp"):
        return rec(ops["negative" if kind == "neg" else "exp"], (a,))
    if kind in ("add", "mul"):
        return rec(ops["add" if kind == "add" else "multiply"], (a, b))
    if kind == "sum" and a.shape:
        return rec(ops["reduce"], (a,), _reductions.Reduce("sum", (0,)))
    if kind == "sort" and a.shape:
        m = rec(ops["sort_multi"], (a, a), SortMulti(len(a.shape) - 1, False, True, 1))
        gets = [rec(ops["get"], (m,), _ops.Get(r)) for r in range(2)]
        m.results = tuple(weakref.ref(g) for g in gets)
        keep += gets
        return gets[j % 2]
    if kind == "check":  # an index array checked by a run-time check (op.check)
        return rec(ops["checked"], (a, rec(INDEX_CHECK, (a,), IndexCheck(3, 0))))
    if kind == "scalar":
        return scalar_leaf(float(i % 7), a.dtype, a.device)
    return None


@native
@settings(max_examples=60, deadline=None)
@given(steps=st.lists(_STEP, min_size=1, max_size=25),
       picks=st.lists(st.integers(0, 10**6), min_size=1, max_size=4))
def test_random_graphs_plan_the_same_in_c_and_python(steps, picks):
    """Random graphs (shared subexpressions, repeated and leaf roots, held intermediates,
    multi-result ops with live siblings, scalar leaves) recorded by each core: the C
    ``plan_graph`` on C nodes gives the same order, leaves, outputs and key as the Python
    reference on the same nodes and on the same program recorded by the Python core."""
    pure = _graph.PURE
    base = (xp.asarray(np.arange(6.0).reshape(2, 3)), xp.asarray(np.ones(3)),
            xp.asarray(np.array([0, 2])))
    xp.materialize(*base)
    base = tuple(a._node for a in base)
    c_pool, _c_keep = _build(_graph.record, _graph.buffer_leaf, _graph.scalar_leaf, steps, base)
    p_pool, _p_keep = _build(pure["record"], pure["buffer_leaf"], pure["scalar_leaf"], steps,
                             base)
    for cn, pn in zip(c_pool, p_pool):
        assert (cn.op, cn.attrs, cn.shape, cn.dtype, cn.depth, cn.users) == (
            pn.op, pn.attrs, pn.shape, pn.dtype, pn.depth, pn.users)
    c_roots = [c_pool[k % len(c_pool)] for k in picks]
    p_roots = [p_pool[k % len(p_pool)] for k in picks]
    for writeback in (True, False):
        got = _plan(_graph.plan_graph, c_roots, writeback)
        assert got == _plan(pure["plan_graph"], c_roots, writeback)
        # the same program recorded by the Python core: the same key
        assert _plan(pure["plan_graph"], p_roots, writeback)[0] == got[0]


@native
def test_record_and_leaves_equal_the_python_reference():
    pure = _graph.PURE
    x = xp.asarray(np.arange(4.0))
    n = x._node
    s = pure["scalar_leaf"](2.5, n.dtype, n.device)
    at = ()  # (elementwise ops have no attributes)
    for rec in (_graph.record, pure["record"]):
        r = rec(_ops.OPS["add"], (n, s), at)
        line = sys._getframe().f_lineno - 1
        assert (r.op, r.inputs, r.attrs, r.shape, r.dtype, r.device) == (
            _ops.OPS["add"], (n, s), at, (4,), n.dtype, n.device)
        assert r.where == (__file__, line)
        assert (r.depth, r.users, r.committed, r.buffer, r.value, r.results) == (
            1, 0, False, None, None, None)
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
    with pytest.raises(ValueError, match="broadcast"):
        _graph.record(_ops.OPS["add"], (x._node, xp.asarray(np.ones(3))._node))
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


@native
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_subnormal_scan_equals_the_python_reference(dtype, monkeypatch):
    """``has_subnormal`` (the first-use tier's scan, one pass in C) says what the NumPy form
    says: subnormals of either sign at any place (block edges included); zeros, the smallest
    normal, infinities and NaN are not subnormal."""
    from xla_array.core.ops import host_common

    fin = np.finfo(dtype)
    cases = []
    for n in (1, 7, 4095, 4096, 4097, 8191, 8192, 8193, 20_000):
        for at in sorted({0, n // 2, n - 1, min(n - 1, 4096), min(n - 1, 8191),
                          min(n - 1, 8192)}):
            for v in (fin.smallest_subnormal, -fin.smallest_subnormal, fin.tiny * 0.5,
                      -fin.tiny * (1 - fin.eps), fin.tiny, -fin.tiny, 0.0, -0.0, np.inf,
                      np.nan):
                a = np.ones(n, dtype)
                a[at] = v
                cases.append(a)
    cases.append(np.zeros((0,), dtype))
    cases.append(np.full((3, 5), -0.0, dtype).T)  # not C-ordered: a contiguous copy is read
    native_scan = [host_common.has_subnormal(a) for a in cases]
    monkeypatch.setattr(host_common, "_SCAN", None)
    python = [host_common.has_subnormal(a) for a in cases]
    truth = [bool(np.any((np.abs(a) > 0) & (np.abs(a) < fin.tiny))) for a in cases]
    assert native_scan == python == truth
    assert 0 < sum(truth) < len(truth)  # both kinds are there
    with pytest.raises(TypeError, match="float32 or float64"):
        _graph._graphcore.has_subnormal(np.ones(3, np.int64))


@native
def test_the_aligned_numpy_allocator_keeps_values_and_gives_the_default_back():
    """``numpy_allocator`` (the first-use tier's NumPy memory): 64-byte aligned blocks of every
    size; a freed large block is reused (kept in the pool) with its old bytes overwritten where
    NumPy asks for zeros; a resized array keeps its values; the handler it replaces comes
    back, and arrays made under it are freed by it later."""
    from numpy._core import multiarray
    alloc = _graph._graphcore.numpy_allocator
    before = multiarray.get_handler_name()
    prev = alloc(None)
    try:
        assert multiarray.get_handler_name() == "xla_array_aligned64"
        made = [np.empty(n) for n in (0, 1, 3, 100, 8191, 20_000, 300_000)]
        assert all(a.ctypes.data % 64 == 0 for a in made)
        for _ in range(3):  # a large block freed, then taken again: zeros stay zeros
            junk = np.full(20_000, 7.0)
            del junk
            z = np.zeros(20_000)
            assert not z.any()
            del z
        r = np.arange(10_000.0)
        r.resize(200_000, refcheck=False)  # realloc: the first values kept
        np.testing.assert_array_equal(r[:10_000], np.arange(10_000.0))
        assert r.ctypes.data % 64 == 0
        kept = np.arange(50_000.0)
    finally:
        assert alloc(prev) is not None
    assert multiarray.get_handler_name() == before
    assert multiarray.get_handler_name(kept) == "xla_array_aligned64"
    np.testing.assert_array_equal(kept, np.arange(50_000.0))
    del kept, made, r  # (freed by the aligned handler, outside its context)


@pytest.mark.parametrize("native_copy", [True, False])
def test_c_and_fortran_ordered_copies_equal_numpys(native_copy, monkeypatch):
    """``c_ordered`` and ``f_ordered`` (the host tier's copies of Fortran-ordered matrices
    into C order and back, in the C core's tiles) give NumPy's values in the asked order, for
    every item size, shapes across the tile edges, stacks and the degenerate ones; the pure
    NumPy form (no C core) too."""
    from xla_array.core.ops import host_common

    if not native_copy:
        monkeypatch.setattr(host_common, "_TRANSPOSE", None)
    elif host_common._TRANSPOSE is None:
        pytest.skip("the C core is off (XLA_ARRAY_NATIVE=0)")
    rng = np.random.default_rng(11)
    dtypes = (np.float32, np.float64, np.complex64, np.complex128, np.int32, np.int8, np.bool_)
    for dtype in dtypes:
        for shape in ((1, 1), (1, 9), (9, 1), (31, 33), (32, 32), (65, 3), (16, 1000),
                      (2, 3, 40), (4, 1, 5), (0, 3)):
            base = (rng.standard_normal(shape) * 100).astype(dtype)
            fortran = np.asfortranarray(base) if len(shape) == 2 else \
                np.swapaxes(np.ascontiguousarray(np.swapaxes(base, -1, -2)), -1, -2)
            got = host_common.c_ordered(fortran)
            assert got.flags.c_contiguous and got.dtype == base.dtype
            np.testing.assert_array_equal(got, base)
            assert host_common.c_ordered(base) is base  # C-ordered already: itself
            if len(shape) == 2:
                f = host_common.f_ordered(base)
                assert f.flags.f_contiguous and f.dtype == base.dtype
                np.testing.assert_array_equal(f, base)
                assert not np.shares_memory(f, base)  # (LAPACK overwrites it)
    strided = np.arange(60.0).reshape(6, 10)[::2, ::3]  # neither order: NumPy's copy
    np.testing.assert_array_equal(host_common.c_ordered(strided), strided)


@native
def test_data_address_is_numpys_ctypes_data():
    import ml_dtypes

    from xla_array.core import aligned

    assert aligned.address is _graph._graphcore.data_address
    base = np.arange(24.0).reshape(4, 6)
    ro = np.arange(5)
    ro.flags.writeable = False
    arrays = [base, base[1:, 2:], base[:, ::2], base.T, np.zeros((0, 3)), ro,
              np.asarray(2.5), np.zeros(7, ml_dtypes.bfloat16)[2:],  # (no buffer protocol)
              np.zeros(3, np.complex64), np.ones(4, bool)[1:]]
    for a in arrays:
        assert aligned.address(a) == a.ctypes.data, a
    with pytest.raises(AttributeError):
        aligned.address(object())
