"""CooccurrenceVectorizer against a brute-force count written straight from the C tool's rules."""

from __future__ import annotations

import re
import threading
from collections import Counter, defaultdict

import numpy as np
import pytest
import scipy.sparse as sp
from gensim.test.utils import common_texts
from sklearn.base import clone

from glovev_ext import CooccurrenceMatrix, CooccurrenceVectorizer


def brute_force_vocabulary(token_lists, min_count, max_vocab_size=None):
    counts = Counter(token for tokens in token_lists for token in tokens)
    ranked = sorted((w for w, n in counts.items() if n >= min_count), key=lambda w: (-counts[w], w))
    return ranked[:max_vocab_size], counts


def brute_force_cooccurrence(token_lists, words, window):
    """X[i, j] += 1/d for in-vocabulary words d positions apart, out-of-vocabulary words removed."""
    index = {w: i for i, w in enumerate(words)}
    counts = defaultdict(float)
    for tokens in token_lists:
        kept = [index[t] for t in tokens if t in index]
        for right in range(len(kept)):
            for left in range(max(0, right - window), right):
                counts[kept[left], kept[right]] += 1.0 / (right - left)
                counts[kept[right], kept[left]] += 1.0 / (right - left)
    dense = np.zeros((len(words), len(words)))
    for (i, j), value in counts.items():
        dense[i, j] = value
    return dense


def vectorizer(**params):
    params.setdefault("progress", False)
    return CooccurrenceVectorizer(**params)


@pytest.mark.parametrize("window", [1, 3, 8])
def test_matches_brute_force_on_embedded_corpus(embedded_paragraphs, window):
    token_lists = [p.lower().split() for p in embedded_paragraphs]
    words, _ = brute_force_vocabulary(token_lists, min_count=3)
    X = vectorizer(window=window, min_count=3, chunk_size=5000, n_jobs=2).fit_transform(embedded_paragraphs)
    assert list(X.words) == words
    np.testing.assert_allclose(X.toarray(), brute_force_cooccurrence(token_lists, words, window), rtol=1e-12, atol=0)


def test_matches_brute_force_on_lee_corpus(lee_documents):
    token_lists = [d.split() for d in lee_documents]
    words, counts = brute_force_vocabulary(token_lists, min_count=2)
    fitted = vectorizer(min_count=2, lowercase=False, n_jobs=1)
    X = fitted.fit_transform(lee_documents)
    assert list(fitted.get_feature_names_out()) == words
    np.testing.assert_array_equal(fitted.word_counts_, [counts[w] for w in words])
    np.testing.assert_allclose(X.toarray(), brute_force_cooccurrence(token_lists, words, 8), rtol=1e-12, atol=0)


def test_output_is_symmetric_canonical_csr(embedded_paragraphs):
    X = vectorizer(min_count=2).fit_transform(embedded_paragraphs)
    assert isinstance(X, CooccurrenceMatrix) and sp.isspmatrix_csr(X)
    assert X.dtype == np.float64 and X.has_sorted_indices
    assert abs(X - X.T).max() == 0.0
    assert (X.data > 0).all()


def test_contexts_do_not_cross_document_boundaries():
    fitted = vectorizer(min_count=1)
    X = fitted.fit_transform(["a b", "c d"])
    i = fitted.vocabulary_
    assert X[i["b"], i["c"]] == 0 and X[i["a"], i["d"]] == 0
    assert X[i["a"], i["b"]] == 1.0
    joined = fitted.fit_transform(["a b c d"])
    assert joined[i["b"], i["c"]] == 1.0 and joined[i["a"], i["d"]] == pytest.approx(1 / 3)


def test_out_of_vocabulary_words_are_removed_before_windows():
    fitted = vectorizer(min_count=2, window=1)
    X = fitted.fit_transform(["a rare b", "a b"])
    i = fitted.vocabulary_
    assert "rare" not in i
    # "a" and "b" are adjacent once "rare" is dropped, as in the C tool's cooccur.
    assert X[i["a"], i["b"]] == 2.0


def test_self_pairs_count_in_both_directions():
    fitted = vectorizer(min_count=1, window=2)
    X = fitted.fit_transform(["x x y"])
    assert X[fitted.vocabulary_["x"], fitted.vocabulary_["x"]] == 2.0


def test_min_count_and_vocabulary_order():
    docs = ["b b b a a a c c d", "e e e e"]
    fitted = vectorizer(min_count=2).fit(docs)
    assert list(fitted.get_feature_names_out()) == ["e", "a", "b", "c"]
    np.testing.assert_array_equal(fitted.word_counts_, [4, 3, 3, 2])
    assert fitted.n_tokens_ == 13 and fitted.n_documents_ == 2


