"""Bad input raises at the call that recorded it, with the exception type NumPy raises:
axes out of bounds (AxisError: both ValueError and IndexError), bad sizes (ValueError,
MemoryError), out-of-bounds integer indices (IndexError)."""

import numpy as np
import pytest

import xla_array as xp

X3 = np.arange(24.0).reshape(2, 3, 4)

AXIS_CALLS = {
    "sum": lambda x: xp.sum(x, axis=3),
    "mean": lambda x: xp.mean(x, axis=(0, -4)),
    "max": lambda x: xp.max(x, axis=5),
    "argmax": lambda x: xp.argmax(x, axis=3),
    "sort": lambda x: xp.sort(x, axis=3),
    "argsort": lambda x: xp.argsort(x, axis=-4),
    "cumulative_sum": lambda x: xp.cumulative_sum(x, axis=3),
    "concat": lambda x: xp.concat([x, x], axis=3),
    "stack": lambda x: xp.stack([x, x], axis=5),
    "expand_dims": lambda x: xp.expand_dims(x, axis=5),
    "squeeze": lambda x: xp.squeeze(x, axis=3),
    "flip": lambda x: xp.flip(x, axis=3),
    "roll": lambda x: xp.roll(x, 1, axis=3),
    "moveaxis": lambda x: xp.moveaxis(x, 3, 0),
    "permute_dims": lambda x: xp.permute_dims(x, (0, 1, 3)),
    "take": lambda x: xp.take(x, xp.asarray([0]), axis=3),
    "diff": lambda x: xp.diff(x, axis=3),
    "unstack": lambda x: xp.unstack(x, axis=3),
    "vector_norm": lambda x: xp.linalg.vector_norm(x, axis=3),
    "fft": lambda x: xp.fft.fft(x, axis=3),
}


@pytest.mark.parametrize("name", sorted(AXIS_CALLS))
def test_axis_out_of_bounds_is_numpy_axis_error(name):
    x = xp.asarray(X3)
    with pytest.raises(np.exceptions.AxisError) as info:
        AXIS_CALLS[name](x)
    assert isinstance(info.value, ValueError) and isinstance(info.value, IndexError)
    assert "out of bounds for array of dimension" in str(info.value)


def test_axis_error_wording_matches_numpy():
    with pytest.raises(ValueError, match="axis 10 is out of bounds for array of dimension 1"):
        xp.sum(xp.ones(3), axis=10)
    with pytest.raises(ValueError, match="axis 10 is out of bounds for array of dimension 1"):
        np.sum(np.ones(3), axis=10)


@pytest.mark.parametrize("make", [
    lambda: xp.eye(-2), lambda: xp.eye(2, -3), lambda: xp.zeros(-1), lambda: xp.ones((3, -1)),
    lambda: xp.full((-2,), 1.0), lambda: xp.linspace(0, 1, -1),
    lambda: xp.zeros(10**19), lambda: xp.empty((2**40, 2**40)),
    lambda: xp.ones((1,) * 65), lambda: xp.reshape(xp.ones(1), (1,) * 65),
    lambda: xp.broadcast_to(xp.ones(1), (10**10, 10**10)),
    lambda: xp.reshape(xp.ones(4), (2, -2)),
], ids=["eye-2", "eye2x-3", "zeros-1", "ones3x-1", "full-2", "linspace-1", "zeros1e19",
        "empty2^80", "ones65d", "reshape65d", "broadcast1e20", "reshape-2"])
def test_bad_sizes_raise_value_error_at_the_call(make):
    with pytest.raises(ValueError):
        make()


@pytest.mark.parametrize("make", [
    lambda: xp.zeros(10**12), lambda: xp.ones((10**6, 10**6)), lambda: xp.arange(10**13),
    lambda: xp.linspace(0, 1, 10**13), lambda: xp.eye(10**7), lambda: xp.full((2**40,), 1.0),
], ids=["zeros", "ones", "arange", "linspace", "eye", "full"])
def test_larger_than_the_device_raises_memory_error_at_the_call(make):
    with pytest.raises(MemoryError, match=r"needs \d+ bytes"):
        make()


def test_out_of_memory_while_running_is_a_memory_error_naming_the_line():
    x = xp.repeat(xp.ones(3), 10**12)  # the size is known only from repeat's counts
    with pytest.raises(MemoryError, match=r"test_bad_input.py:\d+.*cannot allocate \d+ bytes"):
        np.asarray(x[:2])


def test_64_dimensions_are_allowed():
    x = xp.ones((1,) * 64)
    assert x.ndim == 64 and float(xp.sum(x)) == 1.0


def test_axis_sequences_of_any_kind_are_read_as_numpy_reads_them():
    """A list of axes was taken as one axis by moveaxis/roll/expand_dims."""
    a = X3
    x = xp.asarray(a)
    cases = [
        (xp.moveaxis(x, [0, 1], (-2, -1)), np.moveaxis(a, [0, 1], (-2, -1))),
        (xp.moveaxis(x, np.array([0, 2]), [2, 0]), np.moveaxis(a, [0, 2], [2, 0])),
        (xp.roll(x, [1, 2], axis=[0, 2]), np.roll(a, [1, 2], axis=[0, 2])),
        (xp.expand_dims(x, axis=[0, 4]), np.expand_dims(a, axis=[0, 4])),
        (xp.sum(x, axis=[0, 2]), np.sum(a, axis=(0, 2))),
    ]
    for got, want in cases:
        assert got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), want)
    with pytest.raises(TypeError, match="sequence of ints"):
        xp.moveaxis(x, "ab", 0)
    with pytest.raises(TypeError):
        xp.roll(x, 1.5, axis=0)


def test_out_of_bounds_indices_into_empty_arrays_raise():
    """Found by the fuzzer: an empty result skipped the bounds check."""
    with pytest.raises(IndexError, match="size 0"):
        xp.zeros(0)[xp.asarray([0])]
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        xp.take(xp.zeros((3, 0)), xp.asarray([3]), axis=0)
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        np.asarray(xp.zeros((3, 0))[xp.asarray([5]) * 1])
    assert np.asarray(xp.zeros((3, 0))[xp.asarray([2]) * 1]).shape == (1, 0)


def test_max_norms_of_empty_arrays_are_zero():
    """Found by the fuzzer: a max over no elements raised where NumPy's norms give 0."""
    inf = float("inf")
    cases = [(xp.linalg.vector_norm(xp.zeros((2, 0)), ord=inf, axis=1),
              np.linalg.norm(np.zeros((2, 0)), ord=np.inf, axis=1)),
             (xp.linalg.matrix_norm(xp.zeros((0, 4)), ord=inf), 0.0),
             (xp.linalg.matrix_norm(xp.zeros((4, 0)), ord=1), 0.0),
             (xp.linalg.matrix_norm(xp.zeros((4, 0)), ord=2), 0.0)]
    for got, want in cases:
        np.testing.assert_array_equal(np.asarray(got), want)
