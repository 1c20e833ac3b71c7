"""The noise scale calibrated on two halves (docs/method.md 6.13), with its slope in each row's concentration over
groups (6.21): its pieces against numpy and by hand, and by simulation."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import glovev_ext
from glovev_ext.covariance import NoiseScale
from glovev_ext.counting import CooccurrenceMatrix
from glovev_ext.covariance.noise_scale import (MIN_RELATIVE_FACTOR, HalfComparison, ScaleCurve, compare_half_rows,
                                               noise_scale_from, scale_curve)
from glovev_ext.covariance.prior import shared_prior_difference
from glovev_ext.glove import GloVeParameters

DIM = 8


@pytest.fixture(scope="module")
def posterior_model(small_model, embedded_cooccurrence) -> glovev_ext.GloVeVEstimator:
    trained = GloVeParameters(small_model.embedding_, small_model.context_embedding_, small_model.bias_,
                              small_model.context_bias_, costs=np.empty(0))
    return glovev_ext.GloVeVEstimator(DIM, pretrained=trained, n_sweeps=0, n_jobs=2,
                                      progress=False).fit(embedded_cooccurrence)


def options(model) -> dict:
    return {"context_vectors": model.context_embedding_, "context_biases": model.context_bias_,
            "x_max": model.x_max, "alpha": model.alpha}


def test_a_curve_interpolates_in_log_total_and_is_constant_beyond_its_knots():
    curve = ScaleCurve(np.log([10.0, 100.0, 1000.0]), np.array([2.0, 1.5, 1.1]), np.array([60, 60, 60]))
    totals = np.array([1.0, 10.0, np.sqrt(10.0 * 100.0), 100.0, 300.0, 1000.0, 1e6])
    by_hand = [2.0, 2.0, 1.75, 1.5, 1.5 + (1.1 - 1.5) * np.log(3.0) / np.log(10.0), 1.1, 1.1]
    np.testing.assert_allclose(curve(totals), by_hand, rtol=1e-12)
    assert curve.to_dict() == {"total": [10.0, 100.0, 1000.0], "factor": [2.0, 1.5, 1.1], "n_words": [60, 60, 60]}


def test_each_kind_of_row_takes_its_own_curve_or_the_other_kinds():
    own = ScaleCurve(np.log([10.0]), np.array([2.0]), np.array([60]))
    pooled = ScaleCurve(np.log([10.0]), np.array([3.0]), np.array([60]))
    totals, kinds = np.array([5.0, 50.0, 500.0]), np.array([True, False, True])
    np.testing.assert_array_equal(NoiseScale(own, pooled)(totals, kinds), [3.0, 2.0, 3.0])
    np.testing.assert_array_equal(NoiseScale(own, ScaleCurve.empty())(totals, kinds), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(NoiseScale(ScaleCurve.empty(), pooled)(totals), [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(NoiseScale.identity()(totals, kinds), np.ones(3))
    assert NoiseScale.identity().is_identity and not NoiseScale(own, ScaleCurve.empty()).is_identity
    assert str(NoiseScale(own, ScaleCurve.empty())) == "own s2: 2.00 at 10; pooled s2: -"
    assert str(NoiseScale.identity()) == "1 (the model's own noise)"


def test_a_scale_calibrated_on_halves_of_groups_caps_the_degrees_of_freedom_and_says_so():
    own = ScaleCurve(np.log([10.0]), np.array([2.0]), np.array([60]))
    documents, books = NoiseScale(own, ScaleCurve.empty()), NoiseScale(own, ScaleCurve.empty()).of_groups(38)
    assert documents.max_dof == np.inf and documents.n_groups is None and "n_groups" not in documents.to_dict()
    assert books.max_dof == 37 and books.to_dict() == {**documents.to_dict(), "n_groups": 38}
    assert str(books) == "own s2: 2.00 at 10; pooled s2: - (halves of 38 groups: at most 37 df)"
    np.testing.assert_array_equal(books(np.array([5.0, 50.0])), documents(np.array([5.0, 50.0])))
    assert books.refined(residual(1.0)).n_groups == 38  # a second comparison keeps the unit


def test_several_halvings_pool_their_first_comparisons_and_take_the_first_halvings_refinement():
    first = NoiseScale(ScaleCurve(np.log([10.0, 100.0]), np.array([2.0, 3.0]), np.array([60, 60])),
                       ScaleCurve(np.log([5.0]), np.array([4.0]), np.array([60])))
    refined = NoiseScale(ScaleCurve(np.log([12.0, 90.0]), np.array([2.5, 3.3]), np.array([60, 60])),
                         ScaleCurve.empty())  # no pooled curve: its rows take the own curve
    pooled = NoiseScale(ScaleCurve(np.log([8.0, 30.0, 200.0]), np.array([1.8, 2.6, 3.5]), np.array([90, 90, 90])),
                        ScaleCurve(np.log([6.0]), np.array([3.0]), np.array([90])))
    corrected = pooled.corrected(first, refined)
    at = np.array([8.0, 30.0, 200.0])
    by_hand = np.array([1.8, 2.6, 3.5]) * (np.interp(np.log(at), np.log([12.0, 90.0]), [2.5, 3.3])
                                            / np.interp(np.log(at), np.log([10.0, 100.0]), [2.0, 3.0]))
    np.testing.assert_allclose(corrected.own.factors, by_hand, rtol=1e-12)
    np.testing.assert_allclose(corrected.pooled.factors,
                               [3.0 * np.interp(np.log(6.0), np.log([12.0, 90.0]), [2.5, 3.3]) / 4.0], rtol=1e-12)
    np.testing.assert_array_equal(corrected.own.log_totals, pooled.own.log_totals)
    np.testing.assert_array_equal(corrected.own.n_words, pooled.own.n_words)
    several = replace(corrected, n_groups=38, n_halvings=3)
    assert several.to_dict()["n_halvings"] == 3 and "n_halvings" not in corrected.to_dict()
    assert str(several).endswith("(3 halvings of 38 groups: at most 37 df)")
    assert str(replace(corrected, n_halvings=2)).endswith("(2 halvings of the documents)")
    comparisons = [HalfComparison(*(np.arange(3.0) + k for _ in range(3)), np.array([True, False, True]),
                                  np.array([False, True, False]), np.full(3, 0.1 * k), np.full(3, 2.0 + k),
                                  np.full(3, 0.5)) for k in range(2)]
    joined = HalfComparison.joined(comparisons)
    np.testing.assert_array_equal(joined.total, [0.0, 1.0, 2.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(joined.pooled, [True, False, True] * 2)
    np.testing.assert_array_equal(joined.concentration, [0.0] * 3 + [0.1] * 3)
    np.testing.assert_array_equal(joined.along, [2.0] * 3 + [3.0] * 3)


def test_the_estimator_pools_several_halvings_as_their_pieces_say(posterior_model, embedded_cooccurrence, halves,
                                                                  embedded_vectorizer):
    documents = list(glovev_ext.load_default_corpus(max_documents=6000))
    first = np.random.default_rng(6).random(len(documents)) < 0.5
    other = tuple(embedded_vectorizer.transform([d for d, a in zip(documents, first) if a == side])
                  for side in (True, False))
    model, X = posterior_model, embedded_cooccurrence
    common = (options(model), model.prior_, model._fallback_sigma2)

    moved = {"translation": "estimate"}  # each comparison without its halves' translation, as the estimator takes it
    comparisons = [compare_half_rows(pair, *common, **moved) for pair in (halves, other)]
    one = noise_scale_from(comparisons[0])
    refined = one.refined(compare_half_rows(halves, *common, noise_scale=one, **moved))
    by_pieces = noise_scale_from(HalfComparison.joined(comparisons)).corrected(one, refined)
    pooled = clone(model).fit(X, halves=[halves, other]).noise_scale_
    assert pooled.n_halvings == 2 and pooled.n_groups is None
    for curve, expected in ((pooled.own, by_pieces.own), (pooled.pooled, by_pieces.pooled)):
        np.testing.assert_allclose(curve.factors, expected.factors, rtol=1e-10)
        np.testing.assert_allclose(curve.log_totals, expected.log_totals, rtol=1e-12)
    # a list of one pair is that pair, and so is a list of two matrices
    alone = clone(model).fit(X, halves=halves).noise_scale_
    assert clone(model).fit(X, halves=[halves]).noise_scale_.to_dict() == alone.to_dict() != pooled.to_dict()
    assert clone(model).fit(X, halves=list(halves)).noise_scale_.to_dict() == alone.to_dict()
    np.testing.assert_allclose(alone.own.factors, refined.own.factors, rtol=1e-10)


def test_the_halves_translation_is_the_least_squares_over_their_rows_of_largest_total(posterior_model, halves):
    """Against the halves' posteriors of the same rows by ``conditional_fit`` and stacked, whitened least squares:
    ``compare_half_rows(translation="estimate")`` compares as it does given that translation."""
    model = posterior_model
    common = (halves, options(model), model.prior_, model._fallback_sigma2)
    estimated = compare_half_rows(*common, translation="estimate")
    totals = np.asarray(halves[0].sum(axis=1)).ravel() + np.asarray(halves[1].sum(axis=1)).ravel()
    rows = np.sort(np.argsort(-totals, kind="stable")[:1000])
    fits = [model.conditional_fit(half[rows]) for half in halves]  # identity noise scale: the same posteriors
    precision = model.prior_.precision
    blocks, right = [], []
    for k in range(rows.size):
        if not (fits[0].covariance.has_covariance(k) and fits[1].covariance.has_covariance(k)):
            continue
        a, b = fits[0].covariance[k], fits[1].covariance[k]
        lower = np.linalg.cholesky(a + b - a @ precision @ b - b @ precision @ a)
        blocks.append(np.linalg.solve(lower, np.eye(DIM) - (a + b) @ precision / 2))
        right.append(np.linalg.solve(lower, fits[0].embedding[k] - fits[1].embedding[k]))
    assert len(blocks) > 500
    by_hand = np.linalg.lstsq(np.vstack(blocks), np.concatenate(right), rcond=None)[0]
    assert np.linalg.norm(by_hand) > 1e-3
    given = compare_half_rows(*common, translation=by_hand)
    as_fitted = compare_half_rows(*common)
    np.testing.assert_array_equal(estimated.total, given.total)
    for name in ("wald_per_dim", "expected", "along", "gain"):
        np.testing.assert_allclose(getattr(estimated, name), getattr(given, name), rtol=1e-6, atol=1e-12)
    np.testing.assert_array_equal(estimated.total, as_fitted.total)  # the same words: the translation moves none out
    assert not np.allclose(estimated.wald_per_dim, as_fitted.wald_per_dim)
    with pytest.raises(ValueError, match="translation must be"):
        compare_half_rows(*common, translation="remove")


def test_n_groups_goes_with_halves(posterior_model, embedded_cooccurrence, halves):
    with pytest.raises(ValueError, match="give it with halves"):
        clone(posterior_model).fit(embedded_cooccurrence, n_groups=10)
    with pytest.raises(ValueError, match="n_groups"):
        clone(posterior_model).fit(embedded_cooccurrence, halves=halves, n_groups=1)


def test_the_knots_are_each_bins_mean_wald_over_its_mean_expectation():
    rng = np.random.default_rng(0)
    total = np.exp(rng.uniform(np.log(3.0), np.log(3000.0), 4000))
    expected = np.where(rng.random(4000) < 0.5, 1.0, 1.5)
    wald = rng.gamma(2.0, 1.0, 4000)
    curve = scale_curve(total, wald, expected, bin_ratio=2.0, min_words=50)
    logs = np.log(total)
    edges = logs.min() + np.log(2.0) * np.arange(1, 11)
    assert curve.log_totals.size == 10  # ten bins of width log 2 over a range of log 1000
    for k in range(10):
        members = (logs >= (edges[k - 1] if k else -np.inf)) & (logs < edges[k] if k < 9 else np.isfinite(logs))
        assert curve.n_words[k] == members.sum()
        assert curve.log_totals[k] == pytest.approx(logs[members].mean())
        assert curve.factors[k] == pytest.approx(wald[members].mean() / expected[members].mean())
    # the two kinds of a comparison are calibrated apart; words of mixed kind in neither
    kind = rng.integers(0, 3, 4000)
    scale = noise_scale_from(HalfComparison(total, wald, expected, kind == 1, kind == 0, np.full(4000, np.nan),
                                            *no_excess_along(4000)))
    for curve, k in ((scale.own, 0), (scale.pooled, 1)):
        by_hand = scale_curve(total[kind == k], wald[kind == k], expected[kind == k])
        np.testing.assert_array_equal(curve.factors, by_hand.factors)


def test_small_bins_join_their_neighbours_and_too_few_words_give_no_knots():
    total = np.array([1.0] * 60 + [100.0] * 3 + [1e4] * 2)
    curve = scale_curve(total, np.ones(65) * 2.0, np.ones(65), min_words=50)
    assert curve.n_words.tolist() == [65]  # the lone bins above join the first, none is counted twice
    assert curve.factors.tolist() == [2.0]
    assert scale_curve(total[:40], np.ones(40), np.ones(40), min_words=50).factors.size == 0
    none = HalfComparison(total[:40], np.ones(40), np.ones(40), np.zeros(40, bool), np.ones(40, bool),
                          np.full(40, np.nan), *no_excess_along(40))
    assert noise_scale_from(none).is_identity


def no_excess_along(n: int) -> tuple:
    """The parts along the direction of a comparison's ``n`` words at their expectation, and their gains."""
    return np.ones(n), np.ones(n)


