"""Random variates on the device: one op, ``random``, drawing from XLA's counter-based generator.

``random(state, *params)`` with attributes ``Random(dist, shape, dtype, algorithm)`` has two
results: the generator's next state (the same ``uint64[2]`` key as its input) and the
variates, of ``shape`` and ``dtype``. Its lowering calls ``stablehlo.rng_bit_generator``
(THREE_FRY or PHILOX; XLA expands either into elementwise integer code on the CPU, so the bits
fuse with what uses them) and turns the bits into the distribution ``dist`` in the same
function:

- ``bits``: the raw bits (``uint32`` or ``uint64``);
- ``uniform``: [0, 1) from the top bits (52 of a ``uint64`` for float64, 23 of a ``uint32``
  for float32) as the mantissa of a number in [1, 2), less 1: ``k * 2**-52`` (``2**-23``);
- ``normal``: Box-Muller, both outputs of each pair used (``r cos t`` and ``r sin t``), with
  float64 logarithms, sines and cosines written out as fdlibm's polynomials (XLA's own
  float64 ``log`` and ``cosine`` are a libm call per element on the CPU);
- ``exponential``: ``-log(u)`` of ``u`` in (0, 1];
- ``gamma`` (``params``: shape): Marsaglia and Tsang's squeeze (2000), a ``stablehlo.while``
  loop that draws again for the elements not yet accepted; a shape below 1 is boosted
  (``G(a + 1) * U ** (1 / a)``, in logarithms);
- ``poisson`` (``params``: lam): Knuth's multiplication of uniforms below lam 10, Hörmann's
  transformed rejection (PTRS, 1993) above, as NumPy, in one while loop;
- ``binomial`` (``params``: n, p): inversion by geometric waiting times where
  ``n * min(p, 1 - p) < 10``, Hörmann's BTRS (1993) above, in one while loop.

The loops run while some element is not accepted, at most ``_MAX_ROUNDS`` rounds (an element
still not accepted then, which no valid parameter reaches, is NaN, or -1 for the counts);
invalid parameters (NaN, negative, infinite where NumPy raises) give NaN or -1 at once. The
namespace (``xla_array/random.py``) checks parameters whose values it knows at the call.

Gamma, Poisson and binomial variates are computed in float64 from 64-bit draws whatever the
result's dtype. There is no host rule: the values are XLA's generator's, which NumPy does not
compute, so a graph using this op always compiles.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from .. import dtypes as dt
from ..dtypes import DType
from ..lower import Emitter, tensor_type
from .structural import bcast, broadcast_shapes, compare, define, i64s, select

__all__ = ["Random", "DISTS", "ALGORITHMS"]

ALGORITHMS = ("THREE_FRY", "PHILOX")
# distribution -> (number of parameters, result dtypes it takes)
DISTS: dict[str, tuple[int, tuple[DType, ...]]] = {
    "bits": (0, (dt.uint32, dt.uint64)),
    "uniform": (0, (dt.float32, dt.float64)),
    "normal": (0, (dt.float32, dt.float64)),
    "exponential": (0, (dt.float32, dt.float64)),
    "gamma": (1, (dt.float32, dt.float64)),
    "poisson": (1, (dt.int64,)),
    "binomial": (2, (dt.int64,)),
}
_MAX_ROUNDS = 10_000  # a loop's bound: no valid parameter needs it (each round accepts >= 1/3)
_STATE = ((2,), dt.uint64)


class Random(NamedTuple):
    dist: str  # a key of DISTS
    shape: tuple  # the variates' shape
    dtype: DType  # the variates' dtype
    algorithm: str  # "THREE_FRY" or "PHILOX"


def _results(inputs: tuple, attrs: Random) -> tuple:
    return (_STATE, (attrs.shape, attrs.dtype))


def _infer(inputs: tuple, attrs: Random) -> tuple:
    if attrs.dist not in DISTS:
        raise ValueError(f"random: unknown distribution {attrs.dist!r}")
    if attrs.algorithm not in ALGORITHMS:
        raise ValueError(f"random: unknown algorithm {attrs.algorithm!r}")
    nparams, dtypes = DISTS[attrs.dist]
    if attrs.dtype not in dtypes:
        raise TypeError(f"random: {attrs.dist} variates of dtype {attrs.dtype} are not "
                        f"supported (only {', '.join(d.name for d in dtypes)})")
    if not isinstance(attrs.shape, tuple) or any(type(d) is not int or d < 0
                                                  for d in attrs.shape):
        raise ValueError(f"random: bad shape {attrs.shape!r}")
    if len(inputs) != 1 + nparams:
        raise ValueError(f"random: {attrs.dist} takes {nparams} parameters, got "
                         f"{len(inputs) - 1}")
    state = inputs[0]
    if (state.shape, state.dtype) != _STATE:
        raise TypeError(f"random: the state is a uint64 array of shape (2,), got "
                        f"{state.dtype}{list(state.shape)}")
    for p in inputs[1:]:
        if p.dtype.kind not in "biuf":
            raise TypeError(f"random: parameters are real numbers, got {p.dtype}")
        if broadcast_shapes(p.shape, attrs.shape) != attrs.shape:
            raise ValueError(f"random: a parameter of shape {p.shape} does not broadcast to "
                             f"{attrs.shape}")
    return _STATE


# ---------------------------------------------------------------- elementwise vocabulary

class _W:
    """Elementwise StableHLO over one shape ``s`` (default dtype ``d``)."""

    def __init__(self, e: Emitter, s: tuple, d: DType = dt.float64) -> None:
        self.e, self.s, self.d = e, s, d

    def t(self, d: DType | None = None) -> str:
        return tensor_type(self.s, d or self.d)

    def k(self, v: Any, d: DType | None = None) -> str:
        d = d or self.d
        return bcast(self.e, self.e.const(v, d), (), self.s, d)

    def f(self, name: str, *xs: str, d: DType | None = None) -> str:
        return self.e.op("stablehlo." + name, list(xs), self.t(d))

    def add(self, a: str, b: str) -> str:
        return self.f("add", a, b)

    def sub(self, a: str, b: str) -> str:
        return self.f("subtract", a, b)

    def mul(self, a: str, b: str) -> str:
        return self.f("multiply", a, b)

    def div(self, a: str, b: str) -> str:
        return self.f("divide", a, b)

    def log(self, a: str) -> str:
        return self.f("log", a)

    def cmp(self, direction: str, a: str, b: str, d: DType | None = None) -> str:
        return compare(self.e, direction, a, b, self.s, d or self.d)

    def sel(self, p: str, a: str, b: str, d: DType | None = None) -> str:
        return select(self.e, p, a, b, self.s, d or self.d)

    def both(self, a: str, b: str) -> str:
        return self.f("and", a, b, d=dt.bool)

    def either(self, a: str, b: str) -> str:
        return self.f("or", a, b, d=dt.bool)

    def no(self, a: str) -> str:
        return self.f("not", a, d=dt.bool)

    def cvt(self, a: str, d: DType) -> str:
        return self.e.op("stablehlo.convert", [a], self.t(d))


def _bits(e: Emitter, state: str, shape: tuple, d: DType, algorithm: str) -> tuple[str, str]:
    r = e.op("stablehlo.rng_bit_generator", [state],
             [tensor_type(*_STATE), tensor_type(shape, d)],
             f"rng_algorithm = #stablehlo<rng_algorithm {algorithm}>")
    return f"{r}#0", f"{r}#1"


def _unit(w: _W, bits: str, d: DType, open_zero: bool = False) -> str:
    """[0, 1) (or (0, 1] with ``open_zero``) of dtype ``d`` from bits of its width: the top 52
    (23) bits as the mantissa of a number in [1, 2), less 1: ``k * 2**-52`` (``2**-23``); 2
    less it for (0, 1]. (No integer-to-float conversion: without AVX-512 XLA makes a call of
    each 64-bit one.)"""
    ub = dt.uint64 if d is dt.float64 else dt.uint32
    m = 52 if d is dt.float64 else 23
    one = 0x3FF0000000000000 if d is dt.float64 else 0x3F800000
    k = w.f("shift_right_logical", bits, w.k(ub.bits - m, ub), d=ub)
    x = w.e.op("stablehlo.bitcast_convert", [w.f("or", k, w.k(one, ub), d=ub)], w.t(d))
    if open_zero:
        return w.f("subtract", w.k(2.0, d), x, d=d)
    return w.f("subtract", x, w.k(1.0, d), d=d)


def _row(e: Emitter, x: str, shape: tuple, i: int, d: DType) -> str:
    """Row ``i`` of ``x`` (shape ``(r,) + shape``), of shape ``shape``."""
    lo = [i] + [0] * len(shape)
    hi = [i + 1] + list(shape)
    s = e.op("stablehlo.slice", [x], tensor_type((1,) + shape, d),
             f"start_indices = {i64s(lo)}, limit_indices = {i64s(hi)}, "
             f"strides = {i64s([1] * len(hi))}")
    return e.op("stablehlo.reshape", [s], tensor_type(shape, d))


_GOLDEN = 0x9E3779B97F4A7C15  # SplitMix64's increment


def _keys(e: Emitter, state: str, s: tuple, algorithm: str) -> tuple[str, str]:
    """(next state, one 64-bit key per element): the start of each element's counter in a
    rejection loop."""
    state, bits = _bits(e, state, s, dt.uint64, algorithm)
    return state, _barrier(e, bits, s, dt.uint64)


def _uniforms(w: _W, ctr: str, count: int, open_zero: bool = False) -> tuple[str, list[str]]:
    """``count`` float64 uniforms per element from its counter (SplitMix64's output function
    of the counter and the counter advanced by its increment: a loop's rounds are not
    ``rng_bit_generator`` calls, whose expansion, once per round in the loop's body, made a
    Poisson graph's compile 3x longer); (advanced counter, uniforms)."""
    u64 = dt.uint64
    out = []
    for _ in range(count):
        ctr = w.f("add", ctr, w.k(_GOLDEN, u64), d=u64)
        z = ctr
        for sh, mul in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
            z = w.f("xor", z, w.f("shift_right_logical", z, w.k(sh, u64), d=u64), d=u64)
            z = w.f("multiply", z, w.k(mul, u64), d=u64)
        z = w.f("xor", z, w.f("shift_right_logical", z, w.k(31, u64), d=u64), d=u64)
        out.append(_unit(w, z, dt.float64, open_zero))
    return ctr, out


def _any(e: Emitter, p: str, s: tuple) -> str:
    if not s:
        return p
    return e.op("stablehlo.reduce", [p, e.const(False, dt.bool)], tensor_type((), dt.bool),
                f"dimensions = {i64s(range(len(s)))}",
                region=e.scalar_body("stablehlo.or", dt.bool))


def _loop(e: Emitter, init: list[tuple[str, str]], step: Any) -> list[str]:
    """A ``stablehlo.while`` over ``init`` ((value, type) pairs: the round counter and the
    state are added in front, the ``done`` mask of shape ``s`` must come first) that runs
    ``step(emitter, values) -> values`` while some element is not done and fewer than
    ``_MAX_ROUNDS`` rounds ran. Returns the final values (without the counter)."""
    i64 = dt.int64
    ti = tensor_type((), i64)
    names = [e.fresh() for _ in range(len(init) + 1)]
    args = [(names[0], ti)] + [(n, t) for n, (_, t) in zip(names[1:], init)]
    done_shape = _shape_of(init[0][1])

    def cond(c: Emitter) -> list:
        w = _W(c, done_shape)
        left = _any(c, w.no(names[1]), done_shape)
        more = compare(c, "LT", names[0], c.const(_MAX_ROUNDS, i64), (), i64)
        return [c.op("stablehlo.and", [left, more], tensor_type((), dt.bool))]

    def body(c: Emitter) -> list:
        k = c.op("stablehlo.add", [names[0], c.const(1, i64)], ti)
        return [k] + step(c, names[1:])

    c_text = e.block(args, cond)
    b_text = e.block(args, body)
    r = e.op("stablehlo.while", [e.const(0, i64)] + [v for v, _ in init],
             [t for _, t in args], region=f"{c_text}\n{e.indent}}}, {{\n{b_text}")
    return [f"{r}#{i}" for i in range(1, len(args))]


def _shape_of(ty: str) -> tuple:
    inner = ty[len("tensor<"):-1]
    parts = inner.split("x")
    return tuple(int(p) for p in parts[:-1])


def _loggam(w: _W, x: str) -> str:
    """log Gamma(x) for x >= 1 (NumPy's ``random_loggam``: Stirling's series from 7 on, the
    factors below 7 divided out); 0 at 1 and 2."""
    a = (8.333333333333333e-02, -2.777777777777778e-03, 7.936507936507937e-04,
         -5.952380952380952e-04, 8.417508417508418e-04, -1.917526917526918e-03,
         6.410256410256410e-03, -2.955065359477124e-02, 1.796443723688307e-01,
         -1.39243221690590e+00)
    seven = w.k(7.0)
    small = w.cmp("LT", x, seven)
    n = w.sel(small, w.f("floor", w.sub(seven, x)), w.k(0.0))
    x0 = w.add(x, n)
    x2 = w.div(w.k(1.0), w.mul(x0, x0))
    gl0 = w.k(a[9])
    for c in reversed(a[:9]):
        gl0 = w.add(w.mul(gl0, x2), w.k(c))
    gl = w.add(w.div(gl0, x0), w.k(0.5 * math.log(2 * math.pi)))
    gl = w.sub(w.add(gl, w.mul(w.sub(x0, w.k(0.5)), w.log(x0))), x0)
    prod = w.k(1.0)
    for j in range(7):  # x (x + 1) ... (x + n - 1)
        prod = w.sel(w.cmp("LT", w.k(float(j)), n), w.mul(prod, w.add(x, w.k(float(j)))), prod)
    gl = w.sub(gl, w.log(prod))
    exact = w.either(w.cmp("EQ", x, w.k(1.0)), w.cmp("EQ", x, w.k(2.0)))
    return w.sel(exact, w.k(0.0), gl)


def _finite(w: _W, x: str) -> str:
    return w.f("is_finite", x, d=dt.bool)


# ---------------------------------------------------------------- distributions

_LG = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
       2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
       1.479819860511658591e-01)  # fdlibm's log kernel
