"""Results read like statsmodels, say what they rest on, and follow the one missing-words policy."""

from __future__ import annotations

import numpy as np
from scipy import stats
import pytest
from statsmodels.stats.contrast import ContrastResults
from statsmodels.stats.multitest import multipletests

from glovev_ext import UndefinedCovarianceError

MALE = ["he", "man", "him", "his", "father", "boy"]
FEMALE = ["she", "woman", "her", "hers", "mother", "girl"]
WORK = ["work", "money", "business", "office"]
HOME = ["home", "house", "family", "children"]
SPEECH = (["he", "him", "his", "man"], ["she", "her", "woman", "mother"], ["said", "asked", "told"],
          ["thought", "felt", "knew"])


@pytest.fixture
def kv(stats_kv):
    """The shared D = 10 model of the whole embedded corpus (read only)."""
    return stats_kv


def test_variance_by_word_names_the_words_that_make_a_test_uncertain(kv):
    result = kv.weat_test(*SPEECH)["effect size"]
    shares = result.variance_by_word()
    assert shares.sum() == pytest.approx(1.0) and set(shares.index) == set(result.words)
    assert shares.is_monotonic_decreasing
    contributions = dict(zip(result.words, result.variance_contributions))
    assert shares.iloc[0] == pytest.approx(max(contributions.values()) / result.std_error**2)


def test_results_read_like_statsmodels(kv):
    """The paper's recipe (delta method, normal, linear scale): a plain Wald z-test."""
    result = kv.similarity_test("man", "woman", null_value=0.5, alternative="larger", method="delta", use_t=False,
                                scale="linear")
    statistic, pvalue = result
    assert statistic == pytest.approx((result.estimate - 0.5) / result.std_error)
    assert pvalue == pytest.approx(1 - stats.norm.cdf(statistic))
    low, high = result.conf_int(confidence_level=0.9)
    assert low == pytest.approx(result.estimate - 1.644854 * result.std_error, rel=1e-6)
    frame = result.summary_frame()
    assert list(frame.columns) == ["coef", "std err", "z", "P>z", "Conf. Int. Low", "Conf. Int. Upp."]
    assert frame["z"].iloc[0] == pytest.approx((frame["coef"].iloc[0] - 0.5) / frame["std err"].iloc[0], rel=1e-12)
    assert "cos(man, woman): delta method" in str(result.summary())
    contrast = result.to_contrast()
    assert isinstance(contrast, ContrastResults)
    assert contrast.effect[0] == pytest.approx(result.estimate) and contrast.sd[0] == pytest.approx(result.std_error)


def test_default_results_use_t_on_fishers_z(kv):
    """By default: t with Welch-Satterthwaite df, test and interval on atanh(cos), both from one distribution."""
    result = kv.similarity_test("man", "woman", null_value=0.5, alternative="larger", method="delta")
    paper = kv.similarity_test("man", "woman", method="delta", use_t=False, scale="linear")
    assert result.std_error == pytest.approx(paper.std_error, rel=1e-12)
    contributions = result.variance_contributions
    dofs = [kv.covariance_factor(w).dof for w in result.words]
    assert result.df == pytest.approx(contributions.sum() ** 2 / sum(c**2 / d for c, d in zip(contributions, dofs)))
    z_se = result.std_error / (1 - result.estimate**2)
    assert result.statistic == pytest.approx((np.arctanh(result.estimate) - np.arctanh(0.5)) / z_se)
    assert result.pvalue == pytest.approx(stats.t.sf(result.statistic, result.df))
    q = stats.t.ppf(0.95, result.df)
    low, high = result.conf_int(confidence_level=0.9)
    assert (low, high) == pytest.approx((np.tanh(np.arctanh(result.estimate) - q * z_se),
                                         np.tanh(np.arctanh(result.estimate) + q * z_se)))
    # the p-value crosses 0.05 exactly where the null value leaves the 90 % interval (one-sided at 5 %)
    at_edge = kv.similarity_test("man", "woman", null_value=low, alternative="larger", method="delta")
    assert at_edge.pvalue == pytest.approx(0.05)
    frame = result.summary_frame()
    assert list(frame.columns) == ["coef", "std err", "t (atanh)", "P>t", "Conf. Int. Low", "Conf. Int. Upp.", "df"]
    assert result.statistic_kind == "atanh" and frame["t (atanh)"].iloc[0] == result.statistic
    text = str(result.summary())
    assert "Reference: t with" in text and "atanh" in text and "Method: delta method, as asked" in text
    contrast = result.to_contrast()
    assert contrast.distribution == "t" and contrast.df_denom == pytest.approx(result.df)


