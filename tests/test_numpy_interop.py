"""What NumPy users and array-API clients pass that the conformance suite does not draw
(issue 64): ``clip`` bounds that broadcast ``x`` to a larger shape, NumPy's dtype spellings
wherever a dtype is taken, NumPy's ``dtype=`` on ``mean``/``var``/``std``, dtypes compared with
NumPy's spellings, ``linspace`` with NumPy float32 ends (SciPy's histograms), scikit-learn's
input checks with NumPy dtypes. Values are compared with NumPy's (and array_api_strict's).

Shapes and dtypes are few and shared, so the compiled structures are too.
"""

from __future__ import annotations

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")

import array_api_strict as strict
import ml_dtypes
import numpy as np
import pytest

import xla_array as xp

NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float32", "float64", "complex64", "complex128"]
EXTENSION = ["float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"]
ALL = NAMES + EXTENSION
NP_OF = {n: np.dtype(getattr(ml_dtypes, n) if n in EXTENSION[1:] else n) for n in ALL}
UNSUPPORTED = [np.dtype("U3"), np.str_, "U", np.dtype(object), object, np.dtype("M8[s]"),
               np.datetime64, "m8", np.dtype([("a", "f4")]), np.void, "S2"]


def _spellings(name: str) -> list:
    """NumPy's spellings of the dtype ``name``: the dtype object, the scalar type, the name,
    the type code (and the byte-order-marked code where it has one)."""
    npd = NP_OF[name]
    out = [npd, npd.type, name]
    if name not in EXTENSION[1:]:
        out += [npd.str, npd.char]
    return out


# ---------------------------------------------------------------- 1. clip bounds broadcast
# x's shape, bounds' shapes: every broadcasting form (bounds larger in one axis, of higher
# rank, 0-d, mixed), with scalars and arrays, one bound or both
CLIP_CASES = [
    ((2, 1), (2, 3), None), ((2, 1), None, (2, 3)), ((2, 1), (1, 3), (2, 1)),
    ((3,), (2, 3), None), ((3,), None, (2, 1)), ((1,), (2, 3), (3,)),
    ((), (2, 3), None), ((), None, (3,)), ((2, 3), (3,), (2, 1)), ((2, 1), (), (1, 3)),
    ((2, 1), 0.5, (2, 3)), ((2, 1), (2, 3), 1.5), ((1, 3), (2, 1), (2, 1)),
]


def _bound(shape, value, mod):
    """A bound of ``shape`` (a scalar, or None, as given): values spread away from ``value``
    (down for the lower bound 0.5, up for the upper bound 1.5), so that min <= max."""
    if shape is None or isinstance(shape, float):
        return shape
    spread = np.arange(int(np.prod(shape))).reshape(shape) * (0.25 if value > 1 else -0.25)
    return mod.asarray(np.full(shape, value) + spread)


@pytest.mark.parametrize("xs,lo,hi", CLIP_CASES, ids=[str(c) for c in CLIP_CASES])
def test_clip_bounds_broadcast_to_a_larger_shape(xs, lo, hi):
    x = np.linspace(-1.0, 3.0, int(np.prod(xs))).reshape(xs)
    want = np.clip(x, _bound(lo, 0.5, np), _bound(hi, 1.5, np))
    ref = strict.clip(strict.asarray(x), min=_bound(lo, 0.5, strict), max=_bound(hi, 1.5, strict))
    assert want.shape == ref.shape
    got = xp.clip(xp.asarray(x), min=_bound(lo, 0.5, xp), max=_bound(hi, 1.5, xp))
    assert got.shape == want.shape and got.dtype == xp.float64
    np.testing.assert_array_equal(np.asarray(got), want)
    meth = xp.asarray(x).clip(_bound(lo, 0.5, xp), _bound(hi, 1.5, xp))  # NumPy's method
    np.testing.assert_array_equal(np.asarray(meth), want)


def test_clip_with_larger_bounds_keeps_x_dtype():
    x = np.array([[1], [5]], dtype=np.int8)
    lo = np.array([[0, 2, 3], [6, 0, 9]], dtype=np.int16)
    got = xp.clip(xp.asarray(x), min=xp.asarray(lo), max=7)
    want = np.clip(x, lo.astype(np.int8), np.int8(7))
    assert got.dtype == xp.int8 and got.shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(got), want)
    with pytest.raises(ValueError):  # shapes that do not broadcast still raise
        xp.clip(xp.zeros((2, 1)), min=xp.ones((3, 3)))


