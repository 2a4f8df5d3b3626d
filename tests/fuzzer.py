"""Differential fuzzer: random array-API programs run by array_api_strict and by xla_array.

A program is 3-12 random standard operations (elementwise with broadcasting and Python
scalars, reductions, manipulation, indexing with slices, integer arrays and masks, in-place
updates, where, clip, cumulative sums, sorting, sets, matmul, linalg, fft, creation, casts)
over small arrays of every standard dtype, 0-d and empty ones included. The generator builds
valid programs by construction: it runs every candidate step with array_api_strict as it goes,
so each step knows the shapes, dtypes and values of its operands (a divisor is never an integer
zero, a matrix to invert is well conditioned), and it drops a candidate that strict rejects.
Binary operands always promote within one kind (checked with strict's ``result_type``). A few
programs end in a step that must raise (a shape mismatch, an axis out of range, ...).

Each program then runs once with array_api_strict (the reference), a few more times with
array_api_strict under simulated rounding errors, and once with xla_array (or any namespace
passed in); every run materializes the program's results with ``np.asarray``. Compared are:
the exception (a step must raise in both or in neither, at the same step, with exception types
of one family), then each result's shape and dtype (as the array reports them and as
materialized), then its values.

Values. Integer and boolean results are compared exactly (integer overflow included: the
standard leaves it unspecified, NumPy and xla_array both wrap, see docs/dtypes.md), and so are
floating-point results no rounding can touch: float inputs lie on a grid of quarters, and the
generator tracks which values are exact (an addition or product of exact values is exact when
its result fits the mantissa at the operands' grid). Discontinuous operations (comparisons,
floor, sign, argsort, unique, masks, float-to-integer casts, ...) only take exact operands, so
no rounding difference can flip them. Inexact results are compared within a tolerance the
reference measures itself: the perturbed runs add, at each rounding step, random errors of the
size that step may make (relative to each element for elementwise ops and reductions, normwise
for linalg and fft: the backward error of their algorithms), and an element passes when it is
within TOL_FACTOR times the largest deviation seen, plus BASE_ULPS ulps. An element whose
NaN-ness or infinity changes under perturbation (sqrt of a value near 0, exp near overflow) is
not compared. NaN equals NaN; the signs of zeros and of NaNs are not compared.

What is not compared, or compared differently, and why: KNOWN_DIFFERENCES, below. Bugs of
xla_array found and not fixed yet: PENDING_BUGS (their cases are not generated).

Run from the repository root: ``python -m tests.fuzzer --seconds 600 [--seed N] [--ops N]``
(``--ops``: the most operations per program; ``--focus add,sum,...``: generate these ops far
more often, as when chasing a suspect; ``--oob``: also out-of-bounds integer indices, expecting
IndexError). Each mismatch is printed with a reduced reproducer: a runnable script.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# Each entry: a behaviour that differs, or may differ, between array_api_strict and xla_array
# without either being wrong, with what the fuzzer does about it. The code names these keys
# where it acts on them (and counts how often: the report lists the counts).
KNOWN_DIFFERENCES: dict[str, str] = {
    "cross-kind promotion": (
        "Mixing kinds (integer with floating arrays, a Python float with an integer array, "
        "bool with numbers) is unspecified by the standard: array_api_strict raises TypeError, "
        "xla_array follows NumPy 2 (docs/dtypes.md). Never generated: operands always promote "
        "within one kind, as strict's result_type says."),
    "strict-only rejections": (
        "array_api_strict rejects some inputs whose behaviour the standard leaves unspecified "
        "(indexing an n-d array with fewer indices and no ellipsis, out-of-bounds slice starts, "
        "integer arrays beside slices, masks beside other indices, max/argmax of empty arrays, "
        "integers to negative powers, ...), where xla_array may follow NumPy. A candidate step "
        "strict rejects is dropped, never compared; only errors the standard requires (shape, "
        "axis, dtype, scalar range and index errors) are generated as error steps."),
    "subnormals": (
        "XLA:CPU flushes subnormal numbers to zero in arithmetic (docs/dtypes.md: jax#16200, "
        "no switch); NumPy keeps them. A step whose reference result holds a subnormal value "
        "is dropped."),
    "signed zeros and NaN signs": (
        "+0 and -0 compare equal, and a NaN's sign is not compared: rounding differences and "
        "flush-to-zero decide the sign of zero results, and the standard leaves the sign of "
        "NaN unspecified. signbit is never applied to NaN."),
    "unspecified integer ops": (
        "The standard leaves integer division by zero, shifts by negative amounts and negative "
        "integer powers unspecified: integer divisors are made non-zero "
        "(where(d == 0, 1, d)), shift amounts and exponents non-negative."),
    "unspecified casts": (
        "Casting NaN, infinities or out-of-range floats to integers is undefined (C behaviour "
        "in NumPy, saturation in XLA): float-to-integer casts only take finite, in-range, "
        "exact values."),
    "unspecified order": (
        "unique_* return values in an unspecified order: they are compared after sorting by "
        "value, inverse indices through values[inverse_indices] (which must equal x). "
        "Eigenvectors, singular vectors and QR factors are unique only up to signs or phases: "
        "compared through invariants (reconstructions, eigenvalues, |R|). eig's eigenvalues "
        "come in no set order: compared as sorted real and imaginary parts. argsort with "
        "stable=False only sees arrays without ties."),
    "rounding": (
        "Floating-point results of rounding operations differ within the tolerance described "
        "in the module docstring; transcendental functions, reductions, matmul, linalg and fft "
        "use different algorithms in NumPy and XLA. Discontinuous operations only take exact "
        "operands, well-conditioned matrices only go to linalg."),
    "floor_divide by infinity": (
        "floor_divide with an infinite operand: the standard says floor(x1 / x2) (so "
        "-1.5 // inf is -0) and notes that libraries diverge; NumPy follows Python's divmod "
        "(-1.0). xla_array follows the standard. Not generated for floats holding infinities."),
    "complex infinities": (
        "Complex multiplication and division (so sign, reciprocal, pow, the transcendental "
        "functions, matmul, ...) with an infinite or NaN component are implementation-"
        "dependent in the standard (C99's one-infinity model or not: data-apis/array-api#554); "
        "e.g. sign(-inf+1.5j) is NaN+NaNj in NumPy, -1+0j in xla_array. Such ops on complex "
        "operands holding NaN or infinities are not generated (copies, indexing, where, "
        "comparisons and isnan/isinf/isfinite still see them); where a complex result has a "
        "non-finite component in the reference (overflow of finite operands, as in complex "
        "pow), only that the tested result has one too is checked (NaN+NaNj vs -inf+NaNj)."),
    "reference accuracy": (
        "NumPy computes complex log1p as log(1 + z) and complex expm1 as exp(z) - 1: their "
        "absolute error is eps * |1 + result|, a large relative error for small |z| (xla_array "
        "is the more accurate there). Their tolerance models NumPy's error: perturbations of "
        "eps * |1 + value| (the \"plus1\" mode)."),
    "reference deviations": (
        "Where array_api_strict 2.6 (or the NumPy under it) departs from the standard, the "
        "case is not generated: isin ignores invert=True (strict passes it on to nothing); "
        "diff with n=0 returns x without prepend/append (NumPy returns early; the standard's "
        "result has M + N1 + N2 - n elements along the axis); NumPy's irfft of an empty "
        "array with n given returns uninitialized memory (so fft functions only see non-empty "
        "arrays); bitwise_left_shift of floats "
        "raises ValueError for negative shifts before TypeError for the dtype (so error "
        "steps use the other bitwise functions); strict's cumulative_sum with "
        "include_initial=True adds the values to the initial 0.0 (-0.0 sums become 0.0), "
        "NumPy's own cumulative_sum (xla_array's) does not (so no -0.0 reaches it); NumPy's "
        "BLAS skips the terms of a zero operand (0 * inf and 0 * NaN give 0 in a matrix "
        "product: so products never see both), and NumPy's tensordot of one result element "
        "(its dot of two vectors) gives -0.0 where the products are all -0.0, where its "
        "matmul and xla_array's add them to 0.0 (so those see no zeros); NumPy computes "
        "x ** 0.5 as sqrt(x): NaN at -inf and -0.0 at -0.0, where the standard's pow gives "
        "+inf and +0.0 (so that power of a Python 0.5 sees neither)."),
    "ill-conditioned linalg": (
        "linalg results on (nearly) singular or non-normal matrices depend on the algorithm: "
        "linalg steps only take matrices whose condition number (eigenvector condition number "
        "for eig) is at most COND_LIMIT."),
}


@dataclass(frozen=True)
class PendingBug:
    """A known xla_array bug, not fixed yet: candidate steps it matches are not generated.

    ``applies(candidate, values)`` gets the candidate step (its ``op``, ``args``: the Vars it
    reads, with reference values, ``lines`` and ``scalars``) and the reference values of its
    results."""

    description: str
    applies: Callable[[Any, list], bool]


# xla_array bugs the fuzzer found; remove an entry once fixed. Real bugs only: reasoned
# differences belong in KNOWN_DIFFERENCES.
PENDING_BUGS: list[PendingBug] = []  # (none: integer powers with exponents of 64 or more
# and LAPACK calls reading an FFT's result, the last two, were fixed on 2026-11-28)

# Integer indices out of bounds (expecting IndexError, as xla_array raises it)
OUT_OF_BOUNDS_INDICES = True

MIN_OPS, MAX_OPS = 3, 12
ERROR_STEP_RATE = 0.08      # share of programs ending in a step that must raise
MAX_SIZE = 2048             # results larger than this are dropped (tile, outer, ...)
MAX_OUTPUTS = 4             # a program returns its last few unconsumed values
COND_LIMIT = 30.0           # largest condition number a linalg operand may have
N_PERTURBED = 3             # perturbed reference runs measuring a result's tolerance
TOL_FACTOR = 8.0            # tolerance: this many times the largest perturbed deviation ...
BASE_ULPS = 8.0             # ... plus this many ulps of the reference value
SHRINK_SECONDS = 60.0       # budget for reducing one mismatch

BOOL = ("bool",)
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTS = SIGNED + UNSIGNED
REALS = ("float32", "float64")
COMPLEXES = ("complex64", "complex128")
FLOATS = REALS + COMPLEXES
REAL_NUMERIC = INTS + REALS
NUMERIC = INTS + FLOATS
ALL_DTYPES = BOOL + NUMERIC
DTYPE_WEIGHTS = {"bool": 1.5, "float32": 2.5, "float64": 2.5, "complex64": 1.2,
                 "complex128": 1.2, **{d: 0.75 for d in INTS}}

# elementwise functions of one argument: name -> (dtypes, kind)
UNARY = {
    "abs": (NUMERIC, "same"), "negative": (NUMERIC, "same"), "positive": (NUMERIC, "same"),
    "conj": (NUMERIC, "same"), "real": (COMPLEXES, "same"), "imag": (COMPLEXES, "same"),
    "bitwise_invert": (INTS + BOOL, "same"), "logical_not": (BOOL, "same"),
    "square": (NUMERIC, "square"), "sign": (NUMERIC, "sign"),
    "floor": (REAL_NUMERIC, "round"), "ceil": (REAL_NUMERIC, "round"),
    "trunc": (REAL_NUMERIC, "round"), "round": (NUMERIC, "round"),
    "isnan": (NUMERIC, "test"), "isinf": (NUMERIC, "test"), "isfinite": (NUMERIC, "test"),
    "signbit": (REALS, "test"),
    "sqrt": (FLOATS, "rounded"), "reciprocal": (FLOATS, "rounded"),
    **{name: (FLOATS, "math") for name in (
        "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
        "atanh", "exp", "expm1", "log", "log1p", "log2", "log10")},
}
TRIG = ("sin", "cos", "tan")
UNARY_OPERATORS = {"negative": "-", "positive": "+", "bitwise_invert": "~"}

# elementwise functions of two arguments: name -> (dtypes, operator or None, kind)
BINARY = {
    "add": (NUMERIC, "+", "add"), "subtract": (NUMERIC, "-", "add"),
    "multiply": (NUMERIC, "*", "mul"), "divide": (FLOATS, "/", "divide"),
    "floor_divide": (REAL_NUMERIC, "//", "floordiv"), "remainder": (REAL_NUMERIC, "%", "rem"),
    "pow": (NUMERIC, "**", "pow"),
    "maximum": (REAL_NUMERIC, None, "same"), "minimum": (REAL_NUMERIC, None, "same"),
    "atan2": (REALS, None, "math"), "hypot": (REALS, None, "math"),
    "logaddexp": (REALS, None, "math"), "copysign": (REALS, None, "copysign"),
    "nextafter": (REALS, None, "nextafter"),
    "equal": (ALL_DTYPES, "==", "compare"), "not_equal": (ALL_DTYPES, "!=", "compare"),
    "less": (REAL_NUMERIC, "<", "compare"), "less_equal": (REAL_NUMERIC, "<=", "compare"),
    "greater": (REAL_NUMERIC, ">", "compare"),
    "greater_equal": (REAL_NUMERIC, ">=", "compare"),
    "logical_and": (BOOL, None, "same"), "logical_or": (BOOL, None, "same"),
    "logical_xor": (BOOL, None, "same"),
    "bitwise_and": (INTS + BOOL, "&", "same"), "bitwise_or": (INTS + BOOL, "|", "same"),
    "bitwise_xor": (INTS + BOOL, "^", "same"),
    "bitwise_left_shift": (INTS, "<<", "shift"), "bitwise_right_shift": (INTS, ">>", "shift"),
}
DISCONTINUOUS = ("floordiv", "rem", "compare", "copysign", "nextafter")
# complex functions with branch cuts: a rounding error in an imaginary part of ~0 on the cut
# moves the result to the other side (log2 of a Hermitian matrix rebuilt from its eigh: pi /
# ln 2 against -pi / ln 2), so they take exact complex operands only
BRANCH_CUTS = ("log", "log2", "log10", "log1p", "sqrt", "acos", "asin", "atan", "acosh",
               "asinh", "atanh")

# reductions: name -> (dtypes, exactness rule, rounding, discontinuous)
REDUCTIONS = {
    "sum": (NUMERIC, "sum", ("elem", 1, 1), False),
    "prod": (NUMERIC, "prod", ("elem", 1, 1), False),
    "mean": (FLOATS, "inexact", ("elem", 1, 2), False),
    "var": (REALS, "inexact", ("elem", 1, 2), False),
    "std": (REALS, "inexact", ("elem", 1, 2), False),
    "max": (REAL_NUMERIC, "same", None, False), "min": (REAL_NUMERIC, "same", None, False),
    "all": (ALL_DTYPES, "same", None, True), "any": (ALL_DTYPES, "same", None, True),
    "count_nonzero": (ALL_DTYPES, "same", None, True),
}

INPLACE = tuple(n for n, (_, symbol, kind) in BINARY.items() if symbol and kind != "compare")
LINALG = ("cholesky", "det", "slogdet", "inv", "solve", "pinv", "matrix_rank", "matrix_power",
          "eigh", "eigvalsh", "eig", "qr", "svd", "svdvals", "matrix_norm", "vector_norm",
          "trace", "diagonal", "outer", "cross")
FFT = ("fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
       "fftshift", "ifftshift", "fftfreq", "rfftfreq")
CREATION = ("arange", "linspace", "eye", "full", "zeros", "ones", "asarray", "like", "like",
            "tril", "meshgrid")
TRANSPARENT = ("reshape", "expand_dims", "squeeze", "sqrt")  # for Var.origin
FOCUS_BOOST = 20.0          # --focus: weight factor of the generators of the named ops ...
FOCUS_SHARE = 0.8           # ... which then pick a named op this often

VAR_NAME = re.compile(r"\bv\d+\b")


def known(key: str, stats: Stats | None) -> None:
    """Note that the known difference ``key`` made the fuzzer skip or adapt something."""
    assert key in KNOWN_DIFFERENCES, key
    if stats is not None:
        stats.known[key] += 1


@dataclass
class Stats:
    """Counters of a fuzzing run."""

    ops: Counter = field(default_factory=Counter)          # committed steps by op
    rejected: Counter = field(default_factory=Counter)     # candidates strict rejected, by op
    known: Counter = field(default_factory=Counter)        # KNOWN_DIFFERENCES applied
    pending: Counter = field(default_factory=Counter)      # PENDING_BUGS avoided
    programs: int = 0
    error_programs: int = 0


# --------------------------------------------------------------------------------------------
# Programs

@dataclass
class Var:
    """A value of the program being generated, with its reference value."""

    name: str
    value: np.ndarray
    exact: bool = True          # no rounding error can be in it
    grid: int | None = 0        # exact floats: multiples of 2**-grid (None: unknown)
    origin: str = "input"       # the op that made it (seen through TRANSPARENT ops)
    ancestry: frozenset = frozenset()  # the ops of all the steps it depends on

    @property
    def dtype(self) -> str:
        return self.value.dtype.name

    @property
    def shape(self) -> tuple:
        return self.value.shape

    @property
    def ndim(self) -> int:
        return self.value.ndim


@dataclass(frozen=True)
class Scalar:
    """A Python scalar operand."""

    value: bool | int | float | complex

    @property
    def source(self) -> str:
        return _literal(self.value, wrap=True)


@dataclass
class Step:
    """One operation of a program: source lines defining its outputs."""

    op: str
    lines: list[str]
    inputs: list[str]
    outputs: list[str]
    exact: list[bool]
    rounding: tuple | None = None        # (mode, {input: c_in}, c_out) for inexact results
    expect_error: bool = False
    late_error_ok: bool = False          # may raise when materialized (data-dependent error)
    data: np.ndarray | None = None       # input steps: the array


@dataclass
class Program:
    """A generated program: steps (inputs first among them) and the names it returns."""

    seed: tuple
    steps: list[Step]
    outputs: list[str]

    def inputs(self) -> list[np.ndarray]:
        return [s.data for s in self.steps if s.data is not None]

    def step_lines(self) -> list[list[str]]:
        """Each step's source lines (input steps read ``inputs[i]``)."""
        out, k = [], 0
        for s in self.steps:
            if s.data is not None:
                out.append([f"{s.outputs[0]} = xp.asarray(inputs[{k}])"])
                k += 1
            else:
                out.append(s.lines)
        return out

    def source(self) -> str:
        """The program as a function ``program(xp, inputs)`` returning a list of arrays."""
        body = [line for lines in self.step_lines() for line in lines]
        ret = f"return [{', '.join(self.outputs)}]"
        return "\n".join(["def program(xp, inputs):"] + ["    " + s for s in body + [ret]])

    def compiled(self) -> list:
        """One code object per step, with the line numbers of ``source()``."""
        codes, lineno = [], 2
        for lines in self.step_lines():
            text = "\n" * (lineno - 1) + "\n".join(lines)
            codes.append(compile(text, "<fuzz program>", "exec"))
            lineno += len(lines)
        return codes

    def script(self, note: str = "") -> str:
        """A runnable reproducer: the inputs, the program, and a loop over both namespaces."""
        head = [f"# xla_array fuzzer reproducer, program {self.seed}"]
        head += ["# " + line for line in note.splitlines()]
        inputs = ",\n".join("    " + _array_literal(a) for a in self.inputs())
        return "\n".join(head + [
            "import numpy as np", "import array_api_strict", "import xla_array", "",
            "inputs = [", inputs, "]", "", "", self.source(), "", "",
            "for xp in (array_api_strict, xla_array):",
            "    print(xp.__name__, [np.asarray(r) for r in program(xp, inputs)])", ""])

    def exact_outputs(self) -> list[bool]:
        flags = {n: e for s in self.steps for n, e in zip(s.outputs, s.exact)}
        return [flags[n] for n in self.outputs]

    def pruned(self, outputs: list[str] | None = None) -> Program:
        """The program without the steps that neither its outputs nor an error step need."""
        outputs = self.outputs if outputs is None else outputs
        needed, kept = set(outputs), []
        for s in reversed(self.steps):
            if s.expect_error or needed.intersection(s.outputs):
                kept.append(s)
                needed.update(s.inputs)
        return Program(self.seed, kept[::-1], list(outputs))

    def cut(self, index: int, values: dict[str, np.ndarray]) -> Program:
        """The program with step ``index`` replaced by inputs holding its reference results."""
        step = self.steps[index]
        inputs = [Step("input", [], [], [n], [True], data=values[n]) for n in step.outputs]
        steps = self.steps[:index] + inputs + self.steps[index + 1:]
        outputs = [n for n in self.outputs if n not in step.outputs] or self.outputs
        return Program(self.seed, steps, outputs).pruned()