def residual(ratio: float, n: int = 60, total: float = 100.0) -> HalfComparison:
    """A second comparison whose rows (all with their own s2) show ``ratio`` at ``total``."""
    return HalfComparison(np.full(n, total), np.full(n, ratio), np.ones(n), np.zeros(n, bool), np.ones(n, bool),
                          np.full(n, np.nan), *no_excess_along(n))


@pytest.mark.parametrize("first, ratio, expected", [
    (2.0, 1.25, np.exp(np.log(2.0) ** 2 / (np.log(2.0) - np.log(1.25)))),  # the secant step: 2.78, in [2.5, 3.125]
    (2.0, 0.8, 2.0 * 0.8),  # overshot: the secant's 1.69 is kept within [1.28, 1.6]
    (1.02, 1.25, 1.02 * 1.25),  # a first scale within 5 % of 1: the residual alone
    (2.0, 1.0, 2.0)])  # calibrated: unchanged
def test_a_refined_scale_takes_a_secant_step_through_both_comparisons(first, ratio, expected):
    scale = NoiseScale(ScaleCurve(np.array([np.log(100.0)]), np.array([first]), np.array([60])), ScaleCurve.empty())
    refined = scale.refined(residual(ratio))
    assert refined.own.factors == pytest.approx([expected], rel=1e-12)
    assert refined.own.log_totals == pytest.approx([np.log(100.0)]) and refined.pooled.factors.size == 0
    # a residual on other knots: the first scale there times the residual
    moved = scale.refined(residual(ratio, total=400.0))
    assert moved.own.factors == pytest.approx([first * ratio], rel=1e-12)


