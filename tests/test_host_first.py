"""First sight on the host (core/hosteval.py, core/ops/host.py): a new graph structure runs with
NumPy when its bits are the compiled graph's; the second time it compiles.

The whole suite runs with ``host_first="check"`` (conftest.py): every graph compiles and, where
the host rules apply, its bits are compared with the host's. Here: the policy with the setting
on, the fallbacks, and a corpus of special values through every rule."""

import itertools
import time

import numpy as np
import pytest

import xla_array as xp
from xla_array.core import hosteval, hostsplit, registry
from xla_array.core.cache import executables
from xla_array.core.ops.reductions import SEQUENTIAL_ROWS, sum_plan
from xla_array.core.ops.structural import OPS

# host runs are for graphs on a CPU device: the CPU is the default device, on a GPU
# machine too
pytestmark = pytest.mark.usefixtures("on_cpu")

_shapes = itertools.count(1001)


def fresh_rows():
    """A matrix shape no other test uses: its graphs are new structures here."""
    return (3, next(_shapes))


@pytest.fixture
def host_first(metrics):
    """The setting on, compiling a structure the second time it comes (no host budget)."""
    with xp.flags.using(host_first=True, host_first_budget=0.0):
        yield metrics


def test_a_new_graph_runs_on_the_host_then_compiles_the_second_time(host_first):
    X = np.random.default_rng(0).standard_normal(fresh_rows())
    x = xp.asarray(X)

    def standardize(a):
        return (a - xp.mean(a, axis=0)) / xp.std(a, axis=0)

    first = np.asarray(standardize(x))
    m = host_first()
    assert (m["host_runs"], m["compiles"]) == (1, 0)
    assert m["host_seconds"] > 0
    second = np.asarray(standardize(x))
    m = host_first()
    assert (m["host_runs"], m["compiles"]) == (1, 1)
    third = np.asarray(standardize(x))
    m = host_first()
    assert (m["host_runs"], m["compiles"], m["cache_hits"]) == (1, 1, 1)
    ref = (X - X.mean(axis=0)) / X.std(axis=0)
    for r in (first, second, third):
        assert r.tobytes() == ref.tobytes()


def test_a_structure_compiles_once_its_host_runs_took_the_budget(metrics):
    x = xp.asarray(np.ones(fresh_rows()))
    with xp.flags.using(host_first=True, host_first_budget=3600.0):
        for _ in range(4):
            np.asarray(x * 2.0 - 1.0)
    m = metrics()
    assert (m["host_runs"], m["compiles"]) == (4, 0)
    with xp.flags.using(host_first=True, host_first_budget=m["host_seconds"] / 2):
        for _ in range(2):
            np.asarray(x * 2.0 - 1.0)
    m = metrics()
    assert (m["host_runs"], m["compiles"], m["cache_hits"]) == (4, 1, 1)


def test_time_in_native_code_is_not_counted_against_the_budget(metrics, monkeypatch):
    """A LAPACK call runs the same routine compiled: its seconds are not what a compile saves,
    so a graph that is mostly one stays on the host past a budget its runs' time exceeds."""
    from xla_array.core.ops import host_linalg
    rule, blas = host_linalg._RULES["gesdd"]
    slow = 0.05

    def slow_gesdd(*args):
        time.sleep(slow)
        return rule(*args)

    monkeypatch.setitem(host_linalg._RULES, "gesdd", (slow_gesdd, blas))
    a = np.random.default_rng(0).standard_normal(fresh_rows())
    x = xp.asarray(a)
    with xp.flags.using(host_first=True, host_first_budget=0.8 * slow):
        for _ in range(3):
            got = np.asarray(xp.linalg.svdvals(x * 2.0 + 1.0))
    np.testing.assert_allclose(got, np.linalg.svd(a * 2.0 + 1.0, compute_uv=False))
    m = metrics()
    assert (m["host_runs"], m["compiles"]) == (3, 0)
    assert m["host_seconds"] >= 3 * slow


def test_the_automatic_budget_rents_until_the_expected_compile():
    floor = hosteval.FLOOR
    asked = []

    def cost(seconds):
        def f():
            asked.append(seconds)
            return seconds
        return f

    with xp.flags.using(host_first_budget="auto"):
        key = hosteval.entry(("budget", fresh_rows()))
        assert hosteval.host_turn(key, cost(3 * floor))      # first sight
        hosteval.spent(key, 0.6 * floor)
        assert hosteval.host_turn(key, cost(3 * floor)) and asked == []  # under the floor
        hosteval.spent(key, 0.6 * floor)
        assert hosteval.host_turn(key, cost(3 * floor)) and asked == [3 * floor]
        hosteval.spent(key, 1.5 * floor)
        assert hosteval.host_turn(key, cost(3 * floor))
        hosteval.spent(key, 0.5 * floor)
        assert not hosteval.host_turn(key, cost(0.0))        # spent its compile
        assert asked == [3 * floor]                          # the cost asked once
        held = hosteval.entry(("budget", fresh_rows()))  # on disk: a load, at the floor
        hosteval.host_turn(held, cost(0.0))
        hosteval.spent(held, 1.2 * floor)
        assert not hosteval.host_turn(held, cost(0.0))
    with xp.flags.using(host_first_budget=2 * floor):        # a number: that budget
        fixed = hosteval.entry(("budget", fresh_rows()))
        hosteval.host_turn(fixed, cost(10.0))
        hosteval.spent(fixed, 1.5 * floor)
        assert hosteval.host_turn(fixed, cost(10.0))
        hosteval.spent(fixed, floor)
        assert not hosteval.host_turn(fixed, cost(10.0))
    assert asked == [3 * floor, 0.0]


def test_the_compile_estimate_grows_with_the_graph_and_follows_the_process(monkeypatch):
    from xla_array.core import compiling
    monkeypatch.setattr(compiling, "_SCALE", [0.0])
    small, large = compiling.compile_estimate(3), compiling.compile_estimate(300)
    assert 0.01 < small < large < 2.0
    for _ in range(30):  # a machine that compiles 4x slower than the prior's
        compiling._observe(10, 4 * compiling.compile_estimate(10) / np.exp(
            compiling._SCALE[0]))
    assert compiling.compile_estimate(3) == pytest.approx(4 * small, rel=0.01)