def test_max_vocab_size_keeps_most_frequent_with_alphabetical_ties(lee_documents):
    token_lists = [d.lower().split() for d in lee_documents]
    expected, _ = brute_force_vocabulary(token_lists, min_count=1, max_vocab_size=250)
    fitted = vectorizer(min_count=1, max_vocab_size=250).fit(lee_documents)
    assert list(fitted.vocabulary_) == expected


def test_transform_counts_a_new_corpus_with_the_fitted_vocabulary(embedded_paragraphs, lee_documents):
    fitted = vectorizer(min_count=3).fit(embedded_paragraphs)
    words = list(fitted.get_feature_names_out())
    X = fitted.transform(lee_documents)
    expected = brute_force_cooccurrence([d.lower().split() for d in lee_documents], words, 8)
    np.testing.assert_allclose(X.toarray(), expected, rtol=1e-12, atol=0)


def test_fit_transform_equals_fit_then_transform_and_accepts_a_generator(embedded_paragraphs):
    one_pass = vectorizer(min_count=2).fit_transform(p for p in embedded_paragraphs)
    fitted = vectorizer(min_count=2).fit(embedded_paragraphs)
    assert list(one_pass.words) == list(fitted.get_feature_names_out())
    assert abs(one_pass - fitted.transform(embedded_paragraphs)).max() == 0.0


@pytest.mark.parametrize("chunk_size", [1, 37, 10_000_000])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_chunking_and_threads_do_not_change_the_counts(embedded_paragraphs, chunk_size, n_jobs):
    reference = vectorizer(min_count=2, n_jobs=1, chunk_size=10_000_000).fit_transform(embedded_paragraphs[:120])
    X = vectorizer(min_count=2, n_jobs=n_jobs, chunk_size=chunk_size).fit_transform(embedded_paragraphs[:120])
    np.testing.assert_allclose(X.toarray(), reference.toarray(), rtol=1e-12, atol=0)


def test_the_number_of_threads_does_not_change_a_bit(embedded_paragraphs):
    one, two = (vectorizer(min_count=2, n_jobs=n_jobs, chunk_size=2000).fit_transform(embedded_paragraphs)
                for n_jobs in (1, 2))
    assert (one.indptr == two.indptr).all() and (one.indices == two.indices).all()
    assert (one.data == two.data).all()


@pytest.mark.parametrize("failing_call", [1, 5])
def test_a_failure_on_a_worker_thread_reaches_the_caller(embedded_paragraphs, monkeypatch, failing_call):
    import glovev_ext.counting._counter as counter_module

    fitted = vectorizer(min_count=2, n_jobs=2, chunk_size=2000).fit(embedded_paragraphs)
    real_kernel, calls = counter_module.count_right_contexts, []

    def failing_kernel(*args):
        calls.append(1)
        if len(calls) == failing_call:
            raise MemoryError("no room for this chunk")
        return real_kernel(*args)

    monkeypatch.setattr(counter_module, "count_right_contexts", failing_kernel)
    outcome = []

    def transform():
        try:
            fitted.transform(embedded_paragraphs)
        except MemoryError as exc:
            outcome.append(exc)

    for _ in range(5):  # the failure meets queued counts and merges in a different state each time
        calls.clear()
        outcome.clear()
        runner = threading.Thread(target=transform, daemon=True)
        runner.start()
        runner.join(timeout=120)
        assert not runner.is_alive(), "transform hung after a failure on a worker thread"
        assert len(outcome) == 1 and "no room for this chunk" in str(outcome[0])


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_partial_sums_are_freed_without_the_garbage_collector(embedded_paragraphs, monkeypatch, n_jobs):
    import gc
    import weakref

    import glovev_ext.counting._counter as counter_module

    fitted = vectorizer(min_count=2, n_jobs=n_jobs, chunk_size=2000).fit(embedded_paragraphs)
    real_add, partial_sums = counter_module._add_matrices, []

    def recorded_add(earlier, later):
        total = real_add(earlier, later)
        partial_sums.append(weakref.ref(total))
        return total

    monkeypatch.setattr(counter_module, "_add_matrices", recorded_add)
    gc.collect()
    gc.disable()
    try:
        fitted.transform(embedded_paragraphs)
        alive = sum(ref() is not None for ref in partial_sums)
    finally:
        gc.enable()
    assert len(partial_sums) > 10 and alive == 0


def test_token_lists_and_gensim_corpora_work(embedded_paragraphs):
    from_strings = vectorizer(min_count=2).fit_transform(embedded_paragraphs)
    from_tokens = vectorizer(min_count=2).fit_transform([p.split() for p in embedded_paragraphs])
    assert abs(from_strings - from_tokens).max() == 0.0
    X = vectorizer(min_count=2).fit_transform(common_texts)
    expected_words, _ = brute_force_vocabulary(common_texts, min_count=2)
    np.testing.assert_allclose(X.toarray(), brute_force_cooccurrence(common_texts, expected_words, 8), rtol=1e-12)


