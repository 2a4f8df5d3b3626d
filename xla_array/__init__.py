"""xla_array: a lazy, XLA-compiled implementation of the Python array API standard.

``import xla_array as xp`` and use it like NumPy. Operations are recorded into a graph; values
are computed, one fused XLA executable per materialization, only when needed (see docs/).
"""

from __future__ import annotations

import math as _math
import sys as _sys

from . import debug, fft, linalg, random, sharding
from .api import (
    array_methods,
    numpy_methods,  # noqa: F401  (installs NumPy's array methods)
)
from .api import numpy_functions as _numpy_functions
from .api.advanced_indexing import *  # noqa: F403
from .api.advanced_indexing import __all__ as _advanced_all
from .api.array import Array
from .api.creation import (
    arange,
    asarray,
    empty,
    empty_like,
    eye,
    from_dlpack,
    full,
    full_like,
    linspace,
    meshgrid,
    ones,
    ones_like,
    tril,
    triu,
    zeros,
    zeros_like,
)
from .api.dtype_functions import astype, can_cast, finfo, iinfo, isdtype, result_type
from .api.elementwise import *  # noqa: F403
from .api.elementwise import __all__ as _elementwise_all
from .api.extras import diag, logspace
from .api.inspection import DEFAULT_VERSION, __array_namespace_info__
from .api.jit import cached, compile, deserialize, jit
from .api.manipulation import (
    broadcast_arrays,
    broadcast_shapes,
    broadcast_to,
    concat,
    expand_dims,
    flip,
    moveaxis,
    permute_dims,
    reshape,
    roll,
    squeeze,
    stack,
    tile,
    unstack,
)
from .api.materialize import block_until_ready, materialize
from .api.matmul import matmul, matrix_transpose, tensordot, vecdot
from .api.numpy_functions import *  # noqa: F403  (NumPy's functions beyond the standard)
from .api.numpy_functions import __all__ as _numpy_all
from .api.numpy_functions import missing_attribute as __getattr__  # noqa: F401
from .api.numpy_methods import METHODS as _NUMPY_METHODS
from .api.searching import *  # noqa: F403
from .api.searching import __all__ as _searching_all
from .api.searching import argmax, argmin, where
from .api.sets import *  # noqa: F403
from .api.sets import __all__ as _set_all
from .api.sorting import *  # noqa: F403
from .api.sorting import __all__ as _sorting_all
from .api.statistical import *  # noqa: F403
from .api.statistical import __all__ as _statistical_all
from .api.statistical import all, any, max, mean, min, prod, std, sum, var
from .api.stream import stream, stream_cached
from .api.utility import *  # noqa: F403
from .api.utility import __all__ as _utility_all
from .core import flags
from .core.devices import Device, using_device
from .core.dtypes import (
    bfloat16,
    bool,
    complex64,
    complex128,
    float8_e4m3fn,
    float8_e5m2,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .core.executor import CompileError
from .numpy_polynomials import polyfit, roots

__array_api_version__ = DEFAULT_VERSION
__version__ = "0.1.0"

e = _math.e
inf = _math.inf
nan = _math.nan
pi = _math.pi
newaxis = None

__all__ = [
    "Array", "Device", "CompileError", "materialize", "using_device", "flags", "debug",
    "jit", "compile", "cached", "deserialize", "block_until_ready", "stream", "stream_cached",
    "__array_api_version__", "__array_namespace_info__", "e", "inf", "nan", "pi", "newaxis",
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128", "float8_e4m3fn",
    "float8_e5m2",
    "arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like",
    "linspace", "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like", "diag",
    "logspace",
    "astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type",
    "matmul", "matrix_transpose", "tensordot", "vecdot",
    "broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis",
    "permute_dims", "reshape", "roll", "squeeze", "stack", "tile", "unstack",
    "broadcast_shapes",
    "argmax", "argmin", "where", "all", "any", "max", "mean", "min", "prod", "std", "sum", "var",
    *_elementwise_all, *_statistical_all, *_searching_all, *_sorting_all, *_set_all,
    *_utility_all, *_advanced_all, "fft", "linalg", "random", "sharding",
    *_numpy_all, "polyfit", "roots",
]
__all__ = sorted(set(__all__), key=__all__.index)

# NumPy's functions called on our arrays (NEP 18: ``Array.__array_function__``) answer from
# the assembled namespace, which sits above array_methods: installed here. NumPy's forms of a
# name win for module numpy: numpy_functions' own, std/var with NumPy's ddof (the methods'
# forms), then its NUMPY_VERSIONS (the names whose top-level function stays the standard's)
array_methods.NUMPY_NAMESPACES.update(
    {"numpy": _sys.modules[__name__], "numpy.linalg": linalg, "numpy.fft": fft})
array_methods.NUMPY_FORMS.update({_n: getattr(_numpy_functions, _n) for _n in _numpy_all})
array_methods.NUMPY_FORMS.update(std=_NUMPY_METHODS["std"], var=_NUMPY_METHODS["var"])
array_methods.NUMPY_FORMS.update(_numpy_functions.NUMPY_VERSIONS)

del annotations  # (the __future__ import binds the name; it is not part of the namespace)
