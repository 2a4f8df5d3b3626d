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


def _docs_example(out: dict) -> None:
    path = os.path.join(ROOT, "docs", "distributed.md")
    with open(path) as f:
        text = f.read()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, path, "exec"), {"__name__": "__main__"})


MODES = {"values": _values, "mismatch": _mismatch, "dead_peer": _dead_peer,
         "docs": _docs_example}


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
    out["not_initialized"] = [dist.process_index(), dist.process_count(),
                              dist.is_initialized()]
elif mode == "unreachable":
    t = time.monotonic()
    expect("unreachable", lambda: dist.initialize(sys.argv[2], 2, 1, timeout=2), TimeoutError,
           sys.argv[2])
    out["seconds"] = time.monotonic() - t
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
