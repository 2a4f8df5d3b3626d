"""The native kernels the engine may call: the one contract between the engine and
``xla_array/kernels``.

A kernel module registers one ``Kernel`` when it is imported. The record holds everything the
engine needs to know about it:

- ``source``: its C file (built into a shared library when the package is built, never at run
  time; ``kernels/library.py`` loads it);
- ``targets``: the XLA FFI custom-call targets it registers (how the executor recognizes an
  executable that calls it, ``compiling.custom_targets``);
- ``op``: the op whose lowering calls it;
- ``replaces`` and ``rule``: its selection rule, a rewrite of the planned graph
  (``core/rewrite.py``, run by ``lower.lower`` before a graph is lowered): for a node of op
  ``replaces`` (a name, or several), ``rule(node)`` returns the ``(inputs, attrs)`` of an
  ``op`` node computing the same value, or None to leave the node alone;
- ``available`` / ``error``: whether the library was built, loads and registered its targets
  here (and why not); ``present``: whether it may, asked without loading anything (the
  library built, native code allowed); ``flag``: the setting that turns the kernel off;
- ``host``: the first-use tier's rule for the nodes it replaces (``core/hosteval.py``),
  ``host(node, values, attrs)`` with the values of the rule's inputs and its attrs, computing
  the kernel's bits; a kernel without one computes its op's bits (sums in NumPy's order), so
  the replaced op's own host rule stands.

The executor registers every kernel an executable calls before compiling it or loading it from
bytes (``compiling.register_targets``), so a kernel is found through this table, never by name.
Whether a rewrite applies depends only on the graph's structure and on which kernels are in
use: the structural key of a graph is taken before the rewrite, so ``context()`` (the kinds
that may be used) is part of the disk cache's context, and a change of a kernel's setting
drops the executables compiled in memory.

A kernel's library is loaded when a graph first needs it (``may_use`` says whether it may be
used without loading it; ``rewrite.match`` loads it before its rule takes a node), so a
process pays only for the kernels its graphs use, each at its first use: the FFT kernel's
load (2.1 ms, NumPy's loops looked up) is not the first graph's, whatever that graph is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import flags as _flags
from .cache import executables

__all__ = ["Kernel", "KERNELS", "register", "in_use", "may_use", "kind_in_use", "context",
           "state", "availability_changed"]


@dataclass(frozen=True)
class Kernel:
    kind: str  # "rowpass", "lu_perm"
    title: str  # for messages: "row-pass kernel"
    source: str  # its C file, relative to xla_array/kernels: "native/rowpass_ffi.c"
    targets: tuple[str, ...]  # the FFI custom-call targets it registers
    op: Any  # the OpDef whose lowering calls it
    replaces: str | tuple[str, ...]  # the op(s) whose nodes ``rule`` may rewrite into ``op``
    rule: Callable[[Any], tuple[tuple, Any] | None]  # node -> (inputs, attrs) of ``op``, or None
    available: Callable[[], bool]  # built, loaded and registered with XLA here
    error: Callable[[], str]  # why not, when not
    flag: str | None = None  # the setting that turns it off (``XLA_ARRAY_<FLAG>=0``)
    # whether ``available`` may say yes, asked without loading the library (None: ask it)
    present: Callable[[], bool] | None = None
    host: Callable[[Any, list, Any], Any] | None = None  # (node, values, attrs) -> ndarray
    # node of an op in ``replaces`` that ``rule`` does not take -> whether ``host`` computes
    # it too, from the node's own inputs and attrs (the op's own rule's bits, faster)
    host_also: Callable[[Any], bool] | None = None
    order: int = 0  # kernels replacing the same op are tried by increasing order


KERNELS: dict[str, Kernel] = {}


def register(kernel: Kernel) -> Kernel:
    KERNELS[kernel.kind] = kernel
    if kernel.flag is not None:  # executables keyed before the rewrite: drop them
        _flags.on_change(kernel.flag, executables.clear)
    return kernel


def _setting_on(kernel: Kernel) -> bool:
    return kernel.flag is None or bool(_flags._values[kernel.flag])


def in_use(kernel: Kernel) -> bool:
    """Whether graphs are rewritten to call ``kernel``: its setting is on and it is available
    (loaded here, if it was not yet)."""
    return _setting_on(kernel) and kernel.available()


def may_use(kernel: Kernel) -> bool:
    """Whether graphs may be rewritten to call ``kernel``, asked without loading it: its
    setting is on and it is available, or not tried yet with its library there
    (``Kernel.present``). What ``rewrite.rules`` and ``context`` go by; ``rewrite.match``
    loads a kernel (``available``) before its rule first takes a node."""
    if not _setting_on(kernel):
        return False
    return kernel.present() if kernel.present is not None else kernel.available()


# counts the changes of any kernel's availability that ``may_use`` sees (``kernels/library.py``:
# a library refused, a test turning one off or on; not a load that succeeds, which it expected):
# with the settings' generation and the number of kernels registered, ``state()`` changes
# whenever ``may_use`` may answer differently
_AVAILABILITY = [0]


def availability_changed() -> None:
    """Note that a kernel's ``may_use`` may answer differently from now on."""
    _AVAILABILITY[0] += 1


def state() -> tuple[int, int, int]:
    """A value that changes whenever the kernels in use may change (settings, availability,
    registrations): what is derived from them may be cached under it."""
    return _flags.generation(), _AVAILABILITY[0], len(KERNELS)


def kind_in_use(kind: str) -> bool:
    """Whether the kernel of ``kind`` is registered and in use (built, loaded, not off)."""
    k = KERNELS.get(kind)
    return k is not None and in_use(k)


def context() -> str:
    """The kinds of the kernels that may be used (``may_use``), for the disk cache's context
    (what an executable is stored under is taken once its graph is lowered: a library that
    failed to load meanwhile is left out)."""
    return ",".join(sorted(k.kind for k in KERNELS.values() if may_use(k)))
