"""The ``unique_*`` family: values against NumPy for every variant (NaN, signed zeros, empty,
0-d and N-d inputs, the large-input path), its signed-zero and NaN conventions, and the
compile counts: the four variants share their two executables (api/sets.py)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import xla_array as xp
from xla_array.api import sets as _sets

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "uint32", "int64", "uint64", "float16",
          "bfloat16", "float32", "float64", "complex64", "complex128"]
SHAPES = [(), (0,), (2, 0), (1,), (2,), (9,), (3, 5), (2, 3, 4)]
SPECIAL = [np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0, -1.0, 2.5]


def _np_dtype(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def _data(dtype: str, shape: tuple, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype == "bool":
        a = rng.integers(0, 2, n).astype(bool)
    elif dtype.startswith("complex"):  # NaN-free: NumPy orders complex NaNs another way
        pool = [v for v in SPECIAL if v == v]
        a = np.empty(n, dtype)
        a.real, a.imag = rng.choice(pool, n), rng.choice(pool, n)
    elif dtype.endswith(("float16", "float32", "float64")):
        a = rng.choice(SPECIAL, n).astype(_np_dtype(dtype))
    else:
        lo = 0 if dtype.startswith("u") else -3
        a = rng.integers(lo, 5, n).astype(dtype)
    return a.reshape(shape)


def _same(out: xp.Array, expected: np.ndarray) -> None:
    got = np.asarray(out)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if got.dtype == ml_dtypes.bfloat16:  # NumPy's testing sees no NaN in bfloat16
        got, expected = got.astype(np.float32), expected.astype(np.float32)
    np.testing.assert_array_equal(got, expected)  # NaN == NaN, -0.0 == +0.0 here


def _check_all_variants(a: np.ndarray) -> None:
    wide = a.astype(np.float32) if a.dtype == ml_dtypes.bfloat16 else a  # NumPy's unique
    e = np.unique_all(wide)
    ev = e.values.astype(a.dtype)
    x = xp.asarray(a)
    r = xp.unique_all(x)
    _same(r.values, ev)
    _same(r.indices, e.indices.astype(np.int64))
    _same(r.inverse_indices, e.inverse_indices.reshape(a.shape).astype(np.int64))
    _same(r.counts, e.counts.astype(np.int64))
    c = xp.unique_counts(x)
    _same(c.values, ev)
    _same(c.counts, e.counts.astype(np.int64))
    i = xp.unique_inverse(x)
    _same(i.values, ev)
    _same(i.inverse_indices, e.inverse_indices.reshape(a.shape).astype(np.int64))
    _same(xp.unique_values(x), ev)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_variant_matches_numpy(dtype: str) -> None:
    for k, shape in enumerate(SHAPES):
        for seed in range(2):
            _check_all_variants(_data(dtype, shape, 10 * k + seed))


@pytest.mark.parametrize("dtype", ["int64", "float32", "float64", "complex128"])
def test_large_inputs_match_numpy(dtype: str) -> None:
    """Above SHARED_MAX elements values/counts and inverse/all record different results."""
    shape = (3, _sets.SHARED_MAX // 3 + 7)
    a = _data(dtype, shape, 7)
    if dtype.startswith("float"):
        a[:, ::7] = np.random.default_rng(1).standard_normal(a[:, ::7].shape)  # many groups
    _check_all_variants(a)


def test_signed_zero_and_nan_conventions() -> None:
    nan2 = np.array([0x7FF0000000000001], np.uint64).view(np.float64)[0]  # another payload
    a = np.array([0.0, np.nan, -0.0, 1.0, nan2, 0.0, -np.nan])
    x = xp.asarray(a)
    bits = np.asarray(xp.unique_values(x)).view(np.uint64)
    canon = np.array(np.nan).view(np.uint64)
    assert list(bits) == [np.array(-0.0).view(np.uint64), np.array(1.0).view(np.uint64),
                          canon, canon, canon]  # -0.0 for the zeros, canonical NaNs
    assert np.array_equal(np.asarray(xp.unique_counts(x).values).view(np.uint64), bits)
    r = xp.unique_all(x)
    # the value that occurs first, NaNs with their own bits, in input order
    assert list(np.asarray(r.values).view(np.uint64)) == list(a[[0, 3, 1, 4, 6]].view(np.uint64))
    assert list(np.asarray(r.indices)) == [0, 3, 1, 4, 6]
    assert list(np.asarray(r.counts)) == [3, 1, 1, 1, 1]
    assert list(np.asarray(r.inverse_indices)) == [0, 2, 0, 1, 3, 0, 4]
    inv = xp.unique_inverse(x)
    assert np.array_equal(np.asarray(inv.values).view(np.uint64),
                          np.asarray(r.values).view(np.uint64))
    np.testing.assert_array_equal(np.asarray(inv.inverse_indices), np.asarray(r.inverse_indices))
    only_pos = np.asarray(xp.unique_values(xp.asarray(np.array([0.0, 2.0, 0.0]))))
    assert not np.signbit(only_pos[0])


def test_zero_d_and_one_element() -> None:
    for a in (np.array(np.nan), np.array([-0.0]), np.array(7, np.int8)):
        r = xp.unique_all(xp.asarray(a))
        assert np.asarray(r.values).tobytes() == a.reshape(1).tobytes()
        assert list(np.asarray(r.indices)) == [0] and list(np.asarray(r.counts)) == [1]
        assert np.asarray(r.inverse_indices).shape == a.shape
        assert np.asarray(r.inverse_indices).dtype == np.int64


def test_pending_input() -> None:
    a = np.array([[3, 1], [3, 2]], np.int64)
    x = xp.asarray(a) * 1
    r = xp.unique_all(x)
    _same(r.values, np.array([1, 2, 3]))
    _same(r.inverse_indices, np.array([[2, 0], [2, 1]]))
    assert not x.is_pending  # computed by the first executable, reused by the second


def test_searchsorted_long_search_matches_numpy() -> None:
    """Searches of 8 or more sorted values run as a loop (api: searchsorted, isin, unique)."""
    rng = np.random.default_rng(3)
    for dtype in ("int64", "float64", "float32"):
        s = np.sort(rng.integers(-50, 50, 1000).astype(dtype))
        v = rng.integers(-60, 60, (7, 11)).astype(dtype)
        if dtype != "int64":
            s[-3:] = np.nan
            v[0, :3] = [np.nan, -0.0, 0.0]
        for side in ("left", "right"):
            got = np.asarray(xp.searchsorted(xp.asarray(s), xp.asarray(v), side=side))
            np.testing.assert_array_equal(got, np.searchsorted(s, v, side=side))
    x1 = rng.integers(0, 40, (4, 6))
    x2 = rng.integers(0, 40, 30)
    np.testing.assert_array_equal(np.asarray(xp.isin(xp.asarray(x1), xp.asarray(x2))),
                                  np.isin(x1, x2))


# ---------------------------------------------------------------- compile counts

def _misses(f: object) -> int:
    """Graphs ``f()`` did not find in memory (each compiled, or loaded from a disk cache)."""
    m0 = xp.debug.metrics()["cache_misses"]
    f()  # type: ignore[operator]
    return xp.debug.metrics()["cache_misses"] - m0


def _force(r: object) -> None:
    xp.materialize(*(r if isinstance(r, tuple) else (r,)))  # type: ignore[arg-type]


@pytest.mark.parametrize("dtype", ["bool", "int64", "float32", "float64", "complex128"])
def test_variants_share_two_executables(dtype: str) -> None:
    # a shape no other test uses: the first call compiles its two graphs here
    a = _data(dtype, (3, 211), 5)
    x = xp.asarray(a)
    xp.materialize(x)
    calls = [xp.unique_values, xp.unique_counts, xp.unique_inverse, xp.unique_all,
             xp.unique_values]
    misses = [_misses(lambda f=f: _force(f(x))) for f in calls]  # type: ignore[misc]
    assert misses == [2, 0, 0, 0, 0], misses
    # new values of the same shape and number of groups: nothing new to compile
    y = xp.asarray(np.random.default_rng(6).permutation(a.ravel()).reshape(a.shape))
    assert _misses(lambda: _force(xp.unique_all(y))) == 0


def test_large_inputs_share_by_pairs() -> None:
    n = _sets.SHARED_MAX + 17
    x = xp.asarray(np.random.default_rng(2).integers(0, 5, n))
    xp.materialize(x)
    calls = [xp.unique_values, xp.unique_counts, xp.unique_inverse, xp.unique_all]
    misses = [_misses(lambda f=f: _force(f(x))) for f in calls]  # type: ignore[misc]
    assert misses == [2, 0, 1, 0], misses


def test_one_graph_per_class_mask() -> None:
    """Results are computed, not pending: a loop over the classes (scikit-learn's
    ``X[y == i]`` after ``unique_inverse``) records one structure for every class."""
    y = xp.asarray(np.random.default_rng(4).integers(0, 4, 1009))
    xp.materialize(y)
    _force(xp.unique_inverse(y))  # the unique_* executables of this shape, compiled
    xp.debug.reset_metrics()
    classes, inv = xp.unique_inverse(y)
    sizes = [int(xp.sum(inv == i)) for i in range(classes.shape[0])]
    assert sum(sizes) == 1009
    assert xp.debug.metrics()["cache_misses"] == 1


def test_the_results_over_one_materialized_array_are_kept_with_its_buffer(metrics):
    """A library asking for unique values, counts, inverse and all of one array gets the first
    call's results (``sets._MEMO``): the two graphs run once, each call's Arrays are its own
    (writing to one changes no later result), and the entry goes with the array's buffer."""
    y = np.array([3, 1, 2, 3, 1, 7, 2, 3])
    x = xp.asarray(y)
    xp.block_until_ready(x)
    m = metrics
    ref = np.unique(y, return_index=True, return_inverse=True, return_counts=True)
    v = xp.unique_values(x)
    runs = m()["host_runs"] + m()["executions"]
    assert runs == 2
    np.testing.assert_array_equal(np.asarray(v), ref[0])
    v[0] = 100  # the caller's own Array
    for _ in range(2):
        c = xp.unique_counts(x)
        i = xp.unique_inverse(x)
        a = xp.unique_all(x)
        np.testing.assert_array_equal(np.asarray(c.values), ref[0])
        np.testing.assert_array_equal(np.asarray(c.counts), ref[3])
        np.testing.assert_array_equal(np.asarray(i.inverse_indices), ref[2])
        np.testing.assert_array_equal(np.asarray(a.indices), ref[1])
        np.testing.assert_array_equal(np.asarray(xp.unique_values(x)), ref[0])
    assert m()["host_runs"] + m()["executions"] == runs
    key = (id(x._node.buffer), x.shape, x.dtype)
    assert key in _sets._MEMO
    x2 = xp.asarray(y + 1)  # another buffer: its own graphs
    np.testing.assert_array_equal(np.asarray(xp.unique_values(x2)), ref[0] + 1)
    assert m()["host_runs"] + m()["executions"] == runs + 2
    del x, v, c, i, a
    assert key not in _sets._MEMO


def test_a_kept_result_whose_buffer_was_deleted_is_computed_again(metrics):
    x = xp.asarray(np.array([5.0, -1.0, 5.0, 2.0]))
    xp.block_until_ready(x)
    first = xp.unique_counts(x)
    first.values._node.buffer.delete()  # (as a donation into another graph would)
    again = xp.unique_counts(x)
    np.testing.assert_array_equal(np.asarray(again.values), [-1.0, 2.0, 5.0])
    np.testing.assert_array_equal(np.asarray(again.counts), [1, 1, 2])
    assert metrics()["host_runs"] + metrics()["executions"] == 4
