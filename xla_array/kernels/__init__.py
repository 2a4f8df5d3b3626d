"""Native kernels: XLA FFI handlers in C (``native/``), built with the system C compiler and
cached per user (``build``), each with its selection rule (``blas``: large CPU matmuls;
``rowpass``: ``X.T @ f(X @ w)`` in one pass). Above ``core``, below ``api``; without a C
compiler the pure-XLA paths give the same results."""
