"""The reference distribution and the scale: Welch-Satterthwaite, bounded intervals, method="auto", the notes."""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy import stats

import glovev_ext
from glovev_ext.stats import cosine_statistic, welch_satterthwaite, weat_statistic
from glovev_ext.stats.intervals import intervals, percentile_pvalues, pvalue, scaled_errors, wald_statistics
from glovev_ext.stats.weat import effect_size_bound

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


def test_percentile_pvalues_invert_the_percentile_interval(rng):
    draws = rng.normal(size=(4000, 1))
    low, high = np.quantile(draws, [0.025, 0.975])
    assert percentile_pvalues(draws, [low], "two-sided")[0] == pytest.approx(0.05, abs=1e-3)
    assert percentile_pvalues(draws, [high], "larger")[0] == pytest.approx(0.975, abs=1e-3)
    assert percentile_pvalues(draws, [10.0], "two-sided")[0] == 0.0


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
    family = kv.similarities_test([("man", "woman"), ("man", "house"), ("boy", "girl")], method="delta")
    difference = family.difference(0, 1)
    weights = np.array([1.0, -1.0, 0.0])
    statistic = cosine_statistic([("man", "woman"), ("man", "house"), ("boy", "girl")])
    vectors = glovev_ext.stats.vectors_of(kv, statistic.keys)
    jacobian = statistic.jacobian(vectors)
    shares = [weights @ jacobian[:, i] @ kv.covariance(word) @ jacobian[:, i].T @ weights
              for i, word in enumerate(statistic.keys)]
    dofs = [kv.covariance_factor(word).dof for word in statistic.keys]
    assert difference.std_error**2 == pytest.approx(sum(shares))
    assert difference.df == pytest.approx(sum(shares) ** 2 / sum(s**2 / d for s, d in zip(shares, dofs) if s > 0))
    assert difference.bounds == (-2.0, 2.0)
    assert family.df == pytest.approx([family[k].df for k in range(3)])


def test_auto_keeps_the_delta_method_only_where_monte_carlo_agrees(kv):
    frequent = kv.similarity_test("man", "woman", random_state=1)
    assert frequent.method == "delta method" and "agree with 2000 Monte Carlo draws within" in frequent.method_reason
    drawn = kv.similarity_test("man", "woman", method="monte carlo", n_draws=8000, random_state=2)
    assert frequent.std_error == pytest.approx(drawn.std_error, rel=0.05)
    # the gap the reason quotes, against an independent 8,000-draw estimate (its noise: about 0.8 %)
    quoted = float(re.search(r"within ([0-9.]+)%", frequent.method_reason).group(1)) / 100
    assert quoted == pytest.approx(abs(frequent.std_error / drawn.std_error - 1), abs=0.02)
    rare = max((w for w in kv.index_to_key if kv.has_covariance(w)), key=lambda w: np.trace(kv.covariance(w)))
    hard = kv.similarity_test(rare, "man", random_state=1)
    assert hard.method == "Monte Carlo" and "off the draws'" in hard.method_reason
    assert -1 <= hard.conf_int()[0] <= hard.conf_int()[1] <= 1
    assert f"Method: {hard.method_reason}" in str(hard.summary())


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
    low, high = family.conf_int()[0]
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
