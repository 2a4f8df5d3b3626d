"""Indexing: basic keys (ints, slices of any step, ..., None) and advanced keys (integer arrays,
boolean masks, mixtures), for reading and writing, differential against NumPy."""

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import xla_array as xp

SHAPES = [(), (5,), (3, 4), (2, 3, 4)]
ADV_SHAPES = [(5,), (3, 4), (2, 3, 4)]
BATCHES = [(), (2,), (3,), (2, 1), (1, 3)]
FEW = settings(max_examples=30, deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def base(shape, dtype=np.float64):
    return np.asarray((np.arange(int(np.prod(shape))) * 3 - 7).reshape(shape), dtype=dtype)


def materializations():
    return xp.debug.metrics()["materializations"]


def lazy(a):
    """A pending array holding ``a`` (so tests see whether it gets computed)."""
    x = xp.asarray(a) + xp.asarray(np.zeros((), a.dtype))
    assert x.is_pending
    return x


def check_equal(r, e):
    r = np.asarray(r)
    assert r.shape == e.shape, (r.shape, e.shape)
    assert r.dtype == e.dtype, (r.dtype, e.dtype)
    np.testing.assert_array_equal(r, e)


def selection_value(draw, sel_shape, dtype):
    """A value for ``x[key] = value``: a Python scalar, a 0-d array, an array of the
    selection's shape or of one of its trailing shapes."""
    kind = draw(st.sampled_from(["scalar", "0d", "full", "trailing"]))
    if kind == "scalar":
        return float(draw(st.integers(-50, 50)))
    if kind == "0d":
        return np.asarray(draw(st.integers(-50, 50)), dtype=dtype)
    shape = sel_shape if kind == "full" else sel_shape[draw(st.integers(0, len(sel_shape))):]
    return (np.arange(int(np.prod(shape))).reshape(shape) + 100).astype(dtype)


def to_xp(v):
    return xp.asarray(v) if isinstance(v, np.ndarray) else v


# ---------------------------------------------------------------- basic keys

@st.composite
def basic_case(draw):
    shape = draw(st.sampled_from(SHAPES))
    key = draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    return shape, key


@FEW
@given(basic_case())
def test_basic_getitem(case):
    shape, key = case
    a = base(shape)
    e = np.asarray(a[key])
    check_equal(xp.asarray(a)[key], e)


@FEW
@given(basic_case(), st.data())
def test_basic_setitem_records_no_materialization(case, data):
    shape, key = case
    a = base(shape)
    sel = np.asarray(a[key]).shape
    v = selection_value(data.draw, sel, a.dtype)
    x = lazy(a)
    y = x
    xv = to_xp(v)
    before = materializations()
    x[key] = xv
    assert materializations() == before
    # (a write of the whole of a 0-d array is its value: x is then the value's own node)
    assert x.is_pending or (a.ndim == 0 and not xv.is_pending)
    a[key] = v
    check_equal(y, a)


@pytest.mark.parametrize("key", [
    slice(None, None, -1), slice(-1, -6, -2), slice(10, -10, -3), slice(3, 1), slice(-10, 10),
    (Ellipsis, 0), (None, Ellipsis, None), (), Ellipsis, (1, slice(None, None, -2)),
    (slice(None), None, -1),
])
def test_basic_fixed_keys(key):
    a = base((5, 4))
    check_equal(xp.asarray(a)[key], np.asarray(a[key]))
    x = xp.asarray(a)
    x[key] = -1.0
    a[key] = -1.0
    check_equal(x, a)


def test_start_positions_are_runtime_parameters(metrics):
    a = base((6, 5))
    x = xp.asarray(a)

    def step(i):
        assert float(x[i, -i]) == a[i, -i]
        x[i:i + 2, ::2] = float(i)
        a[i:i + 2, ::2] = float(i)
        check_equal(x[i:i + 3, 1:], a[i:i + 3, 1:])

    step(1)
    compiles = metrics()["compiles"]
    for i in range(2, 4):
        step(i)
    assert metrics()["compiles"] == compiles


def test_zero_d_array_keys():
    a = np.asarray(3.5)
    x = xp.asarray(a)
    check_equal(x[()], a)
    check_equal(x[...], a)
    check_equal(x[None], a[None])
    x[()] = 2.0
    check_equal(x, np.asarray(2.0))
    x[...] = 4.0
    check_equal(x, np.asarray(4.0))


def test_empty_selections():
    a = base((3, 4))
    x = xp.asarray(a)
    check_equal(x[2:2], a[2:2])
    check_equal(x[:, 4:0], a[:, 4:0])
    check_equal(x[[]], a[[]])
    check_equal(x[a > 1000], a[a > 1000])
    check_equal(x[1, []], a[1, []])
    for k in [slice(2, 2), (slice(None), slice(4, 0)), [], a > 1000]:
        x[k] = 9.0
    check_equal(x, a)
    z = xp.zeros((0, 3))
    check_equal(z[[]], np.zeros((0, 3))[[]])
    check_equal(z[:, [0, 2]], np.zeros((0, 2)))


# ---------------------------------------------------------------- advanced keys

INT_DTYPES = [np.int64, np.int32, np.int8, np.uint8, np.int16, np.uint32]


@st.composite
def int_index(draw, n, shape):
    """An integer index for an axis of size ``n`` with ``shape``: a list, a NumPy array or an
    xla_array array (any integer dtype; unsigned ones hold no negative values)."""
    dtype = draw(st.sampled_from(INT_DTYPES))
    lo = 0 if np.dtype(dtype).kind == "u" else -n
    vals = draw(hnp.arrays(np.int64, shape, elements=st.integers(lo, n - 1))).astype(dtype)
    form = draw(st.sampled_from(["list", "numpy", "xp", "xp_lazy"]))
    if form == "list":
        return vals.tolist() if vals.ndim else int(vals)
    if form == "numpy":
        return vals
    return xp.asarray(vals) if form == "xp" else lazy(vals)


@st.composite
def advanced_case(draw):
    shape = draw(st.sampled_from(ADV_SHAPES))
    batch = draw(st.sampled_from(BATCHES))
    kinds = draw(st.lists(st.sampled_from(["arr", "arr", "int", "slice"]), min_size=1,
                          max_size=len(shape)).filter(lambda ks: "arr" in ks))
    key = []
    for d, kind in enumerate(kinds):
        n = shape[d]
        if kind == "arr":
            sub = batch[draw(st.integers(0, len(batch))):]
            key.append(draw(int_index(n, sub)))
        elif kind == "int":
            key.append(draw(st.integers(-n, n - 1)))
        else:
            step = draw(st.sampled_from([1, 2, -1, -2]))
            key.append(slice(draw(st.sampled_from([None, 0, 1, -1])), None, step))
    extra = draw(st.sampled_from(["none", "new", "ellipsis_front", "ellipsis_mid"]))
    if extra == "new":
        key.insert(draw(st.integers(0, len(key))), None)
    elif extra == "ellipsis_front":
        key.insert(0, Ellipsis)
    elif extra == "ellipsis_mid":
        key.insert(draw(st.integers(0, len(key))), Ellipsis)
    return shape, tuple(key)


def np_key(key):
    return tuple(np.asarray(k) if isinstance(k, xp.Array) else k for k in key)


@FEW
@given(advanced_case())
def test_advanced_getitem(case):
    shape, key = case
    a = base(shape)
    check_equal(xp.asarray(a)[key], a[np_key(key)])


@FEW
@given(advanced_case(), st.data())
def test_advanced_setitem(case, data):
    shape, key = case
    a = base(shape)
    nk = np_key(key)
    sel = a[nk].shape
    ids = np.arange(a.size).reshape(shape)[nk].ravel()
    if len(np.unique(ids)) != ids.size:  # duplicates: the winner is unspecified
        v = float(data.draw(st.integers(-50, 50)))
    else:
        v = selection_value(data.draw, sel, a.dtype)
    x = lazy(a)
    y = x
    x[key] = to_xp(v)
    a[nk] = v
    check_equal(y, a)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64, np.uint64,
                                   np.float32, np.complex64, np.float16])
