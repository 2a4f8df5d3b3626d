"""NumPy's array methods on Array (xla_array/_methods.py), each against NumPy's own."""

import numpy as np
import pytest

import xla_array as xp

A = np.arange(24.0).reshape(4, 6) - 7.5
C = A + 1j * A[::-1]


def _eq(got, want):
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-13)


@pytest.mark.parametrize("call", [
    "sum()", "sum(axis=0)", "sum(1, keepdims=True)", "sum(dtype=np.float32)", "prod(axis=1)",
    "mean()", "mean(0, dtype=np.float32)", "max(axis=1)", "min()", "std(ddof=1)", "var(0)",
    "any()", "all(axis=0)", "argmax()", "argmin(axis=1)", "cumsum()", "cumsum(axis=1)",
    "cumprod(0)", "reshape(6, 4)", "reshape((3, 8))", "reshape(-1)", "reshape((3, 8), order='F')",
    "transpose()", "transpose(1, 0)", "transpose((1, 0))", "swapaxes(0, -1)", "ravel()",
    "ravel(order='F')", "flatten()", "astype(np.int32)", "copy()", "view()",
    "view(np.uint64)", "view(np.int32)", "view(np.uint8)", "view(np.complex128)",
    "round(1)", "round(-1)", "clip(-2, 3)", "dot(np.ones(6))",
    "take([[1, 2], [3, 0]])", "take([5, 0], axis=1)", "repeat(2, axis=0)", "diagonal(1)",
    "trace()", "argsort(axis=0)", "conj()", "real", "imag", "nbytes", "itemsize",
])
def test_method_matches_numpy(call):
    x = xp.asarray(A)  # noqa: F841  (read by eval)
    _eq(eval(f"x.{call}"), eval(f"A.{call}"))


@pytest.mark.parametrize("call", ["view(np.float64)", "real", "imag", "conj()", "conjugate()",
                                  "sum(axis=0)", "round(2)"])
def test_complex_methods(call):
    x = xp.asarray(C)  # noqa: F841  (read by eval)
    _eq(eval(f"x.{call}"), eval(f"C.{call}"))


def test_view_round_trips_and_bool():
    x = xp.asarray(A.astype(np.float32))
    _eq(x.view(np.float64), A.astype(np.float32).view(np.float64))
    u8 = np.array([1, 0, 2], np.uint8)
    _eq(xp.asarray(u8).view(bool), u8.view(bool))
    _eq(xp.asarray([True, False]).view(np.uint8), np.array([True, False]).view(np.uint8))
    assert xp.asarray(np.float64(1.5)).view(np.int64).shape == ()


def test_view_errors_as_numpy():
    with pytest.raises(ValueError, match="divisor"):
        xp.asarray(np.arange(3.0)).view(np.complex128)
    with pytest.raises(ValueError, match="0d array"):
        xp.asarray(np.float64(1.0)).view(np.int32)


def test_in_place_methods_and_out():
    b = A[::-1].copy()
    y = xp.asarray(b)
    assert y.sort(axis=0) is None
    b.sort(axis=0)
    _eq(y, b)
    y.fill(3)
    _eq(y, np.full_like(A, 3))
    out = xp.zeros(6)
    assert xp.asarray(A).sum(axis=0, out=out) is out
    _eq(out, A.sum(0))
    with pytest.raises(ValueError, match="out= has shape"):
        xp.asarray(A).sum(out=xp.zeros(2))


def test_astype_casting_rules():
    x = xp.asarray(A)
    with pytest.raises(TypeError, match="'safe'"):
        x.astype(np.int32, casting="safe")
    assert x.astype(np.float32, casting="same_kind").dtype == xp.float32
    with pytest.raises(TypeError):
        x.astype(np.int64, casting="same_kind")


def test_namespace_has_no_stray_names():
    assert "annotations" not in dir(xp)


def test_in_place_operators_cast_within_the_kind_as_numpy():
    """x op= y stores a result of a wider dtype of the same kind, as NumPy's same_kind rule
    (SciPy's nsum adds an int64 count into an int32 array); across kinds it raises."""
    a = np.array([1, 2], np.int32)
    x = xp.asarray(a)
    x += xp.asarray([3, 4], dtype=xp.int64)
    a += np.array([3, 4], np.int64)
    assert x.dtype == xp.int32
    _eq(x, a)
    f = xp.asarray([1.5, 2.5], dtype=xp.float32)
    f *= xp.asarray(3.0, dtype=xp.float64)
    assert f.dtype == xp.float32
    _eq(f, np.array([4.5, 7.5], np.float32))
    i = xp.asarray([1, 2])
    with pytest.raises(TypeError, match="same_kind"):
        i += xp.asarray([1.0, 2.0])


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
def test_diag_as_numpy(k):
    """NumPy's diag (SciPy's RBFInterpolator calls xp.diag): build from 1-D, extract from 2-D."""
    v = np.arange(1.0, 5.0)
    np.testing.assert_array_equal(np.asarray(xp.diag(xp.asarray(v), k)), np.diag(v, k))
    m = np.arange(20.0).reshape(4, 5)
    np.testing.assert_array_equal(np.asarray(xp.diag(xp.asarray(m), k=k)), np.diag(m, k))
    iv = np.arange(3, dtype=np.int32)
    got = xp.diag(xp.asarray(iv), k)
    assert got.dtype == xp.int32
    np.testing.assert_array_equal(np.asarray(got), np.diag(iv, k))


def test_diag_rejects_other_ranks():
    with pytest.raises(ValueError, match="1-D or 2-D"):
        xp.diag(xp.zeros((2, 2, 2)))


# NumPy's bits: a promise of the CPU lowering (a GPU's pow differs in the last bit)
@pytest.mark.usefixtures("on_cpu")
@pytest.mark.parametrize(("args", "kw", "np_dtype"), [
    ((-3, 0, 10), {}, None),
    ((0, 2), {"num": 7, "endpoint": False, "base": 2.0}, None),
    ((1, -1, 5), {"dtype": xp.float32}, np.float32),
    ((0.5, 3.5, 11), {"base": np.e}, None),
    ((0, 1j, 4), {}, None),
    ((0, 3, 4), {"dtype": xp.int64}, np.int64),
])
def test_logspace_as_numpy(args, kw, np_dtype, assert_pow_bits):
    """NumPy's logspace (SciPy's differentiate tests call xp.logspace): base ** linspace
    computed in float64 (complex128), then cast, to NumPy's values and dtype."""
    got = np.asarray(xp.logspace(*args, **kw))
    want = np.logspace(*args, **dict(kw, **({"dtype": np_dtype} if np_dtype else {})))
    assert got.dtype == want.dtype
    if got.dtype == np.float64:  # (NumPy's own pow may not be libm's: see the fixture)
        lin = {k: v for k, v in kw.items() if k in ("num", "endpoint")}
        assert_pow_bits(got, want, kw.get("base", 10.0), np.linspace(*args, **lin))
    else:
        np.testing.assert_array_equal(got, want)
