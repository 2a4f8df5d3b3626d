"""A CI-sized subset of SciPy's own array-API tests run with xla_array as their backend, through
conformance/scipy_xla.py (the full runs, beside array_api_strict: conformance/peers.py). The
ndimage selection failed before np.asarray(x) wrote back into x (its output= arrays), the
devices one before the plugin gave SciPy's `devices` fixture a list."""

import os
import re
import subprocess
import sys
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


@pytest.mark.parametrize("name", SELECTIONS)
def test_scipy_array_api_subset(name, tmp_path):
    env = dict(os.environ, SCIPY_ARRAY_API="1", PYTHONHASHSEED="0",
               PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "conformance")]))
    cmd = [sys.executable, "-m", "pytest", "-p", "scipy_xla", "-p", "no:cacheprovider",
           "-m", "array_api_backends", "-q", "-W", "ignore", *SELECTIONS[name]]
    run = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    tail = run.stdout[-3000:]
    assert run.returncode == 0, tail
    passed = re.search(r"(\d+) passed", tail)
    assert passed and int(passed.group(1)) >= 5, tail
    assert "xla_array" in run.stdout or "passed" in tail
