#!/usr/bin/env python3
"""xla_array.distributed on one machine: collectives and data-parallel steps over 1, 2 and 4
processes (one CPU device each), started by the launcher, beside JAX multi-process on CPU
(``--jax PYTHON``) running the same three measurements.

Measures, in every configuration:
  allreduce  sum over the process axis of an array cut over the processes (XLA's all-reduce
             over gloo), from 8 B to --max-mib MiB per process (8 B, x8 up to 512 KiB, then
             1, 4, 16, 64 MiB): latency (median seconds per call, the call and reading back
             one element, picked by an index passed to the program so that the whole sum is
             computed) and bus bandwidth (bytes per process / s); with 1 process there is
             no collective (a sum over an axis of length 1): per-call overhead only
  gd         one data-parallel gradient step w -= lr * X.T @ (X @ w - y) / N, X (N, 64)
  kmeans     one k-means step (k = 16, X (N, 16)): assignments, per-cluster sums and counts
             (float32 throughout; the report prints w[0] and C[0, 0] after the timed steps
             from both libraries, which start from the same data and must agree)

Every timed call is one SPMD program run by every process, timed as the median of --repeats
calls, each reading back one element, after --warmup calls (default 5: the first compiles;
JAX's first few calls of a new executable are 2-3x slower than later ones); for xla_array this
includes the per-run program check through the coordinator. The rows (--rows in all) are cut
over the processes, so the step times measure strong scaling.

JAX column (``--jax /path/to/python``, an interpreter with jax on CPU; this script then runs
under it as ``--jax-worker``): N plain subprocesses (process id, count and coordinator, a free
port on 127.0.0.1, passed in environment variables), each calling
``jax.distributed.initialize`` with gloo CPU collectives
(``jax_cpu_collectives_implementation = "gloo"``) and one CPU device, a global mesh over all
processes, global arrays built with ``jax.make_array_from_process_local_data`` and ``jax.jit``
programs of the same computations, with the same shardings and timing. Without ``--jax``, or
when the JAX processes fail, the report gives xla_array alone and says why JAX is missing.

On a 2-core machine 4 processes are oversubscribed. The report gives the efficiency per core,
t(1 process) / (t(p processes) * cores used), cores used = min(p, cores), against the same
library's 1-process time (shown only when 1 is among --procs): 1.0 is perfect scaling over the
cores in use, and the 4-process rows on 2 cores show the cost of oversubscription, not scaling.

Usage: python3 benchmarks/bench_distributed.py [--procs 1,2,4] [--rows 65536] [--repeats 5]
       [--warmup 5] [--max-mib 64] [--jax /path/to/python-with-jax] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

_ENV_COORD, _ENV_COUNT, _ENV_ID = ("BENCH_JAX_COORDINATOR", "BENCH_JAX_NUM_PROCESSES",
                                   "BENCH_JAX_PROCESS_ID")


def _median_time(fn, repeats: int, warmup: int) -> float:
    # warm-up calls: the first compiles; xla_array's first step folds lazily created state
    # (the zeros of w) into its program, so its steady-state program compiles on the second;
    # JAX's first 3-5 calls of a new executable run 2-3x slower than later ones on CPU
    for _ in range(max(2, warmup)):
        fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _sizes(max_mib: int) -> list[int]:
    """Bytes per process: 8 B, x8 up to 512 KiB, then 1, 4, 16, 64 MiB, up to max_mib."""
    sizes, size = [], 8
    while size < (1 << 20):
        sizes.append(size)
        size *= 8
    size = 1 << 20
    while size <= max_mib * (1 << 20):
        sizes.append(size)
        size *= 4
    return sizes


def worker(args: argparse.Namespace) -> None:
    """One xla_array process (under xla_array.distributed.launch)."""
    import jaxlib

    import xla_array as xp
    from xla_array import distributed as dist
    from xla_array import sharding as S
    dist.initialize()
    me, n = dist.process_index(), dist.process_count()
    mesh = S.make_mesh((n,), ("p",))
    out: dict = {"procs": n, "version": f"jaxlib {jaxlib.__version__}", "allreduce": [],
                 "gd": None, "kmeans": None}
    last: dict = {}  # the values read back by the last step: the same in both libraries
    for size in _sizes(args.max_mib):
        k = max(1, size // 4)
        X = dist.from_local(np.ones((1, k), np.float32), S.NamedSharding(mesh, ("p", None)))
        t = _median_time(lambda X=X: float(xp.sum(X, axis=0)[0]), args.repeats, args.warmup)
        out["allreduce"].append({"bytes": size, "seconds": t, "bytes_per_s": size / t})
    rows = args.rows // n
    rng = np.random.default_rng(me)
    Xl = rng.standard_normal((rows, 64)).astype(np.float32)
    X = dist.from_local(Xl, S.NamedSharding(mesh, ("p", None)))
    y = dist.from_local(Xl @ np.ones(64, np.float32), S.NamedSharding(mesh, ("p",)))
    w = xp.zeros(64, dtype=xp.float32, device=S.NamedSharding(mesh, (None,)))

    def gd() -> None:
        nonlocal w
        w = w - 0.1 * (X.T @ (X @ w - y)) / args.rows
        last["gd"] = float(w[0])

    out["gd"] = _median_time(gd, args.repeats, args.warmup)
    P = dist.from_local(rng.standard_normal((rows, 16)).astype(np.float32),
                        S.NamedSharding(mesh, ("p", None)))
    C = xp.asarray(np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32),
                   device=S.NamedSharding(mesh, (None, None)))

    def kmeans_step(P, C):
        d = xp.sum(P * P, axis=1)[:, None] - 2.0 * (P @ C.T) + xp.sum(C * C, axis=1)[None, :]
        onehot = xp.astype(xp.argmin(d, axis=1)[:, None] == xp.arange(16)[None, :],
                           xp.float32)
        counts = xp.sum(onehot, axis=0)
        return (onehot.T @ P) / xp.maximum(counts, 1.0)[:, None]

    def kmeans() -> None:
        # the step in a function, so that its intermediates (d, onehot: (N, 16) each) are
        # dead when C is read: xla_array would otherwise write them out as well, each step
        nonlocal C
        C = kmeans_step(P, C)
        last["kmeans"] = float(C[0, 0])

    out["kmeans"] = _median_time(kmeans, args.repeats, args.warmup)
    out["last"] = last
    if me == 0:
        print("RESULT " + json.dumps(out), flush=True)


def jax_worker(args: argparse.Namespace) -> None:
    """One JAX process: the same measurements with jax.distributed and jax.jit."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as PS
    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.config.update("jax_num_cpu_devices", 1)
    me, n = int(os.environ[_ENV_ID]), int(os.environ[_ENV_COUNT])
    jax.distributed.initialize(os.environ[_ENV_COORD], n, me, initialization_timeout=120)
    assert jax.process_index() == me and jax.process_count() == n, "wrong process layout"
    assert len(jax.local_devices()) == 1 and jax.device_count() == n, jax.devices()
    devs = sorted(jax.devices(), key=lambda d: (d.process_index, d.id))
    mesh = Mesh(np.array(devs), ("p",))
    rep = NamedSharding(mesh, PS())
    rows_sh = NamedSharding(mesh, PS("p", None))
    # the element to read back, as a replicated device scalar (an argument, so that XLA
    # computes the whole sum, as xla_array's lifted index does)
    zero = jax.make_array_from_callback((), rep, lambda _: np.int32(0))
    out: dict = {"procs": n, "version": f"jax {jax.__version__}", "allreduce": [],
                 "gd": None, "kmeans": None}
    last: dict = {}  # the values read back by the last step: the same in both libraries

    @jax.jit
    def allreduce(x, i):
        return jnp.sum(x, axis=0)[i]

    for size in _sizes(args.max_mib):
        k = max(1, size // 4)
        X = jax.make_array_from_process_local_data(rows_sh, np.ones((1, k), np.float32),
                                                   (n, k))
        t = _median_time(lambda X=X: float(allreduce(X, zero)), args.repeats, args.warmup)
        out["allreduce"].append({"bytes": size, "seconds": t, "bytes_per_s": size / t})
        del X
    rows = args.rows // n
    N = rows * n  # the global row count (as xla_array's from_local infers it)
    rng = np.random.default_rng(me)
    Xl = rng.standard_normal((rows, 64)).astype(np.float32)
    X = jax.make_array_from_process_local_data(rows_sh, Xl, (N, 64))
    y = jax.make_array_from_process_local_data(NamedSharding(mesh, PS("p")),
                                               Xl @ np.ones(64, np.float32), (N,))
    w = jax.make_array_from_callback((64,), rep, lambda idx: np.zeros(64, np.float32)[idx])

    @jax.jit
    def gd_step(X, y, w):
        w = w - 0.1 * (X.T @ (X @ w - y)) / args.rows
        return jax.lax.with_sharding_constraint(w, rep), w[0]

    def gd() -> None:
        nonlocal w
        w, w0 = gd_step(X, y, w)
        last["gd"] = float(w0)

    out["gd"] = _median_time(gd, args.repeats, args.warmup)
    P = jax.make_array_from_process_local_data(
        rows_sh, rng.standard_normal((rows, 16)).astype(np.float32), (N, 16))
    C0 = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32)
    C = jax.make_array_from_callback((16, 16), rep, lambda idx: C0[idx])

    @jax.jit
    def kmeans_step(P, C):
        d = jnp.sum(P * P, axis=1)[:, None] - 2.0 * (P @ C.T) + jnp.sum(C * C, axis=1)[None, :]
        onehot = (jnp.argmin(d, axis=1)[:, None] == jnp.arange(16)[None, :]).astype(
            jnp.float32)
        counts = jnp.sum(onehot, axis=0)
        C = (onehot.T @ P) / jnp.maximum(counts, 1.0)[:, None]
        return jax.lax.with_sharding_constraint(C, rep), C[0, 0]

    def kmeans() -> None:
        nonlocal C
        C, c00 = kmeans_step(P, C)
        last["kmeans"] = float(c00)

    out["kmeans"] = _median_time(kmeans, args.repeats, args.warmup)
    out["last"] = last
    if me == 0:
        print("RESULT " + json.dumps(out), flush=True)
    jax.distributed.shutdown()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _first_failure(procs: list[subprocess.Popen], logs: list) -> str:
    """'' or the first exited-with-error process and the last line of its stderr."""
    for i, q in enumerate(procs):
        if q.poll():
            logs[i][1].seek(0)
            tail = [ln for ln in logs[i][1].read().splitlines() if ln.strip()][-1:]
            return (f"JAX process {i} of {len(procs)} exited with {q.returncode}: "
                    f"{(tail or ['(no stderr)'])[0][:300]}")
    return ""


