"""The GloVe-V authors' release layout: round trips and inconsistent releases refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from glovev_ext import KeyedVectorsWithVariance
from glovev_ext.covariance.factor import DIAGONAL, DIAGONAL_ROOT, EXACT, LOW_RANK, THIN_ROOT
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


def test_complete_layout_under_the_readmes_file_names(tmp_path, kv):
    write_glovev_release(tmp_path / "release", kv, chunk_size=500, naming="readme")
    assert list((tmp_path / "release").glob("complete_chunk_*.safetensors"))
    assert not list((tmp_path / "release").glob("completechunk_*"))
    loaded = load_glovev_release(tmp_path / "release")
    word = next(w for w in kv.index_to_key if kv.has_covariance(w))
    expected = kv.covariance(word).astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(loaded.covariance(word), (expected + expected.T) / 2, rtol=1e-9,
                               atol=1e-12 * np.abs(expected).max())


def approximate_release(tmp_path, kv, naming):
    """A release whose words are diagonal, rank-3 or complete in turn; returns its folder and the forms."""
    usable = [w for w in kv.index_to_key if kv.has_covariance(w)]
    forms = {word: ["diagonal", ("svd", 3), "complete"][k % 3] for k, word in enumerate(usable)}
    folder = tmp_path / f"approx_{naming}"
    write_glovev_release(folder, kv, chunk_size=400, variances="approximate", naming=naming, approximations=forms)
    return folder, forms


@pytest.mark.parametrize("naming, reading", [("code", "on demand"), ("readme", "on demand"), ("code", "now"),
                                             ("readme", "to a store file")])
def test_approximate_layout_round_trip_gives_back_each_form_exactly(tmp_path, kv, naming, reading):
    from safetensors.numpy import load_file

    folder, forms = approximate_release(tmp_path, kv, naming)
    files = {p.name for p in folder.glob("*.safetensors") if p.name != "vectors.safetensors"}
    assert files == ({"ApproximationVariances.safetensors"} if naming == "readme"
                     else {f"approxchunk_{k}.safetensors" for k in range(len(files))})
    tensors = {}
    for name in files:
        tensors.update(load_file(str(folder / name)))
    options = {"on demand": {}, "now": {"on_demand": False}, "to a store file": {"covariance_path": tmp_path / "a.cov"}}
    loaded = load_glovev_release(folder, **options[reading])
    store = loaded.covariance_store
    for word, form in list(forms.items())[:60]:
        idx = kv.get_index(word)
        row = loaded.covariance_row(word)
        if form == "diagonal":
            expected = np.diag(tensors[f"diag_{idx}"].astype(np.float64))
            assert store.approximation[row] == DIAGONAL and loaded.covariance_factor(word).kind == DIAGONAL_ROOT
            np.testing.assert_allclose(loaded.covariance(word), expected, rtol=4e-16, atol=0)  # sqrt, then squared
        elif form == "complete":
            expected = tensors[f"complete_{idx}"].astype(np.float64)
            assert store.approximation[row] == EXACT
            np.testing.assert_allclose(loaded.covariance(word), (expected + expected.T) / 2, rtol=1e-9,
                                       atol=1e-12 * np.abs(expected).max())
        else:
            u, s, vt = (tensors[f"{k}_{idx}"].astype(np.float64) for k in ("U", "s", "Vt"))
            assert store.approximation[row] == LOW_RANK and loaded.covariance_factor(word).rank == 3
            assert loaded.covariance_factor(word).kind == THIN_ROOT and loaded.covariance_factor(word).packed.size == 24
            expected = (u * s) @ vt
            np.testing.assert_allclose(loaded.covariance(word), expected, rtol=1e-12,
                                       atol=1e-12 * np.abs(expected).max())


def test_a_statistic_on_a_low_rank_word_equals_the_expanded_covariance_and_says_it_is_approximate(tmp_path, kv):
    from safetensors.numpy import load_file

    folder, forms = approximate_release(tmp_path, kv, "code")
    loaded = load_glovev_release(folder)
    low_rank = next(w for w, f in forms.items() if f == ("svd", 3))
    exact = next(w for w, f in forms.items() if f == "complete" and w != low_rank)
    tensors = {}
    for path in folder.glob("approxchunk_*.safetensors"):
        tensors.update(load_file(str(path)))
    idx = kv.get_index(low_rank)
    u, s, vt = (tensors[f"{k}_{idx}"].astype(np.float64) for k in ("U", "s", "Vt"))
    a, b = (np.asarray(loaded.get_vector(w), dtype=np.float64) for w in (low_rank, exact))
    cos = a @ b / np.linalg.norm(a) / np.linalg.norm(b)
    grad_a = b / (np.linalg.norm(a) * np.linalg.norm(b)) - cos * a / (a @ a)
    grad_b = a / (np.linalg.norm(a) * np.linalg.norm(b)) - cos * b / (b @ b)
    variance = grad_a @ ((u * s) @ vt) @ grad_a + grad_b @ loaded.covariance(exact) @ grad_b
    result = loaded.similarity_test(low_rank, exact, method="delta")
    assert result.std_error == pytest.approx(np.sqrt(variance), rel=1e-12)
    assert "Approximate covariance" in str(result.summary()) and f"{low_rank!r} (rank 3 of 8)" in result.caveats[-1]
    rows = [(low_rank, exact, 3.0), (exact, low_rank, 1.0), (low_rank, kv.index_to_key[5], 2.0)]
    evaluation = loaded.evaluate_word_pairs_with_uncertainty(rows, n_draws=50, random_state=0, missing="raise")
    assert any(f"{low_rank!r} (rank 3 of 8)" in c for c in evaluation.caveats)
    table = loaded.similarity_tests([(low_rank, exact)], method="delta")
    assert table.std_errors[0] == pytest.approx(result.std_error, rel=1e-12)
    assert any(f"{low_rank!r} (rank 3 of 8)" in c for c in table.caveats)
    saved = tmp_path / "saved.cov"
    loaded.covariance_store.save(saved)
    from glovev_ext.covariance import CovarianceStore
    reloaded = CovarianceStore.load(saved)
    np.testing.assert_array_equal(reloaded.approximation, loaded.covariance_store.approximation)
    row = loaded.covariance_row(low_rank)
    assert reloaded.factor(row).kind == THIN_ROOT
    np.testing.assert_allclose(reloaded[row], (u * s) @ vt, rtol=1e-12, atol=1e-12 * np.abs(u).max() ** 2 * s.max())


@pytest.mark.parametrize("damage, message", [
    ("drop_tensor", r"word '{word}' \(index {idx}\) is 'svd' in approx_info.txt but the file has no s_{idx}"),
    ("wrong_rank", r"word '{word}' \(index {idx}\) has rank 5 in approx_info.txt but U, s, Vt have shapes"),
    ("unlisted", r"approx_info.txt does not list word '{word}'"),
    ("bad_line", r"approx_info.txt: line 1 must be 'word type \[rank\]'"),
])
def test_malformed_approximate_releases_name_the_file_and_the_word(tmp_path, kv, damage, message):
    from safetensors.numpy import load_file, save_file

    folder, forms = approximate_release(tmp_path, kv, "code")
    word = next(w for w, f in forms.items() if f == ("svd", 3))
    idx = kv.get_index(word)
    info = folder / "approx_info.txt"
    lines = info.read_text().splitlines()
    if damage in ("drop_tensor",):
        for path in folder.glob("approxchunk_*.safetensors"):
            tensors = load_file(str(path))
            if f"s_{idx}" in tensors:
                del tensors[f"s_{idx}"]
                save_file(tensors, str(path))
    elif damage == "wrong_rank":
        info.write_text("\n".join(f"{word} svd 5" if line.split()[0] == word else line for line in lines) + "\n")
    elif damage == "unlisted":
        info.write_text("\n".join(line for line in lines if line.split()[0] != word) + "\n")
    else:
        word = lines[0].split()[0]
        info.write_text("\n".join([f"{word} sparse"] + lines[1:]) + "\n")
    with pytest.raises(GloVeFileError, match=message.format(word=word, idx=idx)):
        load_glovev_release(folder, on_demand=False)
    with pytest.raises(GloVeFileError, match=message.format(word=word, idx=idx)):  # read when first asked
        load_glovev_release(folder).covariance(word)


@pytest.mark.parametrize("variances", ["complete", "approximate"])
def test_a_query_reads_only_the_chunk_of_its_word(tmp_path, kv, monkeypatch, variances):
    from glovev_ext.adapters import glovev_release

    usable = [w for w in kv.index_to_key if kv.has_covariance(w)]
    forms = {word: ("svd", 2) for word in usable}
    write_glovev_release(tmp_path / "release", kv, chunk_size=300, variances=variances, approximations=forms)
    real, opened = glovev_release._safetensors, []

    def recording():
        numpy_io, safe_open = real()

        def spy(path, *args, **kwargs):
            opened.append(Path(path).name)
            return safe_open(path, *args, **kwargs)

        return numpy_io, spy

    monkeypatch.setattr(glovev_release, "_safetensors", recording)
    loaded = load_glovev_release(tmp_path / "release")
    assert opened == [] and loaded.has_covariance(usable[650])
    eager = load_glovev_release(tmp_path / "release", on_demand=False)
    opened.clear()
    np.testing.assert_allclose(loaded.covariance(usable[650]), eager.covariance(usable[650]), rtol=1e-12, atol=0)
    chunk = "completechunk_2.safetensors" if variances == "complete" else "approxchunk_2.safetensors"
    assert opened == [chunk]
    loaded.covariance(usable[650])
    assert opened == [chunk], "a word read once is kept"
    assert loaded.covariance_factor(usable[650]).approximation == (EXACT if variances == "complete" else LOW_RANK)
