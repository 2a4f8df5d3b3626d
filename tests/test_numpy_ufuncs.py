"""NumPy ufuncs applied to xla_array arrays stay lazy when the namespace has the function."""

import numpy as np

import xla_array as xp


def test_ufunc_calls_record_our_functions(metrics):
    a = np.array([-1.5, 0.0, 2.0, np.nan])
    x = xp.asarray(a)
    for got, want in ((np.sign(x), np.sign(a)), (np.arange(4.0) + x, np.arange(4.0) + a),
                      (np.arctan2(x, 1.0), np.arctan2(a, 1.0)), (np.float64(2.0) * x, 2.0 * a),
                      (np.absolute(x), np.abs(a))):
        assert isinstance(got, xp.Array) and got.is_pending
        np.testing.assert_array_equal(np.asarray(got), want)
    assert metrics()["materializations"] == 5  # only the reads above


def test_other_ufunc_uses_go_through_host_values():
    a = np.array([1.0, 2.0, 4.0])
    x = xp.asarray(a)
    assert np.add.reduce(x) == 7.0
    np.testing.assert_array_equal(np.fmax(x, np.nan), np.fmax(a, np.nan))
    out = np.empty(3)
    np.multiply(x, 2.0, out=out)
    np.testing.assert_array_equal(out, a * 2)
