"""Each native kernel against the pure-XLA path on the workloads it is for (the figures of
docs/architecture.md, "Native kernels"). One process per (kernel, on/off) run, alternated
ROUNDS times; per case the best of each process's minimum over its calls. Both columns are
compiled graphs (``XLA_ARRAY_HOST_FIRST=0``: with the first-use tier on, a graph without the
kernel would run its first calls with NumPy on the host, and the "XLA" column would time NumPy);
each process asserts that its calls compiled and ran no host run.

    python benchmarks/bench_kernels.py [rowpass|lu_perm ...] [--rounds N]

Run it with OPENBLAS_NUM_THREADS=1 on a shared machine: OpenBLAS's spinning threads (NumPy's,
and LAPACK's inside XLA) made whole processes 10-20x slower under load, whatever the kernel.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time


def run_one(kernel: str, on: bool) -> dict[str, float]:
    os.environ["XLA_ARRAY_CACHE_DIR"] = "off"
    os.environ["XLA_ARRAY_HOST_FIRST"] = "0"   # both columns compiled XLA, never NumPy's code
    import numpy as np

    import xla_array as xp
    from xla_array.core import registry
    if not on:  # as in a package built without it
        mod = __import__(f"xla_array.kernels.{kernel}", fromlist=["_LIB"])
        mod._LIB.ok = False
    assert registry.in_use(registry.KERNELS[kernel]) == on, "the kernel was not built"
    rng = np.random.default_rng(0)
    res: dict[str, float] = {}

    def best(name: str, fn, args: tuple, reps: int) -> None:
        fn(*args)
        fn(*args)
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn(*args)
            ts.append(time.perf_counter() - t0)
        res[name] = min(ts) * 1e3

    if kernel == "rowpass":
        def gd(X, y, w, steps):
            for _ in range(steps):
                w = w - 0.01 * (X.T @ (X @ w - y))
            return w

        def logreg(X, y, w, steps):
            for _ in range(steps):
                p = 1 / (1 + xp.exp(-(X @ w)))
                w = w - 0.1 * (X.T @ (p - y)) / X.shape[0]
            return w
        for d in ("float32", "float64"):
            for n, k in ((4000, 64), (10_000, 100), (100_000, 64)):
                X = xp.asarray((0.1 * rng.standard_normal((n, k))).astype(d))
                y = xp.asarray(rng.standard_normal(n).astype(d))
                yb = xp.asarray((rng.random(n) < 0.5).astype(d))
                w0 = xp.asarray(np.zeros(k, d))
                best(f"GD 50 steps, X {n}x{k} {d}", lambda *a: np.asarray(gd(*a)),
                     (X, y, w0, 50), 5)
                best(f"logistic 20 steps, X {n}x{k} {d}", lambda *a: np.asarray(logreg(*a)),
                     (X, yb, w0, 20), 5)
    else:
        for d in ("float32", "float64"):
            for n in (128, 512, 1024):
                a = rng.standard_normal((n, n)).astype(d) + n * np.eye(n, dtype=d)
                A, b = xp.asarray(a), xp.asarray(rng.standard_normal((n, 16)).astype(d))
                best(f"solve {n}x{n}, 16 rhs {d}", lambda *a: np.asarray(xp.linalg.solve(*a)),
                     (A, b), 40 if n < 1024 else 15)
    m = xp.debug.metrics()
    assert m["host_runs"] == 0 and m["compiles"] > 0, f"not compiled XLA: {m}"
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernels", nargs="*", default=["rowpass", "lu_perm"])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child[0], args.child[1] == "on")))
        return
    import jaxlib
    print(f"python {sys.version.split()[0]}, jaxlib {jaxlib.__version__}, "
          f"load {os.getloadavg()[0]:.1f}, OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}")
    for kernel in args.kernels:
        got: dict[str, dict[str, list[float]]] = collections.defaultdict(
            lambda: collections.defaultdict(list))
        for _ in range(args.rounds):
            for mode in ("on", "off"):
                out = subprocess.run([sys.executable, __file__, "--child", kernel, mode],
                                     check=True, capture_output=True, text=True).stdout
                for case, ms in json.loads(out.strip().splitlines()[-1]).items():
                    got[case][mode].append(ms)
        print(f"\n{kernel}: ms, best of {args.rounds} processes (XLA / kernel = speed-up)")
        for case, m in got.items():
            on, off = min(m["on"]), min(m["off"])
            print(f"  {case:40s} XLA {off:8.2f}  kernel {on:8.2f}  {off / on:5.2f}x")


if __name__ == "__main__":
    main()
