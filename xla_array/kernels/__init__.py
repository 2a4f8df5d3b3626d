"""Native kernels: XLA FFI handlers in C (``native/``), built with the package (``setup.py``)
and loaded by ``library``, each registering itself in ``core/registry.py`` with its op and its
selection rule, a rewrite of the planned graph (``rowpass``: ``X.T @ f(X @ w)`` in one pass;
``lu_perm``: LU pivots to a permutation; ``pairwise``: sums in NumPy's order; ``scan``:
cumulative sums and products in NumPy's order; ``blas``: matrix products with NumPy's own
BLAS, tried after the row pass; ``ufunc``: exp, log, sin, pow... with NumPy's own loops;
``layout``: LAPACK's column-major operands copied natively, so XLA keeps the steps computing
them row-major; ``pocketfft``: small FFTs with NumPy's own loops). Above ``core``, below
``api``: importing the package registers them. Without the built libraries the pure-XLA paths
give the same results."""

from . import blas, layout, lu_perm, pairwise, pocketfft, rowpass, scan, ufunc

__all__ = ["blas", "layout", "lu_perm", "pairwise", "pocketfft", "rowpass", "scan",
           "ufunc"]
