#!/usr/bin/env python3
"""Peak memory of each benchmark workload: xla_array against NumPy.

Each (workload, contender) runs in its own process: inputs are made and moved to the
contender, the workload runs once (for xla_array this compiles: the first-use tier is off
unless ``XLA_ARRAY_HOST_FIRST`` is set), then the kernel's peak-RSS
counter is reset (``/proc/self/clear_refs``) and the workload runs again; the figure is the
peak resident memory of that second run above the resident memory just before it. So it counts
temporaries and the result, not the inputs, imports or compilation. Children run with a fixed
glibc mmap threshold so that freed large blocks leave the resident set at once. Linux only.

Extra in-place workloads show donation: ``x += 1.0`` and ``x[::2] = 0.0`` on a 32M-element
float32 array, and a 20-step rebinding loop ``x = x * 0.5 + 1.0``, each forced at the end.

Usage: python3 benchmarks/bench_memory.py [--only 1,2,...] [--quick] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
sys.path.insert(0, os.path.dirname(_HERE))

N_INPLACE = 32 * 1024 * 1024


def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(field)


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _inplace_workloads(quick: bool) -> list[dict]:
    n = N_INPLACE // (16 if quick else 1)

    def add_inplace(xp, x):
        x += 1.0
        return x

    def set_every_other(xp, x):
        x[::2] = 0.0
        return x

    def rebind_loop(xp, x):
        for _ in range(20):
            x = x * 0.5 + 1.0
        return x

    def mk(r):
        return [r.standard_normal(n, dtype="float32")]

    # "computed": the array was produced by an earlier computation on the device (XLA owns its
    # memory, so it can be donated and updated in place); "from host": straight from asarray
    # (a large host array is wrapped without a second copy, memory XLA cannot reuse)
    return [dict(id="i1", name="x += 1.0 (in place), x computed", size=f"{n:,} f32",
                 fn=add_inplace, inputs=mk, fresh=True, computed=True),
            dict(id="i1h", name="x += 1.0 (in place), x from host", size=f"{n:,} f32",
                 fn=add_inplace, inputs=mk, fresh=True),
            dict(id="i2", name="x[::2] = 0.0 (in place), x computed", size=f"{n:,} f32",
                 fn=set_every_other, inputs=mk, fresh=True, computed=True),
            dict(id="i3", name="20x x = x * 0.5 + 1.0", size=f"{n:,} f32", fn=rebind_loop,
                 inputs=mk, fresh=True)]


def _all(quick: bool) -> list[dict]:
    import bench
    return bench.make_workloads(quick) + _inplace_workloads(quick)


def child(wid: str, contender: str, quick: bool) -> dict:
    import gc

    import numpy as np
    wl = next(w for w in _all(quick) if w["id"] == wid)
    rng = np.random.default_rng(0)
    if contender == "numpy":
        xp = np
        def conv(a):
            return a.copy()

        def force(r):
            return None
    else:
        import xla_array as xp
        conv = xp.asarray

        def force(r):
            xp.block_until_ready(*(r if isinstance(r, tuple) else (r,)))

    def run():
        args = [conv(a) for a in wl["inputs"](rng)] if wl.get("fresh") else inputs
        if contender != "numpy":
            if wl.get("computed"):
                args = [a * 1.0 for a in args]
            xp.block_until_ready(*[a for a in args if hasattr(a, "shape")])
        gc.collect()
        before = _status("VmRSS")
        _reset_peak()
        r = wl["fn"](xp, *args)
        force(r)
        peak = _status("VmHWM")
        del r, args
        gc.collect()
        return peak - before

    if not wl.get("fresh"):
        inputs = [conv(a) for a in wl["inputs"](rng)]
        if contender != "numpy":
            xp.block_until_ready(*inputs)
    run()  # warm-up: compiles, allocator pools
    return {"peak_bytes": min(run() for _ in range(2))}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default="")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--json", default=None)
    p.add_argument("--child", nargs=2, metavar=("ID", "CONTENDER"), help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        print(json.dumps(child(a.child[0], a.child[1], a.quick)))
        return
    only = {s for s in a.only.split(",") if s}
    rows = []
    # a fixed mmap threshold: glibc then returns every large block to the system when it is
    # freed (its adaptive threshold would keep the warm-up's blocks resident and hide peaks);
    # the first-use tier off, so the warm-up compiles and the measured run is the compiled
    # graph's steady state (with it on, a graph of values up to 16 MiB could still be running
    # with NumPy on the host then, its temporaries NumPy's, from the tier's reused blocks)
    env = dict(os.environ, XLA_ARRAY_CACHE_DIR=os.environ.get("XLA_ARRAY_CACHE_DIR", "off"),
               MALLOC_MMAP_THRESHOLD_="131072",
               XLA_ARRAY_HOST_FIRST=os.environ.get("XLA_ARRAY_HOST_FIRST", "0"))
    print("| # | workload | size | NumPy peak MiB | xla_array peak MiB | xla / NumPy |")
    print("|---|---|---|---:|---:|---:|")
    for wl in _all(a.quick):
        if only and wl["id"] not in only:
            continue
        res = {}
        for c in ("numpy", "xla_array"):
            cmd = [sys.executable, os.path.abspath(__file__), "--child", wl["id"], c]
            if a.quick:
                cmd.append("--quick")
            out = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if out.returncode != 0:
                res[c] = None
                print(out.stderr[-2000:], file=sys.stderr)
            else:
                res[c] = json.loads(out.stdout.strip().splitlines()[-1])["peak_bytes"]
        mib = {c: (v / 2**20 if v is not None else float("nan")) for c, v in res.items()}
        # (nan: NumPy allocates nothing)
        ratio = mib["xla_array"] / mib["numpy"] if mib["numpy"] > 0.5 else float("nan")
        print(f"| {wl['id']} | {wl['name']} | {wl['size']} | {mib['numpy']:.1f} | "
              f"{mib['xla_array']:.1f} | {ratio:.2f} |", flush=True)
        rows.append(dict(id=wl["id"], name=wl["name"], size=wl["size"], **res))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
