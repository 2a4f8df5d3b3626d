"""np.asarray(x) as NumPy code writes into it: the writes reach x when the NumPy array is
released (xla_array/_host.py HostCopy), so SciPy's ndimage output= arrays, Cython buffers and
ufunc out= work as with NumPy arrays."""

import gc
import threading

import numpy as np
import pytest

import xla_array as xp

scipy_ndimage = pytest.importorskip("scipy.ndimage")


def test_writes_reach_the_array_when_released():
    x = xp.arange(5.0)
    h = np.asarray(x)
    h[1] = 100.0
    np.testing.assert_array_equal(np.asarray(x), np.arange(5.0))  # not yet: h is alive
    del h
    np.testing.assert_array_equal(np.asarray(x), [0.0, 100.0, 2.0, 3.0, 4.0])


def test_unwritten_copies_leave_the_array_alone():
    x = xp.arange(4.0) * 2
    node = x._node
    np.asarray(x).sum()
    assert x._node is node
    h = np.asarray(x)
    h[0] = 5.0
    h[0] = 0.0  # written back to what it was: nothing to do
    del h
    assert x._node is node


def test_ndimage_output_arrays_are_filled():
    a = xp.asarray([[1.0, 2, 3], [4, 5, 6]])
    out = xp.zeros((2, 3), dtype=xp.float32)
    scipy_ndimage.correlate(a, xp.asarray([[1.0, 0], [0, 1]]), output=out)
    np.testing.assert_array_equal(np.asarray(out), [[2, 3, 5], [5, 6, 8]])
    assert out.dtype == xp.float32
    b = xp.reshape(xp.arange(16.0), (4, 4))  # output overlapping the input
    scipy_ndimage.correlate1d(b, xp.asarray([2.0]), output=b)
    np.testing.assert_array_equal(np.asarray(b), 2 * np.arange(16.0).reshape(4, 4))


def test_writes_into_a_view_reach_its_base():
    b = xp.zeros((3, 3))
    np.copyto(np.asarray(b[1]), 7.0)
    want = np.zeros((3, 3))
    want[1] = 7.0
    np.testing.assert_array_equal(np.asarray(b), want)


def test_zero_d_and_ints():
    z = xp.asarray(1.5)
    h = np.asarray(z)
    h[()] = 2.0
    del h
    assert float(z) == 2.0
    i = xp.asarray([1, 2, 3], dtype=xp.int16)
    np.asarray(i)[:] = [7, 8, 9]
    np.testing.assert_array_equal(np.asarray(i), [7, 8, 9])
    assert i.dtype == xp.int16


def test_writes_after_a_change_of_the_array_land_on_its_current_value():
    """As into shared memory: the elements NumPy wrote take their new values, the others keep
    the array's current ones (here changed after np.asarray was taken)."""
    x = xp.arange(3.0)
    h = np.asarray(x)
    h[0] = 9.0
    x += 1
    del h
    gc.collect()
    np.testing.assert_array_equal(np.asarray(x), [9.0, 2.0, 3.0])


def test_writes_into_sibling_views_from_threads_all_land():
    """SciPy's ndimage threading test: threads fill out[i] through np.asarray(out[i])."""
    out = xp.zeros((4, 1000))

    def fill(i):
        h = np.asarray(out[i])
        h[:] = i + 1.0
        del h

    threads = [threading.Thread(target=fill, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    gc.collect()
    np.testing.assert_array_equal(np.asarray(out), np.repeat(np.arange(1.0, 5.0)[:, None],
                                                             1000, axis=1))


def test_a_change_of_shape_drops_the_writes_with_a_warning():
    x = xp.arange(3.0)
    h = np.asarray(x)
    h[0] = 9.0
    x._rebind(xp.arange(4.0)._node)  # (no public operation changes an array's shape in place)
    with pytest.warns(RuntimeWarning, match="changed shape or dtype"):
        del h
        gc.collect()
    np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0, 3.0])


def test_copies_and_read_only_views_are_not_tracked():
    x = xp.arange(3.0)
    c = np.array(x)  # copy=True: an independent copy, as np.array of a NumPy array
    c[0] = 5.0
    del c
    v = np.asarray(x, copy=False)
    assert not v.flags.writeable
    f = np.asarray(x, dtype=np.float32)  # a conversion is a new array
    f[0] = 5.0
    del f
    np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0])


def test_ufunc_out_arrays():
    y = xp.zeros(3)
    assert np.add(np.ones(3), 2.0, out=y) is y
    np.testing.assert_array_equal(np.asarray(y), [3.0, 3.0, 3.0])
    q, r = xp.zeros(3), xp.zeros(3)
    assert np.divmod(np.arange(3.0) + 5, 2, out=(q, r)) == (q, r)
    np.testing.assert_array_equal(np.asarray(q), [2.0, 3.0, 3.0])
    np.testing.assert_array_equal(np.asarray(r), [1.0, 0.0, 1.0])


def test_a_temporary_array_gets_the_writes():
    """np.asarray(b[1]) writes into b although the view b[1] is a temporary."""
    b = xp.zeros((2, 2))
    np.asarray(b[1])[:] = 3.0
    np.testing.assert_array_equal(np.asarray(b), [[0.0, 0.0], [3.0, 3.0]])
