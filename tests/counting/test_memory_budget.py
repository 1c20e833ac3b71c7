"""Counting with max_memory: partials spilled to disk give the in-memory result bit for bit, and leave no folder."""

from __future__ import annotations

import os
import re
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

import glovev_ext
from glovev_ext import CooccurrenceVectorizer
from glovev_ext.counting import _spill
from glovev_ext.counting._chunks import TokenTable
from glovev_ext.counting._spill import SpillingMerger
from glovev_ext._checks import parse_memory


@pytest.fixture
def spill_record(monkeypatch):
    """Every spill folder opened and the number of runs written, over one test."""
    record = {"folders": [], "runs": 0}
    enter, merge = SpillingMerger.__enter__, SpillingMerger._merge_to_run

    def recording_enter(self):
        opened = enter(self)
        record["folders"].append(self.folder)
        return opened

    def recording_merge(self, partials):
        record["runs"] += 1
        return merge(self, partials)

    monkeypatch.setattr(SpillingMerger, "__enter__", recording_enter)
    monkeypatch.setattr(SpillingMerger, "_merge_to_run", recording_merge)
    return record


@pytest.fixture(scope="module")
def paragraphs() -> list[str]:
    return list(glovev_ext.load_default_corpus(max_documents=2000))


def assert_identical(actual, expected):
    assert actual.shape == expected.shape
    assert list(actual.words) == list(expected.words)
    np.testing.assert_array_equal(actual.counts, expected.counts)
    np.testing.assert_array_equal(actual.indptr, expected.indptr)
    np.testing.assert_array_equal(actual.indices, expected.indices)
    assert actual.data.dtype == expected.data.dtype and actual.data.tobytes() == expected.data.tobytes()


@pytest.mark.parametrize("n_jobs", [1, 3])
def test_a_tiny_budget_spills_and_gives_the_in_memory_matrix_bit_for_bit(paragraphs, spill_record, n_jobs):
    params = dict(window=6, min_count=2, n_jobs=n_jobs, chunk_size=10_000, progress=False)
    expected = CooccurrenceVectorizer(**params).fit_transform(paragraphs)
    assert spill_record["runs"] == 0
    spilled = CooccurrenceVectorizer(max_memory="100K", **params)
    actual = spilled.fit_transform(paragraphs)
    assert spill_record["runs"] >= 4
    assert_identical(actual, expected)
    assert all(not os.path.exists(folder) for folder in spill_record["folders"])

    vocabulary_only = CooccurrenceVectorizer(**params).fit(paragraphs)
    assert_identical(spilled.transform(paragraphs), vocabulary_only.transform(paragraphs))


def test_a_large_budget_spills_nothing(paragraphs, spill_record):
    params = dict(min_count=2, n_jobs=1, chunk_size=10_000, progress=False)
    assert_identical(CooccurrenceVectorizer(max_memory="1G", **params).fit_transform(paragraphs),
                     CooccurrenceVectorizer(**params).fit_transform(paragraphs))
    assert spill_record["runs"] == 0 and len(spill_record["folders"]) == 1


@pytest.mark.parametrize("n_jobs", [1, 3])
def test_the_spill_folder_is_removed_after_an_error(paragraphs, spill_record, monkeypatch, n_jobs):
    real_merge = _spill._merge_sorted
    calls = [0]

    def failing_merge(*arrays):
        calls[0] += 1
        if calls[0] > 50:
            raise OSError("disk full")
        return real_merge(*arrays)

    monkeypatch.setattr(_spill, "_merge_sorted", failing_merge)
    with pytest.raises(OSError, match="disk full"):
        CooccurrenceVectorizer(max_memory=1, min_count=2, n_jobs=n_jobs, chunk_size=10_000,
                               progress=False).fit_transform(paragraphs)
    assert spill_record["folders"] and spill_record["runs"] > 1
    assert all(not os.path.exists(folder) for folder in spill_record["folders"])


@pytest.mark.parametrize("max_memory", [1, 10**9])
def test_spilled_merges_add_in_the_order_of_scipy(max_memory):
    rng = np.random.default_rng(0)
    partials = [sp.random(300, 300, density=0.05, random_state=rng, format="csr") for _ in range(5)]
    with SpillingMerger(300, max_memory=max_memory) as merger:
        held = [merger.add(partials[0], partials[1]), partials[2], merger.add(partials[3], partials[4])]
        total = merger.symmetric_total(held)
        assert os.listdir(merger.folder) == []
    right = ((partials[0] + partials[1]) + partials[2]) + (partials[3] + partials[4])
    expected = right + right.T.tocsr()
    np.testing.assert_array_equal(total.indptr, expected.indptr)
    np.testing.assert_array_equal(total.indices, expected.indices)
    assert total.data.tobytes() == expected.data.tobytes()