def _literal(v: Any, wrap: bool = False) -> str:
    """Python source for a scalar (NaN and infinities as float(...); negatives in parentheses
    where ``wrap``)."""
    if isinstance(v, (bool, np.bool_)):
        return repr(bool(v))
    if isinstance(v, (int, np.integer)):
        s = repr(int(v))
    elif isinstance(v, (complex, np.complexfloating)):
        return f"complex({_literal(float(v.real))}, {_literal(float(v.imag))})"
    else:
        v = float(v)
        s = repr(v) if math.isfinite(v) else f"float('{v}')"
    return f"({s})" if wrap and s.startswith("-") else s


def _array_literal(a: np.ndarray) -> str:
    flat = ", ".join(_literal(v) for v in a.reshape(-1).tolist())
    return f"np.asarray([{flat}], dtype=np.{a.dtype.name}).reshape({a.shape})"


# --------------------------------------------------------------------------------------------
# Running a program

@dataclass
class Outcome:
    """What one run of a program gave."""

    values: list[np.ndarray] = field(default_factory=list)
    meta: list[tuple] = field(default_factory=list)     # (is array, dtype name, shape)
    error: tuple[int, BaseException, str] | None = None  # (step, exception, traceback)
    env: dict[str, np.ndarray] = field(default_factory=dict)


def _dtype_name(xp: Any, dtype: Any) -> str:
    for name in ALL_DTYPES:
        if dtype == getattr(xp, name):
            return name
    return repr(dtype)


def execute(program: Program, xp: Any, perturb: np.random.Generator | None = None,
            keep: bool = False) -> Outcome:
    """Run ``program`` with namespace ``xp`` and materialize its outputs with np.asarray.

    ``perturb``: add simulated rounding errors to each rounding step's operands and results.
    ``keep``: also return every variable's value (for cutting steps while reducing)."""
    env: dict[str, Any] = {"xp": xp, "inputs": program.inputs()}
    out = Outcome()
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, (step, code) in enumerate(zip(program.steps, program.compiled())):
            saved = {}
            if perturb is not None and step.rounding is not None:
                mode, c_in, _ = step.rounding
                for name, c in c_in.items():
                    saved[name] = env[name]
                    env[name] = _perturb(env[name], mode, c, perturb, xp)
            try:
                exec(code, env)  # (the program)
            except Exception as e:  # noqa: BLE001  (compared with the other namespace)
                out.error = (i, e, traceback.format_exc(limit=-4))
                return out
            env.update(saved)
            if perturb is not None and step.rounding is not None:
                mode, _, c_out = step.rounding
                for name in step.outputs:
                    env[name] = _perturb(env[name], mode, c_out, perturb, xp)
            if keep:
                for name in step.outputs:
                    out.env[name] = np.array(np.asarray(env[name]), copy=True)
        try:
            arrays = [env[name] for name in program.outputs]
            out.values = [np.asarray(a) for a in arrays]
            out.meta = [(True, _dtype_name(xp, a.dtype), tuple(a.shape))
                        if hasattr(a, "__array_namespace__") else (False, type(a).__name__, ())
                        for a in arrays]
        except Exception as e:  # noqa: BLE001
            out.error = (len(program.steps), e, traceback.format_exc(limit=-4))
    return out


def _mag(a: np.ndarray) -> float:
    """Largest finite magnitude of any component of ``a`` (0 if none)."""
    parts = [a.real, a.imag] if a.dtype.kind == "c" else [a]
    m = 0.0
    for p in parts:
        p = np.abs(p[np.isfinite(p)]) if p.dtype.kind == "f" else np.abs(p.astype(float))
        if p.size:
            m = max(m, float(p.max()))
    return m


def _abssum(a: np.ndarray) -> float:
    """Sum of the finite magnitudes of all components of ``a``."""
    parts = [a.real, a.imag] if a.dtype.kind == "c" else [a]
    total = 0.0
    for p in parts:
        p = p.astype(float)
        total += float(np.abs(p[np.isfinite(p)]).sum())
    return total


def _perturb(array: Any, mode: str, c: float, rng: np.random.Generator, xp: Any) -> Any:
    """``array`` plus random errors of c ulps: of each element ("elem"), of the array's
    largest element ("norm") or of 1 + each element ("plus1")."""
    a = np.asarray(array)
    if not c or a.dtype.kind not in "fc" or a.size == 0:
        return array
    eps = float(np.finfo(a.dtype).eps)
    if mode == "norm":
        scale = np.full(a.shape, 2 * _mag(a))
    else:
        scale = np.abs(a + 1) if mode == "plus1" else np.abs(a)
    scale = np.where(np.isfinite(scale), scale, 0.0)

    def noise() -> np.ndarray:
        sign = rng.choice([-1.0, 1.0], a.shape)
        return sign * rng.uniform(0.5, 1.0, a.shape) * c * eps * scale
    new = a + noise()
    if a.dtype.kind == "c":
        new = new + 1j * noise()
    return xp.asarray(new.astype(a.dtype))


# --------------------------------------------------------------------------------------------
# Comparing runs

@dataclass
class Mismatch:
    """A difference between the reference run and the tested one."""

    kind: str
    detail: str
    output: int | None = None


_FAMILIES = (IndexError, TypeError, ValueError, OverflowError, ZeroDivisionError,
             NotImplementedError)


def _same_family(expected: BaseException, got: BaseException) -> bool:
    """Whether two exceptions are of one kind: both instances of one of the standard Python
    exception families (NumPy's AxisError is both an IndexError and a ValueError)."""
    fams = [f for f in _FAMILIES if isinstance(expected, f)]
    if not fams:
        return type(expected) is type(got)
    return any(isinstance(got, f) for f in fams)


def compare(program: Program, ref: Outcome, got: Outcome,
            perturbed: list[Outcome]) -> Mismatch | None:
    """The first difference between ``got`` and the reference, or None."""
    steps = program.steps
    if ref.error is not None:
        i, exc, _ = ref.error
        if got.error is None:
            return Mismatch("missing exception", f"step {i} should raise like the reference: "
                            f"{type(exc).__name__}: {exc}")
        j, gexc, _ = got.error
        if j != i and not (j == len(steps) and steps[i].late_error_ok):
            return Mismatch("exception at another step", f"reference raised at step {i} "
                            f"({type(exc).__name__}: {exc}); got at step {j}: "
                            f"{type(gexc).__name__}: {gexc}")
        if not _same_family(exc, gexc):
            return Mismatch("exception type", f"expected {type(exc).__name__} ({exc}), got "
                            f"{type(gexc).__name__}: {gexc}")
        return None
    if got.error is not None:
        j, gexc, tb = got.error
        where = "materialization" if j == len(steps) else f"step {j}"
        return Mismatch("unexpected exception",
                        f"at {where}: {type(gexc).__name__}: {gexc}\n{tb}")
    for k, exact in enumerate(program.exact_outputs()):
        r, g = ref.values[k], got.values[k]
        is_array, dtype, shape = got.meta[k]
        name = program.outputs[k]
        if not is_array:
            return Mismatch("not an array", f"{name} is a {dtype}", k)
        if dtype != r.dtype.name or g.dtype != r.dtype:
            return Mismatch("dtype", f"{name}: expected {r.dtype.name}, got {dtype} "
                            f"(materialized as {g.dtype.name})", k)
        if shape != r.shape or g.shape != r.shape:
            return Mismatch("shape", f"{name}: expected {r.shape}, got {shape} "
                            f"(materialized as {g.shape})", k)
        ps = [p.values[k] for p in perturbed
              if p.error is None and p.values[k].shape == r.shape]
        detail = _compare_values(r, g, ps, exact)
        if detail:
            return Mismatch("value", f"{name} ({'exact' if exact else 'inexact'} "
                            f"{r.dtype.name}{list(r.shape)}): {detail}", k)
    return None


