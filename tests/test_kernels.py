"""The native kernels' contract (core/registry.py, core/rewrite.py, kernels/library.py): each
kernel's record, the rewrite that selects it at lowering (and leaves the recorded graph alone),
values against NumPy with and without the kernels, and a process where they are off
(``XLA_ARRAY_NATIVE=0``, as where the package was built without a C compiler). Runs with or
without the built libraries (``.ci/run`` runs it both ways)."""

import itertools
import os
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xla_array as xp
from xla_array.core import compile_options, executor, registry, rewrite
from xla_array.core.cache import executables
from xla_array.core.ops.reductions import SEQUENTIAL_ROWS, regular_rows, sum_plan
from xla_array.core.ops.structural import OPS
from xla_array.kernels import (
    blas,
    layout,
    library,
    lu_perm,
    pairwise,
    pocketfft,
    rowpass,
    scan,
    ufunc,
)

KERNELS_DIR = os.path.dirname(library.__file__)


def _gd(m, X, y, w, steps=3):
    for _ in range(steps):
        w = w - 0.01 * (X.T @ (X @ w - y))
    return w


def _data(n=700, d=9, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return ((0.1 * rng.standard_normal((n, d))).astype(dtype), rng.standard_normal(n).astype(dtype),
            rng.standard_normal(d).astype(dtype))


@pytest.fixture
def small_rowpass(monkeypatch):
    monkeypatch.setattr(rowpass, "MIN_SIZE", 0)
    monkeypatch.setattr(rowpass, "MIN_ROWS", 0)


@pytest.fixture
def no_kernels(monkeypatch):
    """As in a package built without the kernels: none available (executables compiled with
    them are dropped, as a process without them would never have had them)."""
    for k in registry.KERNELS.values():
        libs = {"rowpass": [rowpass._LIB], "lu_perm": [lu_perm._LIB], "pairwise": [pairwise._LIB],
                "scan": scan._LIBS, "blas": [blas._LIB], "ufunc": [ufunc._LIB],
                "layout": [layout._LIB], "pocketfft": [pocketfft._LIB]}[k.kind]
        for lib in libs:
            monkeypatch.setattr(lib, "ok", False)
    executables.clear()
    yield
    executables.clear()


def test_each_kernel_has_one_record():
    assert set(registry.KERNELS) == {"rowpass", "lu_perm", "pairwise", "scan", "blas", "ufunc",
                                     "layout", "pocketfft"}
    for k in registry.KERNELS.values():
        assert os.path.exists(os.path.join(KERNELS_DIR, k.source)), k.source
        replaces = (k.replaces,) if isinstance(k.replaces, str) else k.replaces
        assert OPS[k.op.name] is k.op and all(r in OPS for r in replaces)
        assert k.op.attrs is not None  # a named attribute record, like every op
        assert all(t.startswith("xla_array_") for t in k.targets)
        assert k.available() == (k.error() == "")
    assert registry.KERNELS["rowpass"].flag == "rowpass"


def test_custom_targets_come_from_the_registry():
    text = 'call_target_name = "xla_array_rowpass" ... "lapack_dgetrf_ffi"'
    assert executor.custom_targets(text) == ["lapack", "rowpass"]
    assert executor.custom_targets('"xla_array_lu_perm"') == ["lu_perm"]
    assert executor.custom_targets("stablehlo.dot_general") == []


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradient_steps_match_numpy_with_the_kernel(dtype, small_rowpass):
    X, y, w = _data(dtype=dtype)
    Xx = xp.asarray(X)
    g = Xx.T @ (Xx @ xp.asarray(w) - xp.asarray(y))
    assert g._node.op.name == "dot_general"  # recorded as XLA's product...
    assert ("xla_array_rowpass" in xp.debug.mlir(g)) == rowpass.available()  # ...rewritten
    assert g._node.op.name == "dot_general"  # (lowering left the recorded graph alone)
    want = _gd(np, X.astype(float), y.astype(float), w.astype(float))
    got = _gd(xp, xp.asarray(X), xp.asarray(y), xp.asarray(w))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_same_values_without_the_kernels(dtype, small_rowpass, no_kernels):
    X, y, w = _data(dtype=dtype, seed=1)
    got = _gd(xp, xp.asarray(X), xp.asarray(y), xp.asarray(w))
    assert "xla_array_" not in xp.debug.mlir(got * 1.0)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(np.asarray(got), _gd(np, X.astype(float), y.astype(float),
                                                    w.astype(float)), rtol=tol, atol=tol)
    a = np.random.default_rng(2).standard_normal((3, 6, 6)).astype(dtype)
    a += 6 * np.eye(6, dtype=dtype)
    b = np.random.default_rng(3).standard_normal((3, 6, 2)).astype(dtype)
    sol = xp.linalg.solve(xp.asarray(a), xp.asarray(b))
    assert "xla_array_lu_perm" not in xp.debug.mlir(sol)
    np.testing.assert_allclose(np.asarray(sol), np.linalg.solve(a, b), rtol=tol * 10,
                               atol=tol * 10)


@pytest.mark.skipif(not rowpass.available(), reason="row-pass kernel unavailable")
def test_where_the_rewrite_applies_and_where_not(small_rowpass):
    X, y, w = _data()
    Xx, yx, wx = xp.asarray(X), xp.asarray(y), xp.asarray(w)
    t = Xx @ wx
    applies = {"X.T @ f(X @ w)": Xx.T @ (t - yx), "v @ X": (t - yx) @ Xx,
               "power iteration": Xx.T @ t}
    stays = {"X @ v": Xx @ (Xx.T @ yx), "a computed vector only": Xx.T @ (yx * 2.0),
             "another X": xp.asarray(X.copy()).T @ (t - yx), "a matrix product": Xx.T @ Xx}
    for why, a in applies.items():
        assert "xla_array_rowpass" in xp.debug.mlir(a), why
    for why, a in stays.items():
        assert "xla_array_rowpass" not in xp.debug.mlir(a), why
    with xp.flags.using(rowpass=False):  # the setting, read at lowering
        assert "xla_array_rowpass" not in xp.debug.mlir(Xx.T @ (t - yx))
        assert "rowpass" not in compile_options._disk_context({})
    assert "kernels blas,layout,lu_perm,pairwise,pocketfft,rowpass" in \
        compile_options._disk_context({})


def test_below_the_size_rule_it_stays_two_products():
    X, y, w = _data(n=600, d=8)
    Xx = xp.asarray(X)
    assert "xla_array_rowpass" not in xp.debug.mlir(Xx.T @ (Xx @ xp.asarray(w) - xp.asarray(y)))


@pytest.mark.skipif(not rowpass.available(), reason="row-pass kernel unavailable")
def test_the_rewrite_remaps_readers_and_outputs(small_rowpass):
    """Nodes reading a replaced node read its replacement; an output that is replaced is
    returned as its replacement; the recorded lists are not changed."""
    from xla_array.core.graph import plan_graph
    X, y, w = _data()
    Xx, wx = xp.asarray(X), xp.asarray(w)
    g = Xx.T @ (Xx @ wx - xp.asarray(y))
    step = wx - 0.01 * g
    order, _bufs, _scalars, outs, _key = plan_graph([step._node])
    before = list(order), list(outs)
    new_order, new_outs = rewrite.apply(order, outs)
    assert (order, outs) == before
    replaced = [n for n in new_order if n.op.name == "rowpass"]
    assert len(replaced) == 1 and replaced[0].inputs[0] is Xx._node
    readers = [n for n in new_order if replaced[0] in n.inputs]
    assert readers and all(isinstance(n, rewrite.Rewritten) for n in readers)
    assert isinstance(new_outs[0], rewrite.Rewritten)  # step reads g, so it is rewritten too
    assert rewrite.apply([], []) == ([], [])


def test_a_rule_must_keep_shape_and_dtype(monkeypatch):
    """A rule whose replacement computes another shape is a bug, caught before lowering."""
    two = xp.ones(2)._node
    bad = registry.Kernel(kind="bad", title="bad kernel", source="native/none.c",
                          targets=("xla_array_bad",), op=OPS["negative"], replaces="sqrt",
                          rule=lambda n: ((two,), ()), available=lambda: True,
                          error=lambda: "")
    monkeypatch.setitem(registry.KERNELS, "bad", bad)
    with pytest.raises(AssertionError, match="bad kernel rewrote a sqrt node"):
        xp.debug.mlir(xp.sqrt(xp.ones(3)))


def test_a_library_that_was_not_built_is_unavailable():
    why = "built without it|XLA_ARRAY_NATIVE=0"  # (.ci/run's leg without native code)
    assert library.path("no_such_kernel") is None
    with pytest.raises(RuntimeError, match=why):
        library.library("no_such_kernel")
    lib = library.handler_library("test kernel", "XLA", "no_such_kernel", "xa_x", "xla_array_x")
    assert lib.present() is False and lib.ok is None  # (asked without trying to load it)
    assert lib.available() is False and re.search(why, lib.error)
    built = library.handler_library("test kernel", "XLA", "lu_perm_ffi", "xa_x", "xla_array_x")
    assert built.present() is bool(xp.flags.get("native"))  # built, not tried: it may load
    assert built.available() is False and built.present() is False  # (no such symbol)


@pytest.mark.skipif(not xp.flags.get("native") or not (shutil.which("cc") or shutil.which("gcc")),
                    reason="no native code here (XLA_ARRAY_NATIVE=0, or no C compiler at "
                           "install): the kernels' own tests skip knowingly")
def test_every_kernel_and_the_graph_core_are_built_where_there_is_a_c_compiler():
    """The kernels' tests skip where their library is unavailable: so that a kernel whose build
    broke (setup.py marks the extensions optional) cannot drop out of CI as a few skips, every
    registered kernel must load, and the graph's C core too, wherever a C compiler exists."""
    from xla_array.core import graph
    assert graph.NATIVE, "the graph's C core (core/graphcore.c) was not built"
    missing = {k.kind: k.error() for k in registry.KERNELS.values() if not k.available()}
    assert not missing, f"native kernels not built or not loadable: {missing}"
    assert len(registry.KERNELS) >= 8


def _run(code: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(not lu_perm.available(), reason="LU permutation kernel unavailable")
def test_a_library_that_fails_to_load_at_its_first_need_is_passed_over(monkeypatch):
    """A kernel is loaded when a graph first needs it (``registry.may_use``,
    ``rewrite.match``): one whose library is there but fails to load then is passed over,
    the graph keeps XLA's ops (the same values), and the kernel leaves the disk cache's
    context."""
    def refuse() -> None:
        raise RuntimeError("refused (test)")

    monkeypatch.setattr(lu_perm._LIB, "_load", refuse)
    monkeypatch.setattr(lu_perm._LIB, "ok", None)  # (a process that has not needed it yet)
    executables.clear()
    assert "lu_perm" in registry.context().split(",")  # it may be used: its library is there
    rng = np.random.default_rng(4)
    a = rng.standard_normal((6, 6)) + 6 * np.eye(6)
    b = rng.standard_normal((6, 2))
    sol = xp.linalg.solve(xp.asarray(a), xp.asarray(b))
    assert "xla_array_lu_perm" not in xp.debug.mlir(sol) and lu_perm._LIB.ok is False
    np.testing.assert_allclose(np.asarray(sol), np.linalg.solve(a, b), rtol=1e-12)
    assert "lu_perm" not in registry.context().split(",")
    executables.clear()  # (compiled without it: not for the tests after this one)


@pytest.mark.skipif(not lu_perm.available(), reason="LU permutation kernel unavailable")
def test_an_executable_is_stored_under_the_kernels_it_was_lowered_with(tmp_path):
    """The disk cache's context names the kernels that may be used: a process whose LU
    kernel failed to load at its first need stores its solve (compiled without the kernel)
    under a context without it, so a process where the kernel loads compiles its own, with
    the kernel, instead of loading that one (and a third loads the second's)."""
    code = """
        import sys, numpy as np, xla_array as xp
        from xla_array.kernels import lu_perm
        if sys.argv[1] == "refuse":
            def refuse():
                raise RuntimeError("refused (test)")
            lu_perm._LIB._load = refuse
        xp.flags.set(host_first=False)
        a = np.arange(36.0).reshape(6, 6) + 10 * np.eye(6)
        x = xp.linalg.solve(xp.asarray(a), xp.ones(6))
        ok = np.allclose(np.asarray(x), np.linalg.solve(a, np.ones(6)))
        m = xp.debug.metrics()
        print(ok, m["compiles"], m["disk_hits"], lu_perm._LIB.ok)  # (loaded: a graph used it)
    """
    env = {"XLA_ARRAY_CACHE_DIR": str(tmp_path / "cache")}
    runs = []
    for how in ("refuse", "load", "load"):
        r = subprocess.run([sys.executable, "-c", textwrap.dedent(code), how], capture_output=True,
                           text=True, timeout=300, env={**os.environ, **env})
        assert r.returncode == 0, r.stderr[-2000:]
        runs.append(r.stdout.split())
    assert runs[0][0] == "True" and runs[0][3] == "False"  # (solved without the kernel)
    compiled = int(runs[0][1])
    assert runs[1] == ["True", str(compiled), "0", "True"]  # its own executables, not those
    assert runs[2] == ["True", "0", str(compiled), "True"]  # then from the cache


def test_native_off_turns_the_kernels_off_quietly():
    """XLA_ARRAY_NATIVE=0: no native code at all, the same values, and no warning (it was
    asked for); nothing is compiled with a C compiler at run time either way."""
    r = _run("""
        import numpy as np, xla_array as xp
        from xla_array.core import registry
        from xla_array.kernels import rowpass
        rowpass.MIN_SIZE = rowpass.MIN_ROWS = 0
        X = np.random.default_rng(0).standard_normal((600, 5))
        w, y = np.ones(5), np.arange(600.0)
        Xx = xp.asarray(X)
        g = Xx.T @ (Xx @ xp.asarray(w) - xp.asarray(y))
        assert "xla_array_" not in xp.debug.mlir(g)
        assert np.allclose(np.asarray(g), X.T @ (X @ w - y))
        a = np.eye(4) * 3 + 1
        assert np.allclose(np.asarray(xp.linalg.solve(xp.asarray(a), xp.ones(4))),
                           np.linalg.solve(a, np.ones(4)))
        v = np.random.default_rng(1).standard_normal((3, 1000)) * 1e3
        s = xp.sum(xp.asarray(v), axis=1)
        assert "xla_array_" not in xp.debug.mlir(s)
        assert np.array_equal(np.asarray(s), np.sum(v, axis=1))  # NumPy's order, bit for bit
        print(sorted(k.kind for k in registry.KERNELS.values() if not k.available()),
              registry.context() == "")
    """, {"XLA_ARRAY_NATIVE": "0", "XLA_ARRAY_CACHE_DIR": "off"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["['blas',", "'layout',", "'lu_perm',", "'pairwise',",
                                "'pocketfft',", "'rowpass',", "'scan',", "'ufunc']", "True"]
    assert "unavailable" not in r.stderr


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_lapack_operands_copied_column_major_give_the_same_bits(dtype, monkeypatch):
    """kernels/layout.py: LAPACK's column-major operands copied by the kernel (stacks,
    single rows and columns, every dtype) give the bits XLA's own layout copies give."""
    if not layout.available():
        pytest.skip(layout.error())
    rng = np.random.default_rng(5)
    shapes = [(3, 9, 5), (5, 9), (1, 7), (6, 1), (2, 4, 4)]
    mats = [rng.standard_normal(s) + (1j * rng.standard_normal(s) if dtype[0] == "c" else 0)
            for s in shapes]
    mats = [m.astype(dtype) for m in mats]

    def run():
        out = []
        with xp.flags.using(host_first=False):
            for a in mats:
                x = xp.asarray(a) * 2  # (computed in the graph, as the kernel's operand)
                u, s, vt = xp.linalg.svd(x, full_matrices=False)
                q, r = xp.linalg.qr(x)
                out += [np.asarray(v) for v in (u, s, vt, q, r)]
                if a.shape[-1] == a.shape[-2]:
                    h = x + xp.matrix_transpose(xp.conj(x))
                    out += [np.asarray(v) for v in xp.linalg.eigh(h)]
                    shifted = x + 8 * xp.eye(a.shape[-1], dtype=x.dtype)
                    b = xp.ones(a.shape[:-1] + (1,), dtype=x.dtype)
                    out.append(np.asarray(xp.linalg.solve(shifted, b)))
        return out

    executables.clear()
    with_kernel = run()
    monkeypatch.setattr(layout._LIB, "ok", False)
    executables.clear()
    without = run()
    executables.clear()
    assert len(with_kernel) == len(without)
    for a, b in zip(with_kernel, without):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("n", [2, 300])
def test_lapack_reading_an_fft_result_runs_without_the_layout_kernel(n, monkeypatch):
    """XLA let a LAPACK call's column-major operand layout reach back into the FFT that
    computed it, whose thunk then failed (RET_CHECK in fft_thunk.cc: at compile time for a
    2 x 2 matrix, when the result was read for 300 x 300) wherever the layout kernel does
    not copy the operand; the FFT's result now goes out row-major whatever reads it."""
    monkeypatch.setattr(layout._LIB, "ok", False)
    if pocketfft.available():  # (small FFTs call NumPy's loops: XLA's FFT is the case here)
        monkeypatch.setattr(pocketfft._LIB, "ok", False)
    rng = np.random.default_rng(n)
    m = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    b = rng.standard_normal((n, 1)) + 0j
    executables.clear()
    with xp.flags.using(host_first=False):
        f = xp.fft.fft(xp.asarray(m))
        np.testing.assert_allclose(np.asarray(xp.linalg.inv(f)), np.linalg.inv(np.fft.fft(m)),
                                   rtol=1e-9, atol=1e-12)
        got = np.asarray(xp.linalg.solve(xp.fft.fft(xp.asarray(m)), xp.asarray(b)))
        np.testing.assert_allclose(got, np.linalg.solve(np.fft.fft(m), b), rtol=1e-9,
                                   atol=1e-12)
        h = xp.abs(xp.fft.fftn(xp.asarray(m))) + 4.0 * n * n * xp.eye(n)
        want = np.abs(np.fft.fftn(m)) + 4.0 * n * n * np.eye(n)
        np.testing.assert_allclose(np.asarray(xp.linalg.cholesky(h)),
                                   np.linalg.cholesky(want), rtol=1e-9)
    executables.clear()


def test_lapack_operand_steps_stay_row_major(monkeypatch):
    """With the kernel, XLA writes no column-major copy of ``X - mean`` for the SVD beside
    the row-major one the user holds; without it, layout assignment does."""
    if not layout.available():
        pytest.skip(layout.error())
    X = xp.asarray(np.random.default_rng(2).standard_normal((300, 7)))

    def column_major_steps():
        xc = X - xp.mean(X, axis=0)
        s = xp.linalg.svd(xc, full_matrices=False)[1]
        text = xp.debug.hlo(s, xc)
        return re.findall(r"= f64\[300,7\]\{0,1\} (?:fusion|copy)\(", text)

    executables.clear()
    assert column_major_steps() == []
    # operands column-major already are left to XLA: getrf's factor read by the triangular
    # solves, a transpose (a bitcast for XLA); what XLA computes is copied (A * 2, b)
    A = xp.asarray(np.eye(5) * 4 + np.random.default_rng(3).standard_normal((5, 5)))
    b = xp.ones((5, 2), dtype=A.dtype)
    assert xp.debug.mlir(xp.linalg.solve(A * 2, b)).count(layout.TARGET) == 2
    assert xp.debug.mlir(xp.linalg.solve(A.T, b)).count(layout.TARGET) == 1
    monkeypatch.setattr(layout._LIB, "ok", False)
    executables.clear()
    assert column_major_steps() != []
    executables.clear()


# row lengths: regular recursions (written with reshapes) and irregular ones (the kernel, or
# XLA's gather form without it), under 8, one block, the tail riding on a split leaf
_LENGTHS = [1, 7, 8, 10, 36, 128, 129, 200, 264, 1000, 1024, 4099, 65537]


def _rows(dtype, m, rng):
    x = rng.standard_normal((3, m)) * np.exp(rng.uniform(-12, 12, (3, m)))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal((3, m)) * np.exp(rng.uniform(-12, 12, (3, m)))
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.float16])
def test_row_sums_are_numpys_bit_for_bit_with_and_without_the_kernel(dtype, monkeypatch):
    """NumPy's pairwise order (core/ops/reductions.py, kernels/pairwise.py): values spread
    over 24 binades, so any other association of the additions shows in the last bits."""
    rng = np.random.default_rng(7)
    cases = [_rows(dtype, m, rng) for m in _LENGTHS]
    for with_kernel in (True, False):
        if not with_kernel:
            monkeypatch.setattr(pairwise._LIB, "ok", False)
            executables.clear()
        for x in cases:
            got = xp.sum(xp.asarray(x), axis=-1)
            irregular = not regular_rows(x.shape[1], 4 if x.dtype.kind == "c" else 8)
            uses = "xla_array_pairwise_sum" in xp.debug.mlir(got)
            assert uses == (with_kernel and irregular and pairwise.available()), x.shape
            np.testing.assert_array_equal(np.asarray(got), np.sum(x, axis=-1))
    executables.clear()


def _assert_within_summation_bound(got, x, axis, want, counts=None):
    """|got - want| within what summing in any order allows: each of them is within
    (n - 1) eps sum|x_i| of the exact sum of its n values (the standard bound, whatever the
    order), so they differ by at most twice that. The values span 24 binades and cancel, so
    no relative tolerance holds; this bound is the tightest the order-free result allows."""
    eps = np.finfo(np.asarray(x).real.dtype).eps
    axis = tuple(int(a) for a in np.atleast_1d(axis))
    if counts is None:  # a sum: every result adds n values
        n = int(np.prod([x.shape[a] for a in axis]))
        mags = np.sum(np.abs(x), axis=axis)
        counts = np.full(np.shape(mags), n)
    else:               # a cumulative sum: counts[k] values up to element k
        mags = np.cumsum(np.abs(x), axis=axis[0])
    bound = 2.0 * np.maximum(counts - 1, 0) * eps * mags
    diff = np.abs(np.asarray(got).astype(want.dtype) - want)
    assert np.all(diff <= bound), float(np.max(diff - bound))


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_column_sums_add_rows_in_order_with_the_kernel(dtype, monkeypatch):
    """``sum(x, axis=0)``: NumPy adds the rows one after the other. Up to SEQUENTIAL_ROWS rows
    XLA's ops write that out; more go to the column-sum kernel (NumPy's bits), or without it
    to XLA's reduction (NumPy's value up to rounding)."""
    rng = np.random.default_rng(8)
    shapes = [((9, 40), 0), ((300, 7), 0), ((50, 3, 20), (0, 2)), ((4, 30, 6), (0, 1))]
    cases = []
    for shape, axis in shapes:
        x = rng.standard_normal(shape) * np.exp(rng.uniform(-12, 12, shape))
        if np.dtype(dtype).kind == "c":
            x = x - 1j * x[::-1]
        cases.append((x.astype(dtype), axis))
    for with_kernel in (True, False):
        if not with_kernel:
            monkeypatch.setattr(pairwise._COLUMNS, "ok", False)
            executables.clear()
        for x, axis in cases:
            got = xp.sum(xp.asarray(x), axis=axis)
            axes = tuple(int(a) for a in np.atleast_1d(axis))
            long = sum_plan(x.shape, axes)[1] > SEQUENTIAL_ROWS
            kernel = with_kernel and pairwise.available() and long
            assert ("xla_array_column_sum" in xp.debug.mlir(got)) == kernel, (x.shape, axis)
            if kernel or not long:
                np.testing.assert_array_equal(np.asarray(got), np.sum(x, axis=axis))
            else:
                _assert_within_summation_bound(got, x, axis, np.sum(x, axis=axis))
    executables.clear()


@pytest.mark.skipif(not pairwise.available(), reason="pairwise-sum kernels not built")
def test_the_sum_kernels_host_rule_is_numpys_add_reduce_bit_for_bit():
    """The first-use tier's rule for the sums the kernels compute (``pairwise.host``): their
    own loops for row sums over trailing axes and rows added in order over leading ones,
    NumPy's ``add.reduce`` for the rest; zeros of both signs and values across 24 binades."""
    rng = np.random.default_rng(9)
    shapes = [(10000, 3), (3300, 16), (17, 5), (20, 1, 3), (4, 5, 6), (300, 7, 2), (129, 3),
              (1000,), (5, 200), (64, 129), (1, 1), (40, 1)]
    looped = 0
    for shape in shapes:
        for k in range(1, len(shape) + 1):
            for axes in itertools.combinations(range(len(shape)), k):
                for dtype in (np.float64, np.float32, np.complex128, np.complex64):
                    x = rng.standard_normal(shape) * np.exp(rng.uniform(-12, 12, shape))
                    if np.dtype(dtype).kind == "c":
                        x = x - 1j * x[::-1]
                    x = x.astype(dtype)
                    x.flat[::7] = -0.0
                    node = xp.sum(xp.asarray(x), axis=axes)._node
                    want = np.asarray(np.add.reduce(x, axis=axes)).reshape(node.shape)
                    got = pairwise.host(node, [x], node.attrs)
                    assert got.tobytes() == want.tobytes(), (shape, axes, dtype)
                    m, r = sum_plan(shape, axes)
                    looped += bool(m and r == 1) or (not m and r > 1)
    assert looped > 100
    # every way the column loop takes a width (running sums in registers up to 16 values a
    # row, two blocks over chunks of rows up to 32, in memory beyond; complex: twice as wide),
    # with row counts across its chunks
    for dtype in (np.float64, np.float32, np.complex128, np.complex64):
        for k in [*range(2, 41), 64, 129]:
            for rows in (2, 33, 700):
                x = rng.standard_normal((rows, k)) * np.exp(rng.uniform(-12, 12, (rows, k)))
                x = (x - 1j * x[::-1] if np.dtype(dtype).kind == "c" else x).astype(dtype)
                x[: rows // 2, 0] = -0.0
                node = xp.sum(xp.asarray(x), axis=0)._node
                got = pairwise.host(node, [x], node.attrs)
                assert got.tobytes() == np.add.reduce(x, axis=0).tobytes(), (dtype, k, rows)
    x = np.full((40, 3), -0.0)  # the identity 0.0 added after the rows
    node = xp.sum(xp.asarray(x), axis=0)._node
    assert pairwise.host(node, [x], node.attrs).tobytes() == np.zeros(3).tobytes()


@pytest.mark.skipif(not pairwise.available(), reason="pairwise-sum kernels not built")
def test_the_host_tier_takes_the_sum_kernels_loops_where_they_are_faster():
    from xla_array.core import hosteval
    X = np.random.default_rng(10).standard_normal((300, 16))
    x = xp.asarray(X)
    found = rewrite.rules()
    cases = [(xp.sum(x, axis=1), X.sum(axis=1), True),             # rows of 16: their loop
             (xp.sum(x, axis=0), X.sum(axis=0), True),             # 300 rows in order
             (xp.sum(x[:, :3], axis=1), X[:, :3].sum(axis=1), False),  # short rows: vectors
             (xp.sum(x[:10], axis=0), X[:10].sum(axis=0), False),  # 10 rows: XLA's adds
             (xp.max(x, axis=1), X.max(axis=1), False)]
    with xp.flags.using(host_first=True):
        for a, want, kernel in cases:
            rule, _ = hosteval.rule_of(a._node, found)
            assert (rule is pairwise.host) == kernel, (a.shape, kernel)
            assert np.asarray(a).tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cumulative_sums_and_products_are_numpys_with_the_kernel(dtype, monkeypatch):
    """NumPy's cumsum/cumprod add (multiply) each value into the running total in turn; XLA's
    scan associates by blocks (most results differed from NumPy's past 30 values). The scan
    kernel (kernels/scan.py) runs NumPy's order; without it, XLA's scan (NumPy's value up to
    rounding)."""
    rng = np.random.default_rng(9)
    shapes = [((31,), 0), ((2000,), 0), ((300, 7), 0), ((7, 300), 1), ((4, 50, 3), 1),
              ((1, 5), 1)]
    cases = [((rng.standard_normal(s) * np.exp(rng.uniform(-12, 12, s))).astype(dtype), a)
             for s, a in shapes]
    for with_kernel in (True, False):
        if not with_kernel:
            for lib in scan._LIBS:
                monkeypatch.setattr(lib, "ok", False)
            executables.clear()
        kernel = with_kernel and scan.available()
        for x, axis in cases:
            for initial in (False, True):
                got = xp.cumulative_sum(xp.asarray(x), axis=axis, include_initial=initial)
                want = np.cumsum(x, axis=axis)
                if initial:
                    want = np.concatenate([np.zeros_like(np.take(want, [0], axis=axis)), want],
                                          axis=axis)
                assert ("xla_array_cumsum" in xp.debug.mlir(got)) == kernel, x.shape
                if kernel:
                    np.testing.assert_array_equal(np.asarray(got), want)
                else:   # element k of the scan adds k + 1 values, in any order
                    counts = np.arange(1, x.shape[axis] + 1).reshape(
                        [-1 if a == axis else 1 for a in range(x.ndim)])
                    drop = [slice(None)] * x.ndim
                    drop[axis] = slice(1, None)
                    g = np.asarray(got)[tuple(drop)] if initial else np.asarray(got)
                    _assert_within_summation_bound(g, x, axis, np.cumsum(x, axis=axis),
                                                   counts + 0 * x.real)
            y = 1.0 + x / np.max(np.abs(x)) * 0.01  # (products near 1: no overflow)
            got = xp.cumulative_prod(xp.asarray(y), axis=axis)
            if kernel:
                np.testing.assert_array_equal(np.asarray(got), np.cumprod(y, axis=axis))
            else:
                # a product of k values in any order is within (k - 1) eps (relative, to first
                # order: the factors are near 1, no cancellation) of the exact one, so the two
                # differ by at most twice that (x 1.01 for the second-order terms)
                k = np.arange(1, y.shape[axis] + 1).reshape(
                    [-1 if a == axis else 1 for a in range(y.ndim)])
                want = np.cumprod(y, axis=axis)
                bound = 2.02 * (k - 1) * np.finfo(dtype).eps * np.abs(want)
                assert np.all(np.abs(np.asarray(got) - want) <= bound)
    executables.clear()
