"""The device model on one device: Device objects, device= everywhere, the default device, the
single-device face of xla_array.sharding, and the matmul precision setting. (Several devices:
test_sharding.py.)"""

import pickle
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xla_array as xp
from xla_array import sharding as S
from xla_array.core import backend as _backend

DEV = xp.__array_namespace_info__().devices()[0]
# the process's default device: cpu:0, or the first GPU where jaxlib's CUDA plugin is
# installed; the tests below run with the CPU as their thread's default (tests/conftest.py)
PROCESS_DEFAULT = xp.__array_namespace_info__().default_device()
GPUS = tuple(d for d in xp.__array_namespace_info__().devices() if d.platform == "cuda")
pytestmark = pytest.mark.usefixtures("on_cpu")

CREATORS = {
    "asarray": lambda d: xp.asarray([1.0, 2.0], device=d),
    "zeros": lambda d: xp.zeros((2, 3), device=d),
    "ones": lambda d: xp.ones(3, dtype=xp.int32, device=d),
    "empty": lambda d: xp.empty((2,), device=d),
    "full": lambda d: xp.full((2, 2), 7, device=d),
    "arange": lambda d: xp.arange(5, device=d),
    "linspace": lambda d: xp.linspace(0, 1, 4, device=d),
    "eye": lambda d: xp.eye(3, device=d),
    "zeros_like": lambda d: xp.zeros_like(xp.ones(2), device=d),
    "ones_like": lambda d: xp.ones_like(xp.ones(2), device=d),
    "empty_like": lambda d: xp.empty_like(xp.ones(2), device=d),
    "full_like": lambda d: xp.full_like(xp.ones(2), 3.0, device=d),
    "from_dlpack": lambda d: xp.from_dlpack(np.arange(3.0), device=d),
}


def test_device_objects():
    d = xp.Device("cpu", 0, None)
    assert d == DEV and hash(d) == hash(DEV) and d != xp.Device("cpu", 1, None)
    assert repr(DEV) == "Device('cpu', 0)" and str(DEV) == "cpu:0"
    assert pickle.loads(pickle.dumps(DEV)) is DEV
    assert {DEV: 1}[d] == 1


def test_namespace_info_devices():
    info = xp.__array_namespace_info__()
    assert info.devices() == (DEV, *GPUS)  # a tuple since 2025.12; CPU first
    assert info.default_device() == DEV  # (in this thread: tests/conftest.py's on_cpu)
    assert PROCESS_DEFAULT == (GPUS[0] if GPUS else DEV)  # the first GPU when there is one
    # CPU only, silently, without a CUDA plugin; with one, its GPUs too
    assert _backend.platforms() == ["cpu"] + (["cuda"] if GPUS else [])
    assert info.dtypes(device=DEV)["float64"] is xp.float64


@pytest.mark.parametrize("name", sorted(CREATORS))
def test_device_keyword_on_every_creation_function(name):
    mesh = S.Mesh([DEV], ("x",))
    for d in (None, DEV, "cpu", "cpu:0", S.SingleDeviceSharding(DEV)):
        x = CREATORS[name](d)
        assert x.device == DEV, (d, x.device)
        assert x.sharding == S.SingleDeviceSharding(DEV)
    x = CREATORS[name](mesh)
    assert x.device == mesh and x.sharding == S.NamedSharding(mesh, (None,) * x.ndim)
    ref = np.asarray(CREATORS[name](None))
    np.testing.assert_array_equal(np.asarray(x), ref)
    x = CREATORS[name](S.NamedSharding(mesh, ("x",) + (None,) * (ref.ndim - 1)))
    assert x.device == mesh
    np.testing.assert_array_equal(np.asarray(x), ref)


@pytest.mark.parametrize("bad", ["tpu", "cpu:3", "cpu:x", 3, object()])
def test_bad_devices_raise_value_error(bad):
    with pytest.raises(ValueError):
        xp.zeros(2, device=bad)
    with pytest.raises(ValueError):
        xp.asarray([1], device=bad)


