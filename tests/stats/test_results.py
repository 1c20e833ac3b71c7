"""Results read like statsmodels, say what they rest on, and follow the one missing-words policy."""

from __future__ import annotations

import numpy as np
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
    result = kv.similarity_test("man", "woman", null_value=0.5, alternative="larger")
    statistic, pvalue = result
    assert statistic == pytest.approx((result.estimate - 0.5) / result.std_error)
    assert pvalue == pytest.approx(1 - __import__("scipy").stats.norm.cdf(statistic))
    low, high = result.conf_int(confidence_level=0.9)
    assert low == pytest.approx(result.estimate - 1.644854 * result.std_error, rel=1e-6)
    frame = result.summary_frame()
    assert list(frame.columns) == ["coef", "std err", "z", "P>|z|", "Conf. Int. Low", "Conf. Int. Upp."]
    assert "cos(man, woman): delta method" in str(result.summary())
    contrast = result.to_contrast()
    assert isinstance(contrast, ContrastResults)
    assert contrast.effect[0] == pytest.approx(result.estimate) and contrast.sd[0] == pytest.approx(result.std_error)


def test_families_take_a_named_multiple_testing_correction(kv):
    family = kv.similarities_test([("man", "woman"), ("man", "house"), ("boy", "girl")])
    corrected = family.correct("holm")
    np.testing.assert_allclose(corrected.pvalues_adjusted, multipletests(family.pvalues, method="holm")[1])
    assert "P adj. (holm)" in corrected.summary_frame().columns
    assert "multipletests(method='holm')" in str(corrected.summary())
    with pytest.raises(ValueError):
        family.correct("not-a-method")


def test_monte_carlo_results_centre_intervals_on_the_estimate(kv):
    result = kv.similarity_test("man", "woman", method="monte carlo", n_draws=500, random_state=4)
    assert result.method == "Monte Carlo" and result.draws.shape == (500,)
    assert result.estimate == pytest.approx(kv.similarity("man", "woman"), rel=1e-6)
    assert result.std_error == pytest.approx(result.draws.std(ddof=1))
    low, high = result.conf_int()
    assert (low + high) / 2 == pytest.approx(result.estimate)
    assert result.percentile_interval() == pytest.approx(tuple(np.quantile(result.draws, [0.025, 0.975])))
    with pytest.raises(ValueError, match="only Monte Carlo"):
        kv.similarity_test("man", "woman").percentile_interval()


def test_unusable_words_are_named_and_dropped_or_refused(kv):
    rare = next(k for k in kv.index_to_key if not kv.has_covariance(k))
    with pytest.raises(UndefinedCovarianceError, match=f"{rare} \\(no covariance"):
        kv.weat_test(MALE + [rare], FEMALE, WORK, HOME)
    family = kv.weat_test(MALE + [rare, "notaword"], FEMALE, WORK, HOME, missing="drop")
    assert any(rare in d for d in family.dropped)
    assert any("notaword (not in the vocabulary)" in d for d in family.dropped)
    assert "dropped: 2" in str(family.summary()) and "Dropped: " in str(family.summary())
    pairs = kv.similarities_test([("man", "woman"), ("man", "notaword")], missing="drop")
    assert pairs.names == ("cos(man, woman)",)
