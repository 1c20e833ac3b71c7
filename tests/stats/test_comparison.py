"""Comparing one statistic across independently fitted models (``compare_models``), and a word across two
embeddings (``self_similarity``, ``vector_change_test``).

The formulas are checked against independent computations (statsmodels' Welch ANOVA, ``WLS``,
``multipletests``, a finite-difference delta method, a dense Wald statistic); then the tests are
checked by simulation with known truth, through the library's own refits
(``glovev_ext.stats.RowSimulator`` on the D = 30 fit of ``tests/stats/test_coverage.py``, with an exact
``WordFitter`` over the two most frequent alphabetic words): under the null, the equality test's and
the vector-change test's p-values are uniform; with a change planted at the minimum detectable effect,
the difference test detects it at the power ``power()`` states. Where ``method="auto"`` leaves a cosine to
Monte Carlo (two words with 40-60 contexts beyond D, and real text split into two random halves), the
default equality test rejects no more than the plain delta-method z from the same covariances
(docs/method.md 7.2).
"""

from __future__ import annotations

import types
import warnings

import numpy as np
import pytest
from scipy import stats
from statsmodels.regression.linear_model import WLS
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.oneway import anova_generic
from statsmodels.tools import add_constant

import glovev_ext
from glovev_ext.covariance import UndefinedCovarianceError
from glovev_ext.covariance.wls import WordFitter
from glovev_ext.stats import (InferenceResult, RowSimulator, compare_models, cosine_statistic,
                              minimum_detectable_effect, power, self_similarity, vector_change_test)
from glovev_ext.stats.engine.words import ResolvedWords
from glovev_ext.stats.engine.estimation import estimate_resolved
from glovev_ext.stats.engine.results import DELTA, MONTE_CARLO

DIM = 30
REPLICATIONS = 1000

VALUES = np.array([0.31, 0.12, 0.45, 0.22, 0.05])
ERRORS = np.array([0.05, 0.08, 0.11, 0.04, 0.07])
DOFS = np.array([12.0, 30.0, 8.0, 50.0, 5.0])


def linear_results(values=VALUES, errors=ERRORS, dofs=DOFS):
    return [InferenceResult.wald(f"statistic {k}", x, se, df=nu, scale="linear")
            for k, (x, se, nu) in enumerate(zip(values, errors, dofs))]


def welch_by_statsmodels(means, errors, dofs):
    """Welch's ANOVA from group summaries: nobs = df + 1 and variances = se^2 nobs, so variance / nobs = se^2."""
    nobs = np.asarray(dofs, dtype=np.float64) + 1
    return anova_generic(np.asarray(means), np.asarray(errors) ** 2 * nobs, nobs, use_var="unequal")


def welch_satterthwaite_by_hand(variances, dofs):
    variances, dofs = np.asarray(variances), np.asarray(dofs)
    return variances.sum() ** 2 / (variances**2 / dofs).sum()


# ---------------------------------------------------------------- equality

@pytest.mark.parametrize("k", [2, 3, 5])
def test_equality_on_the_linear_scale_is_welchs_anova(k):
    test = compare_models(linear_results(VALUES[:k], ERRORS[:k], DOFS[:k])).equality()
    expected = welch_by_statsmodels(VALUES[:k], ERRORS[:k], DOFS[:k])
    assert test.distribution == "F"
    assert float(test.fvalue) == pytest.approx(expected.statistic, rel=1e-10)
    assert test.df_num == pytest.approx(expected.df_num, rel=1e-10)
    assert test.df_denom == pytest.approx(expected.df_denom, rel=1e-10)
    assert float(test.pvalue) == pytest.approx(expected.pvalue, rel=1e-10)


@pytest.mark.parametrize("bounds", [(-1.0, 1.0), (0.0, 4.0)])
def test_equality_on_the_bounded_scale_is_welchs_anova_of_the_atanh_values(bounds):
    lo, hi = bounds
    values = lo + (hi - lo) * np.array([0.55, 0.8, 0.62, 0.9])
    errors = (hi - lo) * np.array([0.03, 0.05, 0.02, 0.04])
    dofs = np.array([20.0, 9.0, 40.0, 15.0])
    results = [InferenceResult.wald(f"s{k}", x, se, df=nu, bounds=bounds, scale="bounded")
               for k, (x, se, nu) in enumerate(zip(values, errors, dofs))]
    unit = (2 * values - lo - hi) / (hi - lo)
    z = np.arctanh(unit)
    z_errors = errors * 2 / ((hi - lo) * (1 - unit**2))  # se * d atanh(u(x)) / dx
    test = compare_models(results).equality()
    expected = welch_by_statsmodels(z, z_errors, dofs)
    assert float(test.fvalue) == pytest.approx(expected.statistic, rel=1e-10)
    assert test.df_denom == pytest.approx(expected.df_denom, rel=1e-10)
    assert float(test.pvalue) == pytest.approx(expected.pvalue, rel=1e-10)
    # not the linear-scale test of the same numbers
    linear = welch_by_statsmodels(values, errors, dofs)
    assert abs(float(test.fvalue) - linear.statistic) > 1e-3 * linear.statistic