# ---------------------------------------------------------------- 2. NumPy dtypes accepted
@pytest.mark.parametrize("name", ALL)
def test_numpy_spellings_accepted_by_every_dtype_function(name):
    d = getattr(xp, name)
    for sp in _spellings(name):
        assert xp.astype(xp.zeros(2), sp).dtype is d, sp
        assert xp.zeros(2, dtype=sp).dtype is d, sp
        assert xp.result_type(sp) is d, sp
        assert xp.result_type(sp, d) is d and xp.result_type(d, sp) is d, sp
        assert xp.can_cast(sp, d) and xp.can_cast(d, sp), sp
        assert xp.can_cast(sp, xp.float64) == xp.can_cast(d, xp.float64), sp
        assert xp.isdtype(sp, d), sp
        if not isinstance(sp, str):  # a string kind is a kind name
            assert xp.isdtype(d, sp), sp
        for kind in ("bool", "integral", "real floating", "complex floating", "numeric"):
            assert xp.isdtype(sp, kind) == xp.isdtype(d, kind), (sp, kind)
        if d.kind in "fc":
            assert xp.finfo(sp) == xp.finfo(d), sp
        if d.kind in "iu":
            assert xp.iinfo(sp) == xp.iinfo(d), sp


@pytest.mark.parametrize("name", NAMES)
def test_numpy_dtypes_agree_with_numpy_rules(name):
    """result_type, can_cast and isdtype given NumPy dtypes answer what they answer for the
    xla_array dtypes (the standard's table, checked against array_api_strict in
    test_dtypes.py); finfo/iinfo of NumPy dtypes give NumPy's values."""
    npd = NP_OF[name]
    for other in ("int8", "uint16", "float32", "complex128"):
        assert xp.result_type(npd, np.dtype(other)) is xp.result_type(getattr(xp, name),
                                                                        getattr(xp, other))
    if npd.kind == "f":
        assert xp.finfo(npd.type).eps == float(np.finfo(npd).eps)
        assert xp.finfo(npd).dtype is getattr(xp, name)
    if npd.kind == "c":
        assert xp.finfo(npd).bits == np.finfo(npd).bits
    if npd.kind in "iu":
        assert (xp.iinfo(npd.type).min, xp.iinfo(npd).max) == (np.iinfo(npd).min,
                                                               np.iinfo(npd).max)


def test_numpy_arrays_and_scalars_count_with_their_dtypes():
    assert xp.result_type(np.zeros(2, np.float32), xp.float16) is xp.float32
    assert xp.result_type(np.float32(1.0), 1.0) is xp.float32  # Python scalars stay weak
    assert xp.result_type(xp.float32, np.float64(1.0)) is xp.float64  # NumPy scalars do not
    assert xp.result_type(xp.int8, 1) is xp.int8
    assert xp.finfo(np.zeros(2, np.float32)).bits == 32
    assert xp.can_cast(np.zeros(2, np.int8), np.int16)
    assert xp.result_type(float) is xp.float64 and xp.result_type(int) is xp.int64


@pytest.mark.parametrize("bad", UNSUPPORTED, ids=str)
def test_unsupported_numpy_dtypes_are_a_type_error_naming_them(bad):
    npd = np.dtype(bad)
    calls = [lambda: xp.astype(xp.zeros(2), bad), lambda: xp.zeros(2, dtype=bad),
             lambda: xp.asarray([1.0], dtype=bad), lambda: xp.result_type(bad),
             lambda: xp.can_cast(xp.int8, bad), lambda: xp.can_cast(bad, xp.int8),
             lambda: xp.finfo(bad), lambda: xp.iinfo(bad),
             lambda: xp.sum(xp.zeros(2), dtype=bad), lambda: xp.mean(xp.zeros(2), dtype=bad)]
    for call in calls:
        with pytest.raises(TypeError, match="dtype") as info:
            call()
        assert repr(npd) in str(info.value) or repr(bad) in str(info.value)
    with pytest.raises(TypeError):
        xp.isdtype(bad, "numeric")
    assert xp.float32 != bad


