"""xla_array.distributed: two processes on 127.0.0.1, differential against NumPy.

The multi-process checks run this file as a script under the launcher
(``python -m xla_array.distributed.launch -n 2 tests/test_distributed.py MODE``); each process
prints one JSON line (prefixed ``[i]`` by the launcher) that the tests read. Every subprocess
has a hard timeout, so a hang fails a test instead of blocking CI.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import traceback

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARD_TIMEOUT = 90  # seconds: the longest any subprocess of this file may run


# ------------------------------------------------------------------ subprocess side
def _values(out: dict) -> None:
    """Global arrays over 2 processes x 2 devices; every result equals NumPy's."""
    import xla_array as xp
    from xla_array import distributed as dist
    from xla_array import sharding as S
    dist.initialize()
    me, n = dist.process_index(), dist.process_count()
    out["pid"], out["count"] = me, n
    out["devices"] = [str(d) for d in dist.devices()]
    out["local"] = [str(d) for d in dist.local_devices()]
    mesh = S.make_mesh((len(dist.devices()),), ("p",))
    rows = S.NamedSharding(mesh, ("p", None))
    rng = np.random.default_rng(0)
    full = rng.standard_normal((16, 6)).astype(np.float32)  # every process knows the whole
    block = full.shape[0] // n
    X = dist.from_local(full[me * block:(me + 1) * block], rows)
    checks = {}
    checks["shape"] = X.shape == full.shape and X.device == mesh
    Y = xp.tanh(X * 2.0 + 1.0) - X / 3.0  # elementwise chain
    checks["elementwise"] = np.allclose(dist.gather(Y), np.tanh(full * 2 + 1) - full / 3,
                                        atol=1e-5)
    checks["sum_sharded_axis"] = np.allclose(dist.gather(xp.sum(X, axis=0)), full.sum(0),
                                             atol=1e-4)
    checks["max_other_axis"] = np.allclose(dist.gather(xp.max(X, axis=1)), full.max(1))
    checks["float"] = abs(float(xp.mean(X)) - float(full.mean())) < 1e-5
    checks["bool"] = bool(xp.all(X < 100.0)) is True
    checks["xtx"] = np.allclose(dist.gather(X.T @ X), full.T @ full, atol=1e-3)
    checks["gather"] = np.array_equal(dist.gather(X), full)
    checks["reshard"] = (np.array_equal(dist.gather(X.to_device(S.NamedSharding(
        mesh, (None, None)))), full))
    pieces = S.local_shards(X)
    checks["local_shards"] = ([str(d) for d, _ in pieces] == out["local"] and all(
        np.array_equal(a, full[int(str(d).split(":")[1]) * 4:][:4]) for d, a in pieces))
    # a data-parallel gradient-descent loop: one executable, whatever the number of steps
    target = rng.standard_normal(6).astype(np.float32)
    yfull = full @ target
    ylocal = dist.from_local(yfull[me * block:(me + 1) * block], S.NamedSharding(mesh, ("p",)))
    w = xp.zeros(6, device=S.NamedSharding(mesh, (None,)))
    before = xp.debug.metrics()["compiles"]
    for step in range(30):
        grad = X.T @ (X @ w - ylocal) / 16.0
        w = w - 0.5 * grad
        loss = float(xp.mean((X @ w - ylocal) ** 2))
        if step == 2:
            after_three = xp.debug.metrics()["compiles"]
    checks["gd_compiles_once"] = xp.debug.metrics()["compiles"] == after_three > before
    wn = np.zeros(6, np.float32)
    for _ in range(30):
        wn = wn - 0.5 * full.T @ (full @ wn - yfull) / 16.0
    checks["gd_values"] = np.allclose(dist.gather(w), wn, atol=1e-4) and loss < 1.0
    for name, fn, kind in [
        ("asarray_names_gather", lambda: np.asarray(X), "gather"),
        ("uneven_rejected", lambda: dist.from_local(np.ones((3, 6), np.float32), rows,
                                                    global_shape=(6, 6)), "evenly"),
        ("wrong_local_shape", lambda: dist.from_local(np.ones((5, 6), np.float32), rows,
                                                      global_shape=(16, 6)), "needs size"),
        ("remote_device_refused", lambda: float(xp.sum(xp.ones(3, device=dist.devices()[
            (me + 1) % n * 2]))),
         "belongs to process"),
        ("initialize_twice", lambda: dist.initialize(), "already"),
    ]:
        try:
            fn()
            checks[name] = False
        except (RuntimeError, ValueError) as e:
            checks[name] = kind in str(e)
    out["checks"] = checks
    out["data_dependent"] = _data_dependent(mesh, me, n)