def _compare_values(ref: np.ndarray, got: np.ndarray, perturbed: list[np.ndarray],
                    exact: bool) -> str | None:
    """Where ``got`` differs from ``ref`` beyond tolerance: a description, or None."""
    if ref.dtype.kind not in "fc":
        bad = ref != got
        return _describe(bad, ref, got, None) if bad.any() else None
    finfo = np.finfo(ref.dtype)
    eps, tiny = float(finfo.eps), float(finfo.tiny)
    with np.errstate(all="ignore"):
        mag = np.abs(ref).astype(float)
        mag = np.where(np.isfinite(mag), mag, 0.0)
        dev = np.zeros(ref.shape)
        unstable = np.zeros(ref.shape, bool)
        for p in perturbed:
            d = np.abs(p - ref).astype(float)
            dev = np.maximum(dev, np.where(np.isfinite(d), d, 0.0))
        complex_ = ref.dtype.kind == "c"
        parts = [(np.real, ref.real)] + ([(np.imag, ref.imag)] if complex_ else [])
        tol = 0.0 if exact else TOL_FACTOR * dev + BASE_ULPS * (eps * mag + tiny)
        bad = np.zeros(ref.shape, bool)
        if complex_:  # a complex infinity or NaN: which components are is not compared
            infinite = ~np.isfinite(ref)
            stays = infinite.copy()
            for p in perturbed:
                stays &= ~np.isfinite(p)
            bad |= stays & np.isfinite(got)
            unstable |= infinite
        for part, r in parts:
            g = part(got)
            r_nan, r_inf = np.isnan(r), np.isinf(r)
            for p in perturbed:
                q = part(p)
                unstable |= (np.isnan(q) != r_nan) | (np.isinf(q) != r_inf)
                unstable |= r_inf & (q != r) & ~np.isnan(q)
            close = np.abs(g - r) <= tol
            same_special = np.where(r_nan, np.isnan(g), g == r)
            bad |= np.where(np.isfinite(r), ~close, ~same_special) & ~unstable
    if not bad.any():
        return None
    return _describe(bad, ref, got, tol)


def _describe(bad: np.ndarray, ref: np.ndarray, got: np.ndarray, tol: Any) -> str:
    idx = list(zip(*np.nonzero(bad)))[:3] if bad.ndim else [()]
    items = []
    for i in idx:
        t = "" if tol is None else f" (tolerance {np.broadcast_to(tol, ref.shape)[i]:.3g})"
        items.append(f"at {list(map(int, i))}: expected {ref[i]!r}, got {got[i]!r}{t}")
    return f"{int(bad.sum())} of {bad.size} elements differ; " + "; ".join(items)


def check(program: Program, xp: Any, strict: Any) -> Mismatch | None:
    """Run ``program`` with strict (plain and perturbed) and with ``xp``; compare."""
    got = execute(program, xp)
    ref = execute(program, strict)
    perturbed = []
    if ref.error is None and not all(program.exact_outputs()):
        rng = np.random.default_rng([*program.seed, 7])
        perturbed = [execute(program, strict, perturb=rng) for _ in range(N_PERTURBED)]
    return compare(program, ref, got, perturbed)


# --------------------------------------------------------------------------------------------
# Generating programs

class _Skip(Exception):
    """The op cannot be generated from the current state."""


@dataclass
class Candidate:
    """A proposed step: source lines with {o0}, {o1}... for results and {t0}... for temps."""

    op: str
    lines: list[str]
    args: list[Var]
    n_out: int = 1
    n_tmp: int = 0
    rule: str = "same"                 # how exactness of float results follows (_exactness)
    rounding: tuple | None = None      # (mode, c_in: number or per-arg list, c_out)
    scalars: tuple = ()
    expect_error: bool = False
    late_error_ok: bool = False


def _well_positive(v: np.ndarray) -> bool:
    """Whether float values are all finite and positive, none within 1e-3 of 0 relative to
    the largest: a rounded copy of them stays positive."""
    if v.dtype.kind != "f" or v.size == 0 or not np.isfinite(v).all():
        return False
    return bool(v.min() > 1e-3 * max(1.0, float(v.max())))


def _inside_domain(name: str, v: np.ndarray) -> bool:
    """Whether real float values are well inside the domain of function ``name`` (one of
    ``BRANCH_CUTS``), so that a rounded copy of them is too: log2 of a symmetric matrix's
    zero rebuilt from its eigh (+-1e-7) is -23.9 or NaN depending on the rounding."""
    if v.dtype.kind != "f" or v.size == 0 or not np.isfinite(v).all():
        return False
    if name in ("log", "log2", "log10", "sqrt"):
        return _well_positive(v)
    if name == "log1p":
        return _well_positive(v + 1)
    if name == "acosh":
        return _well_positive(v - 1)
    if name in ("acos", "asin", "atanh"):
        return bool(np.abs(v).max() < 1 - 1e-3)
    return True  # (atan, asinh: continuous on the reals)


def _negative_zeros(a: np.ndarray) -> bool:
    """Whether a float or complex array holds -0.0 (in either part)."""
    parts = (a.real, a.imag) if a.dtype.kind == "c" else (a,)
    return any(bool(np.any((p == 0) & np.signbit(p))) for p in parts)


def _zero_times_nonfinite(x: np.ndarray, y: np.ndarray) -> bool:
    """Whether a product of ``x`` and ``y`` may meet 0 * inf or 0 * NaN: one holds a zero,
    the other a non-finite value."""
    def nonfinite(a: np.ndarray) -> bool:
        return a.dtype.kind in "fc" and not np.isfinite(a).all()
    return bool((np.any(x == 0) and nonfinite(y)) or (np.any(y == 0) and nonfinite(x)))


def _array_grid(a: np.ndarray) -> int | None:
    """The grid of an input's float values (multiples of 2**-grid: 0 or 2), None where some
    finite part is off the quarter grid (a matrix made diagonally dominant with complex
    moduli: its products round, so they are not exact)."""
    parts = np.concatenate([np.ravel(a.real), np.ravel(a.imag)]).astype(np.float64)
    parts = parts[np.isfinite(parts)]
    if not np.all(parts * 4 == np.round(parts * 4)):
        return None
    return 0 if np.all(parts == np.round(parts)) else 2


def _scalar_grid(v: Any) -> int | None:
    parts = [v.real, v.imag] if isinstance(v, complex) else [v]
    for p in parts:
        if not math.isfinite(p) or p * 4 != int(p * 4):
            return None
    return 0 if all(float(p).is_integer() for p in parts) else 2


def _exactness(cand: Candidate, outs: list[np.ndarray]) -> list[tuple[bool, int | None]]:
    """For each result: (exact, grid). A float result is exact when the rule says the op
    introduces no rounding on these operands."""
    info = [(v.exact, v.grid if v.dtype in FLOATS else 0, v.value) for v in cand.args]
    info += [(True, _scalar_grid(s.value), np.asarray(s.value)) for s in cand.scalars]
    all_exact = all(e for e, _, _ in info)
    grids = [g for _, g, _ in info]
    mags = [_mag(np.asarray(v)) for _, _, v in info]
    rule = cand.rule
    result = []
    for out in outs:
        if out.dtype.kind not in "fc":
            result.append((True, 0))
            continue
        if rule == "inexact" or not all_exact:
            result.append((False, None))
            continue
        if rule == "grid0":
            result.append((True, 0))
            continue
        if rule == "offgrid" or None in grids:
            result.append((True, None) if rule in ("same", "offgrid") else (False, None))
            continue
        grid, bound = max(grids, default=0), 0.0
        if rule == "add":
            bound = 4 * sum(mags)
        elif rule == "mul":
            grid, bound = sum(grids), 2 * math.prod(mags)
        elif rule == "square":
            grid, bound = 2 * grid, 2 * mags[0] ** 2
        elif rule == "sum":
            bound = 2 * _abssum(cand.args[0].value)
        elif rule == "dot":
            grid = sum(grids)
            bound = 2 * _abssum(cand.args[0].value) * max(mags[1:], default=1.0)
        elif rule == "prod":
            n = cand.args[0].value.size
            grid, bound = grid * n, 2 * max(1.0, mags[0]) ** min(n, 2000)
        bits = np.finfo(out.dtype).nmant + 1
        fits = grid <= 60 and max(bound, _mag(out)) * 2.0 ** grid < 2.0 ** bits
        result.append((True, grid) if fits else (False, None))
    return result


def _has_subnormal(a: np.ndarray) -> bool:
    if a.dtype.kind not in "fc" or a.size == 0:
        return False
    tiny = np.finfo(a.dtype).tiny
    parts = [a.real, a.imag] if a.dtype.kind == "c" else [a]
    return any(bool(((p != 0) & (np.abs(p) < tiny)).any()) for p in parts)


def _broadcastable(s1: tuple, s2: tuple) -> bool:
    try:
        np.broadcast_shapes(s1, s2)
    except ValueError:
        return False
    return True


_OPS: dict[str, tuple[float, tuple, Callable]] = {}
_ERROR_OPS: dict[str, Callable] = {}


def _op(weight: float, names: Any = ()) -> Callable:
    """Register a generator method of _Generator (named ``op_<name>``) with its weight and
    the names of the ops it makes (default: ``<name>``)."""
    def register(fn: Callable) -> Callable:
        _OPS[fn.__name__[3:]] = (weight, tuple(names) or (fn.__name__[3:],), fn)
        return fn
    return register


def _error_op(fn: Callable) -> Callable:
    """Register a generator method of a step that must raise (named ``err_<name>``)."""
    _ERROR_OPS[fn.__name__[4:]] = fn
    return fn


