"""The GloVe-V authors' release layout: round trips and inconsistent releases refused."""

from __future__ import annotations

import numpy as np
import pytest

from glovev_ext import KeyedVectorsWithVariance
from glovev_ext.adapters import GloVeFileError, load_glovev_release, write_glovev_release


@pytest.fixture
def kv(embedded_vectorizer, small_model) -> KeyedVectorsWithVariance:
    return KeyedVectorsWithVariance.from_estimator(small_model, counts=embedded_vectorizer.word_counts_)


def test_release_layout_round_trip(tmp_path, kv, monkeypatch):
    from glovev_ext.adapters import glovev_release
    monkeypatch.setattr(glovev_release, "_SLICE", 7)
    write_glovev_release(tmp_path / "release", kv, chunk_size=300)
    assert len(list((tmp_path / "release").glob("completechunk_*.safetensors"))) > 1
    for covariance_path in (None, tmp_path / "release.cov"):
        loaded = load_glovev_release(tmp_path / "release", covariance_path=covariance_path)
        assert loaded.index_to_key == kv.index_to_key
        np.testing.assert_array_equal(loaded.vectors, kv.vectors.astype(np.float32))
        for word in kv.index_to_key[::97]:
            assert loaded.has_covariance(word) == kv.has_covariance(word)
            if kv.has_covariance(word):
                expected = kv.covariance(word).astype(np.float32).astype(np.float64)
                np.testing.assert_allclose(loaded.covariance(word), (expected + expected.T) / 2, rtol=1e-9,
                                           atol=1e-12 * np.abs(expected).max())
    assert isinstance(loaded.covariance_store._factors, np.memmap)


def test_release_whose_chunk_map_disagrees_with_vocab_is_refused(tmp_path, kv):
    write_glovev_release(tmp_path / "release", kv, chunk_size=500)
    chunk_map = tmp_path / "release" / "chunk_map.txt"
    lines = chunk_map.read_text().splitlines()
    word, _, chunk, local = lines[0].split("\t")
    lines[0] = "\t".join([word, "99999", chunk, local])
    chunk_map.write_text("\n".join(lines) + "\n")
    with pytest.raises(GloVeFileError, match=f"word '{word}' has global index 99999"):
        load_glovev_release(tmp_path / "release")
