"""The paper's statistics against independent computations: WEAT and its permutation test, the cosine bias,
neighbours, benchmark evaluations."""

from __future__ import annotations

import copy
import itertools
import math
import re

import numpy as np
import pytest
from scipy import stats
from scipy.stats import spearmanr

import glovev_ext
from glovev_ext import UndefinedCovarianceError
from glovev_ext.stats import read_word_pairs, weat_statistic

MALE = ["he", "man", "him", "his", "father", "boy"]
FEMALE = ["she", "woman", "her", "hers", "mother", "girl"]
WORK = ["work", "money", "business", "office"]
HOME = ["home", "house", "family", "children"]


@pytest.fixture
def kv(stats_kv):
    """The shared D = 10 model of the whole embedded corpus (read only)."""
    return stats_kv


def brute_force_permutation_pvalue(kv, X, Y, A, B):
    def s(word):
        return np.mean([kv.similarity(word, a) for a in A]) - np.mean([kv.similarity(word, b) for b in B])

    targets = X + Y
    scores = {w: s(w) for w in targets}

    def statistic(group):
        rest = [w for w in targets if w not in group]
        return sum(scores[w] for w in group) - sum(scores[w] for w in rest)

    observed = statistic(X)
    values = [statistic(list(group)) for group in itertools.combinations(targets, len(X))]
    return observed, np.mean([v >= observed - 1e-12 for v in values]), len(values)


def test_exact_permutation_p_value_matches_enumeration(kv):
    X, Y, A, B = MALE[:4], FEMALE[:4], WORK, HOME
    observed, expected, n_partitions = brute_force_permutation_pvalue(kv, X, Y, A, B)
    result = kv.weat_permutation_test(X, Y, A, B)
    assert result.method == "permutation" and "word-list" in result.uncertainty
    assert result.draws.size == n_partitions == math.comb(8, 4)
    assert result.statistic == pytest.approx(observed, rel=1e-10)
    assert result.pvalue == pytest.approx(expected, abs=1e-12)
    smaller = kv.weat_permutation_test(X, Y, A, B, alternative="smaller").pvalue
    two_sided = kv.weat_permutation_test(X, Y, A, B, alternative="two-sided").pvalue
    assert two_sided == pytest.approx(min(1.0, 2 * min(result.pvalue, smaller)))


def test_sampled_permutations_are_distinct_seeded_and_exclude_the_observed_split(kv):
    X, Y, A, B = MALE[:4], FEMALE[:4], WORK, HOME
    first = kv.weat_permutation_test(X, Y, A, B, n_permutations=40, random_state=3)
    again = kv.weat_permutation_test(X, Y, A, B, n_permutations=40, random_state=3)
    np.testing.assert_array_equal(first.draws, again.draws)
    count = np.sum(first.draws >= first.statistic - 1e-12)
    assert first.pvalue == pytest.approx((1 + count) / 41)
    with pytest.raises(ValueError, match="only 69 other partitions"):
        kv.weat_permutation_test(X, Y, A, B, n_permutations=70)
    # asking for all 69 others must give each of them once, and never the observed split
    everything = kv.weat_permutation_test(X, Y, A, B).draws
    others = np.delete(everything, np.argmin(np.abs(everything - first.statistic)))
    sampled = kv.weat_permutation_test(X, Y, A, B, n_permutations=69, random_state=0).draws
    np.testing.assert_allclose(np.sort(sampled), np.sort(others), rtol=0, atol=1e-12)


def test_weat_values_match_an_independent_computation(kv):
    X, Y, A, B = MALE, FEMALE, WORK, HOME

    def s(word):
        return np.mean([kv.similarity(word, a) for a in A]) - np.mean([kv.similarity(word, b) for b in B])

    sx, sy = np.array([s(w) for w in X]), np.array([s(w) for w in Y])
    for ddof in (0, 1):
        family = kv.weat_test(X, Y, A, B, ddof=ddof)
        expected = (sx.mean() - sy.mean()) / np.concatenate([sx, sy]).std(ddof=ddof)
        assert family.estimates[0] == pytest.approx(expected, rel=1e-6)
        assert family.estimates[1] == pytest.approx(sx.sum() - sy.sum(), rel=1e-6)


