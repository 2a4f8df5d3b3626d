"""A CI-sized subset of SciPy's own array-API tests run with xla_array as their backend, through
conformance/scipy_xla.py (the full runs, beside array_api_strict: conformance/peers.py). The
ndimage selection failed before np.asarray(x) wrote back into x (its output= arrays), the
devices one before the plugin gave SciPy's `devices` fixture a list."""

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("scipy")
ROOT = Path(__file__).resolve().parents[1]

SELECTIONS = {
    "cluster": ["--pyargs", "scipy.cluster"],
    "ndimage-output": ["--pyargs", "scipy.ndimage.tests.test_filters", "-k",
                       "test_correlate14 or test_correlate01_overlap or test_prewitt02 "
                       "or test_gauss_memory_overlap"],
    # SciPy's `devices` fixture appends [None] to devices(), a list in 2024.12 (SciPy's version)
    # and a tuple in xla_array's 2025.12: the plugin hands it the list it expects
    "devices": ["--pyargs", "scipy.special.tests.test_logsumexp", "scipy.fft.tests.test_helper",
                "-k", "test_device"],
}


def _run(args: list[str], tmp_path: Path, plugin: str | None = "scipy_xla"):
    """Run SciPy's tests ``args`` in a subprocess (with the plugin), its results written as
    JUnit XML; returns (the process, [(test id, outcome)])."""
    env = dict(os.environ, SCIPY_ARRAY_API="1", PYTHONHASHSEED="0",
               PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "conformance")]))
    junit = tmp_path / "results.xml"
    cmd = [sys.executable, "-m", "pytest", *(["-p", plugin] if plugin else []),
           "-p", "no:cacheprovider", "-m", "array_api_backends", "-q", "-W", "ignore",
           f"--junitxml={junit}", *args]
    run = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    cases = []
    if junit.exists():
        for case in ET.parse(junit).iter("testcase"):
            outcome = next((c.tag for c in case if c.tag in ("failure", "error", "skipped")),
                           "passed")
            cases.append((case.get("name", ""), outcome))
    return run, cases


def _assert_xla_array_ran(run, cases) -> None:
    """The guard that the plugin put xla_array in NumPy's place: the run passed, at least 5
    tests passed, and every test that ran was parametrized with xla_array (its id's
    parameter, ``[xla_array]`` or ``[xla_array-...]``), none with another namespace."""
    tail = run.stdout[-3000:]
    assert run.returncode == 0, tail
    ids = [re.search(r"\[(.*)\]$", name) for name, _ in cases]
    ran = [(name, m.group(1).split("-") if m else []) for (name, _), m in zip(cases, ids)]
    others = [name for name, params in ran if "xla_array" not in params]
    assert not others, f"tests run without xla_array as xp: {others[:5]}"
    passed = [name for name, outcome in cases if outcome == "passed"]
    assert len(passed) >= 5, (cases, tail)


@pytest.mark.parametrize("name", SELECTIONS)
def test_scipy_array_api_subset(name, tmp_path):
    _assert_xla_array_ran(*_run(SELECTIONS[name], tmp_path))


def test_the_guard_fails_where_the_plugin_does_not_substitute_xla_array(tmp_path):
    """Without the plugin SciPy's ``xp`` fixture runs its own namespaces (NumPy, and
    array_api_strict where installed): those runs pass, and the guard must say that xla_array
    did not run."""
    run, cases = _run(SELECTIONS["devices"], tmp_path, plugin=None)
    assert run.returncode == 0 and cases, run.stdout[-3000:]
    with pytest.raises(AssertionError, match="without xla_array"):
        _assert_xla_array_ran(run, cases)
