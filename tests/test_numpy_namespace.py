"""NumPy's namespace beyond the standard (``api/numpy_functions.py``), in the style of JAX's
``lax_numpy_test``: one table of functions with argument makers, each entry run through
xla_array and NumPy on the same inputs and compared (bit for bit where ``ulps`` is 0, else
within the stated ulps of the result's dtype); a coverage test over the NumPy functions
``jax.numpy`` implements; the AttributeError of a missing name; NumPy's errors.

Few shapes and dtypes on purpose: every distinct graph structure is an XLA compile.
"""

from __future__ import annotations

import inspect
import math
import pathlib
import re

import numpy as np
import pytest

import xla_array as xp
from xla_array.api import numpy_functions as nf

ROOT = pathlib.Path(__file__).resolve().parent.parent
rng = np.random.default_rng(61)
F = rng.standard_normal((3, 4))                   # the float64 matrix most entries use
F32 = F.astype(np.float32)
V = rng.standard_normal(5)
POS = np.abs(F) + 0.5
INT = rng.integers(-5, 6, (3, 4))
U = rng.integers(0, 6, 7)
NANF = F.copy()
NANF[0, 1] = NANF[2, 3] = np.nan
NANF[1, :] = np.nan
C = F + 1j * F[::-1]
SQ = rng.standard_normal((3, 3)) + 3 * np.eye(3)


def _same(got, want, ulps, name):
    if isinstance(want, tuple | list):
        assert isinstance(got, tuple | list) and len(got) == len(want), name
        for g, w in zip(got, want):
            _same(g, w, ulps, name)
        return
    if isinstance(want, bool | str) or want is None:
        assert got == want, (name, got, want)
        return
    w = np.asarray(want)
    g = np.asarray(got)
    assert g.shape == w.shape, (name, g.shape, w.shape)
    assert g.dtype == w.dtype, (name, g.dtype, w.dtype)
    if ulps == 0 or w.dtype.kind not in "fc":
        np.testing.assert_array_equal(g, w, err_msg=name, strict=True)
    else:
        eps = np.finfo(w.dtype).eps
        scale = max(float(np.nanmax(np.abs(w))) if w.size and np.any(np.isfinite(w)) else 1.0,
                    np.finfo(w.dtype).tiny)
        np.testing.assert_allclose(g, w, rtol=ulps * eps, atol=ulps * eps * scale,
                                   equal_nan=True, err_msg=name)


