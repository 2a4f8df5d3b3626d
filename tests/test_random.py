"""xla_array.random: NumPy's Generator API on XLA's counter-based generator.

The stream is not NumPy's, so the values are tested as samples: Kolmogorov-Smirnov against
SciPy's distributions (a discrete one by the largest gap between the empirical and the true
CDF over the integers, which the continuous KS bound also bounds) and moments, at fixed seeds
(so each test is deterministic). One sample size for all, so that the structures compile once
per distribution; Python-scalar parameters are runtime parameters (another value of a shape
parameter reuses the executable)."""

import numpy as np
import pytest
from scipy import stats

import xla_array as xp
from xla_array import random as xr

N = 20_000
KS_P = 1e-3  # a fixed seed's KS p-value must be above this
DKS = 1.95 / np.sqrt(N)  # the discrete tests' bound on the CDF gap (KS at p = 0.001)


def _ks(sample, cdf, *args):
    s = np.asarray(sample, dtype=np.float64).ravel()
    assert np.all(np.isfinite(s))
    # (a frozen distribution's cdf: SciPy 1.18 with SCIPY_ARRAY_API=1 maps a distribution's
    # name to a special function that takes no loc and scale, ndtr() for 'norm')
    p = stats.kstest(s, getattr(stats, cdf)(*args).cdf).pvalue
    assert p > KS_P, (cdf, args, p)


def _discrete(sample, dist):
    s = np.asarray(sample).ravel()
    assert s.dtype == np.int64 and s.min() >= 0
    k = np.arange(s.min(), s.max() + 1)
    emp = np.searchsorted(np.sort(s), k, side="right") / s.size
    gap = np.max(np.abs(emp - dist.cdf(k)))
    assert gap < DKS, (dist.args, gap)
    assert abs(s.mean() - dist.mean()) < 5 * dist.std() / np.sqrt(s.size) + 1e-12


def test_same_seed_same_stream_and_state_advances():
    a, b = xr.default_rng(7), xr.default_rng(7)
    x1, x2 = a.random(N), a.random(N)
    y1 = b.random(N)
    assert x1.is_pending and a.state.is_pending  # nothing computed yet
    v1, v2, w1 = np.asarray(x1), np.asarray(x2), np.asarray(y1)
    np.testing.assert_array_equal(v1, w1)
    assert not np.array_equal(v1, v2)
    assert not a.state.is_pending  # written back with the values: no second computation
    assert not np.array_equal(v1, np.asarray(xr.default_rng(8).random(N)))
    assert v1.dtype == np.float64 and v1.min() >= 0.0 and v1.max() < 1.0
    # the values are multiples of 2**-52
    np.testing.assert_array_equal(v1 * 2.0**52, np.floor(v1 * 2.0**52))


def test_seeds_numpy_takes():
    np.testing.assert_array_equal(np.asarray(xr.default_rng([1, 2]).random(3)),
                                  np.asarray(xr.default_rng(np.random.SeedSequence([1, 2]))
                                             .random(3)))
    g = xr.default_rng(1)
    assert xr.default_rng(g) is g
    with pytest.raises(ValueError):
        xr.default_rng(-1)
    with pytest.raises(TypeError):
        g.random(3, dtype=xp.int32)
    with pytest.raises(ValueError):
        xr.default_rng(1, algorithm="MT19937")
    kids = g.spawn(2)
    assert not np.array_equal(np.asarray(kids[0].random(3)), np.asarray(kids[1].random(3)))


def test_philox_is_another_stream():
    a = np.asarray(xr.default_rng(3, algorithm="PHILOX").standard_normal(N))
    b = np.asarray(xr.default_rng(3).standard_normal(N))
    assert not np.array_equal(a, b)
    _ks(a, "norm")


