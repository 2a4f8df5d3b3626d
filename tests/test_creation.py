"""Creation functions against NumPy: asarray (dtype inference, nested lists, copy semantics),
zeros/ones/empty/full and their _like forms, arange, linspace, eye, tril/triu, meshgrid and
from_dlpack."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xla_array as xp

NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float32", "float64", "complex64", "complex128"]
DTYPES = [getattr(xp, n) for n in NAMES]


def same(x: xp.Array, want: np.ndarray) -> None:
    got = np.asarray(x)
    assert x.shape == want.shape and x.dtype.name == want.dtype.name, (x.shape, x.dtype, want)
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- asarray

@pytest.mark.parametrize("obj, want", [
    (True, np.bool_), (3, np.int64), (2.5, np.float64), (1 + 2j, np.complex128),
    ([1, 2], np.int64), ([1, 2.0], np.float64), ([True, 1], np.int64), ([1, 2j], np.complex128),
    ([[1, 2], [3, 4]], np.int64), (((1.0,), (2.0,)), np.float64), ([[]], np.float64),
    ([2**63], np.uint64), (np.float32(1.5), np.float32), (np.arange(3, dtype=np.uint16),
                                                         np.uint16),
])
def test_asarray_infers_dtypes(obj, want):
    x = xp.asarray(obj)
    same(x, np.asarray(obj, dtype=want))


def test_asarray_with_dtype_and_errors():
    same(xp.asarray([1, 2], dtype=xp.float32), np.array([1, 2], dtype=np.float32))
    same(xp.asarray(1, dtype=xp.complex64), np.asarray(1, dtype=np.complex64))
    same(xp.asarray(np.arange(6).reshape(2, 3).T), np.arange(6).reshape(2, 3).T)  # not C order
    same(xp.asarray(memoryview(np.arange(4, dtype=np.int32))), np.arange(4, dtype=np.int32))
    same(xp.asarray([xp.asarray(1.0), xp.asarray(2.0)]), np.array([1.0, 2.0]))
    assert xp.asarray(5).shape == () and xp.asarray(np.float64(2.0)).shape == ()
    with pytest.raises(OverflowError):
        xp.asarray(2**64)
    with pytest.raises(OverflowError):
        xp.asarray([1, -2**63 - 1])
    with pytest.raises(OverflowError):
        xp.asarray(2**63)  # a lone Python int is int64
    with pytest.raises(TypeError, match="Unsupported dtype <U3: arrays hold numbers"):
        xp.asarray("abc")
    with pytest.raises((TypeError, ValueError)):
        xp.asarray([[1, 2], [3]])
    with pytest.raises(TypeError):
        xp.asarray(1.5, dtype=xp.int32)


def test_asarray_copy_semantics():
    a = np.array([1.0, 2.0, 3.0])
    x = xp.asarray(a)
    a[0] = 100.0  # host data was copied
    assert float(x[0]) == 1.0
    with pytest.raises(ValueError):
        xp.asarray(a, copy=False)  # host data always needs a copy to reach the device
    assert xp.asarray(x, copy=False) is x
    assert xp.asarray(x) is x
    y = xp.asarray(x, copy=True)
    assert y is not x
    x[1] = -1.0  # rebinds x only
    assert float(y[1]) == 2.0 and float(x[1]) == -1.0
    z = xp.asarray(x, dtype=xp.float32)
    assert z.dtype == xp.float32
    with pytest.raises(ValueError):
        xp.asarray(x, dtype=xp.float32, copy=False)
    assert xp.asarray(x, dtype=xp.float64, copy=False) is x


# ---------------------------------------------------------------- constants

@pytest.mark.parametrize("d", DTYPES, ids=NAMES)
def test_zeros_ones_empty_full_and_like(d):
    shape = (2, 3)
    fill = {"b": True, "i": -3, "u": 7, "f": 2.5, "c": 1 - 2j}[d.kind]
    x = xp.ones((4,), dtype=d)
    outs = [xp.zeros(shape, dtype=d), xp.ones(shape, dtype=d), xp.empty(shape, dtype=d),
            xp.full(shape, fill, dtype=d), xp.zeros_like(x), xp.ones_like(x),
            xp.empty_like(x), xp.full_like(x, fill), xp.full((), fill, dtype=d),
            xp.zeros((0, 2), dtype=d)]
    xp.materialize(*outs)
    wants = [np.zeros(shape, d.np), np.ones(shape, d.np), None, np.full(shape, fill, d.np),
             np.zeros(4, d.np), np.ones(4, d.np), None, np.full(4, fill, d.np),
             np.full((), fill, d.np), np.zeros((0, 2), d.np)]
    for o, w in zip(outs, wants):
        assert o.dtype == d
        if w is None:
            assert o.shape in (shape, (4,))
        else:
            same(o, w)


def test_default_dtypes_and_errors_of_constants():
    assert xp.zeros(3).dtype == xp.float64 and xp.ones((2,)).dtype == xp.float64
    assert xp.empty(()).shape == ()
    assert xp.full(2, True).dtype == xp.bool
    assert xp.full(2, 1).dtype == xp.int64
    assert xp.full(2, 1.0).dtype == xp.float64
    assert xp.full(2, 1j).dtype == xp.complex128
    assert xp.full(2, np.float32(1)).dtype == xp.float32
    assert xp.zeros_like(xp.ones(2, dtype=xp.int8), dtype=xp.float32).dtype == xp.float32
    same(xp.full_like(xp.ones(3, dtype=xp.int32), 7), np.full(3, 7, dtype=np.int32))
    with pytest.raises(ValueError):
        xp.zeros((-1, 2))
    with pytest.raises(TypeError):
        xp.zeros((2.0, 3))
    with pytest.raises(OverflowError):
        xp.full(3, 300, dtype=xp.uint8)
    with pytest.raises(TypeError):
        xp.full(3, [1, 2, 3])
    with pytest.raises(TypeError):
        xp.zeros_like([0.0, 0.0])
    same(xp.ones_like(np.zeros(3, np.float32)), np.ones(3, np.float32))  # as asarray would


def test_fill_values_are_runtime_parameters(metrics):
    np.asarray(xp.full((3,), 1.0))
    before = metrics()["compiles"]
    for v in (2.0, -7.5, math.pi):
        same(xp.full((3,), v), np.full(3, v))
    assert metrics()["compiles"] == before


# ---------------------------------------------------------------- ranges

@settings(max_examples=40)
@given(start=st.integers(-20, 20), stop=st.integers(-20, 20) | st.none(),
       step=st.integers(-5, 5).filter(bool))
def test_arange_integers(start, stop, step):
    x = xp.arange(start, stop, step) if stop is not None else xp.arange(start)
    want = np.arange(start, stop, step) if stop is not None else np.arange(start)
    same(x, want)


@pytest.mark.parametrize("args, dtype", [
    ((0.0, 1.0, 0.1), None), ((1.0, -1.0, -0.25), None), ((5,), xp.float32),
    ((0, 10, 2.5), None), ((2.5,), None), ((-3.0, 3.0, 0.7), xp.float32), ((10, 0, -3), xp.int8),
    ((5, 0, -1), xp.uint8), ((0, 10, 1000), xp.int16), ((3, 3), None), ((3, 0), None),
])
def test_arange_floats_negative_steps_and_dtypes(args, dtype):
    x = xp.arange(*args, dtype=dtype)
    want = np.arange(*args, dtype=None if dtype is None else dtype.np)
    assert x.shape == want.shape and x.dtype.name == want.dtype.name
    np.testing.assert_allclose(np.asarray(x), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("args, dtype", [
    ((1, xp.asarray(7.0, dtype=xp.float32) + 1), xp.float32),  # SciPy's cramervonmises
    ((xp.asarray(5),), None), ((np.asarray(2), 7, xp.asarray(2)), None),
    ((xp.asarray(0.5), xp.asarray(3.0), xp.asarray(0.75)), None),
])
def test_arange_takes_0d_real_arrays_as_numbers(args, dtype):
    x = xp.arange(*args, dtype=dtype)
    want = np.arange(*(np.asarray(a) if isinstance(a, xp.Array) else a for a in args),
                     dtype=None if dtype is None else dtype.np)
    assert x.shape == want.shape and x.dtype.name == want.dtype.name
    np.testing.assert_array_equal(np.asarray(x), want)


def test_arange_errors():
    with pytest.raises(ValueError):
        xp.arange(0, 5, 0)
    with pytest.raises(TypeError):
        xp.arange(0, 1j)
    with pytest.raises(TypeError):
        xp.arange(True)
    for bad in (xp.asarray(True), xp.asarray([1, 2]), xp.asarray(1j), np.asarray([3])):
        with pytest.raises(TypeError, match="real numbers"):
            xp.arange(bad)


@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("start, stop, num, dtype", [
    (0.0, 1.0, 5, None), (-3, 7, 11, None), (1.0, -1.0, 4, xp.float32), (2.0, 2.0, 3, None),
    (0.0, 1.0, 1, None), (0.0, 1.0, 0, None), (0, 1 + 2j, 4, None), (1e10, 1e10 + 1, 3, None),
])
def test_linspace(start, stop, num, dtype, endpoint):
    x = xp.linspace(start, stop, num, dtype=dtype, endpoint=endpoint)
    want = np.linspace(start, stop, num, endpoint=endpoint,
                       dtype=None if dtype is None else dtype.np)
    assert x.shape == want.shape and x.dtype.name == want.dtype.name
    np.testing.assert_allclose(np.asarray(x), want, rtol=1e-6, atol=1e-12)
    if endpoint and num > 1:
        assert np.asarray(x)[-1] == want[-1]  # the endpoint is exact


def test_linspace_errors():
    with pytest.raises(ValueError):
        xp.linspace(0, 1, -1)
    with pytest.raises(TypeError):
        xp.linspace(0, 1, 3, dtype=xp.bool)


@pytest.mark.parametrize("start, stop, num, dtype", [
    (0, 10, 7, "int32"), (-5, 5, 7, "int64"), (0, 255, 5, "uint8"), (-3.5, 3, 4, "int8"),
    (0, 1, 0, "int16"), (3, 3, 1, "int64"), (10, -10, 6, "int16")])
def test_linspace_to_integers_floors_as_numpy(start, stop, num, dtype):
    """NumPy (and array-api-strict, which SciPy's signal tests use) floor the float values
    for an integer dtype (the standard leaves it unspecified)."""
    got = np.asarray(xp.linspace(start, stop, num, dtype=getattr(xp, dtype)))
    want = np.linspace(start, stop, num, dtype=getattr(np, dtype))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- eye, tril, triu, meshgrid

@pytest.mark.parametrize("n, m, k", [(3, None, 0), (3, 5, 1), (4, 2, -1), (3, 3, 5), (2, 4, -3),
                                     (0, 3, 0), (1, 1, 0), (2, 3, 10**20), (3, 2, -10**30)])
def test_eye(n, m, k):
    same(xp.eye(n, m, k=k), np.eye(n, m, k=max(-100, min(100, k))))
    k_np = max(-100, min(100, k))
    same(xp.eye(n, m, k=k, dtype=xp.int8), np.eye(n, m, k=k_np, dtype=np.int8))
    same(xp.eye(n, m, k=k, dtype=xp.bool), np.eye(n, m, k=k_np, dtype=bool))


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (5, 2), (2, 3, 4), (0, 3)])
@pytest.mark.parametrize("k", [0, 1, -1, 3, 10**20, -10**20])
def test_tril_triu(shape, k):
    a = np.arange(math.prod(shape), dtype=np.float32).reshape(shape) + 1
    x = xp.asarray(a)
    kn = max(-100, min(100, k))  # NumPy overflows on huge k; the result is the same
    same(xp.tril(x, k=k), np.tril(a, k=kn))
    same(xp.triu(x, k=k), np.triu(a, k=kn))


def test_tril_triu_dtypes_and_errors():
    b = np.ones((3, 3), dtype=bool)
    same(xp.tril(xp.asarray(b)), np.tril(b))
    c = np.ones((2, 2), dtype=np.complex64) * (1 + 1j)
    same(xp.triu(xp.asarray(c), k=1), np.triu(c, k=1))
    with pytest.raises(ValueError):
        xp.tril(xp.ones(3))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sizes", [(3,), (2, 3), (2, 3, 4), (0, 2)])
def test_meshgrid(sizes, indexing):
    arrays = [np.arange(n, dtype=np.float32) * (i + 1) for i, n in enumerate(sizes)]
    got = xp.meshgrid(*(xp.asarray(a) for a in arrays), indexing=indexing)
    want = np.meshgrid(*arrays, indexing=indexing)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w)


def test_meshgrid_errors():
    assert len(xp.meshgrid()) == 0
    with pytest.raises(ValueError):
        xp.meshgrid(xp.ones((2, 2)))
    with pytest.raises(ValueError):
        xp.meshgrid(xp.ones(2), xp.ones(2, dtype=xp.int32))
    with pytest.raises(ValueError):
        xp.meshgrid(xp.ones(2), indexing="xx")


# ---------------------------------------------------------------- from_dlpack

@pytest.mark.parametrize("d", [np.float32, np.int16, np.bool_, np.complex128, np.uint64])
def test_from_dlpack_numpy(d):
    a = (np.arange(6).reshape(2, 3) % 2).astype(d)
    x = xp.from_dlpack(a)
    same(x, a)
    a[0, 0] = 1  # the data was copied into an XLA buffer
    assert np.asarray(x)[0, 0] == 0
    back = np.from_dlpack(x)
    np.testing.assert_array_equal(back, np.asarray(x))
    assert xp.from_dlpack(x, copy=False) is x
    with pytest.raises(ValueError):
        xp.from_dlpack(a, copy=False)
    with pytest.raises(TypeError):
        xp.from_dlpack([1, 2])