def test_equality_with_normal_references_is_cochrans_q():
    results = linear_results(dofs=np.full(5, np.inf))
    test = compare_models(results).equality()
    weights = 1 / ERRORS**2
    centre = (weights * VALUES).sum() / weights.sum()
    q = (weights * (VALUES - centre) ** 2).sum()
    assert test.distribution == "chi2"
    assert float(test.statistic) == pytest.approx(q, rel=1e-12)
    assert test.df_denom == 4
    assert float(test.pvalue) == pytest.approx(stats.chi2.sf(q, 4), rel=1e-10)


def test_equality_with_some_normal_references_is_the_limit_of_large_df():
    dofs = DOFS.copy()
    dofs[[1, 3]] = np.inf
    test = compare_models(linear_results(dofs=dofs)).equality()
    limit = welch_by_statsmodels(VALUES, ERRORS, np.where(np.isfinite(dofs), dofs, 1e15))
    assert float(test.fvalue) == pytest.approx(limit.statistic, rel=1e-9)
    assert test.df_denom == pytest.approx(limit.df_denom, rel=1e-9)
    assert float(test.pvalue) == pytest.approx(limit.pvalue, rel=1e-9)


# ---------------------------------------------------------------- Monte Carlo results (docs/method.md 7.2)

COSINES = np.array([0.42, 0.18, 0.30])
SPREADS = np.array([0.05, 0.06, 0.04])  # the draws' spread: a bounded statistic's draws are capped
DELTA_ERRORS = np.array([0.08, 0.09, 0.06])
COSINE_DOFS = np.array([15.0, 40.0, 9.0])


def cosine_results(methods, draws=None):
    """Cosines as ``method="auto"`` leaves them: a Monte Carlo result's ``std_error`` is its draws' spread, with
    the delta method's error beside it; a delta-method result's is the delta method's."""
    results = []
    for k, method in enumerate(methods):
        if method == MONTE_CARLO:
            drawn = (COSINES[k] + SPREADS[k] * np.random.default_rng(k).standard_normal(2000) if draws is None
                     else draws[k])
            results.append(InferenceResult.wald(f"cos {k}", COSINES[k], SPREADS[k], df=COSINE_DOFS[k], bounds=(-1, 1),
                                                scale="bounded", method=MONTE_CARLO, draws=drawn,
                                                delta_std_error=DELTA_ERRORS[k]))
        else:
            results.append(InferenceResult.wald(f"cos {k}", COSINES[k], DELTA_ERRORS[k], df=COSINE_DOFS[k],
                                                bounds=(-1, 1), scale="bounded"))
    return results


def error_of_own_interval(result):
    """The atanh-scale standard error behind a result's own 95 % interval, read off the interval (the draws'
    percentile interval lies inside the Wald one here, so the union is the Wald interval)."""
    low, high = result.conf_int()
    return (np.arctanh(high) - np.arctanh(low)) / (2 * stats.t.ppf(0.975, result.df))


@pytest.mark.parametrize("methods", [(MONTE_CARLO,) * 3, (MONTE_CARLO, DELTA, MONTE_CARLO)],
                         ids=["all Monte Carlo", "mixed"])
def test_a_monte_carlo_result_is_weighed_by_the_error_its_own_interval_uses(methods):
    """Equality weighs each cosine by the error of its own test and interval (the delta method's on atanh), not
    by a Monte Carlo result's spread of draws, which understates it (7-10 % false positives on real halves)."""
    results = cosine_results(methods)
    own = np.array([error_of_own_interval(r) for r in results])
    np.testing.assert_allclose(own, DELTA_ERRORS / (1 - COSINES**2), rtol=1e-10)
    comparison = compare_models(results)
    np.testing.assert_allclose(comparison.std_errors, DELTA_ERRORS, rtol=1e-12)
    test = comparison.equality()
    expected = welch_by_statsmodels(np.arctanh(COSINES), own, COSINE_DOFS)
    assert float(test.fvalue) == pytest.approx(expected.statistic, rel=1e-9)
    assert test.df_denom == pytest.approx(expected.df_denom, rel=1e-9)
    assert float(test.pvalue) == pytest.approx(expected.pvalue, rel=1e-9)
    # the draws' spread would have made the same values look different
    spread = welch_by_statsmodels(np.arctanh(COSINES), SPREADS / (1 - COSINES**2), COSINE_DOFS)
    assert spread.pvalue < 0.5 * float(test.pvalue)
    # the trend weighs by the same errors: WLS with them
    decades = np.array([1850.0, 1900.0, 1950.0])
    fit = WLS(COSINES, add_constant(decades), weights=1 / DELTA_ERRORS**2).fit(cov_type="fixed scale")
    assert comparison.trend(decades).estimate == pytest.approx(fit.params[1], rel=1e-10)


