"""Each word counted in each group of documents, and its concentration over groups (docs/method.md 6.21), against
loops over the tokens."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp

import glovev_ext
from glovev_ext.counting import CooccurrenceMatrix, group_concentration


def test_the_concentration_is_the_sum_of_squared_shares_over_the_groups_chosen():
    rng = np.random.default_rng(0)
    counts = sp.random(40, 7, density=0.4, random_state=1, data_rvs=lambda n: rng.integers(1, 20, n)).tocsr()
    for groups in (None, np.array([0, 2, 3]), np.arange(7) % 2 == 0):
        chosen = counts.toarray() if groups is None else counts.toarray()[:, groups]
        by_hand = []
        for row in chosen:
            total = row.sum()
            by_hand.append(sum((c / total) ** 2 for c in row) if total else np.nan)
        np.testing.assert_allclose(group_concentration(counts, groups), by_hand, rtol=1e-12)
    x = group_concentration(counts)
    held = np.isfinite(x)
    assert held.any() and not held.all()  # some words no group holds: NaN
    assert np.all((x[held] >= 1 / 7 - 1e-12) & (x[held] <= 1 + 1e-12))
    np.testing.assert_allclose(group_concentration(np.array([[3, 3, 3], [0, 9, 0]])), [1 / 3, 1.0])


def test_each_word_is_counted_in_each_group_as_a_loop_over_the_tokens_counts_it():
    rng = np.random.default_rng(2)
    words = [f"w{i}" for i in range(30)] + ["Rare"]
    documents = [" ".join(rng.choice(words, size=rng.integers(0, 25))) for _ in range(300)]
    labels = rng.choice(["a", "b", "c", "d"], size=300)
    # small chunks: the documents of one group fall in many chunks, and a chunk holds many groups
    vectorizer = glovev_ext.CooccurrenceVectorizer(min_count=3, chunk_size=500, n_jobs=1, progress=False)
    vectorizer.fit(documents)
    counts = vectorizer.count_by_group(documents, labels)
    groups = glovev_ext.DocumentGroups.from_labels(labels)
    by_hand = np.zeros((len(vectorizer.vocabulary_), groups.n_groups), dtype=np.int64)
    for document, code in zip(documents, groups.codes):
        for word, n in Counter(document.lower().split()).items():
            if word in vectorizer.vocabulary_:
                by_hand[vectorizer.vocabulary_[word], code] += n
    assert counts.dtype == np.int64 and counts.shape == by_hand.shape
    np.testing.assert_array_equal(counts.toarray(), by_hand)
    np.testing.assert_array_equal(np.asarray(counts.sum(axis=1)).ravel(), vectorizer.word_counts_)
    # a DocumentGroups is read as its labels are
    np.testing.assert_array_equal(vectorizer.count_by_group(documents, groups).toarray(), by_hand)


@pytest.mark.parametrize("n_labels", [299, 301])
def test_labels_that_are_not_one_per_document_are_refused(n_labels):
    documents = ["a b c a b", "b c a"] * 150
    vectorizer = glovev_ext.CooccurrenceVectorizer(min_count=1, n_jobs=1, progress=False).fit(documents)
    with pytest.raises(ValueError, match="one label per document"):
        vectorizer.count_by_group(documents, np.arange(n_labels) % 3)


def test_a_matrix_carries_its_concentrations_checked_and_through_a_copy():
    matrix = CooccurrenceMatrix(sp.eye(3, format="csr"), group_concentration=[0.5, np.nan, 1.0])
    copied = matrix.copy()
    np.testing.assert_array_equal(copied.group_concentration, [0.5, np.nan, 1.0])
    copied.group_concentration[0] = 0.25
    assert matrix.group_concentration[0] == 0.5
    assert CooccurrenceMatrix(sp.eye(3, format="csr")).group_concentration is None
    with pytest.raises(ValueError, match=r"one concentration per row, shape \(3,\)"):
        CooccurrenceMatrix(sp.eye(3, format="csr"), group_concentration=[0.5, 0.5])
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        CooccurrenceMatrix(sp.eye(3, format="csr"), group_concentration=[0.5, 1.5, 0.5])
