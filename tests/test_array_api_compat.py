"""array-api-compat and array-api-extra with xla_array arrays, and the array behaviour that
scikit-learn, SciPy and these helpers lean on (observed in their code paths).

array-api-compat must see xla_array as a foreign standard library (its namespace is ours, not a
wrapped one); every array-api-extra function gives the result it gives for NumPy input.
"""

from __future__ import annotations

import pickle
import warnings
from typing import Any

import numpy as np
import pytest

import xla_array as xp

compat = pytest.importorskip("array_api_compat")
xpx = pytest.importorskip("array_api_extra")

RNG = np.random.default_rng(0)
A = RNG.normal(size=(4, 5))
V = RNG.normal(size=6)
IV = np.array([3, 1, 4, 1, 5, 9, 2, 6])


def _x(a: np.ndarray) -> xp.Array:
    return xp.asarray(a.copy())


def _same(got: object, expected: object, rtol: float = 1e-12) -> None:
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            _same(g, e, rtol)
        return
    assert type(got) is xp.Array, type(got)
    e = np.asarray(expected)
    g = np.asarray(got)
    assert g.shape == e.shape, (g.shape, e.shape)
    assert g.dtype == e.dtype, (g.dtype, e.dtype)
    np.testing.assert_allclose(g, e, rtol=rtol, atol=1e-14)


# ---------------------------------------------------------------- array-api-compat
def test_array_namespace_is_ours() -> None:
    x, y = _x(A), _x(V)
    assert compat.array_namespace(x) is xp
    assert compat.array_namespace(x, y, 1.0, None) is xp
    assert compat.get_namespace(x) is xp
    assert compat.array_namespace(x, api_version=xp.__array_api_version__) is xp
    for version in ("2023.12", "2024.12"):  # older versions: a view of the namespace
        ns = compat.array_namespace(x, api_version=version)
        assert ns.__name__ == "xla_array" and ns.__array_api_version__ == version
        assert type(ns.sum(x)) is xp.Array
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="2021.12")
    # the libraries special-case these two names; we must be neither
    assert xp.__name__ not in ("numpy", "array_api_strict")
    assert compat.is_array_api_obj(x)
    for check in ("numpy", "cupy", "torch", "dask", "jax", "ndonnx", "pydata_sparse", "dpnp"):
        assert not getattr(compat, f"is_{check}_array")(x)
        assert not getattr(compat, f"is_{check}_namespace")(xp)
    assert not compat.is_array_api_strict_namespace(xp)


def test_mixing_with_numpy_is_refused_by_compat() -> None:
    with pytest.raises(TypeError):
        compat.array_namespace(_x(A), A)


def test_device_size_to_device() -> None:
    x = _x(A)
    d = compat.device(x)
    assert d == x.device and d == xp.asarray(1.0).device
    assert (d != x.device) is False
    assert compat.size(x) == 20 and compat.size(xp.asarray(2.0)) == 1
    assert compat.size(xp.zeros((3, 0))) == 0
    y = compat.to_device(x, d)
    assert type(y) is xp.Array and y.device == d
    np.testing.assert_array_equal(np.asarray(y), A)
    info = xp.__array_namespace_info__()
    for dev in info.devices():
        z = compat.to_device(x, dev)
        assert z.device == dev and compat.device(z) == dev
        np.testing.assert_array_equal(np.asarray(z), A)


def test_laziness_and_writeability_checks() -> None:
    x = _x(A) * 2.0
    assert x.is_pending
    # bool() of an xla_array array always works (it computes), so the compat helpers treat it
    # as an eager array: is_lazy_array is False and helpers may call bool()/float() freely.
    assert compat.is_lazy_array(x) is False
    assert compat.is_writeable_array(x) is True