def test_cosine_bias_matches_an_independent_computation(kv):
    group_a, group_b, attributes = MALE[:3], FEMALE[:3], ["strong", "good", "kind"]

    def centre(words):
        mean = np.mean([kv[w] / np.linalg.norm(kv[w]) for w in words], axis=0)
        return mean

    expected = (np.mean([kv.cosine_similarities(kv[v], centre(group_a)[None])[0] for v in attributes])
                - np.mean([kv.cosine_similarities(kv[v], centre(group_b)[None])[0] for v in attributes]))
    assert kv.cosine_bias_test(group_a, group_b, attributes).estimate == pytest.approx(expected, rel=1e-5)


def test_comparing_two_biases_uses_their_joint_covariance(kv):
    first = weat_statistic(MALE, FEMALE, WORK, HOME)
    second = weat_statistic(MALE, FEMALE, ["strong", "brave"], ["kind", "gentle"])
    family = glovev_ext.stats.compare_biases(kv, {"career": first, "strength": second}, method="delta")
    together = glovev_ext.estimate(kv, glovev_ext.stats.stack([first, second]), method="delta")
    np.testing.assert_allclose(family.covariance, together.covariance)
    assert family.names[0] == "career: effect size"
    difference = family.difference("career: effect size", "strength: effect size")
    weights = np.array([1.0, 0, -1.0, 0])
    assert difference.std_error == pytest.approx(np.sqrt(weights @ family.covariance @ weights))
    assert abs(family.covariance[0, 2]) > 0  # the shared targets correlate the two biases
    # named by a dict, each statistic keeps its range: the same bounds and intervals as the stack's
    np.testing.assert_array_equal(family.bounds, together.bounds)
    assert np.isfinite(family.bounds).all()
    np.testing.assert_allclose(family.conf_int(), together.conf_int())


def test_nearest_neighbours_report_intervals_tests_and_ranks(kv):
    candidates = ["woman", "boy", "girl", "father", "house"]
    result = kv.nearest_neighbors_test("man", candidates=candidates, n_draws=3000, random_state=2)
    estimates = [kv.similarity("man", c) for c in result.neighbors]
    assert sorted(result.neighbors) == sorted(candidates)
    assert np.all(np.diff(estimates) <= 0)
    probabilities = result.rank_probabilities.to_numpy()
    np.testing.assert_allclose(probabilities.sum(axis=0), 1.0)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
    np.testing.assert_allclose(result.top_k_probability(2), probabilities[:, :2].sum(axis=1))
    gap = result.similarities.difference(0, 1, alternative="larger")
    assert result.adjacent.pvalues[0] == pytest.approx(gap.pvalue)
    frame = result.summary_frame()
    assert list(frame.index) == result.neighbors and frame["rank"].tolist() == [1, 2, 3, 4, 5]
    assert "Nearest neighbours of 'man'" in str(result.summary())
    assert "P(this rank), the share of Monte Carlo draws" in str(result.summary())
    top = kv.nearest_neighbors_test("man", topn=4, n_draws=200, random_state=0)
    assert len(top.neighbors) == 4 and "man" not in top.neighbors


def test_word_pair_evaluation_with_a_monte_carlo_interval(kv):
    from gensim.test.utils import datapath
    with pytest.raises(UndefinedCovarianceError, match="pairs cannot be used: .*pass missing='drop'"):
        kv.evaluate_word_pairs_with_uncertainty(datapath("wordsim353.tsv"), n_draws=10)  # missing="raise", the default
    result = kv.evaluate_word_pairs_with_uncertainty(datapath("wordsim353.tsv"), n_draws=300, random_state=0,
                                                     missing="drop")
    rows = read_word_pairs(datapath("wordsim353.tsv"))
    usable = [(a, b, s) for a, b, s in rows if kv.unusable_reason(a) is None and kv.unusable_reason(b) is None]
    expected = spearmanr([kv.similarity(a, b) for a, b, _ in usable], [s for _, _, s in usable])[0]
    assert result.estimate == pytest.approx(expected, rel=1e-9)
    assert len(result.dropped) == len(rows) - len(usable)
    outside = sum(a not in kv.key_to_index or b not in kv.key_to_index for a, b, _ in rows)
    without = len(rows) - len(usable) - outside
    parts = [f"{outside} with a word not in the vocabulary"] + ([f"{without} with a word without a covariance"]
                                                                  if without else [])
    assert f"{len(rows) - len(usable)} pairs dropped ({', '.join(parts)})" in str(result.summary())
    assert result.draws.shape == (300,) and result.std_error > 0