@pytest.mark.parametrize(("value", "expected"), [(4096, 4096), ("600M", 600 << 20), ("2G", 2 << 30),
                                                 ("1.5g", 3 << 29), ("100KB", 102_400), (None, None)])
def test_memory_sizes_parse(value, expected):
    assert parse_memory(value) == expected


@pytest.mark.parametrize("value", ["x", "", "-1M", "0", "nanG", 0, 1.5, True])
def test_bad_memory_sizes_are_refused_in_fit(value):
    with pytest.raises((TypeError, ValueError), match="max_memory"):
        CooccurrenceVectorizer(max_memory=value, progress=False).fit(["a b a b"])


def test_many_transposed_runs_merge_in_a_tree_of_bounded_fan_in(paragraphs, monkeypatch):
    """With a fan-in of 2 the transpose's runs merge over several levels, each merge holding at most two runs open
    (only the sum of the held partials, one per level of the binary counter, merges more at once); the matrix stays
    the in-memory one bit for bit."""
    widest = []
    merge = SpillingMerger._merge_to_run

    def recording_merge(self, partials):
        widest.append(len(partials))
        return merge(self, partials)

    monkeypatch.setattr(_spill, "_MAX_FAN_IN", 2)
    monkeypatch.setattr(_spill, "_MIN_BLOCK_ENTRIES", 1 << 10)
    monkeypatch.setattr(SpillingMerger, "_merge_to_run", recording_merge)
    params = dict(window=6, min_count=2, n_jobs=1, chunk_size=10_000, progress=False)
    expected = CooccurrenceVectorizer(**params).fit_transform(paragraphs)
    assert_identical(CooccurrenceVectorizer(max_memory="100K", **params).fit_transform(paragraphs), expected)
    assert len(widest) > 10 and sum(width > 2 for width in widest) == 1



def test_the_vocabulary_counts_against_the_budget(paragraphs, monkeypatch, caplog):
    """The partials and the chunks get the budget less what the vocabulary holds: its dict, words and ids (measured
    here by tracemalloc on a copy), its counts, and each word type's final id (fit) or the table that finds the words
    (transform); down to a quarter of the budget, which a warning names. The matrix stays the same bits."""
    from glovev_ext.counting import vectorizer as vectorizer_module
    budgets = []
    counter = vectorizer_module.ContextCounter

    def recording_counter(*args, max_memory=None, **kwargs):
        budgets.append(max_memory)
        return counter(*args, max_memory=max_memory, **kwargs)

    monkeypatch.setattr(vectorizer_module, "ContextCounter", recording_counter)
    params = dict(window=6, min_count=2, n_jobs=1, chunk_size=10_000, progress=False)
    expected = CooccurrenceVectorizer(**params).fit_transform(paragraphs)
    budget = 40 << 20
    fitted = CooccurrenceVectorizer(max_memory=budget, **params)
    assert_identical(fitted.fit_transform(paragraphs), expected)
    assert_identical(fitted.transform(paragraphs), expected)
    tracemalloc.start()
    copied = {(word + " ")[:-1]: rank + 1000 for rank, word in enumerate(fitted.vocabulary_)}  # new strings, ints
    measured = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del copied
    n_types = len({token for paragraph in paragraphs for token in paragraph.lower().split()})
    held_in_fit = budget - budgets[1]
    held_in_transform = budget - budgets[2]
    # (tracemalloc's measure of the copy runs 3 % above the sizes sys.getsizeof gives of the same objects)
    assert held_in_fit == pytest.approx(measured + fitted.word_counts_.nbytes + 4 * n_types, rel=0.05)
    table = TokenTable.from_words(list(fitted.vocabulary_))
    assert held_in_transform == pytest.approx(measured + fitted.word_counts_.nbytes + table.nbytes, rel=0.05)
    with caplog.at_level("WARNING", logger="glovev_ext.counting.vectorizer"):
        assert_identical(CooccurrenceVectorizer(max_memory=measured, **params).fit_transform(paragraphs), expected)
    assert budgets[-1] == measured // 4
    assert re.search(rf"max_memory={measured}: the vocabulary of {len(fitted.vocabulary_)} words takes [\d,]+ bytes "
                     r"of it, and counting holds a quarter of the budget besides", caplog.text)
