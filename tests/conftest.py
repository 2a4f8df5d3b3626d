import os
import shutil
import sys
import threading

import pytest
from hypothesis import settings

# temporary files of test runs, one folder per run (see pytest_configure); git-ignored
TMP_ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        ".pytest_tmp")
_OWN_BASETEMP = pytest.StashKey[str]()  # this run's folder there

# Refuse stray settings from the environment: tests set what they need explicitly (except
# the number of CPU devices, XLA_ARRAY_NATIVE=0: .ci/run's leg without native code, and on a
# GPU machine the default device and the GPU memory settings: scripts/gpu_proof.sh).
USER_DEFAULTS = os.environ.pop("XLA_ARRAY_TEST_DEFAULTS", "") == "1"  # (see below)
_KEEP = ("XLA_ARRAY_CPU_DEVICES", "XLA_ARRAY_NATIVE", "XLA_ARRAY_DEFAULT_DEVICE")
for _k in list(os.environ):
    if _k.startswith("XLA_ARRAY_") and _k not in _KEEP and not _k.startswith("XLA_ARRAY_GPU_"):
        del os.environ[_k]

# XLA_ARRAY_TEST_DEFAULTS=1 (.ci/run's leg with the user's defaults) runs with
# the user's defaults instead of the two settings below: a graph met for the first time runs
# on the host and its results are handed back as they are, compiles happen behind the host's
# runs where the default says so.
if not USER_DEFAULTS:
    # Every graph compiles (the tests are about the compiled graphs), and every graph NumPy
    # can compute exactly is also evaluated on the host, its bits compared with the compiled
    # run's: the whole suite proves the host rules of core/ops/host.py
    # (tests/test_host_first.py tests the first-sight policy itself, with host_first on).
    os.environ["XLA_ARRAY_HOST_FIRST"] = "check"
    # Where a test turns host_first on, a structure whose host runs took the budget compiles
    # in the run that spent it, so that compile counts are what the test says;
    # tests/test_host_first.py tests the compile behind the host's runs (the default) with it
    # on.
    os.environ["XLA_ARRAY_COMPILE_BEHIND"] = "0"

# The on-disk compile cache would turn compiles into disk hits between runs; tests that count
# compiles need it off (tests/test_disk_cache.py turns it on in a private folder).
os.environ["XLA_ARRAY_CACHE_DIR"] = "off"
# SciPy reads this once, at its first import (xla_array's linalg may import it early).
os.environ.setdefault("SCIPY_ARRAY_API", "1")

# Not derandomized: the examples change with the seed, which scripts/test.sh sets from the
# date (--hypothesis-seed, printed, so a failure is reproduced with the same seed); a test
# sized to a few examples sees other ones each day instead of the same few forever.
settings.register_profile("ci", max_examples=30, deadline=None, print_blob=True)

settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists (signal 0 sends nothing: it only asks)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, as another user's
        pass
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    """``tmp_path`` folders go under the repository's ``.pytest_tmp/`` instead of the system's
    temporary folder: in a folder per run, ``<interpreter>-<pid>``, so that runs at the same
    time (several in one checkout, one per interpreter) never share or delete each other's.
    A run that passes removes its folder; a failed run's stays, for a look, until a later run
    starts and finds its process gone. ``--basetemp`` still chooses another folder."""
    if config.option.basetemp is not None:
        return
    os.makedirs(TMP_ROOT, exist_ok=True)
    for name in os.listdir(TMP_ROOT):
        pid = name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _running(int(pid)):
            shutil.rmtree(os.path.join(TMP_ROOT, name), ignore_errors=True)
    config.option.basetemp = os.path.join(TMP_ROOT,
                                          f"{sys.implementation.cache_tag}-{os.getpid()}")
    config.stash[_OWN_BASETEMP] = config.option.basetemp


def pytest_report_header(config):
    return ("xla_array settings: the user's defaults (XLA_ARRAY_TEST_DEFAULTS=1)" if USER_DEFAULTS
            else "xla_array settings: host_first=check, compile_behind=0")


def pytest_addoption(parser):
    parser.addoption("--fail-empty-modules", action="store_true",
                     help="fail the run when a test module collects no test or is skipped "
                     "whole at collection (a missing dependency): scripts/test.sh sets it")


def pytest_collectreport(report):
    """Note each test module that collected nothing or was skipped whole (``importorskip``
    at module level): with ``--fail-empty-modules`` the run fails on it, instead of the
    module's tests silently dropping out of the counts."""
    if not report.nodeid.endswith(".py") or not os.path.basename(
            report.nodeid).startswith("test_"):
        return
    why = None
    if report.skipped:
        longrepr = report.longrepr
        why = f"skipped whole: {longrepr[2] if isinstance(longrepr, tuple) else longrepr}"
    elif report.passed and not report.result:
        why = "collected no test"
    if why is not None:
        _empty.append(f"{report.nodeid}: {why}")