def extended_by_hand(estimate, draws, bounds, confidence_level=0.95):
    """estimate -+ z-quantile x the draws' standard deviation on atanh of the value mapped from ``bounds``, extended
    from the estimate to 2 atanh(estimate) - atanh(median of the draws)."""
    low, high = bounds

    def to_z(value):
        return np.arctanh((2 * value - low - high) / (high - low))

    def from_z(z):
        return (np.tanh(z) * (high - low) + low + high) / 2

    z = to_z(estimate)
    z_error = draws.std(ddof=1) * 2 / ((high - low) * (1 - ((2 * estimate - low - high) / (high - low)) ** 2))
    corrected = 2 * z - to_z(np.median(draws))
    q = stats.norm.ppf(0.5 + confidence_level / 2)
    return from_z(min(z, corrected) - q * z_error), from_z(max(z, corrected) + q * z_error)


def test_word_pair_evaluation_reports_an_interval_around_its_estimate_and_what_the_draws_measure(kv):
    """Noise added to the vectors attenuates Spearman's rho: the draws lie below the estimate. The interval is the
    estimate's, extended by that attenuation, one piece holding the estimate; the notes say what it measures."""
    from gensim.test.utils import datapath
    result = kv.evaluate_word_pairs_with_uncertainty(datapath("wordsim353.tsv"), n_draws=300, random_state=0,
                                                     missing="drop")
    median = np.median(result.draws)
    assert result.attenuation == pytest.approx(result.estimate - median, rel=1e-12)
    assert abs(median) < abs(result.estimate)  # attenuated
    low, high = result.conf_int()
    assert (low, high) == pytest.approx(extended_by_hand(result.estimate, result.draws, (-1, 1)), rel=1e-12)
    assert low < result.estimate < high and result.draws_interval == "extended"
    assert (low, high) == pytest.approx(tuple(result.summary_frame().iloc[0][["Conf. Int. Low", "Conf. Int. Upp."]]))
    text = str(result.summary())
    assert (f"What the draws measure: Spearman's rho at 300 draws of the embedding, GloVe-V's noise added to the "
            f"trained vectors. Their median, {median:.3f}, is {result.attenuation:.3f} nearer 0 than the estimate "
            "(attenuation)") in " ".join(text.split())
    assert "extended by the draws' shift" in text
    # the p-value of 0 inverts the interval
    assert (result.pvalue < 0.05) == (low > 0)


def test_analogy_accuracy_interval_is_extended_by_the_draws_attenuation(kv):
    questions = [("man", "woman", "boy", "girl"), ("man", "woman", "father", "mother"),
                 ("he", "she", "his", "her"), ("man", "men", "woman", "women"), ("he", "she", "him", "her"),
                 ("boy", "girl", "father", "mother")]
    result = kv.evaluate_word_analogies_with_uncertainty(questions, restrict_vocab=2000, n_draws=50, random_state=0,
                                                         missing="drop")
    assert result.draws_interval == "extended" and 0 < result.estimate < 1
    assert result.attenuation == pytest.approx(result.estimate - np.median(result.draws))
    low, high = result.conf_int()
    assert (low, high) == pytest.approx(extended_by_hand(result.estimate, result.draws, (0, 1)), rel=1e-12)
    assert 0 <= low < result.estimate < high <= 1
    assert "What the draws measure: the accuracy at 50 draws" in " ".join(str(result.summary()).split())


def test_analogy_accuracy_against_random_guessing(kv):
    questions = [("man", "woman", "boy", "girl"), ("man", "woman", "father", "mother"),
                 ("he", "she", "his", "her"), ("man", "men", "woman", "women"), ("zzzz", "a", "b", "c")]
    with pytest.raises(UndefinedCovarianceError, match="1 question cannot be used: zzzz-a-b-c"):
        kv.evaluate_word_analogies_with_uncertainty(questions, restrict_vocab=2000, n_draws=5, missing="raise")
    result = kv.evaluate_word_analogies_with_uncertainty(questions, restrict_vocab=2000, n_draws=50, random_state=0,
                                                         missing="drop")
    candidates = [k for k in kv.index_to_key[:2000] if kv.unusable_reason(k) is None]
    unit = {k: kv[k] / np.linalg.norm(kv[k]) for k in candidates}
    correct = 0
    for a, b, c, d in questions[:4]:
        query = unit[b] - unit[a] + unit[c]
        best = max((k for k in candidates if k not in (a, b, c)), key=lambda k: unit[k] @ query)
        correct += best == d
    assert result.estimate == pytest.approx(correct / 4)
    assert result.null_value == pytest.approx(1 / (len(candidates) - 3)) and result.alternative == "larger"
    assert len(result.dropped) == 1 and result.dropped[0].startswith("zzzz-a-b-c [zzzz (not in the vocabulary)")


