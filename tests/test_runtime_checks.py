"""Errors that only the values can tell, raised as NumPy raises them, when the graph runs:
``LinAlgError`` from LAPACK's info (a singular matrix, one not positive definite, an SVD or
eigensolver that did not converge) and the ValueError of an integer power with a negative
exponent. Each names the line that recorded the call; compiled graphs (the suite's
host_first=check mode), the host tier, ``xp.jit`` and serialized functions raise alike."""

import sys

import numpy as np
import pytest

import xla_array as xp
import xla_array.linalg as LA

GOOD = np.array([[4.0, 1, 0], [1, 3, 1], [0, 1, 2]])  # positive definite
SING = np.array([[1.0, 2, 3], [2, 4, 6], [1, 1, 1]])  # rank 2
NOT_PD = -GOOD
NANM = GOOD.copy()
NANM[1, 1] = np.nan
B = np.arange(3.0)


def _line():
    """The caller's line number (to compare with the one an error names)."""
    return sys._getframe(1).f_lineno


def _called_at(fn, line):
    """The line that calls xla_array when ``fn`` is called at ``line``: a lambda's own."""
    return fn.__code__.co_firstlineno if fn.__name__ == "<lambda>" else line


def _numpy_message(fn, *args):
    with pytest.raises(np.linalg.LinAlgError) as err:
        fn(*args)
    return str(err.value)


def _raises_at(y, line, message):
    """Materializing ``y`` (or calling it: a jitted function's call runs it) raises
    LinAlgError with NumPy's ``message``, naming ``line``."""
    with pytest.raises(xp.linalg.LinAlgError) as err:
        np.asarray(y() if callable(y) else y)
    text = str(err.value)
    assert text.startswith(message + " ("), text
    assert f"{__file__}:{line})" in text, text
    assert isinstance(err.value, np.linalg.LinAlgError)


# (xla_array's call, NumPy's, the matrix)
LU_CASES = {
    "solve": (lambda a: LA.solve(a, xp.asarray(B)), lambda a: np.linalg.solve(a, B), SING),
    "inv": (LA.inv, np.linalg.inv, SING),
    "matrix_power": (lambda a: LA.matrix_power(a, -2),
                     lambda a: np.linalg.matrix_power(a, -2), SING),
    "cholesky": (LA.cholesky, np.linalg.cholesky, NOT_PD),
    "cholesky_upper": (lambda a: LA.cholesky(a, upper=True), np.linalg.cholesky, SING),
    "svd": (lambda a: LA.svd(a)[1], np.linalg.svd, NANM),
    "svdvals": (LA.svdvals, np.linalg.svdvals, NANM),
    "pinv": (LA.pinv, np.linalg.pinv, NANM),
    "matrix_rank": (LA.matrix_rank, np.linalg.matrix_rank, NANM),
    "matrix_norm_2": (lambda a: LA.matrix_norm(a, ord=2),
                      lambda a: np.linalg.matrix_norm(a, ord=2), NANM),
    "eigh": (lambda a: LA.eigh(a)[1], np.linalg.eigh, NANM),
    "eigvalsh": (LA.eigvalsh, np.linalg.eigvalsh, NANM),
    "eig": (lambda a: LA.eig(a)[0], np.linalg.eig, NANM),
    "eigvals": (LA.eigvals, np.linalg.eigvals, NANM),
}


@pytest.mark.parametrize("name", sorted(LU_CASES))
def test_a_failed_matrix_raises_numpys_linalgerror_at_the_recording_line(name):
    fn, np_fn, a = LU_CASES[name]
    message = _numpy_message(np_fn, a)
    y, line = fn(xp.asarray(a)), _line()
    assert y.is_pending  # (recording raised nothing, computed nothing)
    _raises_at(y, _called_at(fn, line), message)
    try:  # the pending result raises again, and NumPy's class catches it
        float(xp.sum(xp.abs(y)))
    except np.linalg.LinAlgError as e:
        assert str(e).startswith(message)
    else:
        raise AssertionError("no LinAlgError")


@pytest.mark.parametrize("name", ["solve", "inv", "cholesky", "svd", "eig"])
def test_one_failed_matrix_of_a_stack_raises_and_a_good_stack_computes(name):
    fn, np_fn, bad = LU_CASES[name]
    good = np.stack([GOOD, 2 * GOOD])
    got, want = np.asarray(fn(xp.asarray(good))), np_fn(good)
    if name in ("svd", "eig"):  # (the values: S, or the eigenvalues in ascending order)
        got, want = np.sort(got.real, axis=-1), np.sort(want[name == "svd"].real, axis=-1)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    stack = np.stack([GOOD, bad])
    message = _numpy_message(np_fn, stack)
    y, line = fn(xp.asarray(stack)), _line()
    _raises_at(y, _called_at(fn, line), message)


def test_what_numpy_answers_without_raising():
    """det and slogdet of a singular matrix (0, and (0, -inf)), qr of one holding a NaN."""
    s = xp.asarray(SING)
    assert float(LA.det(s)) == 0 and float(LA.slogdet(s).logabsdet) == -np.inf
    assert np.isnan(np.asarray(LA.qr(xp.asarray(NANM)).R)).any()


