"""Tiered compilation (core/tiers.py): a new graph whose ops round the same at any XLA
optimization level compiles at level 0, is recompiled optimized on a background thread once it
runs again, and is swapped in; the bits never change.

The whole suite runs with tiering on and the first-use tier in its check mode, so every graph
the host can compute is compared with NumPy's bits both fast-compiled and, where it runs often
enough, optimized; here: the policy, the settings, the disk cache, threads and exit, and bits
of graphs too large for the host's check."""

import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import xla_array as xp
from xla_array.core import backend, compile_options, executor, hosteval
from xla_array.core.cache import executables
from xla_array.kernels import pocketfft

pytestmark = pytest.mark.usefixtures("on_cpu")

_rows = iter(range(2001, 3000))


def fresh(rows=7):
    """A matrix shape no other test uses: its graphs are new structures."""
    return (rows, next(_rows))


def standardize(a):
    """Rows standardized (sums along rows: NumPy's order with or without the native kernels,
    so the graph takes the fast tier in the suite's leg without native code too)."""
    return (a - xp.mean(a, axis=1, keepdims=True)) / xp.std(a, axis=1, keepdims=True)


def reference(X):
    return (X - X.mean(axis=1, keepdims=True)) / X.std(axis=1, keepdims=True)


def counts():
    m = xp.debug.metrics()
    return {k: m[k] for k in ("compiles", "fast_compiles", "background_compiles", "swaps")}


def delta(before):
    now = counts()
    return {k: now[k] - before[k] for k in now}


def test_an_exact_graph_compiles_fast_then_optimized_with_the_same_bits():
    X = np.random.default_rng(0).standard_normal(fresh())
    x = xp.asarray(X)
    before = counts()
    with xp.flags.using(tiered=True, tiered_runs=2):
        runs = [np.asarray(standardize(x)) for _ in range(3)]  # compile, run, run: queued
        assert xp.debug.settle(60)
        d = delta(before)
        assert (d["compiles"], d["fast_compiles"], d["background_compiles"], d["swaps"]) == \
            (1, 1, 1, 1)
        runs.append(np.asarray(standardize(x)))  # the optimized executable
        assert delta(before)["compiles"] == 1
        assert "tiered compilation on" in xp.debug.explain()
    ref = reference(X)
    for r in runs:
        assert r.tobytes() == ref.tobytes()


def test_graphs_whose_bits_depend_on_the_level_compile_optimized_at_once():
    """XLA's own forms (``tanh`` over more values than the NumPy-loop kernel takes, an FFT
    longer than the NumPy-FFT kernel takes) round differently at level 0: such graphs never
    take the fast tier. A small FFT calls NumPy's loops: its graph does."""
    x = xp.asarray(np.linspace(-3.0, 3.0, (1 << 20) + 8 + next(_rows)))
    y = xp.asarray(np.linspace(-3.0, 3.0, 2 * pocketfft.SMALL + next(_rows)))
    before = counts()
    with xp.flags.using(tiered=True):
        np.asarray(xp.tanh(x))
        np.asarray(xp.abs(xp.fft.rfft(y)))
    d = delta(before)
    assert (d["compiles"], d["fast_compiles"]) == (2, 0)
    if pocketfft.available():
        before = counts()
        with xp.flags.using(tiered=True):
            np.asarray(xp.abs(xp.fft.rfft(y[:64 + next(_rows)])))
        d = delta(before)
        assert (d["compiles"], d["fast_compiles"]) == (1, 1)


def test_off_and_wait():
    X = np.random.default_rng(1).standard_normal(fresh())
    x = xp.asarray(X)
    before = counts()
    with xp.flags.using(tiered=False):
        a = np.asarray(standardize(x))
    assert delta(before)["fast_compiles"] == 0
    x2 = xp.asarray(np.random.default_rng(2).standard_normal(fresh()))
    before = counts()
    with xp.flags.using(tiered="wait", tiered_runs=1):
        first = np.asarray(standardize(x2))  # fast compile
        assert delta(before)["swaps"] == 0
        second = np.asarray(standardize(x2))  # recompiled in this run, which uses it
        assert delta(before)["swaps"] == 1 and delta(before)["background_compiles"] == 1
    assert first.tobytes() == second.tobytes()
    assert a.tobytes() == reference(X).tobytes()


def test_a_set_optimization_level_turns_tiering_off():
    x = xp.asarray(np.ones(fresh()))
    before = counts()
    with xp.flags.using(tiered=True, opt_level=1):
        np.asarray(standardize(x))
    assert delta(before)["fast_compiles"] == 0


