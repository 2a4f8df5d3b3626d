"""Sorting, set, searching and gather functions, differential against NumPy.

Shapes come from a small fixed set so that hypothesis examples share compiled executables.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xla_array as xp

FAST = settings(max_examples=30, deadline=None)
SHAPES = [(0,), (1,), (7,), (3, 5), (2, 3, 4)]
REAL = ["bool", "int8", "uint8", "int32", "int64", "uint64", "float32", "float64"]
SPECIAL = [np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0, -1.0, 2.5]


def _data(draw: st.DrawFn, dtype: str, shape: tuple, special: bool = True) -> np.ndarray:
    """Few distinct values (so duplicates are common), floats with NaN/±0/inf."""
    n = int(np.prod(shape))
    if dtype == "bool":
        vals = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    elif dtype.startswith(("float", "complex")):
        pool = SPECIAL if special else [0.0, 1.0, -1.0, 2.5, 3.0]
        vals = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
        if dtype.startswith("complex"):
            im = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
            vals = [complex(a, b) for a, b in zip(vals, im)]
    else:
        lo = 0 if dtype.startswith("u") else -3
        vals = draw(st.lists(st.integers(lo, 4), min_size=n, max_size=n))
    return np.array(vals, dtype=dtype).reshape(shape)


@st.composite
def arrays(draw: st.DrawFn, dtypes: list = REAL, shapes: list = SHAPES,
           special: bool = True) -> np.ndarray:
    return _data(draw, draw(st.sampled_from(dtypes)), draw(st.sampled_from(shapes)), special)


def _same(out: xp.Array, expected: np.ndarray) -> None:
    got = np.asarray(out)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_array_equal(got, expected)


def _np_argsort(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    r = np.flip(np.argsort(np.flip(a, axis=axis), axis=axis, kind="stable"), axis=axis)
    return a.shape[axis] - 1 - r


# ---------------------------------------------------------------- sort / argsort

@FAST
@given(arrays(shapes=[s for s in SHAPES if s != (0,)] + [(0, 3)]), st.data())
def test_sort_argsort_match_numpy(a: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    desc = data.draw(st.booleans())
    x = xp.asarray(a)
    idx = np.asarray(xp.argsort(x, axis=axis, descending=desc))
    assert idx.dtype == np.int64
    np.testing.assert_array_equal(idx, _np_argsort(a, axis, desc))
    expected = np.take_along_axis(a, idx, axis=axis)
    _same(xp.sort(x, axis=axis, descending=desc), expected)
    # unstable: the values must still be sorted
    got = np.asarray(xp.sort(x, axis=axis, descending=desc, stable=False))
    np.testing.assert_array_equal(got, expected)


def test_sort_nan_signed_zero_and_stability() -> None:
    a = np.array([0.0, np.nan, -0.0, 1.0, -np.inf, np.nan, 0.0, -0.0])
    idx = np.asarray(xp.argsort(xp.asarray(a)))
    np.testing.assert_array_equal(idx, np.argsort(a, kind="stable"))
    assert list(idx[:5]) == [4, 0, 2, 6, 7]  # signed zeros are equal: input order kept
    d = np.asarray(xp.argsort(xp.asarray(a), descending=True))
    assert list(d) == [1, 5, 3, 0, 2, 6, 7, 4]  # NaN first, equal elements in input order
    s = np.asarray(xp.sort(xp.asarray(a)))
    np.testing.assert_array_equal(s, np.sort(a))
    # sort (values) orders -0.0 before +0.0, which the standard allows
    assert list(np.signbit(s[1:5])) == [True, True, False, False]
    for dtype in ("float32", "float16", "bfloat16", "float64"):
        xs = xp.astype(xp.asarray(a), getattr(xp, dtype))
        np.testing.assert_array_equal(np.asarray(xp.argsort(xs)), idx)
        np.testing.assert_array_equal(np.asarray(xp.argsort(xs, descending=True)), d)
        got = np.asarray(xp.sort(xs, descending=True)).astype(np.float64)
        np.testing.assert_array_equal(got, np.sort(a)[::-1])


def test_sort_complex_like_numpy() -> None:
    a = np.array([1 + 2j, complex(np.nan, 0), complex(1, np.nan), 5j, 1 + 1j,
                  complex(np.nan, np.nan), complex(np.nan, -1), 1 + 1j])
    _same(xp.sort(xp.asarray(a)), np.sort(a, kind="stable"))
    _same(xp.argsort(xp.asarray(a)), np.argsort(a, kind="stable"))


def test_sort_errors_and_trivial() -> None:
    with pytest.raises(IndexError):
        xp.sort(xp.asarray(1.0))
    with pytest.raises(IndexError):
        xp.argsort(xp.asarray([1, 2]), axis=1)
    with pytest.raises(TypeError):
        xp.sort([3, 1])
    _same(xp.argsort(xp.asarray([[5], [4]]), axis=1), np.zeros((2, 1), np.int64))


# ---------------------------------------------------------------- unique_*

UNIQUE_DTYPES = ["bool", "int8", "uint8", "int64", "float32", "float64", "complex128"]


@FAST
@given(arrays(UNIQUE_DTYPES, SHAPES + [(), (2, 0)]))
def test_unique_all_matches_numpy(a: np.ndarray) -> None:
    x = xp.asarray(a)
    r = xp.unique_all(x)
    e = np.unique_all(a)
    assert r._fields == ("values", "indices", "inverse_indices", "counts")
    _same(r.values, e.values)
    _same(r.indices, e.indices.astype(np.int64))
    _same(r.inverse_indices, e.inverse_indices.reshape(a.shape).astype(np.int64))
    _same(r.counts, e.counts.astype(np.int64))
    c = xp.unique_counts(x)
    assert c._fields == ("values", "counts")
    _same(c.values, e.values)
    _same(c.counts, e.counts.astype(np.int64))
    i = xp.unique_inverse(x)
    assert i._fields == ("values", "inverse_indices")
    _same(i.inverse_indices, e.inverse_indices.reshape(a.shape).astype(np.int64))
    _same(xp.unique_values(x), e.values)


def test_unique_nan_distinct_signed_zero_merged() -> None:
    a = np.array([np.nan, 0.0, -0.0, np.nan, 1.0, -0.0])
    r = xp.unique_all(xp.asarray(a))
    v = np.asarray(r.values)
    assert v.shape == (4,) and np.isnan(v[-2:]).all() and v[0] == 0
    assert not np.signbit(v[0])  # the zero that occurs first
    assert list(np.asarray(r.counts)) == [3, 1, 1, 1]
    assert list(np.asarray(r.indices)) == [1, 4, 0, 3]
    rebuilt = v[np.asarray(r.inverse_indices)]
    np.testing.assert_array_equal(rebuilt, a)  # -0.0 == 0.0, NaN == NaN for this check


def test_unique_copies_only_the_count_to_the_host() -> None:
    x = xp.asarray(np.array([3, 1, 3, 2, 1], np.int32)) * 2
    xp.debug.reset_metrics()
    r = xp.unique_all(x)
    m = xp.debug.metrics()
    # the groups (k copied to the host), then every result at once, on the device
    assert m["materializations"] == 2 and m["bytes_to_host"] == 8
    assert m["materializations_by_cause"] == {"unique_all": 2}
    assert not any(a.is_pending for a in r)
    np.testing.assert_array_equal(np.asarray(r.values), [2, 4, 6])


# ---------------------------------------------------------------- searching

@FAST
@given(arrays(["bool", "int8", "uint8", "int64", "float32", "float64", "complex64"],
              SHAPES + [()]), st.data())
def test_nonzero_and_count_nonzero(a: np.ndarray, data: st.DataObject) -> None:
    x = xp.asarray(a)
    if a.ndim == 0:
        with pytest.raises(ValueError):
            xp.nonzero(x)
    else:
        got = xp.nonzero(x)
        assert isinstance(got, tuple) and len(got) == a.ndim
        for g, e in zip(got, np.nonzero(a)):
            _same(g, e.astype(np.int64))
    axes = [None, 0, -1] + ([(0, -1)] if a.ndim > 1 else [])
    axis = data.draw(st.sampled_from(axes)) if a.ndim else None
    keep = data.draw(st.booleans())
    e = np.asarray(np.count_nonzero(a, axis=axis, keepdims=keep), dtype=np.int64)
    _same(xp.count_nonzero(x, axis=axis, keepdims=keep), e)


@FAST
@given(arrays(["int8", "uint8", "int64", "float32", "float64"], [(1,), (7,)]), st.data())
def test_searchsorted_matches_numpy(a: np.ndarray, data: st.DataObject) -> None:
    side = data.draw(st.sampled_from(["left", "right"]))
    use_sorter = data.draw(st.booleans())
    v = _data(data.draw, str(a.dtype), data.draw(st.sampled_from([(), (4,), (2, 3)])))
    if use_sorter:
        sorter = np.argsort(a, kind="stable")
        out = xp.searchsorted(xp.asarray(a), xp.asarray(v), side=side,
                              sorter=xp.asarray(sorter))
        e = np.searchsorted(a, v, side=side, sorter=sorter)
    else:
        s = np.sort(a)
        out = xp.searchsorted(xp.asarray(s), xp.asarray(v), side=side)
        e = np.searchsorted(s, v, side=side)
    _same(out, np.asarray(e, dtype=np.int64))


def test_searchsorted_scalars_and_errors() -> None:
    x1 = xp.asarray([1.0, 2.0, 2.0, 3.0])
    assert int(xp.searchsorted(x1, 2)) == 1
    assert int(xp.searchsorted(x1, 2.0, side="right")) == 3
    assert xp.searchsorted(x1, 2).shape == ()
    assert int(xp.searchsorted(xp.asarray([], dtype=xp.float64), 1.0)) == 0
    _same(xp.searchsorted(xp.asarray([1, 3, 5]), xp.asarray([2.5, 9.0])),
          np.array([1, 3], np.int64))
    with pytest.raises(ValueError):
        xp.searchsorted(xp.asarray([[1, 2]]), 1)
    with pytest.raises(ValueError):
        xp.searchsorted(x1, 1.0, side="middle")
    with pytest.raises(TypeError):
        xp.searchsorted(x1, 1.0, sorter=xp.asarray([0.0, 1.0, 2.0, 3.0]))


@FAST
@given(arrays(["int8", "uint8", "int64", "float64"], [(), (1,), (7,), (3, 5)]),
       arrays(["int8", "uint8", "int64", "float64"], [(0,), (1,), (7,), (3, 5)]),
       st.booleans())
def test_isin_matches_numpy(a: np.ndarray, b: np.ndarray, invert: bool) -> None:
    _same(xp.isin(xp.asarray(a), xp.asarray(b), invert=invert),
          np.isin(a, b, invert=invert))


def test_isin_scalars() -> None:
    x = xp.asarray([1, 2, 3])
    _same(xp.isin(x, 2), np.array([False, True, False]))
    assert bool(xp.isin(2, x)) and xp.isin(2, x).shape == ()
    assert not bool(xp.isin(7, x))
    with pytest.raises(TypeError):
        xp.isin(1, 2)


# ---------------------------------------------------------------- take / repeat

@FAST
@given(arrays(["int8", "float32", "complex128", "bool"], [(7,), (3, 5), (2, 3, 4)]),
       st.data())
def test_take_and_take_along_axis(a: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[axis]
    idx = np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=0, max_size=5)),
                   dtype=data.draw(st.sampled_from(["int64", "int32", "int8"])))
    _same(xp.take(xp.asarray(a), xp.asarray(idx), axis=axis), np.take(a, idx, axis=axis))
    ishape = list(a.shape)
    ishape[axis] = data.draw(st.integers(0, 3))
    if data.draw(st.booleans()) and a.ndim > 1:
        ishape[(axis + 1) % a.ndim] = 1  # broadcast off the axis
    ind = np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=int(np.prod(ishape)),
                                      max_size=int(np.prod(ishape)))),
                   dtype=np.int64).reshape(ishape)
    e = np.take_along_axis(a, ind, axis=axis)
    _same(xp.take_along_axis(xp.asarray(a), xp.asarray(ind), axis=axis), e)


def test_take_rules() -> None:
    x = xp.asarray([[1, 2], [3, 4]])
    with pytest.raises(ValueError):
        xp.take(x, xp.asarray([0]))
    with pytest.raises(TypeError):
        xp.take(x, xp.asarray([0.0]), axis=0)
    _same(xp.take(xp.asarray([5, 6, 7]), xp.asarray([0, 2])), np.array([5, 7]))
    # out of bounds raises IndexError as NumPy (the standard leaves it unspecified); clamps
    # with the check off
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 3"):
        xp.take(xp.asarray([5, 6, 7]), xp.asarray([9]))
    with pytest.raises(IndexError, match="index -4 is out of bounds"):
        np.asarray(xp.take(xp.asarray([5, 6, 7]), xp.asarray([-4]) * 1))
    _same(xp.take(xp.asarray([5, 6, 7]), xp.asarray([-3, -1])), np.array([5, 7]))
    with xp.flags.using(check_indices=False):
        _same(xp.take(xp.asarray([5, 6, 7]), xp.asarray([9])), np.array([7]))
    with pytest.raises(ValueError):
        xp.take_along_axis(x, xp.asarray([0]), axis=0)


@pytest.mark.parametrize("shape, indices, axis", [
    ((0, 0, 2), [0, 0], 1), ((2, 0), [5], 0), ((0, 3), [5], 1), ((2, 0), [0], 1),
    ((0,), [0], 0), ((0, 0), [-7], 1), ((3, 0), [1, -3], 0), ((0, 4), [], 1)])
def test_take_from_empty_arrays_checks_the_indices_as_numpy(shape, indices, axis) -> None:
    """NumPy's take looks at the indices once per element before ``axis``: with none, it
    takes nothing and raises nothing, whatever the indices (array_api_strict's take is it)."""
    a, i = np.zeros(shape), np.asarray(indices, dtype=np.int64)
    try:
        want = np.take(a, i, axis=axis)
    except IndexError:
        with pytest.raises(IndexError):
            np.asarray(xp.take(xp.asarray(a), xp.asarray(i), axis=axis))
    else:
        _same(xp.take(xp.asarray(a), xp.asarray(i), axis=axis), want)


@FAST
@given(arrays(["int32", "float64", "bool"], [(0,), (4,), (3, 2)]), st.data())
def test_repeat_matches_numpy(a: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(st.sampled_from([None] + list(range(-a.ndim, a.ndim))))
    size = a.size if axis is None else a.shape[axis]
    kind = data.draw(st.sampled_from(["int", "one", "full"]))
    if kind == "int":
        r: object = data.draw(st.integers(0, 3))
        rx: object = r
    else:
        m = 1 if kind == "one" else size
        r = np.array(data.draw(st.lists(st.integers(0, 3), min_size=m, max_size=m)),
                     dtype=np.int64)
        rx = xp.asarray(r)
    _same(xp.repeat(xp.asarray(a), rx, axis=axis), np.repeat(a, r, axis=axis))


def test_repeat_errors() -> None:
    x = xp.asarray([1, 2, 3])
    with pytest.raises(ValueError):
        xp.repeat(x, -1)
    with pytest.raises(ValueError):
        xp.repeat(x, xp.asarray([1, -1, 2]))
    with pytest.raises(ValueError):
        xp.repeat(x, xp.asarray([1, 2]))
    with pytest.raises(TypeError):
        xp.repeat(x, xp.asarray([1.0, 2.0, 3.0]))


# ---------------------------------------------------------------- compile counts

def test_same_shape_new_values_do_not_recompile() -> None:
    rng = np.random.default_rng(0)

    def run(seed: int) -> None:
        r = np.random.default_rng(seed)
        a = r.permutation(np.arange(12.0)).reshape(3, 4)
        a[0, 0] = a[0, 1]  # 11 unique values every time
        x = xp.asarray(a)
        np.asarray(xp.sort(x, axis=0, descending=True))
        np.asarray(xp.argsort(x))
        for arr in xp.unique_all(x):
            np.asarray(arr)
        mask = r.permutation(np.arange(12) < 7).reshape(3, 4)  # always 7 non-zeros
        got = xp.nonzero(xp.asarray(mask))
        np.testing.assert_array_equal(np.asarray(got[1]), np.nonzero(mask)[1])
        np.asarray(xp.searchsorted(xp.sort(xp.reshape(x, (-1,))), x))
        np.asarray(xp.isin(x, xp.asarray(r.integers(0, 12, 5).astype(float))))
        np.asarray(xp.take(x, xp.asarray(r.integers(0, 3, 4)), axis=0))

    run(int(rng.integers(1000)))
    xp.debug.reset_metrics()
    run(1234)
    run(99)
    assert xp.debug.metrics()["compiles"] == 0
