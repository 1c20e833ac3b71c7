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
    assert list(frame.columns) == ["coef", "std err", "z", "P>|z|", "Conf. Int. Low", "Conf. Int. Upp."]
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
    assert list(frame.columns) == ["coef", "std err", "t", "P>|t|", "Conf. Int. Low", "Conf. Int. Upp.", "df"]
    text = str(result.summary())
    assert "Reference: t with" in text and "atanh" in text and "Method: delta method, as asked" in text
    contrast = result.to_contrast()
    assert contrast.distribution == "t" and contrast.df_denom == pytest.approx(result.df)


def test_families_take_a_named_multiple_testing_correction(kv):
    family = kv.similarities_test([("man", "woman"), ("man", "house"), ("boy", "girl")])
    corrected = family.correct("holm")
    np.testing.assert_allclose(corrected.pvalues_adjusted, multipletests(family.pvalues, method="holm")[1])
    assert "P adj. (holm)" in corrected.summary_frame().columns
    assert "multipletests(method='holm')" in str(corrected.summary())
    with pytest.raises(ValueError):
        family.correct("not-a-method")


def test_monte_carlo_intervals_join_the_linearised_and_the_percentile_interval(kv):
    result = kv.similarity_test("man", "woman", method="monte carlo", n_draws=500, random_state=4)
    delta = kv.similarity_test("man", "woman", method="delta")
    assert result.method == "Monte Carlo" and result.draws.shape == (500,)
    assert result.estimate == pytest.approx(kv.similarity("man", "woman"), rel=1e-6)
    assert result.delta_std_error == pytest.approx(delta.std_error, rel=1e-12)
    assert result.std_error == pytest.approx(delta.std_error, rel=0.1)
    percentile = result.percentile_interval()
    assert percentile == pytest.approx(tuple(np.quantile(result.draws, [0.025, 0.975])))
    low, high = result.conf_int()
    assert low == pytest.approx(min(percentile[0], delta.conf_int()[0]))
    assert high == pytest.approx(max(percentile[1], delta.conf_int()[1]))
    assert result.pvalue == pytest.approx(max(delta.pvalue, 2 * min((result.draws <= 0).mean(),
                                                                    (result.draws >= 0).mean())))
    # the paper's: symmetric around the estimate with the draws' spread
    linear = kv.similarity_test("man", "woman", method="monte carlo", n_draws=500, random_state=4, scale="linear",
                                use_t=False)
    assert sum(linear.conf_int()) / 2 == pytest.approx(result.estimate)
    assert linear.conf_int()[1] - linear.estimate == pytest.approx(1.959964 * linear.std_error, rel=1e-5)
    with pytest.raises(ValueError, match="only Monte Carlo"):
        kv.similarity_test("man", "woman", method="delta").percentile_interval()


def test_unusable_words_are_named_and_dropped_or_refused(kv):
    rare = next(k for k in kv.index_to_key if not kv.has_covariance(k))
    with pytest.raises(UndefinedCovarianceError, match=f"{rare} \\(no covariance"):
        kv.weat_test(MALE + [rare], FEMALE, WORK, HOME)
    family = kv.weat_test(MALE + [rare, "notaword"], FEMALE, WORK, HOME, missing="drop")
    assert any(rare in d for d in family.dropped)
    assert any("notaword (not in the vocabulary)" in d for d in family.dropped)
    assert "2 words dropped (1 not in the vocabulary, 1 without a covariance)" in str(family.summary())
    assert "Dropped: " in str(family.summary())
    pairs = kv.similarities_test([("man", "woman"), ("man", "notaword")], missing="drop")
    assert pairs.names == ("cos(man, woman)",)
    assert "1 pair dropped (1 with a word not in the vocabulary)" in str(pairs.summary())
    assert "1 pair dropped (1 with a word not in the vocabulary)" in str(pairs[0].summary())
