"""The one-pass ``X.T @ f(X @ w)`` kernel (xla_array/kernels/rowpass.py,
kernels/native/rowpass_ffi.c): values against NumPy for both dtypes, odd shapes and every op of
its program, the rewrite that picks it, what it must leave alone, threads, and the portable
(non-AVX2) paths. Skipped where the package was built without it (tests/test_kernels.py covers
that case)."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xla_array as xp
from xla_array.kernels import library
from xla_array.kernels import rowpass as _rowpass

pytestmark = pytest.mark.skipif(not _rowpass.available(),
                                reason=f"row-pass kernel unavailable: {_rowpass.error()}")

TOL = {np.float32: 2e-5, np.float64: 1e-12}


def _fused(a) -> bool:
    """Whether computing ``a`` calls the kernel (the rewrite happens when a graph is lowered:
    the recorded product stays a dot_general)."""
    return "xla_array_rowpass" in xp.debug.mlir(a)


def _close(got, want, dtype):
    want = np.asarray(want, dtype=np.float64)
    scale = max(np.abs(want).max(), 1.0)
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=0,
                               atol=TOL[dtype] * scale)


@pytest.fixture
def small_rowpass(monkeypatch):
    """Take every eligible product, so small shapes (cheap compiles) reach the kernel."""
    monkeypatch.setattr(_rowpass, "MIN_SIZE", 0)
    monkeypatch.setattr(_rowpass, "MIN_ROWS", 0)


def _data(rng, n, d, dtype):
    return (rng.standard_normal((n, d)).astype(dtype), rng.standard_normal(d).astype(dtype),
            rng.standard_normal(n).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n,d", [(1, 1), (7, 3), (33, 8), (257, 17), (1000, 5), (5001, 12)])
def test_gradient_matches_numpy(dtype, n, d, small_rowpass):
    """Row counts around the 8-row groups, 32-row blocks and chunks; widths around the
    8 (float32) and 4 (float64) lanes of a vector."""
    X, w, y = _data(np.random.default_rng(n * 31 + d), n, d, dtype)
    Xx, wx, yx = xp.asarray(X), xp.asarray(w), xp.asarray(y)
    g = Xx.T @ (Xx @ wx - yx)
    assert _fused(g) and g.dtype == xp.asarray(X).dtype and g.shape == (d,)
    _close(g, X.T.astype(np.float64) @ (X.astype(np.float64) @ w - y), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_op_of_the_program(dtype, small_rowpass):
    X, w, y = _data(np.random.default_rng(5), 300, 20, dtype)
    X *= 0.3
    Xx, wx, yx = xp.asarray(X), xp.asarray(w), xp.asarray(y)

    def f(m, t, y):
        s = 1 / (1 + m.exp(-t))                                  # divide, add, exp, negative
        a = m.maximum(t, 0.25) - m.minimum(t, -0.5) * 2.0        # maximum, minimum, multiply
        b = m.sqrt(m.abs(t)) + m.log1p(m.square(y)) - m.log(2.0 + m.tanh(t))
        c = m.expm1(t * 0.1) + m.reciprocal(3.0 + m.abs(y)) + (+t)
        return s - y + a * b / (1.0 + m.square(c))

    g = Xx.T @ f(xp, Xx @ wx, yx)
    assert _fused(g)
    # all of f is in the kernel's program: its operands are only X, w, y and scalars
    inputs, _attrs = _rowpass.rule(g._node)
    assert all(x.op.name in ("buffer", "scalar") for x in inputs)
    Xd = X.astype(np.float64)
    ref = Xd.T @ f(np, Xd @ w.astype(np.float64), y.astype(np.float64))
    _close(g, ref, dtype)


def test_forms_that_fuse(small_rowpass):
    X, w, y = _data(np.random.default_rng(6), 200, 9, np.float64)
    Xx, wx, yx = xp.asarray(X), xp.asarray(w), xp.asarray(y)
    cases = [
        (lambda: Xx.T @ (Xx @ wx), X.T @ (X @ w)),                          # power iteration
        (lambda: (Xx @ wx - yx) @ Xx, (X @ w - y) @ X),                     # v @ X
        (lambda: xp.matrix_transpose(Xx) @ (wx @ Xx.T * 2.0), X.T @ (w @ X.T * 2.0)),
        (lambda: Xx.T @ (Xx @ wx - xp.mean(yx)), X.T @ (X @ w - y.mean())),  # a pending scalar
        (lambda: Xx.T @ (Xx @ wx - xp.sort(yx)), X.T @ (X @ w - np.sort(y))),  # a pending vector
    ]
    for make, want in cases:
        got = make()
        assert _fused(got)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def test_one_op_shortcut_gives_the_walks_program(small_rowpass):
    """``fuse``'s shortcut for one binary op of X @ w and a leaf: same operands and program as
    the general walk, and it declines (leaving the walk to decide) everything else."""
    X, w, y = _data(np.random.default_rng(8), 64, 5, np.float32)
    Xx, wx, yx = xp.asarray(X), xp.asarray(w), xp.asarray(y)
    n, dt = 64, Xx.dtype
    # (t recorded anew each time: a t an Array holds is computed, a buffer, once g is)
    for make, want in [(lambda t: t - yx, X @ w - y), (lambda t: yx - t, y - X @ w),
                       (lambda t: t * 2.0, (X @ w) * 2), (lambda t: 2.0 - t, 2 - X @ w),
                       (lambda t: xp.maximum(t, yx), np.maximum(X @ w, y)),
                       (lambda t: t / xp.asarray(np.float32(3)), (X @ w) / 3)]:
        v = make(Xx @ wx)
        got = _rowpass._one_op(Xx._node, v._node, n, dt)
        assert got is not None and got == _rowpass._walk(Xx._node, v._node, n, dt)
        g = Xx.T @ v
        assert _fused(g)
        _close(g, X.T @ want, np.float32)
    t = Xx @ wx
    for v in [t - xp.sort(yx), t - (yx * 2.0), xp.exp(t), t + t, yx - yx,
              t - xp.asarray(y.astype(np.float16))]:
        assert _rowpass._one_op(Xx._node, v._node, n, dt) is None


def test_what_stays_two_products(small_rowpass):
    rng = np.random.default_rng(7)
    X, w, y = _data(rng, 64, 6, np.float32)
    X2 = rng.standard_normal((64, 6)).astype(np.float32)
    Xx, wx, yx, X2x = xp.asarray(X), xp.asarray(w), xp.asarray(y), xp.asarray(X2)
    w2 = xp.asarray(rng.standard_normal(6).astype(np.float32))
    not_fused = {
        "another X": X2x.T @ (Xx @ wx - yx),
        "two different w": Xx.T @ (Xx @ wx + Xx @ w2),
        "no X @ w": Xx.T @ (yx * 2.0),
        "an op outside the program": Xx.T @ xp.where(Xx @ wx > 0, Xx @ wx, 0.0),
        "mixed dtypes": Xx.T @ xp.astype(Xx @ wx - xp.asarray(y.astype(np.float64)), xp.float32),
        "mixed dtypes inside": Xx.T @ (Xx @ wx - xp.asarray(y.astype(np.float16))),
        "a float16 w": Xx.T @ (Xx @ xp.asarray(w.astype(np.float16)) - yx),
        "a float64 X": xp.asarray(X.astype(np.float64)).T @ (xp.asarray(X.astype(np.float64))
                                                            @ wx - 1.0),
        "integers": xp.asarray(X.astype(np.int32)).T @ (xp.asarray(X.astype(np.int32))
                                                       @ xp.asarray(np.ones(6, np.int32))),
        "X @ v (rows not contracted)": Xx @ (Xx.T @ yx),
    }
    for why, g in not_fused.items():
        assert not _fused(g), why
    np.testing.assert_allclose(np.asarray(not_fused["an op outside the program"]),
                               X.T @ np.where(X @ w > 0, X @ w, 0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(not_fused["a float16 w"]),
                               X.T @ (X @ w.astype(np.float16) - y), rtol=1e-5, atol=1e-5)
    with xp.flags.using(rowpass=False):
        assert not _fused(Xx.T @ (Xx @ wx - yx))


def test_default_rule():
    big = xp.ones((_rowpass.MIN_ROWS * 4, 64), dtype=xp.float32)
    v = xp.ones((64,), dtype=xp.float32)
    assert _fused(big.T @ (big @ v))
    small = xp.ones((_rowpass.MIN_ROWS - 1, 300), dtype=xp.float32)    # too few rows
    assert not _fused(small.T @ (small @ xp.ones((300,), dtype=xp.float32)))
    narrow = xp.ones((1000, 8), dtype=xp.float32)                        # too few elements
    assert not _fused(narrow.T @ (narrow @ xp.ones((8,), dtype=xp.float32)))


def test_intermediates_held_by_the_user_stay_right(small_rowpass):
    X, w, y = _data(np.random.default_rng(8), 100, 7, np.float64)
    Xx, wx, yx = xp.asarray(X), xp.asarray(w), xp.asarray(y)
    r = Xx @ wx - yx
    g = Xx.T @ r
    loss = r @ r
    assert _fused(g)
    np.testing.assert_allclose(np.asarray(g), X.T @ (X @ w - y), rtol=1e-12)
    np.testing.assert_allclose(float(loss), (X @ w - y) @ (X @ w - y), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(r), X @ w - y, rtol=1e-12)


def test_nan_and_inf_propagate_like_numpy(small_rowpass):
    X, w, y = _data(np.random.default_rng(9), 40, 3, np.float64)
    y[3], y[7], X[11, 0] = np.nan, np.inf, np.nan
    Xx, wx, yx = xp.asarray(X), xp.asarray(w), xp.asarray(y)
    for f in (lambda m, t, y: m.maximum(t, y), lambda m, t, y: m.minimum(y, t),
              lambda m, t, y: t - y):
        got = Xx.T @ f(xp, Xx @ wx, yx)
        assert _fused(got)
        np.testing.assert_array_equal(np.isnan(np.asarray(got)), np.isnan(X.T @ f(np, X @ w, y)))


def test_empty_and_zero_width(small_rowpass):
    for n, d in ((0, 4), (5, 0)):
        Xx = xp.zeros((n, d))
        g = Xx.T @ (Xx @ xp.ones((d,)) - 1.0)
        assert _fused(g)
        np.testing.assert_array_equal(np.asarray(g), np.zeros(d))


def test_deterministic_and_threads(run_threads, small_rowpass):
    """Sums are taken in a fixed order (chunks depend on n only): equal bits every call and
    from several Python threads at once."""
    rng = np.random.default_rng(10)
    X, w, y = _data(rng, 3000, 64, np.float32)
    Xx, wx, yx = xp.asarray(X), xp.asarray(w), xp.asarray(y)
    first = np.asarray(Xx.T @ (Xx @ wx - yx))
    assert _fused(Xx.T @ (Xx @ wx - yx))
    _close(first, X.T.astype(np.float64) @ (X.astype(np.float64) @ w - y), np.float32)

    def work(i):
        for _ in range(5):
            np.testing.assert_array_equal(np.asarray(Xx.T @ (Xx @ wx - yx)), first)

    assert run_threads(work, 3) == []


def test_gradient_descent_loop_eager_and_jit(small_rowpass):
    """The workload it is for: eager steps (auto-flushed graphs) and one jitted loop."""
    rng = np.random.default_rng(11)
    X, y = (0.1 * rng.standard_normal((2000, 100))).astype(np.float32), rng.standard_normal(
        2000).astype(np.float32)
    w0 = np.zeros(100, np.float32)

    def gd(m, X, y, w, steps=30):
        for _ in range(steps):
            w = w - 0.01 * (X.T @ (X @ w - y))
        return w

    want = gd(np, X.astype(np.float64), y.astype(np.float64), w0.astype(np.float64))
    Xx, yx = xp.asarray(X), xp.asarray(y)
    xp.debug.reset_metrics()
    eager = gd(xp, Xx, yx, xp.asarray(w0))
    _close(eager, want, np.float32)
    assert xp.debug.metrics()["auto_flushes"] >= 1
    jitted = xp.jit(lambda X, y, w: gd(xp, X, y, w))
    assert "xla_array_rowpass" in jitted.compile(Xx, yx, xp.asarray(w0)).as_text()
    _close(jitted(Xx, yx, xp.asarray(w0)), want, np.float32)


def _run(code: str, env: dict) -> str:
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env={**os.environ, **env},
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture
def portable():
    """The kernel's portable loops only (no AVX2/FMA paths), restored after."""
    lib = library.library("rowpass_ffi")  # (the loaded library: dlopen hands out one copy)
    was = lib.xa_rowpass_simd(-1)
    assert lib.xa_rowpass_simd(0) == 0
    yield
    lib.xa_rowpass_simd(was)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_portable_paths_give_the_same_values(dtype, small_rowpass, portable):
    """The loops every CPU runs (the runtime dispatch's other branch) match NumPy too."""
    rng = np.random.default_rng(12)
    for n, d in ((45, 13), (600, 3), (257, 17)):
        X, w, y = _data(rng, n, d, dtype)
        Xx = xp.asarray(X)
        g = Xx.T @ xp.tanh(Xx @ xp.asarray(w) - xp.asarray(y))
        assert _fused(g)
        _close(g, X.T.astype(float) @ np.tanh(X.astype(float) @ w - y), dtype)


def test_a_deserialized_function_registers_the_kernel(tmp_path):
    """A function serialized in one process runs in another that never recorded a
    matrix-vector product (the kernel is registered before the executable is loaded)."""
    blob = tmp_path / "f.bin"
    code = f"""
        import numpy as np, xla_array as xp
        from xla_array.kernels import rowpass as _rowpass
        _rowpass.MIN_SIZE = _rowpass.MIN_ROWS = 0
        f = xp.jit(lambda X, w: X.T @ (X @ w))
        c = f.compile(xp.ones((600, 3)), xp.ones((3,)))
        assert "xla_array_rowpass" in c.as_text()
        open({str(blob)!r}, "wb").write(c.serialize())
        print("ok")
    """
    assert _run(code, {"XLA_ARRAY_CACHE_DIR": "off"}).split() == ["ok"]
    out = _run(f"""
        import numpy as np, xla_array as xp
        g = xp.deserialize(open({str(blob)!r}, "rb").read())
        print(np.asarray(g(xp.ones((600, 3)), xp.ones((3,)))).tolist())
    """, {"XLA_ARRAY_CACHE_DIR": "off"})
    assert out.split() == ["[1800.0,", "1800.0,", "1800.0]"]