def test_comparisons_are_taken_in_order_with_a_bounded_number_waiting():
    """The halves' comparisons run on threads: their results come back in block order, and no more than ``width``
    blocks (each holding two blocks of factors) are submitted and not yet taken."""
    from concurrent.futures import ThreadPoolExecutor
    from glovev_ext.covariance.noise_scale import _in_order
    submitted = []
    with ThreadPoolExecutor(3) as pool:
        def futures():
            for k in range(10):
                submitted.append(k)
                yield pool.submit(lambda k=k: k * k)

        taken = []
        for result in _in_order(futures(), 4):
            assert len(submitted) - len(taken) <= 4
            taken.append(result)
    assert taken == [k * k for k in range(10)]


def test_the_shared_prior_difference_is_the_variance_of_two_posteriors_by_monte_carlo():
    rng = np.random.default_rng(1)
    dim, s2, n = 4, 0.5, 200_000
    prior_covariance = np.diag([2.0, 1.0, 0.5, 0.25])
    precision, mean = np.linalg.inv(prior_covariance), np.array([1.0, -1.0, 0.5, 0.0])
    hessians = [a.T @ a for a in (rng.normal(size=(6, dim)), rng.normal(size=(9, dim)))]
    covariances = [s2 * np.linalg.inv(h + s2 * precision) for h in hessians]
    truth = rng.multivariate_normal(mean, prior_covariance, n)
    means = []
    for hessian, covariance in zip(hessians, covariances):
        noise = rng.multivariate_normal(np.zeros(dim), s2 * hessian, n)  # A^T W e of the row's own noise
        means.append((truth @ hessian + noise + s2 * precision @ mean) @ covariance.T / s2)
    empirical = np.cov(means[0] - means[1], rowvar=False)
    np.testing.assert_allclose(empirical, shared_prior_difference(*covariances, precision), atol=0.01)


