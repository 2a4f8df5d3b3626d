"""Manipulation functions against NumPy: shapes and values for random shapes and axes, dtype
preservation/promotion, and the standard's errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xla_array as xp

SHAPES = [(), (0,), (4,), (2, 3), (1, 3), (2, 1, 4), (0, 2)]
DTYPES = [xp.bool, xp.int8, xp.uint32, xp.float32, xp.float64, xp.complex64]


def arr(shape, d=xp.float64) -> np.ndarray:
    a = np.arange(math.prod(shape)).reshape(shape)
    return (a % 2).astype(bool) if d is xp.bool else (a + 1).astype(d.np)


def same(x: xp.Array, want: np.ndarray) -> None:
    assert x.shape == want.shape and x.dtype.name == want.dtype.name, (x.shape, x.dtype, want)
    np.testing.assert_array_equal(np.asarray(x), want)


@settings(max_examples=25)
@given(shape=st.sampled_from(SHAPES), d=st.sampled_from(DTYPES), data=st.data())
def test_reshape(shape, d, data):
    a = arr(shape, d)
    n = a.size
    divisors = [k for k in range(1, n + 1) if n % k == 0] or [1]
    k = data.draw(st.sampled_from(divisors))
    target = data.draw(st.sampled_from([(n,), (k, n // k), (-1,), (k, -1), (1, -1, 1)]))
    try:
        want = a.reshape(target)
    except ValueError:
        with pytest.raises(ValueError):
            xp.reshape(xp.asarray(a), target)
        return
    copy = data.draw(st.sampled_from([None, True, False]))
    same(xp.reshape(xp.asarray(a), target, copy=copy), want)


def test_reshape_errors():
    x = xp.ones((2, 3))
    with pytest.raises(ValueError):
        xp.reshape(x, (4, 2))
    with pytest.raises(ValueError):
        xp.reshape(x, (-1, -1))
    with pytest.raises(ValueError):
        xp.reshape(x, (-2, 3))
    with pytest.raises(TypeError):
        xp.reshape([1.0, 2.0, 3.0], (3,))  # a list is no array (a NumPy array is converted)
    same(xp.reshape(np.ones(3), (3, 1)), np.ones((3, 1)))


@settings(max_examples=20)
@given(shape=st.sampled_from([s for s in SHAPES if s]), data=st.data())
def test_permute_dims_moveaxis_flip_roll(shape, data):
    a = arr(shape)
    x = xp.asarray(a)
    perm = tuple(data.draw(st.permutations(range(a.ndim))))
    same(xp.permute_dims(x, perm), np.transpose(a, perm))
    src = data.draw(st.integers(-a.ndim, a.ndim - 1))
    dst = data.draw(st.integers(-a.ndim, a.ndim - 1))
    same(xp.moveaxis(x, src, dst), np.moveaxis(a, src, dst))
    if a.ndim >= 2:
        same(xp.moveaxis(x, (0, 1), (-1, 0)), np.moveaxis(a, (0, 1), (-1, 0)))
    ax = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
    same(xp.flip(x, axis=ax), np.flip(a, axis=ax))
    shift = data.draw(st.integers(-7, 7))
    same(xp.roll(x, shift, axis=ax), np.roll(a, shift, axis=ax))
    if a.ndim >= 2:
        same(xp.roll(x, (1, -2), axis=(0, 1)), np.roll(a, (1, -2), axis=(0, 1)))
        same(xp.roll(x, 3, axis=(0, -1)), np.roll(a, 3, axis=(0, -1)))
        same(xp.flip(x, axis=(0, -1)), np.flip(a, axis=(0, -1)))


def test_axis_errors():
    x = xp.ones((2, 3))
    with pytest.raises(ValueError):
        xp.permute_dims(x, (0, 0))
    with pytest.raises((ValueError, IndexError)):
        xp.permute_dims(x, (0,))
    with pytest.raises(IndexError):
        xp.flip(x, axis=2)
    with pytest.raises(IndexError):
        xp.roll(x, 1, axis=-3)
    with pytest.raises(ValueError):
        xp.roll(x, (1, 2), axis=(0,))
    with pytest.raises(ValueError):
        xp.moveaxis(x, (0, 0), (0, 1))
    with pytest.raises(IndexError):
        xp.moveaxis(x, 2, 0)


@pytest.mark.parametrize("src, shape", [((3,), (2, 3)), ((1, 3), (4, 3)), ((), (2, 2)),
                                        ((2, 1), (2, 2, 5)), ((0,), (3, 0)), ((1,), (0,))])
def test_broadcast_to_arrays_shapes(src, shape):
    a = arr(src)
    same(xp.broadcast_to(xp.asarray(a), shape), np.broadcast_to(a, shape))
    b = arr(shape, xp.int8)
    got = xp.broadcast_arrays(xp.asarray(a), xp.asarray(b))
    want = np.broadcast_arrays(a, b)
    for g, w in zip(got, want):
        same(g, w)
    assert xp.broadcast_shapes(src, shape) == np.broadcast_shapes(src, shape)


def test_broadcast_errors():
    with pytest.raises(ValueError):
        xp.broadcast_to(xp.ones(3), (4,))
    with pytest.raises(ValueError):
        xp.broadcast_to(xp.ones((2, 3)), (3,))
    with pytest.raises(ValueError):
        xp.broadcast_arrays(xp.ones(3), xp.ones(2))
    with pytest.raises(ValueError):
        xp.broadcast_shapes((2,), (3,))
    assert xp.broadcast_shapes() == ()
    assert xp.broadcast_shapes((5, 1, 4), (3, 1), (4,)) == (5, 3, 4)


@pytest.mark.parametrize("shape, axis", [((), 0), ((3,), 0), ((3,), 1), ((3,), -1),
                                         ((2, 3), (0, 2)), ((2, 3), (-1, 0)), ((0,), 1)])
def test_expand_dims_squeeze(shape, axis):
    a = arr(shape)
    e = xp.expand_dims(xp.asarray(a), axis=axis)
    same(e, np.expand_dims(a, axis))
    same(xp.squeeze(e, axis=axis), a)


def test_expand_dims_squeeze_errors():
    with pytest.raises(IndexError):
        xp.expand_dims(xp.ones(3), axis=3)
    with pytest.raises(ValueError):
        xp.expand_dims(xp.ones(3), axis=(0, 0))
    with pytest.raises(ValueError):
        xp.squeeze(xp.ones((2, 1)), axis=0)
    with pytest.raises(IndexError):
        xp.squeeze(xp.ones((2, 1)), axis=2)


@settings(max_examples=20)
@given(shape=st.sampled_from([(3,), (2, 3), (1, 2, 2), (0, 3)]),
       dts=st.lists(st.sampled_from([xp.int8, xp.int32, xp.float32, xp.float64]), min_size=1,
                    max_size=3), data=st.data())
def test_concat_and_stack(shape, dts, data):
    ax = data.draw(st.integers(-len(shape), len(shape) - 1))
    arrays = []
    for i, d in enumerate(dts):
        s = list(shape)
        s[ax] = data.draw(st.integers(0, 3))
        arrays.append(arr(tuple(s), d) * (i + 1))
    got = xp.concat([xp.asarray(a) for a in arrays], axis=ax)
    same(got, np.concat(arrays, axis=ax))
    same(xp.concat([xp.asarray(a) for a in arrays], axis=None),
         np.concat([a.ravel() for a in arrays]))
    eq = [arr(shape, d) for d in dts]
    sax = data.draw(st.integers(-len(shape) - 1, len(shape)))
    same(xp.stack([xp.asarray(a) for a in eq], axis=sax), np.stack(eq, axis=sax))
    assert got.dtype.name == np.result_type(*[a.dtype for a in arrays]).name


def test_concat_stack_errors():
    with pytest.raises(ValueError):
        xp.concat([xp.ones((2, 3)), xp.ones((2, 4))], axis=0)
    with pytest.raises(ValueError):
        xp.concat([xp.ones(()), xp.ones(())])
    with pytest.raises(ValueError):
        xp.concat([])
    with pytest.raises(IndexError):
        xp.concat([xp.ones(3)], axis=1)
    with pytest.raises(ValueError):
        xp.stack([xp.ones(3), xp.ones(2)])
    same(xp.concat([xp.ones(2, dtype=xp.int8)]), np.ones(2, dtype=np.int8))
    same(xp.concat((xp.asarray([True]), xp.asarray([False]))), np.array([True, False]))


@pytest.mark.parametrize("shape, reps", [((3,), (2,)), ((2, 3), (2, 1)), ((2, 3), (3,)),
                                         ((3,), (2, 2)), ((), (3,)), ((2, 0), (2, 2)),
                                         ((2, 3), (0, 1)), ((2,), ())])
def test_tile(shape, reps):
    a = arr(shape, xp.int32)
    same(xp.tile(xp.asarray(a), reps), np.tile(a, reps))


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 0), (1, 2, 3)])
def test_unstack(shape):
    a = arr(shape, xp.complex64)
    for axis in range(-len(shape), len(shape)):
        got = xp.unstack(xp.asarray(a), axis=axis)
        want = [np.take(a, i, axis=axis) for i in range(a.shape[axis])]
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
    with pytest.raises(ValueError):
        xp.unstack(xp.ones(()))


@pytest.mark.parametrize("shape, repeats, axis", [
    ((2, 3), 2, None), ((2, 3), 3, 1), ((2, 3), 0, 0), ((4,), 1, 0), ((), 3, None),
    ((2, 3), [1, 0, 2], 1), ((2, 3), [2], 0), ((2, 3), [0, 3], -2), ((0, 2), 2, 0),
])
def test_repeat(shape, repeats, axis):
    a = arr(shape, xp.float32)
    r = xp.asarray(np.array(repeats)) if isinstance(repeats, list) else repeats
    same(xp.repeat(xp.asarray(a), r, axis=axis), np.repeat(a, repeats, axis=axis))


def test_repeat_errors():
    x = xp.ones((2, 3))
    with pytest.raises(ValueError):
        xp.repeat(x, -1)
    with pytest.raises(ValueError):
        xp.repeat(x, xp.asarray([1, 2]), axis=1)
    with pytest.raises(TypeError):
        xp.repeat(x, xp.asarray([1.0, 2.0, 3.0]), axis=1)
    with pytest.raises(IndexError):
        xp.repeat(x, 2, axis=2)
