"""The engine: dtypes, settings, the lazy graph, op definitions, lowering to StableHLO, the
executor, the executable caches and the runtime (``backend``: the only module that imports
jaxlib). Nothing here knows the Array class or the namespace functions; ``kernels`` and ``api``
build on it (tests/test_layers.py checks that imports only go that way)."""
