"""Data type functions: astype between every pair of dtypes against NumPy, can_cast,
result_type and isdtype against array_api_strict (the standard's rules), finfo/iinfo against
NumPy, and the dtype objects themselves."""

from __future__ import annotations

import itertools
import warnings

import array_api_strict as strict
import numpy as np
import pytest

import xla_array as xp

NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float32", "float64", "complex64", "complex128"]
DTYPES = [getattr(xp, n) for n in NAMES]
KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
         "complex floating", "numeric"]


def source_values(d) -> np.ndarray:
    """Values every target dtype can represent the NumPy way: small and non-negative (float
    to unsigned and out-of-range float to int are implementation-defined), plus zeros."""
    vals = [0, 1, 2, 5, 7, 100, 0, 1]
    if d.kind == "b":
        return np.array([v % 2 for v in vals], dtype=bool)
    if d.kind == "f":
        return np.array([0.0, -0.0, 1.5, 2.75, 7.0, 100.25, 0.5, 126.9], dtype=d.np)
    if d.kind == "c":
        return np.array([0, 1 + 2j, 2.5 - 1j, 7, 100j, 0.5, 126.9, 3], dtype=d.np)
    return np.array(vals, dtype=d.np)


@pytest.mark.parametrize("src", DTYPES, ids=NAMES)
def test_astype_every_pair(src):
    a = source_values(src)
    x = xp.asarray(a)
    outs = [xp.astype(x, d) for d in DTYPES]
    xp.materialize(*outs)
    for d, o in zip(DTYPES, outs):
        assert o.dtype == d and o.shape == a.shape
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPy's ComplexWarning: the real part is kept
            want = a.astype(d.np) if not (src.kind == "c" and d.kind == "b") else a != 0
        np.testing.assert_array_equal(np.asarray(o), want, err_msg=f"{src.name} -> {d.name}")