@pytest.mark.parametrize("moved", [False, True])
def test_compare_half_rows_matches_each_words_wald_statistic_by_hand(posterior_model, halves, moved):
    """With a translation ``t`` between the halves, each difference loses ``(I - (S_A + S_B) P / 2) t``."""
    model = posterior_model
    translation = np.random.default_rng(5).normal(scale=0.2, size=DIM) if moved else None
    comparison = compare_half_rows(halves, options(model), model.prior_, model._fallback_sigma2,
                                   translation=translation)
    fits = [model.conditional_fit(half) for half in halves]  # identity noise scale: the same posteriors
    precision = model.prior_.precision
    both = np.flatnonzero(np.isfinite(fits[0].embedding).all(axis=1) & np.isfinite(fits[1].embedding).all(axis=1))
    totals = [np.asarray(half.sum(axis=1)).ravel() for half in halves]
    by_hand = []
    for i in both:
        a, b = fits[0].covariance[int(i)], fits[1].covariance[int(i)]
        joint = a + b - a @ precision @ b - b @ precision @ a
        inverse_dofs = 1.0 / fits[0].covariance.dof[i], 1.0 / fits[1].covariance.dof[i]
        spread = np.trace(a) ** 2 * inverse_dofs[0] + np.trace(b) ** 2 * inverse_dofs[1]
        nu = np.inf if spread == 0 else (np.trace(a) + np.trace(b)) ** 2 / spread
        if np.linalg.cond(joint) > 1e10 or nu <= 4:
            continue
        difference = fits[0].embedding[i] - fits[1].embedding[i]
        if moved:
            difference = difference - (np.eye(DIM) - (a + b) @ precision / 2) @ translation
        # the direction in which noise in the word's strength moves each half's posterior mean, (I - Sigma P) u, with u
        # from the sum of the two means (which their difference does not move)
        directions = []
        unit = fits[0].embedding[i] + fits[1].embedding[i]
        unit /= np.linalg.norm(unit)
        for covariance in (a, b):
            direction = unit - covariance @ precision @ unit
            directions.append(direction / np.linalg.norm(direction))
        m = (directions[0] + directions[1]) / np.linalg.norm(directions[0] + directions[1])
        whole = difference @ np.linalg.solve(joint, difference)
        along = (m @ np.linalg.solve(joint, difference)) ** 2 / (m @ np.linalg.solve(joint, m))
        gain = (m @ a @ m + m @ b @ m) * (m @ np.linalg.solve(joint, m))
        by_hand.append((np.sqrt(totals[0][i] * totals[1][i]), whole / DIM, 1.0 if np.isinf(nu) else nu / (nu - 2),
                        (whole - along) / (DIM - 1), along, gain))
    assert comparison.total.size == len(by_hand) > 500
    by_hand = np.array(by_hand)
    whole_per_dim = (comparison.wald_per_dim * (DIM - 1) + comparison.along) / DIM  # the parts add up to the whole
    np.testing.assert_allclose(np.column_stack([comparison.total, whole_per_dim, comparison.expected]), by_hand[:, :3],
                               rtol=1e-8)
    np.testing.assert_allclose(np.column_stack([comparison.wald_per_dim, comparison.along, comparison.gain]),
                               by_hand[:, 3:], rtol=1e-6)


def test_the_estimator_scales_each_rows_s2_and_the_priors_noise_by_its_total(posterior_model, embedded_cooccurrence,
                                                                             halves):
    calibrated = clone(posterior_model).fit(embedded_cooccurrence, halves=halves)
    scale = calibrated.noise_scale_
    assert scale.own.factors.size and scale.own.factors.min() > 0  # D = 8: too few pooled rows for a curve
    totals = np.asarray(embedded_cooccurrence.sum(axis=1)).ravel()
    pooled = np.isinf(posterior_model.covariance_.dof)
    assert pooled.any() and not pooled.all()  # both kinds of row are checked (pooled ones on the own curve)
    np.testing.assert_allclose(calibrated.sigma2_, posterior_model.sigma2_ * scale(totals, pooled), rtol=1e-12)
    # each word's covariance widened along its vector by the scale's factor at its total (docs/method.md 6.22)
    store, precision = calibrated.covariance_, calibrated.prior_.precision
    widened = np.flatnonzero(scale.along_factor(totals) > 1.0)
    assert scale.along.factors.max() > 1.05 and widened.size > 100
    for i in widened[::40]:
        factor = store.factor(int(i))
        base = factor.unwidened
        unit = calibrated.embedding_[i] / np.linalg.norm(calibrated.embedding_[i])
        direction = unit - base.dense() @ precision @ unit
        direction /= np.linalg.norm(direction)
        ratio = (direction @ factor.dense() @ direction) / (direction @ base.dense() @ direction)
        assert ratio == pytest.approx(scale.along_factor(totals[i]), rel=1e-9)
        np.testing.assert_allclose(factor.dense() - base.dense(), np.outer(store.along[i], store.along[i]),
                                   atol=1e-15)
    # the same scale given to the estimator reproduces the calibrated fit
    carried = clone(posterior_model).set_params(noise_scale=scale).fit(embedded_cooccurrence)
    np.testing.assert_array_equal(carried.embedding_, calibrated.embedding_)
    np.testing.assert_array_equal(carried.covariance_[5], calibrated.covariance_[5])
    # new rows: their own s2 times the scale at their own totals
    rows = halves[0][:300]
    plain, scaled = posterior_model.conditional_fit(rows), calibrated.conditional_fit(rows)
    fitted = np.isfinite(plain.sigma2)
    row_totals = np.asarray(rows.sum(axis=1)).ravel()
    row_pooled = np.isinf(plain.covariance.dof)
    np.testing.assert_allclose(scaled.sigma2[fitted], plain.sigma2[fitted] * scale(row_totals, row_pooled)[fitted],
                               rtol=1e-12)


@pytest.mark.parametrize("with_halves", [True, False])
def test_under_a_budget_the_heap_goes_back_after_each_comparison_and_before_the_posteriors_once(
        posterior_model, embedded_cooccurrence, halves, monkeypatch, with_halves):
    from glovev_ext.covariance import estimator as module
    events = []

    def recorded(name, function):
        def call(*args, **kwargs):
            events.append(name)
            return function(*args, **kwargs)
        return call

    for name in ("trim_heap", "compare_half_rows", "row_posteriors"):
        monkeypatch.setattr(module, name, recorded(name, getattr(module, name)))
    model = clone(posterior_model).set_params(max_memory="1G")
    model.fit(embedded_cooccurrence, halves=halves if with_halves else None)
    n_comparisons = 1 + (with_halves and not model.noise_scale_.is_identity)
    expected = ["compare_half_rows", "trim_heap"] * n_comparisons if with_halves else ["trim_heap"]
    assert events == [*expected, "row_posteriors"]
    if not with_halves:  # (the same branch with halves: one fit, not two, in the suite's time)
        events.clear()
        clone(posterior_model).fit(embedded_cooccurrence)
        assert events == ["row_posteriors"]  # no budget: the heap is left to the C library