def test_what_is_not_a_dtype_is_a_type_error():
    for bad in (None, 3, "not a dtype", [np.float32], xp.zeros(2)):
        with pytest.raises(TypeError):
            xp.astype(xp.zeros(2), bad)
        with pytest.raises(TypeError):
            xp.can_cast(xp.int8, bad)
    for bad in ("not a dtype", 3, None, list):
        with pytest.raises(TypeError):
            xp.isdtype(bad, "real floating")
    # Python's types and dtype strings, as np.issubdtype reads them (scikit-learn's
    # check_array(dtype=float), CategoricalNB's check_array(dtype="int"))
    assert xp.isdtype(float, "real floating") and xp.isdtype(int, "signed integer")
    assert xp.isdtype("int", "integral") and xp.isdtype("f4", xp.float32)
    assert xp.isdtype(bool, "bool") and xp.isdtype(complex, xp.complex128)
    assert xp.isdtype(xp.float64, float) and not xp.isdtype(xp.float32, float)
    with pytest.raises(TypeError):
        xp.result_type(object())
    with pytest.raises(TypeError):
        xp.finfo(None)
    with pytest.raises(ValueError):
        xp.isdtype(np.float32, "float32")  # strings are kinds, as in NumPy's isdtype


def test_dtype_keywords_take_numpy_dtypes():
    """The functions with a dtype= keyword, given NumPy's spellings, match NumPy."""
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    x = xp.asarray(a)
    for sp in (np.float32, np.dtype("float32"), "float32", "f4"):
        for got, want in [
                (xp.sum(x, axis=1, dtype=sp), np.sum(a, axis=1, dtype=sp)),
                (xp.prod(x, axis=1, dtype=sp), np.prod(a, axis=1, dtype=sp)),
                (xp.cumulative_sum(x, axis=1, dtype=sp), np.cumsum(a, axis=1, dtype=sp)),
                (xp.linalg.trace(x[:, :2], dtype=sp), np.trace(a[:, :2], dtype=sp)),
                (xp.ones((2, 3), dtype=sp), np.ones((2, 3), dtype=sp)),
                (xp.full((2, 3), 2, dtype=sp), np.full((2, 3), 2, dtype=sp)),
                (xp.full_like(x, 2, dtype=sp), np.full_like(a, 2, dtype=sp)),
                (xp.arange(3, dtype=sp), np.arange(3, dtype=sp)),
                (xp.eye(2, dtype=sp), np.eye(2, dtype=sp)),
                (xp.asarray([1, 2], dtype=sp), np.asarray([1, 2], dtype=sp)),
                (xp.linspace(0, 1, 3, dtype=sp), np.linspace(0, 1, 3, dtype=sp)),
                (xp.fft.fftfreq(4, dtype=sp), np.fft.fftfreq(4).astype(sp)),
                (x.astype(sp), a.astype(sp))]:
            assert got.dtype == np.dtype(want.dtype) and got.dtype is xp.float32, sp
            np.testing.assert_array_equal(np.asarray(got), want)
    info = xp.__array_namespace_info__()
    assert info.dtypes(kind=np.float32) == {"float32": xp.float32}


# ---------------------------------------------------------------- 3. mean/var/std dtype=
_STAT_DATA = {"int64": np.arange(12).reshape(3, 4) % 5,
              "float64": np.linspace(-1.0, 2.5, 12).reshape(3, 4) ** 3,
              "float32": (np.linspace(-1.0, 2.5, 12).reshape(3, 4) ** 3).astype(np.float32)}