_SIN = (-1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
        2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10)
_COS = (4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
        -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11)


def _poly(w: _W, z: str, cs: tuple) -> str:
    acc = w.k(cs[-1])
    for c in reversed(cs[:-1]):
        acc = w.add(w.mul(acc, z), w.k(c))
    return acc


def _log64(w: _W, x: str) -> str:
    """log of float64 x in (0, 1], normal numbers only (fdlibm's kernel, within 1 ulp), in
    plain arithmetic that XLA vectorizes (its own float64 log is a call per element)."""
    u64 = dt.uint64
    b = w.e.op("stablehlo.bitcast_convert", [x], w.t(u64))
    # m in [sqrt(2)/2, sqrt(2)): add the offset that carries mantissas above sqrt(2) over
    b = w.f("add", b, w.k(0x3FF0000000000000 - 0x3FE6A09E667F3BCD, u64), d=u64)
    # the exponent as a float without a conversion: 2**52 + e, less 2**52 + 1023
    ex = w.f("or", w.f("shift_right_logical", b, w.k(52, u64), d=u64),
             w.k(0x4330000000000000, u64), d=u64)
    dk = w.sub(w.e.op("stablehlo.bitcast_convert", [ex], w.t()), w.k(2.0 ** 52 + 1023))
    mb = w.f("add", w.f("and", b, w.k(0x000FFFFFFFFFFFFF, u64), d=u64),
             w.k(0x3FE6A09E667F3BCD, u64), d=u64)
    f = w.sub(w.e.op("stablehlo.bitcast_convert", [mb], w.t()), w.k(1.0))
    s = w.div(f, w.add(w.k(2.0), f))
    z = w.mul(s, s)
    zz = w.mul(z, z)
    t1 = w.mul(zz, _poly(w, zz, (_LG[1], _LG[3], _LG[5])))
    t2 = w.mul(z, _poly(w, zz, (_LG[0], _LG[2], _LG[4], _LG[6])))
    r = w.add(t2, t1)
    hfsq = w.mul(w.k(0.5), w.mul(f, f))
    lo = w.add(w.mul(s, w.add(hfsq, r)), w.mul(dk, w.k(1.90821492927058770002e-10)))
    return w.sub(w.mul(dk, w.k(6.93147180369123816490e-01)), w.sub(w.sub(hfsq, lo), f))