def test_the_prior_takes_out_the_scaled_noise(posterior_model, embedded_cooccurrence):
    from glovev_ext.covariance.wls import WordFitter
    from glovev_ext.covariance.prior import row_optima
    fitter = WordFitter(embedded_cooccurrence, **options(posterior_model))
    optima = row_optima(fitter, posterior_model.bias_, 1)
    noise = optima.spread - optima.prior(1.0).covariance  # the mean noise covariance (no floor reached here)
    twice = optima.prior(1.0, lambda totals, pooled: np.full(np.shape(totals), 2.0)).covariance
    np.testing.assert_allclose(twice, optima.spread - 2.0 * noise, atol=1e-12)


def simulated_halves(model, matrix, shared: float, rng) -> tuple:
    """Two halves from known truth under GloVe-V's model: each row's true vector drawn from the fitted prior,
    its log counts ``C_K w + c`` plus noise of variance ``s2`` and, with ``shared > 0``, noise along the row's
    own contexts (``C_K u``, ``u ~ N(0, shared * Sigma_i)``) that its residuals cannot see, as documents do.
    Every count is shifted, row by row, above ``x_max`` (weight 1, so the weights do not depend on the noise;
    the row's free bias takes the shift)."""
    contexts, context_biases = model.context_embedding_, model.context_bias_
    sigma2 = np.where(np.isfinite(model.sigma2_), model.sigma2_, np.nanmedian(model.sigma2_))
    truths = rng.multivariate_normal(model.prior_.mean, model.prior_.covariance, matrix.shape[0])
    out = []
    for _ in range(2):
        data = np.empty_like(matrix.data)
        for i in range(matrix.shape[0]):
            a, b = matrix.indptr[i], matrix.indptr[i + 1]
            cols = matrix.indices[a:b]
            logs = contexts[cols] @ truths[i] + context_biases[cols] + rng.normal(size=cols.size) * np.sqrt(sigma2[i])
            if shared:
                logs += contexts[cols] @ rng.multivariate_normal(np.zeros(DIM), shared * model.covariance_[i])
            data[a:b] = np.exp(logs - logs.min() + np.log(model.x_max) + 0.01)
        out.append(sp.csr_matrix((data, matrix.indices.copy(), matrix.indptr.copy()), shape=matrix.shape))
    return tuple(out)


@pytest.mark.parametrize("shared", [0.0, 1.0])
def test_a_scale_calibrated_on_simulated_halves_calibrates_other_halves(posterior_model, embedded_cooccurrence,
                                                                        shared):
    model, rng = posterior_model, np.random.default_rng(11)
    common = (options(model), model.prior_, model._fallback_sigma2)
    calibration = simulated_halves(model, embedded_cooccurrence, shared, rng)
    scale = noise_scale_from(compare_half_rows(calibration, *common))
    if shared == 0:  # the model's own noise: nothing to scale
        assert np.all(np.abs(np.concatenate([scale.own.factors, scale.pooled.factors]) - 1.0) < 0.15), scale
    else:
        assert np.average(scale.own.factors, weights=scale.own.n_words) > 1.3, scale
    other = simulated_halves(model, embedded_cooccurrence, shared, rng)
    check = compare_half_rows(other, *common, noise_scale=scale)
    ratio = check.wald_per_dim.mean() / check.expected.mean()
    assert ratio == pytest.approx(1.0, abs=0.1)
    # the estimator's second comparison (NoiseScale.refined) keeps a scale that already calibrates
    refined = scale.refined(compare_half_rows(calibration, *common, noise_scale=scale))
    check = compare_half_rows(other, *common, noise_scale=refined)
    assert check.wald_per_dim.mean() / check.expected.mean() == pytest.approx(1.0, abs=0.1)


def test_halves_and_scales_that_cannot_be_used_are_refused(posterior_model, small_model, embedded_cooccurrence,
                                                           halves):
    X = embedded_cooccurrence
    with pytest.raises(ValueError, match="halves calibrate the noise scale of point_estimate='posterior'"):
        clone(small_model).fit(X, halves=halves)
    scale = NoiseScale(ScaleCurve(np.log([10.0]), np.array([2.0]), np.array([60])), ScaleCurve.empty())
    with pytest.raises(ValueError, match="or the estimator a noise_scale, not both"):
        clone(posterior_model).set_params(noise_scale=scale).fit(X, halves=halves)
    with pytest.raises(ValueError, match=r"halves must be two co-occurrence matrices \(a pair\), got 1"):
        clone(posterior_model).fit(X, halves=halves[:1])
    with pytest.raises(ValueError, match=r"halves\[1\] must be two co-occurrence matrices \(a pair\), got 3"):
        clone(posterior_model).fit(X, halves=[halves, (*halves, halves[0])])
    with pytest.raises(ValueError, match="halves is empty"):
        clone(posterior_model).fit(X, halves=[])
    with pytest.raises(ValueError, match=r"halves\[1\]\[0\] has shape \(4, 4\)"):
        clone(posterior_model).fit(X, halves=[halves, (sp.identity(4, format="csr"), halves[1])])
    with pytest.raises(ValueError, match=r"halves\[1\] has shape \(4, 4\); the halves must be in X's vocabulary"):
        clone(posterior_model).fit(X, halves=(halves[0], sp.identity(4, format="csr")))
    with pytest.raises(ValueError, match=r"Negative values in data: halves\[0\]"):
        clone(posterior_model).fit(X, halves=(-halves[0], halves[1]))
    with pytest.raises(TypeError, match="noise_scale must be a NoiseScale"):
        clone(posterior_model).set_params(noise_scale=2.0).fit(X)
    with pytest.raises(ValueError, match="point_estimate='trained' keeps the model's own noise"):
        clone(small_model).set_params(noise_scale=scale).fit(X)


def test_fit_corpus_refuses_a_one_shot_corpus_it_must_read_three_times():
    documents = glovev_ext.load_default_corpus(max_documents=50)
    estimator = glovev_ext.GloVeVEstimator(n_components=4, epochs=1)
    with pytest.raises(ValueError, match="reads the corpus more than once .* it is a one-shot iterator"):
        glovev_ext.fit_corpus(iter(documents), estimator=estimator, progress=False)
    fitted = glovev_ext.fit_corpus(iter(documents), estimator=estimator, calibrate_noise=False, progress=False)
    assert fitted.estimator.noise_scale_.is_identity
    # an estimator with a noise scale of its own is not calibrated again, so the corpus is read once
    scale = NoiseScale(ScaleCurve(np.log([10.0]), np.array([2.0]), np.array([60])), ScaleCurve.empty())
    fitted = glovev_ext.fit_corpus(iter(documents), estimator=estimator.set_params(noise_scale=scale), progress=False)
    assert fitted.estimator.noise_scale_.to_dict() == scale.to_dict()


