"""The differential fuzzer (tests/fuzzer.py): a CI-sized run against array_api_strict, proof
that it catches a deliberately broken op, and determinism of its program generator.

Longer runs: ``python -m tests.fuzzer --seconds 600 [--seed N] [--ops N] [--focus add,sum]``.
"""

from __future__ import annotations

import contextlib
import io

import fuzzer
import numpy as np
import pytest

import xla_array

CI_SECONDS = 75.0       # the time-based budget of the CI run (each program costs a compile)
CI_SEED = 20251125


def test_fuzz_ci_run():
    """About 75 s of random programs: xla_array agrees with array_api_strict on all of them."""
    report = fuzzer.fuzz(CI_SECONDS, seed=CI_SEED, max_findings=3)
    print(report.summary())
    assert report.stats.programs >= 30, report.summary()
    assert not report.findings, "\n\n".join(f.report() for f in report.findings)


class _Broken:
    """xla_array with one function replaced."""

    def __init__(self, **replaced):
        self.__dict__.update(replaced)

    def __getattr__(self, name):
        return getattr(xla_array, name)


def _add_pairing_wrong(x1, x2):
    """add, but pairing each element of x1 with the previous element of x2 along the last
    axis (right on 0-d arrays, scalars and constant rows)."""
    if hasattr(x2, "ndim") and x2.ndim:
        x2 = xla_array.roll(x2, 1, axis=-1)
    return xla_array.add(x1, x2)


def _sum_slightly_off(x, /, **kwargs):
    """sum, with a relative error of 2**-13 on floating-point results."""
    out = xla_array.sum(x, **kwargs)
    if xla_array.isdtype(out.dtype, "real floating"):
        out = out + out * 2.0 ** -13
    return out


@pytest.mark.parametrize("name, broken", [("add", _add_pairing_wrong),
                                          ("sum", _sum_slightly_off)])
def test_fuzz_catches_a_broken_op(name, broken):
    """Against a namespace with one subtly wrong function, the fuzzer reports a mismatch whose
    reduced reproducer calls that function and runs as a script."""
    report = fuzzer.fuzz(30.0, seed=5, xp=_Broken(**{name: broken}), focus=(name,),
                         max_findings=1)
    assert report.findings, report.summary()
    finding = report.findings[0]
    assert finding.reduced_mismatch.kind in ("value", "shape")
    source = finding.reduced.source()
    assert f"xp.{name}(" in source
    assert len(finding.reduced.steps) <= len(finding.program.steps)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(finding.reduced.script(), {"__name__": "reproducer"})
    assert out.getvalue().startswith("array_api_strict")


def test_generator_is_deterministic():
    """A (seed, index) pair always gives the same program and inputs; other pairs differ."""
    for index in range(8):
        a, b = fuzzer.generate(17, index), fuzzer.generate(17, index)
        assert a.source() == b.source()
        assert [x.dtype for x in a.inputs()] == [x.dtype for x in b.inputs()]
        for x, y in zip(a.inputs(), b.inputs()):
            np.testing.assert_array_equal(x, y)
    sources = {fuzzer.generate(17, i).source() for i in range(8)}
    sources |= {fuzzer.generate(18, i).source() for i in range(8)}
    assert len(sources) == 16


def test_generator_makes_out_of_bounds_cases_on_request():
    """With ``oob``, some programs index out of bounds and end in a step strict rejects with
    IndexError (on by default: fuzzer.OUT_OF_BOUNDS_INDICES), none without it."""
    import array_api_strict
    found = 0
    for index in range(200):
        program = fuzzer.generate(3, index, focus=("getitem_int", "take"), oob=True)
        if program.steps and program.steps[-1].late_error_ok:
            ref = fuzzer.execute(program, array_api_strict)
            assert ref.error is not None and isinstance(ref.error[1], IndexError)
            found += 1
    assert found >= 3
    assert not any(s.late_error_ok for i in range(50)
                   for s in fuzzer.generate(3, i, focus=("getitem_int", "take"),
                                            oob=False).steps)
