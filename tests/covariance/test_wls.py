"""The GloVe-V formulas for one word against brute force, the conditioning rule, and coverage by simulation."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

from glovev_ext import UndefinedCovarianceError
from glovev_ext.glove import glove_weights
from glovev_ext.covariance.factor import CHOLESKY, PSEUDO_INVERSE
from glovev_ext.covariance.passes import covariance_pass, threaded_runner
from glovev_ext.covariance.wls import INVERSE_ERROR_LIMIT, WordFitter, residual_variance, residual_variances

DIM = 8
THRESHOLD = INVERSE_ERROR_LIMIT / np.finfo(float).eps


@pytest.fixture
def fitted(small_model):
    """The shared D = 8 model (read only)."""
    assert small_model.embedding_.shape[1] == DIM
    return small_model


def brute_force(X, model, i):
    """H_i, s2_i and Sigma_i straight from method.md section 2, one context at a time."""
    row = X.getrow(i)
    H = np.zeros((DIM, DIM))
    weighted_squares = 0.0
    for j, x in zip(row.indices, row.data):
        f = (x / 100.0) ** 0.75 if x < 100.0 else 1.0
        v = model.context_embedding_[j]
        H += f * np.outer(v, v)
        residual = np.log(x) - model.bias_[i] - model.context_bias_[j] - model.embedding_[i] @ v
        weighted_squares += f * residual**2
    s2 = weighted_squares / (row.nnz - DIM)
    eigenvalues = np.linalg.eigvalsh(H)
    ill = eigenvalues[0] <= 0 or eigenvalues[-1] / eigenvalues[0] > THRESHOLD
    inverse = np.linalg.pinv(H, rcond=1e-3, hermitian=True) if ill else np.linalg.inv(H)
    return H, s2, s2 * inverse, ill, eigenvalues


def relative_error(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


def test_covariances_equal_brute_force_on_real_cooccurrences(embedded_cooccurrence, fitted):
    X = embedded_cooccurrence
    checked = 0
    for i in np.flatnonzero(fitted.covariance_defined_)[::7]:
        H, s2, sigma, ill, eigenvalues = brute_force(X, fitted, i)
        assert abs(fitted.sigma2_[i] - s2) <= 1e-12 * s2
        near_threshold = abs(eigenvalues[-1] / eigenvalues[0] / THRESHOLD - 1) < 1e-6
        if not near_threshold:
            assert bool(fitted.pseudo_inverse_[i]) == ill, i
            assert relative_error(fitted.covariance_[int(i)], sigma) < 1e-10, i
        checked += 1
    assert checked > 500


def test_words_with_too_few_contexts_have_no_covariance(embedded_cooccurrence, fitted):
    n_contexts = np.diff(embedded_cooccurrence.indptr)
    np.testing.assert_array_equal(fitted.n_contexts_, n_contexts)
    undefined = np.flatnonzero(n_contexts <= DIM)
    assert undefined.size > 0
    np.testing.assert_array_equal(fitted.covariance_defined_, n_contexts > DIM)
    assert np.isnan(fitted.sigma2_[undefined]).all()
    assert (fitted.covariance_rank_[undefined] == 0).all()
    word = embedded_cooccurrence.words[undefined[0]]
    with pytest.raises(UndefinedCovarianceError, match=re.escape(f"word {word!r} (index {undefined[0]}) has no "
                                                                 f"covariance: it has {n_contexts[undefined[0]]}")):
        fitted.covariance_[int(undefined[0])]
    assert np.isnan(fitted.covariance_.diagonal([int(undefined[0])])).all()
    with pytest.raises(UndefinedCovarianceError):
        fitted.covariance_.quad_form(word, np.ones(DIM))


def ill_conditioned_fitter(rng, n_contexts=60, conditioning="paper"):
    """Contexts that nearly span only 3 of 5 dimensions: one word with cond(H) far above 1e10 * eps."""
    dim = 5
    contexts = np.zeros((n_contexts, dim))
    contexts[:, :3] = rng.normal(size=(n_contexts, 3))
    contexts[:, 3:] = 1e-5 * rng.normal(size=(n_contexts, 2))
    X = sp.csr_matrix((rng.uniform(1, 300, n_contexts), (np.zeros(n_contexts, int), np.arange(n_contexts))),
                      shape=(n_contexts, n_contexts))
    return WordFitter(X, contexts, rng.normal(size=n_contexts), 100.0, 0.75, conditioning), contexts


def test_pseudo_inverse_branch_matches_numpy_pinv(rng):
    fitter, contexts = ill_conditioned_fitter(rng)
    center, bias = rng.normal(size=5), 0.3
    fit = fitter.fit_word(0, bias, center)
    assert fit.kind == PSEUDO_INVERSE and fit.rank == 3
    row = fitter.cooccurrence.getrow(0)
    f = glove_weights(row.data)
    H = (contexts[row.indices] * f[:, None]).T @ contexts[row.indices]
    residual = np.log(row.data) - bias - fitter.context_biases[row.indices] - contexts[row.indices] @ center
    s2 = f @ residual**2 / (row.nnz - 5)
    store = covariance_pass(fitter, np.tile(center, (row.shape[1], 1)), np.full(row.shape[1], bias),
                            runner=threaded_runner(1), progress=False).store
    np.testing.assert_allclose(store[0], s2 * np.linalg.pinv(H, rcond=1e-3, hermitian=True), rtol=1e-9, atol=0)
    assert store.pseudo_inverse[0] and store.rank[0] == 3
    g = rng.normal(size=5)
    assert store.quad_form(0, g) == pytest.approx(g @ store[0] @ g, rel=1e-10)


def test_branch_decision_is_exact_near_the_threshold(rng):
    """Hessians built with cond(H) just below and just above the threshold land on the right side."""
    dim, n = 4, 50
    basis, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    # 1e-5 from the threshold, a rough power-iteration estimate of lambda_max cannot decide
    for factor, expected in ((0.999, CHOLESKY), (1.001, PSEUDO_INVERSE), (0.99999, CHOLESKY),
                             (1.00001, PSEUDO_INVERSE)):
        eigenvalues = np.array([1.0, 0.5, 0.2, 1.0 / (THRESHOLD * factor)])
        # contexts whose f-weighted Gram matrix is basis diag(eigenvalues) basis^T (all f = 1)
        raw = rng.normal(size=(n, dim))
        whitened = raw @ np.linalg.inv(np.linalg.cholesky(raw.T @ raw)).T
        contexts = whitened @ np.diag(np.sqrt(eigenvalues)) @ basis.T
        X = sp.csr_matrix((np.full(n, 500.0), (np.zeros(n, int), np.arange(n))), shape=(n, n))
        fit = WordFitter(X, contexts, np.zeros(n), 100.0, 0.75, "paper").fit_word(0, 0.0, np.zeros(dim))
        assert fit.kind == expected, factor


def test_optimum_is_the_weighted_least_squares_solution(embedded_cooccurrence, fitted):
    X = embedded_cooccurrence
    for i in np.flatnonzero(fitted.covariance_defined_ & ~fitted.pseudo_inverse_)[::200]:
        row = X.getrow(i)
        root = np.sqrt(glove_weights(row.data))
        design = fitted.context_embedding_[row.indices] * root[:, None]
        target = root * (np.log(row.data) - fitted.bias_[i] - fitted.context_bias_[row.indices])
        optimum = np.linalg.lstsq(design, target, rcond=None)[0]
        np.testing.assert_allclose(fitted.optimum_[i], optimum, rtol=1e-8, atol=1e-10)
        delta = fitted.embedding_[i] - optimum
        distance = np.sqrt(delta @ np.linalg.solve(fitted.covariance_[int(i)], delta))
        assert fitted.optimum_distance_[i] == pytest.approx(distance, rel=1e-6)


@pytest.mark.parametrize("unit_weights", [True, False])
def test_intervals_cover_at_the_nominal_rate_in_simulation(rng, unit_weights):
    """Rows simulated from the model with known w and fixed C, b, c: 95 % intervals cover 95 %."""
    dim, n_contexts, replications = 4, 300, 2000
    contexts = rng.normal(size=(n_contexts, dim))
    context_biases = rng.normal(0, 0.5, n_contexts)
    truth, bias = rng.normal(size=dim), 1.5
    mean_log = bias + context_biases + contexts @ truth
    x_max = 1e-3 if unit_weights else 100.0
    sigma = 0.1 if unit_weights else 0.02
    f_true = glove_weights(np.exp(mean_log), x_max, 0.75)
    covered = []
    for _ in range(replications):
        log_x = mean_log + rng.normal(size=n_contexts) * sigma / np.sqrt(f_true)
        fitter = WordFitter(sp.csr_matrix(np.exp(log_x)[None, :]), contexts, context_biases, x_max, 0.75)
        fit = fitter.fit_row(np.arange(n_contexts), np.exp(log_x), bias, None)
        se = np.sqrt(np.diag(fit.factor.dense()))
        covered.append(np.abs(fit.optimum - truth) <= 1.959964 * se)
    coverage = np.mean(covered)
    assert 0.935 <= coverage <= 0.965, coverage


def test_residual_variances_vectorised_equal_per_word(embedded_cooccurrence, fitted):
    fitter = WordFitter(embedded_cooccurrence, fitted.context_embedding_, fitted.context_bias_, 100.0, 0.75)
    np.testing.assert_allclose(residual_variances(fitter, fitted.embedding_, fitted.bias_), fitted.sigma2_,
                               rtol=1e-11)


def test_residual_variance_divides_by_the_spare_contexts():
    assert residual_variance(12.0, 10, 4) == pytest.approx(2.0)
    assert residual_variance(12.0, 10, 4, free_bias=True) == pytest.approx(12.0 / 5)
    np.testing.assert_array_equal(np.isnan(residual_variance(np.ones(3), np.array([4, 5, 6]), 5)), [True, True, False])


@pytest.mark.parametrize("noise", [0.3, 0.0])
@pytest.mark.parametrize("free_bias", [False, True])
def test_residual_sum_of_squares_equals_brute_force_also_for_an_exact_fit(rng, noise, free_bias):
    """s2 from the Gram expansion (a noisy row) and from the residuals (an exact fit, where the
    expansion would be rounding alone) against one residual at a time."""
    dim, n_contexts, bias = 5, 40, 0.7
    contexts, context_biases, truth = rng.normal(size=(n_contexts, dim)), rng.normal(size=n_contexts), rng.normal(size=dim)
    log_x = bias + context_biases + contexts @ truth + noise * rng.normal(size=n_contexts)
    values = np.exp(log_x)
    fitter = WordFitter(sp.csr_matrix(values[None, :]), contexts, context_biases, 100.0, 0.75)
    fit = fitter.fit_row(np.arange(n_contexts), values, None if free_bias else bias, None)
    residuals = contexts @ fit.optimum + fit.bias + context_biases - log_x
    expected = glove_weights(values) @ residuals**2 / (n_contexts - dim - free_bias)
    if noise:
        assert fit.sigma2 == pytest.approx(expected, rel=1e-11)
    else:
        assert fit.sigma2 < 1e-25 and expected < 1e-25


@pytest.mark.parametrize("condition", [1e3, 1e8])
def test_the_papers_rule_agrees_with_the_eigenvalues_called_either_way(rng, condition):
    """is_ill_conditioned(hessian, start) against cond_2 from the eigenvalues; the call of 0.2 with the
    Cholesky factor gives the same answer and a deprecation warning."""
    from glovev_ext.covariance.wls import is_ill_conditioned
    basis, _ = np.linalg.qr(rng.normal(size=(12, 12)))
    eigenvalues = np.geomspace(1.0, 1.0 / condition, 12)
    hessian = basis @ np.diag(eigenvalues) @ basis.T
    hessian = (hessian + hessian.T) / 2
    start = rng.normal(size=12)
    expected = eigenvalues[0] / eigenvalues[-1] > THRESHOLD
    assert is_ill_conditioned(hessian, start) == expected
    with pytest.warns(DeprecationWarning, match=r"is_ill_conditioned\(hessian, lower, start\) is deprecated"):
        assert is_ill_conditioned(hessian, np.linalg.cholesky(hessian), start) == expected
