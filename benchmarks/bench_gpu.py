#!/usr/bin/env python3
"""What xla_array does on a GPU: the device it finds, a smoke test of every family of ops
against NumPy, float32 matmul precision (speed and accuracy per setting), and the GPU memory
settings taking effect.

    python benchmarks/bench_gpu.py [smoke] [precision] [memory] [--json FILE]

Each section prints one line per check. Without a CUDA device every section says so and
exits 0 (nothing here is faked on a CPU). Used by scripts/gpu_proof.sh; the figures of
docs/performance.md's GPU section come from it.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback

import numpy as np

RESULTS: dict = {}


def _gpu():
    import xla_array as xp
    want = os.environ.get("BENCH_GPU_PLATFORM", "cuda")  # "cpu": try this script without a GPU
    devs = [d for d in xp.__array_namespace_info__().devices() if d.platform == want]
    return xp, (devs[0] if devs else None)


def smoke() -> None:
    xp, dev = _gpu()
    info = xp.__array_namespace_info__()
    print("devices:", info.devices(), "default:", info.default_device(), flush=True)
    if dev is None:
        print("smoke: no CUDA device")
        return
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 48))
    sq = rng.standard_normal((32, 32))
    spd = sq @ sq.T + 32 * np.eye(32)
    b = rng.standard_normal((32, 3))
    ints = rng.integers(0, 20, 200)

    def x(v):
        return xp.asarray(v, device=dev)

    def recon_svd(r):
        u, s, vt = (np.asarray(t) for t in r)
        return u @ np.diag(s) @ vt

    def recon_qr(r):
        return np.asarray(r.Q) @ np.asarray(r.R)

    def recon_eigh(r):
        w, v = np.asarray(r.eigenvalues), np.asarray(r.eigenvectors)
        return v @ np.diag(w) @ v.T

    def recon_eig(r):
        w, v = np.asarray(r.eigenvalues), np.asarray(r.eigenvectors)
        return (v @ np.diag(w) @ np.linalg.inv(v)).real

    checks = [
        ("elementwise", lambda: xp.exp(x(a)) * 2 - xp.sin(x(a)), lambda: np.exp(a) * 2 - np.sin(a)),
        ("sum axis 0", lambda: xp.sum(x(a), axis=0), lambda: a.sum(0)),
        ("mean/std", lambda: xp.std(x(a), axis=1), lambda: a.std(1)),
        ("max", lambda: xp.max(x(a)), lambda: a.max()),
        ("matmul f64", lambda: x(a).T @ x(a), lambda: a.T @ a),
        ("matmul f32", lambda: x(a.astype(np.float32)).T @ x(a.astype(np.float32)),
         lambda: a.astype(np.float32).T @ a.astype(np.float32)),
        ("sort", lambda: xp.sort(x(a), axis=0), lambda: np.sort(a, 0)),
        ("argsort", lambda: xp.argsort(x(ints), stable=True),
         lambda: np.argsort(ints, kind="stable")),
        ("unique_values", lambda: xp.unique_values(x(ints)), lambda: np.unique(ints)),
        ("nonzero mask", lambda: x(a)[x(a) > 1.0], lambda: a[a > 1.0]),
        ("take", lambda: xp.take(x(a), x(ints % 64), axis=0), lambda: a[ints % 64]),
        ("cumsum", lambda: xp.cumulative_sum(x(a), axis=0), lambda: np.cumsum(a, 0)),
        ("rfft", lambda: xp.fft.rfft(x(a), axis=0), lambda: np.fft.rfft(a, axis=0)),
        ("fft c128", lambda: xp.fft.fft(x(a + 1j * a)), lambda: np.fft.fft(a + 1j * a)),
        ("float16", lambda: x(a.astype(np.float16)) * 2, lambda: a.astype(np.float16) * 2),
        ("cholesky", lambda: xp.linalg.cholesky(x(spd)), lambda: np.linalg.cholesky(spd)),
        ("solve", lambda: xp.linalg.solve(x(sq), x(b)), lambda: np.linalg.solve(sq, b)),
        ("inv", lambda: xp.linalg.inv(x(sq)), lambda: np.linalg.inv(sq)),
        ("det", lambda: xp.linalg.det(x(sq)), lambda: np.linalg.det(sq)),
        ("slogdet", lambda: xp.linalg.slogdet(x(sq))[1], lambda: np.linalg.slogdet(sq)[1]),
        ("svd", lambda: recon_svd(xp.linalg.svd(x(a), full_matrices=False)), lambda: a),
        ("svd wide", lambda: recon_svd(xp.linalg.svd(x(a.T), full_matrices=False)), lambda: a.T),
        ("svd full", lambda: recon_svd(xp.linalg.svd(x(sq))), lambda: sq),
        ("svdvals", lambda: xp.linalg.svdvals(x(a)), lambda: np.linalg.svd(a, compute_uv=False)),
        ("qr", lambda: recon_qr(xp.linalg.qr(x(a))), lambda: a),
        ("qr wide", lambda: recon_qr(xp.linalg.qr(x(a.T))), lambda: a.T),
        ("qr complete", lambda: recon_qr(xp.linalg.qr(x(a), mode="complete")), lambda: a),
        ("eigh", lambda: recon_eigh(xp.linalg.eigh(x(spd))), lambda: spd),
        ("eigvalsh", lambda: xp.linalg.eigvalsh(x(spd)), lambda: np.linalg.eigvalsh(spd)),
        ("eig", lambda: recon_eig(xp.linalg.eig(x(sq))), lambda: sq),
        ("eigvals", lambda: np.sort_complex(np.asarray(xp.linalg.eigvals(x(sq)))),
         lambda: np.sort_complex(np.linalg.eigvals(sq))),
        ("pinv", lambda: xp.linalg.pinv(x(a)), lambda: np.linalg.pinv(a)),
        ("solve f32", lambda: xp.linalg.solve(x(spd.astype(np.float32)), x(b.astype(np.float32))),
         lambda: np.linalg.solve(spd, b)),
        ("matrix_rank", lambda: xp.linalg.matrix_rank(x(a)), lambda: np.linalg.matrix_rank(a)),
        ("to cpu and back", lambda: (x(a).to_device("cpu") + 1).to_device(dev), lambda: a + 1),
    ]
    out = {}
    for name, f, ref in checks:
        t0 = time.perf_counter()
        try:
            got = f()
            dev_of = getattr(got, "device", None)
            got = np.asarray(got)
            want = np.asarray(ref())
            tol = 1e-2 if got.dtype in (np.float32, np.complex64, np.float16) else 1e-8
            ok = got.shape == want.shape and np.allclose(got, want, rtol=tol, atol=tol)
            err = np.max(np.abs(got - want)) if got.shape == want.shape else got.shape
            status = "ok" if ok else f"WRONG (max err {err})"
            where = str(dev_of)
        except Exception as e:  # (report every failure, go on)
            status, where = f"ERROR {type(e).__name__}: {str(e)[:300]}", "-"
            traceback.print_exc(limit=3)
        dt_ms = (time.perf_counter() - t0) * 1e3
        out[name] = {"status": status, "device": where, "ms": round(dt_ms, 1)}
        print(f"smoke {name:22s} {status:10s} on {where} ({dt_ms:.0f} ms)", flush=True)
    RESULTS["smoke"] = out


def precision(n: int = 4096, repeats: int = 10) -> None:
    try:  # jax first: it loads the CUDA plugin itself; xla_array then makes its own client
        import jax
        jax.devices()
    except ImportError:
        jax = None
    xp, dev = _gpu()
    if dev is None:
        print("precision: no CUDA device")
        return
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    xa, xb = xp.asarray(a, device=dev), xp.asarray(b, device=dev)
    out = {}
    for p in ("auto", "default", "high", "highest"):
        with xp.flags.using(matmul_precision=p):
            f = xp.jit(lambda u, v: u @ v)
            r = f(xa, xb)
            xp.block_until_ready(r)
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                r = f(xa, xb)
                xp.block_until_ready(r)
                times.append(time.perf_counter() - t0)
        got = np.asarray(r).astype(np.float64)
        err = float(np.max(np.abs(got - exact) / scale))
        t = float(np.median(times))
        out[p] = {"ms": t * 1e3, "tflops": 2 * n ** 3 / t / 1e12, "max_rel_err": err}
        print(f"precision {p:8s} {t * 1e3:8.3f} ms  {2 * n ** 3 / t / 1e12:7.1f} TFLOP/s  "
              f"max |err|/(|a||b|) {err:.2e}", flush=True)
    if jax is not None:
        import jax.numpy as jnp
        ja, jb = jnp.asarray(a), jnp.asarray(b)
        for p in ("default", "high", "highest"):
            g = jax.jit(lambda u, v, p=p: jnp.matmul(u, v, precision=p))
            g(ja, jb).block_until_ready()
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                g(ja, jb).block_until_ready()
                times.append(time.perf_counter() - t0)
            got = np.asarray(g(ja, jb)).astype(np.float64)
            err = float(np.max(np.abs(got - exact) / scale))
            t = float(np.median(times))
            out[f"jax_{p}"] = {"ms": t * 1e3, "tflops": 2 * n ** 3 / t / 1e12, "max_rel_err": err}
            print(f"precision jax.jit {p:8s} {t * 1e3:8.3f} ms  {2 * n ** 3 / t / 1e12:7.1f} "
                  f"TFLOP/s  max |err|/(|a||b|) {err:.2e}", flush=True)
    RESULTS["precision"] = out


_MEM_CHILD = r"""
import json, subprocess, sys, xla_array as xp
d = [d for d in xp.__array_namespace_info__().devices() if d.platform == "cuda"]
if not d:
    print("@@" + json.dumps({"error": "no CUDA device"}))
    sys.exit()