# name, argument maker (the same arguments go to both), keyword arguments, ulps
CASES = [
    # aliases of the standard's functions, with NumPy's names and array-likes
    ("absolute", lambda: (INT,), {}, 0), ("arcsin", lambda: (F / 4,), {}, 0),
    ("arctan2", lambda: (F, F[::-1]), {}, 0), ("power", lambda: (POS, 2.5), {}, 0),
    ("power", lambda: (2, 3), {}, 0), ("true_divide", lambda: (F, [1.0, 2.0, 4.0, 8.0]), {}, 0),
    ("mod", lambda: (INT, 3), {}, 0), ("left_shift", lambda: (U, 2), {}, 0),
    ("conjugate", lambda: (C,), {}, 0), ("around", lambda: (F * 100, 1), {}, 0),
    ("concatenate", lambda: ([F, F],), {"axis": 1}, 0),
    ("concatenate", lambda: ([F, INT],), {"axis": None}, 0),
    ("amax", lambda: (F,), {"axis": 0}, 0), ("amin", lambda: (INT,), {"axis": 1}, 0),
    # elementwise functions new to the namespace
    ("cbrt", lambda: (F,), {}, 2), ("deg2rad", lambda: (F,), {}, 0),
    ("rad2deg", lambda: (F,), {}, 0), ("exp2", lambda: (F,), {}, 2),
    ("logaddexp2", lambda: (F, F[::-1]), {}, 4), ("fmax", lambda: (NANF, F), {}, 0),
    ("fmin", lambda: (NANF, F), {}, 0), ("fmod", lambda: (F * 3, 0.7), {}, 0),
    ("fmod", lambda: (INT, 3), {}, 0), ("divmod", lambda: (INT, 4), {}, 0),
    ("modf", lambda: (F * 3,), {}, 0), ("float_power", lambda: (POS, 2), {}, 2),
    ("gcd", lambda: (INT, 6), {}, 0),
    ("heaviside", lambda: (np.array([-1.0, 0.0, 2.0]), 0.5), {}, 0),
    ("ldexp", lambda: (F, np.array([1, -2, 3, 0])), {}, 0), ("frexp", lambda: (F * 40,), {}, 0),
    ("rint", lambda: (F * 3,), {}, 0), ("fix", lambda: (F * 3,), {}, 0),
    ("fabs", lambda: (F,), {}, 0), ("sinc", lambda: (F,), {}, 4),
    ("spacing", lambda: (F,), {}, 0), ("i0", lambda: (F * 4,), {}, 8),
    ("isneginf", lambda: (np.array([-np.inf, 1.0, np.inf]),), {}, 0),
    ("isposinf", lambda: (np.array([-np.inf, 1.0, np.inf]),), {}, 0),
    ("isreal", lambda: (C,), {}, 0), ("iscomplex", lambda: (C,), {}, 0),
    ("angle", lambda: (C,), {}, 0), ("nan_to_num", lambda: (NANF,), {"nan": -1.0}, 0),
    ("bitwise_count", lambda: (INT,), {}, 0), ("unwrap", lambda: (np.cumsum(POS[0]) * 3,), {}, 4),
    # creation
    ("array", lambda: ([[1, 2], [3, 4]],), {}, 0), ("array", lambda: (F,), {"ndmin": 3}, 0),
    ("copy", lambda: (F,), {}, 0), ("identity", lambda: (3,), {}, 0),
    ("tri", lambda: (3, 4, 1), {}, 0), ("geomspace", lambda: (1.0, 1000.0, 4), {}, 0),
    ("indices", lambda: ((2, 3),), {}, 0), ("vander", lambda: (V,), {"N": 3}, 0),
    ("diagflat", lambda: ([1.0, 2.0],), {"k": 1}, 0), ("hanning", lambda: (5,), {}, 0),
    ("kaiser", lambda: (5, 3.0), {}, 0), ("tril_indices", lambda: (3,), {}, 0),
    # shapes and joining
    ("ravel", lambda: (F,), {}, 0), ("ravel", lambda: (F,), {"order": "F"}, 0),
    ("transpose", lambda: (F,), {}, 0), ("swapaxes", lambda: (F, 0, 1), {}, 0),
    ("rollaxis", lambda: (F[None], 2), {}, 0), ("atleast_2d", lambda: (V,), {}, 0),
    ("atleast_3d", lambda: (F,), {}, 0), ("vstack", lambda: ([F, F],), {}, 0),
    ("hstack", lambda: ([V, V],), {}, 0), ("dstack", lambda: ([F, F],), {}, 0),
    ("column_stack", lambda: ([V, V],), {}, 0),
    ("block", lambda: ([[F, F], [F, F]],), {}, 0),
    ("split", lambda: (F, 2, 1), {}, 0), ("array_split", lambda: (V, 3), {}, 0),
    ("array_split", lambda: (F, [1, 3]), {"axis": 1}, 0), ("hsplit", lambda: (F, 2), {}, 0),
    ("fliplr", lambda: (F,), {}, 0), ("flipud", lambda: (F,), {}, 0),
    ("rot90", lambda: (F,), {}, 0), ("rot90", lambda: (F, 3), {}, 0),
    ("resize", lambda: (V, (3, 4)), {}, 0), ("append", lambda: (F, V), {}, 0),
    ("append", lambda: (F, F), {"axis": 0}, 0), ("delete", lambda: (F, [0, 2], 1), {}, 0),
    ("insert", lambda: (V, 2, 9.0), {}, 0), ("insert", lambda: (V, [1, 3], [7.0, 8.0]), {}, 0),
    ("insert", lambda: (F, 1, 0.0), {"axis": 1}, 0),
    ("trim_zeros", lambda: (np.array([0, 0, 1, 2, 0]),), {}, 0),
    # reductions
    ("ptp", lambda: (F,), {"axis": 1}, 0), ("cumsum", lambda: (F,), {}, 0),
    ("cumsum", lambda: (INT,), {"axis": 0}, 0), ("cumprod", lambda: (POS,), {"axis": 1}, 0),
    ("average", lambda: (F,), {"axis": 0}, 0),
    ("average", lambda: (F,), {"axis": 1, "weights": [1.0, 2.0, 3.0, 4.0]}, 2),
    ("nansum", lambda: (NANF,), {"axis": 1}, 0), ("nanprod", lambda: (NANF,), {"axis": 0}, 0),
    ("nanmax", lambda: (NANF,), {"axis": 1}, 0), ("nanmin", lambda: (NANF,), {}, 0),
    ("nanargmax", lambda: (NANF,), {}, 0), ("nanargmin", lambda: (NANF[[0, 2]],),
                                               {"axis": 1}, 0),
    ("nanmean", lambda: (NANF,), {"axis": 0}, 0), ("nanvar", lambda: (NANF,), {"axis": 0}, 2),
    ("nanstd", lambda: (NANF,), {"ddof": 1}, 2), ("nancumsum", lambda: (NANF,), {}, 0),
    ("median", lambda: (F,), {}, 0), ("median", lambda: (F,), {"axis": 1}, 0),
    ("median", lambda: (INT,), {"axis": 0, "keepdims": True}, 0),
    ("median", lambda: (NANF,), {"axis": 1}, 0), ("nanmedian", lambda: (NANF,), {"axis": 0}, 0),
    ("quantile", lambda: (F, 0.3), {}, 0), ("quantile", lambda: (F32, 0.3), {"axis": 1}, 2),
    ("quantile", lambda: (F, [0.1, 0.5, 1.0]), {"axis": 0}, 0),
    ("quantile", lambda: (INT, 0.25), {"axis": 1}, 0),
    ("percentile", lambda: (F, 90), {"axis": 1, "keepdims": True}, 0),
    ("percentile", lambda: (F, 40), {"method": "nearest"}, 0),
    ("percentile", lambda: (F, 40), {"method": "midpoint", "axis": 0}, 0),
    ("quantile", lambda: (F, 0.4), {"method": "lower", "axis": 0}, 0),
    ("quantile", lambda: (F, 0.4), {"method": "higher", "axis": 0}, 0),
    ("nanquantile", lambda: (NANF, 0.3), {"axis": 1}, 0),
    ("nanpercentile", lambda: (NANF, [25, 75]), {"axis": 0}, 0),
    # comparisons
    ("isclose", lambda: (F, F + 1e-9), {}, 0), ("allclose", lambda: (F, F + 1e-3), {}, 0),
    ("array_equal", lambda: (F, F), {}, 0), ("array_equal", lambda: (NANF, NANF),
                                                {"equal_nan": True}, 0),
    ("array_equiv", lambda: (F[0], F[[0, 0]]), {}, 0),
    # products
    ("dot", lambda: (F, F.T), {}, 4), ("dot", lambda: (V, V), {}, 4),
    ("vdot", lambda: (C, C), {}, 4), ("inner", lambda: (F, F), {}, 4),
    ("outer", lambda: (V, V[:3]), {}, 0), ("kron", lambda: (F[:2, :2], INT[:2, :3]), {}, 0),
    ("trace", lambda: (F,), {"offset": 1}, 0), ("diagonal", lambda: (F,), {"offset": -1}, 0),
    ("cross", lambda: (F[:, :3], F[::-1, :3]), {}, 0), ("matvec", lambda: (F, F[0]), {}, 4),
    ("einsum", lambda: ("ij,kj->ik", F, F), {}, 4), ("einsum", lambda: ("ii", SQ), {}, 0),
    ("einsum", lambda: ("ij->j", F), {}, 4),
    ("einsum", lambda: ("ij,jk,kl->il", F, F.T, F), {}, 8),
    ("einsum", lambda: ("...j,j", F, F[0]), {}, 4),
    ("convolve", lambda: (V, [1.0, 0.5, 0.25]), {}, 4),
    ("convolve", lambda: (V, [1.0, 0.5, 0.25]), {"mode": "same"}, 4),
    ("correlate", lambda: (V, [1.0, 2.0]), {}, 4),
    ("correlate", lambda: (V, [1.0, 2.0]), {"mode": "full"}, 4),
    # differences, integrals, padding
    ("ediff1d", lambda: (V,), {"to_begin": [0.0]}, 0), ("gradient", lambda: (V,), {}, 0),
    ("gradient", lambda: (F, 2.0), {}, 0), ("gradient", lambda: (V,), {"edge_order": 2}, 2),
    ("trapezoid", lambda: (F,), {}, 2), ("trapezoid", lambda: (V, np.cumsum(POS[0, :1].repeat(5)))
                                          , {}, 4),
    ("pad", lambda: (F, 1), {}, 0), ("pad", lambda: (F, ((1, 0), (2, 1))), {"mode": "edge"}, 0),
    ("pad", lambda: (V, 2), {"mode": "reflect"}, 0), ("pad", lambda: (V, 3), {"mode": "wrap"}, 0),
    ("pad", lambda: (F, 1), {"mode": "symmetric"}, 0),
    ("pad", lambda: (F, 1), {"mode": "constant", "constant_values": 7.0}, 0),
    # statistics and counting
    ("cov", lambda: (F,), {}, 8), ("cov", lambda: (F,), {"rowvar": False, "ddof": 0}, 8),
    ("corrcoef", lambda: (F,), {}, 8), ("bincount", lambda: (U,), {}, 0),
    ("bincount", lambda: (U,), {"minlength": 9}, 0),
    ("bincount", lambda: (U,), {"weights": V.repeat(2)[:7]}, 0),
    ("histogram", lambda: (F,), {"bins": 4}, 0),
    ("histogram", lambda: (F,), {"bins": 3, "range": (-1.0, 1.0)}, 0),
    ("histogram_bin_edges", lambda: (V,), {"bins": 5}, 0),
    ("histogram2d", lambda: (F[0], F[1]), {"bins": 2}, 0),
    ("digitize", lambda: (F, [-1.0, 0.0, 1.0]), {}, 0),
    ("digitize", lambda: (F, [1.0, 0.0, -1.0]), {"right": True}, 0),
    ("interp", lambda: (F, [-2.0, 0.0, 1.0, 2.0], [0.0, 1.0, 3.0, 2.0]), {}, 2),
    # selection and indexing
    ("select", lambda: ([F > 0.5, F < -0.5], [F, -F]), {"default": 9.0}, 0),
    ("piecewise", lambda: (F, [F < 0, F >= 0], [-1.0, 1.0]), {}, 0),
    ("compress", lambda: ([True, False, True], F), {"axis": 0}, 0),
    ("extract", lambda: (F > 0, F), {}, 0), ("choose", lambda: (INT % 3, [F, -F, F * 2]), {}, 0),
    ("argwhere", lambda: (F > 0,), {}, 0), ("flatnonzero", lambda: (INT,), {}, 0),
    ("ravel_multi_index", lambda: (([0, 2], [1, 3]), (3, 4)), {}, 0),
    ("unravel_index", lambda: ([1, 7, 11], (3, 4)), {}, 0),
    ("triu_indices_from", lambda: (F,), {"k": 1}, 0), ("diag_indices_from", lambda: (SQ,), {}, 0),
    ("lexsort", lambda: ((INT[0], INT[1]),), {}, 0), ("sort_complex", lambda: (V,), {}, 0),
    ("unique", lambda: (INT,), {}, 0),
    ("unique", lambda: (INT,), {"return_index": True, "return_inverse": True,
                              "return_counts": True}, 0),
    ("unique", lambda: (np.array([[1, 2], [1, 2], [0, 5]]),), {"axis": 0}, 0),
    ("setdiff1d", lambda: (INT[0], INT[1]), {}, 0), ("setxor1d", lambda: (INT[0], INT[1]), {}, 0),
    ("apply_along_axis", lambda: (lambda r: r * 2, 1, F), {}, 0),
    # polynomials
    ("polyval", lambda: ([1.0, -2.0, 0.5], F), {}, 0), ("polyadd", lambda: ([1, 2], [1, 2, 3]),
                                                         {}, 0),
    ("polysub", lambda: ([1.0, 2.0], [1.0, 2.0, 3.0]), {}, 0),
    ("polymul", lambda: ([1.0, 2.0], [1.0, 2.0, 3.0]), {}, 0),
    ("polyder", lambda: ([1.0, 2.0, 3.0, 4.0],), {"m": 2}, 0),
    ("polyint", lambda: ([3.0, 2.0, 1.0],), {}, 0),
    ("polyfit", lambda: (V, 2 * V + 1 + V ** 2, 2), {}, 64),
    ("roots", lambda: ([1.0, -6.0, 11.0, -6.0],), {}, 64),
    ("packbits", lambda: (INT > 0,), {"axis": 1}, 0),
    ("shape", lambda: (F,), {}, 0), ("ndim", lambda: (F,), {}, 0), ("size", lambda: (F,), {}, 0),
]


