"""Views made by whole-array transforms write through to their base as NumPy's do: ``.T``,
``permute_dims``, ``moveaxis``, ``swapaxes``, ``flip``, ``expand_dims``, ``squeeze``, and a
``reshape`` NumPy can do without a copy (decided by NumPy's rule on a model of the strides).
Each case runs on NumPy and on xla_array and the bases must end equal."""

from typing import Any

import numpy as np
import pytest

import xla_array as xp


def _cases() -> list:
    def t_write(x: Any, m: Any) -> None:
        x.T[0, 1] = 100.0

    def permute(x: Any, m: Any) -> None:
        v = m.permute_dims(x, (1, 0))
        v[2] = -1.0

    def moveaxis_then_inplace(x: Any, m: Any) -> None:
        v = m.moveaxis(x, 0, -1)
        v[..., 0] *= 2

    def reshape_is_a_view(x: Any, m: Any) -> None:
        v = m.reshape(x, (12,))
        v[3:5] = 7.0

    def reshape_of_transpose_is_a_copy(x: Any, m: Any) -> None:
        v = m.reshape(x.T, (12,))
        v[0] = 99.0

    def unpacked_reshape_of_a_temporary(x: Any, m: Any) -> None:  # SciPy's tanhsinh
        a, b, c = m.reshape(x, (3, 2, 2))
        b[1, 1] = 5.0
        c += 1

    def unpacked_reshape_of_transpose(x: Any, m: Any) -> None:  # a copy: nothing reaches x
        a, b = m.reshape(x.T, (2, 2, 3))
        a[0, 0] = 5.0

    def flip(x: Any, m: Any) -> None:
        v = m.flip(x, axis=0)
        v[0, 0] = -3.0

    def expand_then_squeeze(x: Any, m: Any) -> None:
        v = m.expand_dims(x, axis=0)
        v[0, 1, 1] = 42.0
        w = m.squeeze(v, axis=0)
        w[2, 2] = 8.0

    def slice_then_transpose(x: Any, m: Any) -> None:
        v = x[1:, ::2].T
        v[0, 0] = 11.0

    def transpose_of_slice_inplace(x: Any, m: Any) -> None:
        v = x[:2].T
        v += 1

    def reshape_of_strided_slice_is_a_copy(x: Any, m: Any) -> None:
        v = m.reshape(x[:, ::2], (6,))
        v[0] = 1234.0

    def stale_transpose(x: Any, m: Any) -> None:
        v = x.T
        x[0, 0] = 50.0
        v[1, 0] = 60.0

    def methods(x: Any, m: Any) -> None:
        x.reshape(4, 3)[0, 0] = 17.0
        x.transpose()[1, 0] = 18.0
        x.swapaxes(0, 1)[2, 0] = 19.0
        x.ravel()[-1] = 20.0
        x.reshape(6, 2, order="F")[1, 1] = 21.0
        x.mT[3, 2] = 22.0

    def flatten_copies(x: Any, m: Any) -> None:
        x.flatten()[0] = 777.0
        x.flatten(order="F")[1] = 778.0

    def numpy_writes_into_a_transpose(x: Any, m: Any) -> None:
        np.asarray(x.T)[0, 2] = 31.0

    return [v for v in locals().values()]


@pytest.mark.parametrize("case", _cases(), ids=lambda f: f.__name__)
def test_transform_views_write_through_as_numpy(case: Any) -> None:
    a = np.arange(12.0).reshape(3, 4)
    x = xp.asarray(a)
    case(a, np)
    case(x, xp)
    np.testing.assert_array_equal(np.asarray(x), a)


def test_reshape_copy_false_raises_where_numpy_would_copy() -> None:
    x = xp.asarray(np.arange(12.0).reshape(3, 4))
    with pytest.raises(ValueError, match="without a copy"):
        xp.reshape(x.T, (12,), copy=False)
    v = xp.reshape(x, (12,), copy=False)  # contiguous: a view
    v[0] = -1.0
    assert float(x[0, 0]) == -1.0
    c = xp.reshape(x, (12,), copy=True)  # never a view
    c[1] = -2.0
    assert float(x[0, 1]) == 1.0


def test_views_deeper_than_the_limit_are_copies() -> None:
    from xla_array.api.views import MAX_DEPTH

    a = np.arange(6.0).reshape(2, 3)
    x = xp.asarray(a)
    v = x
    for _ in range(MAX_DEPTH):
        v = v.T
    v[0, 0] = 5.0  # at the limit: still a view
    assert float(x[0, 0]) == 5.0
    w = v.T  # one more: a copy
    w[0, 0] = 6.0
    assert float(x[0, 0]) == 5.0


def test_a_write_through_nine_levels_of_views_reaches_the_base() -> None:
    """SciPy's oaconvolve splits with swapaxes / slice / swapaxes twice and adds into the
    innermost view (nine levels): with a limit of 8 the last level was a copy and the sum was
    lost (TestOAConvolve: wrong values)."""
    def split(x: Any, idx: list, axis: int, m: Any) -> list:
        pts = [0, *idx, x.shape[axis]]
        s = m.swapaxes(x, axis, 0) if m is np else xp.moveaxis(x, axis, 0) if axis == 0 else \
            xp.permute_dims(x, (axis, *range(1, axis), 0, *range(axis + 1, x.ndim)))
        out = []
        for i in range(len(pts) - 1):
            piece = s[pts[i]:pts[i + 1], ...]
            out.append(m.swapaxes(piece, axis, 0) if m is np else xp.permute_dims(
                piece, (axis, *range(1, axis), 0, *range(axis + 1, piece.ndim))) if axis else
                xp.moveaxis(piece, 0, 0))
        return out

    base = np.random.default_rng(0).random((3, 4))
    results = []
    for m, arr in ((np, base.copy()), (xp, xp.asarray(base))):
        ret, over = split(arr, [-2], 1, m)
        over = split(over, [-1], 0, m)[0]
        part = split(split(ret, [2], 1, m)[0], [1], 0, m)[1]
        part += over
        results.append(np.asarray(m.reshape(ret, (-1,))))
    np.testing.assert_array_equal(results[1], results[0])


def _shared_cases() -> list:
    def transpose_taken_before_a_write_through_a_sibling(x: Any, m: Any) -> Any:
        t = x.T  # SciPy's tanhsinh: fj.T, then writes through a reshape of it, then reads fj.T
        a, b = m.reshape(x, (2, 6))
        b[0] = -1.0
        return t

    def row_view_sees_a_write_into_the_base(x: Any, m: Any) -> Any:
        r = x[1]
        x[1, 2] = 40.0
        return r

    def sibling_slices(x: Any, m: Any) -> Any:
        left, right = x[:, :2], x[:, 1:]
        left[:, 1] = 9.0
        return right

    def view_of_view_after_inplace_base(x: Any, m: Any) -> Any:
        v = m.flip(x[1:], axis=1)
        x += 1
        return v

    return [v for v in locals().values()]


@pytest.mark.parametrize("case", _shared_cases(), ids=lambda f: f.__name__)
def test_views_see_writes_made_through_their_base_as_numpy(case: Any) -> None:
    """NumPy's views share memory: a view read after a write into its base, or through a
    sibling view, has the written values."""
    a = np.arange(12.0).reshape(3, 4)
    x = xp.asarray(a)
    want = case(a, np)
    got = case(x, xp)
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(x), a)