@pytest.mark.parametrize("dtype", [xp.float64, xp.float32])
def test_uniform_normal_exponential(dtype):
    g = xr.default_rng(11)
    u = g.random(N, dtype=dtype)
    z = g.standard_normal(N, dtype=dtype)
    e = g.standard_exponential(N, dtype=dtype)
    assert u.dtype == z.dtype == e.dtype == dtype
    _ks(u, "uniform")
    _ks(z, "norm")
    _ks(e, "expon")
    zv = np.asarray(z, dtype=np.float64)
    assert abs(zv.mean()) < 4 / np.sqrt(N) and abs(zv.var() - 1) < 0.05
    assert abs(stats.skew(zv)) < 0.1 and abs(stats.kurtosis(zv)) < 0.15


def test_normals_of_odd_counts_and_shapes():
    g = xr.default_rng(5)
    z = g.standard_normal((3, 7))
    assert z.shape == (3, 7)
    assert g.standard_normal().shape == ()
    assert g.normal(np.zeros((2, 1)), np.ones(4)).shape == (2, 4)
    with pytest.raises(ValueError):
        g.normal(np.zeros(3), 1.0, size=(4,))
    with pytest.raises(ValueError):
        g.normal(0.0, -1.0)
    with pytest.raises(ValueError):
        g.random(-1)


@pytest.mark.parametrize("name, args, cdf, cargs", [
    ("normal", (1.5, 2.0), "norm", (1.5, 2.0)),
    ("uniform", (-2.0, 3.0), "uniform", (-2.0, 5.0)),
    ("exponential", (2.0,), "expon", (0, 2.0)),
    ("lognormal", (0.5, 0.75), "lognorm", (0.75, 0, np.exp(0.5))),
    ("laplace", (1.0, 2.0), "laplace", (1.0, 2.0)),
    ("logistic", (1.0, 2.0), "logistic", (1.0, 2.0)),
    ("gumbel", (1.0, 2.0), "gumbel_r", (1.0, 2.0)),
    ("rayleigh", (2.0,), "rayleigh", (0, 2.0)),
    ("pareto", (3.0,), "lomax", (3.0,)),
    ("weibull", (1.5,), "weibull_min", (1.5,)),
    ("power", (2.5,), "powerlaw", (2.5,)),
    ("wald", (1.5, 2.0), "invgauss", (0.75, 0, 2.0)),
    ("triangular", (0.0, 1.0, 4.0), "triang", (0.25, 0.0, 4.0)),
    ("standard_cauchy", (), "cauchy", ()),
])
def test_continuous_distributions(name, args, cdf, cargs):
    _ks(getattr(xr.default_rng(21), name)(*args, size=N), cdf, *cargs)


@pytest.mark.parametrize("alpha", [0.05, 0.3, 1.0, 2.5, 40.0, 1e6])
def test_gamma(alpha):
    _ks(xr.default_rng(31).gamma(alpha, 2.0, N), "gamma", alpha, 0, 2.0)