def _arrays(result):
    if isinstance(result, tuple | list):
        return [a for r in result for a in _arrays(r)]
    return [result] if isinstance(result, xp.Array) else []


# The table's xla_array results are recorded first, then computed together, CHUNK entries to
# one graph (one XLA compile where each entry alone would be one), and each entry's test then
# compares its own result with NumPy's. A chunk whose graph fails leaves its results pending:
# each test then computes its own, and the failure is reported at the entry it belongs to.
CHUNK = 24


def _recorded(namespace, cases) -> dict:
    results: dict = {}
    for start in range(0, len(cases), CHUNK):
        chunk = {}
        for i in range(start, min(start + CHUNK, len(cases))):
            name, make, kwargs, _ = cases[i]
            try:
                chunk[i] = (True, getattr(namespace, name)(*make(), **kwargs))
            except Exception as e:  # noqa: BLE001  (raised again by the entry's test)
                chunk[i] = (False, e)
        try:
            xp.materialize(*[a for ok, r in chunk.values() if ok for a in _arrays(r)])
        except Exception:  # noqa: BLE001  (each test computes its own then)
            pass
        results.update(chunk)
    return results


def _result(results: dict, i: int):
    ok, got = results[i]
    if not ok:
        raise got
    return got


@pytest.fixture(scope="module")
def table():
    return _recorded(xp, CASES)


