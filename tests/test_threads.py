"""Threads sharing xla_array: recording, forcing, in-place updates and reads at the same time.

Each test runs its threads under a deadline (a thread still alive after it fails the test as a
deadlock) with a short interpreter switch interval, so that threads interleave inside
xla_array's Python code often. Values are checked against NumPy: a thread's own computation
against the same computation in NumPy; a shared array, updated by exactly one writer thread,
must read in any other thread as one of the writer's states, never older than a state that
thread has already seen.
"""

import sys
import threading
import time

import numpy as np
import pytest

import xla_array as xp

DEADLINE = 60.0  # seconds for all the threads of one test (they need a few)


@pytest.fixture(autouse=True)
def _frequent_switches():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    yield
    sys.setswitchinterval(old)


def _in_threads(*works):
    """Run each callable in its own thread; fail if one is still running at the deadline, and
    re-raise the first exception a thread raised (an assertion included)."""
    errors = []

    def guarded(work):
        try:
            work()
        except BaseException as e:  # noqa: BLE001  (re-raised below, in the test's thread)
            errors.append(e)
    threads = [threading.Thread(target=guarded, args=(w,), daemon=True) for w in works]
    for t in threads:
        t.start()
    end = time.monotonic() + DEADLINE
    for t in threads:
        t.join(max(0.0, end - time.monotonic()))
    alive = [t.name for t in threads if t.is_alive()]
    assert not alive, f"threads still running after {DEADLINE} s (deadlock?): {alive}"
    if errors:
        raise errors[0]


def _readers_of(x, steps, done, count=3):
    """``count`` reader loops over ``np.asarray(x)`` until ``done``: each read must be k*ones
    for an integer 0 <= k <= steps, k never decreasing within one reader. Returns the loops
    and the lists of the k each one saw."""
    seen = [[] for _ in range(count)]

    def read(ks):
        while not done.is_set():
            a = np.asarray(x)
            k = float(a[0])
            assert a.shape == x.shape and a.dtype == np.float32
            assert k == int(k) and 0 <= k <= steps and np.all(a == k), a
            assert not ks or k >= ks[-1], (ks[-1], k)
            ks.append(k)
    return [lambda ks=ks: read(ks) for ks in seen], seen


def test_one_writer_three_readers():
    """One thread runs ``for _ in range(2000): x += 1.0; xp.materialize(x)``, three others
    ``np.asarray(x)`` until it stops: no read raises, every read is k * ones."""
    x = xp.zeros(1000, dtype=xp.float32) * 1.0
    done = threading.Event()

    def writer():
        nonlocal x
        try:
            for _ in range(2000):
                x += 1.0
                xp.materialize(x)
        finally:
            done.set()
    readers, seen = _readers_of(x, 2000, done)
    _in_threads(writer, *readers)
    np.testing.assert_array_equal(np.asarray(x), np.full(1000, 2000.0, np.float32))
    assert all(seen), [len(ks) for ks in seen]


def test_readers_and_a_writer_of_a_donatable_array():
    """As above on a 2 MiB array, where the writer's update may be written into the buffer it
    replaces (donation) unless a reader still holds it: readers never see a buffer given away
    or half-updated; two further readers force it with ``float`` and ``xp.materialize``."""
    n, steps = 1 << 19, 300
    x = xp.zeros(n, dtype=xp.float32) * 1.0
    xp.materialize(x)
    done = threading.Event()

    def writer():
        nonlocal x
        try:
            for _ in range(steps):
                x += 1.0
                xp.materialize(x)
        finally:
            done.set()

    def scalar_reader():
        last, i = 0.0, 0
        while not done.is_set():
            k = float(x[i % n])
            assert k == int(k) and last <= k <= steps, (last, k)
            last, i = k, i + 7919

    def sum_reader():
        last = 0.0
        while not done.is_set():
            y = x[::4096] + 0.0  # a pending graph reading the shared buffer
            xp.materialize(y)
            k = float(xp.mean(y))
            assert np.all(np.asarray(y) == k) and last <= k <= steps, (last, k)
            last = k
    readers, seen = _readers_of(x, steps, done, count=1)
    _in_threads(writer, scalar_reader, sum_reader, *readers)
    np.testing.assert_array_equal(np.asarray(x), np.full(n, steps, np.float32))
    assert seen[0]


