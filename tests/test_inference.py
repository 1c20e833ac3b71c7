"""Inference: gradients against finite differences, delta method against Monte Carlo, interval coverage
by simulation, exact permutation p-values, and statsmodels-style results."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import spearmanr
from statsmodels.stats.contrast import ContrastResults
from statsmodels.stats.multitest import multipletests

import glovev_ext
from glovev_ext import KeyedVectorsWithVariance, UndefinedCovarianceError
from glovev_ext.bias import cosine_bias_statistic, weat_statistic
from glovev_ext.inference import delta_covariance, point
from glovev_ext.statistic import Statistic, cosine_statistic

MALE = ["he", "man", "him", "his", "father", "boy"]
FEMALE = ["she", "woman", "her", "hers", "mother", "girl"]
WORK = ["work", "money", "business", "office"]
HOME = ["home", "house", "family", "children"]


@pytest.fixture(scope="module")
def kv() -> KeyedVectorsWithVariance:
    """D = 10 on the whole embedded corpus, one thread (reproducible)."""
    X = glovev_ext.CooccurrenceVectorizer(min_count=5, progress=False).fit_transform(glovev_ext.load_default_corpus())
    model = glovev_ext.GloVeVEstimator(n_components=10, epochs=12, random_state=0, n_jobs=1, progress=False).fit(X)
    return KeyedVectorsWithVariance.from_estimator(model)


def finite_differences(function, vectors, step=1e-6):
    """Plain central differences, one coordinate at a time."""
    values = np.atleast_1d(function(vectors))
    jacobian = np.zeros((values.size, *vectors.shape))
    for i, d in itertools.product(range(vectors.shape[0]), range(vectors.shape[1])):
        up, down = vectors.copy(), vectors.copy()
        up[i, d] += step
        down[i, d] -= step
        jacobian[:, i, d] = (np.atleast_1d(function(up)) - np.atleast_1d(function(down))) / (2 * step)
    return jacobian


STATISTICS = {
    "cosine": lambda: cosine_statistic([("man", "woman"), ("man", "boy"), ("house", "home")]),
    "weat ddof 1": lambda: weat_statistic(["he", "him", "his", "man"], ["she", "her", "woman", "mother"],
                                          ["said", "asked", "told"], ["thought", "felt", "knew"]),
    "weat ddof 0, words in two roles": lambda: weat_statistic(MALE, FEMALE, ["man", "work", "money"], HOME, ddof=0),
    "cosine bias": lambda: cosine_bias_statistic(MALE[:3], FEMALE[:3], ["strong", "good", "man", "she"]),
}


@pytest.mark.parametrize("name", list(STATISTICS))
def test_analytic_gradients_equal_finite_differences(kv, name):
    statistic = STATISTICS[name]()
    vectors = point(kv, statistic.keys)
    analytic = statistic.jacobian(vectors)
    numeric = finite_differences(statistic.function, vectors)
    for row in range(analytic.shape[0]):
        assert np.linalg.norm(analytic[row] - numeric[row]) <= 1e-6 * np.linalg.norm(numeric[row]), row


def test_user_statistic_without_gradient_uses_numerical_derivatives(kv):
    analytic = cosine_statistic([("man", "woman")])
    numerical = Statistic("cos", analytic.keys, analytic.names, analytic.function)
    value_a, cov_a, _ = delta_covariance(kv, analytic)
    value_n, cov_n, _ = delta_covariance(kv, numerical)
    np.testing.assert_allclose(value_n, value_a)
    np.testing.assert_allclose(cov_n, cov_a, rtol=1e-6)


def test_delta_method_variance_matches_the_dense_formula(kv):
    statistic = cosine_statistic([("man", "woman"), ("man", "house")])
    vectors = point(kv, statistic.keys)
    jacobian = statistic.jacobian(vectors)
    expected = sum(jacobian[:, i] @ kv.covariance(key) @ jacobian[:, i].T for i, key in enumerate(statistic.keys))
    values, covariance, contributions = delta_covariance(kv, statistic)
    np.testing.assert_allclose(covariance, expected, rtol=1e-10)
    by_word = [np.diag(jacobian[:, i] @ kv.covariance(key) @ jacobian[:, i].T) for i, key in enumerate(statistic.keys)]
    np.testing.assert_allclose(contributions, by_word, rtol=1e-10, atol=1e-18)
    np.testing.assert_allclose(contributions.sum(axis=0), np.diag(covariance), rtol=1e-10)


def test_variance_by_word_names_the_words_that_make_a_test_uncertain(kv):
    result = kv.weat_test(*SPEECH)["effect size"]
    shares = result.variance_by_word()
    assert shares.sum() == pytest.approx(1.0) and set(shares.index) == set(result.words)
    assert shares.is_monotonic_decreasing
    contributions = dict(zip(result.words, result.variance_contributions))
    assert shares.iloc[0] == pytest.approx(max(contributions.values()) / result.std_error**2)


@pytest.mark.parametrize("name, row", [("cosine", 2), ("weat ddof 1", 0), ("cosine bias", 0)])
def test_delta_method_agrees_with_monte_carlo(kv, name, row):
    statistic = STATISTICS[name]()
    delta = glovev_ext.estimate(kv, statistic)
    monte_carlo = glovev_ext.estimate(kv, statistic, method="monte carlo", n_draws=20000, rng=1)
    assert monte_carlo.std_errors[row] == pytest.approx(delta.std_errors[row], rel=0.05)


def simulate_coverage(kv, statistic_rows, truth_words, n_replications, rng, naive=False):
    """Draw vectors around the truth with the model's covariances; count how often 95 % intervals cover."""
    indices = [kv.get_index(word) for word in truth_words]
    truth = kv.vectors[indices].copy()
    roots = [kv.covariance_store.square_root(kv.covariance_row(word)) for word in truth_words]
    covered = []
    try:
        true_value = None
        for _ in range(n_replications):
            kv.vectors[indices] = truth + np.stack([root @ rng.standard_normal(kv.vector_size) for root in roots])
            estimate, std_error = statistic_rows(kv, naive)
            if true_value is None:
                saved = kv.vectors[indices].copy()
                kv.vectors[indices] = truth
                true_value = statistic_rows(kv, naive)[0]
                kv.vectors[indices] = saved
            covered.append(abs(estimate - true_value) <= 1.959964 * std_error)
    finally:
        kv.vectors[indices] = truth
    return np.mean(covered)