def test_differences_of_mixed_methods_use_each_results_own_error():
    """A Monte Carlo cosine against a delta-method one: no draws for the pair, so the difference is the Wald test
    alone, with the Monte Carlo result's delta-method error, as its own interval."""
    results = cosine_results((MONTE_CARLO, DELTA))
    difference = compare_models(results).pairwise(correction=None)
    d, se = COSINES[0] - COSINES[1], np.hypot(*DELTA_ERRORS[:2])
    statistic = np.arctanh(d / 2) / (se * 2 / (4 * (1 - (d / 2) ** 2)))
    nu = welch_satterthwaite_by_hand(DELTA_ERRORS[:2] ** 2, COSINE_DOFS[:2])
    np.testing.assert_allclose(difference.std_errors, [se], rtol=1e-12)
    assert difference.pvalues[0] == pytest.approx(2 * stats.t.sf(statistic, nu), rel=1e-10)


def test_draws_made_from_the_same_random_numbers_are_paired_independently():
    """Two results made with one random_state share their normal deviates draw by draw; the comparison pairs
    each model's draws with other draws of the other, so a difference's draws spread as a difference does."""
    deviates = np.random.default_rng(3).standard_normal(2000)
    draws = [COSINES[k] + SPREADS[k] * deviates for k in range(2)]
    comparison = compare_models(cosine_results((MONTE_CARLO,) * 2, draws))
    joint = comparison.family.draws
    for k in range(2):
        np.testing.assert_array_equal(np.sort(joint[:, k]), np.sort(draws[k]))
    assert abs(np.corrcoef(joint.T)[0, 1]) < 0.1
    difference = joint[:, 0] - joint[:, 1]
    assert difference.std() == pytest.approx(np.hypot(*SPREADS[:2]), rel=0.1)


# ---------------------------------------------------------------- pairwise

def test_pairwise_differences_with_holm_adjusted_pvalues():
    labels = ["a", "b", "c", "d", "e"]
    differences = compare_models(dict(zip(labels, linear_results()))).pairwise()
    pairs = [(i, j) for i in range(5) for j in range(i + 1, 5)]
    assert differences.names == tuple(f"{labels[i]} - {labels[j]}" for i, j in pairs)
    expected = np.array([VALUES[i] - VALUES[j] for i, j in pairs])
    errors = np.array([np.hypot(ERRORS[i], ERRORS[j]) for i, j in pairs])
    dofs = np.array([welch_satterthwaite_by_hand(ERRORS[[i, j]] ** 2, DOFS[[i, j]]) for i, j in pairs])
    np.testing.assert_allclose(differences.estimates, expected, rtol=1e-12)
    np.testing.assert_allclose(differences.std_errors, errors, rtol=1e-12)
    np.testing.assert_allclose(differences.df, dofs, rtol=1e-12)
    raw = 2 * stats.t.sf(np.abs(expected / errors), dofs)
    np.testing.assert_allclose(differences.pvalues, raw, rtol=1e-10)
    assert differences.correction == "holm"
    np.testing.assert_allclose(differences.pvalues_adjusted, multipletests(raw, method="holm")[1], rtol=1e-10)
    assert not np.allclose(differences.pvalues_adjusted, raw)  # the correction did something
    bh = compare_models(linear_results()).pairwise(correction="fdr_bh")
    np.testing.assert_allclose(bh.pvalues_adjusted, multipletests(raw, method="fdr_bh")[1], rtol=1e-10)
    assert compare_models(linear_results()).pairwise(correction=None).pvalues_adjusted is None


def test_pairwise_differences_of_bounded_values_are_tested_on_atanh_of_half_the_difference():
    """Two cosines (bounds (-1, 1)): their difference lies in (-2, 2), tested on atanh(d / 2)."""
    values, errors, dofs = np.array([0.62, 0.35]), np.array([0.06, 0.09]), np.array([25.0, 14.0])
    results = [InferenceResult.wald(f"s{k}", x, se, df=nu, bounds=(-1, 1), scale="bounded")
               for k, (x, se, nu) in enumerate(zip(values, errors, dofs))]
    difference = compare_models(results).pairwise(correction=None)
    d, se = values[0] - values[1], np.hypot(*errors)
    np.testing.assert_allclose(difference.bounds, [[-2.0, 2.0]])
    statistic = np.arctanh(d / 2) / (se * 2 / (4 * (1 - (d / 2) ** 2)))
    nu = welch_satterthwaite_by_hand(errors**2, dofs)
    assert difference.pvalues[0] == pytest.approx(2 * stats.t.sf(statistic, nu), rel=1e-10)


# ---------------------------------------------------------------- trend

def test_the_trend_is_the_inverse_variance_weighted_least_squares_slope():
    decades = np.array([1850.0, 1870.0, 1880.0, 1900.0, 1930.0])
    comparison = compare_models(linear_results(), covariate=decades)
    trend = comparison.trend()
    fit = WLS(VALUES, add_constant(decades), weights=1 / ERRORS**2).fit(cov_type="fixed scale")
    assert trend.estimate == pytest.approx(fit.params[1], rel=1e-10)
    assert trend.std_error == pytest.approx(fit.bse[1], rel=1e-10)
    # a contrast of the values: Welch-Satterthwaite df from each value's share of the variance
    weights = 1 / ERRORS**2
    centred = decades - (weights * decades).sum() / weights.sum()
    a = weights * centred / (weights * centred**2).sum()
    nu = welch_satterthwaite_by_hand(a**2 * ERRORS**2, DOFS)
    assert trend.df == pytest.approx(nu, rel=1e-10)
    assert trend.pvalue == pytest.approx(2 * stats.t.sf(abs(fit.params[1] / fit.bse[1]), nu), rel=1e-9)
    # the covariate can be given to trend() instead; the summary reports the trend
    other = compare_models(linear_results()).trend(decades)
    assert other.estimate == pytest.approx(trend.estimate, rel=1e-14)
    assert "Trend per unit of the covariate" in str(comparison.summary())


