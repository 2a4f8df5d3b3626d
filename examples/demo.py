"""xla_array demo: standardize + softmax + k-means steps over a million points.

The same function runs on NumPy and on xla_array. xla_array records the steps lazily and
compiles what it computes into fused XLA executables. The five steps of a run make a graph
deeper than ``XLA_ARRAY_MAX_PENDING`` (docs/laziness.md), so it is computed in two parts: the
steps before the automatic flush (``auto_flush`` in the output), and the rest up to
``float(conf)``; reading the final centroids (``np.asarray``) is a third graph, small enough
to run with NumPy on the host the first times it is seen (docs/laziness.md, "The first time a
graph is seen"). The ``metrics:`` line counts both runs of ``run``:

- the first time (empty on-disk cache): ``compiles=2`` and ``disk cache hits=0``; the second
  run in the process compiles nothing more (``cache_hits=2``);
- every later time: ``compiles=0`` and ``disk cache hits=2``: the executables are loaded from
  the on-disk cache (``~/.cache/xla_array``; with ``XLA_ARRAY_CACHE_DIR=off`` every time is
  the first).
"""

import time

import numpy as np

import xla_array as xp


def step(ns, x, centroids):
    """Standardize the points, assign each to its nearest centroid, move the centroids,
    and return the new centroids plus the mean softmax confidence of the assignments."""
    z = (x - ns.mean(x, axis=0)) / ns.std(x, axis=0)
    d2 = (ns.sum(z * z, axis=1)[:, None] - 2.0 * (z @ centroids.T)
          + ns.sum(centroids * centroids, axis=1)[None, :])
    logits = -d2
    p = ns.exp(logits - ns.max(logits, axis=1, keepdims=True))
    p = p / ns.sum(p, axis=1, keepdims=True)
    labels = ns.argmin(d2, axis=1)
    k = centroids.shape[0]
    onehot = ns.astype(labels[:, None] == ns.arange(k)[None, :], z.dtype)
    counts = ns.sum(onehot, axis=0)
    new = (onehot.T @ z) / ns.maximum(counts, 1.0)[:, None]
    return new, ns.mean(ns.max(p, axis=1))


def run(ns, x, c, steps):
    for _ in range(steps):
        c, conf = step(ns, x, c)
    return c, float(conf)


def main() -> None:
    rng = np.random.default_rng(0)
    n, dim, k, steps = 1_000_000, 8, 16, 5
    x_np = rng.standard_normal((n, dim), dtype=np.float32)
    c_np = x_np[rng.choice(n, k, replace=False)].copy()
    print(f"{n:,} points x {dim} dims, {k} centroids, {steps} k-means steps (float32)")

    x, c = xp.asarray(x_np), xp.asarray(c_np)
    xp.debug.reset_metrics()
    t0 = time.perf_counter()
    c_xp, conf_xp = run(xp, x, c, steps)
    t_first = time.perf_counter() - t0
    t0 = time.perf_counter()
    c_xp, conf_xp = run(xp, x, c, steps)
    t_xp = time.perf_counter() - t0

    t0 = time.perf_counter()
    c_ref, conf_ref = run(np, x_np, c_np, steps)
    t_np = time.perf_counter() - t0

    z_ref = (x_np - x_np.mean(0)) / x_np.std(0)
    err = float(np.max(np.abs(np.asarray(c_xp) - c_ref))) / (float(np.max(np.abs(z_ref))) or 1)
    print(f"mean softmax confidence: xla_array {conf_xp:.6f}   numpy {conf_ref:.6f}")
    print(f"centroids max relative difference vs NumPy: {err:.2e}")
    print(f"time: xla_array {t_xp * 1e3:.1f} ms (first run, compiling or loading: "
          f"{t_first * 1e3:.0f} ms)   numpy {t_np * 1e3:.1f} ms   speed-up {t_np / t_xp:.2f}x")
    m = xp.debug.metrics()
    print(f"metrics of both runs: compiles={m['compiles']} "
          f"(compile {m['compile_seconds'] * 1e3:.0f} ms), disk cache hits={m['disk_hits']} "
          f"(load {m['disk_load_seconds'] * 1e3:.0f} ms), cache_hits={m['cache_hits']}, "
          f"executions={m['executions']}, materializations={m['materializations']}")
    for where, count in m["materializations_by_line"].items():
        print(f"  materialized {count}x: {where}")


if __name__ == "__main__":
    main()