def test_advanced_many_dtypes(dtype):
    a = base((3, 4)).astype(dtype)
    x = xp.asarray(a)
    key = ([2, 0, 2], slice(None, None, -1))
    check_equal(x[key], a[key])
    check_equal(x[a != a[0, 0]], a[a != a[0, 0]])
    v = np.ones((3, 4), dtype)
    x[key] = xp.asarray(v)
    a[key] = v
    check_equal(x, a)


def test_zero_d_integer_arrays_act_as_integers():
    a = base((3, 4))
    x = xp.asarray(a)
    check_equal(x[xp.asarray(1)], a[1])
    check_equal(x[xp.asarray(1), xp.asarray(-1, dtype=xp.int8)], a[1, -1])
    check_equal(x[np.asarray(2), :], a[2, :])
    check_equal(x[:, np.asarray(2, dtype=np.uint8)], a[:, 2])
    x[xp.asarray(0), xp.asarray(3)] = 100.0
    a[0, 3] = 100.0
    check_equal(x, a)


def test_separated_advanced_indices_go_first():
    a = base((5, 3, 4))
    x = xp.asarray(a)
    for key in [(slice(None), [0, 1], None, [0, 1]), (slice(None), [0, 1], ..., [0, 1]),
                (slice(None), [0, 1], [0, 1], ...), (0, slice(None), [1, 2]),
                ([[0], [1]], slice(1, None), [2, 3])]:
        check_equal(x[key], a[key])


