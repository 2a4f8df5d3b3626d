"""scikit-learn with ``array_api_dispatch=True`` and xla_array input gives NumPy's results.

Covered: every estimator whose ``__sklearn_tags__().array_api_support`` is true in the installed
scikit-learn (and the parameter settings its user guide lists), the meta-estimators and tools
that forward array API input, and the metrics of scikit-learn's own array-API metric list. For
each case the same data goes through scikit-learn once as NumPy arrays (dispatch off) and once
as xla_array arrays (dispatch on): fitted array attributes and every method's output must be
xla_array arrays on the input's device with NumPy's dtype and values (tolerances by dtype and
solver), and scalar scores must be Python floats.

All cases share a few data shapes (60 x 5 and their 3/2-class labels) so that the compiled
executables are shared between them. SciPy reads ``SCIPY_ARRAY_API`` when it is first imported,
so it is set here before any import of SciPy or scikit-learn.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np
import pytest

import xla_array as xp

sklearn = pytest.importorskip("sklearn")
pytest.importorskip("scipy")
from scipy._lib import _array_api as _sp_array_api

if not _sp_array_api.SCIPY_ARRAY_API:
    pytest.skip("SciPy was imported before SCIPY_ARRAY_API=1 was set", allow_module_level=True)

from sklearn import config_context
from sklearn.base import clone

DTYPES = ["float64", "float32"]
N, F = 60, 5
_rng = np.random.default_rng(0)
_X = _rng.normal(size=(N, F)) + np.array([0.0, 1.0, -2.0, 0.5, 3.0])
_Y3 = np.repeat(np.arange(3), N // 3)
_X[np.arange(N), _Y3] += 2.0  # three separable-ish classes
_Y2 = (_Y3 > 0).astype(np.int64)
_W = np.array([1.5, -2.0, 0.5, 0.0, 1.0])
_YREG = _X @ _W + 0.1 * _rng.normal(size=N)
_YPOS = np.exp(0.2 * (_X @ _W) / 3).round(2) + 0.5

METHODS = ("transform", "predict", "predict_proba", "predict_log_proba", "decision_function",
           "score_samples")


def _tol(dtype: str, loose: bool = False) -> dict:
    if dtype == "float32":
        return {"rtol": 2e-3 if loose else 2e-4, "atol": 2e-3 if loose else 2e-4}
    return {"rtol": 1e-4 if loose else 1e-7, "atol": 1e-6 if loose else 1e-9}


def _close(got: Any, expected: np.ndarray, device: Any, tol: dict, what: str) -> None:
    assert type(got) is xp.Array, f"{what}: {type(got).__name__} is not an xla_array array"
    assert got.device == device, f"{what}: on {got.device}, not on the input's {device}"
    g = np.asarray(got)
    assert g.shape == expected.shape, f"{what}: shape {g.shape} != NumPy's {expected.shape}"
    assert g.dtype == expected.dtype, f"{what}: dtype {g.dtype} != NumPy's {expected.dtype}"
    if g.dtype.kind in "fc":
        if device.platform != "cpu" and g.ndim == 2 and g.size:
            # on a GPU, singular vectors come from cuSOLVER, whose signs may be the opposite
            # of LAPACK's; estimators that fix no sign (LinearDiscriminantAnalysis's
            # scalings_ and transform) then differ from NumPy's by the sign of columns
            col = np.abs(expected).argmax(axis=0)
            idx = np.arange(g.shape[1])
            g = g * np.where(np.sign(g[col, idx]) == np.sign(expected[col, idx]), 1, -1)
        np.testing.assert_allclose(g, expected, err_msg=what, **tol)
    else:
        np.testing.assert_array_equal(g, expected, err_msg=what)


def check_estimator(est: Any, X: np.ndarray, y: np.ndarray | None, dtype: str,
                    loose: bool = False, skip_attrs: tuple = (), fit_kwargs: dict | None = None,
                    ) -> tuple[Any, Any]:
    """Fit ``est`` on NumPy and on xla_array data; compare attributes and method outputs."""
    tol = _tol(dtype, loose)
    Xn = X.astype(dtype)
    Xx = xp.asarray(Xn)
    yx = None if y is None else xp.asarray(y)
    fit_kwargs = fit_kwargs or {}
    fit_kwargs_x = {k: xp.asarray(v) if isinstance(v, np.ndarray) else v
                    for k, v in fit_kwargs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est_np = clone(est).fit(Xn, y, **fit_kwargs)
        with config_context(array_api_dispatch=True):
            est_x = clone(est).fit(Xx, yx, **fit_kwargs_x)
    device = Xx.device
    for key, value in vars(est_np).items():
        if not isinstance(value, np.ndarray) or key in skip_attrs or value.dtype.kind == "O":
            continue
        got = getattr(est_x, key)
        if key == "classes_" and not isinstance(got, xp.Array):
            np.testing.assert_array_equal(np.asarray(got), value)
            continue
        _close(got, value, device, tol, f"attribute {key}")
    for name in METHODS:
        if not hasattr(est_np, name):
            continue
        expected = getattr(est_np, name)(Xn)
        with config_context(array_api_dispatch=True):
            got = getattr(est_x, name)(Xx)
        _close(got, expected, device, tol, name)
        if name == "transform" and hasattr(est_np, "inverse_transform"):
            expected_inv = est_np.inverse_transform(expected)
            with config_context(array_api_dispatch=True):
                got_inv = est_x.inverse_transform(got)
            _close(got_inv, expected_inv, device, tol, "inverse_transform")
    if hasattr(est_np, "score"):
        expected_score = est_np.score(Xn, y) if y is not None else est_np.score(Xn)
        with config_context(array_api_dispatch=True):
            got_score = est_x.score(Xx, yx) if y is not None else est_x.score(Xx)
        assert type(got_score) is float, f"score returned {type(got_score).__name__}"
        np.testing.assert_allclose(got_score, expected_score, **tol)
    return est_np, est_x


# ---------------------------------------------------------------- estimators
def _estimators() -> list:
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import (
        LogisticRegression,
        PoissonRegressor,
        Ridge,
        RidgeClassifier,
        RidgeClassifierCV,
        RidgeCV,
    )
    from sklearn.mixture import GaussianMixture
    from sklearn.naive_bayes import GaussianNB
    from sklearn.preprocessing import (
        Binarizer,
        KernelCenterer,
        MaxAbsScaler,
        MinMaxScaler,
        Normalizer,
        PolynomialFeatures,
        StandardScaler,
    )

    K = _X @ _X.T
    lbfgs = {"loose": True}
    return [
        ("StandardScaler", StandardScaler(), _X, None, {}),
        ("StandardScaler-no-mean", StandardScaler(with_mean=False), _X, None, {}),
        ("MinMaxScaler", MinMaxScaler(), _X, None, {}),
        ("MaxAbsScaler", MaxAbsScaler(), _X, None, {}),
        ("Normalizer", Normalizer(), _X, None, {}),
        ("Binarizer", Binarizer(threshold=0.5), _X, None, {}),
        ("PolynomialFeatures", PolynomialFeatures(2), _X, None, {}),
        ("KernelCenterer", KernelCenterer(), K, None, {}),
        ("PCA-full", PCA(3, svd_solver="full"), _X, None, {}),
        ("PCA-full-whiten", PCA(2, svd_solver="full", whiten=True), _X, None, {}),
        ("PCA-fraction", PCA(0.6, svd_solver="full"), _X, None, {}),
        ("PCA-mle", PCA("mle", svd_solver="full"), _X, None, {}),
        ("PCA-covariance_eigh", PCA(3, svd_solver="covariance_eigh"), _X, None, {}),
        ("PCA-randomized-QR", PCA(3, svd_solver="randomized", power_iteration_normalizer="QR",
                                  random_state=0), _X, None, {}),
        ("Ridge-svd", Ridge(solver="svd"), _X, _YREG, {}),
        ("Ridge-auto", Ridge(), _X, _YREG, {}),
        ("RidgeCV", RidgeCV(), _X, _YREG, {}),
        ("RidgeCV-svd", RidgeCV(gcv_mode="svd"), _X, _YREG, {}),
        ("RidgeClassifier-svd", RidgeClassifier(solver="svd"), _X, _Y3, {}),
        ("RidgeClassifierCV", RidgeClassifierCV(), _X, _Y3, {}),
        ("LinearDiscriminantAnalysis", LinearDiscriminantAnalysis(), _X, _Y3, {}),
        ("GaussianNB", GaussianNB(), _X, _Y3, {}),
        ("LogisticRegression", LogisticRegression(), _X, _Y3, lbfgs),
        ("LogisticRegression-binary", LogisticRegression(), _X, _Y2, lbfgs),
        ("PoissonRegressor", PoissonRegressor(), _X, _YPOS, lbfgs),
        ("Nystroem", Nystroem(n_components=10, random_state=0), _X, None, {}),
        # few EM iterations: each one compiles anew (see docs/sklearn_scipy.md)
        ("GaussianMixture-random", GaussianMixture(2, init_params="random", random_state=0,
                                                   max_iter=2), _X, None, lbfgs),
        ("GaussianMixture-random_from_data", GaussianMixture(
            2, init_params="random_from_data", random_state=0, max_iter=2), _X, None, lbfgs),
        ("CalibratedClassifierCV-temperature", CalibratedClassifierCV(
            RidgeClassifier(solver="svd"), method="temperature", cv=2), _X, _Y3, lbfgs),
    ]


_ESTIMATORS = _estimators()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,est,X,y,opts", _ESTIMATORS, ids=[e[0] for e in _ESTIMATORS])
def test_estimator_matches_numpy(name: str, est: Any, X: np.ndarray, y: np.ndarray | None,
                                 opts: dict, dtype: str) -> None:
    check_estimator(est, X, y, dtype, **opts)


def test_every_declared_estimator_is_covered() -> None:
    """The estimators whose tags declare array API support (default parameters) all appear
    above, so a new scikit-learn that declares more fails here instead of going untested."""
    from sklearn.utils import all_estimators
    covered = {type(e[1]).__name__ for e in _ESTIMATORS} | {"LabelEncoder"}
    declared = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, cls in all_estimators():
            try:
                if cls().__sklearn_tags__().array_api_support:
                    declared.add(name)
            except Exception:  # noqa: BLE001  (estimators that need arguments)
                continue
    assert declared <= covered, sorted(declared - covered)


# ---------------------------------------------------------------- meta-estimators and tools
@pytest.mark.parametrize("dtype", DTYPES)
def test_pipeline(dtype: str) -> None:
    from sklearn.decomposition import PCA
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    pipe = make_pipeline(StandardScaler(), PCA(3, svd_solver="full"), Ridge(solver="svd"))
    check_estimator(pipe, _X, _YREG, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_feature_union(dtype: str) -> None:
    from sklearn.decomposition import PCA
    from sklearn.pipeline import make_union
    from sklearn.preprocessing import MinMaxScaler, StandardScaler
    union = make_union(StandardScaler(), MinMaxScaler(), PCA(2, svd_solver="full"))
    check_estimator(union, _X, None, dtype)


@pytest.mark.parametrize("search", ["GridSearchCV", "RandomizedSearchCV"])
def test_search_cv(search: str) -> None:
    import sklearn.model_selection as ms
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    params = {"tol": [1e-2, 1e-4]}
    kw = {"n_iter": 2, "random_state": 0} if search == "RandomizedSearchCV" else {}
    est = getattr(ms, search)(LinearDiscriminantAnalysis(), params, cv=3, error_score="raise",
                              **kw)
    est_np, est_x = check_estimator(est, _X, _Y3, "float64",
                                    skip_attrs=("mean_fit_time", "std_fit_time"))
    assert type(est_x.best_score_) in (float, np.float64)
    np.testing.assert_allclose(est_x.best_score_, est_np.best_score_)
    for key in ("mean_test_score", "std_test_score", "split0_test_score", "rank_test_score"):
        np.testing.assert_allclose(np.asarray(est_x.cv_results_[key]),
                                   est_np.cv_results_[key], rtol=1e-7)
    assert est_x.best_params_ == est_np.best_params_


def test_cross_validation_helpers() -> None:
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import cross_val_predict, cross_val_score, cross_validate
    Xx, yx = xp.asarray(_X), xp.asarray(_YREG)
    with config_context(array_api_dispatch=True):
        scores = cross_val_score(Ridge(solver="svd"), Xx, yx, cv=3)
        res = cross_validate(Ridge(solver="svd"), Xx, yx, cv=3, return_train_score=True)
        pred = cross_val_predict(LinearDiscriminantAnalysis(), Xx, xp.asarray(_Y3), cv=3)
        proba = cross_val_predict(LinearDiscriminantAnalysis(), Xx, xp.asarray(_Y3), cv=3,
                                  method="predict_proba")
    np.testing.assert_allclose(np.asarray(scores),
                               cross_val_score(Ridge(solver="svd"), _X, _YREG, cv=3))
    ref = cross_validate(Ridge(solver="svd"), _X, _YREG, cv=3, return_train_score=True)
    for key in ("test_score", "train_score"):
        np.testing.assert_allclose(np.asarray(res[key]), ref[key])
    dev = Xx.device
    _close(pred, cross_val_predict(LinearDiscriminantAnalysis(), _X, _Y3, cv=3), dev, _tol(
        "float64"), "cross_val_predict")
    _close(proba, cross_val_predict(LinearDiscriminantAnalysis(), _X, _Y3, cv=3,
                                    method="predict_proba"), dev, _tol("float64"),
           "cross_val_predict(predict_proba)")


def test_train_test_split_and_consistent_length() -> None:
    from sklearn.model_selection import train_test_split
    from sklearn.utils import check_consistent_length
    Xx, yx = xp.asarray(_X), xp.asarray(_Y3)
    with config_context(array_api_dispatch=True):
        parts = train_test_split(Xx, yx, test_size=0.25, random_state=0, stratify=yx)
        check_consistent_length(Xx, yx)
        with pytest.raises(ValueError):
            check_consistent_length(Xx, yx[:10])
    ref = train_test_split(_X, _Y3, test_size=0.25, random_state=0, stratify=_Y3)
    for got, expected in zip(parts, ref):
        _close(got, expected, Xx.device, _tol("float64"), "train_test_split")


@pytest.mark.parametrize("labels", ["int", "float"])
def test_label_encoding(labels: str) -> None:
    from sklearn.preprocessing import LabelBinarizer, LabelEncoder, label_binarize
    y = (_Y3 * 2 + 1).astype(np.int64 if labels == "int" else np.float64)
    yx = xp.asarray(y)
    dev, tol = yx.device, _tol("float64")
    with config_context(array_api_dispatch=True):
        enc = LabelEncoder().fit(yx)
        codes = enc.transform(yx)
        back = enc.inverse_transform(codes)
        onehot = LabelBinarizer().fit(yx).transform(yx)
        binarized = label_binarize(yx, classes=[1, 3, 5])
    ref = LabelEncoder().fit(y)
    _close(enc.classes_, ref.classes_, dev, tol, "LabelEncoder.classes_")
    _close(codes, ref.transform(y), dev, tol, "LabelEncoder.transform")
    _close(back, y, dev, tol, "LabelEncoder.inverse_transform")
    _close(onehot, LabelBinarizer().fit(y).transform(y), dev, tol, "LabelBinarizer")
    _close(binarized, label_binarize(y, classes=[1, 3, 5]), dev, tol, "label_binarize")


def test_without_dispatch_inputs_convert_to_numpy() -> None:
    """With array_api_dispatch off, scikit-learn converts our arrays with np.asarray."""
    from sklearn.linear_model import Ridge
    est = Ridge().fit(xp.asarray(_X), xp.asarray(_YREG))
    assert isinstance(est.coef_, np.ndarray)
    np.testing.assert_allclose(est.coef_, Ridge().fit(_X, _YREG).coef_)


def test_randomized_svd() -> None:
    from sklearn.utils.extmath import randomized_svd
    Xx = xp.asarray(_X)
    with config_context(array_api_dispatch=True):
        U, s, Vt = randomized_svd(Xx, 3, power_iteration_normalizer="QR", random_state=0)
    ref = randomized_svd(_X, 3, power_iteration_normalizer="QR", random_state=0)
    for got, expected, what in zip((U, s, Vt), ref, "USV"):
        _close(got, expected, Xx.device, _tol("float64", loose=True), f"randomized_svd {what}")


# ---------------------------------------------------------------- metrics
_M = 20
_mr = np.random.default_rng(1)
_BIN_T, _BIN_P = _mr.integers(0, 2, _M), _mr.integers(0, 2, _M)
_MC_T, _MC_P = _mr.integers(0, 3, _M), _mr.integers(0, 3, _M)
_ML_T, _ML_P = _mr.integers(0, 2, (_M, 3)), _mr.integers(0, 2, (_M, 3))
_PROB_BIN = _mr.uniform(0.05, 0.95, _M)
_PROB_MC = _mr.uniform(0.1, 1.0, (_M, 3))
_PROB_MC /= _PROB_MC.sum(axis=1, keepdims=True)
_PROB_ML = _mr.uniform(0.05, 0.95, (_M, 3))
_REG_T, _REG_P = _mr.uniform(0.5, 3.0, _M), _mr.uniform(0.5, 3.0, _M)
_REG2_T, _REG2_P = _mr.uniform(0.5, 3.0, (_M, 2)), _mr.uniform(0.5, 3.0, (_M, 2))
_PW_X, _PW_Y = _mr.uniform(0.1, 1.0, (6, 3)), _mr.uniform(0.1, 1.0, (4, 3))
_SW = _mr.uniform(0.5, 1.5, _M)

# metric -> the input kinds scikit-learn's own array API tests check it with
_LABELS = ("binary", "multiclass", "multilabel")
_CLASSIFICATION = {
    "accuracy_score": _LABELS, "balanced_accuracy_score": _LABELS[:2],
    "cohen_kappa_score": _LABELS[:2], "confusion_matrix": _LABELS[:2], "f1_score": _LABELS,
    "fbeta_score": _LABELS, "jaccard_score": _LABELS, "multilabel_confusion_matrix": _LABELS,
    "precision_score": _LABELS, "recall_score": _LABELS, "zero_one_loss": _LABELS,
    "hamming_loss": _LABELS, "precision_recall_fscore_support": _LABELS,
}
_CONTINUOUS = ("binary-proba", "multiclass-proba", "multilabel-proba")
_PROBA = {"brier_score_loss": _CONTINUOUS, "log_loss": _CONTINUOUS,
          "d2_brier_score": _CONTINUOUS, "d2_log_loss_score": _CONTINUOUS,
          "roc_curve": ("binary-proba",), "precision_recall_curve": ("binary-proba",),
          "det_curve": ("binary-proba",),
          "average_precision_score": ("binary-proba", "multilabel-proba")}
_REG = ("regression", "multioutput")
_REGRESSION = {
    "r2_score": _REG, "explained_variance_score": _REG, "mean_absolute_error": _REG,
    "mean_pinball_loss": _REG, "mean_squared_error": _REG, "mean_squared_log_error": _REG,
    "median_absolute_error": _REG, "d2_absolute_error_score": _REG, "d2_pinball_score": _REG,
    "root_mean_squared_error": _REG, "root_mean_squared_log_error": _REG,
    "mean_absolute_percentage_error": _REG, "mean_tweedie_deviance": _REG[:1],
    "mean_poisson_deviance": _REG[:1], "mean_gamma_deviance": _REG[:1],
    "d2_tweedie_score": _REG[:1], "max_error": _REG[:1],
}
_PAIRWISE = ("cosine_similarity", "paired_cosine_distances", "additive_chi2_kernel",
             "chi2_kernel", "paired_euclidean_distances", "paired_manhattan_distances",
             "cosine_distances", "euclidean_distances", "manhattan_distances", "linear_kernel",
             "laplacian_kernel", "polynomial_kernel", "rbf_kernel", "sigmoid_kernel",
             "pairwise_kernels", "pairwise_distances", "pairwise_distances_argmin")
_EXTRA_KW = {"fbeta_score": {"beta": 0.5}, "mean_tweedie_deviance": {"power": 1.5},
             "d2_tweedie_score": {"power": 1.5}, "d2_pinball_score": {"alpha": 0.9},
             "mean_pinball_loss": {"alpha": 0.1}}
_AVERAGED = {"f1_score", "fbeta_score", "jaccard_score", "precision_score", "recall_score",
             "precision_recall_fscore_support"}


def _metric_inputs(kind: str, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    if kind == "binary":
        return _BIN_T, _BIN_P
    if kind == "multiclass":
        return _MC_T, _MC_P
    if kind == "multilabel":
        return _ML_T, _ML_P
    if kind == "binary-proba":
        return _BIN_T, _PROB_BIN.astype(dtype)
    if kind == "multiclass-proba":
        return _MC_T, _PROB_MC.astype(dtype)
    if kind == "multilabel-proba":
        return _ML_T, _PROB_ML.astype(dtype)
    if kind == "regression":
        return _REG_T.astype(dtype), _REG_P.astype(dtype)
    return _REG2_T.astype(dtype), _REG2_P.astype(dtype)


def _metric_cases() -> list:
    cases = []
    for table in (_CLASSIFICATION, _PROBA, _REGRESSION):
        for name, kinds in table.items():
            for kind in kinds:
                dtypes = ["float64"] if kind in _LABELS else DTYPES
                for dtype in dtypes:
                    cases.append(pytest.param(name, kind, dtype, id=f"{name}-{kind}-{dtype}"))
    for name in _PAIRWISE:
        for dtype in DTYPES:
            cases.append(pytest.param(name, "pairwise", dtype, id=f"{name}-{dtype}"))
    return cases


def _compare_metric(got: Any, expected: Any, device: Any, dtype: str, what: str) -> None:
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected), what
        for i, (g, e) in enumerate(zip(got, expected)):
            _compare_metric(g, e, device, dtype, f"{what}[{i}]")
    elif isinstance(expected, np.ndarray):
        if expected.dtype == np.float64 and dtype == "float32" and what.split("(")[0] in (
                "manhattan_distances", "laplacian_kernel"):
            expected = expected.astype(np.float32)  # NumPy branch: scipy's cdist is float64
        _close(got, expected, device, _tol(dtype), what)
    elif expected is None:
        assert got is None, what
    else:  # a scalar score: scikit-learn returns a Python float (or int for counts)
        assert type(got) in (float, int), f"{what}: {type(got).__name__} is not a Python scalar"
        np.testing.assert_allclose(got, expected, err_msg=what, **_tol(dtype))


@pytest.mark.parametrize("name,kind,dtype", _metric_cases())
def test_metric_matches_numpy(name: str, kind: str, dtype: str) -> None:
    import sklearn.metrics as sm
    import sklearn.metrics.pairwise as pw
    fn = getattr(sm, name, None) or getattr(pw, name)
    kwargs = dict(_EXTRA_KW.get(name, {}))
    if kind == "pairwise":
        a, b = _PW_X.astype(dtype), _PW_Y.astype(dtype)
        if name.startswith("paired_"):
            b = _PW_X[::-1].astype(dtype)
    else:
        a, b = _metric_inputs(kind, dtype)
        if name in _AVERAGED and kind != "binary":
            kwargs["average"] = "macro"
    variants = [kwargs]
    if kind in ("binary", "multiclass", "regression", "binary-proba") and name not in (
            "max_error", "det_curve") and "sample_weight" in fn.__code__.co_varnames:
        variants.append({**kwargs, "sample_weight": _SW})
    if kind == "multioutput":
        variants.append({**kwargs, "multioutput": "raw_values"})
    for kw in variants:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = fn(a, b, **kw)
            kw_x = {k: xp.asarray(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
            with config_context(array_api_dispatch=True):
                got = fn(xp.asarray(a), xp.asarray(b), **kw_x)
        _compare_metric(got, expected, xp.asarray(a).device, dtype, f"{name}({sorted(kw)})")


@pytest.mark.parametrize("name", ["calinski_harabasz_score", "davies_bouldin_score"])
def test_cluster_metrics(name: str) -> None:
    import sklearn.metrics as sm
    X = _X.astype("float64")
    with config_context(array_api_dispatch=True):
        got = getattr(sm, name)(xp.asarray(X), xp.asarray(_Y3))
    assert type(got) is float
    np.testing.assert_allclose(got, getattr(sm, name)(X, _Y3), rtol=1e-9)


def test_contingency_matrix_and_entropy() -> None:
    """Listed in scikit-learn's development user guide; in scikit-learn 1.9 contingency_matrix
    still computes with NumPy (it returns a NumPy array), so only its values are compared."""
    from sklearn.metrics.cluster import contingency_matrix, entropy
    yt, yp = xp.asarray(_MC_T), xp.asarray(_MC_P)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # entropy is deprecated in 1.8
        with config_context(array_api_dispatch=True):
            cm = contingency_matrix(yt, yp)
            h = entropy(yt)
        h_np = entropy(_MC_T)
    np.testing.assert_array_equal(np.asarray(cm), contingency_matrix(_MC_T, _MC_P))
    assert type(h) is float
    np.testing.assert_allclose(h, h_np, rtol=1e-12)


# ---------------------------------------------------------------- a second device
_ON_SECOND_DEVICE = r"""
import os, warnings
os.environ["SCIPY_ARRAY_API"] = "1"
warnings.simplefilter("ignore")
import numpy as np, xla_array as xp, sklearn
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import Ridge
from sklearn.metrics import confusion_matrix, r2_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 4)); y = X @ np.arange(1.0, 5.0); c = (X[:, 0] > 0).astype(np.int64)
dev = xp.__array_namespace_info__().devices()[1]
Xx, yx, cx = (xp.asarray(a, device=dev) for a in (X, y, c))
outs = {}
with sklearn.config_context(array_api_dispatch=True):
    pipe = make_pipeline(StandardScaler(), Ridge(solver="svd")).fit(Xx, yx)
    outs["pipeline.predict"] = pipe.predict(Xx)
    outs["Ridge.coef_"] = pipe[-1].coef_
    outs["PCA.transform"] = PCA(2, svd_solver="full").fit(Xx).transform(Xx)
    lda = LinearDiscriminantAnalysis().fit(Xx, cx)
    outs["LDA.predict_proba"] = lda.predict_proba(Xx)
    outs["confusion_matrix"] = confusion_matrix(cx, lda.predict(Xx))
    score = r2_score(yx, outs["pipeline.predict"])
ref = make_pipeline(StandardScaler(), Ridge(solver="svd")).fit(X, y).predict(X)
assert type(score) is float, type(score)
np.testing.assert_allclose(np.asarray(outs["pipeline.predict"]), ref, rtol=1e-7)
for k, v in outs.items():
    assert type(v) is xp.Array and v.device == dev, (k, type(v), getattr(v, "device", None))
print("ok", dev)
"""


def test_outputs_stay_on_the_input_device() -> None:
    """Fitted attributes, predictions and metric arrays stay on a non-default device."""
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if not k.startswith("XLA_ARRAY")}
    env.update({"XLA_ARRAY_CPU_DEVICES": "2", "XLA_ARRAY_CACHE_DIR": "off"})
    out = subprocess.run([sys.executable, "-c", _ON_SECOND_DEVICE], capture_output=True,
                         text=True, env=env, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "ok cpu:1" in out.stdout
