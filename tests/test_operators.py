"""Array operators: every arithmetic, bitwise and comparison dunder in its forward, reflected
and in-place forms, against NumPy, with Python scalars, NumPy operands and the in-place rules
(the result must keep the array's dtype and shape). All operators of one dtype share one
executable."""

from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xla_array as xp

NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float32", "float64", "complex64", "complex128"]
DTYPES = [getattr(xp, n) for n in NAMES]

# operator name -> (python operator, accepted kinds)
ARITH = {"add": (operator.add, "iufc"), "sub": (operator.sub, "iufc"),
         "mul": (operator.mul, "iufc"), "truediv": (operator.truediv, "iufc"),
         "floordiv": (operator.floordiv, "iuf"), "mod": (operator.mod, "iuf"),
         "pow": (operator.pow, "iufc"), "and": (operator.and_, "biu"),
         "or": (operator.or_, "biu"), "xor": (operator.xor, "biu"),
         "lshift": (operator.lshift, "iu"), "rshift": (operator.rshift, "iu")}
COMPARE = {"lt": (operator.lt, "iuf"), "le": (operator.le, "iuf"), "gt": (operator.gt, "iuf"),
           "ge": (operator.ge, "iuf"), "eq": (operator.eq, "biufc"),
           "ne": (operator.ne, "biufc")}
UNARY = {"neg": (operator.neg, "iufc"), "pos": (operator.pos, "iufc"),
         "abs": (operator.abs, "iufc"), "invert": (operator.invert, "biu")}
INPLACE = {"add": operator.iadd, "sub": operator.isub, "mul": operator.imul,
           "truediv": operator.itruediv, "floordiv": operator.ifloordiv,
           "mod": operator.imod, "pow": operator.ipow, "and": operator.iand,
           "or": operator.ior, "xor": operator.ixor, "lshift": operator.ilshift,
           "rshift": operator.irshift}


def operands(d, rng) -> tuple[np.ndarray, np.ndarray]:
    """Two (2, 3) and (3,) arrays of ``d``; second operands of shifts and powers are small and
    non-negative, divisors nonzero for integers (division by zero is tested elsewhere)."""
    if d.kind == "b":
        return rng.integers(0, 2, (2, 3)).astype(bool), rng.integers(0, 2, 3).astype(bool)
    if d.kind in "iu":
        ii = np.iinfo(d.np)
        a = rng.integers(max(int(ii.min), -100), min(int(ii.max), 100), (2, 3), endpoint=True)
        b = rng.integers(1, min(int(ii.max), 7), 3, endpoint=True)
        return a.astype(d.np), b.astype(d.np)
    a, b = rng.uniform(-10, 10, (2, 3)), rng.uniform(0.5, 3, 3)
    if d.kind == "c":
        a, b = a + 1j * rng.uniform(-10, 10, (2, 3)), b + 1j * rng.uniform(-1, 1, 3)
    return a.astype(d.np), b.astype(d.np)


def expected(op, a, b, d):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if op is operator.truediv and d.kind in "biu":
            return (a.astype(np.float64) / b).astype(np.float64)
        return np.asarray(op(a, b))


def check(got, want, d):
    got = np.asarray(got)
    assert got.shape == want.shape
    if want.dtype.kind in "fc":
        rtol = 1e-5 if d in (xp.float32, xp.complex64) else 1e-12
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("d", DTYPES, ids=NAMES)
@settings(max_examples=5)
@given(seed=st.integers(0, 2**32 - 1))
def test_binary_operators(d, seed):
    """Forward and reflected forms, array-array (broadcasting), array-scalar, scalar-array."""
    rng = np.random.default_rng(seed)
    a, b = operands(d, rng)
    x, y = xp.asarray(a), xp.asarray(b)
    s = {"b": True, "i": 3, "u": 3, "f": 1.5, "c": 1.5 - 0.5j}[d.kind]
    outs, wants, what = [], [], []
    for name, (op, kinds) in {**ARITH, **COMPARE}.items():
        if d.kind not in kinds:
            continue
        sa = np.asarray(s, dtype=d.np)
        cases = [(x, y, a, b), (x, s, a, sa), (s, y, sa, b)]
        if name in ("lshift", "rshift", "pow") and d.kind in "iu":
            cases = cases[:2]  # (3 << x) would shift by arbitrary amounts
        for p, q, pn, qn in cases:
            outs.append(op(p, q))
            wants.append(expected(op, pn, qn, d))
            what.append(name)
    xp.materialize(*outs)
    for o, w, n in zip(outs, wants, what):
        if n not in COMPARE and n != "truediv":
            assert o.dtype == d, (n, o.dtype)
        check(o, w.astype(o.dtype.np), d)


