"""Build configuration beyond pyproject.toml: the optional C core of the graph.

``xla_array.core._graphcore`` (``xla_array/core/graphcore.c``) implements the graph's hot path
(nodes, ``record``, leaves, the user-frame walk); ``xla_array.core.graph`` holds the same in pure
Python and uses it when the extension was not built (no C compiler at install time: the build
failure is only a warning, ``optional=True``) or ``XLA_ARRAY_NATIVE=0``.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("xla_array.core._graphcore", ["xla_array/core/graphcore.c"],
                             extra_compile_args=["-O2"], optional=True)])