@pytest.mark.parametrize("i, name, make, kwargs, ulps", [(i, *c) for i, c in enumerate(CASES)],
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_numpy(table, i, name, make, kwargs, ulps):
    want = getattr(np, name)(*make(), **kwargs)
    _same(_result(table, i), want, ulps, name)


LINALG_CASES = [
    ("norm", lambda: (F,), {}, 4), ("norm", lambda: (F,), {"ord": "nuc"}, 8),
    ("norm", lambda: (F,), {"axis": 1}, 4), ("norm", lambda: (F,), {"ord": np.inf}, 0),
    ("norm", lambda: (V,), {"ord": 1}, 0), ("norm", lambda: (F,), {"axis": 0, "keepdims": True,
                                                                   "ord": 3}, 8),
    ("lstsq", lambda: (F.T, V[:4]), {"rcond": None}, 64), ("cond", lambda: (SQ,), {}, 64),
    ("cond", lambda: (SQ, 1), {}, 64), ("multi_dot", lambda: ([F, F.T, F, V[:4]],), {}, 16),
    ("tensorinv", lambda: (np.eye(6).reshape(6, 2, 3),), {"ind": 1}, 8),
    ("tensorsolve", lambda: (np.eye(6).reshape(2, 3, 6) * 2, np.arange(6.0).reshape(2, 3)),
     {}, 8),
]


@pytest.fixture(scope="module")
def linalg_table():
    return _recorded(xp.linalg, LINALG_CASES)


@pytest.mark.parametrize("i, name, make, kwargs, ulps",
                         [(i, *c) for i, c in enumerate(LINALG_CASES)],
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(LINALG_CASES)])
def test_linalg_against_numpy(linalg_table, i, name, make, kwargs, ulps):
    want = getattr(np.linalg, name)(*make(), **kwargs)
    got = _result(linalg_table, i)
    if name == "lstsq":  # the rank is a 0-d int array here, a Python int in NumPy
        got, want = (got[0], got[1], int(got[2]), got[3]), (want[0], want[1], int(want[2]),
                                                             want[3])
    _same(got, want, ulps, name)