def exact_corpus(dtype):
    """Exact graphs (sums in NumPy's order, divisions, square roots, comparisons and selects,
    integer ops, gathers, a LAPACK call, NumPy's BLAS and loops through the native kernels),
    each of a shape no other test uses."""
    if not hosteval._column_kernel():
        pytest.skip("the native kernels are not in use: column sums and products are XLA's, "
                    "which are not exact")
    rng = np.random.default_rng(3)
    n = 20_000 + next(_rows)
    X = (rng.standard_normal((n, 4)) * 10.0 ** rng.integers(-20, 20, (n, 4))).astype(dtype)
    x = xp.asarray(X)
    idx = xp.asarray(rng.integers(0, n, 1000))
    m = xp.asarray(rng.standard_normal((40, 40)).astype(dtype))
    exprs = [
        lambda: standardize(x),
        lambda: xp.sum(x * x, axis=0) / xp.sqrt(xp.sum(x, axis=1)[:, None] ** 2 + 1.0),
        lambda: xp.where(x > 0, x / 3.0, -x * 7.0) - xp.max(x, axis=1, keepdims=True),
        lambda: xp.abs(x[:, 0]) + xp.take(x[:, 1], idx)[0],
        lambda: xp.astype(xp.astype(x * 0.0, xp.int64) + 3, dtype) / x,
        lambda: xp.linalg.cholesky(m @ m.T + 40.0 * xp.eye(40, dtype=dtype)),
        lambda: xp.exp(x[:1000] * 1e-20) @ xp.log1p(xp.abs(x[:4, :3])),
    ]
    for f in exprs:
        assert hosteval.exact(executor.plan([f()._node]).order, x.device)
    return exprs


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_exact_graphs_have_the_same_bits_fast_and_optimized(dtype):
    """Each exact graph's fast and optimized runs, bit for bit (the suite's check mode
    compares each with NumPy's too)."""
    exprs = exact_corpus(dtype)
    with xp.flags.using(tiered="wait", tiered_runs=1):
        for f in exprs:
            before = counts()
            fast = np.asarray(f())
            optimized = np.asarray(f())
            d = delta(before)
            assert (d["fast_compiles"], d["swaps"]) == (1, 1), d
            assert fast.tobytes() == optimized.tobytes()


class CompileOptions:
    """Records the LLVM options of each compile."""

    def __init__(self, monkeypatch):
        self.llvm = []
        compile_ = backend.compile

        def spy(text, devices, *, options=None):
            self.llvm.append((options or {}).get(backend.LLVM_OPTIONS) or None)
            return compile_(text, devices, options=options)

        monkeypatch.setattr(backend, "compile", spy)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_exact_graphs_have_the_same_bits_with_and_without_llvm_unrolling(dtype, monkeypatch):
    """Exact graphs compile with LLVM's loop unrolling off (``compile_options.EXACT_LLVM``: a third
    less compile time on small values): each one's bits are those it has unrolled."""
    exprs = exact_corpus(dtype)
    seen = CompileOptions(monkeypatch)
    for f in exprs:
        executables.clear()
        plain = np.asarray(f())
        with monkeypatch.context() as m:
            m.setattr(compile_options, "EXACT_LLVM", "")
            executables.clear()
            unrolled = np.asarray(f())
        assert plain.tobytes() == unrolled.tobytes()
    assert seen.llvm == [compile_options.EXACT_LLVM, None] * len(exprs)


def test_llvm_options_reach_the_compile_options():
    """LLVM's options go into XLA's serialized debug options (a map the overrides cannot
    set), beside the other options; with none, the options are XLA's defaults."""
    devices = backend.devices()
    opts = backend._compile_options(devices, {backend.LLVM_OPTIONS: "-unroll-threshold=0",
                                              "xla_backend_optimization_level": 2})
    blob = opts.SerializeAsString()
    assert b"-unroll-threshold" in blob and b"\x12\x010" in blob  # (name, value "0")
    assert opts.env_option_overrides == [("xla_backend_optimization_level", 2)]
    assert b"-unroll" not in backend._compile_options(devices, None).SerializeAsString()