class _Generator:
    """Builds one program, evaluating each candidate step with array_api_strict."""

    def __init__(self, seed: int, index: int, max_ops: int, oob: bool,
                 stats: Stats | None, focus: tuple = ()) -> None:
        import array_api_strict
        self.xp = array_api_strict
        self.seed = (seed, index)
        self.rng = np.random.default_rng([seed, index])
        self.max_ops = max_ops
        self.oob = oob
        self.focus = frozenset(focus)
        self.stats = stats
        self.vars: dict[str, Var] = {}
        self.steps: list[Step] = []
        self.env: dict[str, Any] = {"xp": self.xp}
        self.used: set[str] = set()
        self.count = 0
        self._promotions: dict[tuple, str | None] = {}

    # random helpers

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def integer(self, lo: int, hi: int) -> int:
        """A random integer in [lo, hi]."""
        return int(self.rng.integers(lo, hi + 1))

    def choice(self, seq: Any) -> Any:
        seq = list(seq)
        return seq[int(self.rng.integers(len(seq)))]

    def op_name(self, names: Any) -> str:
        """One of ``names``: mostly a focused one, where there are some."""
        focused = [n for n in names if n in self.focus]
        if focused and self.chance(FOCUS_SHARE):
            return self.choice(focused)
        return self.choice(names)

    def dtype_from(self, dtypes: tuple) -> str:
        w = np.array([DTYPE_WEIGHTS[d] for d in dtypes])
        return dtypes[int(self.rng.choice(len(dtypes), p=w / w.sum()))]

    def shape(self, min_ndim: int = 0, max_ndim: int = 4, nonempty: bool = False) -> tuple:
        p = np.array([0.15, 0.3, 0.32, 0.18, 0.05][min_ndim:max_ndim + 1])
        ndim = min_ndim + int(self.rng.choice(len(p), p=p / p.sum()))
        return tuple(self.integer(1, 4) if nonempty or not self.chance(0.06) else 0
                     for _ in range(ndim))

    def data(self, dtype: str, shape: tuple) -> np.ndarray:
        """Random input values: small integers (sometimes the dtype's extremes), floats on a
        grid of quarters (sometimes NaN, infinities and -0.0)."""
        n = math.prod(shape)
        rng = self.rng
        if dtype == "bool":
            a = rng.random(n) < 0.5
        elif dtype in INTS:
            info = np.iinfo(dtype)
            lo = -9 if dtype in SIGNED else 0
            a = rng.integers(lo, 13, n).astype(dtype)
            if self.chance(0.12):
                ext = np.array([info.min, info.min + 1, info.max - 1, info.max], dtype)
                a = np.where(rng.random(n) < 0.3, rng.choice(ext, n), a)
        else:
            real = rng.integers(-32, 33, n) / 4
            if self.chance(0.12):
                special = np.array([np.nan, np.inf, -np.inf, -0.0])
                real = np.where(rng.random(n) < 0.25, rng.choice(special, n), real)
            a = real if dtype in REALS else real + 1j * (rng.integers(-32, 33, n) / 4)
        return np.asarray(a, dtype=dtype).reshape(shape)

    def scalar_for(self, dtype: str) -> Scalar:
        """A Python scalar that promotes with arrays of ``dtype`` without changing the kind."""
        if dtype == "bool":
            return Scalar(self.chance(0.5))
        if dtype in INTS:
            if self.chance(0.05):
                info = np.iinfo(dtype)
                return Scalar(int(self.choice([info.min, info.max])))
            lo = 0 if dtype in UNSIGNED else -5
            return Scalar(self.integer(lo, 5))
        if self.chance(0.3):
            return Scalar(self.integer(-5, 5))
        if self.chance(0.03):
            return Scalar(self.choice([math.inf, -math.inf, math.nan]))
        real = self.integer(-32, 32) / 4
        if dtype in COMPLEXES and self.chance(0.6):
            return Scalar(complex(real, self.integer(-32, 32) / 4))
        return Scalar(real)

    # values of the program

    def name(self, prefix: str = "v") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def fresh(self, dtype: str, shape: tuple, value: np.ndarray | None = None) -> Var:
        """A new input of the program."""
        value = self.data(dtype, shape) if value is None else value
        var = Var(self.name(), value, True, _array_grid(value) if dtype in FLOATS else 0)
        self.steps.append(Step("input", [], [], [var.name], [True], data=value))
        self.vars[var.name] = var
        self.env[var.name] = self.xp.asarray(value)
        return var

    def pick(self, dtypes: tuple, exact: bool = False, cond: Callable | None = None,
             min_ndim: int = 0, max_ndim: int = 4, nonempty: bool = False) -> Var:
        """An operand: mostly an existing value (preferring unconsumed, recent ones), else a
        new input."""
        def ok(v: Var) -> bool:
            return (v.dtype in dtypes and (v.exact or not exact) and min_ndim <= v.ndim
                    <= max_ndim and (v.value.size > 0 or not nonempty)
                    and (cond is None or cond(v)))
        cands = [v for v in self.vars.values() if ok(v)]
        if cands and not self.chance(0.12):
            unused = [v for v in cands if v.name not in self.used]
            pool = unused if unused and self.chance(0.7) else cands
            return pool[-1] if self.chance(0.5) else self.choice(pool)
        for _ in range(10):
            dtype = self.dtype_from(dtypes)
            shape = self.shape(min_ndim, max_ndim, nonempty)
            value = self.data(dtype, shape)
            if cond is None or cond(Var("", value)):
                return self.fresh(dtype, shape, value)
        raise _Skip

    def promoted(self, d1: str, d2: str) -> str | None:
        """The standard's result dtype of d1 and d2 (None where it leaves it unspecified)."""
        key = (d1, d2)
        if key not in self._promotions:
            try:
                dt = self.xp.result_type(getattr(self.xp, d1), getattr(self.xp, d2))
                self._promotions[key] = _dtype_name(self.xp, dt)
            except TypeError:
                known("cross-kind promotion", self.stats)
                self._promotions[key] = None
        return self._promotions[key]

    def broadcast_partner(self, shape: tuple) -> tuple:
        """A shape broadcasting with ``shape``."""
        dims = list(shape)
        if dims and self.chance(0.3):
            dims = dims[self.integer(0, len(dims)):]
        dims = [1 if self.chance(0.2) else (self.integer(2, 3) if d == 1 and self.chance(0.3)
                                             else d) for d in dims]
        if len(dims) == len(shape) < 4 and self.chance(0.15):
            dims = [self.integer(1, 3)] + dims
        return tuple(dims)

    def partner(self, x: Var, dtypes: tuple, exact: bool = False, scalar: bool = True,
                same_dtype: bool = False, keep_shape: bool = False) -> Var | Scalar:
        """A second operand for ``x``: a Python scalar, or an array whose dtype promotes with
        x's within the kind (to x's dtype if ``same_dtype``) and whose shape broadcasts with x's
        (to x's shape if ``keep_shape``)."""
        if scalar and self.chance(0.3):
            return self.scalar_for(x.dtype)
        ok_dtypes = tuple(d for d in dtypes if self.promoted(x.dtype, d) in
                          ((x.dtype,) if same_dtype else dtypes))
        if not ok_dtypes:
            raise _Skip

        def fits(v: Var) -> bool:
            if v.dtype not in ok_dtypes or (exact and not v.exact):
                return False
            if not _broadcastable(x.shape, v.shape):
                return False
            out = np.broadcast_shapes(x.shape, v.shape)
            return out == x.shape if keep_shape else math.prod(out) <= MAX_SIZE
        cands = [v for v in self.vars.values() if fits(v)]
        if cands and self.chance(0.5):
            return cands[-1] if self.chance(0.5) else self.choice(cands)
        dtype = x.dtype if x.dtype in ok_dtypes and self.chance(0.5) else self.dtype_from(
            ok_dtypes)
        for _ in range(10):
            shape = self.broadcast_partner(x.shape)
            if not keep_shape or np.broadcast_shapes(x.shape, shape) == x.shape:
                return self.fresh(dtype, shape)
        return self.fresh(dtype, x.shape)

    def axis(self, ndim: int, none: bool = True, many: bool = True) -> tuple[str, tuple]:
        """An axis argument: (source, normalized axes)."""
        r = self.rng.random()
        if ndim == 0 or (none and r < 0.3):
            if ndim == 0 and many and self.chance(0.3):
                return "()", ()
            return "None", tuple(range(ndim))
        if not many or r < 0.7:
            a = self.integer(-ndim, ndim - 1)
            return str(a), (a % ndim,)
        axes = [a for a in range(ndim) if self.chance(0.5)]
        lit = [a - ndim if self.chance(0.3) else a for a in axes]
        return f"({', '.join(map(str, lit))}{',' if len(lit) == 1 else ''})", tuple(axes)

    def operand(self, v: Var | Scalar) -> str:
        return v.source if isinstance(v, Scalar) else v.name

    # building the program

    def program(self) -> Program:
        n_ops = self.integer(min(MIN_OPS, self.max_ops), self.max_ops)
        end_with_error = self.chance(ERROR_STEP_RATE)
        names = list(_OPS)
        weights = np.array([w * (FOCUS_BOOST if self.focus.intersection(ops) else 1.0)
                            for w, ops, _ in _OPS.values()])
        done = tries = 0

        def errored() -> bool:
            return bool(self.steps) and self.steps[-1].expect_error
        while done < n_ops - end_with_error and tries < 40 * n_ops and not errored():
            tries += 1
            name = names[int(self.rng.choice(len(names), p=weights / weights.sum()))]
            done += self.attempt(_OPS[name][2])
        for _ in range(20 if end_with_error and not errored() else 0):
            if self.attempt(_ERROR_OPS[self.choice(_ERROR_OPS)]):
                break
        if errored():
            outputs = []
        else:
            sinks = [n for s in self.steps if s.data is None for n in s.outputs
                     if n not in self.used]
            outputs = sinks[-MAX_OUTPUTS:]
        if self.stats is not None:
            self.stats.programs += 1
            self.stats.error_programs += errored()
        return Program(self.seed, self.steps, outputs).pruned()

    def attempt(self, make: Callable) -> bool:
        """Build a candidate with ``make``, run it with strict, commit it if it is valid."""
        try:
            cand = make(self)
        except _Skip:
            return False
        if cand.rule not in ("same", "grid0") and self.complex_infinities(cand):
            known("complex infinities", self.stats)
            return False
        outs = [self.name() for _ in range(cand.n_out)]
        names = {f"o{i}": n for i, n in enumerate(outs)}
        names.update({f"t{i}": self.name("t") for i in range(cand.n_tmp)})
        lines = [line.format(**names) for line in cand.lines]
        env = dict(self.env)
        try:
            exec(compile("\n".join(lines), "<fuzz candidate>", "exec"), env)
        except Exception:  # noqa: BLE001  (strict rejects it)
            if not cand.expect_error:
                if self.stats is not None:
                    self.stats.rejected[cand.op] += 1
                return False
            return self.commit(cand, lines, outs, [], env)
        if cand.expect_error:
            return False
        values = []
        for n in outs:
            if not hasattr(env[n], "__array_namespace__"):
                return False
            values.append(np.array(np.asarray(env[n]), copy=True))
        if any(v.size > MAX_SIZE for v in values):
            return False
        if any(_has_subnormal(v) for v in values):
            known("subnormals", self.stats)
            return False
        return self.commit(cand, lines, outs, values, env)

    @staticmethod
    def complex_infinities(cand: Candidate) -> bool:
        """Whether ``cand`` computes with complex numbers and a non-finite operand."""
        values = [v.value for v in cand.args] + [np.asarray(s.value) for s in cand.scalars]
        return any(v.dtype.kind == "c" for v in values) and not all(
            np.isfinite(v).all() for v in values if v.dtype.kind in "fc")

    def commit(self, cand: Candidate, lines: list[str], outs: list[str],
               values: list[np.ndarray], env: dict) -> bool:
        for bug in PENDING_BUGS:
            if bug.applies(cand, values):
                if self.stats is not None:
                    self.stats.pending[bug.description] += 1
                return False
        flags = _exactness(cand, values) if values else [(True, 0)] * len(outs)
        inputs = sorted(set(VAR_NAME.findall("\n".join(lines))) - set(outs),
                        key=lambda n: int(n[1:]))
        rounding = None
        if cand.rounding and any(v.dtype.kind in "fc" and not e
                                 for v, (e, _) in zip(values, flags)):
            mode, c_in, c_out = cand.rounding
            per_arg = c_in if isinstance(c_in, list) else [c_in] * len(cand.args)
            c_by_name = {a.name: c for a, c in zip(cand.args, per_arg)
                         if c and a.dtype in FLOATS}
            rounding = (mode, c_by_name, c_out)
        self.steps.append(Step(cand.op, lines, inputs, outs, [e for e, _ in flags], rounding,
                               cand.expect_error, cand.late_error_ok))
        self.used.update(inputs)
        origin = cand.args[0].origin if cand.op in TRANSPARENT else cand.op
        ancestry = frozenset({cand.op}).union(*(a.ancestry for a in cand.args))
        for n, v, (e, g) in zip(outs, values, flags):
            self.vars[n] = Var(n, v, e, g, origin, ancestry)
        self.env = env
        if self.stats is not None:
            self.stats.ops[cand.op] += 1
        return True

    # ---- elementwise

    @_op(14, UNARY)
    def op_unary(self) -> Candidate:
        name = self.op_name(UNARY)
        dtypes, kind = UNARY[name]
        cond = (lambda v: not np.isnan(v.value).any()) if name == "signbit" else None
        if name in BRANCH_CUTS:  # (a complex operand within rounding of a cut: either side;
            # a real one within rounding of the domain's edge: NaN on one side only)
            cond = lambda v: v.exact or (  # noqa: E731
                v.dtype not in COMPLEXES and _inside_domain(name, v.value))
        x = self.pick(dtypes, exact=kind in ("round", "sign", "test"), cond=cond)
        cplx = x.dtype in COMPLEXES
        rule, rounding = {
            "same": ("same", None),
            "square": ("square", ("elem", 0, 2 if cplx else 1)),
            "round": ("grid0", None),
            "sign": ("inexact", ("elem", 0, 2)) if cplx else ("grid0", None),
            "test": ("same", None),
            "rounded": ("inexact", ("elem", 0, 4 if cplx else 1)),
            "math": ("inexact", ("elem", 1 if name in TRIG else 0, 8 if cplx else 4)),
        }[kind]
        if name in ("log1p", "expm1") and cplx:
            known("reference accuracy", self.stats)
            rounding = ("plus1", 2, 8)
        if name == "abs" and cplx:
            rule, rounding = "inexact", ("elem", 0, 2)
        if name in UNARY_OPERATORS and self.chance(0.4):
            expr = f"{UNARY_OPERATORS[name]}{x.name}"
        elif name == "abs" and self.chance(0.3):
            expr = f"abs({x.name})"
        else:
            expr = f"xp.{name}({x.name})"
        return Candidate(name, [f"{{o0}} = {expr}"], [x], rule=rule, rounding=rounding)

    def binary_operands(self, name: str, inplace: bool = False) -> tuple:
        """(x, y, source of y) for the binary op ``name``, the source of y made valid for the
        op (non-zero integer divisors, non-negative integer exponents and shifts)."""
        dtypes, _, kind = BINARY[name]
        exact = kind in DISCONTINUOUS
        if kind == "pow" and not exact:
            # a float power is discontinuous where the base is 0 or negative (or complex, at
            # its cut): a rounded operand there (an exponent of 1 - 1e-7, a base of -1e-8)
            # gives NaN or inf where the exact one does not; a base well above 0 is safe
            x = self.pick(dtypes, cond=lambda v: v.exact or _well_positive(v.value))
            exact = not _well_positive(x.value)
        else:
            x = self.pick(dtypes, exact=exact)
        y = self.partner(x, dtypes, exact=exact, same_dtype=inplace, keep_shape=inplace)
        y_src = self.operand(y)
        is_int = x.dtype in INTS
        if kind == "floordiv" and not is_int and (
                np.isinf(x.value).any() or np.isinf(np.asarray(y.value)).any()):
            known("floor_divide by infinity", self.stats)
            raise _Skip
        if is_int and kind in ("floordiv", "rem"):
            if isinstance(y, Scalar) and y.value == 0:
                y_src = "1"
            elif isinstance(y, Var) and (y.value == 0).any():
                known("unspecified integer ops", self.stats)
                y_src = f"xp.where({y.name} == 0, 1, {y.name})"
        if is_int and kind in ("pow", "shift"):
            if isinstance(y, Scalar) and y.value < 0:
                y_src = _literal(-y.value)
            elif isinstance(y, Var) and (y.value < 0).any():
                known("unspecified integer ops", self.stats)
                if (y.value == np.iinfo(y.dtype).min).any():
                    raise _Skip
                y_src = f"xp.abs({y.name})"
        return x, y, y_src

    def binary_rule(self, name: str, x: Var, y: Var | Scalar) -> tuple[str, Any]:
        """(exactness rule, rounding) of the binary op ``name`` on x and y."""
        kind = BINARY[name][2]
        cplx = x.dtype in COMPLEXES or (isinstance(y, Var) and y.dtype in COMPLEXES)
        if kind == "add":
            return "add", ("elem", 0, 1)
        if kind == "mul":
            return "mul", ("elem", 0, 2 if cplx else 1)
        if kind == "divide":
            return "inexact", ("elem", 0, 4 if cplx else 1)
        if kind == "pow":
            if x.dtype in INTS:
                return "same", None
            return "inexact", ("elem", [1, 0], 8 if cplx else 4)
        if kind == "math":
            return "inexact", ("elem", 0, 4)
        if kind == "floordiv":
            return "grid0", None
        if kind == "nextafter":
            return "offgrid", None
        return "same", None

    @_op(14, BINARY)
    def op_binary(self) -> Candidate:
        name = self.op_name(BINARY)
        symbol = BINARY[name][1]
        x, y, y_src = self.binary_operands(name)
        if name == "pow" and isinstance(y, Scalar) and y.value == 0.5 and \
                x.dtype in REALS and (np.isneginf(x.value).any() or _negative_zeros(x.value)):
            known("reference deviations", self.stats)
            raise _Skip
        rule, rounding = self.binary_rule(name, x, y)
        args = [x] + ([y] if isinstance(y, Var) else [])
        scalars = (y,) if isinstance(y, Scalar) else ()
        a, b = x.name, y_src
        if isinstance(y, Scalar) and self.chance(0.25) and name not in (
                "pow", "bitwise_left_shift", "bitwise_right_shift", "floor_divide",
                "remainder"):
            a, b = b, a
        if symbol and self.chance(0.5):
            expr = f"{a} {symbol} {b}"
        else:
            expr = f"xp.{name}({a}, {b})"
        return Candidate(name, [f"{{o0}} = {expr}"], args, rule=rule, rounding=rounding,
                         scalars=scalars)

    @_op(1.5)
    def op_clip(self) -> Candidate:
        x = self.pick(REAL_NUMERIC)
        bounds, args, scalars = [], [x], []
        for _ in ("min", "max"):
            r = self.rng.random()
            if r < 0.25:
                bounds.append(None)
            elif r < 0.65:
                s = self.scalar_for(x.dtype)
                bounds.append(s)
                scalars.append(s)
            else:
                dims = [1 if self.chance(0.3) else d for d in x.shape]
                b = self.fresh(x.dtype, tuple(dims[self.integer(0, len(dims)):]))
                bounds.append(b)
                args.append(b)
        lo, hi = (np.asarray(b.value) if b is not None else None for b in bounds)
        if lo is not None and hi is not None and (np.asarray(lo > hi)).any():
            raise _Skip
        if all(b is None for b in bounds):
            kwargs = ""
        elif self.chance(0.5):
            kwargs = "".join(f", {k}={self.operand(b)}" for k, b in zip(("min", "max"), bounds)
                             if b is not None)
        else:
            kwargs = "".join(f", {'None' if b is None else self.operand(b)}" for b in bounds)
        return Candidate("clip", [f"{{o0}} = xp.clip({x.name}{kwargs})"], args,
                         scalars=tuple(scalars))

    @_op(2)
    def op_where(self) -> Candidate:
        x = self.pick(ALL_DTYPES)
        y = self.partner(x, ALL_DTYPES)
        shape = np.broadcast_shapes(x.shape, np.shape(getattr(y, "value", 0)))
        c = self.pick(BOOL, cond=lambda v: _broadcastable(v.shape, shape)
                      and math.prod(np.broadcast_shapes(v.shape, shape)) <= MAX_SIZE)
        a, b = x.name, self.operand(y)
        if self.chance(0.3):
            a, b = b, a
        args = [c, x] + ([y] if isinstance(y, Var) else [])
        scalars = (y,) if isinstance(y, Scalar) else ()
        return Candidate("where", [f"{{o0}} = xp.where({c.name}, {a}, {b})"], args,
                         scalars=scalars)

    # ---- reductions

    @_op(7, REDUCTIONS)
    def op_reduce(self) -> Candidate:
        name = self.op_name(REDUCTIONS)
        dtypes, rule, rounding, discont = REDUCTIONS[name]
        x = self.pick(dtypes, exact=discont, nonempty=name in ("max", "min"))
        axis, _ = self.axis(x.ndim)
        kwargs = f", axis={axis}" if axis != "None" or self.chance(0.3) else ""
        if self.chance(0.3):
            kwargs += ", keepdims=True"
        if name in ("var", "std") and self.chance(0.5):
            kwargs += f", correction={self.choice([0, 1, 0.5])}"
        if name in ("sum", "prod") and self.chance(0.25):
            wide = {"float32": "float64", "complex64": "complex128"}.get(
                x.dtype, "uint64" if x.dtype in UNSIGNED else "int64")
            if x.dtype not in ("float64", "complex128"):
                kwargs += f", dtype=xp.{wide}"
        return Candidate(name, [f"{{o0}} = xp.{name}({x.name}{kwargs})"], [x], rule=rule,
                         rounding=rounding)

    @_op(1.5, ["argmax", "argmin"])
    def op_argminmax(self) -> Candidate:
        name = self.op_name(["argmax", "argmin"])
        x = self.pick(REAL_NUMERIC, exact=True, nonempty=True)
        axis, _ = self.axis(x.ndim, many=False)
        kwargs = "" if axis == "None" and self.chance(0.5) else f", axis={axis}"
        if self.chance(0.3):
            kwargs += ", keepdims=True"
        return Candidate(name, [f"{{o0}} = xp.{name}({x.name}{kwargs})"], [x])

    @_op(2, ["cumulative_sum", "cumulative_prod"])
    def op_cumulative(self) -> Candidate:
        name = self.op_name(["cumulative_sum", "cumulative_prod"])
        x = self.pick(NUMERIC, min_ndim=1, max_ndim=3)
        kwargs = ""
        if x.ndim > 1 or self.chance(0.5):
            kwargs += f", axis={self.integer(-x.ndim, x.ndim - 1)}"
        if self.chance(0.4):
            initial = self.chance(0.5)
            if initial and name == "cumulative_sum" and x.dtype in FLOATS and \
                    _negative_zeros(x.value):
                known("reference deviations", self.stats)
                raise _Skip
            kwargs += f", include_initial={initial}"
        rule = "sum" if name == "cumulative_sum" else "prod"
        return Candidate(name, [f"{{o0}} = xp.{name}({x.name}{kwargs})"], [x], rule=rule,
                         rounding=("elem", 1, 1))

    @_op(1)
    def op_diff(self) -> Candidate:
        x = self.pick(NUMERIC, min_ndim=1)
        ax = self.integer(-x.ndim, x.ndim - 1)
        kwargs = f", axis={ax}" if self.chance(0.6) else ""
        ax = ax if kwargs else -1
        n = self.integer(0, 3) if self.chance(0.4) else 1
        kwargs += f", n={n}" if n != 1 else ""
        args = [x]
        for key in ("prepend", "append"):
            if self.chance(0.2) and n:  # (n=0: a reference deviation)
                shape = list(x.shape)
                shape[ax] = self.integer(1, 2)
                extra = self.fresh(x.dtype, tuple(shape))
                args.append(extra)
                kwargs += f", {key}={extra.name}"
        return Candidate("diff", [f"{{o0}} = xp.diff({x.name}{kwargs})"], args, rule="add",
                         rounding=("elem", 0, 1))

    # ---- manipulation

    def factor_shape(self, size: int) -> tuple:
        """A random shape of ``size`` elements."""
        if size == 0:
            dims = [self.integer(0, 3) for _ in range(self.integer(1, 3))]
            dims[self.integer(0, len(dims) - 1)] = 0
            return tuple(dims)
        factors, n, p = [], size, 2
        while n > 1:
            while n % p == 0:
                factors.append(p)
                n //= p
            p += 1
        dims = [1] * self.integer(1, 4)
        for f in factors:
            dims[self.integer(0, len(dims) - 1)] *= f
        return tuple(dims)

    @_op(2)
    def op_reshape(self) -> Candidate:
        x = self.pick(ALL_DTYPES)
        shape = list(self.factor_shape(x.value.size)) if self.chance(0.9) else []
        if not shape and x.value.size != 1:
            raise _Skip
        if shape and self.chance(0.3):
            shape[self.integer(0, len(shape) - 1)] = -1
        lit = f"({', '.join(map(str, shape))}{',' if len(shape) == 1 else ''})"
        return Candidate("reshape", [f"{{o0}} = xp.reshape({x.name}, {lit})"], [x])

    @_op(1.5, ["permute_dims", "moveaxis"])
    def op_permute(self) -> Candidate:
        x = self.pick(ALL_DTYPES)
        perm = self.rng.permutation(x.ndim).tolist()
        lit = f"({', '.join(map(str, perm))}{',' if len(perm) == 1 else ''})"
        if self.chance(0.3):
            src = self.integer(-x.ndim, x.ndim - 1) if x.ndim else 0
            dst = self.integer(-x.ndim, x.ndim - 1) if x.ndim else 0
            return Candidate("moveaxis", [f"{{o0}} = xp.moveaxis({x.name}, {src}, {dst})"], [x])
        return Candidate("permute_dims", [f"{{o0}} = xp.permute_dims({x.name}, {lit})"], [x])

    @_op(1, ["matrix_transpose"])
    def op_transpose(self) -> Candidate:
        x = self.pick(ALL_DTYPES, min_ndim=2)
        form = self.choice(["xp.matrix_transpose({x})", "{x}.mT", "{x}.T"] if x.ndim == 2
                           else ["xp.matrix_transpose({x})", "{x}.mT"])
        return Candidate("matrix_transpose", ["{o0} = " + form.replace("{x}", x.name)], [x])

    @_op(1, ["expand_dims", "squeeze"])
    def op_expand_squeeze(self) -> Candidate:
        x = self.pick(ALL_DTYPES)
        ones = [a for a, d in enumerate(x.shape) if d == 1]
        if ones and self.chance(0.5):
            axes = [a - x.ndim if self.chance(0.3) else a for a in ones if self.chance(0.7)]
            axes = axes or [ones[0]]
            lit = f"({', '.join(map(str, axes))},)"
            if len(axes) == 1 and self.chance(0.5):
                lit = str(axes[0])
            return Candidate("squeeze", [f"{{o0}} = xp.squeeze({x.name}, axis={lit})"], [x])
        a = self.integer(-x.ndim - 1, x.ndim)
        return Candidate("expand_dims", [f"{{o0}} = xp.expand_dims({x.name}, axis={a})"], [x])

    @_op(1.5, ["flip", "roll"])
    def op_flip_roll(self) -> Candidate:
        x = self.pick(ALL_DTYPES)
        axis, axes = self.axis(x.ndim)
        if self.chance(0.5):
            kwargs = "" if axis == "None" and self.chance(0.5) else f", axis={axis}"
            return Candidate("flip", [f"{{o0}} = xp.flip({x.name}{kwargs})"], [x])
        if axis.startswith("(") and axes:
            shift = f"({', '.join(str(self.integer(-5, 5)) for _ in axes)},)"
        else:
            shift = str(self.integer(-5, 5))
        if axis == "()":
            raise _Skip
        kwargs = "" if axis == "None" and self.chance(0.5) else f", axis={axis}"
        return Candidate("roll", [f"{{o0}} = xp.roll({x.name}, {shift}{kwargs})"], [x])

    @_op(2.5, ["concat", "stack"])
    def op_join(self) -> Candidate:
        x = self.pick(ALL_DTYPES, max_ndim=3)
        name = self.op_name(["concat", "stack"])
        others = []
        k = self.integer(1, 2)
        if name == "concat" and (x.ndim == 0 or self.chance(0.2)):
            for _ in range(k):
                d = self.dtype_from(tuple(d for d in ALL_DTYPES if self.promoted(x.dtype, d)))
                others.append(self.fresh(d, self.shape(1, 2)))
            axis_kw = ", axis=None"
        else:
            ax = self.integer(0, x.ndim - 1) if name == "concat" else self.integer(0, x.ndim)
            for _ in range(k):
                shape = list(x.shape)
                if name == "concat":
                    shape[ax] = self.integer(0, 3)
                d = x.dtype if self.chance(0.6) else self.dtype_from(
                    tuple(d for d in ALL_DTYPES if self.promoted(x.dtype, d)))
                same = [v for v in self.vars.values() if v.shape == tuple(shape)
                        and v.dtype == d and v is not x]
                others.append(self.choice(same) if same and self.chance(0.4)
                              else self.fresh(d, tuple(shape)))
            if self.chance(0.3):
                ax -= x.ndim + (name == "stack")
            axis_kw = f", axis={ax}" if ax or self.chance(0.5) else ""
        items = [x] + others
        order = self.rng.permutation(len(items)).tolist()
        seq = ", ".join(items[i].name for i in order)
        seq = f"({seq},)" if self.chance(0.3) else f"[{seq}]"
        return Candidate(name, [f"{{o0}} = xp.{name}({seq}{axis_kw})"], items)

    @_op(0.7)
    def op_unstack(self) -> Candidate:
        x = self.pick(ALL_DTYPES, min_ndim=1)
        ax = self.integer(-x.ndim, x.ndim - 1)
        n = x.shape[ax]
        if not 1 <= n <= 4:
            raise _Skip
        outs = ", ".join(f"{{o{i}}}" for i in range(n))
        kwargs = f", axis={ax}" if ax or self.chance(0.5) else ""
        return Candidate("unstack", [f"{outs}, = xp.unstack({x.name}{kwargs})"], [x], n_out=n)

    @_op(1.5, ["broadcast_to", "broadcast_arrays"])
    def op_broadcast(self) -> Candidate:
        x = self.pick(ALL_DTYPES, max_ndim=3)
        if self.chance(0.5):
            dims = [self.integer(2, 3) if d == 1 and self.chance(0.5) else d for d in x.shape]
            dims = [self.integer(0, 3) for _ in range(self.integer(0, 1))] + dims
            if math.prod(dims) > MAX_SIZE:
                raise _Skip
            lit = f"({', '.join(map(str, dims))}{',' if len(dims) == 1 else ''})"
            return Candidate("broadcast_to", [f"{{o0}} = xp.broadcast_to({x.name}, {lit})"],
                             [x])
        y = self.pick(ALL_DTYPES, cond=lambda v: _broadcastable(v.shape, x.shape))
        return Candidate("broadcast_arrays",
                         [f"{{o0}}, {{o1}} = xp.broadcast_arrays({x.name}, {y.name})"],
                         [x, y], n_out=2)

    @_op(1.5, ["tile", "repeat"])
    def op_tile_repeat(self) -> Candidate:
        x = self.pick(ALL_DTYPES, max_ndim=3)
        if self.chance(0.4):
            reps = [self.integer(0, 3) for _ in range(self.integer(0, 3))]
            lit = f"({', '.join(map(str, reps))}{',' if len(reps) == 1 else ''})"
            return Candidate("tile", [f"{{o0}} = xp.tile({x.name}, {lit})"], [x])
        if x.ndim and self.chance(0.7):
            ax = self.integer(-x.ndim, x.ndim - 1)
            n = x.shape[ax]
            kwargs = f", axis={ax}"
        else:
            n = x.value.size
            kwargs = ""
        if self.chance(0.5):
            rep = self.fresh("int64", (n,), self.rng.integers(0, 4, n).astype(np.int64))
            return Candidate("repeat", [f"{{o0}} = xp.repeat({x.name}, {rep.name}{kwargs})"],
                             [x, rep])
        line = f"{{o0}} = xp.repeat({x.name}, {self.integer(0, 3)}{kwargs})"
        return Candidate("repeat", [line], [x])

    @_op(3)
    def op_astype(self) -> Candidate:
        x = self.pick(ALL_DTYPES)
        target = self.dtype_from(ALL_DTYPES)
        rule, rounding = "same", None
        if x.dtype in FLOATS and target in INTS + BOOL:
            if not x.exact:
                raise _Skip
            v = x.value
            if target in INTS:
                info = np.iinfo(target)
                if not np.isfinite(v).all() or (v.real < info.min).any() or (
                        v.real >= 2.0 ** info.bits / (2 if target in SIGNED else 1)).any():
                    known("unspecified casts", self.stats)
                    raise _Skip
            rule = "grid0" if target in INTS else "same"
        elif target in FLOATS:
            rule, rounding = "cast", ("elem", 0, 1)
        copy = self.choice(["", ", copy=True", ", copy=False"])
        return Candidate("astype", [f"{{o0}} = xp.astype({x.name}, xp.{target}{copy})"], [x],
                         rule=rule, rounding=rounding)

    # ---- indexing

    def basic_index(self, shape: tuple, newaxis: bool = True) -> str:
        """A basic index (integers, slices, ellipsis, None if ``newaxis``) for an array of
        ``shape``."""
        parts, axis = [], 0
        covered = self.integer(0, len(shape))
        while axis < covered:
            n = shape[axis]
            if newaxis and self.chance(0.15):
                parts.append("None")
                continue
            if n and self.chance(0.3):
                parts.append(str(self.integer(-n, n - 1)))
            else:
                start = "" if self.chance(0.4) else str(self.integer(-n, max(n - 1, 0)))
                stop = "" if self.chance(0.4) else str(self.integer(-n, n))
                step = self.choice(["", "", "1", "2", "-1", "-2", "3"])
                parts.append(f"{start}:{stop}" + (f":{step}" if step else ""))
            axis += 1
        if covered < len(shape) or self.chance(0.2):
            parts.insert(self.integer(0, len(parts)) if covered == len(shape) else len(parts),
                         "...")
        if newaxis and self.chance(0.1):
            parts.append("None")
        if not parts:
            return "()" if self.chance(0.5) else "..."
        return ", ".join(parts) + ("," if len(parts) == 1 and self.chance(0.3) else "")

    def int_indices(self, x: Var) -> tuple[list[str], list[Var], bool]:
        """An integer-array index of x: one integer or integer array per axis, the arrays
        broadcasting together. Returns (index parts, arrays used, out of bounds)."""
        k = self.integer(1, 3)
        base = [self.integer(1, 3) for _ in range(self.integer(1, 2))]
        parts, arrays, oob = [], [], False
        for axis, n in enumerate(x.shape):
            if n == 0 and not self.oob:
                raise _Skip
            if n and axis and self.chance(0.3):
                parts.append(str(self.integer(-n, n - 1)))
                continue
            shape = tuple(1 if self.chance(0.2) else d for d in base)[-k:]
            idx = self.rng.integers(-n, n, shape) if n else np.zeros(shape, int)
            if self.oob and self.chance(0.2):
                idx.reshape(-1)[0] = self.choice([n, -n - 1])
                oob = True
            dtype = self.choice(["int64", "int64", "int32", "int16", "uint8"])
            if dtype == "uint8":
                idx = np.abs(idx) % max(n, 1) if not oob else np.abs(idx)
            same = [v for v in self.vars.values() if v.dtype in INTS and v.ndim >= 1
                    and v.value.size and (v.value >= -n).all() and (v.value < n).all()
                    and v.value.size <= 16]
            if same and self.chance(0.3):
                arr = self.choice(same)
            else:
                arr = self.fresh(dtype, shape, idx.astype(dtype))
            arrays.append(arr)
            parts.append(arr.name)
        if not arrays:
            raise _Skip
        return parts, arrays, oob

    def mask_for(self, x: Var) -> tuple[str, list[Var]]:
        """A boolean mask over x's leading axes (all of them mostly)."""
        k = x.ndim if self.chance(0.7) else self.integer(0, x.ndim)
        shape = x.shape[:k]
        same = [v for v in self.vars.values() if v.dtype == "bool" and v.shape == shape]
        if same and self.chance(0.5):
            m = self.choice(same)
            return m.name, [m]
        if k == x.ndim and x.exact and x.dtype in REAL_NUMERIC and self.chance(0.5):
            s = self.scalar_for(x.dtype)
            return f"{x.name} {self.choice(['>', '<', '!=', '>='])} {s.source}", []
        m = self.fresh("bool", shape)
        return m.name, [m]

    @_op(4, ["getitem", "getitem_int", "getitem_mask"])
    def op_getitem(self) -> Candidate:
        x = self.pick(ALL_DTYPES)
        kind = self.choice(["basic", "basic", "integer", "mask"])
        if kind == "basic":
            return Candidate("getitem", [f"{{o0}} = {x.name}[{self.basic_index(x.shape)}]"],
                             [x])
        if kind == "mask":
            mask, extra = self.mask_for(x)
            return Candidate("getitem_mask", [f"{{o0}} = {x.name}[{mask}]"], [x] + extra)
        parts, arrays, oob = self.int_indices(x)
        return Candidate("getitem_int", [f"{{o0}} = {x.name}[{', '.join(parts)}]"],
                         [x] + arrays, expect_error=oob, late_error_ok=oob)

    @_op(2.5, ["take", "take_along_axis"])
    def op_take(self) -> Candidate:
        x = self.pick(ALL_DTYPES, min_ndim=1, nonempty=not self.oob)
        ax = self.integer(-x.ndim, x.ndim - 1)
        n = x.shape[ax]
        oob = False
        if self.chance(0.6):
            k = self.integer(0, 5)
            idx = self.rng.integers(-n, n, k) if n else np.zeros(k, int)
            if self.oob and k and self.chance(0.2):
                idx[0], oob = self.choice([n, -n - 1]), True
            ind = self.fresh(self.choice(["int64", "int32", "int8"]), (k,), idx)
            kwargs = f", axis={ax}" if x.ndim > 1 or self.chance(0.5) else ""
            return Candidate("take", [f"{{o0}} = xp.take({x.name}, {ind.name}{kwargs})"],
                             [x, ind], expect_error=oob, late_error_ok=oob)
        shape = list(x.shape)
        shape[ax] = self.integer(0, 4)
        shape = [1 if self.chance(0.15) else d for d in shape]
        shape[ax] = shape[ax] or 1
        same = [v for v in self.vars.values() if v.dtype in INTS and v.shape == x.shape
                and v.value.size and (v.value >= -n).all() and (v.value < n).all()]
        if same and self.chance(0.5):
            ind = self.choice(same)
        else:
            idx = self.rng.integers(-n, n, shape) if n else np.zeros(shape, int)
            ind = self.fresh("int64", tuple(shape), idx)
        kwargs = f", axis={ax}" if ax != -1 or self.chance(0.5) else ""
        return Candidate("take_along_axis",
                         [f"{{o0}} = xp.take_along_axis({x.name}, {ind.name}{kwargs})"],
                         [x, ind])

    @_op(2.5, ["setitem_basic", "setitem_mask"])
    def op_setitem(self) -> Candidate:
        x = self.pick(ALL_DTYPES)
        kind = self.choice(["basic", "mask"])  # (strict has no integer-array setitem)
        extra: list[Var] = []
        if kind == "basic":
            key = self.basic_index(x.shape, newaxis=False)
        else:
            key, extra = self.mask_for(x)
        try:
            target = eval(f"{x.name}[{key}]", dict(self.env))
        except Exception:  # noqa: BLE001
            raise _Skip from None
        if self.chance(0.4):
            value = self.scalar_for(x.dtype)
            src, scalars = value.source, (value,)
        else:
            shape = tuple(target.shape)
            shape = shape[self.integer(0, len(shape)):] if self.chance(0.3) else shape
            value = self.fresh(x.dtype, tuple(1 if self.chance(0.2) else d for d in shape))
            src, scalars = value.name, ()
            extra = extra + [value]
        copy = self.choice([f"xp.asarray({x.name}, copy=True)", f"{x.name} + 0" if
                            x.dtype in NUMERIC else f"xp.asarray({x.name}, copy=True)"])
        return Candidate("setitem_" + kind, [f"{{o0}} = {copy}", f"{{o0}}[{key}] = {src}"],
                         [x] + extra, scalars=scalars)

    @_op(1.5, ["i" + n for n in INPLACE])
    def op_inplace(self) -> Candidate:
        name = self.op_name(["i" + n for n in INPLACE])[1:]
        x, y, y_src = self.binary_operands(name, inplace=True)
        rule, rounding = self.binary_rule(name, x, y)
        args = [x] + ([y] if isinstance(y, Var) else [])
        scalars = (y,) if isinstance(y, Scalar) else ()
        symbol = BINARY[name][1]
        return Candidate("i" + name, [f"{{o0}} = xp.asarray({x.name}, copy=True)",
                                      f"{{o0}} {symbol}= {y_src}"], args, rule=rule,
                         rounding=rounding, scalars=scalars)

    @_op(1)
    def op_nonzero(self) -> Candidate:
        x = self.pick(ALL_DTYPES, exact=True, min_ndim=1)
        outs = ", ".join(f"{{o{i}}}" for i in range(x.ndim))
        return Candidate("nonzero", [f"{outs}, = xp.nonzero({x.name})"], [x], n_out=x.ndim)

    @_op(1.5, ["isin", "searchsorted"])
    def op_search(self) -> Candidate:
        def no_nan(v: Var) -> bool:
            return v.dtype in INTS or not np.isnan(v.value).any()
        if self.chance(0.4):
            x = self.pick(INTS)
            y = self.pick(INTS, cond=lambda v: self.promoted(v.dtype, x.dtype) is not None)
            known("reference deviations", self.stats)  # (isin's invert=True: not generated)
            return Candidate("isin", [f"{{o0}} = xp.isin({y.name}, {x.name})"], [x, y])
        x = self.pick(REAL_NUMERIC, exact=True, cond=no_nan, min_ndim=1, max_ndim=1)
        y = self.pick((x.dtype,), exact=True, cond=no_nan)
        side = self.choice(["", ", side='left'", ", side='right'"])
        return Candidate("searchsorted",
                         [f"{{o0}} = xp.searchsorted(xp.sort({x.name}), {y.name}{side})"],
                         [x, y])

    # ---- sorting and sets

    @_op(3, ["sort", "argsort"])
    def op_sort(self) -> Candidate:
        name = self.op_name(["sort", "argsort"])
        x = self.pick(REAL_NUMERIC, exact=name == "argsort", min_ndim=1)
        ax = self.integer(-x.ndim, x.ndim - 1)
        kwargs = f", axis={ax}" if ax != -1 or self.chance(0.3) else ""
        if self.chance(0.4):
            kwargs += f", descending={self.chance(0.5)}"
        if self.chance(0.3):
            v = np.sort(x.value, axis=ax)
            n = v.shape[ax]
            lo = np.take(v, np.arange(n - 1), axis=ax)
            hi = np.take(v, np.arange(1, n), axis=ax)
            # (equal neighbours, equal infinities and NaNs included: inf - inf is no 0)
            ties = v.size and bool(((lo == hi) | (np.isnan(lo) & np.isnan(hi))).any())
            if name == "sort" or not ties:
                kwargs += ", stable=False"
            else:
                known("unspecified order", self.stats)
        return Candidate(name, [f"{{o0}} = xp.{name}({x.name}{kwargs})"], [x])

    @_op(2, ["unique_values", "unique_counts", "unique_inverse", "unique_all"])
    def op_unique(self) -> Candidate:
        name = self.op_name(["unique_values", "unique_counts", "unique_inverse", "unique_all"])
        def no_nan(v: Var) -> bool:  # unique_all: the order of NaNs (each a value) varies
            return name != "unique_all" or v.dtype in INTS or not np.isnan(v.value).any()
        x = self.pick(REAL_NUMERIC, exact=True, cond=no_nan)
        known("unspecified order", self.stats)
        u = "{t0}"
        lines = [f"{u} = xp.{name}({x.name})"]
        if name == "unique_values":
            return Candidate(name, [f"{{o0}} = xp.sort(xp.unique_values({x.name}))"], [x])
        if name == "unique_inverse":
            lines += [f"{{o0}} = xp.sort({u}.values)",
                      f"{{o1}} = {u}.values[{u}.inverse_indices]"]
            return Candidate(name, lines, [x], n_out=2, n_tmp=1)
        lines.append(f"{{t1}} = xp.argsort({u}.values)")
        fields = ["values", "counts"] if name == "unique_counts" else [
            "values", "indices", "counts"]
        lines += [f"{{o{i}}} = xp.take({u}.{f}, {{t1}})" for i, f in enumerate(fields)]
        if name == "unique_all":
            lines.append(f"{{o3}} = {u}.values[{u}.inverse_indices]")
        return Candidate(name, lines, [x], n_out=len(fields) + (name == "unique_all"),
                         n_tmp=2)

    # ---- linear algebra

    @_op(2.5)
    def op_matmul(self) -> Candidate:
        x = self.pick(NUMERIC, min_ndim=1, max_ndim=3)
        k = x.shape[-1]
        r = self.rng.random()
        if r < 0.2:
            shape = (k,)
        else:
            batch = () if x.ndim <= 2 or self.chance(0.3) else tuple(
                1 if self.chance(0.3) else d for d in x.shape[:-2])
            shape = batch + (k, self.integer(0, 4) if self.chance(0.1) else self.integer(1, 4))
        d = self.dtype_from(tuple(d for d in NUMERIC if self.promoted(x.dtype, d)))
        same = [v for v in self.vars.values() if v.shape == shape and v.dtype in NUMERIC
                and self.promoted(x.dtype, v.dtype)]
        y = self.choice(same) if same and self.chance(0.4) else self.fresh(d, shape)
        if _zero_times_nonfinite(x.value, y.value):
            known("reference deviations", self.stats)
            raise _Skip
        form = self.choice(["{a} @ {b}", "xp.matmul({a}, {b})", "xp.linalg.matmul({a}, {b})"])
        expr = form.format(a=x.name, b=y.name)
        return Candidate("matmul", [f"{{o0}} = {expr}"], [x, y], rule="dot",
                         rounding=("elem", 1, 1))

    @_op(1.5, ["vecdot", "tensordot"])
    def op_contract(self) -> Candidate:
        x = self.pick(NUMERIC, min_ndim=1, max_ndim=3)
        d = self.dtype_from(tuple(d for d in NUMERIC if self.promoted(x.dtype, d)))
        if self.chance(0.5):
            shape = tuple(1 if self.chance(0.2) and i < x.ndim - 1 else n
                          for i, n in enumerate(x.shape))[self.integer(0, x.ndim - 1):]
            y = self.fresh(d, shape)
            ax = self.integer(-len(shape), -1)
            kwargs = f", axis={ax}" if ax != -1 or self.chance(0.3) else ""
            if x.shape[ax] != y.shape[ax]:
                raise _Skip
            ns = self.choice(["xp", "xp.linalg"])
            return Candidate("vecdot", [f"{{o0}} = {ns}.vecdot({x.name}, {y.name}{kwargs})"],
                             [x, y], rule="dot", rounding=("elem", 1, 1))
        n = self.integer(0, min(x.ndim, 2))
        shape = x.shape[x.ndim - n:] + tuple(self.integer(1, 3) for _ in range(
            self.integer(0, 2)))
        y = self.fresh(d, shape)
        one = math.prod(x.shape[:x.ndim - n] + shape[n:]) == 1  # (NumPy's dot of two vectors)
        if _zero_times_nonfinite(x.value, y.value) or (one and (
                np.any(x.value == 0) or np.any(y.value == 0))):
            known("reference deviations", self.stats)
            raise _Skip
        axes = str(n)
        if n and self.chance(0.3):
            axes = f"({list(range(x.ndim - n, x.ndim))}, {list(range(n))})"
        ns = self.choice(["xp", "xp.linalg"])
        return Candidate("tensordot",
                         [f"{{o0}} = {ns}.tensordot({x.name}, {y.name}, axes={axes})"],
                         [x, y], rule="dot", rounding=("elem", 1, 1))

    def matrix(self, dtypes: tuple, square: bool = True) -> Var:
        """A well-conditioned stack of matrices (condition number at most COND_LIMIT)."""

        def good(v: Var) -> bool:
            a = v.value
            if a.ndim < 2 or a.size == 0 or (square and a.shape[-1] != a.shape[-2]):
                return False
            if not np.isfinite(a).all() or a.shape[-1] > 5 or a.shape[-2] > 5:
                return False
            with np.errstate(all="ignore"):
                return bool((np.linalg.cond(a.astype(complex)) <= COND_LIMIT).all())
        cands = [v for v in self.vars.values() if v.dtype in dtypes and good(v)]
        if cands and self.chance(0.6):
            return self.choice(cands)
        dtype = self.dtype_from(dtypes)
        n = self.integer(1, 4)
        m = n if square else self.integer(1, 4)
        batch = self.choice([(), (), (), (2,), (1,), (2, 1)])
        for _ in range(10):
            a = self.data(dtype, batch + (m, n))
            a = np.where(np.isfinite(a), a, 1.0).astype(dtype)
            if square:
                signs = np.where(self.rng.random(batch + (n,)) < 0.5, -1, 1)
                diag = signs * (np.abs(a).sum(-1) + 1)
                a = (a + diag[..., None, :] * np.eye(n)).astype(dtype)
            if good(Var("", a)):
                return self.fresh(dtype, a.shape, a)
        raise _Skip

    @_op(6, LINALG)
    def op_linalg(self) -> Candidate:
        name = self.op_name(LINALG)
        norm = ("norm", 8, 4)
        if name in ("cholesky", "eigh", "eigvalsh"):
            m = self.matrix(FLOATS)
            n = m.shape[-1]
            mh = f"xp.conj(xp.matrix_transpose({m.name}))" if m.dtype in COMPLEXES else (
                f"xp.matrix_transpose({m.name})")
            if name == "cholesky":
                upper = self.choice(["", ", upper=True", ", upper=False"])
                eye = f"xp.eye({n}, dtype=xp.{m.dtype})"
                line = f"{{o0}} = xp.linalg.cholesky({m.name} @ {mh} + {eye}{upper})"
                return Candidate(name, [line], [m], rule="inexact", rounding=norm)
            h = f"{m.name} + {mh}"
            if name == "eigvalsh":
                return Candidate(name, [f"{{o0}} = xp.linalg.eigvalsh({h})"], [m],
                                 rule="inexact", rounding=norm)
            e = "{t0}"
            return Candidate(name, [
                f"{e} = xp.linalg.eigh({h})", f"{{o0}} = {e}.eigenvalues",
                (f"{{o1}} = ({e}.eigenvectors * {e}.eigenvalues[..., None, :]) @ "
                 f"xp.conj(xp.matrix_transpose({e}.eigenvectors))")],
                [m], n_out=2, n_tmp=1, rule="inexact", rounding=norm)
        if name in ("det", "slogdet", "inv", "matrix_power"):
            m = self.matrix(FLOATS)
            if name == "slogdet":
                return Candidate(name, [f"{{o0}}, {{o1}} = xp.linalg.slogdet({m.name})"], [m],
                                 n_out=2, rule="inexact", rounding=norm)
            if name == "matrix_power":
                p = self.integer(-2, 3)
                return Candidate(name, [f"{{o0}} = xp.linalg.matrix_power({m.name}, {p})"],
                                 [m], rule="inexact", rounding=norm)
            return Candidate(name, [f"{{o0}} = xp.linalg.{name}({m.name})"], [m],
                             rule="inexact", rounding=norm)
        if name == "solve":
            m = self.matrix(FLOATS)
            n = m.shape[-1]
            d = self.dtype_from(tuple(d for d in FLOATS if self.promoted(m.dtype, d)))
            shape = (n,) if m.ndim == 2 and self.chance(0.3) else m.shape[:-1] + (
                self.integer(1, 3),)
            b = self.fresh(d, shape)
            b.value[...] = np.where(np.isfinite(b.value), b.value, 1)
            self.env[b.name] = self.xp.asarray(b.value)
            return Candidate(name, [f"{{o0}} = xp.linalg.solve({m.name}, {b.name})"], [m, b],
                             rule="inexact", rounding=("norm", [8, 8], 4))
        if name == "eig":
            m = self.matrix(FLOATS)
            vectors = np.linalg.eig(m.value.astype(complex)).eigenvectors
            with np.errstate(all="ignore"):
                if not (np.linalg.cond(vectors) <= COND_LIMIT).all():
                    known("ill-conditioned linalg", self.stats)
                    raise _Skip
            fn = self.choice(["eigvals({m})", "eig({m}).eigenvalues"]).format(m=m.name)
            return Candidate(name, [f"{{t0}} = xp.linalg.{fn}",
                                    "{o0} = xp.sort(xp.real({t0}))",
                                    "{o1} = xp.sort(xp.imag({t0}))"], [m], n_out=2, n_tmp=1,
                             rule="inexact", rounding=("norm", 8, 4))
        if name in ("qr", "svd", "svdvals", "pinv", "matrix_rank"):
            m = self.matrix(FLOATS, square=False)
            if name == "qr":
                mode = self.choice(["", ", mode='reduced'", ", mode='complete'"])
                lines = [f"{{t0}} = xp.linalg.qr({m.name}{mode})", "{o0} = {t0}.Q @ {t0}.R",
                         "{o1} = xp.abs({t0}.R)"]
                if "complete" not in mode:
                    lines.append("{o2} = xp.abs({t0}.Q)")
                return Candidate(name, lines, [m], n_out=len(lines) - 1, n_tmp=1,
                                 rule="inexact", rounding=norm)
            if name == "svd":
                return Candidate(name, [
                    f"{{t0}} = xp.linalg.svd({m.name}, full_matrices=False)",
                    "{o0} = {t0}.S",
                    "{o1} = ({t0}.U * {t0}.S[..., None, :]) @ {t0}.Vh"],
                    [m], n_out=2, n_tmp=1, rule="inexact", rounding=norm)
            return Candidate(name, [f"{{o0}} = xp.linalg.{name}({m.name})"], [m],
                             rule="inexact", rounding=norm)
        if name == "matrix_norm":
            x = self.pick(FLOATS, min_ndim=2, cond=lambda v: np.isfinite(v.value).all())
            ord_ = self.choice(["", ", ord='fro'", ", ord='nuc'", ", ord=1", ", ord=-1",
                                ", ord=2", ", ord=-2", ", ord=float('inf')",
                                ", ord=-float('inf')"])
            if ord_ in (", ord='nuc'", ", ord=2", ", ord=-2"):
                x = self.matrix(FLOATS, square=False)
            keep = ", keepdims=True" if self.chance(0.3) else ""
            return Candidate(name, [f"{{o0}} = xp.linalg.matrix_norm({x.name}{ord_}{keep})"],
                             [x], rule="inexact", rounding=("elem", 1, 2))
        if name == "vector_norm":
            ord_ = self.choice(["", ", ord=1", ", ord=2", ", ord=3", ", ord=0",
                                ", ord=float('inf')", ", ord=-float('inf')", ", ord=-1"])
            x = self.pick(FLOATS, exact=ord_ == ", ord=0")
            axis, _ = self.axis(x.ndim)
            kwargs = f", axis={axis}" if axis != "None" or self.chance(0.3) else ""
            keep = ", keepdims=True" if self.chance(0.3) else ""
            line = f"{{o0}} = xp.linalg.vector_norm({x.name}{kwargs}{ord_}{keep})"
            return Candidate(name, [line], [x], rule="inexact", rounding=("elem", 1, 2))
        if name in ("trace", "diagonal"):
            x = self.pick(NUMERIC, min_ndim=2)
            off = f", offset={self.integer(-2, 2)}" if self.chance(0.5) else ""
            rule = "sum" if name == "trace" else "same"
            return Candidate(name, [f"{{o0}} = xp.linalg.{name}({x.name}{off})"], [x],
                             rule=rule, rounding=("elem", 1, 1) if name == "trace" else None)
        if name == "outer":
            x = self.pick(NUMERIC, min_ndim=1, max_ndim=1)
            y = self.pick(NUMERIC, min_ndim=1, max_ndim=1,
                          cond=lambda v: self.promoted(v.dtype, x.dtype) is not None)
            return Candidate(name, [f"{{o0}} = xp.linalg.outer({x.name}, {y.name})"], [x, y],
                             rule="mul", rounding=("elem", 0, 1))
        x = self.pick(NUMERIC, min_ndim=1, max_ndim=3, cond=lambda v: 3 in v.shape)
        ax = self.choice([a - x.ndim for a, d in enumerate(x.shape) if d == 3])
        d = self.dtype_from(tuple(d for d in NUMERIC if self.promoted(x.dtype, d)))
        y = self.fresh(d, x.shape[self.integer(0, x.ndim + ax):])
        kwargs = f", axis={ax}" if ax != -1 or self.chance(0.3) else ""
        return Candidate("cross", [f"{{o0}} = xp.linalg.cross({x.name}, {y.name}{kwargs})"],
                         [x, y], rule="mul", rounding=("elem", 1, 1))

    # ---- fft

    @_op(4, FFT)
    def op_fft(self) -> Candidate:
        name = self.op_name(FFT)
        norm = self.choice(["", "", ", norm='backward'", ", norm='ortho'", ", norm='forward'"])
        rounding = ("norm", 2, 2)
        if name in ("fftfreq", "rfftfreq"):
            n = self.integer(1, 8)
            d = self.choice(["", ", d=0.5", ", d=2.0"])
            dtype = self.choice(["", ", dtype=xp.float32", ", dtype=xp.float64"])
            return Candidate(name, [f"{{o0}} = xp.fft.{name}({n}{d}{dtype})"], [],
                             rule="inexact", rounding=("norm", 0, 2))
        dtypes = REALS if name in ("rfft", "rfftn", "ihfft") else FLOATS if name.endswith(
            "shift") else COMPLEXES
        x = self.pick(dtypes, min_ndim=1, max_ndim=3, nonempty=True,
                      cond=lambda v: np.isfinite(v.value).all())
        if name in ("fftshift", "ifftshift"):
            axes = "" if self.chance(0.4) else f", axes={self.axis(x.ndim, none=False)[0]}"
            return Candidate(name, [f"{{o0}} = xp.fft.{name}({x.name}{axes})"], [x])
        if name.endswith("n"):
            axes_lit, axes = self.axis(x.ndim, none=False)
            if axes_lit == "()" or not axes:
                raise _Skip
            axes = tuple(int(a) for a in axes_lit.strip("()").split(",") if a.strip())
            kwargs = f", axes={tuple(axes)}"
            if self.chance(0.3):
                kwargs += f", s={tuple(self.integer(1, 5) for _ in axes)}"
        else:
            ax = self.integer(-x.ndim, x.ndim - 1)
            kwargs = f", axis={ax}" if ax != -1 or self.chance(0.3) else ""
            if self.chance(0.3) or (name in ("irfft", "hfft") and x.shape[ax] < 2):
                kwargs += f", n={self.integer(1, 6)}"
        return Candidate(name, [f"{{o0}} = xp.fft.{name}({x.name}{kwargs}{norm})"], [x],
                         rule="inexact", rounding=rounding)

    # ---- creation

    @_op(3, CREATION + ("zeros_like", "ones_like", "full_like", "triu"))
    def op_creation(self) -> Candidate:
        name = self.op_name(CREATION)
        dtype = self.dtype_from(ALL_DTYPES)
        dt = f", dtype=xp.{dtype}"
        if name == "arange":
            if self.chance(0.5):
                start, stop = self.integer(-5, 5), self.integer(-5, 8)
                step = self.choice([1, 1, 2, 3, -1, -2])
                dt = self.choice(["", f", dtype=xp.{self.dtype_from(NUMERIC)}"])
            else:
                start, stop = self.integer(-20, 20) / 4, self.integer(-20, 32) / 4
                step = self.choice([0.25, 0.5, 1.25, -0.5, 2.0])
                dt = self.choice(["", ", dtype=xp.float32", ", dtype=xp.float64"])
            args = [start, stop, step][:self.integer(2, 3)]
            scalars = tuple(Scalar(a) for a in args)
            return Candidate(name, [f"{{o0}} = xp.arange({', '.join(map(repr, args))}{dt})"],
                             [], scalars=scalars)
        if name == "linspace":
            start, stop = self.integer(-20, 20) / 4, self.integer(-20, 20) / 4
            num = self.integer(0, 6)
            end = self.choice(["", ", endpoint=False", ", endpoint=True"])
            dt = self.choice(["", ", dtype=xp.float32", ", dtype=xp.complex64"])
            return Candidate(name, [f"{{o0}} = xp.linspace({start}, {stop}, {num}{end}{dt})"],
                             [], rule="inexact", rounding=("norm", 0, 2))
        if name == "eye":
            n = self.integer(0, 4)
            m = f", {self.integer(0, 4)}" if self.chance(0.5) else ""
            k = f", k={self.integer(-2, 2)}" if self.chance(0.5) else ""
            return Candidate(name, [f"{{o0}} = xp.eye({n}{m}{k}{dt})"], [])
        shape = self.shape(0, 3)
        shape_lit = repr(shape) if len(shape) != 1 or self.chance(0.5) else str(shape[0])
        if name in ("zeros", "ones"):
            return Candidate(name, [f"{{o0}} = xp.{name}({shape_lit}{dt})"], [])
        if name == "full":
            s = self.scalar_for(dtype)
            dt = dt if self.chance(0.6) else ""
            return Candidate(name, [f"{{o0}} = xp.full({shape_lit}, {s.source}{dt})"], [],
                             scalars=(s,))
        if name == "asarray":
            value = self.data(dtype, shape)
            lit = repr(value.tolist()).replace("nan", "float('nan')").replace(
                "inf", "float('inf')")
            return Candidate(name, [f"{{o0}} = xp.asarray({lit}{dt})"], [], rule="same")
        if name == "like":
            x = self.pick(ALL_DTYPES)
            kind = self.choice(["zeros_like", "ones_like", "full_like"])
            dt = dt if self.chance(0.4) else ""
            fill = ""
            if kind == "full_like":
                s = self.scalar_for(dtype if dt else x.dtype)
                fill = f", {s.source}"
            return Candidate(kind, [f"{{o0}} = xp.{kind}({x.name}{fill}{dt})"], [x],
                             rule="grid0")
        if name == "tril":
            x = self.pick(ALL_DTYPES, min_ndim=2)
            fn = self.choice(["tril", "triu"])
            k = f", k={self.integer(-2, 2)}" if self.chance(0.5) else ""
            return Candidate(fn, [f"{{o0}} = xp.{fn}({x.name}{k})"], [x])
        n = self.integer(1, 3)
        arrays = [self.pick((dtype,), min_ndim=1, max_ndim=1) for _ in range(n)]
        if math.prod(a.shape[0] for a in arrays) > MAX_SIZE:
            raise _Skip
        idx = self.choice(["", ", indexing='xy'", ", indexing='ij'"])
        outs = ", ".join(f"{{o{i}}}" for i in range(n))
        line = f"{outs}, = xp.meshgrid({', '.join(a.name for a in arrays)}{idx})"
        return Candidate("meshgrid", [line], arrays,
                         n_out=n)

    # ---- steps that must raise

    @_error_op
    def err_reshape(self) -> Candidate:
        x = self.pick(ALL_DTYPES)
        shape = (x.value.size + self.integer(1, 3),)
        return Candidate("reshape", [f"{{o0}} = xp.reshape({x.name}, {shape})"], [x],
                         expect_error=True)

    @_error_op
    def err_broadcast(self) -> Candidate:
        x = self.pick(NUMERIC, min_ndim=1, cond=lambda v: v.shape[-1] >= 2)
        n = x.shape[-1] + self.integer(1, 2)
        y = self.fresh(x.dtype, (n,))
        name = self.choice(["add", "multiply", "maximum"] if x.dtype in REAL_NUMERIC
                           else ["add", "multiply"])
        return Candidate(name, [f"{{o0}} = xp.{name}({x.name}, {y.name})"], [x, y],
                         expect_error=True)

    @_error_op
    def err_matmul(self) -> Candidate:
        x = self.pick(NUMERIC, min_ndim=1, max_ndim=3)
        y = self.fresh(x.dtype, (x.shape[-1] + 1, 2))
        return Candidate("matmul", [f"{{o0}} = {x.name} @ {y.name}"], [x, y],
                         expect_error=True)

    @_error_op
    def err_axis(self) -> Candidate:
        x = self.pick(NUMERIC)
        ax = self.choice([x.ndim, -x.ndim - 1])
        name = self.choice(["sum", "flip", "argmax", "cumulative_sum", "roll", "expand_dims"])
        if name == "expand_dims":
            ax = self.choice([x.ndim + 1, -x.ndim - 2])
        if name == "argmax" and x.dtype in COMPLEXES:
            raise _Skip
        shift = "1, " if name == "roll" else ""
        return Candidate(name, [f"{{o0}} = xp.{name}({x.name}, {shift}axis={ax})"], [x],
                         expect_error=True)

    @_error_op
    def err_concat(self) -> Candidate:
        x = self.pick(ALL_DTYPES, min_ndim=2)
        shape = list(x.shape)
        shape[1] += 1
        y = self.fresh(x.dtype, tuple(shape))
        fn = self.choice(["concat", "stack"])
        return Candidate(fn, [f"{{o0}} = xp.{fn}([{x.name}, {y.name}], axis=0)"], [x, y],
                         expect_error=True)

    @_error_op
    def err_linalg(self) -> Candidate:
        x = self.pick(FLOATS, min_ndim=1, max_ndim=3, cond=lambda v: v.ndim == 1 or v.shape[
            -1] != v.shape[-2])
        fn = self.choice(["inv", "det", "cholesky", "slogdet", "eigvalsh"])
        return Candidate(fn, [f"{{o0}} = xp.linalg.{fn}({x.name})"], [x], expect_error=True)

    @_error_op
    def err_dtype(self) -> Candidate:
        x = self.pick(FLOATS)
        fn = self.choice(["bitwise_and", "bitwise_or", "bitwise_xor"])
        y = self.pick((x.dtype,), cond=lambda v: _broadcastable(v.shape, x.shape))
        return Candidate(fn, [f"{{o0}} = xp.{fn}({x.name}, {y.name})"], [x, y],
                         expect_error=True)

    @_error_op
    def err_scalar_range(self) -> Candidate:
        x = self.pick(INTS)
        info = np.iinfo(x.dtype)
        value = self.choice([info.max + 1, info.min - 1, info.max * 4 + 3])
        op = self.choice(["+", "-", "*", "=="])
        return Candidate("scalar_range", [f"{{o0}} = {x.name} {op} {_literal(value, True)}"],
                         [x], expect_error=True)

    @_error_op
    def err_shape_args(self) -> Candidate:
        x = self.pick(ALL_DTYPES, min_ndim=1, cond=lambda v: any(d != 1 for d in v.shape))
        kind = self.choice(["squeeze", "permute_dims", "broadcast_to"])
        if kind == "squeeze":
            ax = self.choice([a for a, d in enumerate(x.shape) if d != 1])
            return Candidate(kind, [f"{{o0}} = xp.squeeze({x.name}, axis={ax})"], [x],
                             expect_error=True)
        if kind == "permute_dims":
            perm = list(range(x.ndim))
            perm = perm + [0] if self.chance(0.5) else perm[:-1] + [perm[0]] * (x.ndim > 1)
            if sorted(perm) == list(range(x.ndim)):
                raise _Skip
            return Candidate(kind, [f"{{o0}} = xp.permute_dims({x.name}, {tuple(perm)})"],
                             [x], expect_error=True)
        shape = tuple(d + 1 if d != 1 else d for d in x.shape)
        return Candidate(kind, [f"{{o0}} = xp.broadcast_to({x.name}, {shape})"], [x],
                         expect_error=True)

    @_error_op
    def err_index(self) -> Candidate:
        if not self.oob:
            raise _Skip
        x = self.pick(ALL_DTYPES, min_ndim=1)
        n = x.shape[0]
        i = self.choice([n, -n - 1, n + 2])
        return Candidate("getitem_oob", [f"{{o0}} = {x.name}[{i}, ...]"], [x],
                         expect_error=True)


