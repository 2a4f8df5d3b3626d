"""The fft extension, differential against numpy.fft (lengths, axes, norms, dtypes)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xla_array as xp
from xla_array import fft as F

NORMS = ["backward", "ortho", "forward"]
TOL = {"float32": 2e-5, "complex64": 2e-5, "float64": 1e-12, "complex128": 1e-12}
COMPLEX_OF = {"float32": "complex64", "float64": "complex128", "complex64": "complex64",
              "complex128": "complex128"}
REAL_OF = {"complex64": "float32", "complex128": "float64"}
SHAPE = (3, 4, 6)
FAST = settings(max_examples=25, deadline=None)

norms = st.sampled_from(NORMS)
seeds = st.integers(0, 2**32 - 1)
ns = st.sampled_from([None, 3, 9])
axis1 = st.sampled_from([-1, 0])


def rand(dtype, seed, shape=SHAPE):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def close(got, want, dtype, out_dtype):
    assert got.dtype == getattr(xp, out_dtype), (got.dtype, out_dtype)
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    tol = TOL[dtype]
    scale = max(1.0, np.abs(want).max(initial=0))
    np.testing.assert_allclose(got, want, rtol=tol * 10, atol=tol * 10 * scale)


# one-dimensional transforms, two per test: (names, input dtypes, result dtype of an input dtype)
PAIRS_1D = [(("fft", "ifft"), ["complex64", "complex128", "float32", "float64"], COMPLEX_OF),
            (("rfft", "ihfft"), ["float32", "float64"], COMPLEX_OF),
            (("irfft", "hfft"), ["complex64", "complex128"], REAL_OF)]


@pytest.mark.parametrize("names,dtypes,out_of", PAIRS_1D, ids=["fft_ifft", "rfft_ihfft",
                                                                "irfft_hfft"])
@FAST
@given(data=st.data(), seed=seeds, n=ns, axis=axis1, norm=norms)
def test_one_dimensional_pairs(names, dtypes, out_of, data, seed, n, axis, norm):
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    a = rand(dtype, seed)
    kw = dict(n=n, axis=axis, norm=norm)
    outs = [getattr(F, name)(xp.asarray(a), **kw) for name in names]
    xp.materialize(*outs)
    for name, out in zip(names, outs):
        close(out, getattr(np.fft, name)(a, **kw), dtype, out_of[dtype])


S_AXES = [(None, None), (None, (0, 2)), ((3, 8), (2, 0)), ((2, 5, 8), (0, 1, 2)),
          ((5,), (1,)), ((-1, 4), (0, 2))]


@FAST
@given(dtype=st.sampled_from(["complex64", "complex128", "float64"]), seed=seeds,
       s_axes=st.sampled_from(S_AXES), norm=norms)
def test_fftn_ifftn(dtype, seed, s_axes, norm):
    a = rand(dtype, seed)
    s, axes = s_axes
    kw = dict(s=s, axes=axes, norm=norm)
    out, inv = F.fftn(xp.asarray(a), **kw), F.ifftn(xp.asarray(a), **kw)
    xp.materialize(out, inv)
    np_kw = dict(kw, s=None if s is None else [a.shape[ax] if v == -1 else v
                                               for v, ax in zip(s, axes)])
    close(out, np.fft.fftn(a, **np_kw), dtype, COMPLEX_OF[dtype])
    close(inv, np.fft.ifftn(a, **np_kw), dtype, COMPLEX_OF[dtype])


@FAST
@given(dtype=st.sampled_from(["float32", "float64"]), seed=seeds,
       s_axes=st.sampled_from(S_AXES[:5]), norm=norms)
def test_rfftn_irfftn(dtype, seed, s_axes, norm):
    a = rand(dtype, seed)
    s, axes = s_axes
    kw = dict(s=s, axes=axes, norm=norm)
    spec = np.fft.rfftn(a, **kw)
    out = F.rfftn(xp.asarray(a), **kw)
    back = F.irfftn(xp.asarray(spec), **kw)
    xp.materialize(out, back)
    close(out, spec, dtype, COMPLEX_OF[dtype])
    close(back, np.fft.irfftn(spec, **kw), dtype, dtype)


def test_more_than_three_axes_and_roundtrip():
    a = rand("float64", 5, (2, 3, 4, 5))
    A = xp.asarray(a)
    close(F.fftn(A), np.fft.fftn(a), "float64", "complex128")
    spec = F.rfftn(A, axes=(3, 0, 1, 2))
    close(spec, np.fft.rfftn(a, axes=(3, 0, 1, 2)), "float64", "complex128")
    back = F.irfftn(spec, s=(5, 2, 3, 4), axes=(3, 0, 1, 2))
    close(back, a, "float64", "float64")
    close(F.ifft(F.fft(A, norm="ortho"), norm="ortho"), a.astype(complex), "float64",
          "complex128")


def test_integer_input_and_lazy(metrics):
    a = np.arange(8)
    out = F.fft(xp.asarray(a)) * 2
    assert out.is_pending and out.dtype == xp.complex128
    np.testing.assert_allclose(np.asarray(out), np.fft.fft(a) * 2)
    assert metrics()["compiles"] == 1


@pytest.mark.parametrize("n", [1, 6, 7])
def test_fftfreq_rfftfreq(n):
    for d in (1.0, 0.25):
        close(F.fftfreq(n, d=d), np.fft.fftfreq(n, d=d), "float64", "float64")
        close(F.rfftfreq(n, d=d), np.fft.rfftfreq(n, d=d), "float64", "float64")
    out = F.fftfreq(n, d=0.5, dtype=xp.float32, device=xp.asarray(1.0).device)
    close(out, np.fft.fftfreq(n, d=0.5).astype(np.float32), "float32", "float32")
    close(F.rfftfreq(n, dtype=xp.float32), np.fft.rfftfreq(n).astype(np.float32), "float32",
          "float32")


def test_fftshift_ifftshift():
    a = np.arange(5 * 6).reshape(5, 6).astype(np.float32)
    A = xp.asarray(a)
    for axes in (None, 0, (1,), (0, 1), -1):
        np.testing.assert_array_equal(np.asarray(F.fftshift(A, axes=axes)),
                                      np.fft.fftshift(a, axes=axes))
        np.testing.assert_array_equal(np.asarray(F.ifftshift(A, axes=axes)),
                                      np.fft.ifftshift(a, axes=axes))
    assert F.fftshift(A).dtype == xp.float32


def test_errors():
    c = xp.asarray(np.ones(4, complex))
    r = xp.asarray(np.ones(4))
    with pytest.raises(TypeError):
        F.rfft(c)
    with pytest.raises(TypeError):
        F.ihfft(c)
    with pytest.raises(TypeError):
        F.fft(xp.asarray(np.ones(4, bool)))
    with pytest.raises(ValueError):
        F.fft(r, norm="none")
    with pytest.raises(ValueError):
        F.fft(r, n=0)
    with pytest.raises(ValueError):
        F.irfft(xp.asarray(np.ones(1, complex)))
    with pytest.raises(ValueError):
        F.fftn(r, s=(2, 2), axes=(0,))
    with pytest.raises(IndexError):
        F.fft(r, axis=1)
    with pytest.raises(TypeError):
        F.fftfreq(4, dtype=xp.int32)
    with pytest.raises(TypeError):
        F.fft([1.0, 2.0, 3.0, 4.0])  # a list is no array (a NumPy array is converted)
    np.testing.assert_allclose(np.asarray(F.fft(np.ones(4))), np.fft.fft(np.ones(4)))
    for name in F.__all__:
        assert callable(getattr(F, name))
