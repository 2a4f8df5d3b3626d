"""pytest plugin: run SciPy's own array-API tests against xla_array.

SciPy parametrizes its array-API tests with the `xp` fixture of `scipy/conftest.py` over the
namespaces it knows (numpy, array_api_strict, torch, cupy, jax.numpy, dask.array), chosen with
`SCIPY_ARRAY_API`. Loaded before collection (`-p scipy_xla`, with `conformance/` on
`PYTHONPATH`), this plugin makes that list xla_array alone, under the id `xla_array`, and
registers `xla_array` as a known backend so that `@skip_xp_backends(np_only=True)` and
friends apply to it as to any other non-NumPy backend. Markers naming another backend
(`skip_xp_backends("jax.numpy")`) do not apply to it. xla_array is an eager-capable CPU
backend: `cpu_only` and `eager_only` skips do not apply either.

Nothing in the installed SciPy is edited: the fixture's parameters are replaced when pytest
generates the tests. Select only the tests that use `xp` with `-m array_api_backends`;
`SCIPY_ARRAY_API=1` must be set (see conformance/README.md and conformance/scipy_run.py).
"""

import pytest

import xla_array

_PARAM = pytest.param(xla_array, id="xla_array", marks=pytest.mark.array_api_backends)


def _is_scipy_conftest(module) -> bool:
    return getattr(module, "__name__", "").endswith("conftest") and hasattr(
        module, "xp_known_backends") and hasattr(module, "skip_or_xfail_xp_backends")


def pytest_plugin_registered(plugin, manager):
    if _is_scipy_conftest(plugin):
        plugin.xp_known_backends.add("xla_array")


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc):
    """Replace the `xp` fixture's parameters (SciPy's list) by xla_array before pytest's own
    fixture manager parametrizes the test with them."""
    if "xp" not in metafunc.fixturenames:
        return
    for fixturedef in metafunc._arg2fixturedefs.get("xp", ()):
        module = getattr(fixturedef.func, "__module__", "")
        if module.endswith("conftest") and fixturedef.params is not None:
            fixturedef.params = [_PARAM]
            fixturedef.ids = None