def _cos_turns(w: _W, q4: str, d: DType) -> str:
    """cos(pi/2 * q4) for q4 >= 0: q4 = j + r with j the nearest integer (exact), the kernels'
    polynomials on r pi / 2 in [-pi/4, pi/4], turned by the quadrant j mod 4."""
    j = w.f("floor", w.add(q4, w.k(0.5, d)))
    y = w.mul(w.sub(q4, j), w.k(math.pi / 2, d))
    z = w.mul(y, y)
    sn, cs = (_SIN, _COS) if d is dt.float64 else (_SIN[:4], _COS[:5])
    sin = w.add(y, w.mul(w.mul(y, z), _poly(w, z, sn)))
    cos = w.sub(w.k(1.0, d), w.sub(w.mul(w.k(0.5, d), z), w.mul(w.mul(z, z), _poly(w, z, cs))))
    i32 = dt.int32
    q = w.f("and", w.cvt(j, i32), w.k(3, i32), d=i32)
    odd = w.cmp("NE", w.f("and", q, w.k(1, i32), d=i32), w.k(0, i32), i32)
    v = w.sel(odd, sin, cos)  # quadrants 0..3: cos, -sin, -cos, sin
    neg = w.either(w.cmp("EQ", q, w.k(1, i32), i32), w.cmp("EQ", q, w.k(2, i32), i32))
    return w.sel(neg, w.f("negate", v), v)