def test_lazy_index_arrays_stay_lazy_and_raise_when_out_of_bounds():
    a = base((6,))
    x = lazy(a)
    i = lazy(np.asarray([5, -1, 0, 9, -20]))
    before = materializations()
    r = x[i]
    x[i[:2]] = 0.0
    assert materializations() == before
    # the bounds check runs in the gather's executable and names the line that indexed
    with pytest.raises(IndexError, match=r"index 9 is out of bounds for axis 0 with size 6 "
                                         r"\(index recorded at .*test_indexing.py:\d+\)"):
        np.asarray(r)
    with pytest.raises(IndexError):  # the result stays unwritten: every read raises
        np.asarray(r)
    want = a.copy()
    want[[5, -1]] = 0.0
    check_equal(x, want)  # the write used in-bounds indices


def test_unchecked_lazy_indices_wrap_once_then_clamp():
    a = base((6,))
    with xp.flags.using(check_indices=False):
        i = lazy(np.asarray([5, -1, 0, 9, -20]))
        r = lazy(a)[i]
    check_equal(r, a[[5, -1, 0, 5, 0]])


# ---------------------------------------------------------------- boolean masks

@st.composite
def mask_case(draw):
    shape = draw(st.sampled_from(ADV_SHAPES))
    m = draw(st.integers(1, len(shape)))
    where = draw(st.sampled_from(["front", "after_slices"]))
    lead = draw(st.integers(0, len(shape) - m)) if where == "after_slices" else 0
    mask = draw(hnp.arrays(np.bool_, shape[lead:lead + m]))
    form = draw(st.sampled_from(["numpy", "xp", "xp_lazy"]))
    k = mask if form == "numpy" else (xp.asarray(mask) if form == "xp" else
                                      xp.asarray(mask.astype(np.int8)) > 0)
    key = (slice(None),) * lead + (k,)
    if draw(st.booleans()):
        key = key + (Ellipsis,)
    return shape, key, (slice(None),) * lead + (mask,) + key[lead + 1:]


@FEW
@given(mask_case())
def test_mask_getitem_materializes_only_the_mask(case):
    shape, key, nkey = case
    a = base(shape)
    x = lazy(a)
    before = materializations()
    r = x[key]
    assert materializations() <= before + 1
    assert x.is_pending and r.is_pending
    check_equal(r, a[nkey])