def test_new_rows_are_the_same_at_any_number_of_threads(posterior_model, halves):
    from glovev_ext.covariance.wls import WordFitter
    from glovev_ext.covariance.prior import free_row_posteriors
    model = posterior_model
    fits = [free_row_posteriors(WordFitter(halves[0], **options(model)), model.prior_, model._fallback_sigma2,
                                noise_scale=lambda totals, pooled: 1.0 + pooled, n_jobs=n_jobs) for n_jobs in (1, 2)]
    for one, two in zip(fits[0][:3], fits[1][:3]):
        np.testing.assert_array_equal(one, two)
    rows = np.flatnonzero(fits[0][3].defined)
    assert rows.size > 1000
    np.testing.assert_array_equal(fits[0][3][rows[::97]], fits[1][3][rows[::97]])


@pytest.mark.parametrize("n_jobs", [1, 3])
def test_the_block_by_block_comparison_equals_the_comparison_of_two_whole_stores(posterior_model, halves, n_jobs,
                                                                                 monkeypatch):
    """compare_half_rows fits the halves block by block and lets each block go; comparing the words of two whole
    stores (what it held before, two full sets of covariances) gives the same bits at any number of threads (the
    same solves), and numpy's condition and LU solve the same words and statistics to rounding. The fits and the
    comparisons share ``n_jobs`` threads."""
    import threading
    from glovev_ext.covariance import noise_scale as module
    from glovev_ext.covariance.along import along_direction, split_wald
    from glovev_ext.covariance._condition import solve_within
    from glovev_ext.covariance.noise_scale import _MAX_DIFFERENCE_CONDITION, _MIN_DOF, _welch_satterthwaite
    from glovev_ext.covariance.prior import free_row_posteriors, shared_prior_difference
    from glovev_ext.covariance.wls import WordFitter
    model = posterior_model
    live_threads = []

    def compare_block(*arguments):
        live_threads.append({thread.name for thread in threading.enumerate() if thread.name.startswith("glovev-")})
        return original(*arguments)

    original = module._compare_block
    monkeypatch.setattr(module, "_compare_block", compare_block)
    scale = lambda totals, pooled: 1.0 + 0.5 * pooled  # noqa: E731 - a scale that tells the kinds of rows apart
    comparison = compare_half_rows(halves, options(model), model.prior_, model._fallback_sigma2, noise_scale=scale,
                                   n_jobs=n_jobs)
    assert len(live_threads) > 1 and max(len(names) for names in live_threads) == n_jobs
    (vectors_a, _, _, store_a), (vectors_b, _, _, store_b) = (
        free_row_posteriors(WordFitter(half, **options(model)), model.prior_, model._fallback_sigma2,
                            noise_scale=scale) for half in halves)
    kept, wald, same_solves, expected = [], [], [], []
    for i in np.flatnonzero(np.isfinite(vectors_a).all(axis=1) & np.isfinite(vectors_b).all(axis=1)):
        a, b = store_a[int(i)], store_b[int(i)]
        joint = shared_prior_difference(a, b, model.prior_.precision)
        nu = _welch_satterthwaite(np.trace(a), np.trace(b), store_a.dof[i], store_b.dof[i])
        if np.linalg.cond(joint) > _MAX_DIFFERENCE_CONDITION or nu <= _MIN_DOF:
            continue
        difference = vectors_a[i] - vectors_b[i]
        directions = [along_direction(store.factor(int(i)), vectors_a[i] + vectors_b[i], model.prior_.precision)
                      for store in (store_a, store_b)]
        direction = directions[0] + directions[1]
        direction /= np.linalg.norm(direction)
        solved = solve_within(joint, np.column_stack([difference, direction]), _MAX_DIFFERENCE_CONDITION)
        kept.append(i)
        wald.append(float(difference @ np.linalg.solve(joint, difference)) / DIM)
        along, across, _ = split_wald(difference, solved[:, 0], direction, solved[:, 1])
        same_solves.append(across / (DIM - 1))
        expected.append(1.0 if np.isinf(nu) else nu / (nu - 2.0))
    totals = [np.asarray(half.sum(axis=1)).ravel()[kept] for half in halves]
    pooled_a, pooled_b = np.isinf(store_a.dof[kept]), np.isinf(store_b.dof[kept])
    assert len(kept) > 500 and pooled_a.any() and (~pooled_a).any()
    for got, want in ((comparison.total, np.sqrt(totals[0] * totals[1])), (comparison.wald_per_dim, same_solves),
                      (comparison.expected, expected), (comparison.pooled, pooled_a & pooled_b),
                      (comparison.own, ~pooled_a & ~pooled_b)):
        np.testing.assert_array_equal(got, np.asarray(want))
    np.testing.assert_allclose((comparison.wald_per_dim * (DIM - 1) + comparison.along) / DIM, wald, rtol=1e-9)


# The slope in each row's concentration over groups (docs/method.md 6.21)


def sloped(slopes, centres, factors=(2.0, 4.0), totals=(10.0, 1000.0)) -> ScaleCurve:
    return ScaleCurve(np.log(totals), np.array(factors, dtype=float), np.array([60] * len(factors)),
                      np.array(slopes, dtype=float), np.array(centres, dtype=float))