def test_the_trend_refuses_what_it_cannot_estimate():
    comparison = compare_models(linear_results())
    with pytest.raises(ValueError, match="needs a covariate"):
        comparison.trend()
    with pytest.raises(ValueError, match="single value"):
        comparison.trend([1990.0] * 5)
    with pytest.raises(ValueError, match="one value per model"):
        comparison.trend([1.0, 2.0, 3.0])


def test_compare_models_refuses_what_it_cannot_compare():
    results = linear_results()
    with pytest.raises(ValueError, match="at least two"):
        compare_models(results[:1])
    with pytest.raises(ValueError, match="distinct labels"):
        compare_models(results[:3], labels=["a", "b", "a"])
    with pytest.raises(ValueError, match="distinct labels"):
        compare_models(results[:3], labels=["a", "b"])
    bounded = InferenceResult.wald("cos", 0.3, 0.05, bounds=(-1, 1), scale="bounded")
    with pytest.raises(ValueError, match="different scales"):
        compare_models([results[0], bounded])
    with pytest.raises(ValueError, match="one finite value per model"):
        compare_models(results[:3], covariate=[1.0, 2.0])
    with pytest.raises(ValueError, match="positive standard error"):
        compare_models([results[0], InferenceResult.wald("x", 0.2, 0.0, scale="linear")])


def test_labels_and_summary():
    comparison = compare_models({"1850s": linear_results()[0], "1900s": linear_results()[1]})
    assert comparison.labels == ("1850s", "1900s")
    assert comparison.statistic == "statistic 0"
    assert compare_models(linear_results()[:2]).labels == ("model 1", "model 2")
    test = comparison.equality()
    assert (f"Equality of the 2 values (Welch): F = {float(test.fvalue):.3f} on (1, {test.df_denom:.1f}) df, "
            f"p = {float(test.pvalue):.4g}") in str(comparison.summary())
    trended = compare_models(linear_results()[:3], covariate=[1850, 1900, 1950])
    slope = trended.trend()
    low, high = slope.conf_int()
    assert (f"Trend per unit of the covariate: {slope.estimate:.4g} [{low:.4g}, {high:.4g}], p = {slope.pvalue:.4g}"
            in str(trended.summary()))
    np.testing.assert_allclose(trended.summary_frame()["covariate"], [1850, 1900, 1950])
    normal = compare_models(linear_results(dofs=np.full(5, np.inf)))
    assert "Cochran's Q" in str(normal.summary())


# ---------------------------------------------------------------- simulation with known truth

@pytest.fixture(scope="module")
def simulation(embedded_cooccurrence):
    """The D = 30 fit of test_coverage.py (exact conditioning), and a simulator of its two most frequent
    alphabetic words' rows."""
    model = glovev_ext.GloVeVEstimator(DIM, epochs=10, random_state=0, n_jobs=1, conditioning="exact",
                                       progress=False).fit(embedded_cooccurrence)
    words = list(embedded_cooccurrence.words)
    alphabetic = np.array([w.isalpha() for w in words])
    pair = tuple(words[i] for i in np.argsort(-model.n_contexts_) if alphabetic[i])[:2]
    # and a word with 40 to 60 contexts beyond D, where F(D, nu) and Hotelling's F(D, nu - D + 1) part
    spare = model.n_contexts_ - DIM
    rare = next(words[i] for i in np.flatnonzero((spare >= 40) & (spare <= 60)) if alphabetic[i])
    position = {w: i for i, w in enumerate(words)}
    fitter = WordFitter(embedded_cooccurrence, model.context_embedding_, model.context_bias_, model.x_max,
                        model.alpha, "exact")
    simulator = RowSimulator(fitter, model.bias_, {w: position[w] for w in (*pair, rare)})
    # the truth's covariances: the factors of the observed rows (RowSimulator's truth is their optimum)
    fits = [fitter.fit_word(position[w], float(model.bias_[position[w]]), None) for w in pair]
    for word, fit in zip(pair, fits):
        np.testing.assert_allclose(fit.optimum, simulator.truth[word], rtol=1e-10)
    truth = ResolvedWords(pair, np.vstack([simulator.truth[w] for w in pair]), tuple(fit.factor for fit in fits))
    return types.SimpleNamespace(model=model, pair=pair, rare=rare, simulator=simulator, truth=truth,
                                 statistic=cosine_statistic([pair]))