def cosine_rows(kv, naive):
    result = kv.similarity_test("man", "woman")
    return result.estimate, result.std_error


def difference_rows(kv, naive, pairs=(("captain", "said"), ("captain", "told"))):
    family = kv.similarities_test(list(pairs))
    if naive:
        return family.estimates[0] - family.estimates[1], np.sqrt(family.std_errors[0]**2 + family.std_errors[1]**2)
    result = family.difference(0, 1)
    return result.estimate, result.std_error


SPEECH = (["he", "him", "his", "man"], ["she", "her", "woman", "mother"], ["said", "asked", "told"],
          ["thought", "felt", "knew"])


def weat_rows(kv, naive):
    family = kv.weat_test(*SPEECH)
    return family.estimates[0], family.std_errors[0]


def test_cosine_interval_covers_at_nominal_rate(kv):
    coverage = simulate_coverage(kv, cosine_rows, ["man", "woman"], 2000, np.random.default_rng(5))
    assert 0.935 <= coverage <= 0.965, coverage


def test_shared_word_difference_needs_the_joint_covariance(kv):
    """cos(captain, said) - cos(captain, told): with the joint covariance intervals cover at 95 %;
    treating the two cosines as independent (Var(a) + Var(b)) over-covers (about 99.8 %)."""
    words = ["captain", "said", "told"]
    joint = simulate_coverage(kv, difference_rows, words, 2000, np.random.default_rng(6))
    naive = simulate_coverage(kv, difference_rows, words, 2000, np.random.default_rng(6), naive=True)
    assert 0.935 <= joint <= 0.965, joint
    assert naive > 0.98, naive