def test_the_expected_cost_of_an_executable_the_disk_cache_holds_is_a_load(tmp_path):
    from xla_array.core import compiling
    from xla_array.core.planned import plan
    x = xp.asarray(np.ones(fresh_rows()))

    def expected_cost():
        g = plan([(xp.tanh(x) * 3.0 - 1.0)._node])
        return compiling.acquire_estimate(g), compiling.compile_estimate(len(g.order))

    with xp.flags.using(cache_dir=str(tmp_path / "cache"), host_first=False):
        cost, compile_cost = expected_cost()
        assert cost == compile_cost > 0
        np.asarray(xp.tanh(x) * 3.0 - 1.0)  # compiled, and stored on disk
        assert expected_cost()[0] == 0.0


def test_gather_indices_in_range_are_taken_as_they_are():
    """``_clamped``: indices inside the axis skip the wrap and the clip; any outside it, and
    only then, are wrapped once and clamped, as ``stablehlo.gather`` does."""
    from xla_array.core.ops.host_indexing import _clamped
    rng = np.random.default_rng(3)
    inside = rng.integers(0, 50, 1000)
    assert _clamped(inside, 50) is inside
    for idx in (rng.integers(-80, 80, 1000), np.array([0, 49, 50]), np.array([-1, 3]),
                np.array([7, 300], dtype=np.uint16), np.array([], dtype=np.int64)):
        want = np.clip(np.where(idx.astype(np.int64) < 0, idx.astype(np.int64) + 50,
                                idx.astype(np.int64)), 0, 49)
        np.testing.assert_array_equal(_clamped(idx, 50), want)


def test_host_results_are_device_buffers_of_their_own(host_first):
    from xla_array.core import backend
    X = np.arange(12.0 * fresh_rows()[1]).reshape(-1, 4)
    x = xp.asarray(X)
    y = xp.reshape(x, (4, -1)) + 0.0  # ... and a pure reshape, whose host value views x's
    z = xp.reshape(x, (2, -1))
    for r in (y, z):
        xp.block_until_ready(r)
    assert host_first()["host_runs"] >= 1
    mem = [backend.to_numpy(a._node.buffer) for a in (x, y, z)]
    assert not np.shares_memory(mem[0], mem[1]) and not np.shares_memory(mem[0], mem[2])
    np.testing.assert_array_equal(np.asarray(z), X.reshape(2, -1))
    assert y.device == x.device


def test_large_host_results_become_device_buffers_without_a_copy(host_first, monkeypatch):
    """A host run computes with the graph core's 64-byte aligned NumPy memory: each result of
    64 KiB or more is its device buffer's memory (XLA aliases it), and NumPy's handler is the
    default again after the run, a run that falls back to compiling included."""
    from numpy._core import multiarray

    from xla_array.core import backend, graph
    if not graph.NATIVE:
        pytest.skip("the aligned handler is the graph core's (XLA_ARRAY_NATIVE=0)")
    seen = []
    real = hosteval.evaluate

    def recording(*args, **kwargs):
        values = real(*args, **kwargs)
        seen.extend(values)
        return values

    monkeypatch.setattr(hosteval, "evaluate", recording)
    X = np.random.default_rng(3).standard_normal((40, 400 + next(_shapes) % 7))
    x = xp.asarray(X)
    y = x * 2.0 - 1.0
    xp.block_until_ready(y)
    assert host_first()["host_runs"] == 1
    assert len(seen) == 1 and seen[0].nbytes >= 1 << 16
    assert multiarray.get_handler_name(seen[0]) == "xla_array_aligned64"
    assert backend.to_numpy(y._node.buffer).ctypes.data == seen[0].ctypes.data
    np.testing.assert_array_equal(np.asarray(y), X * 2.0 - 1.0)
    assert multiarray.get_handler_name() == "default_allocator"
    tiny = np.full(x.shape, 1e-310)  # subnormal: the host refuses, the graph compiles
    np.asarray(xp.asarray(tiny) * 3.0)
    assert host_first()["compiles"] == 1
    assert multiarray.get_handler_name() == "default_allocator"


def test_a_structure_run_again_on_the_host_takes_its_rules_from_the_first_run(metrics,
                                                                              monkeypatch):
    """``hosteval.eligible`` keeps a structure's host rules (its kernels' operands by
    position): later runs of the structure compute with their own operands, and a changed
    setting makes the rules be found anew."""
    from xla_array.kernels import blas, ufunc
    if not (blas.available() and ufunc.available()):
        pytest.skip("no native kernels: the product and exp compile (no host rule)")
    found = []
    real = hosteval._rules

    def counting(order, device, max_bytes):
        if max_bytes is not None:  # (``exact``, asked when a graph compiles, has none)
            found.append(1)
        return real(order, device, max_bytes)

    monkeypatch.setattr(hosteval, "_rules", counting)
    rng = np.random.default_rng(5)
    n = 40 + next(_shapes) % 5

    def f(a, b):  # a matrix product and exp: two kernels, operands in a given order
        return xp.exp(a @ b - 1.0) + xp.sum(b)

    with xp.flags.using(host_first=True, host_first_budget=3600.0):
        for _ in range(3):
            A, B = rng.standard_normal((n, 3)), rng.standard_normal((3, n))
            got = np.asarray(f(xp.asarray(A), xp.asarray(B)))
            np.testing.assert_allclose(got, np.exp(A @ B - 1.0) + B.sum(), rtol=1e-13)
        assert metrics()["host_runs"] == 3 and len(found) == 1
        with xp.flags.using(ufunc=False):  # XLA's exp: no host rule, the graph compiles
            np.asarray(f(xp.asarray(A), xp.asarray(B)))
        assert len(found) == 2 and metrics()["compiles"] == 1
        got = np.asarray(f(xp.asarray(B.T), xp.asarray(A.T)))
        np.testing.assert_allclose(got, np.exp(B.T @ A.T - 1.0) + A.sum(), rtol=1e-13)
        assert len(found) == 3 and metrics()["host_runs"] == 4


def test_the_setting_off_compiles_at_once(metrics):
    x = xp.asarray(np.ones(fresh_rows()))
    with xp.flags.using(host_first=False):
        np.asarray(x * 2.0 + 1.0)
    m = metrics()
    assert (m["host_runs"], m["compiles"]) == (0, 1)


CASES = {
    # complex arithmetic (a complex product: XLA's rounds otherwise than NumPy's)
    "complex": lambda a: xp.real(xp.fft.rfft(a, axis=1) * xp.fft.rfft(a, axis=1)) + 1.0,
    "subnormal": lambda a: a * 1.0,
    "float_to_int_nan": lambda a: xp.astype(a * 2.0, xp.int32),
    "fast_math": lambda a: xp.sum(a, axis=1) / 3.0,
    "zero_max": lambda a: xp.max(a, axis=0),
    "float16": lambda a: a + a,
    "big": lambda a: a + 1.0,
}