def _barrier(e: Emitter, x: str, shape: tuple, d: DType) -> str:
    """``x`` computed into a buffer of its own: XLA's CPU code for the generator's bits, fused
    into the float arithmetic that uses them, keeps that arithmetic from being vectorized
    (3-4x slower normals)."""
    return e.op("stablehlo.optimization_barrier", [x], tensor_type(shape, d))


def _lower_normal(e: Emitter, state: str, s: tuple, d: DType, algorithm: str) -> list[str]:
    """Box-Muller: a pair (u1, u2) gives r cos(2 pi u2) and r sin(2 pi u2), r =
    sqrt(-2 log u1). The pairs' two halves are rows 0 and 1 of a (2, h) array, each element
    computing its own (row 1 with the angle turned by 3/4: sin t = cos(t + 3 pi / 2)): one
    vectorized loop, where a concatenation would pick a branch per element."""
    size = math.prod(s)
    h = (size + 1) // 2
    ub = dt.uint64 if d is dt.float64 else dt.uint32
    state, bits = _bits(e, state, (2, h), ub, algorithm)
    bits = _barrier(e, bits, (2, h), ub)
    w = _W(e, (2, h), d)
    row = lambda i: bcast(e, _row(e, bits, (h,), i, ub), (h,), (2, h), ub)  # noqa: E731
    u1 = _unit(w, row(0), d, open_zero=True)
    u2 = _unit(w, row(1), d)
    lg = _log64(w, u1) if d is dt.float64 else w.log(u1)
    r = w.f("sqrt", w.mul(w.k(-2.0, d), lg))
    c = e.op("stablehlo.iota", [], w.t(d), "iota_dimension = 0 : i64")
    q4 = w.add(w.mul(u2, w.k(4.0, d)), w.mul(c, w.k(3.0, d)))
    z = e.op("stablehlo.reshape", [w.mul(r, _cos_turns(w, q4, d))], tensor_type((2 * h,), d))
    if 2 * h != size:
        z = e.op("stablehlo.slice", [z], tensor_type((size,), d),
                 f"start_indices = array<i64: 0>, limit_indices = array<i64: {size}>, "
                 f"strides = array<i64: 1>")
    return [state, e.op("stablehlo.reshape", [z], tensor_type(s, d))]


