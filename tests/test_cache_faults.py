"""Faults of the on-disk compile cache: damaged entries, unwritable or impossible folders,
concurrent writers, entries deleted under a user.

Every case runs fresh Python processes on a private cache folder (``tmp_path``), as a user's
successive runs would; each process computes a few small graphs, one structure (and so one
cache entry) per size ``n``, and prints their values with its compile and disk-hit counts.
The values are compared with NumPy's, and a fault may cost compiles, never a crash or a wrong
value.
"""

import ctypes
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

# argv: sizes n (one graph each), or "wipe" (delete the whole cache folder at that point).
# CACHE_FAULT_BARRIER=folder: after the imports, write folder/ready.<pid> and wait for
# folder/go, so that processes started together compile at the same moment.
CHILD = """
import json, os, shutil, sys, time
import numpy as np
import xla_array as xp

barrier = os.environ.get("CACHE_FAULT_BARRIER")
if barrier:
    open(os.path.join(barrier, f"ready.{os.getpid()}"), "w").close()
    deadline = time.monotonic() + 60
    while not os.path.exists(os.path.join(barrier, "go")) and time.monotonic() < deadline:
        time.sleep(0.002)
values = {}
for tok in sys.argv[1:]:
    if tok == "wipe":
        shutil.rmtree(os.environ["XLA_ARRAY_CACHE_DIR"])
        continue
    n = int(tok)
    x = xp.asarray(np.arange(n * n, dtype=np.float64).reshape(n, n) / n)
    values[tok] = np.asarray(xp.tanh(x @ x.T * 0.01) - xp.mean(x, axis=0)).tolist()
m = xp.debug.metrics()
print(json.dumps({"values": values, "compiles": m["compiles"], "disk_hits": m["disk_hits"]}))
"""


def _want(n):
    x = np.arange(n * n, dtype=np.float64).reshape(n, n) / n
    return np.tanh(x @ x.T * 0.01) - np.mean(x, axis=0)