@FEW
@given(mask_case(), st.data())
def test_mask_setitem(case, data):
    shape, key, nkey = case
    a = base(shape)
    sel = a[nkey].shape
    v = selection_value(data.draw, sel, a.dtype)
    x = lazy(a)
    y = x
    before = materializations()
    x[key] = to_xp(v)
    lead = next(i for i, k in enumerate(nkey) if isinstance(k, np.ndarray))
    c = len(sel) - lead  # the count axis, counted from the end of the selection
    counted = isinstance(v, np.ndarray) and v.ndim >= c and v.shape[v.ndim - c] != 1
    if not counted:  # a scalar or a value not laid over the True positions: where(), lazy
        assert materializations() == before
    assert x.is_pending
    a[nkey] = v
    check_equal(y, a)


def test_lazy_mask_materializes_only_when_the_count_matters():
    a = base((3, 4))
    x = lazy(a)
    m = lazy(a) > 10
    before = materializations()
    x[m] = 0.0
    x[m[:, 0]] = xp.asarray(np.arange(4.0))  # shaped like the trailing axis: no count needed
    assert materializations() == before and m.is_pending
    count = int(np.sum(a > 10))
    x[m] = xp.asarray(np.arange(count, dtype=np.float64))
    assert materializations() == before + 1
    assert xp.debug.metrics()["materializations_by_cause"]["boolean_index"] >= 1
    assert x.is_pending and not m.is_pending
    mk = a > 10
    a[mk] = 0.0
    a[mk[:, 0]] = np.arange(4.0)
    a[mk] = np.arange(count, dtype=np.float64)
    check_equal(x, a)


def test_bool_scalars_and_zero_d_masks():
    a = base((2, 3))
    x = xp.asarray(a)
    for key in [True, False, (Ellipsis, True), (None, True, [0, 1]), (slice(None), True, [0, 2]),
                np.asarray(True), (xp.asarray(False),), (0, True)]:
        nk = np.asarray(key) if isinstance(key, xp.Array) else np_key(
            key if isinstance(key, tuple) else (key,))
        check_equal(x[key], a[nk])
    s = xp.asarray(np.asarray(2.0))
    check_equal(s[True], np.asarray(2.0)[True])
    for key, v in [(True, 5.0), (False, 6.0), (xp.asarray(True), np.full((1, 2, 3), 7.0)),
                   ((0, True), 8.0), ((Ellipsis, xp.asarray(False)), 9.0)]:
        nk = np.asarray(key) if isinstance(key, xp.Array) else np_key(
            key if isinstance(key, tuple) else (key,))
        x[key] = to_xp(v)
        a[nk] = v
        check_equal(x, a)


def test_mask_allows_zero_size_axes():
    # the standard lets a mask axis be 0 against any axis size: it selects nothing
    a = base((3, 4))
    x = xp.asarray(a)
    check_equal(x[np.zeros((0,), bool)], np.zeros((0, 4)))
    check_equal(x[np.zeros((3, 0), bool)], np.zeros((0,)))
    x[np.zeros((0,), bool)] = 1.0
    check_equal(x, a)


# ---------------------------------------------------------------- references and errors

def test_setitem_and_inplace_visible_through_references():
    a = base((3, 4))
    x = xp.asarray(a)
    y = x
    x[[0, 2], 1] = -5.0
    x[x > 10] = 0.0
    x += 1
    a[[0, 2], 1] = -5.0
    a[a > 10] = 0.0
    a += 1
    check_equal(y, a)
    assert y is x


@pytest.mark.parametrize("key, match", [
    ((0, 0, 0), "too many indices"),
    ((0, [0], [0]), "too many indices"),
    ((Ellipsis, Ellipsis), "single ellipsis"),
    ([5], "out of bounds"),
    (([0], -6), "out of bounds"),
    ((slice(None), [-5]), "out of bounds"),
    (np.asarray([1.0]), "integer or boolean"),
    ([1.5], "integer or boolean"),
    (np.ones((3, 3), bool), r"\(3, 3\)"),
    (np.ones((4,), bool), r"\(4,\)"),
    (([0, 1], [0, 1, 2]), r"\(2,\) \(3,\)"),
    ((False, [0, 1]), "broadcast"),
    ("a", "valid indices"),
    (1.0, "valid indices"),
])
def test_bad_keys_raise_index_error(key, match):
    x = xp.asarray(base((3, 4)))
    with pytest.raises(IndexError, match=match):
        x[key]
    with pytest.raises(IndexError, match=match):
        x[key] = 1.0


