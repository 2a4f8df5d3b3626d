"""``python -m xla_array.distributed.launch -n N [--local-devices K] [--platform cuda]
script.py [args]``

Starts N processes of ``script.py`` on this machine with ``XLA_ARRAY_COORDINATOR`` (127.0.0.1
and a free port), ``XLA_ARRAY_NUM_PROCESSES`` and ``XLA_ARRAY_PROCESS_ID`` set (and
``XLA_ARRAY_CPU_DEVICES=K``; with ``--platform cuda``, ``XLA_ARRAY_DISTRIBUTED_PLATFORM=cuda``
and ``XLA_ARRAY_LOCAL_DEVICE_IDS=i``: process i on GPU i), prints each line they write
prefixed with ``[i]`` (their process index), and when one fails ends the others and exits with
its code: a failure never leaves processes waiting. The message names the process that failed
first (saying when it hosted the coordinator) and those that XLA's runtime ended because of it.
Exits 0 when all succeed.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import IO, Any

__all__ = ["main", "launch"]

_GRACE = 5.0  # seconds between asking the others to stop (SIGTERM) and killing them
_SETTLE = 1.0  # seconds to wait, after a first failure, for the news of the first cause
# what XLA's runtime prints when it ends a process because another one (or the coordinator)
# failed: such a process is a consequence, not the cause
_RUNTIME_ABORT = ("Terminating process because the JAX distributed service detected fatal",
                  "terminate called after throwing")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pump(i: int, stream: IO[bytes], out: IO[str], lock: threading.Lock,
          ended_by_runtime: list[bool]) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace").rstrip("\n")
        if any(m in line for m in _RUNTIME_ABORT):
            ended_by_runtime[i] = True
        with lock:
            out.write(f"[{i}] {line}\n")
            out.flush()
    stream.close()


def launch(n: int, argv: list[str], *, local_devices: int | None = None,
           timeout: float | None = None, out: IO[str] | None = None,
           env: dict[str, str] | None = None, platform: str | None = None) -> int:
    """Run ``python argv...`` as ``n`` processes (see the module docstring); their exit code."""
    if n < 1:
        raise ValueError(f"-n must be at least 1, got {n}")
    out = out or sys.stdout
    base = dict(os.environ if env is None else env)
    base["XLA_ARRAY_COORDINATOR"] = f"127.0.0.1:{_free_port()}"
    base["XLA_ARRAY_NUM_PROCESSES"] = str(n)
    base["PYTHONUNBUFFERED"] = "1"
    if local_devices is not None:
        base["XLA_ARRAY_CPU_DEVICES"] = str(local_devices)
    if timeout is not None:
        base["XLA_ARRAY_DISTRIBUTED_TIMEOUT"] = str(timeout)
    if platform is not None:
        base["XLA_ARRAY_DISTRIBUTED_PLATFORM"] = platform
    lock = threading.Lock()
    procs: list[subprocess.Popen[bytes]] = []
    pumps: list[threading.Thread] = []
    ended_by_runtime = [False] * n
    for i in range(n):
        penv = dict(base, XLA_ARRAY_PROCESS_ID=str(i))
        if platform == "cuda":  # one GPU per process
            penv["XLA_ARRAY_LOCAL_DEVICE_IDS"] = str(i)
        p = subprocess.Popen([sys.executable, *argv], env=penv, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
        procs.append(p)
        assert p.stdout is not None
        t = threading.Thread(target=_pump, args=(i, p.stdout, out, lock, ended_by_runtime),
                             daemon=True)
        t.start()
        pumps.append(t)
    code = 0
    try:
        code = _watch(procs, out, lock, ended_by_runtime)
    except KeyboardInterrupt:
        _end(procs)
        code = 130
    for t in pumps:
        t.join(timeout=2.0)
    return code


def _watch(procs: list[Any], out: IO[str], lock: threading.Lock,
           ended_by_runtime: list[bool]) -> int:
    while True:
        codes = [p.poll() for p in procs]
        if any(c not in (None, 0) for c in codes):
            break
        if all(c == 0 for c in codes):
            return 0
        time.sleep(0.05)
    # a failure: wait a moment for the others' news, so that the process that failed first is
    # told apart from those that XLA's runtime ended because of it
    deadline = time.monotonic() + _SETTLE
    while time.monotonic() < deadline and any(c is None for c in codes):
        time.sleep(0.05)
        codes = [p.poll() for p in procs]
    bad = [(i, c) for i, c in enumerate(codes) if c not in (None, 0)]
    causes = [(i, c) for i, c in bad if not ended_by_runtime[i]] or bad
    i, c = causes[0]
    others = [j for j, cj in enumerate(codes) if cj is None]
    consequences = [j for j, _ in bad if ended_by_runtime[j] and j != i]
    with lock:
        role = " (it hosts the coordinator)" if i == 0 and len(procs) > 1 else ""
        out.write(f"[launch] process {i}{role} exited with {_describe(c)}")
        if consequences:
            out.write(f"; XLA's distributed runtime ended process"
                      f"{'es' if len(consequences) > 1 else ''} "
                      f"{', '.join(map(str, consequences))} because of it")
        if others:
            out.write(f"; ending processes {others}")
        out.write("\n")
        out.flush()
    _end(procs)
    return c if c > 0 else 128 - c


def _describe(code: int) -> str:
    if code >= 0:
        return f"code {code}"
    try:
        return f"signal {-code} ({signal.Signals(-code).name})"
    except ValueError:
        return f"signal {-code}"


def _end(procs: list[Any]) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    deadline = time.monotonic() + _GRACE
    for p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def main(args: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m xla_array.distributed.launch",
        description="Run a script as N local processes joined by xla_array.distributed.")
    ap.add_argument("-n", "--num-processes", type=int, required=True, dest="n")
    ap.add_argument("--local-devices", type=int, default=None,
                    help="CPU devices per process (XLA_ARRAY_CPU_DEVICES)")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds (XLA_ARRAY_DISTRIBUTED_TIMEOUT, default 60)")
    ap.add_argument("--platform", choices=("cpu", "cuda"), default=None,
                    help="cuda: one process per GPU (jaxlib's CUDA plugin; process i on GPU i)")
    ap.add_argument("script")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    ns = ap.parse_args(args)
    if ns.n < 1:
        ap.error("-n must be at least 1")
    if ns.local_devices is not None and ns.local_devices < 1:
        ap.error("--local-devices must be at least 1")
    if ns.platform == "cuda" and ns.local_devices is not None:
        ap.error("--local-devices counts CPU devices; with --platform cuda each process has "
                 "one GPU")
    return launch(ns.n, [ns.script, *ns.args], local_devices=ns.local_devices,
                  timeout=ns.timeout, platform=ns.platform)


if __name__ == "__main__":
    sys.exit(main())
