"""The one registry of settings: environment variables ``XLA_ARRAY_*`` and a context manager.

Each setting has a default, an environment variable read once at import, and a parser.
``xla_array.flags.get("max_pending")`` reads one; ``with xla_array.flags.using(...)`` changes
some for a block of code (thread-wide: settings are process-global on purpose, like NumPy's).
"""

from __future__ import annotations

import contextlib
import os
import textwrap
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["get", "set", "using", "describe"]


def _bool(s: str) -> bool:
    return s.strip().lower() not in ("", "0", "false", "no", "off")


def _host_first(s: str) -> bool | str:
    return "check" if s.strip().lower() == "check" else _bool(s)


def _tiered(s: str) -> bool | str:
    return "wait" if s.strip().lower() == "wait" else _bool(s)


def _auto(s: str) -> bool | str:
    return "auto" if s.strip().lower() == "auto" else _bool(s)


def _budget(s: str) -> float | str:
    return "auto" if s.strip().lower() in ("", "auto") else float(s)


def _opt_str(s: str) -> str | None:
    return s or None


def _cache_dir(s: str) -> str | None:
    s = s.strip()
    return None if s.lower() in ("", "0", "off", "false", "no", "none") else s


def _guard(s: str) -> str:
    s = s.strip().lower() or "allow"
    if s not in ("allow", "log", "raise"):
        raise ValueError(f"XLA_ARRAY_MATERIALIZE_GUARD must be allow, log or raise, not {s!r}")
    return s


# name: (default, parser, help)
_SPEC: dict[str, tuple[Any, Any, str]] = {
    "max_pending": (128, int, "auto-flush a pending graph once its depth exceeds this many ops, "
                              "at the start of the next loop iteration (a matrix product counts "
                              "as 16, a matrix-vector product as 1, a decomposition as 8)"),
    "cache_size": (512, int, "executables kept in the in-memory LRU cache"),
    "cache_dir": ("<default>", _cache_dir, "folder of the on-disk compile cache ('' or off: none)"),
    "cache_max_bytes": (1 << 30, int, "size bound of the on-disk compile cache"),
    "log_compiles": (False, _bool, "log every compile with its time and cause"),
    "materialize_guard": ("allow", _guard, "allow, log or raise on implicit materializations"),
    "dump_dir": (None, _opt_str, "write each compiled module (StableHLO text) here"),
    "max_compiles": (0, int, "raise once more than this many compiles happened (0: no limit)"),
    "opt_level": (None, lambda s: int(s) if s else None,
                  "XLA backend optimization level, 0-3 (unset: XLA's default, 3); changing it "
                  "drops the executables compiled in memory under the old level"),
    "donate_min_bytes": (1 << 20, int, "donate a dropped input buffer of at least this many "
                                       "bytes to the computation that replaces it, so an in-place "
                                       "update needs no second copy (negative: never)"),
    "check_indices": (True, _bool, "raise IndexError for out-of-bounds integer-array indices "
                                   "(at the call when their values are known, else when the "
                                   "graph runs, from a check computed with the gather); off: "
                                   "such indices are clamped to the axis (read when recorded)"),
    "linalg_errors": (True, _bool, "raise xla_array.linalg.LinAlgError (a "
                                   "numpy.linalg.LinAlgError) where NumPy does: a singular "
                                   "matrix to solve/inv/matrix_power, one not positive "
                                   "definite to cholesky, an SVD or eigensolver that did not "
                                   "converge (from LAPACK's info, checked when the graph "
                                   "runs); off: those matrices' results are NaN, as in JAX "
                                   "(read when recorded)"),
    "fast_math": (False, _bool, "let XLA divide by reciprocals, fuse multiply-adds and use its "
                                "shorter log10/log2/log1p/sinh/cosh/atanh and its own matrix "
                                "products on CPU (results may differ "
                                "from NumPy's by an ulp or more; off: they round as NumPy does); "
                                "changing it drops the executables compiled in memory"),
    "host_first": (True, _host_first, "run a graph met for the first time with NumPy on the "
                                      "host instead of compiling it, where NumPy computes every "
                                      "op bit for bit as the compiled graph (CPU; the second "
                                      "time it compiles); 'check': compile every graph, and "
                                      "compare each run's bits with the host's"),
    "host_first_budget": ("auto", _budget, "seconds the host runs of one graph structure may "
                                           "take before it compiles (0: it compiles the second "
                                           "time it is seen); auto: what its compile is "
                                           "expected to take, at least 0.05 (0.05 where the "
                                           "disk cache holds its executable)"),
    "compile_behind": ("auto", _auto, "once a graph's host runs have taken host_first_budget, "
                                      "compile it on a background thread while the host goes "
                                      "on running it, and use the executable once it is ready "
                                      "(off: the run that spends the budget compiles); auto: "
                                      "on where the process has 4 CPUs or more (on 2, XLA's "
                                      "compile and the program share them, and the program "
                                      "goes slower while it runs)"),
    "tiered": (False, _tiered, "compile a new graph whose ops round the same however XLA "
                               "optimizes them (those with host rules; values of at most 4 "
                               "MiB) at XLA's fastest setting (a third less compile time), "
                               "and once it has run tiered_runs more times recompile it fully "
                               "optimized on a background thread and swap it in (CPU); "
                               "'wait': the recompile happens in the run that calls for it "
                               "(for benchmarks); off (the default: on 2 cores the recompile "
                               "takes the CPU the program needs): every graph compiles fully "
                               "optimized"),
    "tiered_runs": (2, int, "runs of a fast-compiled executable before its optimized recompile "
                            "is queued"),
    "cpu_devices": (1, int, "number of CPU devices (read when the client starts)"),
    "rowpass": (True, _bool, "compute X.T @ f(X @ w) (f elementwise, X float32/float64 on CPU) "
                             "in one pass over X with the native row-pass kernel, where the "
                             "package was built with it (off: XLA's two products); changing it "
                             "drops the executables compiled in memory"),
    "blas": (True, _bool, "compute float and complex matrix products on CPU (results under "
                          "2**20 elements, under 2**24 multiply-adds) with NumPy's own BLAS "
                          "as NumPy's matmul calls it (the same bits as NumPy; a native "
                          "kernel, where the package was built with it and NumPy's BLAS is "
                          "scipy-openblas64; off: XLA's dot); changing it drops the "
                          "executables compiled in memory"),
    "ufunc": (True, _bool, "compute exp, log, sin, pow and the other transcendental functions of "
                           "float32/float64 arrays, and abs of complex ones, under 2**20 "
                           "elements on CPU with NumPy's own loops (NumPy's values; a native "
                           "kernel, where the package was built with it; off: XLA's forms); "
                           "changing it drops the executables compiled in memory"),
    "pocketfft": (True, _bool, "compute FFTs of one axis with results under 2**16 elements on CPU "
                               "with NumPy's own pocketfft loops (NumPy's values; a native "
                               "kernel, where the package was built with it; off: XLA's FFT); "
                               "changing it drops the executables compiled in memory"),
    "native": (True, _bool, "use the native code built with the package: the C core of the "
                            "graph (xla_array.core._graphcore; off: the pure-Python "
                            "definitions, read at import) and the native kernels (off: XLA's "
                            "own ops, read when a kernel is first needed)"),
    "matmul_precision": ("auto", lambda s: s.strip().lower() or "auto",
                         "auto, default, high or highest: XLA precision of matmul-like ops "
                         "(read when they are recorded). auto: float32 accuracy on every "
                         "device (XLA's default on CPU, highest on GPUs); default and high "
                         "let GPUs use TF32/bfloat16 algorithms; CPU is exact whatever the "
                         "setting"),
}

