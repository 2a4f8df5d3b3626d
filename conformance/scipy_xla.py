"""pytest plugin: run SciPy's own array-API tests against xla_array.

SciPy parametrizes its array-API tests with the `xp` fixture of `scipy/conftest.py` over the
namespaces it knows (numpy, array_api_strict, torch, cupy, jax.numpy, dask.array), chosen with
`SCIPY_ARRAY_API`. Loaded before collection (`-p scipy_xla`, with `conformance/` on
`PYTHONPATH`), this plugin makes that list xla_array alone, under the id `xla_array`, and
registers `xla_array` as a known backend so that `@skip_xp_backends(np_only=True)` and
friends apply to it as to any other non-NumPy backend. Markers naming another backend
(`skip_xp_backends("jax.numpy")`) do not apply to it. xla_array is an eager-capable CPU
backend: `cpu_only` and `eager_only` skips do not apply either.

SciPy 1.17 targets the standard's 2024.12 version (it pins array_api_strict to it), where
`__array_namespace_info__().devices()` is a list, and its `devices` fixture appends `[None]` to
it; xla_array is the 2025.12 namespace, whose `devices()` is a tuple (as strict's is at 2025.12),
so the plugin gives that fixture the list SciPy expects: the same devices, plus None.

Nothing in the installed SciPy is edited: the fixture's parameters are replaced when pytest
generates the tests. Select only the tests that use `xp` with `-m array_api_backends`;
`SCIPY_ARRAY_API=1` must be set (see conformance/README.md and conformance/peers.py).
"""

import pytest

import xla_array

_PARAM = pytest.param(xla_array, id="xla_array", marks=pytest.mark.array_api_backends)


def _devices_as_list(original):
    """SciPy's `devices` fixture, given xla_array's devices as the 2024.12 list it expects."""
    if getattr(original, "_xla_array", False):
        return original

    def devices(xp):
        if xp is xla_array:
            return list(xla_array.__array_namespace_info__().devices()) + [None]
        return original(xp)

    devices._xla_array = True  # type: ignore[attr-defined]
    return devices


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
    for fixturedef in metafunc._arg2fixturedefs.get("devices", ()):
        if getattr(fixturedef.func, "__module__", "").endswith("conftest"):
            fixturedef.func = _devices_as_list(fixturedef.func)
    for fixturedef in metafunc._arg2fixturedefs.get("xp", ()):
        module = getattr(fixturedef.func, "__module__", "")
        if module.endswith("conftest") and fixturedef.params is not None:
            fixturedef.params = [_PARAM]
            fixturedef.ids = None
