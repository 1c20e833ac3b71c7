"""point_estimate="posterior": the empirical-Bayes prior, each row's posterior and its coverage, against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import glovev_ext
from glovev_ext.glove import glove_weights
from glovev_ext.covariance.prior import (FREQUENT_SPARE_RATIO, _prior_rows, pooled_sigma2, posterior,
                                        posterior_sweeps, row_posteriors)
from glovev_ext.covariance.wls import WordFitter, Workspace
from glovev_ext.glove import GloVeParameters
from glovev_ext.stats import RowSimulator

DIM = 8


def normal_equations(matrix, i, fixed_vectors, fixed_biases, own_bias):
    """``H`` and ``A^T t`` of row i by numpy, context by context."""
    row = matrix.getrow(i)
    hessian, rhs = np.zeros((DIM, DIM)), np.zeros(DIM)
    for j, x in zip(row.indices, row.data):
        f = glove_weights(np.array([x]))[0]
        hessian += f * np.outer(fixed_vectors[j], fixed_vectors[j])
        rhs += f * (np.log(x) - own_bias - fixed_biases[j]) * fixed_vectors[j]
    return hessian, rhs


def unregularised(matrix, i, fixed_vectors, fixed_biases, own_bias):
    """The row's optimum by lstsq and its residual variance with ``|K| - D`` degrees of freedom."""
    row = matrix.getrow(i)
    root = np.sqrt(glove_weights(row.data))
    design = fixed_vectors[row.indices] * root[:, None]
    target = root * (np.log(row.data) - own_bias - fixed_biases[row.indices])
    optimum = np.linalg.lstsq(design, target, rcond=None)[0]
    return optimum, float(np.sum((target - design @ optimum) ** 2) / (row.indices.size - DIM))


@pytest.fixture(scope="module")
def trained(small_model) -> GloVeParameters:
    return GloVeParameters(small_model.embedding_, small_model.context_embedding_, small_model.bias_,
                           small_model.context_bias_, costs=np.empty(0))


@pytest.fixture(scope="module")
def posterior_model(embedded_cooccurrence, trained) -> glovev_ext.GloVeVEstimator:
    return glovev_ext.GloVeVEstimator(DIM, pretrained=trained, point_estimate="posterior", n_sweeps=0, n_jobs=2,
                                      progress=False).fit(embedded_cooccurrence)