def test_own_computations_and_one_shared_array():
    """One thread updates a shared vector ``s`` in two steps per round (``s[0:3] = s[3:6] + 1``,
    then ``s[3:] += 1``), forcing it only every other round, until the others are done; three
    threads each run their own
    chain (matrix-vector product, elementwise ops, ``w[0:3] = v``, ``w += 1``, a view written
    through) on shapes of their own, force it in turn with ``np.asarray``, ``float`` and
    ``xp.materialize``, compare with NumPy, and read ``s`` between steps: ``s[3:]`` is k * ones
    and ``s[0:3]`` is k or k + 1."""
    rounds = 60
    s = xp.zeros(32, dtype=xp.float64) * 1.0
    finished = [threading.Event() for _ in range(3)]
    written = []  # the writer's number of rounds, once it stops

    def check_shared(last):
        r = np.asarray(s)
        k = r[3]
        assert k == int(k) and np.all(r[3:] == k), r
        assert r[0] in (k, k + 1) and np.all(r[:3] == r[0]), r
        state = r[0] + k  # 2k after a round, 2k + 1 in the middle of one
        assert last <= state, (last, state)
        return state

    def writer():
        i = 0
        while not all(e.is_set() for e in finished):
            s[0:3] = s[3:6] + 1.0
            s[3:] += 1.0
            if i % 2:
                xp.materialize(s)
            i += 1
        written.append(i)

    def own(seed):
        try:
            chain(seed)
        finally:
            finished[seed - 1].set()

    def chain(seed):
        rng = np.random.default_rng(seed)
        n = 12 + 5 * seed
        a_np = rng.standard_normal((n, n)) / n
        w_np = rng.standard_normal(n)
        a, w = xp.asarray(a_np), xp.asarray(w_np)
        state = 0
        for step in range(rounds):
            w = xp.tanh(a @ w) * 0.5 + w * 0.25
            w_np = np.tanh(a_np @ w_np) * 0.5 + w_np * 0.25
            w[0:3] = xp.asarray([1.0, -2.0, float(step)])
            w_np[0:3] = [1.0, -2.0, float(step)]
            w += 1.0
            w_np += 1.0
            view = w[4:8]
            view *= 0.5  # written back into w
            w_np[4:8] *= 0.5
            if step % 3 == 0:
                np.testing.assert_allclose(np.asarray(w), w_np, rtol=1e-12, atol=1e-12)
            elif step % 3 == 1:
                assert float(xp.sum(w * w)) == pytest.approx(np.sum(w_np * w_np), rel=1e-12)
            else:
                xp.materialize(w, a)
            state = check_shared(state)
        np.testing.assert_allclose(np.asarray(w), w_np, rtol=1e-12, atol=1e-12)
    _in_threads(writer, *[lambda i=i: own(i) for i in (1, 2, 3)])
    np.testing.assert_array_equal(np.asarray(s), np.full(32, written[0], np.float64))


def test_threads_force_the_same_pending_arrays():
    """Four threads released together on each of 40 pending arrays, forcing it at once in four
    ways (``np.asarray``, ``float`` of a reduction, ``xp.materialize``, an element): every
    result equals NumPy's."""
    base = np.linspace(-3.0, 3.0, 500)
    x = xp.asarray(base)
    ys = [xp.sin(x) * float(r) + xp.mean(x * x) for r in range(40)]
    wants = [np.sin(base) * float(r) + np.mean(base * base) for r in range(40)]
    gate = threading.Barrier(4, timeout=DEADLINE)

    def force(way):
        try:
            for y, want in zip(ys, wants, strict=True):
                gate.wait()
                check(way, y, want)
        except BaseException:
            gate.abort()  # (the others would wait for this thread until the deadline)
            raise

    def check(way, y, want):
        if way == 0:
            np.testing.assert_allclose(np.asarray(y), want, rtol=1e-13, atol=1e-13)
        elif way == 1:
            assert float(xp.sum(y)) == pytest.approx(np.sum(want), rel=1e-12, abs=1e-10)
        elif way == 2:
            xp.materialize(y)
            assert not y.is_pending
            np.testing.assert_allclose(np.asarray(y), want, rtol=1e-13, atol=1e-13)
        else:
            assert float(y[123]) == pytest.approx(want[123], rel=1e-13)
    _in_threads(*[lambda w=w: force(w) for w in range(4)])


def test_threads_creating_and_pruning_views_lose_no_view(monkeypatch):
    """The table of views (api/views.py) is shared by threads: creating views of fresh bases
    while the table is pruned raised "dictionary changed size during iteration", and a prune
    racing a registration could drop a live view (then writes into its base missed it)."""
    from xla_array.api import views
    monkeypatch.setattr(views, "_prune_at", [8])
    keep = xp.asarray(np.zeros(64))
    kept = [keep[i:i + 4] for i in range(0, 64, 4)]  # live views of one base

    def churn(seed):
        for i in range(1500):
            b = xp.asarray(np.full(8, float(seed)))
            v = b[1:3]  # a view of a base that dies at once: entries to prune
            del b, v
            if i % 100 == 0:
                kept.append(keep[seed:seed + 1])

    _in_threads(*[lambda s=s: churn(s) for s in range(4)])
    keep[...] = 7.0  # a write into the base reaches every live view
    for v in kept:
        np.testing.assert_array_equal(np.asarray(v), np.full(v.shape, 7.0))
