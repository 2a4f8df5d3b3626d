"""pytest plugin: run array-api-extra's own test suite against xla_array.

array-api-extra's tests take their namespace from the `library` fixture of `tests/conftest.py`,
parametrized over its `Backend` enum (numpy, array_api_strict, torch, jax, dask, ...); the `xp`
fixture imports `library.modname`. Loaded before collection (`-p aae_xla`, with `conformance/`
on `PYTHONPATH`), this plugin makes that list one backend, `xla_array`: an object that answers
what the tests ask of a `Backend` (`modname`, `like`, `name`, `value`) and equals none of the
enum's members, so `skip_xp_backend(Backend.JAX)` and `library.like(Backend.DASK)` do not apply
to it. Nothing in the checkout is edited (see conformance/README.md).
"""

import pytest


class XlaArrayBackend:
    """Stands for xla_array where array-api-extra's tests expect a `Backend` member."""

    name = "XLA_ARRAY"
    value = "xla_array"
    modname = "xla_array"

    def like(self, *others) -> bool:
        return any(getattr(other, "modname", None) == self.modname for other in others)

    def pytest_param(self):
        return pytest.param(self, id="xla_array")

    def __str__(self) -> str:
        return "xla_array"

    __repr__ = __str__


_BACKEND = XlaArrayBackend()


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc):
    """Replace the `library` fixture's parameters (the Backend enum) by xla_array before
    pytest's own fixture manager parametrizes the test with them."""
    if "library" not in metafunc.fixturenames:
        return
    for fixturedef in metafunc._arg2fixturedefs.get("library", ()):
        if fixturedef.params is not None:
            fixturedef.params = [_BACKEND.pytest_param()]
            fixturedef.ids = None
