"""The on-disk compile cache: reuse across processes, privacy, corruption, eviction."""

import os
import stat
import subprocess
import sys

import numpy as np

import xla_array as xp

SCRIPT = """
import json, time, numpy as np, xla_array as xp
t = time.perf_counter()
x = xp.asarray(np.arange(64.0).reshape(8, 8))
v = float(xp.sum(xp.tanh(x @ x.T * 0.01) - xp.mean(x, axis=0)))
m = xp.debug.metrics()
print(json.dumps({"v": v, "s": time.perf_counter() - t, "compiles": m["compiles"],
                  "disk_hits": m["disk_hits"]}))
"""


def _run(folder):
    env = dict(os.environ, XLA_ARRAY_CACHE_DIR=str(folder))
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, check=True,
                         capture_output=True, text=True).stdout
    import json
    return json.loads(out.strip().splitlines()[-1])


def test_second_process_loads_from_disk(tmp_path):
    folder = tmp_path / "cache"
    first = _run(folder)
    assert first["compiles"] == 1 and first["disk_hits"] == 0
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    files = list(folder.glob("*.xla"))
    assert len(files) == 1 and stat.S_IMODE(os.stat(files[0]).st_mode) == 0o600
    second = _run(folder)
    assert second["compiles"] == 0 and second["disk_hits"] == 1
    assert second["v"] == first["v"]