_empty: list[str] = []


def pytest_collection_finish(session):
    if _empty and session.config.getoption("fail_empty_modules"):
        raise pytest.UsageError("test modules that run nothing (--fail-empty-modules):\n  "
                                + "\n  ".join(_empty))


def pytest_sessionfinish(session, exitstatus):
    """Remove this run's temporary folder when every test passed."""
    own = session.config.stash.get(_OWN_BASETEMP, None)
    if own is not None and exitstatus == 0:
        shutil.rmtree(own, ignore_errors=True)


FAKE_JAX = ("import os\n"
            "with open(os.environ['FAKE_JAX_MARK'], 'a') as f:\n"
            "    f.write('imported\\n')\n"
            "raise ImportError('the tests\\' fake jax: xla_array must never import jax')\n")


def write_fake_jax(folder) -> dict:
    """A ``jax`` package in ``folder`` that records its import in ``folder/jax_imported``
    (and then fails as an absent jax would); returns the environment of a subprocess where it
    shadows any installed jax, so that a check that jax is never imported can fail whether or
    not jax is installed."""
    pkg = os.path.join(str(folder), "jax")
    os.makedirs(pkg, exist_ok=True)
    with open(os.path.join(pkg, "__init__.py"), "w") as f:
        f.write(FAKE_JAX)
    env = dict(os.environ, FAKE_JAX_MARK=os.path.join(str(folder), "jax_imported"))
    env["PYTHONPATH"] = os.pathsep.join([str(folder), *filter(None, [env.get("PYTHONPATH")])])
    return env


@pytest.fixture
def fake_jax(tmp_path):
    """(environment, path of the mark file): see write_fake_jax; asserts that the fake is the
    ``jax`` a subprocess with that environment imports."""
    import subprocess
    env = write_fake_jax(tmp_path)
    mark = env["FAKE_JAX_MARK"]
    subprocess.run([sys.executable, "-c", "import jax"], env=env, capture_output=True)
    with open(mark) as f:
        assert f.read() == "imported\n", "the fake jax is not the one imported"
    os.remove(mark)
    return env, mark


@pytest.fixture
def on_cpu():
    """Run the test with the CPU as its thread's default device: for tests about what is
    CPU-only (several CPU devices, the host-first tier, the native CPU kernels, NumPy's bits
    in the CPU lowering). A no-op where the CPU is the default device already; on a GPU
    machine (scripts/gpu_proof.sh) the rest of the suite runs on the GPU."""
    import xla_array as xp
    with xp.using_device("cpu"):
        yield


@pytest.fixture
def assert_pow_bits():
    """``check(got, want, base, exponent)``: ``got`` (a power computed by xla_array) equals
    NumPy's ``want`` bit for bit, except where NumPy's own pow is not libm's: NumPy builds
    for AVX-512 CPUs compute float64 pow with SIMD code (SVML) that misses the correctly
    rounded value by an ulp in ~3% of cases (measured on the GPU machine's CPU), where
    xla_array calls libm's pow; there ``got`` must be libm's value, and NumPy's must not."""
    import math

    import numpy as np

    def libm(b, e, dtype):
        try:
            return dtype(math.pow(float(b), float(e)))
        except (ValueError, OverflowError):
            with np.errstate(all="ignore"):
                return dtype(np.float64(b) ** np.float64(e))

    def check(got, want, base, exponent):
        got, want = np.asarray(got), np.asarray(want)
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        if same.all():
            return
        b, e = np.broadcast_arrays(np.asarray(base), np.asarray(exponent))
        b, e = np.broadcast_to(b, got.shape), np.broadcast_to(e, got.shape)
        for i in zip(*np.nonzero(~same)):
            ref = libm(b[i], e[i], got.dtype.type)
            assert got[i] == ref and want[i] != ref, (i, got[i], want[i], ref)
    return check


@pytest.fixture
def metrics():
    """Reset the metrics and return a function reading the current ones."""
    import xla_array as xp
    xp.debug.reset_metrics()
    return xp.debug.metrics


@pytest.fixture
def settling_hook():
    """An ``on_compile`` hook calling ``xp.debug.settle(0)``, registered for the test:
    returns (the events it saw, the RuntimeErrors settle raised in it)."""
    import xla_array as xp
    events, errors = [], []

    def hook(event):
        events.append(event)
        try:
            xp.debug.settle(0)
        except RuntimeError as e:
            errors.append(e)

    off = xp.debug.on_compile(hook)
    yield events, errors
    off()


@pytest.fixture
def run_threads():
    """``run(work, n)``: call ``work(i)`` for i in range(n) on n threads at once; returns the
    exceptions they raised (an assertion failing inside ``work`` is one)."""
    def run(work, n):
        errors = []

        def guarded(i):
            try:
                work(i)
            except Exception as e:  # noqa: BLE001  (returned to the test)
                errors.append(e)
        threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return errors
    return run