def test_float_device_index_raises():
    x = xp.asarray(base((3, 4)))
    with pytest.raises(IndexError, match="float"):
        x[xp.asarray([0.0])]


@pytest.mark.parametrize("key, value", [
    ([0, 1], np.ones((3, 4))),
    (np.asarray([True, False, True]), np.ones((3, 4))),
    ((slice(None), [0, 1]), np.ones((2, 3))),
])
def test_bad_values_raise_value_error(key, value):
    x = xp.asarray(base((3, 4)))
    with pytest.raises(ValueError, match="shape"):
        x[key] = xp.asarray(value)


@pytest.mark.parametrize("key", [0, [0, 1], slice(None), np.asarray([True, False, True])])
def test_complex_value_into_real_array_raises_type_error(key):
    x = xp.zeros((3,))
    with pytest.raises(TypeError, match="complex"):
        x[key] = 1j
    with pytest.raises(TypeError, match="complex"):
        x[key] = xp.asarray(1j)


# ---------------------------------------------------------------- fast path of simple keys

def _structure(x):
    from xla_array.core.graph import plan_graph
    _order, _bufs, scalars, _outs, key = plan_graph([x._node], writeback=False)
    return key, [s.value for s in scalars]


def _general(k):
    """The same key spelled so that getitem takes its general path (NumPy integers)."""
    if type(k) is int:
        return np.int64(k)
    if type(k) is tuple:
        return tuple(_general(i) for i in k)
    return k


SIMPLE_KEYS = [0, 1, -1, -3, 2, slice(None), slice(1, 3), slice(-2, None), slice(None, -1),
               slice(3, 1), slice(-10, 10), slice(0, 0), slice(None, None, 1),
               (0, 1), (-1, -1), (1,), (slice(None), 1), (0, slice(1, 3)), (slice(2, 9), -2),
               (), (0, 0, 0), (slice(None), slice(None), 2), (2, slice(None))]


@pytest.mark.parametrize("shape", [(1,), (5,), (3, 4), (1, 4), (2, 1, 3), (0, 3)])
def test_simple_keys_fast_path_matches_general_path_and_numpy(shape):
    """Ints and step-1 slices (x[0], x[i, j], x[1:3], x[:, 1]) take a shortcut that records
    the very nodes of the general path (same structure, same start parameters)."""
    a = base(shape)
    x = xp.asarray(a)
    for key in SIMPLE_KEYS:
        try:
            want = a[key]
        except IndexError:
            with pytest.raises(IndexError):
                x[key]
            continue
        got = x[key]
        assert _structure(got) == _structure(x[_general(key)]), key
        check_equal(got, np.asarray(want))


@pytest.mark.parametrize("shape", [(1,), (5,), (3, 4), (1, 4), (2, 1, 3), (0, 3)])
def test_simple_keys_writes_match_the_general_path_and_numpy(shape):
    """Writes with ints and step-1 slices take a shortcut too (``_setitem_simple``): the same
    nodes as the general path, the same values as NumPy, the same errors."""
    a = base(shape)
    for key in SIMPLE_KEYS:
        try:
            sel = a[key]
        except IndexError:
            with pytest.raises(IndexError):
                xp.asarray(a)[key] = 1.0
            continue
        for value in (-7.5, np.arange(float(np.size(sel))).reshape(np.shape(sel)) - 3.0):
            want = a.copy()
            want[key] = value
            x, y = xp.asarray(a), xp.asarray(a)
            x[key] = value
            y[_general(key)] = value
            assert _structure(x) == _structure(y), (key, np.shape(value))
            check_equal(x, want)
        if np.size(sel) > 1:
            with pytest.raises(ValueError, match="could not broadcast"):
                xp.asarray(a)[key] = np.zeros(np.size(sel) + 1)