def test_to_device_same_device_and_back():
    x = xp.arange(4.0)
    assert x.to_device(DEV) is x and x.to_device(x.device) is x
    with pytest.raises(ValueError):
        x.to_device(DEV, stream=1)
    mesh = S.Mesh([DEV], ("x",))
    y = x.to_device(S.NamedSharding(mesh, ("x",)))
    assert y.device == mesh
    z = y.to_device(DEV)
    assert z.device == DEV
    np.testing.assert_array_equal(np.asarray(z), np.arange(4.0))


def test_mixing_placements_raises_at_record_time():
    mesh = S.Mesh([DEV], ("x",))  # a 1-device mesh is its own placement, distinct from DEV
    a, b = xp.ones(3, device=DEV), xp.ones(3, device=mesh)  # both committed
    before = xp.debug.metrics()["materializations"]
    for f in (lambda: a + b, lambda: xp.where(a > 0, a, b), lambda: xp.stack([a, b]),
              lambda: xp.matmul(a, b)):
        with pytest.raises(ValueError, match="device"):
            f()
    with pytest.raises(ValueError):
        a[0] = b[1]
    assert xp.debug.metrics()["materializations"] == before  # nothing was computed
    assert np.asarray(a + 1.0).tolist() == [2.0, 2.0, 2.0]  # scalars follow the array


def test_committed_and_uncommitted_arrays():
    """JAX's rule: made without device= -> uncommitted; device=, to_device or a mesh ->
    committed; an op's result is committed when an operand is."""
    def committed(x):
        return x._node.committed
    for name, make in CREATORS.items():
        assert not committed(make(None)), name
        for d in (DEV, "cpu:0", S.SingleDeviceSharding(DEV), S.Mesh([DEV], ("x",))):
            assert committed(make(d)), (name, d)
    u = xp.asarray(np.arange(4.0))
    assert not committed(u) and not committed(xp.asarray(3.0))
    assert not committed(xp.from_dlpack(np.ones(2)))
    c = u.to_device(DEV)
    assert c is u and committed(u)  # already there: the same array, now committed
    u2 = xp.zeros(4)
    assert not committed(u2 + 1.0) and not committed(xp.sum(u2 * u2))
    c2 = xp.ones(4, device=DEV)
    assert committed(u2 + c2) and committed(c2 * 2.0) and committed(xp.stack([u2, c2]))
    assert committed(xp.zeros_like(c2)) and not committed(xp.zeros_like(u2))
    assert committed(xp.zeros_like(u2, device=DEV))
    assert committed(xp.asarray(u2, device=DEV)) and not committed(xp.asarray(xp.zeros(2)))
    # the library's own helpers (device=x.device inside) do not commit their results
    for f in (lambda x: xp.unique_values(x), lambda x: xp.tril(xp.reshape(x, (2, 2))),
              lambda x: xp.linalg.eigvalsh(xp.reshape(x, (2, 2))),
              lambda x: xp.diff(x, prepend=0.0), lambda x: xp.linspace(0.0, 1.0, 4) + x,
              lambda x: x[1:3], lambda x: xp.sort(x)):
        assert not committed(f(xp.asarray(np.array([3.0, 1.0, 1.0, 3.0])))), f
        assert committed(f(xp.asarray(np.array([3.0, 1.0, 1.0, 3.0]), device=DEV))), f
    # pickling keeps the flag
    assert committed(pickle.loads(pickle.dumps(c2)))
    assert not committed(pickle.loads(pickle.dumps(xp.zeros(2))))
    # jit: results are committed when an argument is
    f = xp.jit(lambda x: x * 2.0)
    assert not committed(f(xp.ones(2))) and committed(f(xp.ones(2, device=DEV)))