def run_jax(python: str, p: int, args: argparse.Namespace) -> tuple[dict | None, str]:
    """Start p JAX processes with `python`; (process 0's result, "") or (None, why not)."""
    coord = f"127.0.0.1:{_free_port()}"
    cmd = [python, os.path.abspath(__file__), "--jax-worker", "--rows", str(args.rows),
           "--repeats", str(args.repeats), "--warmup", str(args.warmup),
           "--max-mib", str(args.max_mib)]
    env = dict(os.environ, JAX_PLATFORMS="cpu", **{_ENV_COORD: coord, _ENV_COUNT: str(p)})
    procs: list[subprocess.Popen] = []
    logs = [(tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")) for _ in range(p)]
    try:
        for i in range(p):  # output to files: a full pipe cannot stall a collective
            procs.append(subprocess.Popen(cmd, env=dict(env, **{_ENV_ID: str(i)}),
                                          stdout=logs[i][0], stderr=logs[i][1], text=True))
    except OSError as e:
        for q in procs:
            q.kill()
        return None, f"could not start {python}: {e}"
    deadline, failed = time.monotonic() + 1800, ""
    while any(q.poll() is None for q in procs) and not failed:
        failed = _first_failure(procs, logs)
        if not failed and time.monotonic() > deadline:
            failed = f"the JAX processes ({p}) did not finish within 1800 s"
        time.sleep(0.1)
    for q in procs:  # only the processes started here, by their handles
        if q.poll() is None:
            q.kill()
        q.wait()
    failed = failed or _first_failure(procs, logs)
    logs[0][0].seek(0)
    out0 = logs[0][0].read()
    for o, e in logs:
        o.close()
        e.close()
    if failed:
        return None, failed
    line = [ln for ln in out0.splitlines() if ln.startswith("RESULT ")]
    if not line:
        return None, f"JAX process 0 of {p} printed no result"
    return json.loads(line[-1].split("RESULT ", 1)[1]), ""


def run_xla_array(p: int, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, "-m", "xla_array.distributed.launch", "-n", str(p), __file__,
           "--worker", "--rows", str(args.rows), "--repeats", str(args.repeats),
           "--warmup", str(args.warmup), "--max-mib", str(args.max_mib)]
    env = dict(os.environ, XLA_ARRAY_CPU_DEVICES="1")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    line = [ln for ln in proc.stdout.splitlines() if "RESULT " in ln]
    if proc.returncode or not line:
        print(proc.stdout[-3000:], proc.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"xla_array: {p} processes failed")
    return json.loads(line[-1].split("RESULT ", 1)[1])


def _eff(base: float | None, t: float | None, used: int) -> str:
    return "-" if base is None or t is None else f"{base / (t * used):.2f}"


def report(results: list[dict], cores: int, jax_why: str) -> None:
    print(f"machine: {cores} cores; one CPU device per process; "
          f"load average {results[0]['load'][0]:.1f} at start, {results[-1]['load'][1]:.1f} "
          "at end")
    have_jax = any(r["jax"] for r in results)
    jax_versions = sorted({r["jax"]["version"] for r in results if r["jax"]})
    print("versions: xla_array on " + ", ".join(sorted({r["xla_array"]["version"]
                                                        for r in results}))
          + ("; JAX: " + ", ".join(jax_versions) if jax_versions else ""))
    if jax_why:
        print(f"JAX column missing: {jax_why}")
    print("all-reduce: median seconds per call, bus bandwidth MB/s per process "
          "(1 process: no collective, per-call overhead only)")
    for r in results:
        x, j = r["xla_array"], r["jax"]
        head = f"  {r['procs']} processes" + (
            f" (no JAX: {r['jax_why']})" if have_jax and not j else "")
        print(head)
        print("      bytes  xla_array s    MB/s" + ("        JAX s    MB/s  JAX/xla_array"
                                                    if j else ""))
        for i, a in enumerate(x["allreduce"]):
            line = f"  {a['bytes']:>9d} {a['seconds']:>12.6f} {a['bytes_per_s'] / 1e6:>7.1f}"
            if j:
                b = j["allreduce"][i]
                line += (f" {b['seconds']:>12.6f} {b['bytes_per_s'] / 1e6:>7.1f}"
                         f" {b['seconds'] / a['seconds']:>14.2f}")
            print(line)
    for r in results:
        if r["jax"]:
            a, b = r["xla_array"]["last"], r["jax"]["last"]
            print(f"  {r['procs']} processes, values after the timed steps: w[0] "
                  f"{a['gd']:.6g} (xla_array) {b['gd']:.6g} (JAX), C[0, 0] "
                  f"{a['kmeans']:.6g} (xla_array) {b['kmeans']:.6g} (JAX)")
    print("steps: median seconds; eff/core = t(1 process) / (t(p) * min(p, cores)), "
          "each against its own 1-process time")
    base = {lib: next((r[lib] for r in results if r["procs"] == 1 and r[lib]), None)
            for lib in ("xla_array", "jax")}
    cols = ["xla_array"] + (["jax"] if have_jax else [])
    print("  procs" + "".join(f"  {lib + ' ' + s:>17} {'eff':>5}" for s in ("gd", "kmeans")
                              for lib in cols))
    for r in results:
        used = min(r["procs"], cores)
        cells = ""
        for step in ("gd", "kmeans"):
            for lib in cols:
                t = r[lib][step] if r[lib] else None
                b = base[lib][step] if base[lib] else None
                cells += f"  {'-' if t is None else f'{t:.5f}':>17} {_eff(b, t, used):>5}"
        print(f"  {r['procs']:>5}{cells}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--procs", default="1,2,4")
    ap.add_argument("--rows", type=int, default=65536)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--max-mib", type=int, default=64)
    ap.add_argument("--jax", metavar="PYTHON",
                    help="an interpreter with jax (CPU) to run the JAX column with")
    ap.add_argument("--json")
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--jax-worker", action="store_true")
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return
    if args.jax_worker:
        jax_worker(args)
        return
    cores = os.cpu_count() or 1
    jax_why = "" if args.jax else "not asked for (--jax PYTHON runs it)"
    results = []
    for p in [int(v) for v in args.procs.split(",")]:
        load0 = os.getloadavg()[0]
        res: dict = {"procs": p, "xla_array": run_xla_array(p, args), "jax": None,
                     "jax_why": ""}
        if args.jax:
            res["jax"], res["jax_why"] = run_jax(args.jax, p, args)
        res["load"] = [load0, os.getloadavg()[0]]
        results.append(res)
    if args.jax and not any(r["jax"] for r in results):
        whys = [r["jax_why"] for r in results]
        jax_why = whys[0] if len(set(whys)) == 1 else "; ".join(
            f"{r['procs']} processes: {r['jax_why']}" for r in results)
    report(results, cores, jax_why)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cores": cores, "jax_missing": jax_why, "results": results}, f,
                      indent=1)


if __name__ == "__main__":
    main()
