"""What users call: the Array class, its operators and methods, the namespace functions of the
standard (one module per section: creation, dtype functions, elementwise, indexing,
manipulation, searching, sets, sorting, statistical, utility), ``matmul`` and ``jit``. Built on
``core`` (and ``kernels``); the public modules (``xla_array``, ``linalg``, ``fft``,
``sharding``, ``debug``) sit on top."""
