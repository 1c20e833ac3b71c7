"""A saved model is one folder, replaced whole or not at all."""

from __future__ import annotations

import numpy as np
import pytest

import glovev_ext


@pytest.fixture
def kv(small_model):
    return glovev_ext.KeyedVectorsWithVariance.from_estimator(small_model)


def test_round_trip_memory_maps_the_large_arrays(kv, tmp_path):
    directory = glovev_ext.save_model(tmp_path / "model", kv, {"source": "test"})
    loaded, metadata = glovev_ext.load_model(directory)
    assert metadata == {"source": "test"}
    assert kv.covariance_store._factors.size >= 1 << 16 and isinstance(loaded.covariance_store._factors, np.memmap)
    np.testing.assert_array_equal(loaded.vectors, kv.vectors)
    np.testing.assert_array_equal(loaded.covariance("man"), kv.covariance("man"))


def test_an_interrupted_save_keeps_the_previous_model(kv, tmp_path, monkeypatch):
    glovev_ext.save_model(tmp_path / "model", kv, {"version": 1})

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(glovev_ext.KeyedVectorsWithVariance, "save", interrupted)
    with pytest.raises(KeyboardInterrupt):
        glovev_ext.save_model(tmp_path / "model", kv, {"version": 2})
    assert glovev_ext.load_model(tmp_path / "model")[1] == {"version": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["model"]


def test_a_new_save_replaces_the_old_one_whole(kv, tmp_path):
    glovev_ext.save_model(tmp_path / "model", kv, {"version": 1})
    (tmp_path / "model" / "stale.txt").write_text("from the old model")
    glovev_ext.save_model(tmp_path / "model", kv, {"version": 2})
    assert not (tmp_path / "model" / "stale.txt").exists()
    assert glovev_ext.load_model(tmp_path / "model")[1] == {"version": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_loading_a_folder_that_is_not_a_model_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="no saved model at .*create one with 'glovev fit'"):
        glovev_ext.load_model(tmp_path)
