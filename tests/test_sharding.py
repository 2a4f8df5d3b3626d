"""Sharding on several CPU devices, differential against NumPy.

The pytest process has one device, so the checks run in two subprocesses (this file run as a
script with ``XLA_ARRAY_CPU_DEVICES`` = 4 and 8, set before import); each prints a JSON report
and the tests below assert on it, one test per check.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import traceback
import warnings

import numpy as np
import pytest

# meshes of several CPU devices: the CPU is the default device, on a GPU machine too
pytestmark = pytest.mark.usefixtures("on_cpu")

CHECKS: dict[str, object] = {}
ONLY_4 = {"derived_layout", "default_device_env", "compile_cache",
          "jax_not_imported"}


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


# ------------------------------------------------------------------ helpers (subprocess side)
def _setup():
    import xla_array as xp
    from xla_array import sharding as S
    n = sum(d.platform == "cpu" for d in xp.__array_namespace_info__().devices())
    if n == 8:  # (the 1-d mesh is covered with 4 devices)
        meshes = {"2d": S.make_mesh((2, 4), ("x", "y")),
                  "3d": S.make_mesh((2, 2, 2), ("x", "y", "z"))}
    else:
        meshes = {"1d": S.make_mesh((n,), ("x",)), "2d": S.make_mesh((2, n // 2), ("x", "y"))}
    meshes["first"] = next(iter(meshes.values()))
    return xp, S, n, meshes


def _meshes(meshes):
    return [m for k, m in meshes.items() if k != "first"]


def _specs(mesh, ndim):
    """Every spec putting each mesh axis on at most one dimension (axes in mesh order)."""
    names = mesh.axis_names
    out = [(None,) * ndim]
    for a in names:
        for d in range(ndim):
            out.append(tuple(a if i == d else None for i in range(ndim)))
    if len(names) >= 2 and ndim >= 2:
        out.append((names[0], names[1]) + (None,) * (ndim - 2))
        out.append((names[1], names[0]) + (None,) * (ndim - 2))
        out.append(((names[0], names[1]),) + (None,) * (ndim - 1))
    if len(names) == 3 and ndim >= 2:
        out.append(((names[2], names[0]), names[1]) + (None,) * (ndim - 2))
    return out


def _data(shape, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-50, 50, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _close(got, want, rtol=1e-12, atol=1e-12):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def _expected_piece(a, mesh, spec, coord):
    """The block of ``a`` that the device at mesh coordinate ``coord`` must hold."""
    sizes = mesh.shape
    pos = {name: i for i, name in enumerate(mesh.axis_names)}
    index = []
    for n, entry in zip(a.shape, spec):
        names = () if entry is None else (entry,) if isinstance(entry, str) else entry
        k, t = 0, 1
        for name in names:
            k = k * sizes[name] + coord[pos[name]]
            t *= sizes[name]
        index.append(slice(k * (n // t), (k + 1) * (n // t)))
    return a[tuple(index)]


# ------------------------------------------------------------------ checks (subprocess side)
@check
def shard_shapes_and_pieces():
    xp, S, n, meshes = _setup()
    for mesh in _meshes(meshes):
        for shape in [(8, 16), (8, 4, 8)]:
            a = _data(shape)
            for spec in _specs(mesh, len(shape)):
                s = S.NamedSharding(mesh, spec)
                x = xp.asarray(a, device=s)
                assert x.device == mesh and x.sharding == s, (x.device, x.sharding)
                pieces = S.local_shards(x)
                assert [d for d, _ in pieces] == list(mesh.device_list)
                for (_d, p), coord in zip(pieces, np.ndindex(*mesh.devices.shape)):
                    assert p.shape == s.shard_shape(shape), (spec, p.shape)
                    np.testing.assert_array_equal(p, _expected_piece(a, mesh, spec, coord))
                np.testing.assert_array_equal(np.asarray(x), a)


@check
def creation_with_named_sharding():
    xp, S, n, meshes = _setup()
    mesh = meshes["2d"]
    s2 = S.NamedSharding(mesh, ("x", "y"))
    s1 = S.NamedSharding(mesh, ("y",))
    cases = [
        (xp.zeros((4, 8), device=s2), np.zeros((4, 8))),
        (xp.ones((4, 8), dtype=xp.int32, device=s2), np.ones((4, 8), np.int32)),
        (xp.full((4, 8), 2.5, device=s2), np.full((4, 8), 2.5)),
        (xp.arange(8, device=s1), np.arange(8)),
        (xp.linspace(0.0, 1.0, 8, device=s1), np.linspace(0.0, 1.0, 8)),
        (xp.eye(4, 8, k=1, device=s2), np.eye(4, 8, k=1)),
        (xp.zeros_like(xp.zeros((4, 8)), device=s2), np.zeros((4, 8))),
        (xp.asarray([[1, 2], [3, 4]], device=S.NamedSharding(mesh, ("x", None))),
         np.array([[1, 2], [3, 4]])),
    ]
    xp.materialize(*[c[0] for c in cases])
    for got, want in cases:
        assert got.sharding.mesh == mesh
        np.testing.assert_array_equal(np.asarray(got), want)
        for _d, p in S.local_shards(got):
            assert p.shape == got.sharding.shard_shape(want.shape), (p.shape, got.sharding)
    assert xp.zeros((4, 8), device=s2).sharding == s2  # known without computing
    with xp.using_device(mesh):
        z = xp.zeros(3)
    assert z.device == mesh and np.asarray(z).tolist() == [0.0, 0.0, 0.0]
    try:
        xp.zeros((3, 8), device=s2)
    except ValueError as e:
        assert "(3, 8)" in str(e)
    else:
        raise AssertionError("an uneven split must raise ValueError")


@check
def elementwise():
    from hypothesis import given, settings
    from hypothesis import strategies as st
    xp, S, n, meshes = _setup()
    ops = [
        (lambda a, b: a * b + 2.0, lambda a, b: a * b + 2.0),
        (lambda a, b: a - b / 3.0, lambda a, b: a - b / 3.0),
        (lambda a, b: xp.where(a > b, a, -b), lambda a, b: np.where(a > b, a, -b)),
        (lambda a, b: xp.maximum(a, 0.5) * xp.abs(b), lambda a, b: np.maximum(a, 0.5) * np.abs(b)),
        (lambda a, b: xp.sin(a) + xp.exp(b), lambda a, b: np.sin(a) + np.exp(b)),
    ]
    shape = (8, 16)

    @settings(max_examples=15, deadline=None, derandomize=True)
    @given(st.sampled_from([k for k in sorted(meshes) if k != "first"]), st.integers(0, 20),
           st.integers(0, 20),
           st.integers(0, len(ops) - 1))
    def prop(mname, i, j, k):
        mesh = meshes[mname]
        specs = _specs(mesh, 2)
        sa, sb = specs[i % len(specs)], specs[j % len(specs)]
        a, b = _data(shape, 1), _data(shape, 2)
        x = xp.asarray(a, device=S.NamedSharding(mesh, sa))
        y = xp.asarray(b, device=S.NamedSharding(mesh, sb))
        f, g = ops[k]
        outs = [f(x, y), -x, x == y]
        xp.materialize(*outs)
        _close(outs[0], g(a, b), rtol=1e-13)
        _close(outs[1], -a)
        _close(outs[2], a == b)

    prop()


@check
def reductions_each_axis():
    xp, S, n, meshes = _setup()
    a = _data((8, 4, 8), 3)
    ai = _data((8, 4, 8), 4, np.int64)
    for mesh in _meshes(meshes):
        for spec in _specs(mesh, 3)[:6]:
            s = S.NamedSharding(mesh, spec)
            x, xi = xp.asarray(a, device=s), xp.asarray(ai, device=s)
            got, want = [], []
            for axis in (0, 1, 2, None, (0, 2)):  # one program computes them all
                got += [xp.sum(x, axis=axis), xp.max(xi, axis=axis),
                        xp.mean(x, axis=axis, keepdims=True)]
                want += [np.sum(a, axis=axis), np.max(ai, axis=axis),
                         np.mean(a, axis=axis, keepdims=True)]
            got += [xp.argmax(x, axis=1), xp.cumulative_sum(xi, axis=0), xp.prod(x, axis=2)]
            want += [np.argmax(a, axis=1), np.cumsum(ai, axis=0), np.prod(a, axis=2)]
            xp.materialize(*got)
            for g, w in zip(got, want):
                _close(g, w, rtol=1e-12)


@check
def reduction_over_sharded_axis_uses_a_collective():
    xp, S, n, meshes = _setup()
    mesh = meshes["first"]
    x = xp.asarray(_data((16, 8)), device=S.NamedSharding(mesh, ("x", None)))
    text = xp.debug.hlo(xp.sum(x, axis=0))
    assert "all-reduce" in text, text[:2000]


@check
def matmul_replicated_and_sharded():
    xp, S, n, meshes = _setup()
    a, b = _data((8, 16), 5), _data((16, 8), 6)
    af, bf = a.astype(np.float32), b.astype(np.float32)
    for mesh in _meshes(meshes):
        x_, y_ = mesh.axis_names[0], mesh.axis_names[-1]
        combos = [((None, None), (None, None)), ((x_, None), (None, None)),
                  ((None, None), (None, y_)), ((None, x_), (x_, None)),
                  ((x_, y_), (y_, None)) if x_ != y_ else ((x_, None), (None, x_)),
                  ((None, (x_, y_) if x_ != y_ else x_), ((x_, y_) if x_ != y_ else x_, None))]
        for sa, sb in combos:
            x = xp.asarray(a, device=S.NamedSharding(mesh, sa))
            y = xp.asarray(b, device=S.NamedSharding(mesh, sb))
            xf = xp.asarray(af, device=S.NamedSharding(mesh, sa))
            yf = xp.asarray(bf, device=S.NamedSharding(mesh, sb))
            v = xp.asarray(b[:, 0], device=S.NamedSharding(mesh, (x_,)))
            with xp.flags.using(matmul_precision="highest"):
                high = xf @ yf
            got = [x @ y, xp.matmul(x.T, x), x @ v, xp.tensordot(x, y, axes=1), xf @ yf, high]
            xp.materialize(*got)
            for g, w in zip(got, [a @ b, a.T @ a, a @ b[:, 0], np.tensordot(a, b, axes=1)]):
                _close(g, w, rtol=1e-12)
            for g in got[4:]:  # float32 on CPU is exact float32 (vs a float64 reference)
                assert np.asarray(g).dtype == np.float32
                np.testing.assert_allclose(np.asarray(g), a @ b, rtol=2e-5, atol=2e-5)


@check
def indexing_and_setitem():
    xp, S, n, meshes = _setup()
    a = _data((8, 16), 7)
    keys = [np.s_[3], np.s_[1:7], np.s_[::-1], np.s_[2:8:3, 5], np.s_[..., 3:13:2],
            np.s_[-1, ::-2], np.s_[None, 4]]
    for mesh in _meshes(meshes):
        for spec in _specs(mesh, 2)[:4]:
            s = S.NamedSharding(mesh, spec)
            x = xp.asarray(a, device=s)
            idx = np.array([7, 0, 3, 3])
            got = [x[k] for k in keys] + [x[xp.asarray(idx, device=mesh)], x[:, idx]]
            xp.materialize(*got)
            for g, w in zip(got, [a[k] for k in keys] + [a[idx], a[:, idx]]):
                np.testing.assert_array_equal(np.asarray(g), w)
            m = a > 0.3
            np.testing.assert_array_equal(np.asarray(x[xp.asarray(m, device=s)]), a[m])
            y, b = xp.asarray(a, device=s), a.copy()
            y[2:6, ::3] = -1.0
            b[2:6, ::3] = -1.0
            y[0] = xp.asarray(a[1], device=mesh)
            b[0] = a[1]
            y[xp.asarray(a < -1.0, device=s)] = 0.0
            b[a < -1.0] = 0.0
            y[:, 3] = y[:, 4] * 2
            b[:, 3] = b[:, 4] * 2
            np.testing.assert_array_equal(np.asarray(y), b)
            assert y.device == mesh


@check
def in_place_updates_donate_sharded_buffers():
    """x += 1 on a computed sharded array writes into its own shards (donation), values stay
    right, and a zero-copy host view of the old value keeps it."""
    xp, S, n, meshes = _setup()
    a = _data((64, 32), 11)
    with xp.flags.using(donate_min_bytes=1024):
        for mesh in _meshes(meshes):
            s = S.NamedSharding(mesh, (mesh.axis_names[0], None))
            x = xp.asarray(a, device=s) * 1.0
            xp.materialize(x)
            for _ in range(3):
                x += 1.0
                xp.materialize(x)
            x[::2] = 0.0
            b = a * 1.0
            for _ in range(3):
                b += 1.0
            b[::2] = 0.0
            view = np.asarray(x, copy=False)
            x += 1.0
            xp.materialize(x)
            np.testing.assert_array_equal(view, b)
            np.testing.assert_array_equal(np.asarray(x), b + 1.0)
            assert x.sharding == s


@check
def resharding_with_to_device():
    xp, S, n, meshes = _setup()
    a = _data((8, 16), 8)
    for mesh in _meshes(meshes):
        specs = _specs(mesh, 2)
        x = xp.asarray(a, device=S.NamedSharding(mesh, specs[1]))
        for spec in specs:
            s = S.NamedSharding(mesh, spec)
            y = x.to_device(s)
            assert y.sharding == s
            z = (y * 2).to_device(S.NamedSharding(mesh, specs[-1]))
            xp.materialize(y, z)
            np.testing.assert_array_equal(np.asarray(y), a)
            for _d, p in S.local_shards(y):
                assert p.shape == s.shard_shape(a.shape)
            np.testing.assert_array_equal(np.asarray(z), a * 2)
        assert x.to_device(mesh) is x and x.to_device(x.sharding) is x
        one = x.to_device("cpu:1")
        assert str(one.device) == "cpu:1"
        np.testing.assert_array_equal(np.asarray(one), a)
        back = one.to_device(S.NamedSharding(mesh, specs[2]))
        np.testing.assert_array_equal(np.asarray(back), a)
        assert back.sharding == S.NamedSharding(mesh, specs[2])
    other = meshes["2d"]
    x = xp.asarray(a, device=S.NamedSharding(_meshes(meshes)[-1], ("x", None)))
    y = x.to_device(S.NamedSharding(other, (None, "y")))
    np.testing.assert_array_equal(np.asarray(y), a)
    np.testing.assert_array_equal(np.asarray(y + 1), a + 1)
    c0 = xp.asarray(a, device="cpu:0")
    c2 = c0.to_device("cpu:2")
    assert str(c2.device) == "cpu:2" and str(c2.to_device("cpu:0").device) == "cpu:0"
    np.testing.assert_array_equal(np.asarray(c2.to_device("cpu:0") + c0), a * 2)


@check
def mixing_devices_raises():
    xp, S, n, meshes = _setup()
    m1, m2 = _meshes(meshes)[:2]
    a = _data((8, 8))
    x1 = xp.asarray(a, device=S.NamedSharding(m1, ("x", None)))
    x2 = xp.asarray(a, device=S.NamedSharding(m2, ("x", None)))
    c0, c1 = xp.asarray(a, device="cpu:0"), xp.asarray(a, device="cpu:1")
    for p, q in [(x1, x2), (x1, c0), (c0, c1), (c1, x2)]:
        for f in (lambda p, q: p + q, lambda p, q: p @ q, lambda p, q: xp.where(p > 0, p, q),
                  lambda p, q: xp.concat([p, q])):
            try:
                f(p, q)
            except ValueError as e:
                assert "device" in str(e), str(e)
            else:
                raise AssertionError(f"mixing {p.device} and {q.device} did not raise")
        try:
            p[0] = q[1]
        except ValueError:
            pass
        else:
            raise AssertionError("__setitem__ across devices did not raise")
    try:
        S.constrain(x1, S.NamedSharding(m2, ("x", None)))
    except ValueError:
        pass
    else:
        raise AssertionError("constrain() onto another mesh did not raise")
    # arrays on one mesh mix whatever their layouts; .device compares equal
    y1 = xp.asarray(a, device=S.NamedSharding(m1, (None, "x")))
    assert y1.device == x1.device and (x1 + y1).device == m1
    np.testing.assert_array_equal(np.asarray(x1 + y1), a + a)


@check
def constrain_intermediate():
    xp, S, n, meshes = _setup()
    mesh = meshes["2d"]
    a = _data((8, 16), 9)
    x = xp.asarray(a, device=S.NamedSharding(mesh, ("x", None)))
    s = S.NamedSharding(mesh, (None, ("x", "y")))
    h = S.constrain(xp.tanh(x) * 2, s)
    assert h.is_pending and h.sharding == s  # known without computing
    out = xp.sum(h * h, axis=1)
    _close(out, np.sum((np.tanh(a) * 2) ** 2, axis=1), rtol=1e-12)
    hlo = xp.debug.hlo(S.constrain(x + 1, s))
    # jaxlib 0.10 prints the layout; 0.12 prints the partitioned per-device program
    assert "sharding={devices=" in hlo or f"[8,{16 // n}]" in hlo, hlo[:2000]
    assert h.sharding == s and not h.is_pending
    for _d, p in S.local_shards(h):
        assert p.shape == (8, 16 // n)


@check
def data_dependent_and_dtypes():
    xp, S, n, meshes = _setup()
    mesh = meshes["first"]
    s = S.NamedSharding(mesh, ("x",))
    a = _data((16,), 10)
    x = xp.asarray(a, device=s)
    np.testing.assert_array_equal(np.asarray(xp.nonzero(x > 0)[0]), np.nonzero(a > 0)[0])
    np.testing.assert_array_equal(np.asarray(xp.sort(x)), np.sort(a))
    total = xp.sum(x)
    assert abs(float(total) - np.sum(a)) < 1e-12
    assert [p.shape for _d, p in S.local_shards(total)] == [()] * n  # 0-d: one copy each
    c = xp.asarray(3.0, device=mesh)
    assert c.shape == () and float(c * x[0]) == 3.0 * a[0]
    import ml_dtypes
    for dt, npdt in [(xp.bfloat16, ml_dtypes.bfloat16), (xp.float32, np.float32),
                     (xp.int8, np.int8), (xp.bool, np.bool_), (xp.complex64, np.complex64)]:
        host = (a * 3).astype(npdt)
        y = xp.asarray(host, device=s)
        got = np.asarray(y * 2 if dt is not xp.bool else ~y)
        want = host * 2 if dt is not xp.bool else ~host
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.astype(np.float64) if dt is xp.bfloat16 else got,
                                      want.astype(np.float64) if dt is xp.bfloat16 else want)
        assert [p.dtype for _d, p in S.local_shards(y * 1 if dt is not xp.bool else ~y)] == \
            [np.dtype(npdt)] * n


@check
def derived_layout():
    """A layout XLA may pick that the mesh axes cannot name (an axis split in two)."""
    xp, S, n, meshes = _setup()
    from xla_array.api.array import Array
    from xla_array.core import backend_spmd as _backend_spmd
    from xla_array.core.graph import buffer_leaf
    mesh = meshes["first"]
    a = _data((6, 3), 11)
    hs = _backend_spmd.hlo("{devices=[2,1,2]<=[4] last_tile_dim_replicate}")
    buf = _backend_spmd.put_global(a, tuple(d._pjrt for d in mesh.device_list), hs)
    x = Array(buffer_leaf(buf, a.shape, xp.float64, mesh))
    sh = x.sharding
    assert sh.mesh != mesh and set(sh.mesh.device_list) == set(mesh.device_list), sh
    assert [p.shape for _d, p in S.local_shards(x)] == [(3, 3)] * 4
    y = xp.asarray(_data((6, 3), 12), device=S.NamedSharding(mesh, (None, None)))
    np.testing.assert_array_equal(np.asarray(x * 2 + y), a * 2 + _data((6, 3), 12))
    np.testing.assert_array_equal(np.asarray(x), a)


@check
def compile_cache():
    xp, S, n, meshes = _setup()
    mesh = meshes["first"]
    s = S.NamedSharding(mesh, ("x", None))
    t = S.NamedSharding(mesh, (None, "x"))

    def f(x):
        return float(xp.sum(xp.exp(x) * 3.0))

    f(xp.asarray(_data((8, 8), 1), device=s))
    xp.debug.reset_metrics()
    for seed in range(3):
        f(xp.asarray(_data((8, 8), seed), device=s))
    assert xp.debug.metrics()["cache_misses"] == 0, xp.debug.metrics()
    f(xp.asarray(_data((8, 8), 1), device=t))  # another layout: another program
    assert xp.debug.metrics()["cache_misses"] == 1, xp.debug.metrics()


@check
def default_device_env():
    xp, S, n, meshes = _setup()
    d = xp.__array_namespace_info__().default_device()
    assert str(d) == "cpu:1", d
    assert str(xp.zeros(3).device) == "cpu:1" and str(xp.asarray([1]).device) == "cpu:1"
    with xp.using_device("cpu:2"):
        assert str(xp.arange(3).device) == "cpu:2"
    assert str(xp.ones(2).device) == "cpu:1"
    assert sum(d.platform == "cpu" for d in xp.__array_namespace_info__().devices()) == n


@check
def jax_not_imported():
    assert "jax" not in sys.modules, [m for m in sys.modules if m.startswith("jax.")][:5]
    # the pytest side put a fake jax first on the path, which records its import: so this
    # check can fail where jax is not installed too
    import importlib.util
    spec = importlib.util.find_spec("jax")
    mark = os.environ.get("FAKE_JAX_MARK", "")
    assert spec is not None and os.path.dirname(os.path.dirname(spec.origin or "")) == \
        os.path.dirname(mark), f"the fake jax is not the one found: {spec}"
    assert not os.path.exists(mark), "xla_array imported jax"


def _run_all(names):
    warnings.simplefilter("error")  # CUDA discovery (absent here) and the rest stay quiet
    report = {}
    for name in names:
        try:
            CHECKS[name]()
            report[name] = {"ok": True}
        except BaseException:  # noqa: BLE001 - reported to the parent test
            report[name] = {"ok": False, "detail": traceback.format_exc()[-3000:]}
    return report


# ------------------------------------------------------------------ pytest side
_REPORTS: dict[int, dict] = {}


def _report(ndev: int) -> dict:
    if ndev not in _REPORTS:
        env = {k: v for k, v in os.environ.items() if not k.startswith("XLA_ARRAY_")}
        env["XLA_ARRAY_CPU_DEVICES"] = str(ndev)
        # (cpu:0 for 8 devices: the CPU also where a GPU would be the default)
        env["XLA_ARRAY_DEFAULT_DEVICE"] = "cpu:1" if ndev == 4 else "cpu:0"
        names = [k for k in CHECKS if ndev == 4 or k not in ONLY_4]
        fake = tempfile.mkdtemp(prefix="fake_jax_")   # see jax_not_imported
        os.makedirs(os.path.join(fake, "jax"))
        with open(os.path.join(fake, "jax", "__init__.py"), "w") as f:
            f.write("import os\nopen(os.environ['FAKE_JAX_MARK'], 'a').close()\n"
                    "raise ImportError('the tests\\' fake jax')\n")
        env["FAKE_JAX_MARK"] = os.path.join(fake, "jax_imported")
        env["PYTHONPATH"] = os.pathsep.join([fake, *filter(None, [env.get("PYTHONPATH")])])
        proc = subprocess.run([sys.executable, __file__, *names], env=env, capture_output=True,
                              text=True, timeout=900)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        assert proc.returncode == 0 and lines, proc.stdout[-3000:] + proc.stderr[-3000:]
        _REPORTS[ndev] = json.loads(lines[-1])
    return _REPORTS[ndev]


@pytest.mark.parametrize("ndev", [4, 8])
@pytest.mark.parametrize("name", list(CHECKS))
def test_sharding(ndev, name):
    if ndev == 8 and name in ONLY_4:
        pytest.skip("checked with 4 devices")
    result = _report(ndev)[name]
    assert result["ok"], result.get("detail")


if __name__ == "__main__":
    print(json.dumps(_run_all(sys.argv[1:] or list(CHECKS))))