@pytest.mark.parametrize("d", DTYPES, ids=NAMES)
def test_unary_operators(d):
    a = operands(d, np.random.default_rng(1))[0]
    x = xp.asarray(a)
    ops = [(n, op) for n, (op, kinds) in UNARY.items() if d.kind in kinds]
    outs = [op(x) for _, op in ops]
    xp.materialize(*outs)
    for (n, op), o in zip(ops, outs):
        want = op(a)
        assert o.dtype.name == want.dtype.name, n
        check(o, want, d)


@pytest.mark.parametrize("d", DTYPES, ids=NAMES)
def test_inplace_operators(d):
    """``x op= y`` rebinds ``x`` (aliases see it), keeps the dtype, accepts scalars and
    broadcasting operands of the same dtype."""
    a, b = operands(d, np.random.default_rng(2))
    s = {"b": True, "i": 2, "u": 2, "f": 1.5, "c": 1.5 - 0.5j}[d.kind]
    results = []
    for name, iop in INPLACE.items():
        if d.kind not in ARITH[name][1] or (name == "truediv" and d.kind in "iu"):
            continue
        x = xp.asarray(a)
        alias = x
        x = iop(x, xp.asarray(b))
        assert x is alias and x.dtype == d and x.shape == a.shape
        x = iop(x, s)
        results.append((name, x, iop))
    xp.materialize(*(r[1] for r in results))
    for _name, x, iop in results:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            w = a.copy()
            w = iop(w, b)
            w = iop(w, np.asarray(s, dtype=d.np))
        check(x, w, d)


def test_inplace_rules():
    i8 = xp.asarray(np.array([1, 2, 3], dtype=np.int8))
    with pytest.raises(TypeError, match="int8"):
        i8 += 1.5
    with pytest.raises(TypeError):
        i8 /= 2  # true division of integers gives float64
    f32 = xp.ones(3, dtype=xp.float32)
    f32 += xp.ones(3, dtype=xp.float64)  # NumPy's same_kind rule: stored as float32
    assert f32.dtype == xp.float32
    np.testing.assert_array_equal(np.asarray(f32), np.full(3, 2.0, np.float32))
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        f32 += xp.ones((2, 3), dtype=xp.float32)
    f32 *= 0.5
    assert f32.dtype == xp.float32
    f64 = xp.ones(3)
    f64 += xp.ones(3, dtype=xp.float32)  # float32 promotes into float64: allowed
    np.testing.assert_array_equal(np.asarray(f64), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(np.asarray(i8), [1, 2, 3])  # failed in-place ops change nothing


def test_operands_of_other_types():
    x = xp.asarray([1.0, 2.0, 3.0])
    n = np.array([1.0, 1.0, 1.0])
    for r in (x + n, n + x, x * np.float64(2), np.float64(2) * x, n == x):
        assert isinstance(r, xp.Array)
    np.testing.assert_array_equal(np.asarray(n - x), [0.0, -1.0, -2.0])
    assert (x == "a") is False and (x != None) is True  # noqa: E711  (the operator is tested)
    for bad in ("a", [1, 2, 3], object()):
        with pytest.raises(TypeError):
            _ = x + bad
    with pytest.raises(TypeError):
        _ = x < 1j


def test_bool_and_integer_semantics():
    t = xp.asarray([True, False, True])
    f = xp.asarray([False, False, True])
    np.testing.assert_array_equal(np.asarray(t & f), [False, False, True])
    np.testing.assert_array_equal(np.asarray(t | f), [True, False, True])
    np.testing.assert_array_equal(np.asarray(t ^ True), [False, True, False])
    np.testing.assert_array_equal(np.asarray(~t), [False, True, False])
    i = xp.asarray(np.array([-7, 7, 0], dtype=np.int16))
    np.testing.assert_array_equal(np.asarray(i // 2), [-4, 3, 0])
    np.testing.assert_array_equal(np.asarray(i % -3), [-1, -2, 0])
    np.testing.assert_array_equal(np.asarray(-7 // i), [1, -1, 0])
    np.testing.assert_array_equal(np.asarray(2 ** xp.asarray([0, 3, 10])), [1, 8, 1024])
    np.testing.assert_array_equal(np.asarray(i >> 1), [-4, 3, 0])
    assert (i < 3).dtype == xp.bool and (i == 3.5).dtype == xp.bool


def test_matmul_operator():
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(12.0).reshape(3, 4)
    x, y = xp.asarray(a), xp.asarray(b)
    np.testing.assert_allclose(np.asarray(x @ y), a @ b)
    np.testing.assert_allclose(np.asarray(a @ y), a @ b)
    z = xp.asarray(np.eye(3))
    z @= xp.asarray(np.eye(3) * 2)
    np.testing.assert_allclose(np.asarray(z), np.eye(3) * 2)