# ---------------------------------------------------------------- array-api-extra
def _cases() -> list:
    nanA = A.copy()
    nanA[1, 2] = np.nan
    s = np.sort(V)
    return [
        ("atleast_nd", lambda x: xpx.atleast_nd(x, ndim=3), V),
        ("at.set", lambda x: xpx.at(x, 2).set(7.0), V),
        ("at.set.copy", lambda x: xpx.at(x, 2).set(7.0, copy=True), V),
        ("at.add.slice", lambda x: xpx.at(x, slice(1, 4)).add(1.0), V),
        ("at.multiply.mask", lambda x: xpx.at(x, x > 0).multiply(2.0), V),
        ("at.divide.tuple", lambda x: xpx.at(x, (1, 2)).divide(2.0), A),
        ("at.power.col", lambda x: xpx.at(x, (slice(None), 1)).power(2.0), A),
        ("at.subtract.ellipsis", lambda x: xpx.at(x, (Ellipsis, 1)).subtract(1.0), A),
        ("at.min", lambda x: xpx.at(x, slice(0, 3)).min(0.0), V),
        ("at.max", lambda x: xpx.at(x, slice(0, 3)).max(0.0), V),
        ("apply_where", lambda x: xpx.apply_where(x > 0, x, lambda a: a ** 0.5,
                                                   fill_value=-1.0), V),
        ("apply_where.2", lambda x: xpx.apply_where(x > 0, (x, x), lambda a, b: a * b,
                                                     lambda a, b: a - b), V),
        ("cov", lambda x: xpx.cov(x), A),
        ("create_diagonal", lambda x: xpx.create_diagonal(x, offset=1), V),
        ("isclose", lambda x: xpx.isclose(x, x + 1e-12), A),
        ("isin", lambda x: xpx.isin(x, x[:3]), IV),
        ("kron", lambda x: xpx.kron(x, x[:2, :2]), A),
        ("nan_to_num", lambda x: xpx.nan_to_num(x), nanA),
        ("nanmax", lambda x: xpx.nanmax(x, axis=0), nanA),
        ("nanmin", lambda x: xpx.nanmin(x, axis=0), nanA),
        ("nanmean", lambda x: xpx.nanmean(x, axis=0), nanA),
        ("nansum", lambda x: xpx.nansum(x, axis=0), nanA),
        ("nunique", lambda x: xpx.nunique(x), IV),
        ("one_hot", lambda x: xpx.one_hot(x, 10), IV),
        ("pad", lambda x: xpx.pad(x, 2), A),
        ("pad.widths", lambda x: xpx.pad(x, ((1, 0), (0, 2)), constant_values=3.0), A),
        ("partition", lambda x: xpx.partition(x, 3)[3], V),
        ("argpartition", lambda x: x[xpx.argpartition(x, 3)][3], V),
        ("searchsorted", lambda x: xpx.searchsorted(x, x[:3] + 0.1), s),
        ("setdiff1d", lambda x: xpx.setdiff1d(x, x[:3]), IV),
        ("union1d", lambda x: xpx.union1d(x, x[:3] + 1), IV),
        ("sinc", lambda x: xpx.sinc(x), V),
        ("unravel_index", lambda x: xpx.unravel_index(x, (3, 4)), np.array([1, 5, 11])),
        ("tril_indices", lambda x: xpx.tril_indices(4, xp=compat.array_namespace(x)), V),
        ("triu_indices", lambda x: xpx.triu_indices(4, offset=1,
                                                    xp=compat.array_namespace(x)), V),
        ("diag_indices", lambda x: xpx.diag_indices(4, xp=compat.array_namespace(x)), V),
        ("angle", lambda x: xpx.angle(x), V),
        ("deg2rad", lambda x: xpx.deg2rad(x), V),
        ("rad2deg", lambda x: xpx.rad2deg(x), V),
        ("lazy_apply", lambda x: xpx.lazy_apply(np.cumsum, x, shape=x.shape,
                                                dtype=x.dtype), V),
    ]


@pytest.mark.parametrize("name,fn,data", _cases(), ids=[c[0] for c in _cases()])
def test_array_api_extra_matches_numpy(name: str, fn: object, data: np.ndarray) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        expected = fn(data.copy())  # type: ignore[operator]
        got = fn(_x(data))  # type: ignore[operator]
    _same(got, expected)


def test_at_is_visible_through_every_reference() -> None:
    x = _x(V)
    alias = x
    out = xpx.at(x, slice(0, 2)).set(0.0, copy=False)
    assert out is x or np.array_equal(np.asarray(out), np.asarray(alias))
    assert np.asarray(alias)[:2].tolist() == [0.0, 0.0]
    x = _x(V)
    copy = xpx.at(x, 0).set(5.0, copy=True)
    assert float(copy[0]) == 5.0 and float(x[0]) == V[0]


def test_default_dtype() -> None:
    assert xpx.default_dtype(xp) == xp.float64
    assert xpx.default_dtype(xp, "complex floating") == xp.complex128
    assert xpx.default_dtype(xp, "integral") == xp.int64
    assert xpx.default_dtype(xp, "indexing") == xp.int64