def test_graphs_with_xla_float_arithmetic_compile_with_llvm_unrolling(monkeypatch):
    """XLA's own float reductions (their additions and products may be reassociated: LLVM's
    unrolling decides the order; a product of 3 values differs unrolled or not) and its float
    floored division keep LLVM's defaults; so do graphs under fast_math."""
    rng = np.random.default_rng(4)
    x = xp.asarray(rng.standard_normal(fresh(3)))
    seen = CompileOptions(monkeypatch)
    prod = np.asarray(xp.prod(x, axis=0))
    floor = np.asarray(x // 0.3)
    with xp.flags.using(fast_math=True):
        np.asarray(standardize(x))
    np.asarray(standardize(x))
    assert seen.llvm == [None, None, None, compile_options.EXACT_LLVM]
    X = np.asarray(x)
    np.testing.assert_allclose(prod, np.prod(X, axis=0), rtol=1e-15)
    np.testing.assert_array_equal(floor, X // 0.3)


def test_graphs_of_large_values_compile_optimized_at_once():
    """Above ``tiers.FAST_MAX_BYTES`` of computed values the fast tier's slower code costs more
    than its compile saves."""
    from xla_array.core import tiers

    x = xp.asarray(np.ones((1, tiers.FAST_MAX_BYTES // 8 + next(_rows))))
    before = counts()
    with xp.flags.using(tiered=True):
        np.asarray(standardize(x))
    d = delta(before)
    assert (d["compiles"], d["fast_compiles"]) == (1, 0)


def test_recompiles_while_other_threads_run_the_graph():
    """Threads running one fast-compiled structure while its recompile is queued and swapped:
    no deadlock, every value right."""
    X = np.random.default_rng(4).standard_normal(fresh())
    ref = reference(X).tobytes()
    x = xp.asarray(X)
    bad = []

    def work():
        for _ in range(20):
            if np.asarray(standardize(x)).tobytes() != ref:
                bad.append(1)

    before = counts()
    with xp.flags.using(tiered=True, tiered_runs=1):
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not any(t.is_alive() for t in threads)
        assert xp.debug.settle(60)
    assert not bad
    d = delta(before)
    assert d["fast_compiles"] == 1 and d["background_compiles"] == 1 and d["swaps"] == 1


def test_settle_from_a_hook_raises(settling_hook):
    x = xp.asarray(np.ones(fresh()))
    np.asarray(standardize(x))
    errors = settling_hook[1]
    assert errors and "wait for itself" in str(errors[0])


SCRIPT = """
import json, sys, time, numpy as np, xla_array as xp
xp.flags.set(host_first=False, tiered=True, tiered_runs=1)
x = xp.asarray(np.arange(60.0).reshape(12, 5) % 7)
vals = [np.asarray((x - xp.mean(x, axis=0)) / xp.std(x, axis=0)).tobytes().hex()
        for _ in range(int(sys.argv[1]))]
if sys.argv[2] == "settle":
    xp.debug.settle(60)
m = xp.debug.metrics()
print(json.dumps({k: m[k] for k in ("compiles", "fast_compiles", "disk_hits", "swaps")}
                 | {"vals": sorted(set(vals)), "t": time.perf_counter()}))
"""


def _process(folder, runs, settle):
    env = dict(os.environ, XLA_ARRAY_CACHE_DIR=str(folder))
    env.pop("XLA_ARRAY_TIERED", None)
    t0 = time.time()
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(runs), settle], env=env,
                         check=True, capture_output=True, text=True, timeout=120)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["wall"] = time.time() - t0
    return r


def test_the_disk_cache_keeps_the_fast_then_the_optimized_executable(tmp_path):
    folder = tmp_path / "cache"
    one = _process(folder, 1, "")  # fast compile, stored
    assert (one["compiles"], one["fast_compiles"], one["disk_hits"]) == (1, 1, 0)
    two = _process(folder, 3, "settle")  # the fast one from disk, recompiled, stored
    assert (two["compiles"], two["disk_hits"], two["swaps"]) == (0, 1, 1)
    three = _process(folder, 1, "")  # the optimized one from disk
    assert (three["compiles"], three["disk_hits"], three["swaps"]) == (0, 1, 0)
    assert one["vals"] == two["vals"] == three["vals"] and len(one["vals"]) == 1
    assert len(list(folder.glob("*.xla"))) == 2


SLOW_RECOMPILE = """
import threading, time, numpy as np, xla_array as xp
from xla_array.core import backend
compile = backend.compile
def slow(*a, **k):  # the background recompile takes 60 s more
    if threading.current_thread().name == "xla_array-recompile":
        time.sleep(60)
    return compile(*a, **k)
backend.compile = slow
from xla_array.core import tiers
tiers.EXIT_WAIT = 1.0  # (exit waits this long for a running compile: here a sleep)
xp.flags.set(host_first=False, tiered=True, tiered_runs=1)
x = xp.asarray(np.arange(60.0).reshape(12, 5))
for _ in range(2):
    np.asarray(x * 2.0 + 1.0)
assert xp.debug.metrics()["fast_compiles"] == 1
assert not xp.debug.settle(0.1)  # (queued, running)
print("exiting")
"""


def test_exit_does_not_wait_for_a_queued_recompile():
    """A process that queued a recompile (here one that takes a minute) and exits at once
    ends cleanly (status 0) without waiting for it."""
    env = dict(os.environ, XLA_ARRAY_CACHE_DIR="off")
    env.pop("XLA_ARRAY_TIERED", None)
    t0 = time.time()
    out = subprocess.run([sys.executable, "-c", SLOW_RECOMPILE], env=env, check=True,
                         capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().endswith("exiting")
    assert time.time() - t0 < 45


def test_the_fast_tier_is_part_of_the_memory_cache_entry():
    """A swapped executable replaces the fast one under the same key (no second entry)."""
    x = xp.asarray(np.ones(fresh()))
    with xp.flags.using(tiered="wait", tiered_runs=1):
        np.asarray(standardize(x))
        n = len(executables)
        np.asarray(standardize(x))
        assert len(executables) == n
