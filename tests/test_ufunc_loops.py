"""exp, log, sin, pow... through NumPy's own loops (kernels/ufunc.py, native/ufunc_ffi.c):
NumPy's bits on special values and random ones, the same bits on the host (first use) and
compiled, and where XLA's forms stay."""

import itertools

import numpy as np
import pytest

import xla_array as xp
from xla_array.kernels import ufunc

pytestmark = [pytest.mark.usefixtures("on_cpu"),
              pytest.mark.skipif(not ufunc.available(), reason=f"NumPy-loop kernel "
                                                               f"unavailable: {ufunc.error()}")]

UNARY = [n for n in ufunc.NUMPY if getattr(np, ufunc.NUMPY[n]).nin == 1]
BINARY = [n for n in ufunc.NUMPY if getattr(np, ufunc.NUMPY[n]).nin == 2]
_count = itertools.count(3)


def _values(dtype, n=400):
    rng = np.random.default_rng(0)
    special = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-7, -1e-7, 0.999, 1.001, 10.0, -10.0, 88.0,
               -103.0, 709.0, -745.0, 1e300, np.inf, -np.inf, np.nan, np.pi, 1e-30]
    v = np.concatenate([special, rng.standard_normal(n) * 3, rng.uniform(-1, 1, n),
                        np.exp(rng.uniform(-20, 20, n))])
    with np.errstate(all="ignore"):
        return v.astype(dtype)


def _fn(name):
    return getattr(xp, name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_functions_are_numpys_bit_for_bit(dtype):
    v = _values(dtype)
    x = xp.asarray(v)
    for name in UNARY:
        with np.errstate(all="ignore"):
            want = getattr(np, ufunc.NUMPY[name])(v)
        got = np.asarray(_fn(name)(x))
        assert got.dtype == want.dtype
        same = (got.view(np.uint8) == want.view(np.uint8)).all() or \
            np.array_equal(got, want, equal_nan=True)
        assert same, (name, v[got != want][:3], got[got != want][:3], want[got != want][:3])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_functions_are_numpys_bit_for_bit(dtype):
    a = _values(dtype)
    b = np.roll(a, 7)
    x, y = xp.asarray(a), xp.asarray(b)
    for name in BINARY:
        with np.errstate(all="ignore"):
            want = getattr(np, ufunc.NUMPY[name])(a, b)
            want_s = getattr(np, ufunc.NUMPY[name])(a, dtype(1.5))
        assert np.array_equal(np.asarray(_fn(name)(x, y)), want, equal_nan=True), name
        assert np.array_equal(np.asarray(_fn(name)(x, 1.5)), want_s, equal_nan=True), name


def test_a_graph_of_functions_runs_on_the_host_first_with_the_compiled_bits(metrics):
    n = next(_count) + 40
    v = np.random.default_rng(n).standard_normal((n, 3))
    x = xp.asarray(v)

    def softmax_and_loss():
        e = xp.exp(x - xp.max(x, axis=1, keepdims=True))
        p = e / xp.sum(e, axis=1, keepdims=True)
        return xp.sum(xp.log1p(p) + xp.tanh(x) * xp.sin(x) - xp.pow(p, 0.3), axis=0)

    with xp.flags.using(host_first=True, host_first_budget=0.0):
        before = metrics()
        first = np.asarray(softmax_and_loss())
        mid = metrics()
        second = np.asarray(softmax_and_loss())
        after = metrics()
    assert mid["host_runs"] > before["host_runs"] and mid["compiles"] == before["compiles"]
    assert after["compiles"] > mid["compiles"]
    assert first.tobytes() == second.tobytes()
    e = np.exp(v - v.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    assert np.allclose(first, np.sum(np.log1p(p) + np.tanh(v) * np.sin(v) - p ** 0.3, axis=0))


def test_where_xlas_forms_stay():
    """Large results (XLA fuses its form with its neighbours), other dtypes, fast_math, and
    the setting off."""
    big = xp.ones((ufunc.LARGE,), dtype=xp.float32)
    small = xp.ones((5,))
    assert "xla_array_ufunc" in xp.debug.mlir(xp.exp(small))
    assert "xla_array_ufunc" not in xp.debug.mlir(xp.exp(big))
    assert "xla_array_ufunc" in xp.debug.mlir(xp.exp(big[1:]))
    assert "xla_array_ufunc" not in xp.debug.mlir(xp.exp(xp.astype(small, xp.float16)))
    assert "xla_array_ufunc" not in xp.debug.mlir(xp.exp(xp.astype(small, xp.complex128)))
    with xp.flags.using(fast_math=True):
        assert "xla_array_ufunc" not in xp.debug.mlir(xp.exp(small))
    with xp.flags.using(ufunc=False):
        assert "xla_array_ufunc" not in xp.debug.mlir(xp.exp(small))
        assert np.allclose(np.asarray(xp.exp(small)), np.e)


def test_integer_operands_are_converted_first_as_numpy_does():
    i = np.arange(-20, 40, dtype=np.int64)
    x = xp.asarray(i)
    for name in ("exp", "log1p", "sin", "tanh"):
        got = getattr(xp, name)(x)
        assert "xla_array_ufunc" in xp.debug.mlir(got), name
        with np.errstate(all="ignore"):
            want = getattr(np, ufunc.NUMPY[name])(i.astype(np.float64))
        assert np.array_equal(np.asarray(got), want, equal_nan=True), name
    f = xp.asarray(np.linspace(0.5, 3.0, 40))
    assert np.array_equal(np.asarray(xp.pow(f, xp.asarray(np.arange(40)))),
                          np.power(np.linspace(0.5, 3.0, 40), np.arange(40.0)))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_absolute_values_of_complex_numbers_are_numpys_bit_for_bit(dtype):
    """NumPy's complex ``absolute`` scales the parts (hypot); the kernel calls its loop, so
    overflow-prone, tiny and special parts give NumPy's values."""
    rng = np.random.default_rng(4)
    parts = [0.0, -0.0, 1.0, 3.0, np.inf, -np.inf, np.nan, 1e300, 1e-300, 3e38, 1e-38, 1e-45]
    special = np.array([complex(a, b) for a in parts for b in parts])
    scale = np.exp(rng.uniform(-40, 40, 300))
    with np.errstate(all="ignore"):
        v = np.concatenate([special, (rng.standard_normal(300) + 1j * rng.standard_normal(300))
                            * scale]).astype(dtype)
        want = np.abs(v)
    x = xp.asarray(v)
    assert "xla_array_ufunc" in xp.debug.mlir(xp.abs(x))
    got = np.asarray(xp.abs(x))
    assert got.dtype == want.dtype
    assert np.array_equal(got, want, equal_nan=True), (v[got != want][:3], got[got != want][:3])
    assert "xla_array_ufunc" not in xp.debug.mlir(xp.abs(xp.real(x)))  # (exact in XLA)
