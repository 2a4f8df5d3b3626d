"""FFTs through NumPy's own pocketfft loops (kernels/pocketfft.py, native/pocketfft_ffi.c):
numpy.fft's bits for every transform, norm and precision, one axis at a time in NumPy's order;
the same bits on the host (first use) and compiled; XLA's FFT where the kernel stays out."""

import itertools

import numpy as np
import pytest

import xla_array as xp
from xla_array.kernels import pocketfft

pytestmark = [pytest.mark.usefixtures("on_cpu"),
              pytest.mark.skipif(not pocketfft.available(), reason=f"NumPy-FFT kernel "
                                                                   f"unavailable: "
                                                                   f"{pocketfft.error()}")]

NORMS = ("backward", "ortho", "forward")
_count = itertools.count(5)


def _same_bits(got, want):
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype,
                                                                  want.shape, want.dtype)
    return got.tobytes() == want.tobytes()


def _data(shape, real_dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(real_dtype)
    c = (x + 1j * rng.standard_normal(shape)).astype(np.result_type(real_dtype, np.complex64))
    return x, c


# (name, real input?, keyword arguments) run through numpy.fft and xla_array.fft alike
CASES_1D = [("fft", False, {}), ("ifft", False, {}), ("rfft", True, {}), ("irfft", False, {}),
            ("hfft", False, {}), ("ihfft", True, {}), ("fft", False, {"n": 11, "axis": 0}),
            ("rfft", True, {"n": 5, "axis": 0}), ("irfft", False, {"n": 9, "axis": 0}),
            ("ifft", False, {"n": 4})]
CASES_ND = [("fftn", False, {}), ("ifftn", False, {}), ("rfftn", True, {}),
            ("irfftn", False, {}), ("fftn", False, {"axes": (0, 0)}),
            ("rfftn", True, {"s": (4, 6), "axes": (2, 0)}),
            ("irfftn", False, {"s": (3, 5, 8), "axes": (1, 0, 2)}),
            ("fftn", False, {"axes": (0, 0), "s": (4, 6)}),
            ("ifftn", False, {"axes": (2, 0, 1, 0)}), ("rfftn", True, {"axes": (1, 0, 2, 1)}),
            ("irfftn", False, {"axes": (0, 1, 2, 0), "s": (4, 5, 3, 6)})]


@pytest.mark.parametrize("real_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("norm", NORMS)
def test_transforms_are_numpys_bit_for_bit(real_dtype, norm):
    """float32 data included: NumPy computes it with its float64 loop where ``fct`` is the
    Python int 1 (``norm="backward"``), with its float32 loop otherwise."""
    x1, c1 = _data((6, 10), real_dtype)
    x3, c3 = _data((5, 7, 3), real_dtype, 1)
    bad = []
    for cases, x, c in ((CASES_1D, x1, c1), (CASES_ND, x3, c3)):
        for name, real, kw in cases:
            a = x if real else c
            want = getattr(np.fft, name)(a, norm=norm, **kw)
            if not _same_bits(getattr(xp.fft, name)(xp.asarray(a), norm=norm, **kw), want):
                bad.append((name, kw))
    assert not bad, bad


def test_a_graph_of_transforms_runs_on_the_host_first_with_the_compiled_bits(metrics):
    n = next(_count) * 2 + 50
    v = np.random.default_rng(n).standard_normal((n, 6))
    x = xp.asarray(v)

    def spectrum_roundtrip():
        s = xp.fft.rfft(x, axis=0, norm="ortho")  # a transposed axis, complex moves
        c = xp.fft.ifft(xp.conj(s), axis=1)
        return xp.fft.irfft(s, n=n, axis=0, norm="ortho") + xp.real(c)[:1, :] - xp.imag(c)[:1, :]

    with xp.flags.using(host_first=True, host_first_budget=0.0):
        before = metrics()
        first = np.asarray(spectrum_roundtrip())
        mid = metrics()
        second = np.asarray(spectrum_roundtrip())
        after = metrics()
    assert mid["host_runs"] > before["host_runs"] and mid["compiles"] == before["compiles"]
    assert after["compiles"] > mid["compiles"]
    assert first.tobytes() == second.tobytes()
    s = np.fft.rfft(v, axis=0, norm="ortho")
    c = np.fft.ifft(np.conj(s), axis=1)
    want = np.fft.irfft(s, n=n, axis=0, norm="ortho") + c.real[:1, :] - c.imag[:1, :]
    assert first.tobytes() == want.tobytes()


def test_where_xlas_fft_stays():
    """Results of SMALL elements or more (XLA's FFT is faster there), fast_math, the setting
    off; XLA's transforms then apply NumPy's normalization too."""
    small = xp.ones((64,), dtype=xp.complex64)
    big = xp.ones((pocketfft.SMALL,), dtype=xp.complex64)
    assert "xla_array_pocketfft" in xp.debug.mlir(xp.fft.fft(small))
    assert "xla_array_pocketfft" not in xp.debug.mlir(xp.fft.fft(big))
    assert "xla_array_pocketfft" in xp.debug.mlir(xp.fft.fft(big[1:]))
    with xp.flags.using(fast_math=True):
        assert "xla_array_pocketfft" not in xp.debug.mlir(xp.fft.fft(small))
    x, c = _data((4, 6), np.float64, 3)
    with xp.flags.using(pocketfft=False):
        assert "xla_array_pocketfft" not in xp.debug.mlir(xp.fft.fft(small))
        for norm in NORMS:
            for name, real, kw in CASES_1D + CASES_ND[:4]:
                a = x if real else c
                got = np.asarray(getattr(xp.fft, name)(xp.asarray(a), norm=norm, **kw))
                want = getattr(np.fft, name)(a, norm=norm, **kw)
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12,
                                           err_msg=f"{name} {kw} {norm}")


def test_large_transforms_keep_xlas_multi_axis_fft():
    """Above the bound a node over several axes is one ``stablehlo.fft`` over all of them
    (transforming them one at a time through XLA was 2-3x slower: fftn of 1024 x 1024)."""
    big = xp.ones((512, 256), dtype=xp.complex128)
    text = xp.debug.mlir(xp.fft.fftn(big))
    assert "xla_array_pocketfft" not in text and "fft_length = array<i64: 512, 256>" in text
    small = xp.fft.fftn(xp.ones((8, 4), dtype=xp.complex128))
    assert xp.debug.mlir(small).count("xla_array_pocketfft") == 2


def test_infinite_parts_stay_apart_in_the_normalization():
    """NumPy scales each part by the factor: an infinite real part leaves the imaginary
    part a number (a complex product by (f, 0) would make it NaN), with the kernel and
    with XLA's FFT alike."""
    c = np.array([complex(np.inf, 1.0), 0.0])
    want = np.fft.fft(c, norm="forward")
    assert not np.isnan(want).any()
    assert _same_bits(xp.fft.fft(xp.asarray(c), norm="forward"), want)
    with xp.flags.using(pocketfft=False):
        assert _same_bits(xp.fft.fft(xp.asarray(c), norm="forward"), want)


def test_a_spectrum_magnitude_runs_on_the_host_first(metrics):
    """``abs(fftn(x))``: the transforms and the complex absolute value (NumPy's loops) run on
    the host, nothing compiles, and the bits are NumPy's."""
    n = next(_count) + 30
    v = np.random.default_rng(n).standard_normal((n, 8))
    with xp.flags.using(host_first=True):
        before = metrics()
        got = np.asarray(xp.abs(xp.fft.fftn(xp.asarray(v))))
        after = metrics()
    assert after["host_runs"] > before["host_runs"] and after["compiles"] == before["compiles"]
    assert got.tobytes() == np.abs(np.fft.fftn(v)).tobytes()


def test_the_bound_is_on_each_steps_result():
    """An ``rfft`` of 2000 x 50 float64 along its rows of 2000 (50,050 results from 100,000
    values) takes the kernel; an ``irfft`` to 2 x 40,000 does not."""
    x = xp.asarray(np.random.default_rng(2).standard_normal((2000, 50)))
    assert "xla_array_pocketfft" in xp.debug.mlir(xp.fft.rfft(x, axis=0))
    c = xp.ones((2, 20001), dtype=xp.complex128)
    assert "xla_array_pocketfft" not in xp.debug.mlir(xp.fft.irfft(c))


@pytest.mark.parametrize("norm", NORMS)
def test_float16_data_is_transformed_as_numpy_does(norm):
    """NumPy computes the first transform of float16 data with its float64 loop and a factor
    rounded to float16; the later axes read that transform's complex64 values."""
    a = np.random.default_rng(9).standard_normal((6, 9)).astype(np.float16)
    for name in ("fft", "ifft", "rfft", "ihfft", "fftn", "ifftn", "rfftn", "irfftn"):
        want = getattr(np.fft, name)(a, norm=norm)
        assert _same_bits(getattr(xp.fft, name)(xp.asarray(a), norm=norm), want), name
