"""The reference distribution and the scale: Welch-Satterthwaite, bounded intervals, method="auto", the notes."""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy import stats

import glovev_ext
from glovev_ext.stats import cosine_statistic, weat_statistic
from glovev_ext.stats.engine.intervals import welch_satterthwaite
from glovev_ext.stats.engine.intervals import (draws_cdf, extended_intervals, extended_pvalues, intervals, median_shift,
                                        median_shift_noise, pvalue, scaled_errors, union_intervals,
                                        union_pvalues, wald_statistics)
from glovev_ext.stats.statistics.weat import effect_size_bound

SPEECH = (["he", "him", "his", "man"], ["she", "her", "woman", "mother"], ["said", "asked", "told"],
          ["thought", "felt", "knew"])


@pytest.fixture
def kv(stats_kv):
    """The shared D = 10 model of the whole embedded corpus (read only)."""
    return stats_kv


def test_welch_satterthwaite_matches_its_formula_term_by_term():
    contributions = np.array([[0.5, 0.0], [0.25, 1.0], [1.5, 2.0]])
    dofs = np.array([4.0, 30.0, np.inf])
    expected = [sum(contributions[:, k]) ** 2 / sum(c**2 / d for c, d in zip(contributions[:, k], dofs) if np.isfinite(d))
                for k in range(2)]
    np.testing.assert_allclose(welch_satterthwaite(contributions, dofs), expected)
    assert welch_satterthwaite(np.array([[1.0]]), np.array([np.inf]))[0] == np.inf
    # one word: its own degrees of freedom
    assert welch_satterthwaite(np.array([[3.0]]), np.array([7.0]))[0] == pytest.approx(7.0)


def test_bounded_intervals_stay_in_range_and_invert_the_test():
    bounds = np.array([[-1.0, 1.0]] * 3)
    estimates, errors, df = np.array([0.9, -0.2, 0.0]), np.array([5.0, 0.1, 0.3]), np.array([4.0, 40.0, np.inf])
    scaled = scaled_errors(estimates, errors, bounds, "bounded")
    np.testing.assert_allclose(scaled, errors / (1 - estimates**2))
    interval = intervals(estimates, scaled, df, bounds, "bounded", 0.95)
    assert (interval >= -1).all() and (interval <= 1).all() and interval[0, 1] > 0.9999
    linear = intervals(estimates, errors, df, bounds, "linear", 0.95)
    assert linear[0, 1] > 1 and linear[2, 1] == pytest.approx(stats.norm.ppf(0.975) * 0.3)
    for k in range(3):
        for edge in interval[k]:
            if -1 < edge < 1:
                statistic = wald_statistics(estimates[k:k + 1], scaled[k:k + 1], [edge], bounds[k:k + 1], "bounded")
                assert pvalue(statistic, df[k], "two-sided")[0] == pytest.approx(0.05)