@pytest.fixture(scope="module")
def null_draws(simulation):
    """1,000 replications of three independent "sub-corpora": refits of both words' rows under one truth."""
    generator = np.random.default_rng(20260118)
    return [[simulation.simulator.draw(simulation.pair, generator) for _ in range(3)] for _ in range(REPLICATIONS)]


def test_equality_pvalues_are_uniform_under_the_null(simulation, null_draws, capsys, record_property):
    """k = 3 sub-corpora with the same truth: cos(w1, w2) by the delta method in each (t references,
    bounded scale, the defaults), Welch's test of equality: its p-values are uniform."""
    pvalues, understated = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for draws in null_draws:
            results = [estimate_resolved(words, simulation.statistic, method="delta")[0] for words in draws]
            test = compare_models(results).equality()
            assert test.distribution == "F"
            pvalues.append(float(test.pvalue))
            # the check has teeth: standard errors understated by a fifth are caught
            shrunk = [InferenceResult.wald(r.name, r.estimate, 0.8 * r.std_error, df=r.df, bounds=r.bounds,
                                           scale=r.scale) for r in results]
            understated.append(float(compare_models(shrunk).equality().pvalue))
    assert capsys.readouterr() == ("", "")
    uniform = stats.kstest(pvalues, "uniform").pvalue
    record_property("equality_ks_pvalue", float(uniform))
    record_property("equality_rejection_rate", float(np.mean(np.array(pvalues) < 0.05)))
    assert uniform > 0.01, uniform
    assert stats.kstest(understated, "uniform").pvalue < 0.01


def test_vector_change_pvalues_are_uniform_under_the_null(simulation, null_draws, record_property):
    """Two refits of the same word's row (the first two sub-corpora of each replication above): the Wald
    test that its vector is the same in both has uniform p-values, with F(D, nu) and with chi2(D)."""

    word = simulation.pair[0]
    with_f, chi2 = [], []
    for draws in null_draws:
        first, second = draws[0], draws[1]
        frame = vector_change_test(first, second, [word])
        assert np.isfinite(frame["df"].iloc[0])
        with_f.append(frame["P>chi2"].iloc[0])
        chi2.append(vector_change_test(first, second, [word], use_t=False)["P>chi2"].iloc[0])
    uniform_f, uniform_chi2 = stats.kstest(with_f, "uniform").pvalue, stats.kstest(chi2, "uniform").pvalue
    record_property("vector_change_ks_pvalue_f", float(uniform_f))
    record_property("vector_change_ks_pvalue_chi2", float(uniform_chi2))
    assert uniform_f > 0.01 and uniform_chi2 > 0.01, (uniform_f, uniform_chi2)


def test_vector_change_pvalues_are_uniform_under_the_null_for_a_word_with_few_contexts(simulation, record_property):
    """About 50 contexts beyond D per refit (nu near 100 for the two): F(D, nu) holds the size, where
    Hotelling's F(D, nu - D + 1) rejected almost never at a nominal 5 %."""
    word, generator = simulation.rare, np.random.default_rng(20260120)
    pvalues, dofs = [], []
    for _ in range(REPLICATIONS):
        first, second = (simulation.simulator.draw((word,), generator) for _ in range(2))
        row = vector_change_test(first, second, [word]).iloc[0]
        pvalues.append(row["P>chi2"])
        dofs.append(row["df"])
    uniform = stats.kstest(pvalues, "uniform").pvalue
    rate = float(np.mean(np.array(pvalues) < 0.05))
    record_property("vector_change_rare_ks_pvalue", float(uniform))
    record_property("vector_change_rare_rejection_rate", float(rate))
    record_property("vector_change_rare_median_df", float(np.median(dofs)))
    assert 60 < np.median(dofs) < 130
    assert uniform > 0.01, (uniform, rate)
    assert abs(rate - 0.05) < 4 * np.sqrt(0.05 * 0.95 / REPLICATIONS), rate


