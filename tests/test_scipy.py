"""SciPy's array-API-capable functions with xla_array input give NumPy's results.

The functions are those SciPy marks as supporting alternative backends (``xp_capabilities``
without ``np_only``): every ``scipy.special`` ufunc wrapper and ``logsumexp``/``softmax``, every
``scipy.fft`` function, the ``scipy.stats`` functions, and a sample of ``ndimage``, ``signal``,
``integrate``, ``linalg``, ``cluster``, ``interpolate``, ``spatial.transform``, ``constants``,
``differentiate`` and ``optimize``. Each case calls the function once with NumPy input and
once with xla_array input; the result must be an xla_array array (on the input's device), of
NumPy's dtype and values. SciPy reads ``SCIPY_ARRAY_API`` when it is first imported, so it is
set here before the import (and the module is skipped if SciPy was imported without it).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any

os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np
import pytest

import xla_array as xp

# the cases below follow SciPy 1.17's list of array-API-capable functions
scipy = pytest.importorskip("scipy", minversion="1.17")
from scipy._lib import _array_api as _sp_array_api

if not _sp_array_api.SCIPY_ARRAY_API:
    pytest.skip("SciPy was imported before SCIPY_ARRAY_API=1 was set", allow_module_level=True)

import scipy.fft as sfft
from scipy import (
    special,
    stats,
)

RNG = np.random.default_rng(1234)
X = 10 * RNG.random(30)
Y = 10 * RNG.random(30)
Z = 10 * RNG.random(30) + 1
P = RNG.random(10)
INTS = RNG.integers(0, 5, size=30).astype(np.float64)
X2 = 10 * RNG.random((30, 3))
U = RNG.normal(size=(30, 3))
U /= np.linalg.norm(U, axis=1, keepdims=True)
OBS = np.array([10.0, 12, 9, 11, 8])


def _leaves(r: Any) -> list:
    """The arrays/scalars of a result: itself, or the fields of a tuple/namedtuple/Bunch."""
    if isinstance(r, tuple):
        return [v for item in r for v in _leaves(item)]
    if isinstance(r, (np.ndarray, xp.Array, np.generic, float, int, complex)):
        return [r]
    fields = getattr(r, "_asdict", None)
    if fields is not None:
        return [v for item in fields().values() for v in _leaves(item)]
    return [v for k, v in vars(r).items() if not k.startswith("_") and not callable(v)]


def _check(got: Any, expected: Any, device: Any, rtol: float, atol: float) -> None:
    G, E = _leaves(got), _leaves(expected)
    assert len(G) == len(E), (len(G), len(E))
    for g, e in zip(G, E):
        e = np.asarray(e)
        if isinstance(g, xp.Array):
            assert g.device == device
            gv = np.asarray(g)
            assert gv.dtype == e.dtype, (gv.dtype, e.dtype)
        else:  # Python/NumPy scalars SciPy computes on the host (sizes, counts, degrees of freedom)
            assert e.ndim == 0 and not isinstance(g, np.ndarray), type(g)
            gv = np.asarray(g)
        assert gv.shape == e.shape, (gv.shape, e.shape)
        np.testing.assert_allclose(gv.astype(e.dtype), e, rtol=rtol, atol=atol, equal_nan=True)


def _run(fn: Callable, args: tuple, kwargs: dict, rtol: float = 1e-9, atol: float = 1e-12,
         dtype: str = "float64", must_be_array: bool = True) -> None:
    def conv(a: Any, to_xp: bool) -> Any:
        if isinstance(a, np.ndarray):
            a = a.astype(dtype) if a.dtype.kind == "f" else a.copy()
            return xp.asarray(a) if to_xp else a
        return a

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = fn(*[conv(a, False) for a in args], **kwargs)
        xargs = [conv(a, True) for a in args]
        got = fn(*xargs, **kwargs)
    device = next(a.device for a in xargs if isinstance(a, xp.Array))
    if must_be_array:
        assert any(isinstance(g, xp.Array) for g in _leaves(got)), type(got)
    _check(got, expected, device, rtol, atol)


# ---------------------------------------------------------------- scipy.special
def _special_infos() -> list:
    try:
        from scipy.special._support_alternative_backends import _special_funcs
    except ImportError:  # private table moved: fall back to a few names
        return []
    return list(_special_funcs)


def _special_args(info: Any) -> tuple:
    floats = np.array([0.2, 0.5, 0.9, 1.5, 2.5, 0.7])
    ints = np.array([1, 2, 3, 2, 1, 3], dtype=np.int64)
    pyint = info.python_int_only if isinstance(info.python_int_only, tuple) else None
    args: list = []
    for i in range(info.n_args):
        if info.name == "multigammaln":  # needs a > (d - 1) / 2
            args.append(2 if i else floats + 1.0)
        elif pyint and pyint[i]:
            args.append(2)
        elif info.int_only and info.int_only[i]:
            args.append(ints)
        else:
            args.append(floats)
    return tuple(args)


_SPECIAL = _special_infos()


@pytest.mark.parametrize("info", _SPECIAL, ids=[i.name for i in _SPECIAL])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_special_functions(info: Any, dtype: str) -> None:
    fn = getattr(special, info.name)
    rtol = 1e-12 if dtype == "float64" else 1e-6
    _run(fn, _special_args(info), {}, rtol=rtol, atol=0, dtype=dtype)


@pytest.mark.parametrize("name", ["logsumexp", "softmax", "log_softmax"])
@pytest.mark.parametrize("kwargs", [{}, {"axis": 1}], ids=["all", "axis1"])
def test_special_logsumexp_softmax(name: str, kwargs: dict) -> None:
    _run(getattr(special, name), (X2,), kwargs, rtol=1e-12)


def test_special_logsumexp_with_weights() -> None:
    def f(a: Any, b: Any) -> Any:
        return special.logsumexp(a, b=b - 0.5, return_sign=True)
    _run(f, (X, X / 10), {}, rtol=1e-12)


# ---------------------------------------------------------------- scipy.fft
_R1 = RNG.normal(size=8)
_R2 = RNG.normal(size=(4, 6))
_C1 = _R1 + 1j * RNG.normal(size=8)
_C2 = _R2 + 1j * RNG.normal(size=(4, 6))
_FFT_CASES: list = []
for _n in ("fft", "ifft"):
    _FFT_CASES += [(_n, _C1, {}), (_n, _R1, {"n": 6}), (_n, _C2, {"axis": 0, "norm": "ortho"})]
for _n in ("fft2", "ifft2", "fftn", "ifftn"):
    _FFT_CASES += [(_n, _C2, {}), (_n, _R2, {"norm": "forward"})]
_FFT_CASES += [("rfft", _R1, {}), ("rfft", _R2, {"axis": 0, "n": 6}), ("irfft", _C1[:5], {}),
               ("irfft", _C2, {"n": 10}), ("rfft2", _R2, {}), ("rfftn", _R2, {}),
               ("irfft2", _C2, {}), ("irfftn", _C2, {}), ("hfft", _C1[:5], {}),
               ("ihfft", _R1, {}), ("hfft2", _C2, {}), ("hfftn", _C2, {}), ("ihfft2", _R2, {}),
               ("ihfftn", _R2, {})]
for _n in ("dct", "idct", "dst", "idst"):
    _FFT_CASES += [(_n, _R1, {}), (_n, _R2, {"type": 3, "norm": "ortho"})]
for _n in ("dctn", "idctn", "dstn", "idstn"):
    _FFT_CASES += [(_n, _R2, {})]
_FFT_CASES += [("fftshift", _R2, {}), ("ifftshift", _R2, {"axes": 0}),
               ("fht", _R1, {"dln": 0.1, "mu": 0.5}), ("ifht", _R1, {"dln": 0.1, "mu": 0.5})]


@pytest.mark.parametrize("name,data,kwargs", _FFT_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(_FFT_CASES)])
def test_fft_functions(name: str, data: np.ndarray, kwargs: dict) -> None:
    _run(getattr(sfft, name), (data,), kwargs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_fft_frequencies_in_our_namespace(name: str) -> None:
    got = getattr(sfft, name)(8, 0.1, xp=xp)
    assert type(got) is xp.Array
    np.testing.assert_allclose(np.asarray(got), getattr(sfft, name)(8, 0.1))


# ---------------------------------------------------------------- scipy.stats
def _a(*args: Any, **kwargs: Any) -> tuple:
    return args, kwargs


_STATS: dict[str, tuple] = {
    "chatterjeexi": _a(X, Y), "spearmanrho": _a(X, Y), "differential_entropy": _a(X),
    "entropy": _a(P), "entropy-qk": _a(P, P[::-1]), "cramervonmises_2samp": _a(X, Y),
    "epps_singleton_2samp": _a(X, Y), "mannwhitneyu": _a(X, Y), "ansari": _a(X, Y),
    "bartlett": _a(X, Y, Z), "boxcox_llf": _a(1.0, Z), "circmean": _a(X), "circstd": _a(X),
    "circvar": _a(X), "directional_stats": _a(U), "false_discovery_control": _a(P),
    "fligner": _a(X, Y, Z), "kstat": _a(X), "kstatvar": _a(X), "levene": _a(X, Y, Z),
    "mood": _a(X, Y), "wilcoxon": _a(X, Y), "yeojohnson_llf": _a(0.5, X),
    "quantile": _a(X, 0.3), "alexandergovern": _a(X, Y, Z), "brunnermunzel": _a(X, Y),
    "chisquare": _a(OBS), "combine_pvalues": _a(P), "describe": _a(X),
    "describe-2d": _a(X2, axis=0), "f_oneway": _a(X, Y, Z), "friedmanchisquare": _a(X, Y, Z),
    "gmean": _a(Z), "gstd": _a(Z), "gzscore": _a(Z), "hmean": _a(Z), "iqr": _a(X),
    "jarque_bera": _a(X), "kruskal": _a(X, Y, Z), "kurtosis": _a(X), "kurtosistest": _a(X),
    "lmoment": _a(X), "median_abs_deviation": _a(X), "mode": _a(INTS),
    "moment": _a(X, order=3), "normaltest": _a(X), "pearsonr": _a(X, Y), "pmean": _a(Z, 2.0),
    "power_divergence": _a(OBS), "rankdata": _a(INTS), "rankdata-2d": _a(X2, axis=0),
    "sem": _a(X), "sigmaclip": _a(X), "skew": _a(X), "skewtest": _a(X), "tmax": _a(X, 5.0),
    "tmean": _a(X, (1.0, 9.0)), "tmin": _a(X, 1.0), "trim_mean": _a(X, 0.1),
    "tsem": _a(X, (1.0, 9.0)), "tstd": _a(X, (1.0, 9.0)), "ttest_1samp": _a(X, 5.0),
    "ttest_ind": _a(X, Y), "ttest_rel": _a(X, Y), "tvar": _a(X, (1.0, 9.0)),
    "zmap": _a(X, Y), "zscore": _a(X), "variation": _a(X),
}


@pytest.mark.parametrize("case", list(_STATS))
def test_stats_functions(case: str) -> None:
    args, kwargs = _STATS[case]
    _run(getattr(stats, case.split("-")[0]), args, kwargs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["skew", "kurtosis", "moment", "sem", "variation", "zscore",
                                  "gmean", "ttest_1samp", "pearsonr"])
def test_stats_float32(name: str) -> None:
    args = {"ttest_1samp": (Z, 5.0), "pearsonr": (X, Y)}.get(name, (Z,))
    _run(getattr(stats, name), args, {}, rtol=2e-5, atol=1e-6, dtype="float32")


def test_stats_ttest_ind_from_stats() -> None:
    def f(m: Any) -> Any:
        return stats.ttest_ind_from_stats(m[0], m[1], 30, m[2], m[3], 30)
    _run(f, (np.array([5.0, 2.0, 4.5, 2.5]),), {}, rtol=1e-12)


# ---------------------------------------------------------------- other subpackages
def _others() -> list:
    import scipy.cluster.hierarchy as ch
    import scipy.constants as cst
    import scipy.differentiate as dif
    import scipy.integrate as si
    import scipy.interpolate as ip
    import scipy.linalg as sl
    import scipy.ndimage as nd
    import scipy.optimize as so
    import scipy.signal as sg
    import scipy.signal.windows as win
    from scipy.cluster import vq
    from scipy.optimize import elementwise as soe
    from scipy.spatial.transform import Rotation

    a1, a2 = RNG.normal(size=12), RNG.normal(size=(6, 7))
    b = RNG.normal(size=4)
    sq = RNG.normal(size=(7, 4))
    xs = np.linspace(0, 3, 12)
    q = RNG.normal(size=(3, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)

    def like(m: Any, v: np.ndarray) -> Any:
        return m.asarray(v) if m is xp else v

    def mod(a: Any) -> Any:
        return xp if isinstance(a, xp.Array) else np

    cases = [
        ("ndimage.gaussian_filter", lambda a: nd.gaussian_filter(a, 1.0), a2),
        ("ndimage.uniform_filter", lambda a: nd.uniform_filter(a, 3), a2),
        ("ndimage.median_filter", lambda a: nd.median_filter(a, 3), a2),
        ("ndimage.convolve", lambda a: nd.convolve(a, like(mod(a), np.ones((3, 3)))), a2),
        ("ndimage.sobel", lambda a: nd.sobel(a), a2),
        ("ndimage.zoom", lambda a: nd.zoom(a, 2), a2),
        ("ndimage.shift", lambda a: nd.shift(a, 0.5), a2),
        ("ndimage.label", lambda a: nd.label(a > 0)[0], a2),
        ("ndimage.binary_erosion", lambda a: nd.binary_erosion(a > 0), a2),
        ("ndimage.distance_transform_edt", lambda a: nd.distance_transform_edt(a > 0), a2),
        ("signal.convolve", lambda a: sg.convolve(a, like(mod(a), b)), a1),
        ("signal.fftconvolve", lambda a: sg.fftconvolve(a, like(mod(a), b)), a1),
        ("signal.correlate", lambda a: sg.correlate(a, like(mod(a), b)), a1),
        ("signal.lfilter", lambda a: sg.lfilter(like(mod(a), np.array([1.0, 0.5])),
                                                like(mod(a), np.array([1.0, -0.2])), a), a1),
        ("signal.filtfilt", lambda a: sg.filtfilt(like(mod(a), np.array([1.0, 0.5])),
                                                  like(mod(a), np.array([1.0, -0.2])), a), a1),
        # (SciPy hands np.asarray(sos) to Cython as a writable buffer)
        ("signal.sosfilt", lambda a: sg.sosfilt(like(mod(a), sg.butter(2, 0.3, output="sos")), a),
         a1),
        ("signal.detrend", lambda a: sg.detrend(a), a1),
        ("signal.hilbert", lambda a: sg.hilbert(a), a1),
        ("signal.medfilt", lambda a: sg.medfilt(a, 3), a1),
        ("signal.savgol_filter", lambda a: sg.savgol_filter(a, 5, 2), a1),
        ("signal.resample", lambda a: sg.resample(a, 8), a1),
        ("signal.resample_poly", lambda a: sg.resample_poly(a, 2, 3), a1),
        ("signal.upfirdn", lambda a: sg.upfirdn(like(mod(a), b), a, 2), a1),
        ("signal.freqz", lambda a: sg.freqz(a, worN=8)[1], a1),
        ("signal.windows.hann", lambda a: win.hann(8, xp=mod(a)), a1),
        ("signal.get_window", lambda a: sg.get_window("hamming", 8, xp=mod(a)), a1),
        ("integrate.trapezoid", lambda a: si.trapezoid(a), a1),
        ("integrate.cumulative_trapezoid", lambda a: si.cumulative_trapezoid(a), a1),
        ("integrate.cumulative_simpson", lambda a: si.cumulative_simpson(a), a1),
        ("integrate.romb", lambda a: si.romb(a[:9]), a1),
        ("linalg.block_diag", lambda a: sl.block_diag(a[:2, :2], a[2:5, 2:5]), a2),
        ("linalg.orthogonal_procrustes",
         lambda a: sl.orthogonal_procrustes(a, a[:, ::-1] + 0.5)[0], sq),
        ("linalg.fiedler", lambda a: sl.fiedler(a), a1),
        ("cluster.vq.whiten", lambda a: vq.whiten(a), a2),
        ("cluster.vq.vq", lambda a: vq.vq(a, a[:2])[0], a2),
        ("cluster.hierarchy.linkage", lambda a: ch.linkage(a, "ward"), a2),
        ("interpolate.CubicSpline",
         lambda a: ip.CubicSpline(like(mod(a), xs), a)(like(mod(a), xs[:5] + 0.1)), np.sin(xs)),
        # (SciPy builds dk with np.zeros_like(y) and then calls xp.reshape on that NumPy array)
        ("interpolate.PchipInterpolator",
         lambda a: ip.PchipInterpolator(like(mod(a), xs), a)(like(mod(a), xs[:5] + 0.1)),
         np.sin(xs)),
        ("interpolate.Akima1DInterpolator",
         lambda a: ip.Akima1DInterpolator(like(mod(a), xs), a)(like(mod(a), xs[:5] + 0.1)),
         np.sin(xs)),
        ("interpolate.make_interp_spline",
         lambda a: ip.make_interp_spline(like(mod(a), xs), a)(like(mod(a), xs[:5] + 0.1)),
         np.sin(xs)),
        ("interpolate.RegularGridInterpolator",
         lambda a: ip.RegularGridInterpolator((like(mod(a), xs[:6]), like(mod(a), xs[:7])), a)(
             like(mod(a), np.array([[0.3, 0.4]]))), a2),
        ("spatial.transform.Rotation", lambda a: Rotation.from_quat(a).as_matrix(), q),
        ("constants.convert_temperature", lambda a: cst.convert_temperature(a, "C", "K"), a1),
        ("differentiate.derivative", lambda a: dif.derivative(mod(a).exp, a).df, a1),
        ("optimize.rosen", lambda a: so.rosen(a), a1),
        ("optimize.elementwise.find_root",
         lambda a: soe.find_root(lambda x, c: x ** 3 - c, (a * 0 - 5.0, a * 0 + 5.0),
                                 args=(a,)).x, a1),
    ]
    return [pytest.param(*c, id=c[0]) if type(c) is tuple else c for c in cases]


_OTHERS = _others()


@pytest.mark.parametrize("name,fn,data", _OTHERS)
def test_other_subpackages(name: str, fn: Callable, data: np.ndarray) -> None:
    _run(fn, (data,), {}, rtol=1e-8, atol=1e-10)


def test_signal_sosfilt_writes_into_host_copies() -> None:
    """sosfilt hands np.asarray(sos) to a Cython kernel that wants a writable buffer (SciPy
    skips the test for JAX, whose np.asarray is read-only): np.asarray of an xla_array array
    is a writable array of its own, and the input stays unchanged."""
    from scipy import signal as sg
    sos = sg.butter(4, [0.1, 0.4], btype="band", output="sos")
    data = RNG.normal(size=(3, 40))
    zi = sg.sosfilt_zi(sos)[:, None, :] * data[:, :1][None]
    xs, xd = xp.asarray(sos), xp.asarray(data)
    got = sg.sosfilt(xs, xd, axis=-1)
    _check(got, sg.sosfilt(sos, data, axis=-1), xd.device, 1e-12, 1e-12)
    got_y, got_zf = sg.sosfilt(xs, xd, zi=xp.asarray(zi))
    want_y, want_zf = sg.sosfilt(sos, data, zi=zi)
    _check(got_y, want_y, xd.device, 1e-12, 1e-12)
    _check(got_zf, want_zf, xd.device, 1e-12, 1e-12)
    np.testing.assert_array_equal(np.asarray(xs), sos)
    np.testing.assert_array_equal(np.asarray(xd), data)