def test_in_place_functions_write_like_numpy():
    a, b = F.copy(), xp.asarray(F)
    np.put_along_axis(a, np.array([[0], [1], [2]]), 9.0, axis=1)
    xp.put_along_axis(b, np.array([[0], [1], [2]]), 9.0, axis=1)
    np.put(a, [0, 5], [-1.0, -2.0])
    xp.put(b, [0, 5], [-1.0, -2.0])
    np.fill_diagonal(a, 3.0)
    xp.fill_diagonal(b, 3.0)
    np.place(a, a > 1.5, [7.0, 8.0])
    xp.place(b, b > 1.5, [7.0, 8.0])
    _same(b, a, 0, "in place")


def test_nep50_scalars_and_array_likes():
    f32 = xp.asarray(F32)
    assert xp.power(f32, 2.0).dtype == xp.float32  # Python scalars are weak (NEP 50)
    assert xp.power(f32, np.float64(2.0)).dtype == xp.float64  # NumPy scalars are not
    assert xp.arcsin(np.array([0, 1], np.int8)).dtype == xp.float16  # NumPy's loop choice
    assert float(xp.nanmean([1.0, float("nan"), 3.0])) == 2.0
    _same(xp.median(f32), np.median(F32), 0, "median float32")
    _same(xp.einsum("ij,ij->", f32, f32), np.einsum("ij,ij->", F32, F32), 4, "einsum f32")