def test_families_take_a_named_multiple_testing_correction(kv):
    family = kv.similarity_family([("man", "woman"), ("man", "house"), ("boy", "girl")])
    corrected = family.correct("holm")
    np.testing.assert_allclose(corrected.pvalues_adjusted, multipletests(family.pvalues, method="holm")[1])
    assert "P adj. (holm)" in corrected.summary_frame().columns
    assert "multipletests(method='holm')" in str(corrected.summary())
    with pytest.raises(ValueError):
        family.correct("not-a-method")


def by_hand(result, confidence_level=0.95):
    """The pieces of a cosine's Monte Carlo interval, from its estimate, delta-method error, df and draws alone:
    the t interval on atanh, the draws' percentile interval, and the shift atanh(estimate) - atanh(median)."""
    z, z_error = np.arctanh(result.estimate), result.delta_std_error / (1 - result.estimate**2)
    q = stats.t.ppf(0.5 + confidence_level / 2, result.df)
    percentile = np.quantile(result.draws, [0.5 - confidence_level / 2, 0.5 + confidence_level / 2])
    return z, z_error, q, percentile, z - np.arctanh(np.median(result.draws))


def test_monte_carlo_intervals_join_the_linearised_and_the_slid_percentile_interval(kv):
    """Where the delta method's standard error is off (cos(king, queen), 15 %), the interval is the union of the t
    interval around the estimate and the draws' percentile interval slid from their median to the estimate."""
    result = kv.similarity_test("king", "queen", method="monte carlo", n_draws=500, random_state=4)
    delta = kv.similarity_test("king", "queen", method="delta")
    assert result.method == "Monte Carlo" and result.draws.shape == (500,) and result.draws_interval == "union"
    assert result.estimate == pytest.approx(kv.similarity("king", "queen"), rel=1e-6)
    assert result.delta_std_error == pytest.approx(delta.std_error, rel=1e-12)
    percentile = result.percentile_interval()
    assert percentile == pytest.approx(tuple(np.quantile(result.draws, [0.025, 0.975])))
    z, z_error, q, percentile, shift = by_hand(result)
    slid = np.tanh(np.arctanh(percentile) + [min(shift, 0), max(shift, 0)])
    low, high = result.conf_int()
    assert low == pytest.approx(min(np.tanh(z - q * z_error), percentile[0], slid[0]), rel=1e-12)
    assert high == pytest.approx(max(np.tanh(z + q * z_error), percentile[1], slid[1]), rel=1e-12)
    assert delta.conf_int()[0] >= low and delta.conf_int()[1] <= high
    # the p-value of 0: the larger of the Wald test's and the share of draws beyond 0, slid toward it
    on_atanh = np.arctanh(result.draws) + np.clip(-np.median(np.arctanh(result.draws)), min(shift, 0), max(shift, 0))
    share = 2 * min((on_atanh <= 0).mean(), (on_atanh >= 0).mean())
    assert result.pvalue == pytest.approx(max(delta.pvalue, min(1.0, share)))
    assert "Interval: the union of the t interval around the estimate (the delta method's standard error) and the " \
           "draws' percentile interval, slid from the draws' median to the estimate" in str(result.summary())
    # the paper's linear scale with centred draws: symmetric around the estimate with the draws' spread
    linear = kv.similarity_test("he", "she", method="monte carlo", n_draws=500, random_state=4, scale="linear",
                                use_t=False)
    assert linear.draws_interval == "union"
    assert sum(linear.conf_int()) / 2 == pytest.approx(linear.estimate)
    assert linear.conf_int()[1] - linear.estimate == pytest.approx(1.959964 * linear.std_error, rel=1e-5)
    with pytest.raises(ValueError, match="only Monte Carlo"):
        kv.similarity_test("man", "woman", method="delta").percentile_interval()