@pytest.mark.parametrize("case", ["complex", "subnormal", "float_to_int_nan", "fast_math",
                                  "zero_max", "float16", "big"])
def test_graphs_the_host_cannot_match_compile(host_first, case):
    shape = fresh_rows()
    X = np.random.default_rng(1).standard_normal(shape)
    data, f = X, CASES[case]
    if case == "subnormal":  # compiled code flushes it to zero; NumPy would keep it
        data = X.copy()
        data[0, 0] = 1e-310
    elif case == "float_to_int_nan":
        data = X.copy()
        data[0, 0] = np.nan
    elif case == "zero_max":  # the sign of a zero max follows XLA's order
        data = np.zeros(shape)
        data[1, 1] = -0.0
    elif case == "float16":
        data = X.astype(np.float16)
    elif case == "big":
        data = np.ones((hosteval.MAX_BYTES // 8 + 1,))
    x = xp.asarray(data)
    with xp.flags.using(fast_math=case == "fast_math"):
        first = np.asarray(f(x))
        m = host_first()
        assert (m["host_runs"], m["compiles"]) == (0, 1)
        with xp.flags.using(host_first=False):
            again = np.asarray(f(x))
    assert first.tobytes() == again.tobytes()
    if case == "subnormal":
        assert first[0, 0] == 0.0  # flushed, as every compiled graph does


# ------------------------------------------------------------------- bits: host vs compiled

def _specials(dtype):
    """Values where rounding rules show: signed zeros, infinities, NaN, extremes, ties."""
    d = np.dtype(dtype)
    if d.kind == "f":  # (none whose products or quotients are subnormal: those compile)
        big = 1e300 if d.itemsize == 8 else 1e30
        return np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, np.inf, -np.inf,
                         np.nan, big, -big, 1e-5, 1 / 3, 1e10, 3.0, 7.0, -0.1], dtype=d)
    if d.kind == "b":
        return np.array([True, False] * 10)
    i = np.iinfo(d)
    return np.array([0, 1, 2, 3, 7, i.max, i.min, i.max - 1, i.min + 1, 100, 5, 9, 11, 13, 17,
                     19, 23, 29, 31, 37], dtype=d)


_UNARY = ["negative", "positive", "abs", "square", "sqrt", "reciprocal", "floor", "ceil",
          "trunc", "round", "sign", "isfinite", "isinf", "isnan", "logical_not"]
_BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "equal", "not_equal",
           "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
           "logical_xor"]
_INTEGER = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert"]


def _applies(name, dtype):
    d = np.dtype(dtype)
    floats = ("sqrt", "reciprocal", "divide")
    if name in _INTEGER:
        return d.kind in "biu"
    if name in floats:
        return d.kind == "f"
    if name in ("negative", "positive", "abs", "square", "sign", "floor", "ceil", "trunc",
                "round", "subtract", "maximum", "minimum", "less", "less_equal", "greater",
                "greater_equal"):
        return d.kind != "b" or name in ("maximum", "minimum", "less", "greater", "less_equal",
                                         "greater_equal", "floor", "ceil", "trunc", "round")
    return True


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int8", "uint32", "bool"])
def test_every_elementwise_rule_matches_the_compiled_bits(metrics, dtype):
    """Each op on every pair of special values (host_first='check' compares the bits)."""
    v = _specials(dtype)
    a = xp.asarray(np.repeat(v, len(v)))
    b = xp.asarray(np.tile(v, len(v)))
    checked = 0
    for name in _UNARY + _BINARY + _INTEGER:
        if not _applies(name, dtype):
            continue
        f = getattr(xp, name)
        try:
            r = f(a) if name in _UNARY or name == "bitwise_invert" else f(a, b)
        except TypeError:
            continue  # a dtype the op does not take
        checked += r._node.buffer is None  # (positive(x), floor of integers: x itself)
        np.asarray(r)
    m = metrics()
    assert m["host_checks"] == checked > 5  # each compared, none differed


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint8", "bool"])
def test_casts_match_the_compiled_bits(metrics, dtype):
    v = _specials(dtype)
    x = xp.asarray(v)
    for to in (xp.float64, xp.float32, xp.int64, xp.int16, xp.uint8, xp.bool):
        if np.dtype(str(to)) == v.dtype:
            continue
        before = metrics()["host_checks"]
        r = np.asarray(xp.astype(x, to))
        # NaN, infinities and values off an integer's range: XLA's cast saturates, NumPy's is
        # undefined there; such a graph compiles without a check
        off = v.dtype.kind == "f" and r.dtype.kind in "iu"
        assert metrics()["host_checks"] == before + (not off)
    if v.dtype.kind == "f":  # in range, the cast to integers is checked
        before = metrics()["host_checks"]
        np.asarray(xp.astype(xp.asarray(np.array([-3.7, -0.0, 0.9, 126.5], dtype=v.dtype)),
                             xp.int8))
        assert metrics()["host_checks"] == before + 1


@pytest.mark.parametrize("shape,axes", [((7,), None), ((200,), None), ((1000,), None),
                                        ((3, 129), 1), ((40, 5), 0), ((17, 9, 3), (0, 2)),
                                        ((2, 300), None), ((5, 1, 8), 1), ((1000, 3), 1),
                                        ((100, 2, 3), (1, 2)), ((70, 1, 7), (2,))])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_reductions_match_the_compiled_bits(metrics, shape, axes, dtype):
    rng = np.random.default_rng(sum(shape))
    X = (rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 6, shape)).astype(dtype) \
        if dtype.startswith("float") else rng.integers(-2**40, 2**40, shape).astype(dtype)
    x = xp.asarray(X)
    outs = [xp.sum(x, axis=axes), xp.mean(xp.astype(x, xp.float64), axis=axes),
            xp.max(x, axis=axes), xp.min(x, axis=axes), xp.any(x > 0, axis=axes),
            xp.all(x > -1e30, axis=axes), xp.argmax(xp.reshape(x, (-1,)))]
    if dtype.startswith("float"):
        outs.append(xp.std(x, axis=axes))
    for r in outs:
        np.asarray(r)
    full = tuple(range(len(shape))) if axes is None else np.atleast_1d(axes)
    xla_order = sum_plan(shape, tuple(int(a) % len(shape) for a in full))[1] > \
        SEQUENTIAL_ROWS and not hosteval._column_kernel()  # XLA_ARRAY_NATIVE=0: XLA's order
    # (float sum, mean and std then compile, unchecked)
    expected = len(outs) - (0 if not xla_order else 3 if dtype.startswith("float") else 1)
    assert metrics()["host_checks"] >= expected
    if not xla_order or not dtype.startswith("float"):
        np.testing.assert_array_equal(np.asarray(outs[0]), X.sum(axis=axes))