# ---------------------------------------------------------------- what the libraries lean on
def test_inplace_setitem_keys_visible_through_references() -> None:
    y = xp.asarray(np.arange(12.0).reshape(3, 4))
    ref = y
    e = np.arange(12.0).reshape(3, 4)
    for arr in (y, e):
        arr[1, 2] = 100.0
        arr[arr > 50] = -1.0
        arr[(slice(0, 2), slice(1, 3))] = 5.0
        arr[..., 0] = 7.0
        arr[np.int64(2), np.int32(3)] = 9.0
        arr[np.asarray([True, False, True])] = 0.5
    y[xp.asarray(True)] = y  # a 0-d mask selects everything
    np.testing.assert_array_equal(np.asarray(ref), e)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_inplace_operators_visible_through_references(dtype: str) -> None:
    a = np.arange(1.0, 7.0, dtype=dtype).reshape(2, 3)
    y = xp.asarray(a)
    ref = y
    y += 1
    y -= 0.5
    y *= 2
    y /= 4
    y **= 2
    e = ((((a + 1) - 0.5) * 2) / 4) ** 2
    np.testing.assert_allclose(np.asarray(ref), e, rtol=1e-6)
    i = xp.asarray(np.arange(6).reshape(2, 3))
    iref = i
    i &= 5
    i |= 8
    np.testing.assert_array_equal(np.asarray(iref), (np.arange(6).reshape(2, 3) & 5) | 8)


def test_iteration_array_and_dlpack() -> None:
    x = _x(A)
    rows = list(x)
    assert len(rows) == 4 and all(type(r) is xp.Array for r in rows)
    np.testing.assert_array_equal(np.asarray(rows[2]), A[2])
    c = np.array(x, copy=True)
    assert c.flags.writeable and np.array_equal(c, A)
    assert np.asarray(x, dtype=np.float32).dtype == np.float32
    assert x.__dlpack_device__() == (1, 0)  # kDLCPU
    np.testing.assert_array_equal(np.from_dlpack(x), A)
    if hasattr(xp, "bfloat16"):
        with pytest.raises(BufferError):
            xp.asarray(V, dtype=xp.bfloat16).__dlpack__()


def test_numpy_asarray_gives_a_writable_array_of_its_own() -> None:
    """np.asarray(x) is writable as for NumPy input (SciPy's sosfilt hands it to Cython as a
    writable buffer; its writes reach x when it is released, see test_host_copies.py);
    copy=False is the zero-copy read-only view."""
    x = _x(A)
    a = np.asarray(x)
    assert a.flags.writeable and np.array_equal(a, A)
    a[0, 0] = 100.0
    assert float(x[0, 0]) == A[0, 0] and not np.shares_memory(a, np.asarray(x))
    del a
    assert float(x[0, 0]) == 100.0
    x = _x(A)
    v = np.asarray(x, copy=False)
    assert not v.flags.writeable and np.array_equal(v, A)
    assert np.asarray(x, copy=False) is not None and np.array(x).flags.writeable
    assert np.asarray(x, dtype=np.float32).flags.writeable
    with pytest.raises(ValueError):
        np.asarray(x, dtype=np.float32, copy=False)
    x = _x(A)
    assert np.add(x, 1.0, out=x) is x  # NumPy writes into an Array given as out=
    np.testing.assert_array_equal(np.asarray(x), A + 1.0)


def test_namespace_functions_take_numpy_arrays() -> None:
    """NumPy arrays (and NumPy scalars) where an array is expected are converted as asarray
    would (SciPy's PchipInterpolator passes some); Python lists still raise TypeError."""
    s, b = np.sort(V), np.array([[2.0, 1.0], [1.0, 3.0]])
    cases = [
        lambda m: m.sum(A, axis=0),
        lambda m: m.concat([A, m.asarray(A)]) if m is xp else np.concatenate([A, A]),
        lambda m: m.stack([V, V]),
        lambda m: m.where(A > 0, A, -A),
        lambda m: m.where(xp.asarray(A > 0) if m is xp else A > 0, A, 0.0),
        lambda m: m.sort(V),
        lambda m: m.argsort(V),
        lambda m: m.linalg.solve(b, V[:2, None]),
        lambda m: m.fft.fft(V),
        lambda m: m.diff(V, prepend=np.zeros(1)),
        lambda m: m.diff(xp.asarray(V) if m is xp else V, append=np.ones(1)),
        lambda m: m.searchsorted(s, V),
        lambda m: m.exp(A),
        lambda m: m.exp(np.float64(0.5)),
        lambda m: m.reshape(A, (5, 4)),
        lambda m: m.astype(A, m.float32),
        lambda m: m.matmul(A, A.T),
        lambda m: m.zeros_like(A),
        lambda m: m.tril(A),
        lambda m: m.unique_values(IV) if m is xp else np.unique(IV),
        lambda m: m.isin(IV, np.array([1, 9])),
        lambda m: m.take(V, np.array([0, 3])),
        lambda m: m.clip(A, -0.5, 0.5),
        lambda m: m.cumulative_sum(V),
        lambda m: m.linalg.vector_norm(V),
    ]
    for fn in cases:
        _same(fn(xp), fn(np))
    c = xp.ones(5, device=xp.asarray(1.0).device)
    _same(c + np.ones(5), np.full(5, 2.0))
    for bad in (lambda: xp.sum([1.0, 2.0]), lambda: xp.concat([[1.0], [2.0]]),
                lambda: xp.sort([3, 1]), lambda: xp.fft.fft([1.0, 2.0]), lambda: xp.exp(1.0),
                lambda: xp.linalg.solve([[1.0]], [1.0]), lambda: xp.reshape((1, 2), (2,))):
        with pytest.raises(TypeError):
            bad()