def test_uncommitted_operands_follow_a_mesh():
    mesh = S.Mesh([DEV], ("x",))
    b = xp.asarray(np.arange(3.0), device=S.NamedSharding(mesh, ("x",)))
    for u in (xp.ones(3), xp.asarray(np.ones(3)), xp.arange(3.0) * 0.0 + 1.0):
        r = u + b
        assert r.device == mesh and r._node.committed
        np.testing.assert_array_equal(np.asarray(r), np.arange(3.0) + 1)
    z = xp.zeros(3)
    z[1:] = b[:2]  # an uncommitted array takes the committed value's placement
    assert z.device == mesh
    np.testing.assert_array_equal(np.asarray(z), [0.0, 0.0, 1.0])


_TWO_DEVICES = r"""
import os
os.environ["SCIPY_ARRAY_API"] = "1"
import numpy as np
import xla_array as xp

d1 = xp.__array_namespace_info__().devices()[1]
a = np.arange(6.0).reshape(2, 3)
c1 = xp.asarray(a, device="cpu:1")                        # committed to cpu:1
c0 = xp.asarray(a, device="cpu:0")                        # committed to cpu:0


def check(x, want, device=d1):
    assert x.device == device, (x.device, device)
    np.testing.assert_allclose(np.asarray(x), want, rtol=1e-12, atol=1e-12)


# uncommitted operands (made without device=, on cpu:0) move to the committed operand's device
check(c1 + xp.ones(3), a + 1)
check(xp.zeros((2, 3)) - c1, -a)
check(c1 * xp.asarray(np.array([1.0, 2.0, 3.0])), a * [1, 2, 3])
check(xp.where(c1 > 2, xp.reshape(xp.arange(6.0), (2, 3)) * 0.5, c1), np.where(a > 2, a * 0.5, a))
check(xp.concat([xp.ones((1, 3)), c1]), np.concatenate([np.ones((1, 3)), a]))
check(xp.stack([c1, xp.full((2, 3), 7.0)]), np.stack([a, np.full((2, 3), 7.0)]))
check(xp.matmul(xp.eye(2), c1), a)
check(xp.linalg.solve(xp.asarray(np.diag([2.0, 4.0])), c1), a / [[2.0], [4.0]])
check(c1 + np.ones(3), a + 1)                             # NumPy operands follow as well
check(xp.asarray(2.0) ** c1, 2.0 ** a)
big = xp.ones(3)
for _ in range(300):                                      # a long pending graph: computed,
    big = big + 1.0                                       # then copied over
check(c1 + big, a + 301)
assert (c1 + xp.ones(3))._node.committed
# writes: an uncommitted value follows the array; an uncommitted array takes the value's device
w = xp.ones((2, 3), device="cpu:1")
w[0] = xp.asarray(np.array([5.0, 6.0, 7.0]))
check(w, [[5, 6, 7], [1, 1, 1]])
out = xp.zeros(3)
out[1:] = c1[0, :2]
check(out, [0.0, 0.0, 1.0])
# uncommitted arrays on two devices meet on the default device
with xp.using_device("cpu:1"):
    u1 = xp.ones(3)
assert u1.device == d1 and not u1._node.committed
check(u1 + xp.ones(3), np.full(3, 2.0), device=xp.__array_namespace_info__().default_device())
# a jitted function: constants made inside follow the (committed) traced argument
jf = xp.jit(lambda x: x + xp.zeros(3) + xp.asarray(np.ones(3)))
check(jf(c1), a + 1)
assert jf(c1)._node.committed and not jf(xp.ones((2, 3)))._node.committed
# decompositions computed on the default device, one of their results moved
U, sv, Vt = xp.linalg.svd(xp.asarray(np.diag([3.0, 2.0, 1.0])))
check(sv + c1, a + [3.0, 2.0, 1.0])
check(U, np.eye(3), device=xp.__array_namespace_info__().default_device())
# two committed arrays on different devices still raise
for f in (lambda: c0 + c1, lambda: xp.stack([c0, c1]), lambda: xp.concat([c1, c0]),
          lambda: xp.where(c0 > 0, c0, c1), lambda: c0 @ c1.mT):
    try:
        f()
    except ValueError as e:
        assert "different devices" in str(e), e
    else:
        raise AssertionError("mixing committed arrays of two devices did not raise")
try:
    c0[0] = c1[1]
except ValueError:
    pass
else:
    raise AssertionError("__setitem__ across committed devices did not raise")

# SciPy creates helper arrays without device=: results stay on the input's device
from scipy import special, stats
rng = np.random.default_rng(0)
h = rng.standard_normal((6, 5))
x1 = xp.asarray(h, device="cpu:1")
check(special.logsumexp(x1, axis=1), special.logsumexp(h, axis=1))
check(stats.zscore(x1), stats.zscore(h))
check(stats.ttest_1samp(x1, 0.0).statistic, stats.ttest_1samp(h, 0.0).statistic)
check(stats.pearsonr(x1[0], x1[1]).statistic, stats.pearsonr(h[0], h[1]).statistic)
check(stats.rankdata(x1), stats.rankdata(h))
print("OK")
"""


