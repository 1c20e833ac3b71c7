"""One policy for words that are missing or lack a covariance, on every statistic."""

from __future__ import annotations

import inspect
import numpy as np

import pytest

from glovev_ext import UndefinedCovarianceError, stats
from glovev_ext.stats.engine.words import resolve

WITH_WORDS = [name for name in stats.__all__ if callable(getattr(stats, name))
              and "missing" in inspect.signature(getattr(stats, name)).parameters]
WORDS = {  # the arguments after the embedding
    "similarity": ("man", "woman"),
    "similarity_family": ([("man", "woman")],),
    "similarity_tests": ([("man", "woman")],),
    "similarity_difference": (("man", "woman"), ("man", "boy")),
    "nearest_neighbors": ("man",),
    "weat": (["he"], ["she"], ["said"], ["told"]),
    "weat_permutation_test": (["he"], ["she"], ["said"], ["told"]),
    "cosine_bias": (["he"], ["she"], ["said"]),
    "cosine_bias_by_frequency": (["he"], ["she"], ["said"]),
    "evaluate_word_pairs": ([("man", "woman", 1.0)],),
    "evaluate_analogies": ([("a", "b", "c", "d")],),
    "evaluate_relational_similarity": ([],),
    "self_similarity": (None, ["man"]),  # the policy is checked before the second embedding is used
    "vector_change_test": (None, ["man"]),
}


def test_every_statistic_of_words_takes_missing():
    assert set(WITH_WORDS) == set(WORDS)


@pytest.mark.parametrize("name", WITH_WORDS)
def test_the_same_choices_and_default(stats_kv, name):
    default = inspect.signature(getattr(stats, name)).parameters["missing"].default
    assert default == stats.DEFAULT_MISSING == "raise"
    assert stats.MISSING_CHOICES == ("raise", "drop")
    with pytest.raises(ValueError, match=r"missing must be one of \('raise', 'drop'\), got 'skip'"):
        getattr(stats, name)(stats_kv, *WORDS[name], missing="skip")


def test_a_statistic_that_cannot_lose_a_word_names_it_under_either_policy(stats_kv):
    for missing in ("raise", "drop"):
        with pytest.raises(UndefinedCovarianceError, match=r"cos\(man, zzzz\) cannot be computed without zzzz \(not in "
                                                           r"the vocabulary\): it needs every one of 'man', 'zzzz'$"):
            stats_kv.similarity_test("man", "zzzz", missing=missing)


def test_dropped_words_are_named_in_the_result_and_its_summary(stats_kv):
    rare = next(k for k in stats_kv.index_to_key if not stats_kv.has_covariance(k))
    result = stats_kv.cosine_bias_test(["he", "zzzz"], ["she"], ["strong", rare], missing="drop")
    assert result.dropped == ("zzzz (not in the vocabulary)",
                              f"{rare} (no covariance: {stats_kv.covariance_store.n_contexts[stats_kv.get_index(rare)]}"
                              " contexts, and GloVe-V needs more than D = 10)")
    assert "Dropped: zzzz (not in the vocabulary)" in str(result.summary())
    with pytest.raises(UndefinedCovarianceError, match="2 words cannot be used: zzzz .*pass missing='drop'"):
        stats_kv.cosine_bias_test(["he", "zzzz"], ["she"], ["strong", rare])


def test_the_statistics_that_dropped_by_default_in_0_1_refuse_like_every_other(stats_kv):
    with pytest.raises(UndefinedCovarianceError, match=r"1 word cannot be used: zzzz \(not in the vocabulary\); pass "
                                                       r"missing='drop'"):
        stats_kv.nearest_neighbors_test("man", ["woman", "boy", "zzzz"], n_draws=20)
    result = stats_kv.nearest_neighbors_test("man", ["woman", "boy", "zzzz"], n_draws=20, missing="drop")
    assert result.similarities.dropped == ("zzzz (not in the vocabulary)",)
    for statistic, rows in ((stats.evaluate_word_pairs, [("man", "woman", 1.0), ("man", "zzzz", 2.0)]),
                            (stats.evaluate_analogies, [("man", "woman", "boy", "zzzz")])):
        with pytest.raises(UndefinedCovarianceError, match=r"^1 (pair|question) cannot be used: man-.*zzzz \(not in "):
            statistic(stats_kv, rows, n_draws=5)


def test_resolved_words_are_an_embedding_of_their_own_words(stats_kv):
    """What the engines hold can stand for the container (two simulated refits, say): same vectors and factors."""
    words = resolve(stats_kv, ["man", "woman"])
    for word in ("man", "woman"):
        np.testing.assert_array_equal(words.get_vector(word), stats_kv.get_vector(word))
        np.testing.assert_array_equal(words.covariance_factor(word).dense(), stats_kv.covariance(word))
        assert words.unusable_reason(word) is None
    assert words.unusable_reason("boy") == stats.engine.words.NOT_IN_VOCABULARY
    with pytest.raises(KeyError, match="'boy' is not among the resolved words"):
        words.get_vector("boy")
    pair = stats.similarity(words, "man", "woman", method="delta")
    assert pair.std_error == pytest.approx(stats_kv.similarity_test("man", "woman", method="delta").std_error,
                                           rel=1e-12)