def test_simple_keys_views_and_laziness():
    a = base((3, 4))
    x = lazy(a)
    before = materializations()
    r, c, s = x[1], x[:, 2], x[0:2]
    assert materializations() == before and r.is_pending
    r[0] = -1.0  # views write through, as NumPy
    c[1] = -2.0
    s[0, 1:3] = 9.0
    a[1, 0], a[1, 2], a[0, 1:3] = -1.0, -2.0, 9.0
    check_equal(x, a)
    check_equal(x[0:2], a[0:2])
    rows = list(xp.asarray(a))
    assert len(rows) == 3 and all(np.array_equal(np.asarray(r), a[i]) for i, r in enumerate(rows))


# ---------------------------------------------------------------- writes of a loop, combined

def test_a_loop_of_element_writes_keeps_the_graph_shallow():
    # 64 writes of elements of one array, then 32 of numbers: without combining, 96 levels
    # of depth (and auto-flushes within the loop)
    a, d = base((64, 64)), np.arange(64.0) * 1.5
    x, dx = lazy(a), xp.asarray(d)
    start = x._node.depth
    for i in range(64):
        x[i, i] = dx[i]
        a[i, i] = d[i]
    for i in range(0, 64, 2):
        x[i, 63 - i] = 0.25 * i
        a[i, 63 - i] = 0.25 * i
    assert x._node.depth <= start + 24, x._node.depth - start
    assert "update_slices" in {n.op.name for n in _cone(x._node)}
    check_equal(x, a)


def _cone(node):
    seen, stack = {}, [node]
    while stack:
        n = stack.pop()
        if id(n) not in seen:
            seen[id(n)] = n
            stack.extend(n.inputs or ())
    return seen.values()


def test_writes_through_a_view_reach_the_base_in_one_node():
    # scikit-learn's _add_to_diagonal on each covariance of a GaussianMixture: a view written
    # element by element, each write written back into the base
    a = base((3, 16, 16))
    c = lazy(a)
    start = c._node.depth
    for k in range(3):
        v, vn = c[k], a[k]
        val, valn = xp.linalg.diagonal(v) + 0.5, np.diagonal(vn) + 0.5
        for i in range(16):
            v[i, i] = val[i]
            vn[i, i] = valn[i]
    assert c._node.depth <= start + 40, c._node.depth - start
    # each view's 16 writes (a run from its first write on) are one update_slices node
    ops = [n.op.name for n in _cone(c._node)]
    assert ops.count("update_slices") == 3 and ops.count("dynamic_update_slice") <= 6, ops
    check_equal(c, a)


def test_writes_that_overlap_repeat_or_read_the_array_keep_numpys_order():
    a = base((50,))
    x = lazy(a)
    for i in range(40):  # overlapping windows
        x[i:i + 3] = float(i)
        a[i:i + 3] = float(i)
    for i in range(40):  # the same windows again: the last write is the one
        x[i % 7] = float(-i)
        a[i % 7] = float(-i)
    for i in range(1, 40):  # each value read from the array being written
        x[i] = x[i - 1]
        a[i] = a[i - 1]
    src, s = lazy(base((10, 4))), base((10, 4))
    y, b = lazy(base((30, 4))), base((30, 4))
    for i in range(30):  # rows copied from one array, some rows twice
        y[i] = src[(3 * i) % 10]
        b[i] = s[(3 * i) % 10]
    for i in range(20):  # numbers of another dtype: converted, written one by one
        y[i, 1] = i
        b[i, 1] = i
    check_equal(x, a)
    check_equal(y, b)


def _target(rnd, views, x, a):
    """A view of a row (with its NumPy twin), else the base with a row's index to lead keys."""
    if views and rnd.random() < 0.6:
        return views[rnd.choice(list(views))]
    return x, a, (rnd.randrange(a.shape[0]),)