def _lower_gamma(e: Emitter, state: str, s: tuple, d: DType, alg: str, alpha: str) -> list[str]:
    w = _W(e, s)
    zero, one = w.k(0.0), w.k(1.0)
    valid = w.both(_finite(w, alpha), w.cmp("GE", alpha, zero))
    boost = w.cmp("LT", alpha, one)
    a = w.sel(boost, w.add(alpha, one), alpha)
    dd = w.sub(a, w.k(1.0 / 3.0))
    c = w.div(one, w.f("sqrt", w.mul(w.k(9.0), dd)))
    state, ctr = _keys(e, state, s, alg)
    ctr, (ub,) = _uniforms(w, ctr, 1, open_zero=True)
    done0 = w.either(w.no(valid), w.cmp("EQ", alpha, zero))
    val0 = w.sel(valid, zero, w.k(math.nan))
    tb, tf = tensor_type(s, dt.bool), tensor_type(s, dt.float64)

    def step(b: Emitter, v: list[str]) -> list[str]:
        done, val, st = v
        x = _W(b, s)
        st, (u1, u2, u3) = _uniforms(x, st, 3)
        u1 = x.sub(x.k(1.0), u1)  # (0, 1]
        z = x.mul(x.f("sqrt", x.mul(x.k(-2.0), x.log(u1))),
                  x.f("cosine", x.mul(u2, x.k(2 * math.pi))))
        v1 = x.add(x.k(1.0), x.mul(c, z))
        v3 = x.mul(x.mul(v1, v1), v1)
        pos = x.cmp("GT", v1, x.k(0.0))
        lu = x.log(x.sub(x.k(1.0), u3))  # log of (0, 1]
        z2 = x.mul(z, z)
        squeeze = x.cmp("LT", x.sub(x.k(1.0), u3),
                        x.sub(x.k(1.0), x.mul(x.k(0.0331), x.mul(z2, z2))))
        safe = x.sel(pos, v3, x.k(1.0))
        bound = x.add(x.mul(x.k(0.5), z2), x.mul(dd, x.add(x.sub(x.k(1.0), safe),
                                                           x.log(safe))))
        ok = x.both(pos, x.either(squeeze, x.cmp("LT", lu, bound)))
        take = x.both(ok, x.no(done))
        val = x.sel(take, x.mul(dd, safe), val)
        return [x.either(done, ok), val, st]

    tu = tensor_type(s, dt.uint64)
    done, val, _ = _loop(e, [(done0, tb), (val0, tf), (ctr, tu)], step)
    val = w.sel(done, val, w.k(math.nan))
    # a < 1: G(a + 1) * U ** (1 / a), as exp(log G + log U / a) (no underflow before the end)
    boosted = w.f("exponential", w.add(w.log(val), w.div(w.log(ub), alpha)))
    val = w.sel(w.both(boost, w.cmp("GT", alpha, zero)), boosted, val)
    if d is not dt.float64:
        val = w.cvt(val, d)
    return [state, val]