def generate(seed: int, index: int, max_ops: int = MAX_OPS,
             oob: bool = OUT_OF_BOUNDS_INDICES, stats: Stats | None = None,
             focus: tuple = ()) -> Program:
    """Program number ``index`` of the stream ``seed`` (deterministic). ``focus``: names of
    ops (as Stats.ops counts them: "add", "sum", "getitem_mask", "iadd", ...) to generate
    more often."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _Generator(seed, index, max_ops, oob, stats, focus).program()


# --------------------------------------------------------------------------------------------
# Reducing a mismatch

def shrink(program: Program, mismatch: Mismatch, xp: Any, strict: Any,
           seconds: float = SHRINK_SECONDS) -> tuple[Program, Mismatch]:
    """A smaller program with a mismatch of the same kind: the earliest step's results that
    show it as the only outputs, then steps replaced, last first, by inputs holding their
    reference results while the mismatch remains."""
    deadline = time.monotonic() + seconds

    def still(p: Program) -> Mismatch | None:
        m = check(p, xp, strict)
        return m if m is not None and m.kind == mismatch.kind else None

    if mismatch.output is not None or mismatch.kind == "unexpected exception":
        for step in program.steps:
            if step.data is not None or time.monotonic() > deadline:
                continue
            p = program.pruned(step.outputs)
            m = still(p)
            if m is not None:
                program, mismatch = p, m
                break
    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        values = execute(program, strict, keep=True).env
        for i in reversed(range(len(program.steps))):
            if program.steps[i].data is not None or time.monotonic() > deadline:
                continue
            if not all(n in values for n in program.steps[i].outputs):
                continue
            p = program.cut(i, values)
            m = still(p)
            if m is not None:
                program, mismatch, changed = p, m, True
                break
    return program, mismatch


# --------------------------------------------------------------------------------------------
# Fuzzing

@dataclass
class Finding:
    """A mismatch, with the program that showed it and its reduced form."""

    program: Program
    mismatch: Mismatch
    reduced: Program
    reduced_mismatch: Mismatch

    def report(self) -> str:
        m = self.reduced_mismatch
        note = f"{m.kind}: {m.detail}"
        return (f"MISMATCH in program {self.program.seed} ({self.mismatch.kind}): "
                f"{self.mismatch.detail}\n--- reduced reproducer ---\n"
                f"{self.reduced.script(note)}")


@dataclass
class Report:
    """The result of a fuzzing run."""

    seed: int
    seconds: float
    stats: Stats
    findings: list[Finding]

    def summary(self) -> str:
        s = self.stats
        rate = s.programs / self.seconds * 60 if self.seconds else 0.0
        lines = [(f"seed {self.seed}: {s.programs} programs ({s.error_programs} ending in an "
                  f"error step) in {self.seconds:.0f} s, {rate:.0f} per minute; "
                  f"{sum(s.ops.values())} steps; {len(self.findings)} mismatches")]
        lines.append("ops: " + ", ".join(f"{k} {v}" for k, v in s.ops.most_common()))
        if s.rejected:
            lines.append("rejected by strict: " + ", ".join(
                f"{k} {v}" for k, v in s.rejected.most_common()))
        if s.known:
            lines.append("known differences applied: " + ", ".join(
                f"{k} {v}" for k, v in s.known.most_common()))
        if s.pending:
            lines.append("pending bugs avoided: " + ", ".join(
                f"{k} {v}" for k, v in s.pending.most_common()))
        return "\n".join(lines)


def fuzz(seconds: float, seed: int = 0, max_ops: int = MAX_OPS, xp: Any = None,
         oob: bool = OUT_OF_BOUNDS_INDICES, focus: tuple = (),
         max_findings: int | None = None, reduce: bool = True,
         log: Callable[[str], None] | None = None) -> Report:
    """Run programs ``(seed, 0)``, ``(seed, 1)``, ... (see ``generate``) against ``xp``
    (default xla_array) until ``seconds`` have passed or ``max_findings`` mismatches were
    found."""
    import array_api_strict as strict
    if xp is None:
        import xla_array as xp
    stats, findings = Stats(), []
    start = time.monotonic()
    index = 0
    while time.monotonic() - start < seconds:
        program = generate(seed, index, max_ops, oob, stats, focus)
        index += 1
        mismatch = check(program, xp, strict)
        if mismatch is None:
            continue
        reduced, reduced_mismatch = (shrink(program, mismatch, xp, strict) if reduce
                                     else (program, mismatch))
        findings.append(Finding(program, mismatch, reduced, reduced_mismatch))
        if log is not None:
            log(findings[-1].report())
        if max_findings is not None and len(findings) >= max_findings:
            break
    return Report(seed, time.monotonic() - start, stats, findings)


def main(argv: list[str] | None = None) -> int:
    """Command line: fuzz for a time budget, print mismatches and a summary."""
    parser = argparse.ArgumentParser(prog="python -m tests.fuzzer", description=__doc__.split(
        "\n")[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="time budget")
    parser.add_argument("--seed", type=int, default=None, help="program stream (default: "
                        "from the clock, printed)")
    parser.add_argument("--ops", type=int, default=MAX_OPS,
                        help=f"most operations per program (default {MAX_OPS})")
    parser.add_argument("--oob", action="store_true",
                        help="also generate out-of-bounds integer indices (expect IndexError)")
    parser.add_argument("--focus", default="", help="comma-separated op names to generate "
                        "more often (e.g. add,sum,getitem_mask)")
    parser.add_argument("--max-findings", type=int, default=None,
                        help="stop after this many mismatches")
    parser.add_argument("--no-reduce", action="store_true", help="print programs as generated")
    args = parser.parse_args(argv)
    os.environ["XLA_ARRAY_CACHE_DIR"] = "off"
    seed = args.seed if args.seed is not None else int(time.time()) % 100_000
    print(f"fuzzing for {args.seconds:.0f} s with seed {seed}", flush=True)
    focus = tuple(n for n in args.focus.split(",") if n)
    unknown = set(focus) - {n for _, names, _ in _OPS.values() for n in names}
    if unknown:
        parser.error(f"unknown op names in --focus: {sorted(unknown)}")
    report = fuzz(args.seconds, seed, args.ops, oob=args.oob or OUT_OF_BOUNDS_INDICES,
                  focus=focus, max_findings=args.max_findings, reduce=not args.no_reduce,
                  log=lambda text: print(text, flush=True))
    print(report.summary())
    return 1 if report.findings else 0


if __name__ == "__main__":
    sys.exit(main())