@pytest.mark.parametrize("seed", range(3))
def test_random_runs_of_writes_through_views_match_numpy(seed):
    # element writes into an array and into views of its rows, in runs long enough to combine
    # (moves from one array, numbers) mixed with writes that read the array written, computed
    # row writes and reads; every view and the base compared with NumPy's
    rnd = random.Random(seed)
    src_n = np.linspace(-3.0, 3.0, 40)
    src = xp.asarray(src_n)
    shape = ((2, 16, 16), (1, 7, 18), (3, 4, 5))[seed]  # (each graph compiles in check mode)
    for _ in range(4):
        a = base(shape)
        x = lazy(a)
        views: dict = {}
        for step in range(rnd.randint(5, 30)):
            r = rnd.random()
            if r < 0.15:
                k = rnd.randrange(shape[0])
                views[k] = (x[k], a[k], ())
            elif r < 0.55:  # a run of moves into one target
                t, tn, lead = _target(rnd, views, x, a)
                same = rnd.random() < 0.5
                for _ in range(rnd.randint(1, 40)):
                    at = (*lead, rnd.randrange(shape[1]), rnd.randrange(shape[2]))
                    s = rnd.randrange(40)
                    if same:
                        t[at], tn[at] = src[s], src_n[s]
                    else:
                        t[at] = tn[at] = float(s) * 0.25
            elif r < 0.75:  # a value read from the array written
                t, tn, lead = _target(rnd, views, x, a)
                at = (*lead, rnd.randrange(shape[1]), rnd.randrange(shape[2]))
                frm = (*lead, rnd.randrange(shape[1]), rnd.randrange(shape[2]))
                t[at] = t[frm]
                tn[at] = tn[frm]
            elif r < 0.9:  # a computed row
                k = rnd.randrange(shape[0])
                x[k] = x[k] * 0.5 + step
                a[k] = a[k] * 0.5 + step
            elif r < 0.93:
                check_equal(x, a)
        check_equal(x, a)
        for v, vn, _ in views.values():
            check_equal(v, vn)


def test_combined_writes_share_one_executable_whatever_the_positions(metrics):
    def run(offset):
        x = xp.zeros(100) + 1.0
        for i in range(40):
            x[offset + 2 * i] = float(i)
        return np.asarray(x)

    run(0)
    compiles = metrics()["compiles"]
    got = run(1)
    assert metrics()["compiles"] == compiles
    want = np.ones(100)
    want[1:81:2] = np.arange(40.0)
    np.testing.assert_array_equal(got, want)


def test_combined_writes_in_jit_and_around_reads():
    @xp.jit
    def fill(x, d):
        for i in range(20):
            x[i, i] = d[i]
        for i in range(20):
            x[i, 0] = 0.5
        return x

    for k in range(2):
        a, d = base((20, 20)) + k, np.arange(20.0) * (k + 2)
        got = fill(xp.asarray(a), xp.asarray(d))
        for i in range(20):
            a[i, i] = d[i]
        for i in range(20):
            a[i, 0] = 0.5
        check_equal(got, a)
    a = base((40,))
    x = lazy(a)
    for i in range(40):  # a read now and then computes the writes so far
        x[i] = float(i * i)
        a[i] = float(i * i)
        if i % 11 == 5:
            assert float(x[i // 2]) == a[i // 2]
    check_equal(x, a)


def test_combined_writes_hold_nothing_once_computed():
    import gc
    import weakref
    x = lazy(base((1000,)))
    before = weakref.ref(x._node)  # the array before the writes
    for i in range(40):
        x[i] = float(i)
    np.asarray(x)
    gc.collect()
    assert before() is None


def test_writes_that_do_not_combine_still_count_for_the_auto_flush(metrics):
    # sliding windows overlap: they stay one write each, and the graph auto-flushes as deep
    x, a = lazy(base((600,))), base((600,))
    for i in range(500):
        x[i:i + 3] = float(i)
        a[i:i + 3] = float(i)
    assert metrics()["auto_flushes"] >= 2
    check_equal(x, a)


def test_a_run_of_writes_computed_in_the_middle_is_written_on():
    # another thread (or a view's read) may compute a node under a run of pending writes
    from xla_array.api.array import wrap
    x, a = lazy(base((60,))), base((60,))
    for i in range(8):
        x[i] = float(i)
        a[i] = float(i)
    inner = wrap(x._node.inputs[0])  # the array after 7 writes, computed on its own
    xp.materialize(inner)
    assert x._node.inputs[0].buffer is not None
    for i in range(8, 40):
        x[i] = float(-i)
        a[i] = float(-i)
    check_equal(x, a)