def test_each_knots_slope_is_the_expectation_weighted_regression_of_the_ratio_on_concentration():
    rng = np.random.default_rng(0)
    n = 20_000
    total = np.exp(rng.uniform(np.log(10.0), np.log(10_000.0), n))
    concentration = rng.beta(1.0, 4.0, n)
    expected = np.where(rng.random(n) < 0.5, 1.0, 1.4)
    truth = 0.6 + 3.0 * concentration  # a level plus a multiple of 1 / n_eff, as sampling groups gives
    wald = expected * truth * rng.gamma(25.0, 1 / 25.0, n)
    curve = scale_curve(total, wald, expected, concentration)
    plain = scale_curve(total, wald, expected)
    np.testing.assert_array_equal(curve.factors, plain.factors)  # the level is the bins' as before
    assert plain.slopes is None and not plain.by_concentration and curve.by_concentration
    logs = np.log(total)
    edges = np.concatenate([[-np.inf], logs.min() + np.log(2.0) * np.arange(1, curve.factors.size), [np.inf]])
    for k in range(curve.factors.size):
        members = (logs >= edges[k]) & (logs < edges[k + 1])
        ratio, x, weights = wald[members] / expected[members], concentration[members], expected[members]
        slope, _ = np.polyfit(x, ratio, 1, w=np.sqrt(weights))  # weighted least squares, weights E
        centre = np.average(x, weights=weights)
        assert curve.centres[k] == pytest.approx(centre, rel=1e-10)
        assert curve.slopes[k] == pytest.approx(slope / curve.factors[k], rel=1e-8)
        # and the line is the truth's, relative to its level at the centre
        assert curve.slopes[k] == pytest.approx(3.0 / (0.6 + 3.0 * centre), rel=0.15)
    # the factor of a row: the level times 1 + slope (x - centre)
    at = np.array([50.0, 50.0, 50.0])
    x = np.array([0.05, 0.5, np.nan])
    level = plain(at)
    by_hand = level * (1 + np.interp(np.log(50.0), curve.log_totals, curve.slopes)
                       * (x - np.interp(np.log(50.0), curve.log_totals, curve.centres)))
    np.testing.assert_allclose(curve(at, x)[:2], by_hand[:2], rtol=1e-12)
    assert curve(at, x)[2] == level[2] and np.array_equal(curve(at), level)  # unknown concentration: the level


def test_slopes_are_kept_between_zero_and_one_over_the_centre():
    rng = np.random.default_rng(1)
    n = 400
    total, expected = np.full(n, 100.0), np.ones(n)
    x = rng.uniform(0.05, 0.35, n)
    falling = scale_curve(total, 3.0 - 5.0 * x, expected, x)
    assert falling.slopes.tolist() == [0.0]  # sampling groups cannot make a concentrated word vary less
    assert scale_curve(total, 3.0 - 5.0 * x, expected, x, nonnegative_slopes=False).slopes[0] < 0  # a residual's
    steep = scale_curve(total, np.maximum(40.0 * (x - 0.15), 0.01), expected, x)
    assert steep.slopes[0] == pytest.approx(1.0 / steep.centres[0])  # no factor below 0 at x = 0
    # one group (or words spread alike): nothing to regress on
    assert scale_curve(total, rng.gamma(2.0, 1.0, n), expected, np.full(n, 0.2)).slopes.tolist() == [0.0]


def test_a_rows_factor_never_falls_below_a_share_of_its_level_and_the_knots_say_their_slopes():
    curve = sloped([10.0, 10.0], [0.2, 0.2])
    np.testing.assert_allclose(curve(np.array([10.0, 10.0]), np.array([0.0, 0.3])),
                               [2.0 * MIN_RELATIVE_FACTOR, 2.0 * 2.0])
    assert curve.to_dict() == {"total": [10.0, 1000.0], "factor": [2.0, 4.0], "n_words": [60, 60],
                               "slope": [10.0, 10.0], "concentration": [0.2, 0.2]}
    assert str(curve) == "2.00 (slope 10.0) at 10, 4.00 (slope 10.0) at 1,000"
    scale = NoiseScale(curve, ScaleCurve.empty())
    assert scale.by_concentration and str(scale).endswith("concentration over groups")
    np.testing.assert_allclose(scale.slope(np.array([10.0, 100.0])), [10.0, 10.0])
    np.testing.assert_allclose(scale(np.array([100.0]), True, np.array([0.25])), [3.0 * 1.5])  # pooled: the own curve


def comparison(ratio_at, n=400, total=100.0, seed=0) -> HalfComparison:
    """A comparison whose rows (all with their own s2) show ``ratio_at(x)`` at ``total``, x uniform in [0.05, 0.45]."""
    x = np.random.default_rng(seed).uniform(0.05, 0.45, n)
    return HalfComparison(np.full(n, total), ratio_at(x), np.ones(n), np.zeros(n, bool), np.ones(n, bool), x,
                          *no_excess_along(n))


@pytest.mark.parametrize("level, residual_level", [(2.0, 1.25), (2.0, 0.8), (1.02, 1.25)])
def test_a_refined_slope_takes_the_secant_step_the_level_takes(level, residual_level):
    first_curve = scale_curve(*(lambda c: (c.total, c.wald_per_dim, c.expected, c.concentration))(
        comparison(lambda x: level * (1 + 2.0 * (x - 0.25)))))
    first = NoiseScale(first_curve, ScaleCurve.empty())
    residual = comparison(lambda x: residual_level * (1 + 0.5 * (x - 0.25)))
    refined = first.refined(residual)
    residual_curve = scale_curve(residual.total, residual.wald_per_dim, residual.expected, residual.concentration)
    log_start, log_residual = np.log(first_curve.factors[0]), np.log(residual_curve.factors[0])
    step = np.clip(log_start / (log_start - log_residual), 1.0, 2.0) if abs(log_start) > np.log(1.05) else 1.0
    rho = residual_curve.slopes[0]
    assert refined.own.slopes[0] == pytest.approx(first_curve.slopes[0] + step * rho, rel=1e-10)
    assert refined.own.centres[0] == pytest.approx(np.mean(residual.concentration), rel=1e-12)
    # the level as without concentrations
    plain = NoiseScale(ScaleCurve(first_curve.log_totals, first_curve.factors, first_curve.n_words),
                       ScaleCurve.empty()).refined(residual)
    np.testing.assert_allclose(refined.own.factors, plain.own.factors, rtol=1e-12)