def test_weat_effect_size_interval_covers_at_nominal_rate(kv):
    words = list(dict.fromkeys(sum(SPEECH, [])))
    coverage = simulate_coverage(kv, weat_rows, words, 2000, np.random.default_rng(7))
    assert 0.935 <= coverage <= 0.965, coverage


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
    first = kv.weat_permutation_test(X, Y, A, B, n_permutations=40, rng=3)
    again = kv.weat_permutation_test(X, Y, A, B, n_permutations=40, rng=3)
    np.testing.assert_array_equal(first.draws, again.draws)
    count = np.sum(first.draws >= first.statistic - 1e-12)
    assert first.pvalue == pytest.approx((1 + count) / 41)
    with pytest.raises(ValueError, match="only 69 other partitions"):
        kv.weat_permutation_test(X, Y, A, B, n_permutations=70)
    # asking for all 69 others must give each of them once, and never the observed split
    everything = kv.weat_permutation_test(X, Y, A, B).draws
    others = np.delete(everything, np.argmin(np.abs(everything - first.statistic)))
    sampled = kv.weat_permutation_test(X, Y, A, B, n_permutations=69, rng=0).draws
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
    family = glovev_ext.compare_biases(kv, {"career": first, "strength": second})
    together = glovev_ext.estimate(kv, glovev_ext.stack([first, second]))
    np.testing.assert_allclose(family.covariance, together.covariance)
    assert family.names[0] == "career: effect size"
    difference = family.difference("career: effect size", "strength: effect size")
    weights = np.array([1.0, 0, -1.0, 0])
    assert difference.std_error == pytest.approx(np.sqrt(weights @ family.covariance @ weights))
    assert abs(family.covariance[0, 2]) > 0  # the shared targets correlate the two biases


def test_nearest_neighbours_report_intervals_tests_and_ranks(kv):
    candidates = ["woman", "boy", "girl", "father", "house"]
    result = kv.nearest_neighbors_test("man", candidates=candidates, n_draws=3000, rng=2)
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
    top = kv.nearest_neighbors_test("man", topn=4, n_draws=200, rng=0)
    assert len(top.neighbors) == 4 and "man" not in top.neighbors


def test_results_read_like_statsmodels(kv):
    result = kv.similarity_test("man", "woman", null_value=0.5, alternative="larger")
    statistic, pvalue = result
    assert statistic == pytest.approx((result.estimate - 0.5) / result.std_error)
    assert pvalue == pytest.approx(1 - __import__("scipy").stats.norm.cdf(statistic))
    low, high = result.conf_int(0.1)
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
    result = kv.similarity_test("man", "woman", method="monte carlo", n_draws=500, rng=4)
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
    assert any(rare in d for d in family.dropped) and any("notaword (not in the vocabulary)" in d for d in family.dropped)
    assert "dropped: 2" in str(family.summary())
    pairs = kv.similarities_test([("man", "woman"), ("man", "notaword")], missing="drop")
    assert pairs.names == ("cos(man, woman)",)


def test_word_pair_evaluation_with_a_monte_carlo_interval(kv):
    from gensim.test.utils import datapath
    result = kv.evaluate_word_pairs_with_uncertainty(datapath("wordsim353.tsv"), n_draws=300, rng=0)
    rows = glovev_ext.evaluation.read_word_pairs(datapath("wordsim353.tsv"))
    usable = [(a, b, s) for a, b, s in rows if kv.unusable_reason(a) is None and kv.unusable_reason(b) is None]
    expected = spearmanr([kv.similarity(a, b) for a, b, _ in usable], [s for _, _, s in usable])[0]
    assert result.estimate == pytest.approx(expected, rel=1e-9)
    assert len(result.dropped) == len(rows) - len(usable)
    assert result.draws.shape == (300,) and result.std_error > 0


def test_analogy_accuracy_against_random_guessing(kv):
    questions = [("man", "woman", "boy", "girl"), ("man", "woman", "father", "mother"),
                 ("he", "she", "his", "her"), ("man", "men", "woman", "women"), ("zzzz", "a", "b", "c")]
    result = kv.evaluate_word_analogies_with_uncertainty(questions, restrict_vocab=2000, n_draws=50, rng=0)
    candidates = [k for k in kv.index_to_key[:2000] if kv.unusable_reason(k) is None]
    unit = {k: kv[k] / np.linalg.norm(kv[k]) for k in candidates}
    correct = 0
    for a, b, c, d in questions[:4]:
        query = unit[b] - unit[a] + unit[c]
        best = max((k for k in candidates if k not in (a, b, c)), key=lambda k: unit[k] @ query)
        correct += best == d
    assert result.estimate == pytest.approx(correct / 4)
    assert result.null_value == pytest.approx(1 / (len(candidates) - 3)) and result.alternative == "larger"
    assert result.dropped == ("zzzz a b c",)
