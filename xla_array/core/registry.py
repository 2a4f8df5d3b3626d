"""The native kernels the engine may call: the one contract between the executor and
``xla_array/kernels``.

A kernel module registers a ``Kernel`` when it is imported: its kind, the text its custom call
has in a lowered module (how the executor recognizes an executable that calls it), a title for
messages, and how to tell whether it is usable here (built and loaded; ``error`` says why not).
The executor registers every kernel an executable calls before compiling it or loading it from
bytes (``executor.register_targets``), so a kernel is found through this table, never by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Kernel", "KERNELS", "register"]


@dataclass(frozen=True)
class Kernel:
    kind: str  # "blas", "rowpass", "lu_perm"
    mark: str  # text of its call in a lowered module: '"xla_array_gemm_'
    title: str  # for messages: "BLAS matmul kernel"
    available: Callable[[], bool]  # built, loaded and registered with XLA here
    error: Callable[[], str]  # why not, when not


KERNELS: dict[str, Kernel] = {}


def register(kernel: Kernel) -> Kernel:
    KERNELS[kernel.kind] = kernel
    return kernel