def test_numpy_errors():
    with pytest.raises(ValueError, match="equal division"):
        xp.split(xp.asarray(V), 2)
    with pytest.raises(ValueError, match="range"):
        xp.quantile(xp.asarray(F), 1.5)
    with pytest.raises(ValueError, match="not a valid method"):
        xp.quantile(xp.asarray(F), 0.5, method="nope")
    with pytest.raises(ValueError, match="negative"):
        xp.bincount([1, -1])
    with pytest.raises(ValueError, match="All-NaN"):
        xp.nanargmax([np.nan, np.nan])
    with pytest.raises(ValueError, match="mode"):
        xp.convolve(V, V, mode="bad")
    with pytest.raises(np.linalg.LinAlgError):
        xp.linalg.lstsq(np.ones((2, 2, 2)), np.ones(2))
    with pytest.raises(np.exceptions.AxisError):
        xp.swapaxes(xp.asarray(F), 0, 5)


def test_missing_names_say_what_to_use():
    for name, std in nf.STANDARD_NAMES.items():
        if not hasattr(xp, name):
            with pytest.raises(AttributeError, match=f"xla_array.{std}"):
                getattr(xp, name)
    with pytest.raises(AttributeError, match="trapezoid"):
        xp.trapz  # noqa: B018
    with pytest.raises(AttributeError, match="docs/numpy.md"):
        xp.loadtxt  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        xp.no_such_name  # noqa: B018


def _excluded_in_docs() -> set[str]:
    text = (ROOT / "docs" / "numpy.md").read_text()
    section = text.split("## Excluded", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"`([a-z_0-9]+)`", section))


def _jax_numpy_names() -> list[str]:
    lines = (ROOT / "tests" / "data" / "jax_numpy_names.txt").read_text().splitlines()
    return [w for line in lines if not line.startswith("#") for w in line.split()]


def test_coverage_of_jax_numpy_functions():
    """Every NumPy function (callable, not a class) that jax.numpy implements is in xla_array
    or listed, with its reason, in docs/numpy.md's exclusions."""
    counted = [n for n in _jax_numpy_names() if callable(getattr(np, n, None))
               and not inspect.isclass(getattr(np, n))]
    excluded = _excluded_in_docs()
    missing = [n for n in counted if not hasattr(xp, n) and n not in excluded]
    assert not missing, f"neither implemented nor excluded in docs/numpy.md: {missing}"
    have = sum(hasattr(xp, n) for n in counted)
    assert have / len(counted) >= 0.95, (have, len(counted))
    # the exclusion list names only what is really missing
    assert not [n for n in excluded if hasattr(xp, n)]