def test_gamma_family():
    g = xr.default_rng(41)
    _ks(g.beta(0.5, 2.0, N), "beta", 0.5, 2.0)
    _ks(g.chisquare(3.0, N), "chi2", 3.0)
    _ks(g.standard_t(4.0, N), "t", 4.0)
    _ks(g.f(5.0, 7.0, N), "f", 5.0, 7.0)
    _ks(g.standard_gamma(2.0, N, dtype=xp.float32), "gamma", 2.0)
    d = np.asarray(g.dirichlet([1.0, 2.0, 3.0], N // 3))
    np.testing.assert_allclose(d.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(d.mean(axis=0), [1 / 6, 2 / 6, 3 / 6], atol=0.01)
    with pytest.raises(ValueError):
        g.standard_gamma(-1.0)
    with pytest.raises(ValueError):
        g.beta(0.0, 1.0)


def _cycle(values, special=()):
    """An N-array cycling over ``values``, its first entries ``special``."""
    a = np.resize(np.asarray(values, dtype=np.float64), N)
    a[:len(special)] = special
    return a


def test_array_parameters_one_per_element():
    """Array parameters: each element its own; invalid ones give NaN (gamma) or -1 (counts),
    which NumPy would raise for: their values are not known at the call."""
    g = xr.default_rng(42)
    al = _cycle([0.5, 5.0, 50.0], [np.nan, -1.0, np.inf, 0.0])
    x = np.asarray(g.standard_gamma(xp.asarray(al)))
    assert np.isnan(x[:3]).all() and x[3] == 0.0
    for j, a in enumerate([0.5, 5.0, 50.0]):
        col = x[4:][(np.arange(4, N) % 3) == j]
        assert abs(col.mean() - a) < 5 * np.sqrt(a / col.size)
    lam = _cycle([2.0, 30.0], [np.nan, -1.0])
    k = np.asarray(g.poisson(xp.asarray(lam)))
    assert list(k[:2]) == [-1, -1]
    assert abs(k[2::2].mean() - 2.0) < 0.1 and abs(k[3::2].mean() - 30.0) < 0.4
    n, p = _cycle([3.0, 300.0], [10.0, 10.0]), _cycle([0.5, 0.5], [1.5, np.nan])
    b = np.asarray(g.binomial(xp.asarray(n), xp.asarray(p)))
    assert list(b[:2]) == [-1, -1] and b[2::2].max() <= 3
    assert abs(b[3::2].mean() - 150) < 1


@pytest.mark.parametrize("lam", [0.5, 3.0, 9.99, 10.0, 57.3, 1e4])
def test_poisson(lam):
    _discrete(xr.default_rng(51).poisson(lam, N), stats.poisson(lam))


@pytest.mark.parametrize("n, p", [(5, 0.3), (20, 0.95), (1000, 0.004), (40, 0.5),
                                  (1000, 0.3), (10**6, 0.7)])
def test_binomial(n, p):
    _discrete(xr.default_rng(61).binomial(n, p, N), stats.binom(n, p))


def test_counts_edges_and_errors():
    g = xr.default_rng(2)
    assert np.all(np.asarray(g.binomial(7, 0.0, N)) == 0)
    assert np.all(np.asarray(g.binomial(7, 1.0, N)) == 7)
    assert np.all(np.asarray(g.binomial(0, 0.5, N)) == 0)
    assert np.all(np.asarray(g.poisson(0.0, N)) == 0)
    _discrete(g.geometric(0.2, N), stats.geom(0.2))
    _discrete(g.negative_binomial(3.5, 0.4, N), stats.nbinom(3.5, 0.4))
    m = np.asarray(g.multinomial(20, [0.2, 0.3, 0.5], N))
    assert m.shape == (N, 3) and np.all(m.sum(axis=1) == 20)
    np.testing.assert_allclose(m.mean(axis=0), [4, 6, 10], atol=0.2)
    for bad in [lambda: g.poisson(-1.0), lambda: g.binomial(-1, 0.5),
                lambda: g.binomial(5, 1.5), lambda: g.geometric(0.0),
                lambda: g.multinomial(5, [0.7, 0.7, 0.1])]:
        with pytest.raises(ValueError):
            bad()


def test_integers():
    g = xr.default_rng(71)
    x = np.asarray(g.integers(-3, 7, N))
    assert x.dtype == np.int64 and x.min() == -3 and x.max() == 6
    counts = np.bincount(x + 3, minlength=10)
    assert stats.chisquare(counts).pvalue > KS_P
    e = np.asarray(g.integers(5, size=1000, endpoint=True, dtype=xp.uint8))
    assert e.dtype == np.uint8 and e.max() == 5
    big = np.asarray(g.integers(-2**63, 2**63 - 1, 1000, endpoint=True))
    assert big.min() < -2**61 and big.max() > 2**61
    arr = np.asarray(g.integers(np.array([0, 100]), np.array([2, 102]), (500, 2)))
    assert set(arr[:, 0]) == {0, 1} and set(arr[:, 1]) == {100, 101}
    for bad in [lambda: g.integers(5, 5), lambda: g.integers(0, 300, dtype=xp.uint8),
                lambda: g.integers(-1, 3, dtype=xp.uint16)]:
        with pytest.raises(ValueError):
            bad()


def test_permutation_shuffle_choice():
    g = xr.default_rng(81)
    p = np.asarray(g.permutation(50))
    assert sorted(p) == list(range(50)) and list(p) != list(range(50))
    m = np.arange(12).reshape(4, 3)
    pm = np.asarray(g.permutation(m))
    assert sorted(map(tuple, pm)) == sorted(map(tuple, m))
    x = xp.arange(50)
    g.shuffle(x)
    v = np.asarray(x)
    assert sorted(v) == list(range(50)) and list(v) != list(range(50))
    h = np.arange(50)
    g.shuffle(h)
    assert sorted(h) == list(range(50)) and list(h) != list(range(50))
    c = np.asarray(g.choice(5, N))
    assert stats.chisquare(np.bincount(c, minlength=5)).pvalue > KS_P
    w = np.array([0.1, 0.2, 0.3, 0.4])
    cp = np.asarray(g.choice(4, N, p=w))
    assert stats.chisquare(np.bincount(cp, minlength=4), w * N).pvalue > KS_P
    nr = np.asarray(g.choice(10, 10, replace=False))
    assert sorted(nr) == list(range(10))
    nw = np.asarray(g.choice(4, (500, 3), replace=True))
    assert nw.shape == (500, 3)
    firsts = [int(np.asarray(xr.default_rng(s).choice(3, 1, replace=False, p=[0.2, 0.3, 0.5]))
                  [0]) for s in range(200)]
    assert 0.38 < firsts.count(2) / 200 < 0.62  # the first draw without replacement: p
    rows = np.asarray(g.choice(xp.asarray(m), 2, replace=False, axis=1))
    assert rows.shape == (4, 2)
    for bad in [lambda: g.choice(3, 4, replace=False), lambda: g.choice(3, p=[0.5, 0.6, 0.1]),
                lambda: g.choice(0, 1), lambda: g.choice(3, 3, replace=False, p=[0.5, 0.5, 0])]:
        with pytest.raises(ValueError):
            bad()
    pr = np.asarray(g.permuted(xp.asarray(m), axis=1))
    assert all(sorted(r) == sorted(q) for r, q in zip(pr, m))


def test_multivariate_normal():
    g = xr.default_rng(91)
    cov = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
    mean = np.array([1.0, -1.0, 0.5])
    for method in ("svd", "cholesky", "eigh"):
        x = np.asarray(g.multivariate_normal(mean, cov, N, method=method))
        assert x.shape == (N, 3)
        np.testing.assert_allclose(x.mean(axis=0), mean, atol=0.05)
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)
    with pytest.raises(ValueError):
        g.multivariate_normal(mean, -cov, 3, check_valid="raise")
    with pytest.warns(RuntimeWarning):
        g.multivariate_normal(mean, -cov, 3)


def test_legacy_functions():
    xr.seed(3)
    a = np.asarray(xr.rand(2, 3))
    xr.seed(3)
    np.testing.assert_array_equal(a, np.asarray(xr.random_sample((2, 3))))
    assert xr.randn(4).shape == (4,) and xr.random().shape == ()
    r = np.asarray(xr.randint(3, 9, size=100))
    assert r.min() >= 3 and r.max() <= 8 and r.dtype == np.int64
    assert np.asarray(xr.normal(5.0, 0.0, 3)).tolist() == [5.0, 5.0, 5.0]
    assert np.asarray(xr.uniform(size=4)).max() < 1.0
    assert sorted(np.asarray(xr.permutation(5))) == [0, 1, 2, 3, 4]
    assert np.asarray(xr.choice([1, 2, 3], 5)).shape == (5,)
    with pytest.raises(ValueError):
        xr.seed(-1)


def test_device_keyword_and_fusion():
    devs = xp.__array_namespace_info__().devices()
    g = xr.default_rng(4, device=devs[-1])
    x = g.normal(size=10)
    assert x.device == devs[-1]
    y = g.random(10, device=devs[0])
    assert y.device == devs[0] and g.state.device == devs[0]
    # the same calls give the same values on either device
    a = np.asarray(xr.default_rng(4, device=devs[-1]).normal(size=10))
    np.testing.assert_array_equal(np.asarray(x), a)
    # one executable draws and sums (no separate run for the draw)
    s = xp.sum(xr.default_rng(9).standard_normal(N) ** 2)
    assert abs(float(s) / N - 1) < 0.05
    assert xp.random is xr
