"""KeyedVectorsWithVariance: gensim behaviour kept, every word keeps its own covariance."""

from __future__ import annotations

import re
from pathlib import Path

import gensim
import numpy as np
import pytest
from gensim.models import KeyedVectors
from gensim.test import test_keyedvectors as gensim_keyedvectors_tests
from gensim.test.utils import datapath

import glovev_ext
from glovev_ext import KeyedVectorsWithVariance, UndefinedCovarianceError
from glovev_ext.covariance import CovarianceStore, CovarianceStoreWriter
from glovev_ext.covariance import Factor


def random_store(words, dim, rng) -> CovarianceStore:
    """A store with a distinct random covariance for every word (Cholesky kind)."""
    with CovarianceStoreWriter(len(words), dim, len(words), words=words) as writer:
        writer.per_word.n_contexts[:] = dim + 3
        for k in range(len(words)):
            a = rng.normal(size=(dim + 3, dim))
            factor = Factor.of_hessian(a.T @ a, np.linalg.cholesky(a.T @ a), pseudo_inverse=False)
            writer.add(k, factor.with_sigma2(rng.uniform(0.5, 2.0)))
    return writer.store


class TestGensimKeyedVectorsCasesOnOurClass(gensim_keyedvectors_tests.TestKeyedVectors):
    """gensim's own TestKeyedVectors cases, with KeyedVectors replaced by our class everywhere.

    After each case, every key either kept its vector and its own covariance, or had its vector
    replaced or added and is marked as having no covariance.
    """

    def setUp(self):
        self._patched = (gensim_keyedvectors_tests.KeyedVectors, gensim.models.KeyedVectors)
        gensim_keyedvectors_tests.KeyedVectors = KeyedVectorsWithVariance
        gensim.models.KeyedVectors = KeyedVectorsWithVariance
        super().setUp()
        assert type(self.vectors) is KeyedVectorsWithVariance
        store = random_store(list(self.vectors.index_to_key), self.vectors.vector_size, np.random.default_rng(0))
        self.vectors.attach_covariances(store)
        self.original = {key: (self.vectors[key].copy(), store[key]) for key in self.vectors.index_to_key}

    def tearDown(self):
        gensim_keyedvectors_tests.KeyedVectors, gensim.models.KeyedVectors = self._patched
        kv = self.vectors
        assert len(kv.covariance_rows) >= len(kv.vectors)
        for key in kv.index_to_key:
            if key is None:
                continue
            vector, covariance = self.original.get(key, (None, None))
            if vector is not None and np.array_equal(kv[key], vector):
                np.testing.assert_array_equal(kv.covariance(key), covariance, err_msg=str(key))
            else:
                assert not kv.has_covariance(key), key


DIM = 8


@pytest.fixture
def model(small_model) -> glovev_ext.GloVeVEstimator:
    """The shared D = 8 model (read only: each test mutates its own KeyedVectorsWithVariance)."""
    assert small_model.embedding_.shape[1] == DIM
    return small_model


@pytest.fixture
def kv(model) -> KeyedVectorsWithVariance:
    return KeyedVectorsWithVariance.from_estimator(model)


def test_built_from_an_estimator_in_one_call(model, kv):
    assert isinstance(kv, KeyedVectors)
    np.testing.assert_array_equal(kv.vectors, model.embedding_)
    assert kv.index_to_key == list(model.words_)
    defined = np.flatnonzero(model.covariance_defined_)
    word = model.words_[defined[3]]
    np.testing.assert_array_equal(kv.covariance(word), model.covariance_[int(defined[3])])
    assert kv.covariance([word, word]).shape == (2, DIM, DIM)
    undefined = int(np.flatnonzero(~model.covariance_defined_)[0])
    rare = model.words_[undefined]
    assert not kv.has_covariance(rare)
    message = (f"word {rare!r} has no covariance: {model.n_contexts_[undefined]} contexts, and GloVe-V needs more "
               "than D = 8")
    with pytest.raises(UndefinedCovarianceError, match=re.escape(message)):
        kv.covariance(rare)


