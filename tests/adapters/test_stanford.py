"""The Stanford C tool's files: exact round trips, and every damaged file refused naming file and offset."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import glovev_ext
from glovev_ext.adapters import (GloVeFileError, load_glove_folder, read_cooccurrence, read_vectors_bin,
                                 read_vectors_text, read_vocab, write_cooccurrence, write_vectors_bin,
                                 write_vectors_text, write_vocab)
from glovev_ext.adapters import stanford
from glovev_ext.glove import GloVeParameters

RECORD = stanford.RECORD


DIM = 8


@pytest.fixture
def fitted(embedded_vectorizer, embedded_cooccurrence, small_model):
    """The shared D = 8 model with its matrix and vectorizer (read only)."""
    return embedded_vectorizer, embedded_cooccurrence, small_model


def glove_parameters(model) -> glovev_ext.glove.GloVeParameters:
    return GloVeParameters(model.embedding_, model.context_embedding_, model.bias_, model.context_bias_,
                                      costs=np.empty(0))


def c_tool_folder(tmp_path, vectorizer, X, model, text=False):
    words = list(X.words)
    write_vocab(tmp_path / "vocab.txt", words, vectorizer.word_counts_)
    write_cooccurrence(tmp_path / "cooccurrence.shuf.bin", X, shuffle=True, random_state=0)
    if text:
        write_vectors_text(tmp_path / "vectors.txt", words, glove_parameters(model))
    else:
        write_vectors_bin(tmp_path / "vectors.bin", glove_parameters(model))
    return words


def test_c_tool_files_round_trip_exactly(tmp_path, fitted):
    vectorizer, X, model = fitted
    words = c_tool_folder(tmp_path, vectorizer, X, model)
    read_words, counts = read_vocab(tmp_path / "vocab.txt")
    assert read_words == words and np.array_equal(counts, vectorizer.word_counts_)
    matrix = read_cooccurrence(tmp_path / "cooccurrence.shuf.bin", len(words), words=words)
    assert (matrix != X).nnz == 0 and list(matrix.words) == words
    parameters = read_vectors_bin(tmp_path / "vectors.bin", len(words))
    for name in ("center_vectors", "context_vectors", "center_biases", "context_biases"):
        assert np.array_equal(getattr(parameters, name), getattr(glove_parameters(model), name)), name
    write_vectors_text(tmp_path / "vectors.txt", words, parameters)
    text_words, from_text = read_vectors_text(tmp_path / "vectors.txt", dim=DIM)
    assert text_words == words and np.array_equal(from_text.context_vectors, parameters.context_vectors)


def test_c_tool_records_layout_is_int32_int32_float64_one_based(tmp_path):
    X = sp.csr_matrix(np.array([[0.0, 2.5], [0.5, 0.0]]))
    write_cooccurrence(tmp_path / "c.bin", X)
    raw = (tmp_path / "c.bin").read_bytes()
    assert len(raw) == 32
    assert np.frombuffer(raw[:8], "<i4").tolist() == [1, 2] and np.frombuffer(raw[8:16], "<f8")[0] == 2.5


def test_chunked_reading_sums_repeated_pairs(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    n_words, n_records = 30, 5000
    records = np.empty(n_records, RECORD)
    records["word1"] = rng.integers(1, n_words + 1, n_records)
    records["word2"] = rng.integers(1, n_words + 1, n_records)
    records["value"] = rng.uniform(0.1, 3.0, n_records)
    records.tofile(tmp_path / "c.bin")
    monkeypatch.setattr(stanford, "_CHUNK_RECORDS", 333)
    matrix = read_cooccurrence(tmp_path / "c.bin", n_words)
    dense = np.zeros((n_words, n_words))
    for w1, w2, value in records:
        dense[w1 - 1, w2 - 1] += value
    np.testing.assert_allclose(matrix.toarray(), dense, rtol=1e-12)


def test_a_folder_of_c_tool_output_gives_the_estimators_covariances(tmp_path, fitted):
    vectorizer, X, model = fitted
    c_tool_folder(tmp_path, vectorizer, X, model)
    estimator, kv = load_glove_folder(tmp_path, n_jobs=1, progress=False)
    reference = glovev_ext.GloVeVEstimator(DIM, pretrained=glove_parameters(model), n_jobs=1, progress=False).fit(X)
    np.testing.assert_array_equal(estimator.sigma2_, reference.sigma2_)
    for i in np.flatnonzero(reference.covariance_defined_)[::50]:
        np.testing.assert_array_equal(estimator.covariance_[int(i)], reference.covariance_[int(i)])
    word = X.words[int(np.flatnonzero(reference.covariance_defined_)[0])]
    assert kv.get_vecattr(word, "count") == vectorizer.word_counts_[X.words.tolist().index(word)]


def test_text_vectors_of_other_models_are_refused(tmp_path, fitted):
    vectorizer, X, model = fitted
    words = list(X.words)
    with open(tmp_path / "vectors.txt", "w") as stream:  # -model 2: W + C only
        for k, word in enumerate(words):
            stream.write(word + " " + " ".join(map(str, model.embedding_[k] + model.context_embedding_[k])) + "\n")
    with pytest.raises(GloVeFileError, match="-model 1 or -model 2 output"):
        read_vectors_text(tmp_path / "vectors.txt", dim=DIM)
    write_vocab(tmp_path / "vocab.txt", words, vectorizer.word_counts_)
    write_cooccurrence(tmp_path / "cooccurrence.bin", X)
    with pytest.raises(ValueError, match="pass dim="):
        load_glove_folder(tmp_path, progress=False)


def test_text_vectors_tolerate_the_unk_row(tmp_path, fitted):
    vectorizer, X, model = fitted
    words = list(X.words)
    write_vectors_text(tmp_path / "vectors.txt", words, glove_parameters(model))
    with open(tmp_path / "vectors.txt", "a") as stream:
        stream.write("<unk> " + " ".join(["0.1"] * (2 * DIM + 2)) + "\n")
    text_words, parameters = read_vectors_text(tmp_path / "vectors.txt", dim=DIM)
    assert text_words == words and parameters.center_vectors.shape == (len(words), DIM)


def valid_records(n_words):
    return st.lists(st.tuples(st.integers(1, n_words), st.integers(1, n_words),
                              st.floats(1e-3, 1e3, allow_nan=False, allow_infinity=False)), min_size=1, max_size=60)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=valid_records(7))
def test_valid_records_read_as_the_sum_of_their_values(tmp_path, records):
    array = np.array(records, dtype=RECORD)
    array.tofile(tmp_path / "valid.bin")
    dense = np.zeros((7, 7))
    for w1, w2, value in records:
        dense[w1 - 1, w2 - 1] += value
    np.testing.assert_allclose(read_cooccurrence(tmp_path / "valid.bin", 7).toarray(), dense, rtol=1e-12)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=valid_records(7), field=st.sampled_from(["word1", "word2", "value"]), data=st.data())
def test_corrupt_records_are_refused_naming_file_and_offset(tmp_path, records, field, data):
    array = np.array(records, dtype=RECORD)
    k = data.draw(st.integers(0, len(records) - 1))
    if field == "value":
        array["value"][k] = data.draw(st.sampled_from([np.nan, np.inf, -np.inf, -1.0, -1e-9]))
    else:
        array[field][k] = data.draw(st.sampled_from([0, -1, 8, 2**31 - 1, -(2**31)]))
    array.tofile(tmp_path / "bad.bin")
    with pytest.raises(GloVeFileError, match=rf"bad\.bin: record {k} \(byte {16 * k}\)"):
        read_cooccurrence(tmp_path / "bad.bin", 7)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=valid_records(7), cut=st.integers(1, 15))
def test_truncated_cooccurrence_files_are_refused(tmp_path, records, cut):
    data = np.array(records, dtype=RECORD).tobytes()
    (tmp_path / "cut.bin").write_bytes(data[:-cut])
    with pytest.raises(GloVeFileError, match="cut.bin is (truncated|empty)"):
        read_cooccurrence(tmp_path / "cut.bin", 7)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n_words=st.integers(1, 6), width=st.integers(2, 5), cut=st.integers(0, 40), extra_words=st.integers(-2, 2))
def test_vectors_bin_that_disagrees_with_the_vocabulary_is_refused(tmp_path, n_words, width, cut, extra_words):
    values = np.arange(2 * n_words * width, dtype="<f8")
    data = values.tobytes()[:len(values) * 8 - cut]
    (tmp_path / "vectors.bin").write_bytes(data)
    claimed = max(1, n_words + extra_words)
    consistent = len(data) > 0 and len(data) % (16 * claimed) == 0 and len(data) // (16 * claimed) >= 2
    if consistent:
        # vectors.bin has no header: sizes that fit another vocabulary are all the reader can check
        parameters = read_vectors_bin(tmp_path / "vectors.bin", claimed)
        assert parameters.center_vectors.shape == (claimed, len(data) // (16 * claimed) - 1)
    else:
        with pytest.raises(GloVeFileError, match="vectors.bin"):
            read_vectors_bin(tmp_path / "vectors.bin", claimed)


def test_bad_vocab_files_are_refused(tmp_path):
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(GloVeFileError, match="empty.txt is empty"):
        read_vocab(tmp_path / "empty.txt")
    (tmp_path / "v.txt").write_text("the 10\nof 5\nbroken\n")
    with pytest.raises(GloVeFileError, match=r"v.txt: line 3 \(byte 12\) is not 'word count'"):
        read_vocab(tmp_path / "v.txt")
    (tmp_path / "n.txt").write_text("the ten\n")
    with pytest.raises(GloVeFileError, match="count 'ten' is not an integer"):
        read_vocab(tmp_path / "n.txt")