def test_layout_ops_match_the_compiled_bits(metrics):
    X = np.arange(60.0).reshape(3, 4, 5) - 30.0
    x = xp.asarray(X)
    outs = [xp.permute_dims(x, (2, 0, 1)), x[1:, ::2, ::-1], xp.concat([x, x * 2.0], axis=1),
            xp.broadcast_to(x[:, :1, :], (3, 4, 5)) + 1.0, xp.flip(x, axis=(0, 2)),
            xp.where(x > 0, x, -x), xp.reshape(x, (12, 5)).T, xp.arange(7) * 3,
            xp.concat([xp.astype(x[0], xp.int32), xp.ones((4, 5), dtype=xp.int64)])]
    for r in outs:
        np.asarray(r)
    assert metrics()["host_checks"] >= len(outs)


def test_the_check_mode_catches_a_wrong_rule(monkeypatch):
    monkeypatch.setattr(OPS["add"], "host",
                        lambda n, vals: np.asarray(vals[0] + vals[1] + 1, dtype=n.dtype.np))
    x = xp.asarray(np.arange(5.0 + next(_shapes) % 7))
    with xp.flags.using(host_first="check"):
        with pytest.raises(AssertionError, match="host_first check.*add"):
            np.asarray(x + x)


def checked_each(metrics, outs):
    """Compute each output alone: each graph's bits were compared with the host's."""
    for o in outs:
        if o._node.buffer is not None:  # computed beside an earlier one
            continue
        before = metrics()["host_checks"]
        np.asarray(o)
        assert metrics()["host_checks"] == before + 1, o._node


def _with_ties(dtype):
    v = np.array([3.0, -0.0, 0.0, np.nan, 1.0, 3.0, -np.inf, 2.0, np.nan, -1.0, 0.0, 1.0] * 3)
    return v.astype(dtype) if np.dtype(dtype).kind == "f" else \
        np.nan_to_num(v, nan=7, neginf=-5).astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint8", "int16"])
def test_sorting_and_searching_match_the_compiled_bits(metrics, dtype):
    V = _with_ties(dtype)
    v = xp.asarray(V)
    m2 = xp.reshape(v, (4, 9))
    outs = [xp.sort(v), xp.sort(v, descending=True), xp.argsort(v), xp.sort(m2, axis=0),
            xp.argsort(v, descending=True), xp.argsort(m2, axis=1, descending=True),
            xp.unique_values(v),
            *xp.unique_counts(v), *xp.unique_inverse(v), *xp.unique_all(v),
            xp.searchsorted(xp.sort(v), v), xp.searchsorted(xp.sort(v), v, side="right"),
            xp.searchsorted(v, v[:5]),  # (unsorted: the bisection's own answer)
            xp.take_along_axis(m2, xp.argsort(m2, axis=1)[:, :3], axis=1)]
    checked_each(metrics, outs)
    np.testing.assert_array_equal(np.asarray(outs[0]), np.sort(V))
    # an unstable sort of 64-bit keys may order equal keys either way: compiled, unchecked
    # where there are ties, checked where there are none
    before = metrics()["host_checks"]
    np.asarray(xp.argsort(m2, axis=0, stable=False))
    np.asarray(xp.argsort(xp.arange(12.0) * -1.0, stable=False))
    assert metrics()["host_checks"] >= before + 1
    np.testing.assert_array_equal(np.asarray(outs[2]), np.argsort(V, kind="stable"))


def test_indexing_matches_the_compiled_bits_and_raises_the_same(metrics):
    X = np.arange(60.0).reshape(6, 10) - 7.5
    x = xp.asarray(X)
    idx = xp.asarray(np.array([0, -1, 3, 5, -6, 2]))
    outs = [x[idx], x[:, idx], x[idx, idx], x[x > 3.0], xp.take(x, idx, axis=1),
            x[xp.asarray(np.array([1, 4], dtype=np.uint16))], xp.cumulative_sum(idx),
            xp.cumulative_prod(xp.asarray(np.arange(1, 7)), include_initial=True)]
    checked_each(metrics, outs)
    i = [0, -1, 3, 5, -6, 2]
    np.testing.assert_array_equal(np.asarray(outs[2]), X[i, i])
    bad = xp.asarray(np.array([1, 9]))
    for mode in (True, False):  # on the host at first sight, and compiled
        with xp.flags.using(host_first=mode):
            with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0"):
                np.asarray(x[bad])


def test_integer_array_assignments_match_the_compiled_bits(metrics):
    X = np.arange(60.0).reshape(6, 10) - 7.5
    i, j = np.array([0, -1, 3]), np.array([2, 5, 9])
    x = xp.asarray(X)
    a, b, c = (xp.asarray(X) for _ in range(3))
    a[xp.asarray(i)] = -1.0
    b[:, xp.asarray(j)] = xp.asarray(np.arange(18.0).reshape(6, 3))
    c[xp.asarray(i), xp.asarray(j)] = xp.asarray(np.array([7.0, 8.0, 9.0]))
    outs = [a + 0.0, b * 1.0, c - x]
    checked_each(metrics, outs)  # (a scatter's host rule ran beside each compiled run)
    want = X.copy()
    want[i, j] = [7.0, 8.0, 9.0]
    np.testing.assert_array_equal(np.asarray(outs[2]), want - X)
    want = X.copy()
    want[:, j] = np.arange(18.0).reshape(6, 3)
    np.testing.assert_array_equal(np.asarray(outs[1]), want)


def test_a_zero_max_of_one_sign_runs_on_the_host(host_first):
    data = np.zeros(fresh_rows())
    data[1] = -0.0  # (zeros of both signs in one row: the case "zero_max" above)
    first = np.asarray(xp.max(xp.asarray(data), axis=1))
    m = host_first()
    assert (m["host_runs"], m["compiles"]) == (1, 0)
    assert np.signbit(first).tolist() == [False, True, False]
    with xp.flags.using(host_first=False):
        assert np.asarray(xp.max(xp.asarray(data), axis=1)).tobytes() == first.tobytes()