def test_gensim_methods_return_what_gensim_returns(model, kv):
    def plain():
        # a fresh one per call: gensim's own float64 KeyedVectors rescale their vectors in similarity()
        vectors = KeyedVectors(DIM, 0, dtype=kv.vectors.dtype)
        vectors.add_vectors(list(model.words_), model.embedding_.copy())
        return vectors

    assert kv.most_similar("man", topn=5) == plain().most_similar("man", topn=5)
    assert kv.similarity("man", "woman") == plain().similarity("man", "woman")
    pairs = datapath("wordsim353.tsv")
    ours, theirs = kv.evaluate_word_pairs(pairs), plain().evaluate_word_pairs(pairs)
    # gensim's float64 evaluation rescales its vectors as it goes: the last bits of the cosines
    # differ, which moves the Pearson correlation by 1e-16 and can swap near-tied Spearman ranks
    assert np.allclose(ours[0], theirs[0], rtol=1e-12) and ours[2] == theirs[2]
    assert ours[1][0] == pytest.approx(theirs[1][0], abs=2e-3)
    assert kv.doesnt_match(["man", "woman", "house"]) == plain().doesnt_match(["man", "woman", "house"])


def test_gensim_similarity_does_not_overwrite_float64_vectors(kv, model):
    """gensim 4.4's unitvec rescales float64 views in place; our class must not let it."""
    assert kv.vectors.dtype == np.float64
    kv.similarity("man", "woman")
    kv.evaluate_word_pairs(datapath("wordsim353.tsv"))
    kv.n_similarity(["man"], ["woman", "house"])
    np.testing.assert_array_equal(kv.vectors, model.embedding_)


def test_evaluate_word_pairs_swap_does_not_confuse_covariances(kv):
    original = kv.covariance("man")
    swapped = {key.upper(): kv.get_index(key) for key in kv.index_to_key}
    kv.key_to_index, saved = swapped, kv.key_to_index
    try:
        np.testing.assert_array_equal(kv.covariance("MAN"), original)
    finally:
        kv.key_to_index = saved


def test_mutations_keep_each_word_with_its_own_covariance(model, kv):
    before = {key: kv.covariance(key) for key in ("man", "woman", "house")}
    kv.add_vectors(["zzz-new", "man"], np.ones((2, DIM)), replace=False)
    assert not kv.has_covariance("zzz-new") and kv.has_covariance("man")
    kv["woman"] = np.full(DIM, 0.5)
    assert not kv.has_covariance("woman")
    counts = np.random.default_rng(1).integers(1, 1000, len(kv))
    kv.expandos["count"] = counts
    kv.sort_by_descending_frequency()
    np.testing.assert_array_equal(kv.covariance("man"), before["man"])
    np.testing.assert_array_equal(kv.covariance("house"), before["house"])
    subset = kv.vectors_for_all(["house", "man", "zzz-new", "not-a-word"])
    assert type(subset) is KeyedVectorsWithVariance and subset.index_to_key == ["house", "man", "zzz-new"]
    np.testing.assert_array_equal(subset.covariance("house"), before["house"])
    assert not subset.has_covariance("zzz-new")
    kv.index_to_key.append("zzz-resized")
    kv.key_to_index["zzz-resized"] = len(kv.index_to_key) - 1
    kv.resize_vectors()
    assert not kv.has_covariance("zzz-resized")
    np.testing.assert_array_equal(kv.covariance("man"), before["man"])
    index = kv.add_vector("zzz-single", np.zeros(DIM))
    assert kv.index_to_key[index] == "zzz-single" and not kv.has_covariance("zzz-single")
    assert kv.norms is None


def test_unit_normalize_all_maps_covariances_through_the_jacobian(kv):
    w = kv["man"].astype(np.float64)
    sigma = kv.covariance("man")
    norm = np.linalg.norm(w)
    jacobian = (np.eye(DIM) - np.outer(w, w) / norm**2) / norm
    kv.unit_normalize_all()
    np.testing.assert_allclose(np.linalg.norm(kv.vectors, axis=1), 1.0)
    np.testing.assert_allclose(kv.covariance("man"), jacobian @ sigma @ jacobian.T, rtol=1e-9, atol=1e-15)
    assert kv.covariance_store.rank[kv.covariance_row("man")] == DIM - 1


@pytest.mark.parametrize("mmap", [None, "r"])
def test_save_and_load_round_trip(kv, tmp_path, mmap):
    path = str(tmp_path / "model.kv")
    kv.save(path, sep_limit=0)
    loaded = KeyedVectorsWithVariance.load(path, mmap=mmap)
    assert type(loaded) is KeyedVectorsWithVariance
    np.testing.assert_array_equal(loaded.vectors, kv.vectors)
    np.testing.assert_array_equal(loaded.covariance_rows, kv.covariance_rows)
    assert loaded.index_to_key == kv.index_to_key
    for (name, values), (_, expected) in zip(loaded.covariance_store.per_word, kv.covariance_store.per_word):
        np.testing.assert_array_equal(values, expected, err_msg=name)
    np.testing.assert_array_equal(loaded.covariance_store._factors, kv.covariance_store._factors)
    np.testing.assert_array_equal(loaded.covariance("man"), kv.covariance("man"))
    if mmap:
        assert isinstance(loaded.vectors, np.memmap)
        assert isinstance(loaded.covariance_store._factors, np.memmap)