d = d[0]
x = xp.ones((1024, 1024), device=d) + 1
float(xp.sum(x))
from xla_array.core import backend
stats = backend.devices("cuda")[0].memory_stats() or {}
used = subprocess.run(["nvidia-smi", "--query-gpu=memory.used,memory.total",
                       "--format=csv,noheader,nounits"], capture_output=True, text=True).stdout
print("@@" + json.dumps({"bytes_limit": stats.get("bytes_limit"),
                         "bytes_reserved": stats.get("bytes_reserved"),
                         "bytes_in_use": stats.get("bytes_in_use"),
                         "nvidia_smi_used_total_mib": used.strip()}))
"""


def memory() -> None:
    """Each setting in a fresh process (this one does not touch the GPU first)."""
    out = {}
    for label, env in (("preallocate=false", {"XLA_ARRAY_GPU_PREALLOCATE": "false"}),
                       ("preallocate=true fraction=0.5", {"XLA_ARRAY_GPU_PREALLOCATE": "true",
                                                          "XLA_ARRAY_GPU_MEMORY_FRACTION": "0.5"}),
                       ("preallocate=true fraction=0.2", {"XLA_ARRAY_GPU_PREALLOCATE": "true",
                                                          "XLA_ARRAY_GPU_MEMORY_FRACTION": "0.2"}),
                       ("allocator=platform", {"XLA_ARRAY_GPU_ALLOCATOR": "platform"})):
        e = {k: v for k, v in os.environ.items()
             if not k.startswith(("XLA_ARRAY_GPU", "XLA_PYTHON_CLIENT"))}
        e.update(env)
        r = subprocess.run([sys.executable, "-c", _MEM_CHILD], env=e, capture_output=True,
                           text=True, timeout=120)
        line = next((s[2:] for s in r.stdout.splitlines() if s.startswith("@@")), None)
        out[label] = json.loads(line) if line else {"error": r.stderr[-500:]}
        print(f"memory {label:32s} {out[label]}", flush=True)
    RESULTS["memory"] = out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("sections", nargs="*", default=["smoke", "memory", "precision"])
    p.add_argument("--json", default=None)
    args = p.parse_args()
    for s in args.sections:
        {"smoke": smoke, "precision": precision, "memory": memory}[s]()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(RESULTS, f, indent=1, default=str)


if __name__ == "__main__":
    main()