def test_zero_maxima_and_minima_of_short_rows_as_compiled(host_first):
    # many rows of 3 (reduced column by column on the host): rows of zeros of one sign run on
    # the host with that sign; a row holding zeros of both signs runs compiled (XLA's order)
    one = np.zeros((next(_shapes), 3))
    one[1::3] = -0.0
    mixed = np.zeros((next(_shapes), 3))  # (another shape: a structure not compiled yet)
    mixed[1::3] = -0.0
    mixed[2] = [-0.0, 0.0, -0.0]
    for data, on_host in ((one, 1), (mixed, 0)):
        for f in (xp.max, xp.min):
            before = host_first()["host_runs"]
            got = np.asarray(f(xp.asarray(data), axis=1))
            assert host_first()["host_runs"] - before == on_host
            with xp.flags.using(host_first=False):
                want = np.asarray(f(xp.asarray(data), axis=1))
            assert got.tobytes() == want.tobytes()
            assert np.signbit(got[1::3]).all() and not np.signbit(got[::3]).any()


def test_a_first_sight_index_error_is_the_compiled_one(host_first):
    x = xp.asarray(np.arange(float(next(_shapes))))
    bad = xp.asarray(np.array([1, 10**6 - 1])) + 1  # (computed: checked when the graph runs)
    messages = []
    for _ in range(2):  # on the host, then compiled
        with pytest.raises(IndexError, match="index 1000000 is out of bounds for axis 0") as e:
            np.asarray(x[bad] * 2.0)
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    m = host_first()
    assert (m["host_runs"], m["compiles"]) == (0, 1)


def test_float_cumulative_sums_run_on_the_host_with_the_scan_kernel(metrics):
    """NumPy's order is the scan kernel's (kernels/scan.py): with it, float scans are host
    rules too; without it (XLA_ARRAY_NATIVE=0), XLA's scan compiles, unchecked."""
    X = np.random.default_rng(4).standard_normal((40, 6)) * 1e3
    x = xp.asarray(X)
    outs = [xp.cumulative_sum(x, axis=0), xp.cumulative_prod(x[:5] / 1e3, axis=1),
            xp.cumulative_sum(xp.astype(x, xp.float32), axis=1, include_initial=True)]
    kernel = registry.kind_in_use("scan")
    for o in outs:
        before = metrics()["host_checks"]
        np.asarray(o)
        assert metrics()["host_checks"] == before + kernel
    if kernel:
        np.testing.assert_array_equal(np.asarray(outs[0]), np.cumsum(X, axis=0))


