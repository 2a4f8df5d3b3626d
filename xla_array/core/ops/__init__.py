"""The op table: one ``OpDef`` per op (shape/dtype rule, lowering, fusion and weight), one
module per family (``structural``: shapes, reductions and shared helpers; ``elementwise`` with
``complex`` and ``ieee`` kernels; ``indexing``; ``sorting``; ``linalg``: LAPACK, solves, FFT)."""
