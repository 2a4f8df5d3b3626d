"""Plots for docs/performance.md from a ``bench.py --json`` or ``bench_first_use.py --json`` file.

    python3 benchmarks/plot.py results.json docs/img

From bench.py: ``bench_times.png`` (median ms per workload and contender, log scale) and
``bench_ratios.png`` (NumPy time / xla_array time and jax.jit time / xla_array time). From
bench_first_use.py: ``first_use.png`` (each expression's first-call ms per contender, log scale,
session totals in the legend).
"""

from __future__ import annotations

import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

ORDER = ("numpy", "jax_eager", "jax_jit", "xla_array")
COLORS = {"numpy": "#4c72b0", "jax_eager": "#dd8452", "jax_jit": "#55a868",
          "xla_array": "#c44e52", "xla_cold": "#c44e52", "xla_warm": "#8172b3"}



def _finish(fig, ax, x, labels, ylabel: str, title: str, path: str) -> None:
    """Log y axis, workload labels, legend, title; save as PNG."""
    ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_xticks(x, labels, rotation=35, ha="right", fontsize=8)
    ax.legend()
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)

def first_use(data: dict, outdir: str) -> None:
    sess = {c: r for c, r in data["session"].items() if "error" not in r}
    names = list(next(iter(sess.values()))["per_expression_s"])
    fig, ax = plt.subplots(figsize=(13, 5))
    width = 0.8 / len(sess)
    x = np.arange(len(names))
    for k, (c, r) in enumerate(sess.items()):
        vals = [r["per_expression_s"][n] * 1e3 for n in names]
        ax.bar(x + (k - (len(sess) - 1) / 2) * width, vals, width, color=COLORS.get(c),
               label=f"{c}: session {r['session_s']:.2f} s, import {r['import_s']:.2f} s")
    path = os.path.join(outdir, "first_use.png")
    _finish(fig, ax, x, names, "ms, first call (log)",
            "First use: each expression once in a fresh process (lower is better)", path)
    print("wrote", path)


def main(path: str, outdir: str) -> None:
    data = json.load(open(path))
    os.makedirs(outdir, exist_ok=True)
    if "session" in data:
        first_use(data, outdir)
        return
    rows = [w for w in data["workloads"] if "xla_array" in w["contenders"]]
    labels = [f"{w['id']}: {w['name'][:28]}" for w in rows]
    os.makedirs(outdir, exist_ok=True)

    fig, ax = plt.subplots(figsize=(11, 5))
    width = 0.2
    x = np.arange(len(rows))
    for k, c in enumerate(ORDER):
        vals = [w["contenders"].get(c, {}).get("median_ms") or np.nan for w in rows]
        ax.bar(x + (k - 1.5) * width, vals, width, label=c, color=COLORS[c])
    _finish(fig, ax, x, labels, "median ms per call (log)",
            "Median time per workload (lower is better)", os.path.join(outdir, "bench_times.png"))

    fig, ax = plt.subplots(figsize=(11, 5))
    xm = [w["contenders"]["xla_array"].get("median_ms") for w in rows]
    for k, c in enumerate(("numpy", "jax_jit")):
        vals = [(w["contenders"].get(c, {}).get("median_ms") or np.nan) / m if m else np.nan
                for w, m in zip(rows, xm)]
        ax.bar(x + (k - 0.5) * 0.35, vals, 0.35, label=f"{c} time / xla_array time",
               color=COLORS[c])
    ax.axhline(1.0, color="black", lw=0.8)
    _finish(fig, ax, x, labels, "ratio (> 1: xla_array faster)", "Speed relative to xla_array",
            os.path.join(outdir, "bench_ratios.png"))
    print("wrote", os.path.join(outdir, "bench_times.png"), os.path.join(outdir,
                                                                          "bench_ratios.png"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "docs/img")
