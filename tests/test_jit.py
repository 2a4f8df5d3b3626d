"""Explicit compilation: jit, compile, cached, donation, serialization across processes."""

import os
import subprocess
import sys

import numpy as np
import pytest

import xla_array as xp


@xp.jit
def step(w, X, y, lr):
    return w - lr * (X.T @ (X @ w - y))


def _data():
    rng = np.random.default_rng(3)
    return (rng.standard_normal((50, 4)), rng.standard_normal(50), np.zeros(4))


def test_jit_matches_numpy_and_compiles_once_per_signature(metrics):
    Xn, yn, wn = _data()
    X, y, w = xp.asarray(Xn), xp.asarray(yn), xp.asarray(wn)
    for i in range(5):
        lr = 0.01 / (i + 1)  # a traced scalar: new values never retrace
        w = step(w, X, y, lr)
        wn = wn - lr * (Xn.T @ (Xn @ wn - yn))
    np.testing.assert_allclose(np.asarray(w), wn, rtol=1e-12)
    assert metrics()["compiles"] == 1
    assert xp.cached(step, w, X, y, 0.5)
    assert not xp.cached(step, w[:2], X[:, :2], y, 0.5)


def test_pytrees_static_args_and_constants():
    c = xp.asarray(np.array([10.0, 20.0]))

    @xp.jit(static_argnums=1)
    def f(d, power):
        return {"p": d["a"] ** power + c, "n": (d["b"] * 2, "tag")}

    a, b = xp.asarray(np.array([1.0, 2.0])), xp.asarray(np.array([3, 4], dtype=np.int32))
    r = f({"a": a, "b": b}, 3)
    np.testing.assert_array_equal(np.asarray(r["p"]), [11.0, 28.0])
    assert r["n"][1] == "tag" and r["n"][0].dtype == xp.int32
    r2 = f({"a": a, "b": b}, 2)
    np.testing.assert_array_equal(np.asarray(r2["p"]), [11.0, 24.0])


def test_traced_values_cannot_be_materialized_or_used_in_python():
    x = xp.asarray(np.ones(1))
    with pytest.raises(TypeError, match="jit"):
        xp.jit(lambda v: v * 2 if float(v) > 0 else v)(x)
    with pytest.raises(TypeError, match="static_argnums"):
        xp.jit(lambda v, s: v * (s + 1))(x, 2.0)


def test_donation_invalidates_the_argument():
    f = xp.jit(lambda v: v * 2.0 + 1.0, donate_argnums=0)
    x = xp.asarray(np.arange(3.0))
    y = f(x)
    np.testing.assert_array_equal(np.asarray(y), [1.0, 3.0, 5.0])
    with pytest.raises(RuntimeError, match="donated"):
        np.asarray(x + 1)


def test_compile_ahead_of_time_and_introspection():
    x = xp.asarray(np.ones((8, 8), np.float32))
    with xp.flags.using(blas=False):  # (XLA's cost analysis counts its own dot's flops)
        c = xp.compile(lambda a: xp.sum(a @ a), x)
    assert "stablehlo.dot_general" in c.as_text()
    assert c.cost()["flops"] >= 2 * 8 * 8 * 8
    assert c.memory()["argument_bytes"] == 8 * 8 * 4
    assert float(c(x)) == 8 * 8 * 8
    with pytest.raises(TypeError, match="compiled for other"):
        c(xp.asarray(np.ones((4, 4), np.float32)))


SCRIPT = """
import sys, numpy as np, xla_array as xp
f = xp.deserialize(open(sys.argv[1], "rb").read())
out = f(xp.asarray(np.arange(4.0)), 3.0)
m = xp.debug.metrics()
print(np.asarray(out).tolist(), m["compiles"])
"""


def test_serialized_function_runs_in_another_process_without_compiling(tmp_path):
    k = xp.asarray(np.array([1.0, 1.0, 2.0, 2.0]))
    c = xp.compile(lambda v, s: v * s + k, xp.asarray(np.zeros(4)), 1.0)
    blob = c.serialize()
    path = tmp_path / "fn.bin"
    path.write_bytes(blob)
    r = subprocess.run([sys.executable, "-c", SCRIPT, str(path)], capture_output=True,
                       text=True, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[1.0, 4.0, 8.0, 11.0] 0"
    with pytest.raises(ValueError, match="checksum"):
        xp.deserialize(blob[:-5])
    with pytest.raises(ValueError, match="not a serialized"):
        xp.deserialize(b"junk")


def test_a_deserialized_function_raises_its_index_check():
    """The check outputs of a serialized function keep their op's attributes: an index out of
    bounds is NumPy's IndexError where the function is loaded, as where it was traced."""
    x = xp.asarray(np.arange(5.0))
    c = xp.compile(lambda v, i: xp.take(v, i), x, xp.asarray(np.array([0, 4])))
    f = xp.deserialize(c.serialize())
    np.testing.assert_array_equal(np.asarray(f(x, xp.asarray(np.array([4, 1])))), [4.0, 1.0])
    with pytest.raises(IndexError, match="out of bounds"):
        np.asarray(f(x, xp.asarray(np.array([0, 5]))))


SOLVE_SCRIPT = """
import sys, numpy as np, xla_array as xp
f = xp.deserialize(open(sys.argv[1], "rb").read())
a = np.random.default_rng(0).standard_normal((4, 4)) + 4 * np.eye(4)
b = np.arange(8.0).reshape(4, 2)
out = np.asarray(f(xp.asarray(a, device="cpu"), xp.asarray(b, device="cpu")))
print(float(np.abs(out - np.linalg.solve(a, b)).max()), xp.debug.metrics()["compiles"])
"""


def test_serialized_solve_registers_its_native_kernel_in_the_new_process(tmp_path):
    """solve calls the LU permutation kernel (on CPU): a process that only loads the function
    must build and register it before loading (it recorded no solve that would have)."""
    a = np.random.default_rng(0).standard_normal((4, 4)) + 4 * np.eye(4)
    b = np.arange(8.0).reshape(4, 2)
    c = xp.compile(lambda a, b: xp.linalg.solve(a, b), xp.asarray(a, device="cpu"),
                   xp.asarray(b, device="cpu"))
    assert "xla_array_lu_perm" in c.as_text()
    path = tmp_path / "solve.bin"
    path.write_bytes(c.serialize())
    out = subprocess.run([sys.executable, "-c", SOLVE_SCRIPT, str(path)], check=True,
                         capture_output=True, text=True, env=dict(os.environ)).stdout
    err, compiles = out.split()
    assert float(err) < 1e-12 and compiles == "0"


def test_jit_of_an_elementwise_function_with_many_scalars():
    """A jitted graph passes each scalar on its own, also where a materialization of the same
    ops would pack them (scalars.packs_scalars): compile and run must agree on that."""
    from xla_array.core.scalars import PACK_MIN

    def f(m, x):
        for i in range(PACK_MIN + 2):
            x = x * (1.0 + 0.1 * i) + 0.25
        return x

    a = np.linspace(-1, 1, 6)
    np.testing.assert_allclose(np.asarray(xp.jit(lambda x: f(xp, x))(xp.asarray(a))),
                               f(np, a), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(f(xp, xp.asarray(a))), f(np, a), rtol=1e-12)