def test_cosine_bias_by_frequency_band_is_the_cosine_bias_of_each_band(kv):
    group_a, group_b, attributes = MALE + ["zzzz"], FEMALE, ["strong", "good", "kind"]
    without_counts = copy.copy(kv)
    without_counts.expandos = {name: values for name, values in kv.expandos.items() if name != "count"}
    with pytest.raises(ValueError, match="no word counts: pass counts="):
        glovev_ext.stats.cosine_bias_by_frequency(without_counts, MALE, FEMALE, attributes)
    counts = len(kv) - np.arange(len(kv))  # the vocabulary is in descending order of frequency
    results = glovev_ext.stats.cosine_bias_by_frequency(kv, group_a, group_b, attributes, n_bands=2, counts=counts,
                                                  missing="drop", random_state=3)
    by_frequency = [sorted(g, key=kv.get_index) for g in (MALE, FEMALE)]
    generator = np.random.default_rng(3)  # the bands draw from one stream, in order
    for band, result in enumerate(results):
        part_a = by_frequency[0][:3] if band == 0 else by_frequency[0][3:]
        part_b = by_frequency[1][:3] if band == 0 else by_frequency[1][3:]
        expected = kv.cosine_bias_test(part_a, part_b, attributes, random_state=generator)
        assert result.estimate == pytest.approx(expected.estimate, rel=1e-12)
        assert result.std_error == pytest.approx(expected.std_error, rel=1e-12)
        assert result.name.startswith(f"band {band + 1}") and result.dropped == ("zzzz (not in the vocabulary)",)


def test_the_fit_reports_wordsim_line_holds_its_estimate_and_says_what_the_interval_means(kv):
    """The report's WordSim-353 line (glovev fit): Spearman's rho from scipy over the usable pairs, inside its
    interval, which is the estimate's extended by the draws' shift (by hand from the same 500 draws), and the
    line says so, with the draws' median."""
    from gensim.test.utils import datapath

    from glovev_ext._fit_report import word_similarity_lines
    first, meaning = word_similarity_lines(kv)
    rows = read_word_pairs(datapath("wordsim353.tsv"))
    usable = [(a, b, s) for a, b, s in rows if kv.unusable_reason(a) is None and kv.unusable_reason(b) is None]
    rho = spearmanr([kv.similarity(a, b) for a, b, _ in usable], [s for _, _, s in usable])[0]
    draws = kv.evaluate_word_pairs_with_uncertainty(rows, n_draws=500, random_state=0, missing="drop").draws
    low, high = extended_by_hand(rho, draws, (-1, 1))
    assert low < rho < high
    assert first.startswith(f"WordSim-353: Spearman rho = {rho:.3f}, 95 % interval [{low:.3f}, {high:.3f}] over 500 "
                            f"GloVe-V draws; {len(rows) - len(usable)} of its {len(rows)} pairs dropped")
    median = np.median(draws)
    direction = ("up", "lower") if rho > median else ("down", "higher")
    on_atanh = draws.std(ddof=1) / (1 - rho**2)
    assert meaning.startswith(f"  the interval is atanh(rho) -+ 1.96 x {on_atanh:.4f} mapped back by tanh "
                              f"({on_atanh:.4f}: the draws' standard deviation, {draws.std(ddof=1):.4f}, times "
                              f"atanh's slope at rho, 1 / (1 - rho^2)), extended {direction[0]} on atanh by the "
                              f"draws' shift from rho, to 2 atanh(rho) - atanh(median): their median is {median:.3f}, "
                              f"{abs(rho - median):.3f} {direction[1]}")
    # the printed interval from the printed parts alone (to their rounding)
    printed = [float(x) for x in re.findall(r"-?\d+\.\d+", meaning)[:3]]  # 1.96, the error on atanh, ...
    centres = sorted([np.arctanh(rho), 2 * np.arctanh(rho) - np.arctanh(float(f"{median:.3f}"))])
    by_parts = np.tanh([centres[0] - printed[0] * printed[1], centres[1] + printed[0] * printed[1]])
    np.testing.assert_allclose(by_parts, [low, high], atol=2e-3)
    assert meaning.endswith("it carries GloVe-V's noise only, not the choice of word pairs or raters "
                            "(docs/method.md 6.9)")
    assert ("nearer 0 because noise in the vectors attenuates correlations" in meaning) == (abs(median) < abs(rho))