_values: dict[str, Any] = {}
_lock = threading.Lock()


def _load() -> None:
    for name, (default, parse, _help) in _SPEC.items():
        env = os.environ.get("XLA_ARRAY_" + name.upper())
        _values[name] = parse(env) if env is not None else default


_load()
if _values["cache_dir"] == "<default>":
    _base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    _values["cache_dir"] = os.path.join(_base, "xla_array")


def get(name: str) -> Any:
    return _values[name]


_watchers: dict[str, list[Any]] = {}


def on_change(name: str, fn: Any) -> None:
    """Call ``fn()`` after ``set`` gives setting ``name`` a different value."""
    _watchers.setdefault(name, []).append(fn)


# counts the changes of any setting (``set``): what is derived from the settings and cached
# (``hosteval``'s host rules of a graph structure) is valid for one generation
_generation = [0]


def generation() -> int:
    """A number that changes whenever ``set`` changes a setting."""
    return _generation[0]


def set(**kwargs: Any) -> None:
    """Change settings for the rest of the process."""
    changed = []
    with _lock:
        for k, v in kwargs.items():
            if k not in _SPEC:
                raise KeyError(f"unknown xla_array setting {k!r}; known: {sorted(_SPEC)}")
            if _values[k] != v:
                changed.append(k)
            _values[k] = v
        if changed:
            _generation[0] += 1
    for k in changed:
        for fn in _watchers.get(k, ()):
            fn()


@contextlib.contextmanager
def using(**kwargs: Any) -> Iterator[None]:
    """Change settings for a block of code, restoring them after."""
    old = {k: get(k) for k in kwargs}
    set(**kwargs)
    try:
        yield
    finally:
        set(**old)


class Settings(dict):
    """``describe()``'s answer: a dict ``name -> (value, help)`` that prints as text, one
    setting a paragraph (its name, value, environment variable and help)."""

    def __str__(self) -> str:
        out = []
        for name, (value, help_text) in self.items():
            out.append(f"{name} = {value!r}  (XLA_ARRAY_{name.upper()})")
            out.extend(textwrap.wrap(help_text, 92, initial_indent="    ",
                                     subsequent_indent="    "))
        return "\n".join(out)

    __repr__ = __str__


def describe() -> Settings:
    """Every setting: ``{name: (current value, help)}``; ``print(xp.flags.describe())``
    prints them one a paragraph."""
    return Settings({k: (_values[k], h) for k, (_d, _p, h) in _SPEC.items()})
