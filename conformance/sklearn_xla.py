"""pytest plugin: run scikit-learn's own array-API tests against xla_array.

scikit-learn parametrizes its array-API tests over the namespaces it knows (numpy,
array_api_strict, cupy, torch, dpnp). Loaded before collection, this plugin makes that list
xla_array alone, with float64 and float32 (see conformance/README.md for the command)."""

import sklearn.utils._array_api as _aa


def _namespaces(include_numpy_namespaces=True):
    yield "xla_array"


def _combinations(include_numpy_namespaces=True):
    yield "xla_array", None, "float64"
    yield "xla_array", None, "float32"


_aa.yield_namespaces = _namespaces
_aa.yield_namespace_device_dtype_combinations = _combinations