def test_numpy_versions_of_standard_names_are_documented():
    """Where NumPy's function of a standard name differs, the namespace keeps the standard's
    and docs/numpy.md says how NumPy's differs."""
    text = (ROOT / "docs" / "numpy.md").read_text()
    section = text.split("## Standard names", 1)[1].split("\n## ", 1)[0]
    for name in nf.NUMPY_VERSIONS:
        assert f"`{name}`" in section, name
    assert xp.sort is not nf.NUMPY_VERSIONS["sort"]
    _same(nf.NUMPY_VERSIONS["sort"](F, axis=None), np.sort(F, axis=None), 0, "sort")


def test_einsum_follows_einsum_path_order():
    a, b, c = rng.standard_normal((2, 30)), rng.standard_normal((30, 40)), rng.standard_normal(
        (40, 3))
    got = xp.einsum("ij,jk,kl->il", a, b, c)
    assert xp.debug.graph(got).count("dot_general") == 2
    _same(got, np.einsum("ij,jk,kl->il", a, b, c), 64, "einsum chain")


def test_math_constant_helpers():
    assert math.isclose(float(xp.sinc(0.5)), float(np.sinc(0.5)), rel_tol=1e-15)


SCRIPTS = sorted((ROOT / "examples" / "numpy_scripts").glob("*.py"))


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_numpy_scripts_run_unchanged_but_for_the_import(path, capsys):
    source = path.read_text()
    assert source.count("import numpy as np\n") == 1
    ns_np: dict = {}
    exec(compile(source, str(path), "exec"), ns_np)
    ns_xp: dict = {}
    exec(compile(source.replace("import numpy as np\n", "import xla_array as np\n"), str(path),
                 "exec"), ns_xp)
    assert ns_np["RESULTS"].keys() == ns_xp["RESULTS"].keys()
    for key, want in ns_np["RESULTS"].items():
        got = np.asarray(ns_xp["RESULTS"][key])
        want = np.asarray(want)
        assert got.shape == want.shape and got.dtype.kind == want.dtype.kind, key
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=key)
    capsys.readouterr()


def test_numpy_functions_dispatch_to_ours():
    """NEP 18: NumPy's functions on xla_array arrays call ours (lazy Arrays, NumPy's values);
    those we lack, or calls our function does not take, run NumPy's on host values."""
    x, i = xp.asarray(F), xp.asarray(INT)
    got = [np.concatenate([x, x], axis=1), np.median(x), np.dot(x, x.T), np.unique(i),
           np.mean(x), np.std(x, ddof=1), np.linalg.norm(x), np.round(x, 1)]
    assert all(type(g) is xp.Array for g in got), [type(g) for g in got]
    xp.materialize(*got)
    want = [np.concatenate([F, F], axis=1), np.median(F), np.dot(F, F.T), np.unique(INT),
            np.mean(F), np.std(F, ddof=1), np.linalg.norm(F), np.round(F, 1)]
    for g, w, ulps in zip(got, want, (0, 0, 4, 0, 0, 2, 4, 0)):
        _same(g, w, ulps, "dispatch")
    dst = np.zeros((3, 4))
    assert np.copyto(dst, x) is None  # not ours (docs/numpy.md): NumPy's, into dst
    _same(dst, F, 0, "copyto")
    assert np.shares_memory(x, F) is False
    squeezed = np.squeeze(x[None])  # our squeeze needs axis: NumPy's on the host value
    assert type(squeezed) is np.ndarray
    _same(squeezed, F, 0, "squeeze")


def test_round_and_flat():
    x = xp.asarray(F * 10)
    r = round(x[0, 1])
    assert type(r) is int and r == round(np.float64(F[0, 1] * 10))
    _same(round(x[0, 1], 1), round(np.float64(F[0, 1] * 10), 1), 0, "round 0-d")
    _same(round(x, 1), np.round(F * 10, 1), 0, "round")
    flat, want = x.flat, (F * 10).flat
    assert len(flat) == len(want) and flat.base is x
    _same(flat[5], want[5], 0, "flat[5]")
    _same(flat[1:7:2], want[1:7:2], 0, "flat slice")
    _same(flat[[0, 11]], want[[0, 11]], 0, "flat list")
    assert [float(v) for v in flat] == list(want)
    _same(np.asarray(flat), F.ravel() * 10, 0, "flat array")