def test_pooled_halvings_move_their_slopes_by_the_first_halvings_refinement():
    first = NoiseScale(sloped([1.0, 2.0], [0.2, 0.1]), ScaleCurve.empty())
    refined = NoiseScale(sloped([2.5, 3.0], [0.2, 0.1], factors=(2.5, 5.0)), ScaleCurve.empty())
    pooled = NoiseScale(sloped([1.5, 1.5, 1.5], [0.2, 0.15, 0.1], factors=(1.8, 3.0, 3.5),
                               totals=(10.0, 100.0, 1000.0)), ScaleCurve.empty())
    corrected = pooled.corrected(first, refined)
    np.testing.assert_allclose(corrected.own.slopes, [1.5 + 1.5, 1.5 + 1.25, 1.5 + 1.0])
    np.testing.assert_allclose(corrected.own.factors, [1.8 * 1.25, 3.0 * 1.25, 3.5 * 1.25])
    np.testing.assert_array_equal(corrected.own.centres, pooled.own.centres)


def with_concentration(matrix, seed) -> CooccurrenceMatrix:
    x = np.random.default_rng(seed).uniform(0.02, 0.6, matrix.shape[0])
    return CooccurrenceMatrix(matrix, group_concentration=x)


def test_compare_half_rows_weighs_the_halves_concentrations_by_their_covariances_traces(posterior_model, halves):
    model = posterior_model
    concentrations = tuple(with_concentration(half, k).group_concentration for k, half in enumerate(halves))
    comparison = compare_half_rows(halves, options(model), model.prior_, model._fallback_sigma2,
                                   concentrations=concentrations)
    plain = compare_half_rows(halves, options(model), model.prior_, model._fallback_sigma2)
    np.testing.assert_array_equal(comparison.wald_per_dim, plain.wald_per_dim)  # no scale: the same fits
    assert np.isnan(plain.concentration).all()
    fits = [model.conditional_fit(half) for half in halves]
    precision = model.prior_.precision
    both = np.flatnonzero(np.isfinite(fits[0].embedding).all(axis=1) & np.isfinite(fits[1].embedding).all(axis=1))
    by_hand = []
    for i in both:  # the rows kept, as test_compare_half_rows_matches_each_words_wald_statistic_by_hand keeps them
        a, b = fits[0].covariance[int(i)], fits[1].covariance[int(i)]
        inverse_dofs = 1.0 / fits[0].covariance.dof[i], 1.0 / fits[1].covariance.dof[i]
        spread = np.trace(a) ** 2 * inverse_dofs[0] + np.trace(b) ** 2 * inverse_dofs[1]
        nu = np.inf if spread == 0 else (np.trace(a) + np.trace(b)) ** 2 / spread
        if np.linalg.cond(a + b - a @ precision @ b - b @ precision @ a) > 1e10 or nu <= 4:
            continue
        traces = np.trace(a), np.trace(b)
        by_hand.append((traces[0] * concentrations[0][i] + traces[1] * concentrations[1][i]) / sum(traces))
    np.testing.assert_allclose(comparison.concentration, by_hand, rtol=1e-9)


def test_the_estimator_scales_each_row_at_its_own_total_and_concentration(posterior_model, embedded_cooccurrence,
                                                                         halves):
    X = with_concentration(embedded_cooccurrence, 7)
    pair = tuple(with_concentration(half, 8 + k) for k, half in enumerate(halves))
    calibrated = clone(posterior_model).fit(X, halves=pair)
    scale = calibrated.noise_scale_
    assert scale.by_concentration
    np.testing.assert_array_equal(calibrated.group_concentration_, X.group_concentration)
    totals = np.asarray(embedded_cooccurrence.sum(axis=1)).ravel()
    pooled = np.isinf(posterior_model.covariance_.dof)
    np.testing.assert_allclose(calibrated.sigma2_,
                               posterior_model.sigma2_ * scale(totals, pooled, X.group_concentration), rtol=1e-12)
    assert "slope" in calibrated.noise_scale_.to_dict()["own"]
    # new rows: at their own concentration where they carry one, at the level where not
    x = pair[0].group_concentration[:300]
    rows = CooccurrenceMatrix(halves[0][:300], group_concentration=x)
    plain, scaled = posterior_model.conditional_fit(rows), calibrated.conditional_fit(rows)
    fitted = np.isfinite(plain.sigma2)
    row_totals = np.asarray(rows.sum(axis=1)).ravel()
    row_pooled = np.isinf(plain.covariance.dof)
    np.testing.assert_allclose(scaled.sigma2[fitted], (plain.sigma2 * scale(row_totals, row_pooled, x))[fitted],
                               rtol=1e-12)
    unlabelled = calibrated.conditional_fit(halves[0][:300])
    np.testing.assert_allclose(unlabelled.sigma2[fitted], (plain.sigma2 * scale(row_totals, row_pooled))[fitted],
                               rtol=1e-12)
    # transform's vectors are the same rows' posterior means, at their concentration where they carry one
    enough = np.flatnonzero(fitted & (scale.slope(row_totals, row_pooled) != 0))[:100]  # rows where the slope acts
    assert enough.size >= 20
    labelled_rows = CooccurrenceMatrix(halves[0][enough], group_concentration=x[enough])
    labelled = calibrated.transform(labelled_rows)
    np.testing.assert_array_equal(labelled, calibrated.conditional_fit(labelled_rows).embedding)
    np.testing.assert_array_equal(calibrated.transform(halves[0][enough]),
                                  calibrated.conditional_fit(halves[0][enough]).embedding)
    assert not np.allclose(labelled, calibrated.transform(halves[0][enough]))
    # halves without concentrations: a scale in total only, as before
    assert not clone(posterior_model).fit(X, halves=halves).noise_scale_.by_concentration


def test_concentrations_of_the_wrong_shape_are_named(posterior_model, embedded_cooccurrence, halves):
    wrong = CooccurrenceMatrix(halves[1])
    wrong.group_concentration = np.full(5, 0.5)
    with pytest.raises(ValueError, match=r"halves\[1\]\.group_concentration has shape \(5,\)"):
        clone(posterior_model).fit(embedded_cooccurrence, halves=(halves[0], wrong))
    with pytest.raises(ValueError, match="X.group_concentration"):
        posterior_model.conditional_fit(wrong)