def test_a_change_planted_at_the_minimum_detectable_effect_is_detected_at_the_stated_power(simulation,
                                                                                           record_property):
    """k = 2 sub-corpora; in the second, w1's true vector moves within the plane of w1 and w2 (along the
    cosine's gradient, the part of w2's unit vector orthogonal to w1) so that the true cos(w1, w2) rises
    by the minimum detectable effect at 80 % power of a two-sided 0.05 test of the difference, planned
    with the delta-method standard error at the truth: sqrt(2) se (two sub-corpora like the observed one).

    Linear scale throughout (planning and test): for k = 2 the equality test and the difference test are
    then the same test (F = t^2 on the same Welch-Satterthwaite df, asserted below), and power() plans
    exactly the statistic the test forms. On the bounded scale, equality compares atanh(c1) - atanh(c2)
    while the difference is tested on atanh((c1 - c2) / 2), and power()'s constant atanh-scale error is
    only approximately the test's."""
    simulator, statistic, (w1, w2) = simulation.simulator, simulation.statistic, simulation.pair
    at_truth = estimate_resolved(simulation.truth, statistic, method="delta", scale="linear")[0]
    se, nu = at_truth.std_error, at_truth.df
    planning_se, planning_df = np.sqrt(2) * se, 2 * nu  # Welch-Satterthwaite df of two equal variances
    effect = minimum_detectable_effect(planning_se, power_goal=0.8, significance_level=0.05, df=planning_df)
    a, b = simulator.truth[w1], simulator.truth[w2]
    before = float(statistic.value(np.vstack([a, b]))[0])
    unit_a, unit_b = a / np.linalg.norm(a), b / np.linalg.norm(b)
    direction = unit_b - before * unit_a
    direction /= np.linalg.norm(direction)
    # a + t |a| direction has angle theta - arctan(t) with b: solve for the angle whose cosine is before + effect
    t = np.tan(np.arccos(before) - np.arccos(before + effect))
    shift = t * np.linalg.norm(a) * direction
    after = float(statistic.value(np.vstack([a + shift, b]))[0])
    true_change = after - before
    assert true_change == pytest.approx(effect, rel=1e-9)
    stated = power(true_change, planning_se, significance_level=0.05, df=planning_df)
    assert stated == pytest.approx(0.8, abs=1e-6)

    generator = np.random.default_rng(20260119)
    detected = []
    for _ in range(REPLICATIONS):
        first = simulator.draw((w1, w2), generator)
        second = simulator.draw((w1, w2), generator, shifts={w1: shift})
        results = [estimate_resolved(words, statistic, method="delta", scale="linear")[0]
                   for words in (first, second)]
        comparison = compare_models(results, labels=["first", "second"])
        difference = comparison.pairwise(correction=None)
        assert difference.names == ("first - second",)
        p = float(difference.pvalues[0])
        assert float(comparison.equality().pvalue) == pytest.approx(p, rel=1e-8, abs=1e-300)
        detected.append(p < 0.05)
    rate = float(np.mean(detected))
    record_property("planted_effect", float(effect))
    record_property("planted_stated_power", float(stated))
    record_property("planted_detection_rate", float(rate))
    assert abs(rate - stated) < 0.05, (rate, stated)


@pytest.fixture(scope="module")
def rare_pair(simulation, embedded_cooccurrence):
    """A simulator of the first two alphabetic words with 40 to 60 contexts beyond D: their covariances are
    comparable to their vectors, and method="auto" leaves their cosine to Monte Carlo."""
    model, words = simulation.model, list(embedded_cooccurrence.words)
    spare = model.n_contexts_ - DIM
    pair = tuple(w for w in (words[i] for i in np.flatnonzero((spare >= 40) & (spare <= 60))) if w.isalpha())[:2]
    fitter = WordFitter(embedded_cooccurrence, model.context_embedding_, model.context_bias_, model.x_max,
                        model.alpha, "exact")
    return RowSimulator(fitter, model.bias_, {w: words.index(w) for w in pair}), pair


def test_equality_of_monte_carlo_results_rejects_no_more_than_the_delta_z_under_the_null(rare_pair,
                                                                                        record_property):
    """Two "sub-corpora" with the same truth, cos(w1, w2) estimated by default in each (nearly all Monte Carlo):
    the equality test rejects at 5 % no more often than the plain delta-method z on the linear scale from the same
    refits, its p-values are not stochastically smaller than uniform, and, refit by refit, they are those of that
    z rather than smaller. Measured: 0.025 rejected, the z 0.035, median ratio of p-values 1.007. Weighing by the
    draws' spread (before docs/method.md 7.2's fix) rejected 0.065, with p-values below the z's in 199 of 200
    refits (median ratio 0.84)."""
    simulator, pair = rare_pair
    statistic = cosine_statistic([pair])
    generator = np.random.default_rng(20260127)
    replications = 200
    default, linear, methods = [], [], []
    for _ in range(replications):
        refits = [simulator.draw(pair, generator) for _ in range(2)]
        results = [estimate_resolved(words, statistic, random_state=generator)[0] for words in refits]
        default.append(float(compare_models(results).equality().pvalue))
        methods += [r.method for r in results]
        plain = [estimate_resolved(words, statistic, method="delta", scale="linear", use_t=False)[0]
                 for words in refits]
        z = (plain[0].estimate - plain[1].estimate) / np.hypot(plain[0].std_error, plain[1].std_error)
        linear.append(2 * stats.norm.sf(abs(z)))
    default, linear = np.array(default), np.array(linear)
    rate, reference = float(np.mean(default < 0.05)), float(np.mean(linear < 0.05))
    record_property("monte_carlo_equality_rejection_rate", float(rate))
    record_property("monte_carlo_linear_z_rejection_rate", float(reference))
    assert methods.count(MONTE_CARLO) > 0.9 * len(methods)
    assert rate <= reference, (rate, reference)
    assert rate <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / replications), rate
    assert stats.kstest(default, "uniform", alternative="greater").pvalue > 0.01
    assert np.median(default / linear) > 0.97


# ---------------------------------------------------------------- a word across two embeddings