def test_uncommitted_arrays_follow_committed_ones_across_devices():
    """Several devices (a subprocess with XLA_ARRAY_CPU_DEVICES=2): helper arrays made
    without device= (as SciPy and scikit-learn make them) follow the committed input."""
    pytest.importorskip("scipy")
    import os
    env = {k: v for k, v in os.environ.items() if not k.startswith("XLA_ARRAY")}
    env.update(XLA_ARRAY_CPU_DEVICES="2", XLA_ARRAY_CACHE_DIR="off")
    out = subprocess.run([sys.executable, "-c", _TWO_DEVICES], capture_output=True,
                         text=True, env=env, timeout=600)
    assert out.returncode == 0 and out.stdout.strip().endswith("OK"), out.stdout + out.stderr


def test_using_device_context_manager():
    mesh = S.Mesh([DEV], ("x",))
    with xp.using_device(mesh) as d:
        assert d is mesh and xp.zeros(2).device == mesh
        assert xp.__array_namespace_info__().default_device() == mesh
        with xp.using_device("cpu:0"):
            assert xp.zeros(2).device == DEV
        assert xp.asarray([1.0]).device == mesh
    assert xp.zeros(2).device == DEV
    seen = []
    with xp.using_device(mesh):
        t = threading.Thread(target=lambda: seen.append(xp.zeros(1).device))
        t.start()
        t.join()
    assert seen == [PROCESS_DEFAULT]  # per thread
    with pytest.raises(ValueError):
        with xp.using_device(S.NamedSharding(mesh, ("x",))):
            pass


def test_single_device_sharding_face():
    x = xp.reshape(xp.arange(6.0), (2, 3))
    assert x.sharding == S.SingleDeviceSharding(DEV) and x.sharding.shard_shape((2, 3)) == (2, 3)
    (d, piece), = S.local_shards(x)
    assert d == DEV
    np.testing.assert_array_equal(piece, np.arange(6.0).reshape(2, 3))


def test_mesh_and_named_sharding_values():
    mesh = S.make_mesh((1,), ("x",))
    assert mesh == S.Mesh(["cpu:0"], "x") and hash(mesh) == hash(S.Mesh([DEV], ("x",)))
    assert mesh.shape == {"x": 1} and mesh.size == 1 and mesh.device_list == (DEV,)
    assert mesh != S.Mesh([DEV], ("y",))
    s = S.NamedSharding(mesh, ("x", None))
    assert s == S.NamedSharding(mesh, (("x",), None)) and s.spec == ("x", None)
    assert s.shard_shape((4, 2)) == (4, 2) and s.is_fully_replicated  # 1 piece: all copies
    assert s == S.NamedSharding(mesh, (None, None))  # lays arrays out alike
    with pytest.raises(ValueError):
        S.NamedSharding(mesh, ("z",))
    with pytest.raises(ValueError):
        S.NamedSharding(mesh, ("x", "x"))
    with pytest.raises(ValueError):
        S.make_mesh((2,), ("x",))  # only one device here
    with pytest.raises(ValueError):
        S.Mesh([DEV, DEV], ("x",))
    with pytest.raises(ValueError, match="2 entries"):
        xp.zeros(2, device=s)  # the spec needs one entry per dimension