def test_asarray_and_default_dtypes() -> None:
    x = xp.asarray(A, device=xp.asarray(1.0).device, dtype=xp.float32, copy=True)
    assert x.dtype == xp.float32
    assert xp.asarray(0.0).dtype == xp.float64
    assert xp.asarray(0).dtype == xp.int64
    with pytest.raises(ValueError):
        xp.asarray(A, copy=False)  # host data has to be copied to the device


def test_index_results_are_int64_and_diff_positional() -> None:
    x = _x(A)
    assert xp.argmax(x).dtype == xp.int64
    assert xp.argsort(x[0]).dtype == xp.int64
    assert xp.nonzero(x > 0)[0].dtype == xp.int64
    assert xp.searchsorted(xp.sort(x[0]), x[1]).dtype == xp.int64
    assert xp.unique_inverse(x).inverse_indices.dtype == xp.int64
    d = np.array([1.0, 4.0, 9.0, 16.0, 30.0])
    np.testing.assert_array_equal(np.asarray(xp.diff(xp.asarray(d), 2)), np.diff(d, 2))
    np.testing.assert_array_equal(np.asarray(xp.diff(x, 1, 0)), np.diff(A, 1, 0))


def test_numpy_integer_scalars_and_arrays_as_indices() -> None:
    x = _x(A)
    assert float(x[np.int64(1), np.int64(2)]) == A[1, 2]
    np.testing.assert_array_equal(np.asarray(x[np.array([0, 2])]), A[[0, 2]])
    np.testing.assert_array_equal(np.asarray(x[xp.asarray([0, 2])]), A[[0, 2]])
    np.testing.assert_array_equal(np.asarray(x[x > 0.5]), A[A > 0.5])


def test_pickle_roundtrip() -> None:
    x = _x(A)
    y = pickle.loads(pickle.dumps(x))
    assert type(y) is xp.Array and y.device == x.device
    np.testing.assert_array_equal(np.asarray(y), A)


def _views_cases() -> list:
    def write_row(x: Any, m: Any) -> None:
        x[1][2] = 100.0

    def inplace_block(x: Any, m: Any) -> None:
        v = x[:, 1:3]
        v += 1
        v *= 2

    def siblings(x: Any, m: Any) -> None:
        v1, v2 = x[0], x[1]
        v1[0] = -1.0
        v2[0] = -2.0

    def stale_view_then_write(x: Any, m: Any) -> None:
        v = x[0]
        x[0, 1] = 55.0
        v[2] = 66.0

    def stale_view_then_inplace(x: Any, m: Any) -> None:
        v = x[0]
        x[0, 0] = 5.0
        v += 1

    def view_of_view(x: Any, m: Any) -> None:
        v = x[1:]
        w = v[0]
        w[3] = 9.0

    def ellipsis_and_newaxis(x: Any, m: Any) -> None:
        x[..., 1][:] = 0.0
        v = x[None, 2]
        v[0, 0] = 7.0

    def copies(x: Any, m: Any) -> None:  # integer per axis, integer arrays, masks: copies
        s = x[1, 2]
        s += 1
        f = x[m.asarray([0, 2])]
        f[0, 0] = 42.0
        b = x[x[:, 0] > 3]
        b[0] = 1.0

    def add_to_diagonal(x: Any, m: Any) -> None:  # scikit-learn's GaussianMixture
        c = x[1:, 1:]
        d = m.linalg.diagonal(c) + 0.5 if m is xp else np.diagonal(c) + 0.5
        for i in range(2):
            c[i, i] = d[i]

    return [write_row, inplace_block, siblings, stale_view_then_write, stale_view_then_inplace,
            view_of_view,
            ellipsis_and_newaxis, copies, add_to_diagonal]


@pytest.mark.parametrize("case", _views_cases(), ids=lambda f: f.__name__)
def test_basic_indexing_views_write_through_as_numpy(case: Any) -> None:
    """A write into ``x[basic key]`` lands in ``x``, as with NumPy views."""
    a = np.arange(12.0).reshape(3, 4)
    x = xp.asarray(a)
    case(a, np)
    case(x, xp)
    np.testing.assert_array_equal(np.asarray(x), a)