def test_lowercase_and_tokenizer_hook():
    def tokenize(text):
        return re.findall(r"[a-z]+", text)
    fitted = vectorizer(min_count=1, tokenizer=tokenize)
    X = fitted.fit_transform(["The cat, the HAT."])
    assert list(X.words) == ["the", "cat", "hat"]
    cased = vectorizer(min_count=1, lowercase=False).fit(["The the"])
    assert set(cased.vocabulary_) == {"The", "the"}


def test_is_a_scikit_learn_transformer():
    original = vectorizer(window=3, min_count=2)
    copy = clone(original)
    assert copy.get_params() == original.get_params()
    assert copy.__sklearn_tags__().input_tags.string


def test_progress_bar_can_be_shown(embedded_paragraphs, capsys):
    vectorizer(min_count=2, progress=True).fit_transform(embedded_paragraphs[:50])
    assert "counting" in capsys.readouterr().err


@pytest.mark.parametrize("documents, message", [
    ([], "empty"),
    (["", "  "], "empty"),
    (["one two three"], "min_count=5"),
    ("a single string", "single str"),
    ([1, 2], "document 0 is a int"),
    ([b"bytes"], "document 0 is a bytes"),
    ([[1, 2]], "token of type int"),
    ([["ok"], ["fine", 3]], "tokens must be strings"),
])
def test_bad_corpora_are_refused_with_a_clear_error(documents, message):
    with pytest.raises((ValueError, TypeError), match=message):
        CooccurrenceVectorizer(progress=False, lowercase=False).fit_transform(documents)


@pytest.mark.parametrize("documents, params, message", [
    (["the"] * 1000, {}, "the corpus holds only 1 distinct word ('the', 1,000 times in 1,000 tokens): "
                         "GloVe needs at least two; give a larger corpus"),
    (["the " * 1000], {}, "the corpus holds only 1 distinct word ('the', 1,000 times in 1,000 tokens): "
                          "GloVe needs at least two; give a larger corpus"),
    (["the " * 1000 + "a b"], {}, "only 1 distinct word occurs min_count=5 times or more ('the', 1,000 times in "
                                  "1,002 tokens): GloVe needs at least two; give a larger corpus or a lower min_count"),
    (["b b b a a c"], {"min_count": 2, "max_vocab_size": 1},
     "max_vocab_size=1 keeps only 1 word ('b', 3 times in 6 tokens): GloVe needs at least two; raise max_vocab_size"),
])
def test_a_vocabulary_of_one_word_is_refused_in_words_about_the_corpus(documents, params, message):
    for fit in ("fit", "fit_transform"):
        with pytest.raises(ValueError) as error:
            getattr(vectorizer(**params), fit)(documents)
        assert str(error.value) == message


@pytest.mark.parametrize("params, message", [
    ({"window": 0}, "window must be >= 1"),
    ({"window": 2.5}, "window must be an integer"),
    ({"min_count": 0}, "min_count must be >= 1"),
    ({"max_vocab_size": 0}, "max_vocab_size must be >= 1"),
    ({"n_jobs": 0}, "n_jobs must not be 0"),
    ({"tokenizer": "split"}, "tokenizer must be callable"),
])
def test_bad_parameters_are_refused(params, message):
    with pytest.raises((ValueError, TypeError), match=message):
        CooccurrenceVectorizer(progress=False, **params).fit(["a b c"])


def test_transform_before_fit_is_refused():
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError):
        CooccurrenceVectorizer().transform(["a b"])


def test_matrix_keeps_its_words_when_copied():
    X = CooccurrenceMatrix(sp.identity(2, format="csr"), words=["a", "b"])
    assert list(X.copy().words) == ["a", "b"]
    with pytest.raises(ValueError, match="words has 3 entries"):
        CooccurrenceMatrix(sp.identity(2, format="csr"), words=["a", "b", "c"])


@pytest.mark.parametrize("count", [0, 1, 5, 47, 48, 49, 200, 1023])
def test_a_rows_touched_columns_come_out_sorted_on_every_branch(count):
    # Few columns: insertion sort; up to n_words / 16: heap sort; more: a scan of every column.
    from glovev_ext.counting._window_kernel import _sort_touched_columns

    rng = np.random.default_rng(count)
    for n_words in (20_000, 2 * count + 1):
        touched = rng.choice(n_words, size=min(count, n_words), replace=False).astype(np.int32)
        last_row_seen = np.full(n_words, -1, np.int64)
        last_row_seen[touched] = 7
        indices = np.concatenate([np.full(3, -5, np.int32), touched, np.full(2, -9, np.int32)])
        _sort_touched_columns(indices, 3, 3 + touched.size, last_row_seen, 7)
        np.testing.assert_array_equal(indices[3:3 + touched.size], np.sort(touched))
        np.testing.assert_array_equal(indices[:3], -5)
        np.testing.assert_array_equal(indices[3 + touched.size:], -9)