def test_shifted_draws_extend_the_interval_on_either_scale_and_every_rendering_agrees(kv):
    """cos(man, woman), Monte Carlo as asked: its draws lie 0.35 standard errors below the estimate, so the interval
    is the delta method's extended by the shift, on atanh (default) or on the statistic itself (linear); conf_int,
    summary_frame and summary show the same numbers, and the p-value inverts the interval."""
    result = kv.similarity_test("man", "woman", method="monte carlo", n_draws=2000, random_state=4)
    assert result.draws_interval == "extended" and "standard errors below the estimate" in result.method_reason
    z, z_error, q, _, shift = by_hand(result)
    expected = (np.tanh(min(z, z + shift) - q * z_error), np.tanh(max(z, z + shift) + q * z_error))
    assert result.conf_int() == pytest.approx(expected, rel=1e-12)
    frame = result.summary_frame()
    assert tuple(frame.iloc[0][["Conf. Int. Low", "Conf. Int. Upp."]]) == pytest.approx(expected, rel=1e-12)
    assert f"{expected[0]:.4g}" in str(result.summary()) and f"{expected[1]:.4g}" in str(result.summary())
    at_edge = kv.similarity_test("man", "woman", method="monte carlo", n_draws=2000, random_state=4,
                                 null_value=expected[1])
    assert at_edge.pvalue == pytest.approx(0.05, rel=1e-9)
    inside = kv.similarity_test("man", "woman", method="monte carlo", n_draws=2000, random_state=4,
                                null_value=np.tanh(z + shift / 2))
    # the test inverts the interval, so its statistic is the t of that p-value: 0 inside the interval's core
    assert inside.pvalue == 1.0 and inside.statistic == 0 and inside.statistic_kind == "from p"
    assert at_edge.statistic == pytest.approx(-stats.t.isf(0.025, at_edge.df), rel=1e-9)
    linear = kv.similarity_test("man", "woman", method="monte carlo", n_draws=2000, random_state=4, scale="linear")
    assert linear.draws_interval == "extended"
    gap = linear.estimate - np.median(linear.draws)
    q = stats.t.ppf(0.975, linear.df)
    assert linear.conf_int() == pytest.approx((linear.estimate - q * linear.delta_std_error,
                                               linear.estimate + gap + q * linear.delta_std_error), rel=1e-12)


def test_a_family_and_its_contrasts_keep_the_rule_of_their_draws(kv):
    """Each row of shifted draws, and a contrast of two such rows (its draws the difference of theirs), gets the
    extended interval, each row as it would alone; attenuation is each estimate minus its draws' median."""
    family = kv.similarity_family([("man", "woman"), ("good", "bad")], method="monte carlo", n_draws=2000,
                                  random_state=4)
    assert list(family.draws_interval) == ["extended", "extended"]
    he_she = kv.similarity_family([("man", "woman"), ("he", "she")], method="monte carlo", n_draws=2000,
                                  random_state=4)  # he-she's draws are centred: its own row joins the percentiles
    assert list(he_she.draws_interval) == ["extended", "union"] and he_she.difference(0, 1).draws_interval == "union"
    np.testing.assert_array_equal(he_she.conf_int().iloc[0], family.conf_int().iloc[0])
    np.testing.assert_allclose(family.attenuation, family.estimates - np.median(family.draws, axis=0), rtol=1e-12)
    for k in range(2):
        row = family[k]
        assert row.draws_interval == "extended" and row.attenuation == pytest.approx(family.attenuation[k])
        np.testing.assert_allclose(family.conf_int().iloc[k], row.conf_int(), rtol=1e-12)
    difference = family.difference(0, 1)
    assert difference.draws_interval == "extended" and difference.bounds == (-2.0, 2.0)
    draws = family.draws[:, 0] - family.draws[:, 1]
    half = difference.estimate / 2  # a difference of cosines lies in [-2, 2]
    z, z_error = np.arctanh(half), difference.delta_std_error / 2 / (1 - half**2)
    shift = z - np.arctanh(np.median(draws) / 2)
    q = stats.t.ppf(0.975, difference.df)
    expected = 2 * np.tanh([min(z, z + shift) - q * z_error, max(z, z + shift) + q * z_error])
    np.testing.assert_allclose(difference.conf_int(), expected, rtol=1e-12)
    assert "extended by the draws' shift" in str(family.summary())
    assert np.isnan(kv.similarity_test("man", "woman", method="delta").attenuation)  # no draws


def test_unusable_words_are_named_and_dropped_or_refused(kv):
    rare = next(k for k in kv.index_to_key if not kv.has_covariance(k))
    with pytest.raises(UndefinedCovarianceError, match=f"{rare} \\(no covariance"):
        kv.weat_test(MALE + [rare], FEMALE, WORK, HOME)
    family = kv.weat_test(MALE + [rare, "notaword"], FEMALE, WORK, HOME, missing="drop")
    assert any(rare in d for d in family.dropped)
    assert any("notaword (not in the vocabulary)" in d for d in family.dropped)
    assert "2 words dropped (1 not in the vocabulary, 1 without a covariance)" in str(family.summary())
    assert "Dropped: " in str(family.summary())
    pairs = kv.similarity_family([("man", "woman"), ("man", "notaword")], missing="drop")
    assert pairs.names == ("cos(man, woman)",)
    assert "1 pair dropped (1 with a word not in the vocabulary)" in str(pairs.summary())
    assert "1 pair dropped (1 with a word not in the vocabulary)" in str(pairs[0].summary())