@pytest.mark.parametrize("src", sorted(_STAT_DATA))
@pytest.mark.parametrize("fname", ["mean", "var", "std"])
def test_mean_var_std_take_numpy_dtype(fname, src):
    a = _STAT_DATA[src]
    x = xp.asarray(a)
    for dtype in ("float32", "float64"):
        for spelled in (getattr(xp, dtype), np.dtype(dtype), getattr(np, dtype), dtype):
            for axis in (None, 1):
                got = getattr(xp, fname)(x, axis=axis, dtype=spelled)
                want = getattr(np, fname)(a, axis=axis, dtype=dtype)
                assert got.dtype is getattr(xp, dtype), (spelled, axis)
                tol = 1e-6 if dtype == "float32" else 1e-14
                np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)
    if fname != "mean":
        got = getattr(xp, fname)(x, axis=0, correction=1, keepdims=True, dtype=np.float32)
        want = getattr(np, fname)(a, axis=0, ddof=1, keepdims=True, dtype=np.float32)
        assert got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_mean_dtype_errors_and_complex():
    z = np.array([1 + 2j, 3 - 1j, 0.5j])
    got = xp.mean(xp.asarray(z), dtype=np.complex64)
    assert got.dtype is xp.complex64
    np.testing.assert_allclose(np.asarray(got), np.mean(z, dtype=np.complex64), rtol=1e-6)
    got = xp.mean(xp.asarray([1.0, 2.0]), dtype="complex128")
    assert got.dtype is xp.complex128 and complex(got) == 1.5
    for fname in ("mean", "var", "std"):
        for bad in (xp.int64, np.int32, xp.bool):  # NumPy truncates into these; refused here
            with pytest.raises(TypeError):
                getattr(xp, fname)(xp.asarray([1.0, 2.0]), dtype=bad)
    with pytest.raises(TypeError):
        xp.mean(xp.asarray(z), dtype=np.float64)  # would drop the imaginary part
    with pytest.raises(TypeError):
        xp.var(xp.asarray([1.0, 2.0]), dtype=np.complex128)


# ---------------------------------------------------------------- 6. == NumPy's spellings
@pytest.mark.parametrize("name", ALL)
def test_dtype_equals_numpy_spellings(name):
    d = getattr(xp, name)
    npd = NP_OF[name]
    for sp in _spellings(name):
        assert d == sp and sp == d and not (d != sp), sp
        assert (npd == sp) == (d == sp)  # as numpy.dtype compares
    x = xp.zeros(2, dtype=d)
    assert x.dtype == npd.type and x.dtype == name
    assert d.type is npd.type  # as numpy.dtype's attribute
    for other in ALL:
        if other != name:
            o = NP_OF[other]
            assert d != o and d != o.type and d != other and d != getattr(xp, other), other
    assert d != None and d != 3 and d != "not a dtype"  # noqa: E711
    if name == "float64":
        assert d == float and d == "float" and d == "d"  # noqa: E721  (as NumPy)
    if name == "int64":
        assert d == int  # noqa: E721


def test_dtypes_stay_hashable_dict_keys_among_themselves():
    table = {getattr(xp, n): n for n in ALL}
    assert len(table) == len(ALL)
    assert all(table[getattr(xp, n)] == n for n in ALL)
    assert hash(xp.float32) != hash("float32") or xp.float32 is not "float32"  # noqa: F632
    assert "float32" not in table and np.float32 not in table  # keyed by identity hash
    assert len({xp.float32, xp.float32, xp.float64}) == 2
    x = xp.asarray(np.ones(3, np.float32))
    assert x.dtype == np.float32 and x.dtype == "float32"
    assert {np.float32: "np"}.get(x.dtype.np.type) == "np"


# ---------------------------------------------------------------- 8. linspace, float32 ends
def test_linspace_with_numpy_float32_ends_gives_numpy_values():
    """NumPy computes ``linspace`` in the ends' dtype: float32 ends (NumPy scalars or 0-d
    arrays) give float32 arithmetic, bit for bit; SciPy's array-API histograms
    (``cumfreq``/``relfreq``) count data points equal to these edges, so the edges must be
    NumPy's exactly. Python scalar ends compute in float64, as before."""
    rng = np.random.default_rng(5194553734)
    for _ in range(40):
        lo, hi = np.sort(rng.random(2)).astype(np.float32)
        n = 14
        want = np.linspace(lo, hi, n, dtype=np.float32)
        for a, b in ((lo, hi), (xp.asarray(lo), xp.asarray(hi)), (np.asarray(lo), hi)):
            got = xp.linspace(a, b, n, dtype=xp.float32)
            np.testing.assert_array_equal(np.asarray(got), want)
    want = np.linspace(0.1, 0.7, 14, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(xp.linspace(0.1, 0.7, 14, dtype=xp.float32)), want)
    got = xp.linspace(np.float32(0.1), np.float32(0.7), 14, dtype=xp.complex64)
    np.testing.assert_array_equal(np.asarray(got),
                                  np.linspace(np.float32(0.1), np.float32(0.7), 14,
                                              dtype=np.complex64))