def _lower_poisson(e: Emitter, state: str, s: tuple, alg: str, lam: str) -> list[str]:
    w = _W(e, s)
    zero = w.k(0.0)
    valid = w.both(_finite(w, lam), w.cmp("GE", lam, zero))
    big = w.cmp("GE", lam, w.k(10.0))
    lam_s = w.sel(valid, lam, zero)  # (invalid: any value, masked)
    limit = w.f("exponential", w.f("negate", lam_s))
    slam = w.f("sqrt", lam_s)
    loglam = w.log(w.sel(big, lam_s, w.k(1.0)))
    b = w.add(w.k(0.931), w.mul(w.k(2.53), slam))
    a = w.add(w.k(-0.059), w.mul(w.k(0.02483), b))
    bb = w.sel(big, b, w.k(10.0))  # (small lam: keep the constants finite)
    log_invalpha = w.log(w.add(w.k(1.1239), w.div(w.k(1.1328), w.sub(bb, w.k(3.4)))))
    vr = w.sub(w.k(0.9277), w.div(w.k(3.6224), w.sub(bb, w.k(2.0))))
    done0 = w.either(w.no(valid), w.cmp("EQ", lam, zero))
    tb, tf = tensor_type(s, dt.bool), tensor_type(s, dt.float64)

    def step(c: Emitter, v: list[str]) -> list[str]:
        done, k, prod, st = v
        x = _W(c, s)
        st, (u, vv) = _uniforms(x, st, 2)
        # small lam: multiply uniforms until the product falls to exp(-lam)
        p2 = x.mul(prod, x.sub(x.k(1.0), u))
        stop = x.cmp("LE", p2, limit)
        ks = x.sel(stop, k, x.add(k, x.k(1.0)))
        # large lam: PTRS
        uu = x.sub(u, x.k(0.5))
        us = x.sub(x.k(0.5), x.f("abs", uu))
        us_safe = x.sel(x.cmp("GT", us, x.k(0.0)), us, x.k(0.25))
        kb = x.f("floor", x.add(x.mul(x.add(x.div(x.mul(x.k(2.0), a), us_safe), b), uu),
                               x.add(lam_s, x.k(0.43))))
        quick = x.both(x.cmp("GE", us, x.k(0.07)), x.cmp("LE", vv, vr))
        rej = x.either(x.cmp("LT", kb, x.k(0.0)),
                       x.both(x.cmp("LT", us, x.k(0.013)), x.cmp("GT", vv, us)))
        kpos = x.sel(x.cmp("LT", kb, x.k(0.0)), x.k(0.0), kb)
        lhs = x.sub(x.add(x.log(x.sel(x.cmp("GT", vv, x.k(0.0)), vv, x.k(2.0 ** -1000))),
                          log_invalpha),
                    x.log(x.add(x.div(a, x.mul(us_safe, us_safe)), b)))
        rhs = x.sub(x.add(x.f("negate", lam_s), x.mul(kpos, loglam)),
                    _loggam(x, x.add(kpos, x.k(1.0))))
        okb = x.either(quick, x.both(x.no(rej), x.cmp("LE", lhs, rhs)))
        ok = x.sel(big, okb, stop, d=dt.bool)
        knew = x.sel(big, kpos, ks)
        keep = x.either(done, x.both(big, x.no(okb)))  # k stays (done, or a rejected PTRS try)
        k = x.sel(keep, k, knew)
        prod = x.sel(done, prod, p2)
        return [x.either(done, ok), k, prod, st]

    state, ctr = _keys(e, state, s, alg)
    init = [(done0, tb), (zero, tf), (w.k(1.0), tf), (ctr, tensor_type(s, dt.uint64))]
    done, k, _, _ = _loop(e, init, step)
    k = w.sel(w.both(done, valid), k, w.k(-1.0))
    return [state, w.cvt(k, dt.int64)]


