"""word2vec and GloVe text or binary vectors through gensim, covariances saved beside them."""

from __future__ import annotations

import numpy as np
import pytest

from glovev_ext import KeyedVectorsWithVariance
from glovev_ext.adapters import load_word2vec_with_covariances, save_word2vec_with_covariances


@pytest.fixture
def kv(embedded_vectorizer, small_model) -> KeyedVectorsWithVariance:
    return KeyedVectorsWithVariance.from_estimator(small_model, counts=embedded_vectorizer.word_counts_)


@pytest.mark.parametrize("binary, header", [(False, True), (True, True), (False, False)])
def test_word2vec_files_with_covariances_beside_them(tmp_path, kv, binary, header):
    path = tmp_path / "vectors.w2v"
    save_word2vec_with_covariances(path, kv, binary=binary, write_header=header)
    assert (tmp_path / "vectors.w2v.covariance").exists()
    loaded = load_word2vec_with_covariances(path, binary=binary, no_header=not header)
    assert loaded.index_to_key == kv.index_to_key
    np.testing.assert_allclose(loaded.vectors, kv.vectors, rtol=1e-6 if binary else 1e-15)
    for word in kv.index_to_key[::53]:
        assert loaded.has_covariance(word) == kv.has_covariance(word)
        if kv.has_covariance(word):
            np.testing.assert_array_equal(loaded.covariance(word), kv.covariance(word))