def _data_dependent(mesh, me: int, n: int) -> dict:
    """Data-dependent shapes on global arrays (each process holds half): every result equals
    NumPy's on the whole value; "ok", or what went wrong."""
    import xla_array as xp
    from xla_array import distributed as dist
    from xla_array import sharding as S
    rows = S.NamedSharding(mesh, ("p", None))
    vec = S.NamedSharding(mesh, ("p",))
    full = np.random.default_rng(1).integers(-2, 3, (8, 3)).astype(np.float32)  # ties, zeros
    flat = full.ravel()
    X = dist.from_local(full[me * 8 // n:(me + 1) * 8 // n], rows)
    v = dist.from_local(flat[me * 24 // n:(me + 1) * 24 // n], vec)
    Z = dist.from_local(np.zeros((8 // n, 3), np.float32), rows)
    iv = np.array([7, 0, 3, 3, 5, 1, 6, 2], np.int64)
    idx = dist.from_local(iv[me * 8 // n:(me + 1) * 8 // n], vec)
    xp.materialize(idx)  # computed: its bounds are checked at once
    m = full > 0
    filled = full.copy()
    filled[m] = np.arange(m.sum())
    uv, ui, uinv, uc = np.unique(flat, return_index=True, return_inverse=True,
                                 return_counts=True)
    G = dist.gather

    def setitem_counted():
        Y = X + 0.0
        Y[Y > 0] = xp.arange(int(m.sum()), dtype=xp.float32, device=mesh)
        return Y

    def setitem_scalar():  # lazy: where(mask, 0, x), no count needed
        Y = X + 0.0
        Y[Y > 0] = 0.0
        return Y

    cases = {
        "unique_values": (lambda: G(xp.unique_values(v)), uv),
        "unique_counts": (lambda: [G(a) for a in xp.unique_counts(v)], [uv, uc]),
        "unique_inverse": (lambda: [G(a) for a in xp.unique_inverse(X)],
                           [uv, uinv.reshape(full.shape)]),
        "unique_all": (lambda: [G(a) for a in xp.unique_all(v)], [uv, ui, uinv, uc]),
        "unique_one_value": (lambda: G(xp.unique_values(Z)), np.zeros(1, np.float32)),
        "unique_held_whole": (lambda: np.asarray(xp.unique_values(v)), uv),
        "nonzero": (lambda: [G(a) for a in xp.nonzero(X)], list(np.nonzero(full))),
        "nonzero_none": (lambda: [G(a) for a in xp.nonzero(Z)],
                         [np.zeros(0, np.int64)] * 2),
        "argwhere": (lambda: G(xp.stack(xp.nonzero(X), axis=1)), np.argwhere(full)),
        "where_condition_only": (lambda: [G(a) for a in xp.where(X > 0)],
                                 list(np.nonzero(m))),
        "count_nonzero": (lambda: int(xp.count_nonzero(X)), np.count_nonzero(full)),
        "searchsorted": (lambda: G(xp.searchsorted(xp.sort(v), v, side="right")),
                         np.searchsorted(np.sort(flat), flat, side="right")),
        "repeat": (lambda: G(xp.repeat(v, xp.astype(v > 0, xp.int64) * 2)),
                   np.repeat(flat, (flat > 0) * 2)),
        "index_computed_int": (lambda: G(X[idx]), full[iv]),
        "mask": (lambda: G(X[X > 0]), full[m]),
        "mask_rows": (lambda: G(X[X[:, 0] > 0]), full[full[:, 0] > 0]),
        "mask_rows_slice": (lambda: G(X[X[:, 0] > 0, 1:]), full[full[:, 0] > 0, 1:]),
        "mask_none_true": (lambda: G(X[X > 100]), full[full > 100]),
        "mask_setitem_counted": (lambda: G(setitem_counted()), filled),
        "mask_setitem_where": (lambda: G(setitem_scalar()), np.where(m, 0, full)),
    }
    report = {}
    for name, (fn, want) in cases.items():
        try:
            got = fn()
            pairs = zip(got, want) if isinstance(want, list) else [(got, want)]
            report[name] = "ok" if all(
                np.shape(g) == np.shape(w) and np.array_equal(g, w) for g, w in pairs) \
                else f"wrong values: {got} instead of {want}"
        except Exception as e:  # noqa: BLE001  (reported to the test)
            report[name] = f"{type(e).__name__}: {e}"
    return report


def _mismatch(out: dict) -> None:
    import xla_array as xp
    from xla_array import distributed as dist
    from xla_array import sharding as S
    dist.initialize(timeout=20)
    me = dist.process_index()
    mesh = S.make_mesh((2,), ("p",))
    X = dist.from_local(np.arange(4.0, dtype=np.float32), S.NamedSharding(mesh, ("p",)))
    out["first"] = float(xp.sum(X))
    t = time.monotonic()
    try:
        y = xp.sum(X * 2.0) if me == 0 else xp.sum(xp.exp(X))  # MISMATCH-LINE
        float(y)
    except ValueError as e:
        out["error"] = str(e)
    out["seconds"] = time.monotonic() - t


def _dead_peer(out: dict) -> None:
    import xla_array as xp
    from xla_array import distributed as dist
    from xla_array import sharding as S
    dist.initialize(timeout=4)
    me = dist.process_index()
    mesh = S.make_mesh((2,), ("p",))
    X = dist.from_local(np.arange(4.0, dtype=np.float32), S.NamedSharding(mesh, ("p",)))
    out["first"] = float(xp.sum(X))
    if me == 1:
        print(json.dumps(out), flush=True)
        os._exit(7)  # dies without a word
    time.sleep(0.5)
    t = time.monotonic()
    try:
        float(xp.sum(X + 1.0))
    except RuntimeError as e:
        out["error"] = f"{type(e).__name__}: {e}"
    out["seconds"] = time.monotonic() - t


def _coordinator_dies(out: dict) -> None:
    import xla_array as xp
    from xla_array import distributed as dist
    from xla_array import sharding as S
    dist.initialize(timeout=10)
    me = dist.process_index()
    X = dist.from_local(np.arange(4.0, dtype=np.float32),
                        S.NamedSharding(S.make_mesh((2,), ("p",)), ("p",)))
    out["first"] = float(xp.sum(X))
    print(json.dumps(out), flush=True)
    if me == 0:
        os.kill(os.getpid(), 9)  # the coordinator's process is killed
    time.sleep(30)  # (process 1: ended by XLA's runtime, or by the launcher)


def _docs_example(out: dict) -> None:
    path = os.path.join(ROOT, "docs", "distributed.md")
    with open(path) as f:
        text = f.read()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, path, "exec"), {"__name__": "__main__"})


MODES = {"values": _values, "mismatch": _mismatch, "dead_peer": _dead_peer,
         "coordinator_dies": _coordinator_dies, "docs": _docs_example}


# ------------------------------------------------------------------ pytest side
def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XLA_ARRAY_")}
    env["XLA_ARRAY_CACHE_DIR"] = "off"
    return env


def _launch(mode: str, *extra: str) -> tuple[int, dict[int, dict], str]:
    cmd = [sys.executable, "-m", "xla_array.distributed.launch", "-n", "2", *extra, __file__,
           mode]
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True,
                          timeout=HARD_TIMEOUT)
    reports: dict[int, dict] = {}
    for line in proc.stdout.splitlines():
        head, _, rest = line.partition("] ")
        if rest.startswith("{") and head.startswith("["):
            reports[int(head[1:])] = json.loads(rest)
    return proc.returncode, reports, proc.stdout[-4000:] + proc.stderr[-2000:]


_VALUES: list = []


def _values_reports() -> dict[int, dict]:
    if not _VALUES:
        rc, reports, log = _launch("values", "--local-devices", "2")
        assert rc == 0 and len(reports) == 2, log
        _VALUES.append(reports)
    return _VALUES[0]


CHECK_NAMES = ["shape", "elementwise", "sum_sharded_axis", "max_other_axis", "float", "bool",
               "xtx", "gather", "reshard", "local_shards", "gd_compiles_once", "gd_values",
               "asarray_names_gather", "uneven_rejected", "wrong_local_shape",
               "remote_device_refused", "initialize_twice"]


def test_two_processes_see_every_device():
    r = _values_reports()
    assert r[0]["devices"] == r[1]["devices"] == ["cpu:0", "cpu:1", "cpu:2", "cpu:3"]
    assert r[0]["local"] == ["cpu:0", "cpu:1"] and r[1]["local"] == ["cpu:2", "cpu:3"]
    assert [r[i]["pid"] for i in (0, 1)] == [0, 1] and r[0]["count"] == 2


@pytest.mark.parametrize("name", CHECK_NAMES)
def test_two_processes(name):
    for pid, report in _values_reports().items():
        assert report.get("error") is None, report.get("error")
        assert report["checks"][name], f"process {pid}: {report['checks']}"


DATA_DEPENDENT = ["unique_values", "unique_counts", "unique_inverse", "unique_all",
                  "unique_one_value", "unique_held_whole", "nonzero", "nonzero_none", "argwhere",
                  "where_condition_only", "count_nonzero", "searchsorted", "repeat",
                  "index_computed_int", "mask", "mask_rows", "mask_rows_slice",
                  "mask_none_true", "mask_setitem_counted", "mask_setitem_where"]


@pytest.mark.parametrize("name", DATA_DEPENDENT)
def test_two_processes_data_dependent_shapes(name):
    """Values equal to NumPy's on the gathered array in every process (a device mask or a
    computed index array over several processes is gathered in the program that computes it:
    api/advanced_indexing.py)."""
    results = {pid: r["data_dependent"][name] for pid, r in _values_reports().items()}
    for pid, r in results.items():
        assert r == "ok", f"process {pid}: {r}"


def test_mismatched_programs_raise_valueerror_naming_the_line():
    rc, reports, log = _launch("mismatch")
    assert rc != 0 or len(reports) == 2, log
    assert len(reports) == 2, log
    for r in reports.values():
        assert r["first"] == 12.0, log
        assert "different program" in r.get("error", ""), log
        assert "test_distributed.py" in r["error"], r  # the user's line
        assert r["seconds"] < 15, log


def test_dead_peer_is_named_within_the_timeout():
    port = _free_port()
    procs = []
    for i in range(2):
        env = dict(_env(), XLA_ARRAY_COORDINATOR=f"127.0.0.1:{port}",
                   XLA_ARRAY_NUM_PROCESSES="2", XLA_ARRAY_PROCESS_ID=str(i))
        procs.append(subprocess.Popen([sys.executable, __file__, "dead_peer"], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=HARD_TIMEOUT))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert procs[1].returncode == 7
    line = [ln for ln in outs[0][0].splitlines() if ln.startswith("{")]
    assert line, outs[0][0][-2000:] + outs[0][1][-3000:]
    r = json.loads(line[-1])
    assert "process 1" in r["error"], r
    assert r["seconds"] < 4 + 8, r  # the timeout, plus a little


def test_launcher_ends_the_others_when_one_fails(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text("import os, sys, time\n"
                      "if os.environ['XLA_ARRAY_PROCESS_ID'] == '1':\n"
                      "    print('failing', flush=True); sys.exit(5)\n"
                      "print('waiting', flush=True); time.sleep(60)\n")
    t = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "xla_array.distributed.launch", "-n", "2",
                           str(script)], cwd=ROOT, env=_env(), capture_output=True, text=True,
                          timeout=HARD_TIMEOUT)
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "[1] failing" in proc.stdout and "[0] waiting" in proc.stdout
    assert "process 1 exited with code 5" in proc.stdout
    assert time.monotonic() - t < 30


def test_launcher_names_the_coordinator_when_it_dies():
    t = time.monotonic()
    rc, reports, log = _launch("coordinator_dies")
    assert rc == 128 + 9, log
    assert [reports[i].get("first") for i in (0, 1)] == [12.0, 12.0], log
    assert "[launch] process 0 (it hosts the coordinator) exited with signal 9 (SIGKILL)" \
        in log, log
    assert time.monotonic() - t < 25, log


def test_docs_example_runs_under_the_launcher():
    rc, _reports, log = _launch("docs")
    assert rc == 0, log
    assert "[0] sum" in log and "[1] sum" in log, log


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_RULES = r"""
import sys, time
import numpy as np
from xla_array import distributed as dist
out = {}
def expect(name, fn, exc, text):
    try:
        fn()
        out[name] = "no error"
    except exc as e:
        out[name] = "ok" if text in str(e) else f"{type(e).__name__}: {e}"
    except Exception as e:
        out[name] = f"{type(e).__name__}: {e}"
mode = sys.argv[1]
if mode == "after_array":
    import xla_array as xp
    xp.ones(3)
    expect("after_array", lambda: dist.initialize("127.0.0.1:1", 1, 0), RuntimeError,
           "before the first array")
elif mode == "bad_args":
    expect("address", lambda: dist.initialize("nohost", 2, 0), ValueError, "host:port")
    expect("pid", lambda: dist.initialize("127.0.0.1:5", 2, 2), ValueError, "process_id")
    expect("count", lambda: dist.initialize("127.0.0.1:5", 0, 0), ValueError, "num_processes")
    expect("type", lambda: dist.initialize("127.0.0.1:5", 2.0, 0), TypeError, "int")
    expect("timeout", lambda: dist.initialize("127.0.0.1:5", 2, 0, timeout=0), ValueError,
           "timeout")
    expect("platform", lambda: dist.initialize("127.0.0.1:5", 2, 0, platform="tpu"),
           ValueError, "platform")
    expect("ids_need_cuda", lambda: dist.initialize("127.0.0.1:5", 2, 0, local_device_ids=[0]),
           ValueError, "platform='cuda'")
    from xla_array.core import backend_cuda
    if backend_cuda._cuda_plugin() is None:  # (the guard; with a plugin: the GPU tests' job)
        expect("cuda_without_plugin", lambda: dist.initialize("127.0.0.1:5", 2, 0,
                                                              platform="cuda"),
               RuntimeError, "jax-cuda12-pjrt")
    out["not_initialized"] = [dist.process_index(), dist.process_count(),
                              dist.is_initialized()]
elif mode == "unreachable":
    t = time.monotonic()
    expect("unreachable", lambda: dist.initialize(sys.argv[2], 2, 1, timeout=2), TimeoutError,
           sys.argv[2])
    out["seconds"] = time.monotonic() - t
elif mode == "wrong_count":  # 3 processes declared, 2 started
    t = time.monotonic()
    expect("wrong_count", lambda: dist.initialize(sys.argv[2], 3, int(sys.argv[3]), timeout=3),
           TimeoutError, f"coordinator at {sys.argv[2]}, but not all 3 processes joined")
    out["seconds"] = time.monotonic() - t
    expect("again", lambda: dist.initialize(sys.argv[2], 3, int(sys.argv[3])), RuntimeError,
           "already")
elif mode == "single":
    dist.initialize()
    import xla_array as xp
    out["single"] = [dist.process_index(), dist.process_count(), float(xp.sum(xp.ones(4)))]
    expect("twice", lambda: dist.initialize(), RuntimeError, "already")
    dist.shutdown()
    expect("after_shutdown", lambda: dist.initialize(), RuntimeError, "already")
import json
print(json.dumps(out))
"""


def _rules(*args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", _RULES, *args], cwd=ROOT, env=_env(),
                          capture_output=True, text=True, timeout=HARD_TIMEOUT)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-3000:]
    return json.loads(lines[-1])


def test_initialize_after_the_first_array_raises():
    assert _rules("after_array") == {"after_array": "ok"}


def test_initialize_rejects_bad_arguments():
    r = _rules("bad_args")
    assert r.pop("not_initialized") == [0, 1, False]
    assert all(v == "ok" for v in r.values()), r


def test_unreachable_coordinator_is_a_timeout_naming_the_address():
    addr = f"127.0.0.1:{_free_port()}"
    r = _rules("unreachable", addr)
    assert r["unreachable"] == "ok", r
    assert r["seconds"] < 20


def test_cuda_client_needs_the_plugin(monkeypatch):
    """The multi-process CUDA path (untestable without a GPU) is guarded: no plugin, a
    RuntimeError saying what to install, before any distributed client is touched."""
    from xla_array.core import backend_cuda
    monkeypatch.setattr(backend_cuda, "_cuda_plugin", lambda: None)
    with pytest.raises(RuntimeError, match="jax-cuda12-pjrt or jax-cuda13-pjrt"):
        backend_cuda.require_cuda_plugin()
    with pytest.raises(RuntimeError, match="platform='cuda' needs jaxlib's CUDA PJRT plugin"):
        backend_cuda.distributed_cuda_client(object(), 0, 2, [0])
    assert backend_cuda.load_cuda_client() is None  # single process: silently CPU only


def test_wrong_process_count_is_a_timeout_naming_the_address():
    addr = f"127.0.0.1:{_free_port()}"
    procs = [subprocess.Popen([sys.executable, "-c", _RULES, "wrong_count", addr, str(i)],
                              cwd=ROOT, env=_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(2)]
    try:
        outs = [p.communicate(timeout=HARD_TIMEOUT) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, (so, se) in zip(procs, outs):
        lines = [ln for ln in so.splitlines() if ln.startswith("{")]
        assert p.returncode == 0 and lines, so[-2000:] + se[-3000:]
        r = json.loads(lines[-1])
        assert r["wrong_count"] == "ok" and r["again"] == "ok", r
        assert 3 <= r["seconds"] < 3 + 5, r  # the timeout, plus a little


def test_single_process_without_variables_and_twice():
    r = _rules("single")
    assert r == {"single": [0, 1, 4.0], "twice": "ok", "after_shutdown": "ok"}


if __name__ == "__main__":
    report: dict = {}
    try:
        MODES[sys.argv[1]](report)
    except Exception:  # noqa: BLE001  (reported to the test)
        report["error"] = traceback.format_exc()[-3000:]
    print(json.dumps(report), flush=True)