@pytest.fixture(scope="module")
def halves(simulation, embedded_vectorizer):
    """Two halves of the 6,000 paragraphs behind the D = 30 fit, each fitted in its basis."""
    documents = list(glovev_ext.load_default_corpus(max_documents=6000))
    parts = {"first": documents[:3000], "second": documents[3000:]}
    pooled = types.SimpleNamespace(vectorizer=embedded_vectorizer, estimator=simulation.model)
    embeddings = glovev_ext.fit_subcorpora(pooled, parts)
    # each word's degrees of freedom from its own count of contexts: |K| - D - 1 (the row's bias is free)
    dofs = {}
    for name, texts in parts.items():
        rows = embedded_vectorizer.transform(texts)
        dofs[name] = dict(zip(rows.words, np.diff(rows.indptr) - DIM - 1))
    return embeddings, dofs


@pytest.fixture(scope="module")
def random_halves(simulation, embedded_vectorizer):
    """The 6,000 paragraphs split into two random halves, each fitted in the basis of the D = 30 fit."""
    documents = list(glovev_ext.load_default_corpus(max_documents=6000))
    side = np.random.default_rng(0).random(len(documents)) < 0.5
    parts = {"A": [d for d, s in zip(documents, side) if s], "B": [d for d, s in zip(documents, side) if not s]}
    pooled = types.SimpleNamespace(vectorizer=embedded_vectorizer, estimator=simulation.model)
    return glovev_ext.fit_subcorpora(pooled, parts)


def test_equality_of_a_cosine_in_two_random_halves_rejects_no_more_than_the_delta_z(random_halves,
                                                                                    record_property):
    """Real text and no change: for 200 random pairs of words with covariances in both random halves, the default
    equality test (``similarity_test(a, b, random_state=0)`` in each half; nearly all Monte Carlo) of results taken
    as independent rejects at 5 % no more often than the plain delta-method z on the linear scale from the same
    covariances. Measured: 0.025, the z 0.040; weighing Monte Carlo results by their draws' spread (before
    docs/method.md 7.2's fix) rejected 0.110. (The halves are posteriors under one prior, which the default
    comparison takes out, tests/stats/test_shared_prior.py; here their links to it are dropped, as for fits under
    priors of their own.)"""
    half_a, half_b = random_halves["A"], random_halves["B"]
    words = [w for w in half_a.index_to_key if w.isalpha() and w in half_b.key_to_index
             and half_a.has_covariance(w) and half_b.has_covariance(w)]
    generator = np.random.default_rng(1)
    pairs = set()
    while len(pairs) < 200:
        i, j = sorted(generator.choice(len(words), 2, replace=False))
        pairs.add((words[i], words[j]))
    pairs = sorted(pairs)
    plain = [half.similarity_tests(pairs, method="delta", scale="linear", use_t=False) for half in (half_a, half_b)]
    z = (plain[0].estimates - plain[1].estimates) / np.hypot(plain[0].std_errors, plain[1].std_errors)
    default, methods = [], []
    for a, b in pairs:
        results = [half.similarity_test(a, b, random_state=0).replace(prior_link=None)
                   for half in (half_a, half_b)]
        default.append(float(compare_models(results).equality().pvalue))
        methods += [r.method for r in results]
    rate, reference = float(np.mean(np.array(default) < 0.05)), float(np.mean(2 * stats.norm.sf(np.abs(z)) < 0.05))
    record_property("split_half_equality_rejection_rate", float(rate))
    record_property("split_half_linear_z_rejection_rate", float(reference))
    assert methods.count(MONTE_CARLO) > 0.9 * len(methods)
    assert rate <= reference, (rate, reference)


def chosen_words(simulation, halves):
    """The two frequent words and a word with few spare contexts in the first half (t far from normal)."""
    embeddings, dofs = halves
    rare = next(w for w in embeddings["first"].index_to_key
                if w.isalpha() and 10 <= dofs["first"][w] <= 40 and w in embeddings["second"].key_to_index)
    return [*simulation.pair, rare]


def cosine(a, b):
    return a @ b / (np.linalg.norm(a) * np.linalg.norm(b))


def numerical_gradient(function, x, step=1e-6):
    h = step * np.linalg.norm(x)
    return np.array([(function(x + h * e) - function(x - h * e)) / (2 * h) for e in np.eye(x.size)])


def test_self_similarity_is_the_delta_method_by_brute_force(simulation, halves):
    (embeddings, dofs), words = halves, chosen_words(simulation, halves)
    kv_a, kv_b = embeddings["first"], embeddings["second"]
    family = self_similarity(kv_a, kv_b, words, labels=("first", "second"), method="delta")
    assert family.names == tuple(f"cos({w} [first], {w} [second])" for w in words)
    for k, word in enumerate(words):
        a, b = np.asarray(kv_a.get_vector(word), float), np.asarray(kv_b.get_vector(word), float)
        grad_a = numerical_gradient(lambda x, b=b: cosine(x, b), a)
        grad_b = numerical_gradient(lambda x, a=a: cosine(a, x), b)
        contributions = np.array([grad_a @ kv_a.covariance(word) @ grad_a, grad_b @ kv_b.covariance(word) @ grad_b])
        assert family.estimates[k] == pytest.approx(cosine(a, b), rel=1e-12)
        assert family.std_errors[k] == pytest.approx(np.sqrt(contributions.sum()), rel=1e-6)
        nu = welch_satterthwaite_by_hand(contributions, [dofs["first"][word], dofs["second"][word]])
        assert family.df[k] == pytest.approx(nu, rel=1e-5)