def test_siblings_of_a_failed_decomposition_raise_too():
    """Computing one result of svd or eigh checks the call; its siblings written back then
    (U, Vt) raise too, nothing computed twice; a good call's siblings hold their values."""
    u, s, vt = LA.svd(xp.asarray(np.stack([GOOD, NANM])))
    line = _line() - 1
    _raises_at(s, line, "SVD did not converge")
    _raises_at(u, line, "SVD did not converge")
    w, v = LA.eigh(xp.asarray(GOOD))
    assert float(w[0]) == pytest.approx(np.linalg.eigvalsh(GOOD)[0])
    with pytest.raises(ValueError, match="holds its value already"):
        xp.debug.mlir(v)


def test_the_setting_off_gives_nan_as_before():
    with xp.flags.using(linalg_errors=False):
        ys = [LA.solve(xp.asarray(SING), xp.asarray(B)), LA.inv(xp.asarray(SING)),
              LA.cholesky(xp.asarray(NOT_PD)), LA.svd(xp.asarray(NANM))[0],
              LA.eig(xp.asarray(NANM))[1], LA.pinv(xp.asarray(NANM))]
    for y in ys:  # (read when recorded: computed with the setting on again)
        assert np.isnan(np.asarray(y)).all()
    assert xp.flags.get("linalg_errors") is True


def test_jit_and_serialized_functions_raise(tmp_path):
    def f(a, b):
        return LA.solve(a, b) * 2.0
    line = _line() - 1
    jf = xp.jit(f)
    a, b = xp.asarray(GOOD), xp.asarray(B)
    np.testing.assert_allclose(np.asarray(jf(a, b)), 2 * np.linalg.solve(GOOD, B))
    _raises_at(lambda: jf(xp.asarray(SING), b), line, "Singular matrix")
    loaded = xp.deserialize(xp.compile(f, a, b).serialize())
    np.testing.assert_allclose(np.asarray(loaded(a, b)), 2 * np.linalg.solve(GOOD, B))
    _raises_at(lambda: loaded(xp.asarray(SING), b), line, "Singular matrix")


@pytest.mark.usefixtures("on_cpu")
def test_the_host_tier_raises_the_same(metrics):
    """A structure met the first time runs on the host (LAPACK through SciPy's wrappers):
    it raises as the compiled graph does (5 x 5: a shape of this test only)."""
    sing = np.ones((5, 5))
    with xp.flags.using(host_first=True, host_first_budget=3600.0):
        y, line = LA.solve(xp.asarray(sing), xp.ones((5, 2))), _line()
        _raises_at(y, line, _numpy_message(np.linalg.solve, sing, np.ones((5, 2))))
        _raises_at(LA.cholesky(xp.asarray(-np.eye(5))), _line(), "Matrix is not positive "
                   "definite")
        good = np.eye(5) * 2 + 0.5
        np.testing.assert_allclose(np.asarray(LA.solve(xp.asarray(good), xp.ones((5, 2)))),
                                   np.linalg.solve(good, np.ones((5, 2))), rtol=1e-13)
    m = metrics()  # (nothing compiled: the host raised; a run that raises is not counted)
    assert (m["host_runs"], m["compiles"]) == (1, 0), m


# ---------------------------------------------------------------- integer powers

NEG = "Integers to negative integer powers are not allowed."


def test_integer_power_with_a_known_negative_exponent_raises_at_the_call():
    x = xp.asarray([2, 3])
    with pytest.raises(ValueError) as np_err:
        np.array([2, 3]) ** np.array([-1, 2])
    assert str(np_err.value) == NEG
    for call in (lambda: x ** xp.asarray([-1, 2]), lambda: x ** -1, lambda: xp.pow(x, -3),
                 lambda: 2 ** xp.asarray([-1, 2]), lambda: x ** np.array([1, -2]),
                 lambda: xp.asarray([True]) ** -1):
        with pytest.raises(ValueError, match=f"^{NEG}$"):
            call()
    # what NumPy computes: float powers, empty results, non-negative exponents
    np.testing.assert_array_equal(np.asarray(xp.asarray([2.0, 4.0]) ** xp.asarray([-1, 2])),
                                  [0.5, 16.0])
    assert (xp.zeros(0, dtype=xp.int64) ** -1).shape == (0,)
    np.testing.assert_array_equal(np.asarray(x ** xp.asarray([0, 2])), [1, 9])
    with pytest.raises(OverflowError):  # (NumPy's too: -1 is no uint8)
        xp.asarray([2], dtype=xp.uint8) ** -1


def test_integer_power_with_a_pending_negative_exponent_raises_when_computed():
    x = xp.asarray([2, 3])
    e = xp.asarray([-1, 2]) * 1  # pending
    y, line = x ** e, _line()
    assert y.is_pending
    with pytest.raises(ValueError) as err:
        np.asarray(y)
    assert str(err.value) == f"{NEG} (pow recorded at {__file__}:{line})"
    ok = xp.asarray([1, 2]) * 1
    np.testing.assert_array_equal(np.asarray(x ** ok), np.array([2, 3]) ** np.array([1, 2]))
    jf = xp.jit(lambda a, b: a ** b)
    np.testing.assert_array_equal(np.asarray(jf(x, xp.asarray([1, 2]))), [2, 9])
    with pytest.raises(ValueError, match=NEG):
        np.asarray(jf(x, xp.asarray([-1, 2])))
    with pytest.raises(ValueError, match=NEG):  # a traced Python int
        np.asarray(xp.jit(lambda a, k: a ** k)(x, -1))