def _start(folder, tokens, env=None, **kw):
    env = dict(os.environ, XLA_ARRAY_CACHE_DIR=str(folder), **(env or {}))
    return subprocess.Popen([sys.executable, "-c", CHILD, *tokens], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def _finish(proc, tokens):
    """The child's report; fails unless it exited cleanly with NumPy's values."""
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert proc.returncode == 0 and "Traceback" not in err, err
    r = json.loads(out.strip().splitlines()[-1])
    for tok in tokens:
        if tok != "wipe":
            np.testing.assert_allclose(r["values"][tok], _want(int(tok)), rtol=1e-12,
                                       atol=1e-15, err_msg=f"n={tok}")
    return r


def _run(folder, *tokens, **kw):
    return _finish(_start(folder, tokens, **kw), tokens)


def _entries(folder):
    return sorted(p.name for p in folder.glob("*.xla"))


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """A cache folder holding the entries of sizes 5 and 6: (folder, {size: entry path})."""
    folder = tmp_path_factory.mktemp("filled") / "cache"
    names = {}
    for tok in ("5", "6"):
        before = set(_entries(folder)) if folder.exists() else set()
        r = _run(folder, tok)
        assert r["compiles"] == 1
        (names[tok],) = set(_entries(folder)) - before
    return folder, {tok: folder / name for tok, name in names.items()}


def _clone(filled, tmp_path):
    """A private copy of the filled folder: (folder, {size: entry path}, {size: bytes})."""
    src, entries = filled
    folder = tmp_path / "cache"
    shutil.copytree(src, folder)
    paths = {tok: folder / p.name for tok, p in entries.items()}
    return folder, paths, {tok: p.read_bytes() for tok, p in paths.items()}


def _header_end(blob):
    """Index of the newline ending the header line (the line after the magic line)."""
    return blob.index(b"\n", blob.index(b"\n") + 1)


def _random_bytes(n, seed=0):
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def _flip_bit(blob):
    i = (_header_end(blob) + len(blob)) // 2  # in the payload
    return blob[:i] + bytes([blob[i] ^ 0x10]) + blob[i + 1:]


def _random_payload(blob):
    """The header intact, the payload replaced by as many random bytes."""
    cut = _header_end(blob) + 1
    return blob[:cut] + _random_bytes(len(blob) - cut)


def _forged_checksum(blob):
    """A payload that is no executable under a header whose checksum matches it."""
    magic, head, _ = blob.split(b"\n", 2)
    junk = _random_bytes(4096, seed=1)
    meta = json.loads(head)
    meta["sha256"] = hashlib.sha256(junk).hexdigest()
    return magic + b"\n" + json.dumps(meta).encode() + b"\n" + junk


TRUNCATED = {
    "zero-length file": lambda b: b"",
    "magic line only": lambda b: b[:b.index(b"\n") + 1],
    "header cut in the middle": lambda b: b[:(b.index(b"\n") + _header_end(b)) // 2],
    "header without its payload": lambda b: b[:_header_end(b) + 1],
    "last byte missing": lambda b: b[:-1],
}
CORRUPT = {
    "random bytes of the same length": lambda b: _random_bytes(len(b)),
    "payload random, header intact": _random_payload,
    "one bit flipped in the payload": _flip_bit,
    "payload no executable, checksum matching": _forged_checksum,
}


@pytest.mark.parametrize("damage", list(TRUNCATED.values()), ids=list(TRUNCATED))
def test_truncated_entry_is_recompiled_and_rewritten(filled, tmp_path, damage):
    """(a) One of two entries truncated: the other still loads, the damaged one's graph is
    compiled again and its entry rewritten, so the next process loads both."""
    folder, paths, good = _clone(filled, tmp_path)
    paths["5"].write_bytes(damage(good["5"]))
    r = _run(folder, "5", "6")
    assert (r["compiles"], r["disk_hits"]) == (1, 1)
    r = _run(folder, "5", "6")
    assert (r["compiles"], r["disk_hits"]) == (0, 2)
    assert _entries(folder) == sorted(p.name for p in paths.values())


@pytest.mark.parametrize("damage", list(CORRUPT.values()), ids=list(CORRUPT))
def test_corrupt_entry_is_recompiled_and_rewritten(filled, tmp_path, damage):
    """(b) One of two entries overwritten (random bytes, a flipped bit, or a well-formed entry
    whose payload is no executable): never run, compiled again, rewritten."""
    folder, paths, good = _clone(filled, tmp_path)
    bad = damage(good["5"])
    assert bad != good["5"]
    paths["5"].write_bytes(bad)
    r = _run(folder, "5", "6")
    assert (r["compiles"], r["disk_hits"]) == (1, 1)
    assert paths["5"].read_bytes() != bad
    r = _run(folder, "5", "6")
    assert (r["compiles"], r["disk_hits"]) == (0, 2)


def test_entry_replaced_by_a_folder(filled, tmp_path):
    """(b) An entry's name taken by a folder: it can be neither read nor replaced, so that
    graph is compiled in every process; the other entry still loads, no temporary is left."""
    folder, paths, _ = _clone(filled, tmp_path)
    paths["5"].unlink()
    paths["5"].mkdir()
    for _ in range(2):
        r = _run(folder, "5", "6")
        assert (r["compiles"], r["disk_hits"]) == (1, 1)
    assert paths["5"].is_dir() and sorted(p.name for p in folder.iterdir()) == sorted(
        p.name for p in paths.values())


def _drop_dac_capabilities():
    """(In the child, before exec.) Root without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH obeys
    file modes: drop them from the bounding set, so the exec'd Python never has them."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _unprivileged():
    """subprocess keywords under which a chmod-read-only folder is unwritable to the child."""
    if os.geteuid() != 0:
        return {}
    with open("/proc/self/status") as f:
        eff = next(int(line.split()[1], 16) for line in f if line.startswith("CapEff:"))
    if not eff & (1 << 8):  # CAP_SETPCAP, needed to shrink the bounding set
        pytest.skip("running as root without CAP_SETPCAP: a read-only folder stays "
                    "writable to the children")
    return {"preexec_fn": _drop_dac_capabilities}


def test_read_only_folder_is_used_for_reading(filled, tmp_path):
    """(c) The folder made read-only (0500, entries 0400) after a first run, one entry in it
    corrupt: intact entries still load, the corrupt one and a new structure are compiled in
    every process (they cannot be stored), values stay right, nothing in the folder changes."""
    folder, paths, good = _clone(filled, tmp_path)
    paths["6"].write_bytes(_random_bytes(len(good["6"])))
    for p in paths.values():
        p.chmod(0o400)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    folder.chmod(0o500)
    try:
        for _ in range(2):
            r = _run(folder, "5", "6", "7", **_unprivileged())
            assert (r["compiles"], r["disk_hits"]) == (2, 1)
            assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    finally:
        folder.chmod(0o700)


@pytest.mark.parametrize("where", ["the path", "a parent"])
def test_cache_path_is_a_regular_file(tmp_path, where):
    """(d) XLA_ARRAY_CACHE_DIR names an existing regular file, or a path under one: no cache,
    every structure compiled, right values, the file untouched."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_bytes(b"user data")
    path = blocker if where == "the path" else blocker / "cache"
    for _ in range(2):
        r = _run(path, "5", "6")
        assert (r["compiles"], r["disk_hits"]) == (2, 0)
    assert blocker.read_bytes() == b"user data"


def test_two_processes_fill_one_folder_at_once(tmp_path):
    """(e) Two processes released together on an empty folder, each compiling the same three
    structures and two of its own: both right (a shared structure is compiled or loaded, once
    per process), then a third process loads all seven from disk without compiling."""
    folder, barrier = tmp_path / "cache", tmp_path / "barrier"
    barrier.mkdir()
    shared, own = ["4", "5", "6"], (["7", "8"], ["9", "10"])
    procs = [_start(folder, shared + mine, env={"CACHE_FAULT_BARRIER": str(barrier)})
             for mine in own]
    try:
        deadline = time.monotonic() + 60
        while len(list(barrier.glob("ready.*"))) < 2 and time.monotonic() < deadline:
            dead = [p for p in procs if p.poll() is not None]
            assert not dead, dead[0].communicate()[1]
            time.sleep(0.01)
        (barrier / "go").touch()
        for proc, mine in zip(procs, own, strict=True):
            r = _finish(proc, shared + mine)
            assert r["compiles"] + r["disk_hits"] == 5 and r["compiles"] >= 2
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    everything = shared + own[0] + own[1]
    r = _run(folder, *everything)
    assert (r["compiles"], r["disk_hits"]) == (0, 7)
    assert len(_entries(folder)) == 7 and sorted(os.listdir(folder)) == _entries(folder)


@pytest.mark.parametrize("what", ["entries", "folder"])
def test_deleted_between_runs(filled, tmp_path, what):
    """(f) The entries (or the whole folder) deleted between two runs: the next process
    compiles again and stores anew (the folder recreated private), the one after loads."""
    folder, paths, _ = _clone(filled, tmp_path)
    if what == "entries":
        for p in paths.values():
            p.unlink()
    else:
        shutil.rmtree(folder)
    r = _run(folder, "5", "6")
    assert (r["compiles"], r["disk_hits"]) == (2, 0)
    assert _entries(folder) == sorted(p.name for p in paths.values())
    assert folder.stat().st_mode & 0o777 == 0o700
    r = _run(folder, "5", "6")
    assert (r["compiles"], r["disk_hits"]) == (0, 2)


def test_folder_deleted_while_a_process_runs(filled, tmp_path):
    """(f) The cache folder removed between two graphs of one process (a cache cleaner): the
    process goes on (storing the second entry fails quietly), later processes rebuild it."""
    folder, _, _ = _clone(filled, tmp_path)
    r = _run(folder, "5", "wipe", "7")
    assert (r["compiles"], r["disk_hits"]) == (1, 1)
    r = _run(folder, "5", "7")
    assert (r["compiles"], r["disk_hits"]) == (2, 0)
    r = _run(folder, "5", "7")
    assert (r["compiles"], r["disk_hits"]) == (0, 2)