def _lower_binomial(e: Emitter, state: str, s: tuple, alg: str, n_: str, p_: str) -> list[str]:
    w = _W(e, s)
    zero, one, half = w.k(0.0), w.k(1.0), w.k(0.5)
    n = w.f("floor", n_)
    valid = w.both(w.both(_finite(w, n), w.cmp("GE", n, zero)),
                   w.both(w.cmp("GE", p_, zero), w.cmp("LE", p_, one)))
    flip = w.cmp("GT", p_, half)
    p = w.sel(valid, w.sel(flip, w.sub(one, p_), p_), zero)
    nn = w.sel(valid, n, zero)
    big = w.cmp("GE", w.mul(nn, p), w.k(10.0))
    lq = w.f("log_plus_one", w.f("negate", p))  # log(1 - p)
    lq_safe = w.sel(w.cmp("LT", lq, zero), lq, w.k(-1.0))
    # BTRS constants (only used where big: there n p q >= 5)
    bp = w.sel(big, p, half)
    bq = w.sub(one, bp)
    bn = w.sel(big, nn, w.k(100.0))
    spq = w.f("sqrt", w.mul(bn, w.mul(bp, bq)))
    b = w.add(w.k(1.15), w.mul(w.k(2.53), spq))
    a = w.add(w.add(w.k(-0.0873), w.mul(w.k(0.0248), b)), w.mul(w.k(0.01), bp))
    c = w.add(w.mul(bn, bp), half)
    vr = w.sub(w.k(0.92), w.div(w.k(4.2), b))
    alpha = w.mul(w.add(w.k(2.83), w.div(w.k(5.1), b)), spq)
    lpq = w.log(w.div(bp, bq))
    m = w.f("floor", w.mul(w.add(bn, one), bp))
    h = w.add(_loggam(w, w.add(m, one)), _loggam(w, w.add(w.sub(bn, m), one)))
    done0 = w.either(w.no(valid), w.either(w.cmp("EQ", p, zero), w.cmp("EQ", nn, zero)))
    tb, tf = tensor_type(s, dt.bool), tensor_type(s, dt.float64)

    def step(cc: Emitter, v: list[str]) -> list[str]:
        done, k, total, st = v
        x = _W(cc, s)
        st, (u, vv) = _uniforms(x, st, 2)
        # small n p: count the geometric waiting times that fit in n trials
        g = x.f("ceil", x.div(x.log(x.sub(x.k(1.0), u)), lq_safe))
        g = x.sel(x.cmp("LT", g, x.k(1.0)), x.k(1.0), g)
        t2 = x.add(total, g)
        stop = x.cmp("GT", t2, nn)
        ks = x.sel(stop, k, x.add(k, x.k(1.0)))
        # large n p: BTRS
        uu = x.sub(u, x.k(0.5))
        us = x.sub(x.k(0.5), x.f("abs", uu))
        us_safe = x.sel(x.cmp("GT", us, x.k(0.0)), us, x.k(0.25))
        kb = x.f("floor", x.add(x.mul(x.add(x.div(x.mul(x.k(2.0), a), us_safe), b), uu), c))
        out = x.either(x.cmp("LT", kb, x.k(0.0)), x.cmp("GT", kb, bn))
        quick = x.both(x.cmp("GE", us, x.k(0.07)), x.cmp("LE", vv, vr))
        kc = x.sel(out, x.k(0.0), kb)
        vpos = x.sel(x.cmp("GT", vv, x.k(0.0)), vv, x.k(2.0 ** -1000))
        lhs = x.log(x.div(x.mul(vpos, alpha), x.add(x.div(a, x.mul(us_safe, us_safe)), b)))
        rhs = x.add(x.sub(x.sub(h, _loggam(x, x.add(kc, x.k(1.0)))),
                          _loggam(x, x.add(x.sub(bn, kc), x.k(1.0)))),
                    x.mul(x.sub(kc, m), lpq))
        okb = x.both(x.no(out), x.either(quick, x.cmp("LE", lhs, rhs)))
        ok = x.sel(big, okb, stop, d=dt.bool)
        knew = x.sel(big, kc, ks)
        keep = x.either(done, x.both(big, x.no(okb)))
        k = x.sel(keep, k, knew)
        total = x.sel(done, total, t2)
        return [x.either(done, ok), k, total, st]

    state, ctr = _keys(e, state, s, alg)
    init = [(done0, tb), (zero, tf), (zero, tf), (ctr, tensor_type(s, dt.uint64))]
    done, k, _, _ = _loop(e, init, step)
    k = w.sel(flip, w.sub(nn, k), k)
    k = w.sel(w.both(done, valid), k, w.k(-1.0))
    return [state, w.cvt(k, dt.int64)]