def test_an_estimate_at_its_bound_gets_the_limit_of_the_bounded_interval_not_nan():
    """An accuracy of 0 or 1 is at infinity on the atanh scale: the interval tends to the whole range as the
    estimate approaches the bound (checked against estimates just inside it), or is the point itself without error."""
    bounds = np.array([[0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [-1.0, 1.0]])
    estimates = np.array([0.0, 1.0, 1.0, 0.3])
    with np.errstate(divide="ignore", invalid="ignore"):
        errors = scaled_errors(estimates, [0.1, 0.1, 0.0, 0.2], bounds, "bounded")
    at = intervals(estimates, errors, np.inf, bounds, "bounded", 0.95)
    np.testing.assert_array_equal(at[:3], [[0.0, 1.0], [0.0, 1.0], [1.0, 1.0]])
    near = np.array([1e-9, 1 - 1e-9])
    interval = intervals(near, scaled_errors(near, [0.1, 0.1], bounds[:2], "bounded"), np.inf, bounds[:2], "bounded",
                         0.95)
    np.testing.assert_allclose(interval, [[0.0, 1.0], [0.0, 1.0]], atol=1e-6)
    assert -1 < at[3, 0] < 0.3 < at[3, 1] < 1
    statistics = wald_statistics(estimates[:2], errors[:2], [0.5, 0.5], bounds[:2], "bounded")
    np.testing.assert_array_equal(statistics, [0.0, 0.0])  # the limit: (g(u) - g(null)) / (se g'(u)) -> 0
    inside = wald_statistics(near, scaled_errors(near, [0.1, 0.1], bounds[:2], "bounded"), [0.5, 0.5], bounds[:2],
                             "bounded")
    np.testing.assert_allclose(inside, [0.0, 0.0], atol=1e-6)


def test_the_draws_share_inverts_numpys_quantiles_exactly_ties_included(rng):
    continuous = rng.normal(size=(401, 1))
    discrete = rng.integers(0, 5, size=(401, 1)).astype(float)  # a step statistic: many draws share a value
    for draws in (continuous, discrete):
        for q in np.linspace(0.0125, 0.9875, 79):
            end = float(np.quantile(draws, q))
            # a lower interval end at the q quantile holds a value exactly when its share is at least q
            for value in (end, end - 1e-6, end + 1e-6, end - 0.3, end + 0.3):
                assert (draws_cdf(draws, [value], "lower")[0] >= q - 1e-12) == (value >= end), (q, value)
                assert (draws_cdf(draws, [value], "upper")[0] <= q + 1e-12) == (value <= end), (q, value)
    assert draws_cdf(continuous, [10.0], "lower")[0] == 1.0 and draws_cdf(continuous, [-10.0], "upper")[0] == 0.0
    ordered = np.sort(continuous[:, 0])
    assert draws_cdf(continuous, [(ordered[99] + ordered[100]) / 2], "lower")[0] == pytest.approx(99.5 / 400)


def test_the_weat_effect_size_bound_is_attained_and_never_exceeded(rng):
    for n_x, n_y, ddof in ((4, 4, 1), (4, 4, 0), (6, 2, 1)):
        bound = effect_size_bound(n_x, n_y, ddof)
        constant = np.r_[np.ones(n_x), np.zeros(n_y)]
        attained = (constant[:n_x].mean() - constant[n_x:].mean()) / constant.std(ddof=ddof)
        assert attained == pytest.approx(bound)
        values = rng.normal(size=(5000, n_x + n_y))
        effects = (values[:, :n_x].mean(1) - values[:, n_x:].mean(1)) / values.std(axis=1, ddof=ddof)
        assert np.abs(effects).max() <= bound
    assert effect_size_bound(8, 8, 0) == pytest.approx(2.0)


def test_contrasts_get_welch_satterthwaite_from_each_words_share(kv):
    family = kv.similarity_family([("man", "woman"), ("man", "house"), ("boy", "girl")], method="delta")
    difference = family.difference(0, 1)
    weights = np.array([1.0, -1.0, 0.0])
    statistic = cosine_statistic([("man", "woman"), ("man", "house"), ("boy", "girl")])
    vectors = glovev_ext.stats.engine.words.vectors_of(kv, statistic.keys)
    jacobian = statistic.jacobian(vectors)
    shares = [weights @ jacobian[:, i] @ kv.covariance(word) @ jacobian[:, i].T @ weights
              for i, word in enumerate(statistic.keys)]
    dofs = [kv.covariance_factor(word).dof for word in statistic.keys]
    assert difference.std_error**2 == pytest.approx(sum(shares))
    assert difference.df == pytest.approx(sum(shares) ** 2 / sum(s**2 / d for s, d in zip(shares, dofs) if s > 0))
    assert difference.bounds == (-2.0, 2.0)
    assert family.df == pytest.approx([family[k].df for k in range(3)])


def quoted(pattern, reason):
    """A number ``method_reason`` quotes, e.g. ``r"within ([0-9.]+)%"``."""
    return float(re.search(pattern, reason).group(1))


def independent_shift(kv, a, b):
    """Where 20,000 normal draws of cos(a, b) are centred: (atanh(estimate) - atanh(median)) in delta-method
    standard errors on atanh (its Monte Carlo noise: about 0.009)."""
    drawn = kv.similarity_test(a, b, method="monte carlo", use_t=False, n_draws=20000, random_state=7)
    z_error = drawn.delta_std_error / (1 - drawn.estimate**2)
    return (np.arctanh(drawn.estimate) - np.arctanh(np.median(drawn.draws))) / z_error


def test_auto_keeps_the_delta_method_only_where_monte_carlo_agrees(kv):
    frequent = kv.similarity_test("he", "she", random_state=1)
    assert frequent.method == "delta method" and "agree with 2000 Monte Carlo draws within" in frequent.method_reason
    drawn = kv.similarity_test("he", "she", method="monte carlo", n_draws=8000, random_state=2)
    assert frequent.std_error == pytest.approx(drawn.std_error, rel=0.05)
    # the gap the reason quotes, against an independent 8,000-draw estimate (its noise: about 0.8 %)
    gap = quoted(r"within ([0-9.]+)%", frequent.method_reason) / 100
    assert gap == pytest.approx(abs(frequent.std_error / drawn.std_error - 1), abs=0.02)
    # and where the draws lie, against 20,000 independent draws (noise of the quoted one: 0.03)
    shift = quoted(r"within ([0-9.]+) standard errors of the estimates", frequent.method_reason)
    assert shift <= 0.25 and shift == pytest.approx(abs(independent_shift(kv, "he", "she")), abs=0.1)
    few = min((w for w in kv.index_to_key if kv.has_covariance(w)), key=lambda w: kv.covariance_factor(w).dof)
    assert kv.covariance_factor(few).dof < 10
    untrusted = kv.similarity_test(few, "man", random_state=1)  # too few degrees of freedom to judge by
    assert untrusted.method == "Monte Carlo" and untrusted.draws_interval == "union"
    assert "degrees of freedom, too few for its covariance to show" in untrusted.method_reason
    rare = max((w for w in kv.index_to_key if kv.has_covariance(w) and kv.covariance_factor(w).dof >= 10),
               key=lambda w: np.trace(kv.covariance(w)))
    hard = kv.similarity_test(rare, "man", random_state=1)
    assert hard.method == "Monte Carlo" and "off the draws'" in hard.method_reason
    assert hard.draws_interval == "union"
    assert -1 <= hard.conf_int()[0] <= hard.conf_int()[1] <= 1
    assert f"Method: {hard.method_reason}" in str(hard.summary())


def test_auto_leaves_the_delta_method_where_the_draws_are_shifted(kv):
    """cos(man, woman): standard errors agree within 3 %, but the draws' median lies 0.35 standard errors below
    the estimate (noise pulls cosines toward 0). Before, "auto" kept the delta method; now the result says so
    and extends the delta interval by the shift."""
    result = kv.similarity_test("man", "woman", random_state=1)
    expected = independent_shift(kv, "man", "woman")
    assert expected > 0.25
    assert result.method == "Monte Carlo" and result.draws_interval == "extended"
    shift = quoted(r"centred ([0-9.]+) standard errors below the estimate", result.method_reason)
    assert shift == pytest.approx(expected, abs=0.1)
    assert "though its standard errors agree within" in result.method_reason
    assert quoted(r"Monte Carlo noise ([0-9.]+)", result.method_reason) == pytest.approx(np.sqrt(np.pi / 4000),
                                                                                           abs=0.005)
    # the interval by hand: the t interval on atanh, centred anywhere from the estimate to 2 z - atanh(median)
    z, z_error = np.arctanh(result.estimate), result.delta_std_error / (1 - result.estimate**2)
    corrected = 2 * z - np.arctanh(np.median(result.draws))
    q = stats.t.ppf(0.975, result.df)
    low, high = result.conf_int()
    assert (low, high) == pytest.approx((np.tanh(z - q * z_error), np.tanh(corrected + q * z_error)), rel=1e-12)
    assert low < result.estimate < np.tanh(corrected) < high
    assert result.attenuation == pytest.approx(result.estimate - np.median(result.draws), rel=1e-12)
    text = str(result.summary())
    assert "Interval: the t interval around the estimate (the delta method's standard error, on atanh) extended " \
           "by the draws' shift" in text
    assert f"the draws' median is {np.median(result.draws):.4g}, {result.attenuation:.4g} below the estimate" in text


def test_a_shift_diagnostic_of_made_up_draws(rng):
    """Draws whose median sits 0.4 standard errors below the estimate on atanh; its Monte Carlo noise is that of a
    normal sample's median, sqrt(pi / (2 n))."""
    bounds = np.array([[-1.0, 1.0], [-np.inf, np.inf]])
    estimates, z_errors = np.array([0.5, 3.0]), np.array([0.1, 2.0])
    centres = np.array([np.arctanh(0.5) - 0.4 * 0.1, 3.0 + 0.6 * 2.0])
    shifts = []
    for _ in range(400):
        on_scale = centres + z_errors * rng.standard_normal((1000, 2))
        draws = np.column_stack([np.tanh(on_scale[:, 0]), on_scale[:, 1]])
        shifts.append(median_shift(estimates, draws, z_errors, bounds, "bounded"))
    shifts = np.array(shifts)
    np.testing.assert_allclose(shifts.mean(axis=0), [0.4, -0.6], atol=0.01)
    np.testing.assert_allclose(shifts.std(axis=0), median_shift_noise(1000), rtol=0.15)
    assert median_shift_noise(1000) == pytest.approx(np.sqrt(np.pi / 2000))
    # an estimate and draws all at the same bound: no shift (an accuracy of 0 drawn as 0)
    at_bound = median_shift([0.0], np.zeros((10, 1)), [0.1], np.array([[0.0, 1.0]]), "bounded")
    np.testing.assert_array_equal(at_bound, [0.0])


def brute_force_union(pieces):
    """The union of closed intervals, as a list of disjoint pieces."""
    merged = []
    for low, high in sorted(pieces):
        if merged and low <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    return merged


@pytest.mark.parametrize("shift", [0.03, -0.1, 1.5])
def test_the_extended_interval_is_every_interval_centred_between_the_estimate_and_its_correction(shift):
    """Brute force over 4,001 centres from atanh(estimate) to atanh(estimate) + shift (atanh units; the standard
    error there is 0.1): one piece holding the estimate, even for a shift of 15 standard errors."""
    bounds, estimate, z_error, df = np.array([[-1.0, 1.0]]), 0.6, 0.1, 30.0
    q = stats.t.ppf(0.975, df)
    centres = np.arctanh(estimate) + np.linspace(0, shift, 4001)
    pieces = brute_force_union([(np.tanh(c - q * z_error), np.tanh(c + q * z_error)) for c in centres])
    assert len(pieces) == 1
    interval = extended_intervals([estimate], [z_error], np.array([shift]), [df], bounds, "bounded", 0.95)[0]
    np.testing.assert_allclose(interval, pieces[0], rtol=1e-12)
    assert interval[0] < estimate < interval[1]
    # the p-value inverts it: 0.05 at both ends, 1 between the estimate and its correction, below 0.05 outside
    ends = extended_pvalues([estimate] * 2, [z_error] * 2, np.array([shift] * 2), interval, [df] * 2,
                            np.vstack([bounds] * 2), "bounded", "two-sided")
    np.testing.assert_allclose(ends, 0.05, rtol=1e-9)
    between = np.tanh(np.arctanh(estimate) + shift / 2)
    assert extended_pvalues([estimate], [z_error], np.array([shift]), [between], [df], bounds, "bounded",
                            "two-sided")[0] == 1.0
    outside = extended_pvalues([estimate] * 2, [z_error] * 2, np.array([shift] * 2),
                               [interval[0] - 0.01, interval[1] + 0.01], [df] * 2, np.vstack([bounds] * 2),
                               "bounded", "two-sided")
    assert (outside < 0.05).all()
    # one-sided: the lower end of the 90 % interval is where "larger" rejects at 5 %
    lower = extended_intervals([estimate], [z_error], np.array([shift]), [df], bounds, "bounded", 0.9)[0, 0]
    assert extended_pvalues([estimate], [z_error], np.array([shift]), [lower], [df], bounds, "bounded",
                            "larger")[0] == pytest.approx(0.05, rel=1e-9)


def test_the_union_with_draws_that_miss_the_wald_interval_is_one_piece(rng):
    """Draws centred 6 standard errors below the estimate: their percentile interval and the Wald interval are
    disjoint, and the previous hull of the two held values that both rejected. Now the draws' interval slides
    from their median to the estimate: one piece, the union of every slid interval (brute force) and the Wald
    interval, and a p-value that is below 0.05 exactly outside it."""
    bounds, estimate, z_error, df = np.array([[-1.0, 1.0]]), 0.5, 0.05, np.inf
    draws = np.tanh(np.arctanh(estimate) - 6 * z_error + z_error * rng.standard_normal((4000, 1)))
    wald = intervals([estimate], [z_error], [df], bounds, "bounded", 0.95)[0]
    low, high = np.quantile(draws, [0.025, 0.975])
    assert high < wald[0]  # disjoint
    shift = np.arctanh(estimate) - np.arctanh(np.median(draws))
    slides = np.linspace(0, shift, 4001)
    pieces = brute_force_union([tuple(wald)] + [(np.tanh(np.arctanh(low) + s), np.tanh(np.arctanh(high) + s))
                                                for s in slides])
    assert len(pieces) == 1
    interval = union_intervals([estimate], [z_error], draws, [df], bounds, "bounded", 0.95)[0]
    np.testing.assert_allclose(interval, pieces[0], rtol=1e-10)
    nulls = np.linspace(interval[0] - 0.05, interval[1] + 0.05, 401)
    p = union_pvalues(np.full(nulls.size, estimate), np.full(nulls.size, z_error),
                      np.repeat(draws, nulls.size, axis=1), nulls, np.full(nulls.size, df),
                      np.repeat(bounds, nulls.size, axis=0), "bounded", "two-sided")
    inside = (nulls >= interval[0]) & (nulls <= interval[1])
    clear = np.minimum(np.abs(nulls - interval[0]), np.abs(nulls - interval[1])) > 2e-3
    np.testing.assert_array_equal((p >= 0.05)[clear], inside[clear])
    gap = (high + wald[0]) / 2  # between the two pieces: both used to reject there
    assert union_pvalues([estimate], [z_error], draws, [gap], [df], bounds, "bounded", "two-sided")[0] == 1.0


def test_results_name_the_words_that_dominate_a_variance(kv):
    rare = max((w for w in kv.index_to_key if kv.has_covariance(w)), key=lambda w: np.trace(kv.covariance(w)))
    X, Y, A, B = ([rare, *SPEECH[0][1:]], *SPEECH[1:])
    family = kv.weat_test(X, Y, A, B, method="delta")
    shares = family[0].variance_by_word()
    assert shares.index[0] == rare and shares.iloc[0] >= 2 / 3
    assert any(line.startswith(f"Variance of effect size dominated by {rare!r}") for line in family.caveats)
    assert f"dominated by {rare!r}" in str(family.summary())
    # a cosine: named exactly when one of its two words carries two thirds of the variance
    for a, b in (("man", "woman"), (rare, "man")):
        result = kv.similarity_test(a, b, method="delta")
        shares = result.variance_by_word()
        named = [line for line in result.caveats if "dominated" in line]
        if shares.iloc[0] >= 2 / 3:
            assert named == [f"Variance of cos({a}, {b}) dominated by {shares.index[0]!r} ({shares.iloc[0]:.0%})"]
        else:
            assert named == []
    assert kv.similarity_test(rare, "man", method="delta").variance_by_word().index[0] == rare


def test_results_on_the_papers_pseudo_inverse_say_their_variance_is_understated(embedded_cooccurrence):
    model = glovev_ext.GloVeVEstimator(30, epochs=10, random_state=0, n_jobs=1, conditioning="paper",
                                       point_estimate="trained",
                                       progress=False).fit(embedded_cooccurrence)
    kv = glovev_ext.KeyedVectorsWithVariance.from_estimator(model)
    word = embedded_cooccurrence.words[int(np.flatnonzero(model.pseudo_inverse_)[0])]
    lost = 30 - int(model.covariance_rank_[list(embedded_cooccurrence.words).index(word)])
    result = kv.similarity_test(word, "the", method="delta")
    assert f"{word!r} along {lost} of 30 directions" in result.caveats[-1]
    assert "Variance understated" in str(result.summary())
    assert kv.covariance_factor(word).understated == lost
    for method in ("delta", "auto"):
        table = kv.similarity_tests([(word, "the"), ("man", "woman")], method=method, n_draws=100)
        assert f"{word!r} along {lost} of 30 directions" in table.caveats[0] and len(table.caveats) == 1
        assert "Variance understated" in str(table.summary())


def test_weat_intervals_stay_within_the_attainable_range(kv):
    family = kv.weat_test(*SPEECH, random_state=0)
    bound = effect_size_bound(4, 4, 1)
    low, high = family.conf_int().iloc[0]
    assert -bound <= low <= high <= bound
    paper = kv.weat_test(*SPEECH, method="delta", use_t=False, scale="linear")
    assert paper.std_errors[0] == pytest.approx(glovev_ext.estimate(kv, weat_statistic(*SPEECH),
                                                                    method="delta").std_errors[0])


def test_no_interval_leaves_the_range_of_its_statistic(kv):
    """Random pairs of words with covariances, rare ones included, with the paper's recipe for contrast."""
    usable = [w for w in kv.index_to_key if kv.has_covariance(w)]
    chosen = np.random.default_rng(3).choice(len(usable), size=(60, 2))
    outside_paper = 0
    for k, (a, b) in enumerate(chosen):
        if a == b:
            continue
        low, high = kv.similarity_test(usable[a], usable[b], random_state=k, n_draws=500).conf_int()
        assert -1 <= low <= high <= 1
        low, high = kv.similarity_test(usable[a], usable[b], method="delta", use_t=False, scale="linear").conf_int()
        outside_paper += not -1 <= low <= high <= 1
    assert outside_paper > 0