def test_astype_special_cases():
    z = np.array([0j, 1j, complex(0, -0.0), complex(np.nan, 0), 2 + 0j])
    np.testing.assert_array_equal(np.asarray(xp.astype(xp.asarray(z), xp.bool)),
                                  [False, True, False, True, True])
    f = xp.asarray([np.nan, np.inf, -0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(xp.astype(f, xp.bool)), [True, True, False, False])
    b = xp.astype(xp.asarray([False, True]), xp.float64)
    np.testing.assert_array_equal(np.asarray(b * xp.asarray([np.inf, np.inf])), [np.nan, np.inf])
    i = xp.asarray(np.array([300, -1], dtype=np.int64))
    np.testing.assert_array_equal(np.asarray(xp.astype(i, xp.uint8)), [44, 255])  # wraps
    h = xp.astype(xp.asarray([1.5, -2.25]), xp.float16)
    assert h.dtype == xp.float16
    np.testing.assert_array_equal(np.asarray(xp.astype(h, xp.bfloat16)).astype(np.float32),
                                  [1.5, -2.25])


def test_astype_copy_device_and_errors():
    x = xp.asarray([1, 2, 3])
    assert xp.astype(x, xp.int64, copy=False) is x
    y = xp.astype(x, xp.int64)
    assert y is not x and y.dtype == xp.int64
    assert xp.astype(x, xp.float32, copy=False).dtype == xp.float32
    assert xp.astype(x, xp.int64, device=x.device).device == x.device
    assert xp.astype(x, "float32").dtype == xp.float32  # NumPy-style names are accepted
    with pytest.raises(TypeError):
        xp.astype([1, 2], xp.int8)
    with pytest.raises(TypeError):
        xp.astype(x, "not a dtype")


def test_can_cast_matches_the_standard():
    for a, b in itertools.product(NAMES, NAMES):
        want = strict.can_cast(getattr(strict, a), getattr(strict, b))
        assert xp.can_cast(getattr(xp, a), getattr(xp, b)) == want, (a, b)
    assert xp.can_cast(xp.ones(2, dtype=xp.int8), xp.int16)
    assert xp.can_cast(xp.float16, xp.float32) and not xp.can_cast(xp.float32, xp.float16)
    with pytest.raises(TypeError):
        xp.can_cast(1, xp.int8)


def test_result_type_matches_the_standard():
    """Where the standard specifies the promotion it is followed exactly; mixed kinds (which
    it leaves unspecified) follow NumPy 2."""
    for a, b in itertools.product(NAMES, NAMES):
        got = xp.result_type(getattr(xp, a), getattr(xp, b))
        try:
            want = str(strict.result_type(getattr(strict, a), getattr(strict, b)))
        except TypeError:
            want = np.promote_types(a, b).name
        assert got.name == want.split(".")[-1], (a, b)
    assert xp.result_type(xp.int8, xp.uint8, xp.int16) == xp.int16
    assert xp.result_type(xp.ones(2, dtype=xp.float32), xp.complex64) == xp.complex64
    assert xp.result_type(xp.float16, xp.bfloat16) == xp.float32


@pytest.mark.parametrize("name", NAMES)
def test_result_type_with_python_scalars(name):
    d = getattr(xp, name)
    for sc in (True, 1, 1.0, 1j):
        try:
            want = str(strict.result_type(getattr(strict, name), sc)).split(".")[-1]
        except TypeError:  # mixed kinds: NumPy 2's weak scalars (NEP 50)
            want = np.result_type(np.empty(0, dtype=d.np), sc).name
        assert xp.result_type(d, sc).name == want, (name, sc)
        assert xp.result_type(sc, d).name == want
    assert xp.result_type(1, 2.0) == xp.float64 and xp.result_type(True) == xp.bool
    with pytest.raises(ValueError):
        xp.result_type()
    with pytest.raises(TypeError):
        xp.result_type(object())
    assert xp.result_type("int8") is xp.int8  # NumPy's spellings (tests/test_numpy_interop.py)


def test_isdtype_matches_the_standard():
    for name, kind in itertools.product(NAMES, KINDS + NAMES):
        skind = getattr(strict, kind) if kind in NAMES else kind
        xkind = getattr(xp, kind) if kind in NAMES else kind
        want = strict.isdtype(getattr(strict, name), skind)
        assert xp.isdtype(getattr(xp, name), xkind) == want, (name, kind)
    assert xp.isdtype(xp.int8, ("real floating", xp.int8))
    assert xp.isdtype(xp.float16, "real floating") and xp.isdtype(xp.bfloat16, "numeric")
    with pytest.raises(ValueError):
        xp.isdtype(xp.int8, "integer")
    with pytest.raises(TypeError):
        xp.isdtype(object(), "integral")
    assert xp.isdtype(np.int8, "integral")  # NumPy's spellings (tests/test_numpy_interop.py)
    with pytest.raises(TypeError):
        xp.isdtype(xp.int8, 3)


@pytest.mark.parametrize("name", ["float32", "float64", "complex64", "complex128", "float16"])
def test_finfo(name):
    d = getattr(xp, name)
    real = {"complex64": np.float32, "complex128": np.float64}.get(name, d.np)
    fi, nf = xp.finfo(d), np.finfo(real)
    assert fi.bits == nf.bits and isinstance(fi.bits, int)
    for field in ("eps", "max", "min", "smallest_normal"):
        assert getattr(fi, field) == float(getattr(nf, field))
        assert isinstance(getattr(fi, field), float)
    assert fi.dtype.name == np.dtype(real).name
    assert xp.finfo(xp.ones(1, dtype=d)) == fi
    assert xp.finfo(xp.bfloat16).bits == 16


@pytest.mark.parametrize("name", NAMES[1:9])
def test_iinfo(name):
    d = getattr(xp, name)
    ii, ni = xp.iinfo(d), np.iinfo(d.np)
    assert (ii.bits, ii.max, ii.min) == (ni.bits, int(ni.max), int(ni.min))
    assert all(isinstance(v, int) for v in (ii.bits, ii.max, ii.min))
    assert ii.dtype == d and xp.iinfo(xp.zeros(1, dtype=d)) == ii


def test_info_errors_and_dtype_objects():
    with pytest.raises(TypeError):
        xp.finfo(xp.int32)
    with pytest.raises(TypeError):
        xp.iinfo(xp.float32)
    with pytest.raises(TypeError):
        xp.iinfo(xp.bool)
    assert xp.float32 == xp.float32 and xp.float32 != xp.float64
    assert xp.float32 == np.float32 and xp.float32 == "float32"  # as numpy.dtype compares
    assert xp.float32 != np.float64 and xp.float32 != "float64"
    assert len({d for d in DTYPES}) == len(DTYPES)  # hashable and distinct
    assert np.dtype(xp.asarray(np.zeros(2, dtype=np.uint16)).dtype.np) == np.uint16
    import pickle
    assert pickle.loads(pickle.dumps(xp.complex64)) is xp.complex64


@pytest.mark.usefixtures("on_cpu")  # CPUs flush subnormals, GPUs keep them (docs/dtypes.md)
def test_subnormals_are_flushed_as_docs_dtypes_says():
    """docs/dtypes.md ("Subnormal numbers"): XLA's CPU runtime flushes subnormals in arithmetic
    (stored values read back unchanged). If a jaxlib stops doing so, that section must change."""
    tiny = np.array([1e-40, 3.0], dtype=np.float32)
    x = xp.asarray(tiny)
    np.testing.assert_array_equal(np.asarray(x), tiny)
    np.testing.assert_array_equal(np.asarray(x * 1.0), [0.0, 3.0])
    assert not bool(x[0] > 0.0)
    # NumPy's log loop (kernels/ufunc.py) runs with the modes off; XLA's log flushes
    assert np.asarray(xp.log(x))[0] == np.log(tiny)[0]
    with xp.flags.using(ufunc=False):
        assert np.asarray(xp.log(x))[0] == -np.inf


def test_subnormals_on_a_gpu_are_kept_as_docs_dtypes_says():
    """docs/dtypes.md: XLA's GPU code keeps subnormals (measured on an H200); run by
    scripts/gpu_proof.sh on a GPU machine."""
    gpus = [d for d in xp.__array_namespace_info__().devices() if d.platform == "cuda"]
    if not gpus:
        pytest.skip("no GPU on this machine")
    tiny = np.array([1e-40, 3.0], dtype=np.float32)
    x = xp.asarray(tiny, device=gpus[0])
    np.testing.assert_array_equal(np.asarray(x * 1.0), tiny)
    assert bool(x[0] > 0.0)