def _lower(e: Emitter, node: Any, a: list) -> list[str]:
    dist, s, d, alg = node.attrs
    state = a[0]
    params = []
    for x, v in zip(node.inputs[1:], a[1:]):
        v = bcast(e, v, x.shape, s, x.dtype)
        params.append(e.op("stablehlo.convert", [v], tensor_type(s, dt.float64))
                      if x.dtype is not dt.float64 else v)
    if dist == "bits":
        return list(_bits(e, state, s, d, alg))
    if dist == "normal":
        return _lower_normal(e, state, s, d, alg)
    if dist in ("uniform", "exponential"):
        state, bits = _bits(e, state, s, dt.uint64 if d is dt.float64 else dt.uint32, alg)
        w = _W(e, s, d)
        if dist == "uniform":
            return [state, _unit(w, bits, d)]
        if d is dt.float64:
            u = _unit(w, _barrier(e, bits, s, dt.uint64), d, open_zero=True)
            return [state, w.f("negate", _log64(w, u))]
        return [state, w.f("negate", w.log(_unit(w, bits, d, open_zero=True)))]
    if dist == "gamma":
        return _lower_gamma(e, state, s, d, alg, params[0])
    if dist == "poisson":
        return _lower_poisson(e, state, s, alg, params[0])
    return _lower_binomial(e, state, s, alg, params[0], params[1])


define("random", _infer, _lower, nout=2, attrs=Random, results=_results)