def test_vector_change_test_is_the_wald_statistic_of_the_difference(simulation, halves):
    (embeddings, dofs), words = halves, chosen_words(simulation, halves)
    kv_a, kv_b = embeddings["first"], embeddings["second"]
    frame = vector_change_test(kv_a, kv_b, words, labels=("first", "second"))
    normal = vector_change_test(kv_a, kv_b, words, labels=("first", "second"), use_t=False)
    assert list(frame.index) == words and frame.index.name == "first vs second"
    # both are posteriors under the pooled fit's prior, whose shared part of the errors the test takes out
    assert kv_a.prior is kv_b.prior is simulation.model.prior_
    precision = simulation.model.prior_.precision
    for word in words:
        difference = np.asarray(kv_a.get_vector(word), float) - np.asarray(kv_b.get_vector(word), float)
        covariance_a, covariance_b = kv_a.covariance(word), kv_b.covariance(word)
        joint = (covariance_a + covariance_b - covariance_a @ precision @ covariance_b
                 - covariance_b @ precision @ covariance_a)
        wald = difference @ np.linalg.inv(joint) @ difference
        nu = welch_satterthwaite_by_hand([np.trace(covariance_a), np.trace(covariance_b)],
                                         [dofs["first"][word], dofs["second"][word]])
        row = frame.loc[word]
        assert row["distance"] == pytest.approx(np.linalg.norm(difference), rel=1e-12)
        assert row["chi2"] == pytest.approx(wald, rel=1e-8)
        assert row["df"] == pytest.approx(nu, rel=1e-10)
        # each covariance is s2 times a known matrix (only s2 is estimated): wald / D is F(D, nu)
        assert row["P>chi2"] == pytest.approx(stats.f.sf(wald / DIM, DIM, nu), rel=1e-8)
        assert normal.loc[word, "chi2"] == pytest.approx(wald, rel=1e-8)
        assert normal.loc[word, "df"] == np.inf
        assert normal.loc[word, "P>chi2"] == pytest.approx(stats.chi2.sf(wald, DIM), rel=1e-8)


def test_a_word_missing_from_one_embedding_is_named(simulation, halves):
    (embeddings, _), words = halves, chosen_words(simulation, halves)
    with pytest.raises(UndefinedCovarianceError, match="not-a-word"):
        vector_change_test(embeddings["first"], embeddings["second"], [words[0], "not-a-word"])
    frame = vector_change_test(embeddings["first"], embeddings["second"], [words[0], "not-a-word"], missing="drop")
    assert list(frame.index) == [words[0]]
    assert any("not-a-word" in dropped for dropped in frame.attrs["dropped"])
    with pytest.raises(ValueError, match="two distinct names"):
        self_similarity(embeddings["first"], embeddings["second"], words[:1], labels=("A", "A"))


def self_similarity_coverage(simulation, truth_cosine, replications=300):
    """Coverage of self_similarity's delta-method interval for the frequent word, its vector in the second
    'sub-corpus' turned away from the first by the angle whose cosine is truth_cosine."""
    word = simulation.pair[0]
    truth = simulation.simulator.truth[word]
    generator = np.random.default_rng(31)
    turn = generator.standard_normal(truth.size)
    turn -= (turn @ truth) / (truth @ truth) * truth
    shift = np.linalg.norm(truth) * np.tan(np.arccos(truth_cosine)) * turn / np.linalg.norm(turn)
    shifted = truth + shift
    assert shifted @ truth / np.linalg.norm(shifted) / np.linalg.norm(truth) == pytest.approx(truth_cosine)
    covered = 0
    for _ in range(replications):
        first = simulation.simulator.draw([word], generator)
        second = simulation.simulator.draw([word], generator, shifts={word: shift})
        low, high = self_similarity(first, second, [word], method="delta").conf_int().iloc[0]
        covered += low <= truth_cosine <= high
    return covered / replications


def test_self_similarity_intervals_cover_away_from_1_and_say_they_do_not_near_it(simulation, record_property):
    coverage = self_similarity_coverage(simulation, 0.6)
    record_property("self_similarity_coverage_0.6", float(coverage))
    assert coverage >= 0.9
    first = simulation.simulator.draw([simulation.pair[0]], np.random.default_rng(1))
    second = simulation.simulator.draw([simulation.pair[0]], np.random.default_rng(2))
    result = self_similarity(first, second, [simulation.pair[0]], method="delta")
    assert "do not hold their coverage near 1" in str(result.summary())


@pytest.mark.xfail(strict=True, reason="self-similarity near 1: noise bias beyond the delta method's error "
                                       "(docs/method.md 7.3; measured 0.72 for this word)")
def test_self_similarity_intervals_cover_a_true_value_of_0_99(simulation, record_property):
    coverage = self_similarity_coverage(simulation, 0.99)
    record_property("self_similarity_coverage_0.99", float(coverage))
    assert coverage >= 0.935
