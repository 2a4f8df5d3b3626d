"""What the introspection functions tell is true (issue 62 item 11): ``flags.describe()``
prints as text, ``bool()`` of many values says what NumPy says, ``materialize`` says it is
asynchronous and ``block_until_ready`` waits, ``debug.hlo`` after a disk-cache hit names the
caller's lines."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import xla_array as xp


def test_describe_prints_one_setting_a_paragraph():
    d = xp.flags.describe()
    assert d["max_pending"][0] == xp.flags.get("max_pending")   # still a dict of (value, help)
    text = str(d)
    lines = text.splitlines()
    assert len(lines) > len(d) and max(map(len, lines)) <= 100
    assert repr(d) == text
    assert re.search(r"^max_pending = \d+  \(XLA_ARRAY_MAX_PENDING\)$", text, re.M)


@pytest.mark.parametrize("shape", [(3,), (2, 2), (0,)])
def test_bool_of_many_or_no_values_raises_numpys_error(shape):
    a = np.ones(shape)
    with pytest.raises(ValueError) as want:
        bool(a)
    with pytest.raises(ValueError) as got:
        bool(xp.asarray(a) + 1.0)
    assert str(got.value) == str(want.value)
    if a.size:
        assert "a.any() or a.all()" in str(got.value)
    assert bool(xp.asarray([[2.0]]) > 1.0) is True


def test_materialize_documents_that_it_is_asynchronous():
    assert "Asynchronous" in xp.materialize.__doc__
    assert "block_until_ready" in xp.materialize.__doc__
    assert "block_until_ready" in xp.__all__
    x = xp.asarray(np.arange(5.0)) * 2.0
    xp.block_until_ready(x)
    assert not x.is_pending and np.asarray(x).tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]


FIRST = """import numpy as np, xla_array as xp
x = xp.asarray(np.arange(4.0))
z = xp.sin(x) * 3.0 + 1.0
xp.flags.set(host_first=False)
print(float(xp.sum(z)))
"""
SECOND = """import re, numpy as np, xla_array as xp
#
x = xp.asarray(np.arange(4.0))
#
z = xp.sin(x) * 3.0 + 1.0
xp.flags.set(host_first=False)
h = xp.debug.hlo(xp.sum(z))
print(xp.debug.metrics()["disk_hits"], sorted(set(re.findall(r'source_file="([^"]+)"', h))),
      sorted(set(re.findall(r"source_line=(\\d+)", h))))
"""


def test_hlo_after_a_disk_cache_hit_names_the_callers_lines(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("XLA_ARRAY_")}
    env["XLA_ARRAY_CACHE_DIR"] = str(tmp_path / "cache")
    for name, code in (("first.py", FIRST), ("second.py", SECOND)):
        (tmp_path / name).write_text(code)
    subprocess.run([sys.executable, str(tmp_path / "first.py")], env=env, check=True,
                   capture_output=True)
    out = subprocess.run([sys.executable, str(tmp_path / "second.py")], env=env, check=True,
                         capture_output=True, text=True).stdout
    # the executable came from the disk (first.py compiled it, at its lines 3 and 5), and the
    # HLO names second.py's lines 5 (sin, *, +) and 7 (sum)
    assert out.strip() == f"1 ['{tmp_path / 'second.py'}'] ['5', '7']", out