def test_constrain_on_one_device_mesh():
    mesh = S.Mesh([DEV], ("x",))
    s = S.NamedSharding(mesh, (None, "x"))
    x = xp.ones((2, 4), device=mesh)
    y = S.constrain(x * 2, s)
    assert y.sharding == s
    np.testing.assert_array_equal(np.asarray(y), np.full((2, 4), 2.0))
    with pytest.raises(ValueError):
        S.constrain(xp.ones((2, 4)), s)  # not on the mesh
    with pytest.raises(ValueError):
        S.constrain(x, S.NamedSharding(mesh, ("x",)))  # wrong rank
    with pytest.raises(TypeError):
        S.constrain(np.ones(3), s)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["default", "high", "highest"]), st.sampled_from([(3, 4), (2, 3, 4)]),
       st.integers(0, 2**16))
def test_matmul_precision_is_exact_float32_on_cpu(precision, shape, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape[:-2] + (shape[-1], 5)).astype(np.float32)
    x, y = xp.asarray(a), xp.asarray(b)
    with xp.flags.using(matmul_precision=precision):
        r = x @ y
        t = xp.tensordot(x, y, axes=([len(shape) - 1], [len(shape) - 2]))
    with xp.flags.using(blas=False):  # (NumPy's BLAS has no such setting: XLA's dot)
        text = xp.debug.mlir(r)
    assert ("precision_config" in text) == (precision != "default")
    if precision != "default":
        assert f"precision {precision.upper()}" in text
    exact = a.astype(np.float64) @ b.astype(np.float64)
    got = np.asarray(r)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, exact, rtol=1e-5, atol=1e-5)
    with xp.flags.using(matmul_precision="default"):
        np.testing.assert_array_equal(np.asarray(x @ y), got)  # CPU ignores the setting
    assert np.asarray(t).shape == np.tensordot(a, b, axes=([len(shape) - 1],
                                                             [len(shape) - 2])).shape


def test_auto_precision_gives_float32_products_on_every_device():
    """The default setting (auto) leaves XLA's default on CPU, which is exact, and asks for
    HIGHEST elsewhere (XLA's default rounds float32 operands to TF32 on GPUs)."""
    assert xp.flags.get("matmul_precision") == "auto"
    for d in (DEV, *GPUS):
        x = xp.ones((3, 4), dtype=xp.float32, device=d)
        text = xp.debug.mlir(x @ x.T)
        assert ("precision HIGHEST" in text) == (d.platform != "cpu"), d
        np.testing.assert_array_equal(np.asarray(x @ x.T), np.full((3, 3), 4.0, np.float32))


def test_bad_precision_raises_at_record_time():
    x = xp.ones((2, 2))
    with xp.flags.using(matmul_precision="bf16"):
        with pytest.raises(ValueError, match="matmul_precision"):
            x @ x


def test_no_cuda_plugin_is_silent_and_jax_free():
    code = ("import warnings, sys; warnings.simplefilter('error')\n"
            "import xla_array as xp\n"
            "from xla_array import sharding\n"
            "print(xp.__array_namespace_info__().devices(), float(xp.sum(xp.ones(3))))\n"
            "assert 'jax' not in sys.modules\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert f"{(DEV, *GPUS)} 3.0" in out.stdout  # (on a GPU machine: computed on the GPU)
    assert "warn" not in out.stderr.lower(), out.stderr


def test_cpu_device_count_from_environment():
    code = ("import xla_array as xp\n"
            "print(sum(d.platform == 'cpu' for d in xp.__array_namespace_info__().devices()))\n")
    env = {"XLA_ARRAY_CPU_DEVICES": "3", "PATH": "/usr/bin:/bin"}
    import os
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("XLA_ARRAY")}, **env}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env)
    assert out.stdout.strip() == "3"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sum(d.platform == "cpu" for d in xp.__array_namespace_info__().devices()) == 1