def test_corrupt_truncated_and_foreign_entries_are_rebuilt(tmp_path):
    folder = tmp_path / "cache"
    ref = _run(folder)
    (entry,) = folder.glob("*.xla")
    good = entry.read_bytes()
    for bad in (good[: len(good) // 2],                      # truncated
                good[:-10] + bytes(10),                      # corrupt payload
                b"not a cache entry at all",                 # foreign
                good.replace(b'"digest": "', b'"digest": "0', 1)):  # entry of another key
        entry.write_bytes(bad)
        r = _run(folder)
        assert r["compiles"] == 1 and r["disk_hits"] == 0 and r["v"] == ref["v"]
        assert entry.read_bytes() != bad  # rewritten by the fresh compile


def test_folder_writable_by_others_is_not_used(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, 0o777)
    r = _run(folder)
    assert r["compiles"] == 1 and list(folder.iterdir()) == []


def test_size_bound_evicts_oldest(tmp_path):
    folder = tmp_path / "cache"
    with xp.flags.using(cache_dir=str(folder), cache_max_bytes=1):
        x = xp.asarray(np.arange(5.0))
        float(xp.sum(x * 2.0 + 123.0))  # structures unique to this test
        xp.core.cache.disk.wait_for_eviction()
        float(xp.max(x * 2.0 - 77.0))
        xp.core.cache.disk.wait_for_eviction()
    assert len(list(folder.glob("*.xla"))) <= 1


SIN_COS = """
import json, sys, numpy as np, xla_array as xp
x = xp.asarray(np.linspace(0.0, 3.0, 50))
fn = getattr(xp, sys.argv[1])
print(json.dumps({"v": float(xp.sum(fn(x))), "compiles": xp.debug.metrics()["compiles"]}))
"""


def _run_fn(folder, fn):
    env = dict(os.environ, XLA_ARRAY_CACHE_DIR=str(folder))
    out = subprocess.run([sys.executable, "-c", SIN_COS, fn], env=env, check=True,
                         capture_output=True, text=True).stdout
    import json
    return json.loads(out.strip().splitlines()[-1])


def test_swapped_entries_with_rewritten_digests_are_misses(tmp_path):
    """Two entries of the same signature (sum(sin(x)), sum(cos(x))) swapped, each header's
    digest rewritten to match its new file name: loading one must not run the other."""
    import json
    folder = tmp_path / "cache"
    want = {fn: float(np.sum(getattr(np, fn)(np.linspace(0.0, 3.0, 50)))) for fn in
            ("sin", "cos")}
    names = {}
    for fn in ("sin", "cos"):
        before = set(folder.glob("*.xla"))
        assert np.isclose(_run_fn(folder, fn)["v"], want[fn], rtol=1e-12)
        (names[fn],) = set(folder.glob("*.xla")) - before
    blobs = {fn: names[fn].read_bytes() for fn in names}

    def forged(blob, into):
        magic, head, payload = blob.split(b"\n", 2)
        meta = json.loads(head)
        meta["digest"] = json.loads(blobs[into].split(b"\n", 2)[1])["digest"]
        return magic + b"\n" + json.dumps(meta).encode() + b"\n" + payload
    names["sin"].write_bytes(forged(blobs["cos"], "sin"))
    names["cos"].write_bytes(forged(blobs["sin"], "cos"))
    for fn in ("sin", "cos"):
        r = _run_fn(folder, fn)
        assert np.isclose(r["v"], want[fn], rtol=1e-12) and r["compiles"] == 1


KERNEL = """
import numpy as np, xla_array as xp
a = xp.asarray(np.arange(36.0).reshape(6, 6)) + 10 * xp.eye(6)
print(np.asarray(xp.linalg.solve(a, xp.ones(6))).tolist())
"""


def test_native_kernels_are_never_built_at_run_time(tmp_path):
    """The kernels come built with the package: a solve (which calls the LU permutation
    kernel) writes executables to the cache folder, and no library and no build folder."""
    import json
    folder = tmp_path / "cache"
    env = dict(os.environ, XLA_ARRAY_CACHE_DIR=str(folder))
    a = np.arange(36.0).reshape(6, 6) + 10 * np.eye(6)
    r = subprocess.run([sys.executable, "-c", KERNEL], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    np.testing.assert_allclose(json.loads(r.stdout.strip().splitlines()[-1]),
                               np.linalg.solve(a, np.ones(6)))
    assert not (folder / "native").exists() and not list(folder.rglob("*.so"))


def test_other_xla_flags_do_not_reuse_entries(tmp_path):
    """XLA_FLAGS change the generated code (--xla_cpu_max_isa=AVX: no fused multiply-adds), so
    an entry compiled under other flags is not loaded."""
    folder = tmp_path / "cache"
    first = _run(folder)
    env = dict(os.environ, XLA_ARRAY_CACHE_DIR=str(folder), XLA_FLAGS="--xla_cpu_max_isa=AVX")
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, check=True,
                         capture_output=True, text=True).stdout
    import json
    r = json.loads(out.strip().splitlines()[-1])
    assert r["compiles"] == 1 and r["disk_hits"] == 0 and np.isclose(r["v"], first["v"])
    assert _run(folder)["disk_hits"] == 1  # the first entry is still there for the old flags


def test_stores_rescan_the_folder_only_when_the_tally_passes_the_bound(tmp_path, monkeypatch):
    """A store used to list the whole folder (141 ms per compile with 33,000 entries); now a
    process keeps a tally and scans once, then again only past the bound (or every
    ``_RESCAN`` stores, for other processes' writes)."""
    from xla_array.core import cache
    scans = []
    real = os.scandir
    monkeypatch.setattr(cache.os, "scandir", lambda d: scans.append(d) or real(d))
    folder = tmp_path / "tally"
    folder.mkdir()
    disk = cache.DiskCache()
    payload = b"x" * 1000
    with xp.flags.using(cache_dir=str(folder), cache_max_bytes=10**6):
        for i in range(10):
            disk.store(f"key {i}", payload, {})
            disk.wait_for_eviction()
    assert len(scans) == 1
    with xp.flags.using(cache_dir=str(folder), cache_max_bytes=5500):
        disk.store("key 10", payload, {})  # past the bound: a scan, the oldest go
        disk.wait_for_eviction()
    assert len(scans) == 2  # (pathlib's glob below scans too)
    sizes = [p.stat().st_size for p in folder.glob("*.xla")]
    assert sum(sizes) <= 5500 and len(sizes) >= 3