def test_loading_a_plain_keyedvectors_file_is_refused(model, tmp_path):
    plain = KeyedVectors(DIM)
    plain.add_vectors(list(model.words_), model.embedding_)
    path = str(tmp_path / "plain.kv")
    plain.save(path)
    with pytest.raises(TypeError, match="holds a KeyedVectors, not a KeyedVectorsWithVariance"):
        KeyedVectorsWithVariance.load(path)


def test_files_written_before_an_attribute_existed_still_load(kv, tmp_path):
    del kv.covariance_rows
    path = str(tmp_path / "old.kv")
    kv.save(path)
    loaded = KeyedVectorsWithVariance.load(path)
    assert (loaded.covariance_rows == -1).all() and not loaded.has_covariance("man")


def test_load_word2vec_format_builds_our_class_and_covariances_attach_by_word(model, kv, tmp_path):
    path = str(tmp_path / "vectors.txt")
    kv.save_word2vec_format(path)
    loaded = KeyedVectorsWithVariance.load_word2vec_format(path)
    assert type(loaded) is KeyedVectorsWithVariance and not loaded.has_covariance("man")
    loaded.sort_by_descending_frequency()
    loaded.attach_covariances(model.covariance_)
    np.testing.assert_array_equal(loaded.covariance("woman"), kv.covariance("woman"))


def test_draws_match_the_stored_covariance(kv):
    draws = kv.sample_vectors(["man", "house"], 20000, random_state=3)
    sigma = kv.covariance("man")
    sample = np.cov(draws[:, 0].T)
    standard_error = np.sqrt((np.outer(np.diag(sigma), np.diag(sigma)) + sigma**2) / 20000)
    assert (np.abs(sample - sigma) <= 5 * standard_error).all()
    np.testing.assert_allclose(draws[:, 0].mean(axis=0), kv["man"], atol=5 * np.sqrt(np.diag(sigma).max() / 20000))
    assert abs(np.corrcoef(draws[:, 0, 0], draws[:, 1, 0])[0, 1]) < 0.05


def test_whole_keyedvectors_draws_are_seeded_and_say_what_they_drop(kv):
    first = kv.draw(random_state=7, keys=["man", "woman"])
    again = kv.draw(random_state=7, keys=["man", "woman"])
    assert type(first) is KeyedVectors
    np.testing.assert_array_equal(first.vectors, again.vectors)
    assert not np.array_equal(first["man"], kv["man"])
    rare = next(key for key in kv.index_to_key if not kv.has_covariance(key))
    expected = f"1 word has no covariance, e.g. {[rare]}; pass missing='drop' or missing='keep'"
    with pytest.raises(UndefinedCovarianceError, match="^" + re.escape(expected)):
        kv.draw(keys=["man", rare])
    assert kv.draw(keys=["man", rare], missing="drop").index_to_key == ["man"]
    kept = kv.draw(keys=["man", rare], missing="keep")
    np.testing.assert_array_equal(kept[rare], kv[rare])
    assert len(list(kv.draws(20, random_state=1, keys=["man"]))) == 20


def test_a_model_saved_by_glovev_ext_0_1_is_refused_saying_how_to_convert_it(capsys):
    """tests/data/model_v0_1: ``save_model`` of glovev-ext 0.1.0, whose pickle names the flat modules of 0.1
    (``glovev_ext.covariance_store``), gone with their aliases in 0.3. Its pickle is opened only on request."""
    from glovev_ext.cli import main

    model = Path(__file__).parent / "data" / "model_v0_1"
    with pytest.raises(ValueError, match=f"^{re.escape(str(model))} was saved by glovev-ext 0.3 or earlier: its "
                                         "vectors.kv is a pickle, and opening a pickle can run any code"):
        glovev_ext.load_model(model)
    message = (rf"^{re.escape(str(model / 'vectors.kv'))} was written by glovev-ext 0\.1: it names the module "
               rf"glovev_ext\.covariance_store, which glovev-ext {re.escape(glovev_ext.__version__)} does not have; "
               r"load it with glovev-ext 0\.2 and save it again \(glovev_ext\.save_model\), or fit the model again$")
    with pytest.raises(TypeError, match=message):
        glovev_ext.load_model(model, allow_pickle=True)
    with pytest.raises(TypeError, match=message):
        KeyedVectorsWithVariance.load(str(model / "vectors.kv"))
    assert main(["info", str(model)]) == 2
    assert f"glovev upgrade {model}" in capsys.readouterr().err