def test_a_failing_host_rule_compiles_instead(host_first, monkeypatch):
    def broken(n, vals):
        raise ValueError("a bug in a rule")
    monkeypatch.setattr(OPS["subtract"], "host", broken)
    X = np.arange(float(next(_shapes)))
    got = np.asarray(xp.asarray(X) - 1.5)
    np.testing.assert_array_equal(got, X - 1.5)
    m = host_first()
    assert (m["host_runs"], m["compiles"]) == (0, 1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lapack_graphs_run_on_the_host_with_the_compiled_bits(host_first, dtype):
    """solve, svd, eigh, qr and cholesky: the first run calls SciPy's wrappers of the LAPACK
    routines jaxlib's kernels call (ops/host_linalg.py), the second the compiled kernels;
    the bits are the same."""
    rng = np.random.default_rng(3)
    n = next(_shapes) % 7 + 3  # (a size the other tests do not compile)
    a = rng.standard_normal((2, n + 5, n)).astype(dtype)
    sq = rng.standard_normal((2, n, n)).astype(dtype)
    spd = sq @ np.swapaxes(sq, -1, -2) + n * np.eye(n, dtype=dtype)
    b = rng.standard_normal((2, n, 2)).astype(dtype)
    cases = [lambda: xp.linalg.svd(xp.asarray(a), full_matrices=False),
             lambda: xp.linalg.svd(xp.asarray(a[0]), full_matrices=False),  # (LAPACK's arrays)
             lambda: xp.linalg.svd(xp.asarray(a[1].T)),
             lambda: xp.linalg.svdvals(xp.asarray(a)),
             lambda: xp.linalg.eigh(xp.asarray(spd)),
             lambda: xp.linalg.qr(xp.asarray(a)),
             lambda: (xp.linalg.cholesky(xp.asarray(spd)),),
             lambda: (xp.linalg.solve(xp.asarray(sq), xp.asarray(b)),),
             lambda: (xp.linalg.inv(xp.asarray(sq)),)]
    for case in cases:
        before = host_first()
        first = [np.asarray(r) for r in case()]
        mid = host_first()
        second = [np.asarray(r) for r in case()]
        after = host_first()
        assert mid["host_runs"] > before["host_runs"] and mid["compiles"] == before["compiles"]
        assert after["compiles"] > mid["compiles"]
        for f, s in zip(first, second):
            assert f.tobytes() == s.tobytes()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m", [2, 3, 5, 7])
def test_short_row_reductions_are_numpys_and_the_compiled_bits(metrics, dtype, m):
    """Sums, maxima and minima over many short rows: the host rule adds the columns as
    vectors (ops/host.py, ``_short_rows``) in NumPy's order; with specials (zeros of one sign
    per row, infinities, NaN, values of every magnitude) the bits are NumPy's and, in the
    check mode, the compiled graph's."""
    from xla_array.core.ops import host as host_rules

    rng = np.random.default_rng(m)
    X = (rng.standard_normal((300, m)) * 10.0 ** rng.integers(-20, 20, (300, m))).astype(dtype)
    X[:10] = -0.0
    X[10:20] = 0.0
    X[20:30, 0] = np.inf
    X[30:40, -1] = -np.inf
    X[40:45, 1] = np.nan
    assert host_rules._short_rows(X, (1,)) is not None  # (the path under test)
    x = xp.asarray(X)
    before = metrics()["host_checks"]
    outs = [xp.sum(x, axis=1), xp.max(x, axis=1), xp.min(x, axis=1),
            xp.sum(xp.reshape(x, (100, 3, m)), axis=2)]
    got = [np.asarray(r) for r in outs]
    want = [X.sum(axis=1), X.max(axis=1), X.min(axis=1), X.reshape(100, 3, m).sum(axis=2)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        assert g[~np.isnan(w)].tobytes() == w[~np.isnan(w)].tobytes()
    assert metrics()["host_checks"] == before + len(outs)


def test_a_buffer_is_scanned_for_subnormals_once(host_first, monkeypatch):
    """The leaves of host runs are scanned once (``hosteval.mark_clean``: buffers never
    change), the host's own results never (their values were scanned when computed); a
    buffer holding a subnormal is found at every run and its graphs compile."""
    from xla_array.core import hosteval as he

    scanned = []

    def counting(real):
        def scan(v):
            scanned.append(v.size)
            return real(v)
        return scan

    monkeypatch.setattr(he, "has_subnormal", counting(he.has_subnormal))
    if he._FAST_SCAN is not None:  # (the graph core's scan, which results go to directly)
        monkeypatch.setattr(he, "_FAST_SCAN", counting(he._FAST_SCAN))
    shape = fresh_rows()
    X = np.random.default_rng(7).standard_normal(shape)
    x = xp.asarray(X)
    y = x * 3.0
    np.asarray(y)  # host run: x scanned, the product scanned
    assert scanned.count(X.size) == 2
    del scanned[:]
    np.asarray(xp.sqrt(xp.abs(x)) + y)  # a new structure reading both
    assert scanned.count(X.size) == 2  # the root and the sum; neither leaf again, nor abs
    del scanned[:]                     # (its values are its operand's, up to sign)
    np.asarray(xp.maximum(-y, xp.floor(x)) * 0.5)
    assert scanned.count(X.size) == 1  # only the product computes new values
    m = host_first()
    assert m["host_runs"] == 3 and m["compiles"] == 0
    bad = X.copy()
    bad[0, 0] = 1e-310
    z = xp.asarray(bad)
    np.asarray(z * 2.0)  # two structures: each would run on the host but for z
    np.asarray(xp.abs(z) - 1.0)
    m = host_first()
    assert m["host_runs"] == 3 and m["compiles"] == 2


def test_a_host_run_drops_each_value_after_its_last_use(host_first):
    """A chain of steps over 8 MB values holds a few of them at a time, as the NumPy code it
    stands for would, not every intermediate till the end (new memory is what large host
    runs pay for)."""
    import tracemalloc

    X = np.random.default_rng(8).standard_normal((1000, 1000 + next(_shapes)))
    x = xp.asarray(X)
    y, ref = x, X
    for k in range(10):
        y = y * 1.5 + float(k)
        ref = ref * 1.5 + float(k)
    tracemalloc.start()
    try:
        out = np.asarray(y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert host_first()["host_runs"] == 1
    assert out.tobytes() == ref.tobytes()
    assert peak < 4 * X.nbytes, peak / X.nbytes  # (20 values computed; 2-3 alive at a time)


@pytest.fixture
def small_tails(monkeypatch):
    """Graphs with a value above 1 KiB compile (the host tier's bound, lowered), without their
    tail of values of at most 512 bytes (``hostsplit.tail``)."""
    monkeypatch.setattr(hosteval, "MAX_BYTES", 1024)
    monkeypatch.setattr(hostsplit, "TAIL_MIN_BYTES", 1024)
    monkeypatch.setattr(hostsplit, "TAIL_BYTES", 512)


def test_a_compiled_graph_leaves_its_small_tail_to_the_host(host_first, small_tails,
                                                            monkeypatch):
    """What a library does after a decomposition (singular values scaled, their ratios, the
    components signed) compiles as a kernel each; NumPy computes it in microseconds. The
    graph compiles without it, and it runs as a graph of its own over the values the
    compiled part computed, on the host first: the bits of the whole graph compiled."""
    X = np.random.default_rng(7).standard_normal(fresh_rows()).T.copy()  # (n, 3)
    n = X.shape[0]

    def fit(x):
        c = x - xp.mean(x, axis=0)
        u, s, vt = xp.linalg.svd(c, full_matrices=False)
        ev = s * s / (n - 1)
        ratio = ev / xp.sum(ev)
        signs = xp.sign(vt[:, :1])
        return c * 2.0, ratio, vt * signs, xp.sqrt(ev[1:]) + 1.0

    x = xp.asarray(X)
    split = fit(x)
    xp.materialize(*split)
    m = host_first()
    assert (m["compiles"], m["host_runs"]) == (1, 1)
    split = [np.asarray(v) for v in split]
    monkeypatch.setattr(hostsplit, "TAIL_MIN_NODES", 10 ** 9)  # the same graph, whole
    executables.clear()
    whole = fit(x)
    xp.materialize(*whole)
    m = host_first()
    assert (m["compiles"], m["host_runs"]) == (2, 1)
    for a, b in zip(split, whole):
        assert a.tobytes() == np.asarray(b).tobytes()
    np.testing.assert_allclose(split[1], np.linalg.svd(X - X.mean(axis=0))[1] ** 2 /
                               np.sum(np.linalg.svd(X - X.mean(axis=0))[1] ** 2), rtol=1e-12)


def test_a_tail_the_host_cannot_match_compiles(host_first, small_tails):
    """A max over zeros of both signs (whose sign follows XLA's order): the tail compiles as a
    graph of its own."""
    X = np.random.default_rng(8).standard_normal(fresh_rows()).T.copy()
    X[:, 0] = np.abs(X[:, 0])
    X[:, 1] = -np.abs(X[:, 1])  # column sums of both signs
    x = xp.asarray(X)
    col = xp.sum(x, axis=0)
    big = x * 2.0
    t = xp.max(col * 0.0) + xp.min(col) * 2.0 + xp.max(col)
    xp.materialize(big, t)
    m = host_first()
    assert (m["compiles"], m["host_runs"]) == (2, 0)
    s = np.asarray(col)  # (NumPy's sums with the column-sum kernel, XLA's without it)
    assert float(t) == 0.0 + s.min() * 2.0 + s.max()
    assert np.asarray(big).tobytes() == (X * 2.0).tobytes()


def _standardize(a):
    return (a - xp.mean(a, axis=0)) / xp.std(a, axis=0)


def test_a_spent_budget_compiles_behind_the_host_runs(metrics):
    """Once a structure's host runs have taken the budget, it compiles on the background
    thread while the host goes on running it; once the executable is in the cache the runs
    use it. The bits are the same whichever ran."""
    X = np.random.default_rng(3).standard_normal(fresh_rows())
    x = xp.asarray(X)
    ref = ((X - X.mean(axis=0)) / X.std(axis=0)).tobytes()
    with xp.flags.using(host_first=True, host_first_budget=0.0, compile_behind=True):
        assert np.asarray(_standardize(x)).tobytes() == ref  # on the host
        assert np.asarray(_standardize(x)).tobytes() == ref  # queued; the host runs it
        m = metrics()
        assert m["host_runs"] == 2
        assert xp.debug.settle(60)
        m = metrics()
        assert (m["compiles"], m["compiles_behind"]) == (1, 1)
        assert np.asarray(_standardize(x)).tobytes() == ref  # the executable
        m = metrics()
        assert (m["host_runs"], m["compiles"], m["cache_hits"]) == (2, 1, 1)


@pytest.fixture
def held_compiles(monkeypatch):
    """Compiles on the background thread wait until the event this returns is set."""
    import threading

    from xla_array.core import backend
    release = threading.Event()
    compile_ = backend.compile

    def held(*a, **k):
        if threading.current_thread().name == "xla_array-recompile":
            release.wait(60)
        return compile_(*a, **k)

    monkeypatch.setattr(backend, "compile", held)
    yield release
    release.set()


def test_host_runs_go_on_while_the_compile_runs_behind(metrics, held_compiles):
    """A compile held up on the background thread: the graph keeps running on the host (one
    compile queued, never a second); released, the next run uses its executable."""
    X = np.random.default_rng(4).standard_normal(fresh_rows())
    x = xp.asarray(X)
    ref = ((X - X.mean(axis=0)) / X.std(axis=0)).tobytes()
    with xp.flags.using(host_first=True, host_first_budget=0.0, compile_behind=True):
        for _ in range(5):
            assert np.asarray(_standardize(x)).tobytes() == ref
        m = metrics()
        assert (m["host_runs"], m["compiles"]) == (5, 0)
        held_compiles.set()
        assert xp.debug.settle(60)
        assert np.asarray(_standardize(x)).tobytes() == ref
    m = metrics()
    assert (m["host_runs"], m["compiles"], m["compiles_behind"], m["cache_hits"]) == \
        (5, 1, 1, 1)


def test_a_compile_behind_under_changed_settings_is_not_used(metrics, held_compiles):
    """Settings that drop the executables in memory (fast_math, opt_level) changed while a
    compile ran behind: its executable, made under the old settings, is not put in."""
    x = xp.asarray(np.ones(fresh_rows()))
    with xp.flags.using(host_first=True, host_first_budget=0.0, compile_behind=True):
        for _ in range(2):
            np.asarray(x * 3.0 + 1.0)
        executables.clear()  # (what changing fast_math or opt_level does)
        held_compiles.set()
        assert xp.debug.settle(60)
        assert metrics()["compiles_behind"] == 1
        with xp.flags.using(compile_behind=False):
            np.testing.assert_array_equal(np.asarray(x * 3.0 + 1.0), 4.0)
    m = metrics()
    assert (m["compiles"], m["cache_hits"]) == (2, 0)  # compiled again, in the run


EXIT_WHILE_COMPILING = """
import numpy as np, xla_array as xp
xp.flags.set(host_first=True, host_first_budget=0.0, compile_behind=True)
x = xp.asarray(np.ones((50, 50)))
for _ in range(2):
    y = x
    for i in range(40):
        y = xp.sin(y) * 1.1 + xp.cos(y)
    float(xp.sum(y))
# queued or compiling: the graph ran on the host (without the native kernels, sin has no
# host rule: the graph compiled in the first run and there is nothing in flight)
print("in flight" if xp.debug.metrics()["compiles"] == 0 else "compiled")
print("exiting")
"""


def test_exit_while_a_compile_runs_behind_is_clean():
    """A process that exits while XLA compiles on the background thread waits for that
    compile and ends with status 0 (it died of a segmentation fault in 4 runs of 5)."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, XLA_ARRAY_CACHE_DIR="off")
    for k in ("XLA_ARRAY_HOST_FIRST", "XLA_ARRAY_COMPILE_BEHIND"):
        env.pop(k, None)
    flights = 0
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", EXIT_WHILE_COMPILING], env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip().endswith("exiting")
        flights += "in flight" in out.stdout
    if not flights:
        pytest.skip("no compile was in flight at exit (without the native kernels)")


def test_held_small_values_come_first_so_later_calls_share_the_executable(host_first,
                                                                          monkeypatch):
    """A graph that compiles (here: a value above the host's size bound) and computes a value a
    library caches from small inputs alone (LogisticRegression's encoded labels): the host
    computes that value first, and the rest compiles with the structure of the later calls,
    where the value is a buffer: one compile for both. The bits are the one graph's."""
    monkeypatch.setattr(hosteval, "MAX_BYTES", 4096)
    rng = np.random.default_rng(5)
    X = rng.standard_normal((60, fresh_rows()[1] % 7 + 20))
    labels = rng.integers(0, 3, 60)
    w0 = rng.standard_normal(X.shape[1])

    def fit(x, y, w):
        cache = {}
        out = []
        for k in range(3):
            if "t" not in cache:  # computed in the first call's graph, then held
                cache["t"] = xp.astype(y == 2, xp.float64) * 2.0 - 1.0
            r = (x + 0.0) @ (w * (k + 1.0)) - cache["t"]  # (x + 0.0: above the bound)
            out.append(float(xp.sum(r * r)))
        return out

    x, y, w = xp.asarray(X), xp.asarray(labels), xp.asarray(w0)
    got = fit(x, y, w)
    m = host_first()
    assert m["compiles"] == 1 and m["cache_hits"] == 2 and m["host_runs"] == 1
    with xp.flags.using(host_first=False):  # one graph, compiled
        want = fit(x, y, w)
    assert got == want
    t = (labels == 2) * 2.0 - 1.0
    np.testing.assert_allclose(got, [((X @ (w0 * k) - t) ** 2).sum() for k in (1, 2, 3)],
                               rtol=1e-12)


def test_held_first_takes_values_of_small_integer_inputs_only(host_first, monkeypatch):
    """Held values computed from a large buffer or from float buffers (a model's parameters,
    new at every step) stay in the graph; one from a small integer buffer comes first. A
    materialized root the host computed first is not computed again."""
    monkeypatch.setattr(hosteval, "MAX_BYTES", 4096)
    rng = np.random.default_rng(6)
    X = rng.standard_normal((40, fresh_rows()[1] % 5 + 30))
    v = rng.standard_normal(5)
    k = rng.integers(0, 9, 5)
    x, s, ki = xp.asarray(X), xp.asarray(v), xp.asarray(k)
    big = x * 2.0 + 1.0  # held, from the large buffer
    params = s * 3.0 - 1.0  # held, from a small float buffer
    codes = xp.astype(ki * 3 - 1, xp.float64)  # held, from a small integer buffer
    total = xp.sum(big) + xp.sum(params) + xp.sum(codes)
    xp.block_until_ready(total, codes)
    m = host_first()
    assert m["host_runs"] == 1 and m["compiles"] == 1  # codes first, then the rest
    assert np.asarray(codes).tobytes() == (k * 3 - 1).astype(np.float64).tobytes()
    assert np.asarray(params).tobytes() == (v * 3.0 - 1.0).tobytes()
    assert np.asarray(big).tobytes() == (X * 2.0 + 1.0).tobytes()
    want = (X * 2.0 + 1.0).sum() + (v * 3.0 - 1.0).sum() + (k * 3 - 1).sum()
    np.testing.assert_allclose(float(total), want, rtol=1e-12)
    assert host_first()["compiles"] == 1  # (all of it computed above)


def test_held_values_of_float_parameters_stay_in_the_graph(host_first, monkeypatch):
    """A loop whose held values are functions of float parameters (new at every step) keeps
    one graph per step, compiled once: nothing of it goes to the host first."""
    monkeypatch.setattr(hosteval, "MAX_BYTES", 4096)
    rng = np.random.default_rng(7)
    X = rng.standard_normal((40, fresh_rows()[1] % 5 + 30))
    x, s = xp.asarray(X), xp.asarray(rng.standard_normal(5))
    got = []
    for _ in range(3):
        s = s * 0.5 + 1.0  # held: the next step's parameters
        got.append(float(xp.sum(x * 2.0 + 1.0) + xp.sum(s)))
    m = host_first()
    assert (m["host_runs"], m["compiles"], m["cache_hits"]) == (0, 1, 2)
    assert len(set(got)) == 3


def test_a_compile_behind_reports_itself_and_its_hook_cannot_settle(metrics, settling_hook):
    """The compile event of a compile behind the host's runs says so and comes from the
    background thread, where ``settle`` raises instead of waiting for itself; ``explain``
    counts those compiles."""
    X = np.random.default_rng(8).standard_normal(fresh_rows())
    x = xp.asarray(X)
    events, errors = settling_hook
    with xp.flags.using(host_first=True, host_first_budget=0.0, compile_behind=True):
        for _ in range(2):
            np.asarray(_standardize(x))
        assert xp.debug.settle(60)
    assert len(events) == 1 and events[0]["behind"] is True
    assert errors and "wait for itself" in str(errors[0])
    assert "1 compiles behind the host's runs" in xp.debug.explain()


def test_complex_values_moved_and_converted_run_on_the_host(host_first):
    """Complex data movement, conversions, the parts, conjugation and negation have host rules
    (compiled code computes them bit for bit as NumPy); complex arithmetic compiles."""
    shape = fresh_rows()
    rng = np.random.default_rng(7)
    re, im = rng.standard_normal(shape), rng.standard_normal(shape)
    r, i = xp.asarray(re), xp.asarray(im)

    def moves(xpm, a, b):  # (NumPy 2 has the same names)
        c = xpm.astype(a, xpm.complex128)
        z = xpm.concat([c.T, -xpm.conj(c).T], axis=0)
        w = xpm.where(b.T > 0, xpm.real(z[:shape[1]]), xpm.imag(z[shape[1]:]))
        return xpm.astype(xpm.astype(z, xpm.complex64), xpm.complex128), w

    before = host_first()
    got = [np.asarray(v) for v in moves(xp, r, i)]
    after = host_first()
    assert after["host_runs"] > before["host_runs"] and after["compiles"] == before["compiles"]
    for g, w in zip(got, moves(np, re, im)):
        assert g.tobytes() == np.asarray(w).tobytes()
    before = host_first()
    np.asarray(xp.astype(r, xp.complex128) * xp.astype(i, xp.complex128))
    assert host_first()["compiles"] == before["compiles"] + 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ops_that_keep_their_operands_values_make_no_subnormal(dtype):
    """The evaluator does not scan the results of ops that only keep their operands' values
    (``ops/host.py``, ``keeps_values``): on values with none, including the smallest normal
    numbers, zeros of both signs, infinities and NaN, their host rules make no subnormal
    number; conversions that narrow a float are not among them."""
    from xla_array.core.graph import plan_graph
    from xla_array.core.ops.host import KEEPS, keeps_values
    from xla_array.core.ops.host_common import has_subnormal

    fin = np.finfo(dtype)
    corpus = np.array([fin.tiny, -fin.tiny, fin.tiny * 1.5, 0.0, -0.0, np.inf, -np.inf,
                       np.nan, fin.max, -fin.max, 0.3, -2.5, 7.5, fin.eps], dtype)
    other = np.roll(corpus, 3)
    x, y = xp.asarray(corpus), xp.asarray(other)
    z = xp.asarray(corpus[::-1] + 0j * 1)
    cases = {
        "negative": -x, "floor": xp.floor(x), "ceil": xp.ceil(x),
        "trunc": xp.trunc(x), "round": xp.round(x), "sign": xp.sign(x), "abs": xp.abs(x),
        "maximum": xp.maximum(x, y), "minimum": xp.minimum(x, y),
        "select": xp.where(x > y, x, y), "concat": xp.concat([x, y]),
        "real": xp.real(z), "imag": xp.imag(z), "conj": xp.conj(z),
        "sort": xp.sort(x), "max": xp.max(xp.reshape(x, (2, 7)), axis=1),
        "min": xp.min(xp.reshape(x, (2, 7)), axis=0),
        "from_int": xp.astype(xp.arange(-5, 9), x.dtype),
        "to_complex": xp.astype(x, xp.complex128),
    }
    if dtype == np.float32:
        cases["widen"] = xp.astype(x, xp.float64)
    w = xp.asarray(np.zeros(16, dtype))
    for i in (1, 5):
        w[i] = x[i]  # a write of a value read from an array
    cases["write"] = w
    seen = set()
    with xp.flags.using(host_first=True, host_first_budget=3600.0):
        for name, a in cases.items():
            order = plan_graph([a._node])[0]
            kept = [n for n in order if n.dtype.kind in "fc" and keeps_values(n)]
            assert kept, name  # (the case exercises such an op)
            seen.update(n.op.name for n in kept)
            assert not has_subnormal(np.asarray(a)), name
    # every op the evaluator trusts is among the cases (positive records no node, multi-key
    # sorts and combined writes are sorts and writes as above)
    assert KEEPS - seen <= {"positive", "sort_multi", "update_slices"}, KEEPS - seen
    narrowing = xp.astype(xp.asarray(np.array([1e-300, 1.0])), xp.float32)
    assert not keeps_values(plan_graph([narrowing._node])[0][-1])