def test_histogram_of_points_on_float32_bin_edges():
    """SciPy 1.18's ``_histogram`` (``stats.cumfreq``/``relfreq``): bin edges from
    ``xp.linspace(lo, hi, n + 1, dtype=float32)`` with float32 NumPy ends, counts from
    ``searchsorted`` of the sorted data; with data placed on NumPy's edges, every bin's
    count is ``np.histogram``'s (one was off by one: 21 against 20)."""
    rng = np.random.default_rng(5194553734)  # SciPy's test_against_reference data
    nbins = int(rng.integers(10, 15))
    a = rng.random(100).astype(np.float32)
    limits = np.sort(rng.random(2)).astype(np.float32)
    _, edges = np.histogram(a, bins=nbins, range=limits)
    a = np.concat([a, np.repeat(edges, rng.integers(5, size=edges.shape).tolist())])
    want, _ = np.histogram(a, bins=nbins, range=limits)
    x = xp.asarray(a)
    e = xp.linspace(*limits, nbins + 1, dtype=x.dtype)
    counts = xp.diff(xp.searchsorted(xp.sort(x), e, side="left"))
    counts = np.asarray(counts).copy()
    counts[-1] += int(xp.count_nonzero(x == e[-1]))
    np.testing.assert_array_equal(counts, want)


# ---------------------------------------------------------------- 7. scikit-learn's checks
def test_sklearn_check_array_with_numpy_dtypes():
    """scikit-learn's ``check_array`` passes NumPy scalar types (``dtype=[np.float64,
    np.float32]``, KMeans and most estimators) to ``xp.isdtype``: this is where
    ``KMeans(3).fit(X)`` stopped with dispatch on."""
    sklearn = pytest.importorskip("sklearn")
    from sklearn.utils.validation import check_array
    X = np.arange(12.0).reshape(6, 2)
    with sklearn.config_context(array_api_dispatch=True):
        for src, dtype, want in [(X, [np.float64, np.float32], xp.float64),
                                 (X.astype(np.float32), [np.float64, np.float32], xp.float32),
                                 (X.astype(np.int64), [np.float64, np.float32], xp.float64),
                                 (X.astype(np.int64), np.float32, xp.float32),
                                 (X.astype(np.float32), float, xp.float64),
                                 (X.astype(np.int64), [float, np.float32], xp.float64),
                                 (X.astype(np.int32), "int", xp.int64),
                                 (X, "numeric", xp.float64)]:
            got = check_array(xp.asarray(src), dtype=dtype)
            assert type(got) is xp.Array and got.dtype is want, (src.dtype, dtype)
            np.testing.assert_array_equal(np.asarray(got), src.astype(want.np))


@pytest.mark.parametrize("name", ["Lasso", "ElasticNet"])
def test_sklearn_estimators_without_array_api_support_fit_with_dispatch_on(name):
    """Estimators that declare no array-API support still take xla_array input with dispatch
    on where they convert it to NumPy: they stopped in ``check_array`` at ``isdtype(float)``
    / ``isdtype("int")`` (CategoricalNB) and at ``X.dtype.type`` (NumPy's attribute). Their
    results are NumPy's. (KMeans gets past ``check_array`` now, then mixes its NumPy centers
    with the xla_array input, which scikit-learn's device check refuses: scikit-learn's code
    path for estimators without array-API support, not xla_array's.)"""
    sklearn = pytest.importorskip("sklearn")
    from sklearn.linear_model import ElasticNet, Lasso
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5)) + 1.0
    y = X @ np.arange(1.0, 6.0)
    est = {"Lasso": Lasso(0.1), "ElasticNet": ElasticNet(0.1)}[name]
    want = sklearn.base.clone(est).fit(X, y).predict(X)
    with sklearn.config_context(array_api_dispatch=True):
        got = sklearn.base.clone(est).fit(xp.asarray(X), xp.asarray(y)).predict(xp.asarray(X))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
