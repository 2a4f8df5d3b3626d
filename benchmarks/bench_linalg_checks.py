"""What the LinAlgError check costs (docs/laziness.md, "Errors from values"): a 64 x 64
float64 ``solve`` with one right-hand side, materialized each step of a loop (each step's
result feeds the next), with the ``linalg_errors`` setting on (LAPACK's info checked: one
int32 read back per run) and off (NaN results, as before the check), interleaved rounds in
one process, after a warm-up (compiled executables: the host tier's first runs excluded).

    .venv311/bin/python benchmarks/bench_linalg_checks.py [steps] [rounds]
"""

import statistics
import sys
import time

import numpy as np

import xla_array as xp


def loop(a, b, steps):
    x = b
    t0 = time.perf_counter()
    for _ in range(steps):
        x = xp.linalg.solve(a, x)
        xp.materialize(x)
    return (time.perf_counter() - t0) / steps


def main(steps=300, rounds=9):
    rng = np.random.default_rng(0)
    a = xp.asarray(rng.standard_normal((64, 64)) + 64 * np.eye(64))
    b = xp.asarray(rng.standard_normal((64, 1)))
    times = {True: [], False: []}
    for on in (True, False):  # warm-up: compile both structures
        with xp.flags.using(linalg_errors=on):
            loop(a, b, 20)
    for _ in range(rounds):
        for on in (True, False):
            with xp.flags.using(linalg_errors=on):
                times[on].append(loop(a, b, steps))
    for on in (True, False):
        t = times[on]
        print(f"linalg_errors={'on ' if on else 'off'}: median {statistics.median(t) * 1e6:6.1f} "
              f"us per solve, min {min(t) * 1e6:6.1f} us")
    ratio = statistics.median(times[True]) / statistics.median(times[False])
    print(f"on/off (medians): {ratio:.3f}")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
