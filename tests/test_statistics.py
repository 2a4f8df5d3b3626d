"""Statistics and utility functions, differential against NumPy: cumulative_sum/prod, diff,
all/any and the reductions. Shapes come from a small fixed set to share executables."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xla_array as xp

FAST = settings(max_examples=30, deadline=None)
SHAPES = [(1,), (6,), (3, 4), (2, 3, 2), (0,), (2, 0)]
NUMERIC = ["int8", "int16", "uint8", "uint32", "int64", "float32", "float64", "complex128"]


@st.composite
def arrays(draw: st.DrawFn, dtypes: list = NUMERIC, shapes: list = SHAPES) -> np.ndarray:
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(st.sampled_from(shapes))
    n = int(np.prod(shape))
    if dtype == "bool":
        vals = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    elif dtype[0] in "fc":
        vals = draw(st.lists(st.sampled_from([0.5, -1.0, 2.0, 0.0, 1.5, -3.0]),
                             min_size=n, max_size=n))
        if dtype[0] == "c":
            vals = [complex(v, -v / 2) for v in vals]
    else:
        lo = 0 if dtype[0] == "u" else -3
        vals = draw(st.lists(st.integers(lo, 3), min_size=n, max_size=n))
    return np.array(vals, dtype=dtype).reshape(shape)


def _close(out: xp.Array, expected: np.ndarray) -> None:
    got = np.asarray(out)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if got.dtype.kind in "fc":
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, expected)


# ---------------------------------------------------------------- cumulative_sum / prod

@FAST
@given(arrays(NUMERIC + ["bool"]), st.data())
def test_cumulative_matches_numpy(a: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1)) if a.ndim > 1 else \
        data.draw(st.sampled_from([None, 0, -1]))
    initial = data.draw(st.booleans())
    name = data.draw(st.sampled_from(["cumulative_sum", "cumulative_prod"]))
    x = xp.asarray(a)
    kw = {"axis": axis, "include_initial": initial}
    _close(getattr(xp, name)(x, **kw), getattr(np, name)(a, **kw))


def test_cumulative_dtypes_follow_sum() -> None:
    for dt, acc in [("int8", "int64"), ("uint16", "uint64"), ("bool", "int64"),
                    ("float32", "float32"), ("complex64", "complex64"), ("int64", "int64")]:
        x = xp.asarray(np.ones(3, dtype=dt))
        assert xp.cumulative_sum(x).dtype == xp.asarray(np.ones(1, acc)).dtype
        assert xp.cumulative_prod(x).dtype == xp.asarray(np.ones(1, acc)).dtype
    x = xp.asarray(np.array([100, 100, 100], np.int8))
    _close(xp.cumulative_sum(x, dtype=xp.int16), np.array([100, 200, 300], np.int16))
    _close(xp.cumulative_sum(x, dtype=xp.float32), np.array([100, 200, 300], np.float32))
    with pytest.raises(TypeError):
        xp.cumulative_sum(xp.asarray([1j]), dtype=xp.float64)


def test_cumulative_shapes_and_errors() -> None:
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError):
        xp.cumulative_sum(x)
    with pytest.raises(IndexError):
        xp.cumulative_sum(x, axis=2)
    # 0-d input behaves as 1-D, as in NumPy
    _close(xp.cumulative_sum(xp.asarray(5)), np.cumulative_sum(np.array(5)))
    _close(xp.cumulative_prod(xp.asarray(5.0), include_initial=True),
           np.cumulative_prod(np.array(5.0), include_initial=True))
    big = np.random.default_rng(0).integers(-5, 5, 1000)
    _close(xp.cumulative_sum(xp.asarray(big)), np.cumsum(big))
    special = np.array([1.0, np.inf, -np.inf, 2.0])
    with np.errstate(invalid="ignore"):
        expected = np.cumsum(special)
    _close(xp.cumulative_sum(xp.asarray(special)), expected)


# ---------------------------------------------------------------- diff

@FAST
@given(arrays(NUMERIC + ["bool"], [s for s in SHAPES if s != (2, 0)]), st.data())
def test_diff_matches_numpy(a: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = data.draw(st.integers(0, 4))
    kw: dict = {"axis": axis, "n": n}
    for name in ("prepend", "append"):
        if data.draw(st.booleans()):
            shape = list(a.shape)
            shape[axis] = data.draw(st.integers(1, 2))
            kw[name] = np.ones(shape, dtype=a.dtype)
    x = xp.asarray(a)
    got = xp.diff(x, **{k: xp.asarray(v) if isinstance(v, np.ndarray) else v
                        for k, v in kw.items()})
    if n == 0:  # NumPy ignores prepend/append for n=0; the standard's shape rule keeps them
        parts = [kw.get("prepend"), a, kw.get("append")]
        expected = np.concatenate([p for p in parts if p is not None], axis=axis)
    else:
        expected = np.diff(a, **kw)
    _close(got, expected)


def test_diff_rules() -> None:
    with pytest.raises(ValueError):
        xp.diff(xp.asarray(1.0))
    with pytest.raises(ValueError):
        xp.diff(xp.asarray([1, 2]), n=-1)
    with pytest.raises(ValueError):
        xp.diff(xp.asarray([[1, 2]]), axis=1, prepend=xp.asarray([[1], [2]]))
    _close(xp.diff(xp.asarray([1, 4, 9]), prepend=0, append=20), np.array([1, 3, 5, 11]))
    _close(xp.diff(xp.asarray(np.array([1, 4], np.uint8)), prepend=xp.asarray([2.5])),
           np.array([-1.5, 3.0]))


# ---------------------------------------------------------------- all / any and reductions

@FAST
@given(arrays(NUMERIC + ["bool"]), st.data())
def test_reductions_match_numpy(a: np.ndarray, data: st.DataObject) -> None:
    axes = [None] + list(range(-a.ndim, a.ndim)) + ([(0, a.ndim - 1)] if a.ndim > 1 else [])
    axis = data.draw(st.sampled_from(axes))
    keep = data.draw(st.booleans())
    x = xp.asarray(a)
    _close(xp.all(x, axis=axis, keepdims=keep), np.all(a, axis=axis, keepdims=keep))
    _close(xp.any(x, axis=axis, keepdims=keep), np.any(a, axis=axis, keepdims=keep))
    if a.dtype != np.bool_:
        acc = {"i": np.int64, "u": np.uint64}.get(a.dtype.kind, a.dtype)
        _close(xp.sum(x, axis=axis, keepdims=keep),
               np.sum(a, axis=axis, keepdims=keep, dtype=acc))
        _close(xp.prod(x, axis=axis, keepdims=keep),
               np.prod(a, axis=axis, keepdims=keep, dtype=acc))


def test_new_values_same_shape_do_not_recompile() -> None:
    def run(seed: int) -> None:
        a = np.random.default_rng(seed).normal(size=(4, 5))
        x = xp.asarray(a)
        np.asarray(xp.cumulative_sum(x, axis=1))
        np.asarray(xp.cumulative_prod(x, axis=0, include_initial=True))
        np.asarray(xp.diff(x, n=2, append=x[:, :1]))
        np.asarray(xp.all(x > 0, axis=0))

    run(0)
    xp.debug.reset_metrics()
    run(1)
    run(2)
    assert xp.debug.metrics()["compiles"] == 0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, axis", [((100_000,), None), ((1000, 100), 0), ((1000, 100), 1)])
def test_max_min_of_large_arrays_propagate_nan(dtype, shape, axis):
    # XLA:CPU hands float max/min reductions of ~10,000+ elements to YNNPACK, which skips NaN
    # (the result was the largest number); the standard and NumPy propagate NaN
    rng = np.random.default_rng(7)
    base = rng.standard_normal(shape).astype(dtype)
    base.flat[base.size // 2] = np.inf
    for pos in (None, 0, base.size // 3, base.size - 1):
        a = base.copy()
        if pos is not None:
            a.flat[pos] = np.nan
        x = xp.asarray(a)
        for f, ref in ((xp.max, np.max), (xp.min, np.min)):
            np.testing.assert_array_equal(np.asarray(f(x, axis=axis)), ref(a, axis=axis))
        # the same reduction fused after elementwise work
        np.testing.assert_array_equal(np.asarray(xp.max(x * 2.0, axis=axis)),
                                      np.max(a * 2, axis=axis))


def test_nan_propagates_through_maximum_minimum_and_clip_fused_into_large_reductions():
    # XLA:CPU fused maximum/minimum into a YNNPACK reduction, which skipped NaN:
    # sum(maximum(x, 0)) and the inf-norm were finite for an x holding NaN
    rng = np.random.default_rng(3)
    a = rng.standard_normal((1000, 64))
    b = rng.standard_normal((1000, 64))
    a[17, 5] = np.nan
    a[3, 3] = np.inf
    x, y = xp.asarray(a), xp.asarray(b)
    cases = [
        (xp.sum(xp.maximum(x, 0.0)), np.sum(np.maximum(a, 0))),
        (xp.sum(xp.maximum(x, 0.0), axis=1), np.sum(np.maximum(a, 0), axis=1)),
        (xp.sum(xp.minimum(y, x)), np.sum(np.minimum(b, a))),
        (xp.sum(xp.clip(x, -1.0, 1.0), axis=0), np.sum(np.clip(a, -1, 1), axis=0)),
        (xp.max(xp.maximum(x, 0.0)), np.max(np.maximum(a, 0))),
        (xp.linalg.vector_norm(x, ord=float("inf")), np.max(np.abs(a))),
        (xp.linalg.vector_norm(x, ord=float("-inf")), np.min(np.abs(a))),
    ]
    for got, want in cases:
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def _softmax(mod, a):
    m = mod.max(a, axis=1, keepdims=True)
    e = mod.exp(a - m)
    return e / mod.sum(e, axis=1, keepdims=True)


def _logsumexp(mod, a):
    m = mod.max(a, axis=1)
    return m + mod.log(mod.sum(mod.exp(a - m[:, None]), axis=1))


def _centered(mod, a):
    return a - mod.max(a, axis=1, keepdims=True)


def _max_times_two(mod, a):
    return mod.min(a, axis=1) * 2.0


@pytest.mark.parametrize("f, checked", [(_softmax, False), (_logsumexp, False),
                                        (_centered, True), (_max_times_two, True)])
def test_max_reductions_skip_their_nan_pass_only_where_the_results_are_nan_anyway(f, checked):
    """A max/min whose every result is NaN on a row of x holding a NaN anyway (softmax,
    logsumexp: through ``x - m`` and the row's sum) needs no NaN pass of its own (one pass
    over x, as jax.jit's); ``x - max(x)`` and ``2 * min(x)`` keep it. Values equal NumPy's."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((64, 5000)).astype(np.float32)
    a[3, 7] = np.nan
    a[5, :] = np.nan
    a[9, 2] = np.inf
    a[11, 4] = -np.inf
    r = f(xp, xp.asarray(a))
    assert ("stablehlo.abs" in xp.debug.mlir(r)) == checked
    with np.errstate(all="ignore"):
        want = f(np, a)
    got = np.asarray(r)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


@pytest.mark.usefixtures("on_cpu")  # the CPU compiler's HLO
def test_bool_and_integer_reductions_over_trailing_axes_compile_without_the_tree():
    # such graphs are compiled without XLA's tree_reduction_rewriter (3-5 kernels -> 1; the
    # result does not depend on the order); leading axes keep it (float sums over trailing
    # axes are written out in NumPy's order: no XLA reduction)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((20_000, 16))
    i = rng.integers(-50, 50, (20_000, 16)).astype(np.int32)
    x, n = xp.asarray(a), xp.asarray(i)
    flat = [
        (xp.any(x > 2.5), np.any(a > 2.5)),
        (xp.all(xp.isfinite(x)), np.all(np.isfinite(a))),
        (xp.count_nonzero(x > 1.0), np.count_nonzero(a > 1.0)),
        (xp.sum(n, axis=1), np.sum(i, axis=1, dtype=np.int64)),
        (xp.max(n), np.max(i)),
        (xp.min(n, axis=(0, 1)), np.min(i)),
        (xp.sum(n * n), np.sum(i.astype(np.int64) * i)),
    ]
    for got, want in flat:
        assert "reduce-window" not in xp.debug.hlo(got)
        np.testing.assert_array_equal(np.asarray(got), want)
    kept = [(xp.any(x > 2.5, axis=0), np.any(a > 2.5, axis=0))]  # a leading axis
    for got, want in kept:
        assert "reduce-window" in xp.debug.hlo(got)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


@pytest.mark.usefixtures("on_cpu")  # the CPU compiler's HLO, the native kernels
def test_float_reductions_xla_leaves_whole_do_not_keep_the_tree():
    """Beside a bool reduction, float reductions that XLA does not add itself (column sums in
    the column-sum kernel, a max over rows of 16) leave the graph without the tree (a
    scikit-learn fit's finiteness check fused with its means); a float max over 20,000 rows
    keeps it (the sign of a zero max follows XLA's order). Values are NumPy's."""
    from xla_array.core import registry

    rng = np.random.default_rng(6)
    a = rng.standard_normal((20_000, 16))
    x = xp.asarray(a)
    kernel = "pairwise" in registry.KERNELS and registry.in_use(registry.KERNELS["pairwise"])
    cases = [
        (xp.where(xp.all(xp.isfinite(x)), xp.sum(x, axis=0), 0.0),
         np.where(np.all(np.isfinite(a)), np.sum(a, axis=0), 0.0), not kernel),
        (xp.where(xp.any(x > 2.5), xp.max(x, axis=1), 0.0),
         np.where(np.any(a > 2.5), np.max(a, axis=1), 0.0), False),
        (xp.where(xp.any(x > 2.5), xp.max(x, axis=0), 0.0),
         np.where(np.any(a > 2.5), np.max(a, axis=0), 0.0), True),
    ]
    for k, (got, want, tree) in enumerate(cases):
        assert ("reduce-window" in xp.debug.hlo(got)) == tree
        if k == 0 and not kernel:  # (without the kernel XLA adds the rows, in its own order)
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
        else:
            assert np.asarray(got).tobytes() == want.tobytes()


def test_a_rows_sum_is_numpys_whatever_the_rows_and_graph_around_it():
    """SciPy's bootstrap compares the means of 100 resamples computed in one array and in ten
    of 10: the sum of a row must not depend on the other rows nor on the graph it is fused in.
    Sums over trailing axes follow NumPy's pairwise order (core/ops/reductions.py)."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal((100, 10)) * np.exp(rng.uniform(-8, 8, (100, 10)))
    whole = np.asarray(xp.mean(xp.asarray(a), axis=-1))
    parts = np.concatenate([np.asarray(xp.mean(xp.asarray(a[i:i + 10]), axis=-1))
                            for i in range(0, 100, 10)])
    fused = np.asarray(xp.mean(xp.asarray(a) * 1.0, axis=-1) + 0.0)
    np.testing.assert_array_equal(whole, np.mean(a, axis=-1))
    np.testing.assert_array_equal(parts, whole)
    np.testing.assert_array_equal(fused, whole)
    # var and std: NumPy's own formula, its order of additions
    for f in ("var", "std"):
        np.testing.assert_array_equal(np.asarray(getattr(xp, f)(xp.asarray(a), axis=1)),
                                      getattr(np, f)(a, axis=1))
    # SciPy's sigmaclip: a sum of 36 squares, then the same again in another graph
    c = rng.standard_normal(36) * 3
    m, s = xp.mean(xp.asarray(c)), xp.std(xp.asarray(c))
    assert float(m - 4 * s) == float(np.mean(c) - 4 * np.std(c))
    # every axis, a leading size-1 axis, axis=None, keepdims
    b = rng.standard_normal((1, 6, 37)) * np.exp(rng.uniform(-8, 8, (1, 6, 37)))
    for axis in (None, 2, (1, 2), (0, 2), -1):
        np.testing.assert_array_equal(np.asarray(xp.sum(xp.asarray(b), axis=axis)),
                                      np.sum(b, axis=axis))
    np.testing.assert_array_equal(np.asarray(xp.sum(xp.asarray(b), axis=2, keepdims=True)),
                                  np.sum(b, axis=2, keepdims=True))
    # a leading axis: NumPy adds the rows one after the other (written out up to 16 rows;
    # beyond, the column-sum kernel: tests/test_kernels.py)
    c = rng.standard_normal((12, 50)) * np.exp(rng.uniform(-8, 8, (12, 50)))
    for f in ("sum", "mean", "var"):
        np.testing.assert_array_equal(np.asarray(getattr(xp, f)(xp.asarray(c), axis=0)),
                                      getattr(np, f)(c, axis=0))


def test_numpy_order_sums_keep_nan_inf_and_zero_signs():
    rows = np.array([[-0.0] * 9, [0.0, -0.0] * 4 + [-0.0], [1.0, np.inf, 2.0] * 3,
                     [np.inf, -np.inf] + [1.0] * 7, [np.nan] + [1.0] * 8])
    got = np.asarray(xp.sum(xp.asarray(rows), axis=1))
    with np.errstate(invalid="ignore"):
        want = np.sum(rows, axis=1)
        fast_want = np.sum(rows[2:4], axis=1)
    np.testing.assert_array_equal(got, want)
    assert not np.signbit(got[0])  # NumPy adds the sum to 0.0: -0.0 becomes 0.0
    assert float(xp.sum(xp.asarray(np.full(300, -0.0)))) == 0.0
    with xp.flags.using(fast_math=True):  # XLA's own reduction: same values up to rounding
        np.testing.assert_allclose(np.asarray(xp.sum(xp.asarray(rows[2:4]), axis=1)),
                                   fast_want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_maxima_of_short_rows_are_a_chain_with_numpys_values(dtype):
    """Float max/min over at most 8 trailing values per result are written out as elementwise
    maxima of the columns (one loop, NaN propagating), longer rows keep XLA's reduction."""
    rng = np.random.default_rng(3)
    v = rng.standard_normal((500, 2, 3)).astype(dtype)
    v[7, 1, 2] = np.nan
    v[9, 0, :] = np.inf
    x = xp.asarray(v)
    for fn, np_fn in ((xp.max, np.max), (xp.min, np.min)):
        for axes, keep in (((2,), False), ((1, 2), True), ((2, 1), False), (-1, True)):
            got = fn(x, axis=axes, keepdims=keep)
            assert "stablehlo.reduce" not in xp.debug.mlir(got), axes
            want = np_fn(v, axis=axes, keepdims=keep)
            assert np.array_equal(np.asarray(got), want, equal_nan=True), (fn, axes)
    long_rows = xp.max(xp.reshape(x, (100, 30)), axis=1)
    assert "stablehlo.reduce" in xp.debug.mlir(long_rows)
    assert np.array_equal(np.asarray(long_rows), v.reshape(100, 30).max(axis=1), equal_nan=True)
    assert "stablehlo.reduce" in xp.debug.mlir(xp.max(x, axis=0))  # (not trailing)


def test_a_keepdims_result_is_an_array_of_its_own_that_writes_and_views_follow():
    """keepdims records the reshape of the reduction as is (no view of the hidden result):
    writes into it, through its views and into their bases behave as NumPy's."""
    a = np.arange(12.0).reshape(3, 4)
    for mod, x in ((np, a), (xp, xp.asarray(a))):
        r = mod.sum(x, axis=1, keepdims=True)
        v = r[1:, :]
        v[0, 0] = -1.0
        r[2, 0] = -2.0
        s = mod.max(x, axis=0, keepdims=True)
        s[0, 1:3] = 0.0
        if mod is np:
            want = (r.copy(), v.copy(), s.copy())
        else:
            got = (np.asarray(r), np.asarray(v), np.asarray(s))
    for g, w in zip(got, want):
        assert g.shape == w.shape and np.array_equal(g, w)