def test_the_prior_is_the_spread_of_frequent_optima_less_their_noise(embedded_cooccurrence, trained,
                                                                       posterior_model):
    X, n_contexts = embedded_cooccurrence, np.diff(embedded_cooccurrence.indptr)
    frequent = np.flatnonzero(n_contexts > FREQUENT_SPARE_RATIO * DIM)
    optima, noise = [], np.zeros((DIM, DIM))
    for i in frequent:
        optimum, s2 = unregularised(X, i, trained.context_vectors, trained.context_biases, trained.center_biases[i])
        hessian, _ = normal_equations(X, i, trained.context_vectors, trained.context_biases, trained.center_biases[i])
        optima.append(optimum)
        noise += s2 * np.linalg.inv(hessian)
    optima = np.array(optima)
    spread = np.cov(optima.T) - noise / len(frequent)
    floor = 1e-3 * np.linalg.eigvalsh(np.cov(optima.T))[-1]
    expected = spread + max(0.0, floor - np.linalg.eigvalsh(spread)[0]) * np.eye(DIM)
    prior = posterior_model.prior_
    assert prior.n_rows == len(frequent) and prior.strength == 1.0
    np.testing.assert_allclose(prior.mean, optima.mean(axis=0), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(prior.covariance, expected, rtol=1e-7, atol=1e-10 * np.abs(expected).max())
    np.testing.assert_allclose(posterior_model.optimum_[frequent], optima, rtol=1e-7, atol=1e-9)


def test_each_vector_is_its_posterior_mean_and_its_covariance_the_posterior_one(embedded_cooccurrence, trained,
                                                                                posterior_model):
    X, n_contexts = embedded_cooccurrence, np.diff(embedded_cooccurrence.indptr)
    prior, model = posterior_model.prior_, posterior_model
    precision = np.linalg.inv(prior.covariance)
    own = np.flatnonzero(n_contexts > DIM)
    sigma2_known = np.full(X.shape[0], np.nan)
    for i in own:
        sigma2_known[i] = unregularised(X, i, trained.context_vectors, trained.context_biases,
                                        trained.center_biases[i])[1]
    log_totals = np.log(np.asarray(X.sum(axis=1)).ravel())
    chosen = [*own[::400], *np.flatnonzero(n_contexts <= DIM)[::300], int(np.argmin(n_contexts))]
    for i in chosen:
        if n_contexts[i] > DIM:
            s2, dof = sigma2_known[i], n_contexts[i] - DIM
        else:
            near = np.abs(log_totals[own] - log_totals[i]) <= 0.2
            s2, dof = np.median(sigma2_known[own][near] if near.any() else sigma2_known[own]), np.inf
        hessian, rhs = normal_equations(X, i, trained.context_vectors, trained.context_biases,
                                        trained.center_biases[i])
        regularised = hessian + s2 * precision
        mean = np.linalg.solve(regularised, rhs + s2 * precision @ prior.mean)
        np.testing.assert_allclose(model.embedding_[i], mean, rtol=1e-7, atol=1e-10)
        np.testing.assert_allclose(model.covariance_[i], s2 * np.linalg.inv(regularised), rtol=1e-7,
                                   atol=1e-12 * s2)
        assert model.covariance_.dof[i] == dof and model.sigma2_[i] == pytest.approx(s2, rel=1e-9)
        assert model.prior_share_[i] == pytest.approx(np.trace(s2 * precision @ np.linalg.inv(regularised)) / DIM,
                                                      rel=1e-7, abs=1e-12)
    assert model.covariance_defined_.all() and np.all(model.optimum_distance_ == 0)


def test_the_prior_dominates_words_with_few_contexts_only(embedded_cooccurrence, posterior_model):
    n_contexts, share = np.diff(embedded_cooccurrence.indptr), posterior_model.prior_share_
    bands = [n_contexts <= DIM, (n_contexts > DIM) & (n_contexts <= FREQUENT_SPARE_RATIO * DIM),
             n_contexts > FREQUENT_SPARE_RATIO * DIM, n_contexts >= np.sort(n_contexts)[-100]]
    medians = [np.median(share[band]) for band in bands]
    assert medians[0] > 0.5 and medians[-1] < 0.1 and medians == sorted(medians, reverse=True)
    assert np.all((share >= 0) & (share <= 1))


def test_a_small_matrix_takes_its_prior_from_the_rows_with_the_most_contexts():
    n_contexts = np.array([30, 5, 25, 3, 40, 8, 9, 50])
    fitted = n_contexts > 2
    fitted[7] = False  # a singular row
    np.testing.assert_array_equal(_prior_rows(n_contexts, fitted, 2), [0, 2, 4])  # 3 rows above 10 D = 20 > D
    n_contexts = np.arange(2, 22)  # one row above 10 D = 20: the 4 D = 8 rows with the most contexts instead
    np.testing.assert_array_equal(_prior_rows(n_contexts, n_contexts > 2, 2), np.arange(12, 20))
    with pytest.raises(ValueError, match="2 words have more contexts than n_components = 19"):
        _prior_rows(n_contexts, n_contexts > 19, 19)


def test_pooling_takes_the_median_of_rows_with_a_similar_total():
    sigma2 = np.array([1.0, 2.0, 3.0, np.nan, 10.0, np.nan])
    totals = np.exp([0.0, 0.1, 0.15, 0.05, 5.0, 9.0])
    np.testing.assert_allclose(pooled_sigma2(sigma2, totals), [1.0, 2.0, 3.0, 2.0, 10.0, 2.5])
    with pytest.raises(ValueError, match="no row has more contexts than dimensions"):
        pooled_sigma2(np.full(3, np.nan), np.ones(3))


def test_a_sweep_fits_centres_then_contexts_each_under_its_own_prior(embedded_cooccurrence, trained):
    X = embedded_cooccurrence
    swept = posterior_sweeps(X, trained, 1, 3.0, 100.0, 0.75, n_jobs=2)
    transposed = X.T.tocsr()
    center = row_posteriors(WordFitter(X, trained.context_vectors, trained.context_biases, 100.0, 0.75),
                            trained.center_biases, 3.0, 2, covariances=False)
    np.testing.assert_array_equal(swept.center_vectors, center.mean)
    context = row_posteriors(WordFitter(transposed, swept.center_vectors, trained.center_biases, 100.0, 0.75),
                             trained.context_biases, 3.0, 2, covariances=False)
    precision = 3.0 * np.linalg.inv(context.prior.covariance)
    for j in range(0, X.shape[0], 700):
        hessian, rhs = normal_equations(transposed, j, swept.center_vectors, trained.center_biases,
                                        trained.context_biases[j])
        s2 = context.sigma2[j]
        expected = np.linalg.solve(hessian + s2 * precision, rhs + s2 * precision @ context.prior.mean)
        np.testing.assert_allclose(swept.context_vectors[j], expected, rtol=1e-7, atol=1e-10)
    model = glovev_ext.GloVeVEstimator(DIM, pretrained=trained, point_estimate="posterior", prior_strength=3.0,
                                       n_jobs=1, progress=False).fit(X)
    assert model.n_sweeps_ == 1  # the default for the posterior
    np.testing.assert_array_equal(model.context_embedding_, swept.context_vectors)


def coordinate_coverage(simulator, key, truths, generator) -> float:
    """Share of replications whose 95 % interval of each coordinate holds the true value."""
    covered = []
    for truth in truths:
        words = simulator.draw([key], generator, shifts={key: truth - simulator.truth[key]})
        factor = words.factors[0]
        quantile = stats.t.ppf(0.975, factor.dof) if np.isfinite(factor.dof) else stats.norm.ppf(0.975)
        covered.append(np.abs(words.vectors[0] - truth) <= quantile * np.sqrt(factor.variances()))
    return float(np.mean(covered))


def test_posterior_intervals_cover_at_their_nominal_rate(embedded_cooccurrence, posterior_model):
    """A frequent word with its truth held fixed (the prior negligible), and a word with fewer contexts than
    dimensions with its truth drawn from the prior (where the posterior is exact): 1,000 replications of D
    coordinates each; 0.95 +- 0.015 is over 4 Monte Carlo standard errors."""
    model, n_contexts = posterior_model, np.diff(embedded_cooccurrence.indptr)
    frequent = int(np.argmax(n_contexts))
    rare = int(np.flatnonzero((n_contexts <= DIM) & (n_contexts >= 3))[0])
    fitter = WordFitter(embedded_cooccurrence, model.context_embedding_, model.context_bias_, 100.0, 0.75)
    simulator = RowSimulator(fitter, model.bias_, {"frequent": frequent, "rare": rare}, prior=model.prior_,
                             center_vectors=model.embedding_, sigma2=model.sigma2_)
    generator = np.random.default_rng(3)
    fixed = [simulator.truth["frequent"]] * 1000
    assert coordinate_coverage(simulator, "frequent", fixed, generator) == pytest.approx(0.95, abs=0.015)
    drawn = generator.multivariate_normal(model.prior_.mean, model.prior_.covariance, size=1000)
    assert coordinate_coverage(simulator, "rare", drawn, generator) == pytest.approx(0.95, abs=0.015)
    # and the check can fail: without the prior's share of the covariance, the rare word's intervals are too narrow
    narrow = RowSimulator(fitter, model.bias_, {"rare": rare}, prior=model.prior_.__class__(
        model.prior_.mean, model.prior_.covariance, 100.0, model.prior_.n_rows), center_vectors=model.embedding_,
        sigma2=model.sigma2_)
    assert coordinate_coverage(narrow, "rare", drawn, generator) < 0.85


def test_posterior_options_are_checked(embedded_cooccurrence, trained):
    with pytest.raises(ValueError, match="prior_strength must be a finite number > 0"):
        glovev_ext.GloVeVEstimator(DIM, pretrained=trained, point_estimate="posterior", prior_strength=0.0,
                                   progress=False).fit(embedded_cooccurrence)
    with pytest.raises(ValueError, match="n_sweeps must be >= 1"):
        glovev_ext.GloVeVEstimator(DIM, pretrained=trained, point_estimate="alternating", n_sweeps=0,
                                   progress=False).fit(embedded_cooccurrence)
    tiny = glovev_ext.CooccurrenceVectorizer(min_count=1, progress=False).fit_transform(["a b c d e f g h"] * 10)
    with pytest.raises(ValueError, match="0 words have more contexts than n_components = 7 .*the prior of "
                                         "point_estimate='posterior' needs more than 7"):
        glovev_ext.GloVeVEstimator(7, epochs=2, n_sweeps=0, random_state=0, progress=False).fit(tiny)
    with pytest.raises(ValueError, match="use point_estimate='trained' with conditioning='paper'"):
        glovev_ext.GloVeVEstimator(2, conditioning="paper", progress=False).fit(tiny)


def test_new_rows_get_their_posterior_with_a_free_bias(embedded_cooccurrence, posterior_model):
    """conditional_fit (and so fit_subcorpora) of a posterior model: the joint posterior of [w, b] under the prior on
    w and a flat one on b, solved whole by numpy, against the profiled solve."""
    X, model = embedded_cooccurrence, posterior_model
    n_contexts = np.diff(X.indptr)
    chosen = [int(np.argmax(n_contexts)), *np.flatnonzero((n_contexts > DIM + 1) & (n_contexts < 3 * DIM))[:2],
              *np.flatnonzero((n_contexts >= 2) & (n_contexts <= DIM))[:2], int(np.argmin(n_contexts))]
    rows = X[chosen]
    fit = model.conditional_fit(rows)
    prior = model.prior_
    precision = np.linalg.inv(prior.covariance)
    for k in range(len(chosen)):
        row = rows.getrow(k)
        if row.nnz < 2:
            assert np.isnan(fit.embedding[k]).all() and not fit.covariance.defined[k]
            continue
        f = glove_weights(row.data)
        design = np.hstack([model.context_embedding_[row.indices], np.ones((row.nnz, 1))])
        target = np.log(row.data) - model.context_bias_[row.indices]
        if row.nnz > DIM + 1:
            solution = np.linalg.lstsq(design * np.sqrt(f)[:, None], target * np.sqrt(f), rcond=None)[0]
            s2 = float(np.sum(f * (target - design @ solution) ** 2) / (row.nnz - DIM - 1))
            assert fit.covariance.dof[k] == row.nnz - DIM - 1
        else:
            s2 = fit.sigma2[k]  # pooled over the rows given
            assert not np.isfinite(fit.covariance.dof[k])
        joint = design.T @ (f[:, None] * design)
        joint[:DIM, :DIM] += s2 * precision
        right = design.T @ (f * target)
        right[:DIM] += s2 * precision @ prior.mean
        solution = np.linalg.solve(joint, right)
        np.testing.assert_allclose(fit.embedding[k], solution[:DIM], rtol=1e-7, atol=1e-10)
        assert fit.bias[k] == pytest.approx(solution[DIM], rel=1e-7, abs=1e-10)
        assert fit.sigma2[k] == pytest.approx(s2, rel=1e-9)
        np.testing.assert_allclose(fit.covariance[k], s2 * np.linalg.inv(joint)[:DIM, :DIM], rtol=1e-6,
                                   atol=1e-12 * s2)
    np.testing.assert_array_equal(model.transform(rows[:-1]), fit.embedding[:-1])
    with pytest.raises(ValueError, match="fewer than 2 contexts"):
        model.transform(rows)


def test_a_hessian_that_rounding_made_indefinite_still_gets_a_posterior():
    """Cholesky of ``H + s2 P`` fails when ``s2 P`` is below the rounding of a nearly singular ``H``; the whitened
    eigen route then gives the inverse with ``H``'s rounding negatives set to 0 (checked against numpy's)."""
    generator = np.random.default_rng(0)
    root = generator.normal(size=(5, 5))
    precision = root @ root.T + np.eye(5)
    design = generator.normal(size=(3, 5))
    hessian = design.T @ design - 1e-9 * np.eye(5)  # rank 3, pushed just below zero along the other two
    sigma2 = 1e-12
    factor, mean, share = posterior(hessian, np.ones(5), sigma2, 4.0, precision, np.zeros(5), Workspace(5, 1))
    whitening = np.linalg.inv(np.linalg.cholesky(precision))
    values, vectors = np.linalg.eigh(whitening @ hessian @ whitening.T)
    values = np.clip(values, 0.0, None)
    expected = whitening.T @ vectors @ np.diag(1 / (values + sigma2)) @ vectors.T @ whitening
    np.testing.assert_allclose(factor.dense(), sigma2 * expected, rtol=1e-6, atol=1e-9 * np.abs(sigma2 * expected).max())
    np.testing.assert_allclose(mean, expected @ np.ones(5), rtol=1e-6)
    assert share == pytest.approx(np.mean(sigma2 / (values + sigma2)), rel=1e-9) and factor.dof == 4.0
    assert np.all(np.linalg.eigvalsh(factor.dense()) > 0)


@pytest.mark.parametrize("branch", ["cholesky", "whitened"])
def test_the_share_is_one_minus_the_datas_part_of_the_precision_and_can_be_left_out(branch):
    """``1 - tr((H + s2 P)^{-1} H) / D`` against numpy's inverse; ``with_share=False`` gives the same factor and mean
    bit for bit, and NaN for the share (the halves' posteriors and the simulations do not use it)."""
    generator = np.random.default_rng(1)
    root = generator.normal(size=(5, 5))
    precision = root @ root.T + np.eye(5)
    design = generator.normal(size=(8 if branch == "cholesky" else 3, 5))
    hessian = design.T @ design - (0.0 if branch == "cholesky" else 1e-9) * np.eye(5)
    sigma2, rhs, shift = (0.3 if branch == "cholesky" else 1e-12), generator.normal(size=5), generator.normal(size=5)
    factor, mean, share = posterior(hessian, rhs, sigma2, 3.0, precision, shift, Workspace(5, 1))
    if branch == "cholesky":
        expected = 1.0 - np.trace(np.linalg.solve(hessian + sigma2 * precision, hessian)) / 5
    else:  # H's rounding negatives set to 0 in the prior's whitened coordinates (the test above)
        whitening = np.linalg.inv(np.linalg.cholesky(precision))
        values = np.clip(np.linalg.eigvalsh(whitening @ hessian @ whitening.T), 0.0, None)
        expected = np.mean(sigma2 / (values + sigma2))
    assert share == pytest.approx(float(np.clip(expected, 0.0, 1.0)), rel=1e-6, abs=1e-9)
    without = posterior(hessian, rhs, sigma2, 3.0, precision, shift, Workspace(5, 1), with_share=False)
    np.testing.assert_array_equal(without[0].dense(), factor.dense())
    np.testing.assert_array_equal(without[1], mean)
    assert np.isnan(without[2])
