"""fit_corpus: the main job once, equal to its stages run by hand, with the one metadata schema."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pytest

import glovev_ext
from glovev_ext.pipeline import fit_metadata

SMALL = glovev_ext.GloVeVEstimator(n_components=4, epochs=1, n_jobs=1)  # fit_corpus fits clones: it stays unfitted


def test_fit_corpus_equals_its_stages_and_records_how_it_was_fitted(embedded_paragraphs):
    fitted = glovev_ext.fit_corpus(embedded_paragraphs,
                                   glovev_ext.CooccurrenceVectorizer(window=4, min_count=3, n_jobs=1),
                                   glovev_ext.GloVeVEstimator(n_components=5, epochs=2, random_state=1, n_jobs=1),
                                   progress=False, source="400 paragraphs")
    vectorizer = glovev_ext.CooccurrenceVectorizer(window=4, min_count=3, n_jobs=1, progress=False)
    X = vectorizer.fit_transform(embedded_paragraphs)
    # the noise scale's halves: each paragraph in one, from a child of the seed's stream
    side = np.random.default_rng(1).spawn(1)[0].random(len(embedded_paragraphs)) < 0.5
    halves = [vectorizer.transform([d for d, s in zip(embedded_paragraphs, side) if s == half])
              for half in (True, False)]
    np.testing.assert_allclose((halves[0] + halves[1]).toarray(), X.toarray(), rtol=1e-12)  # they add up to X
    model = glovev_ext.GloVeVEstimator(5, epochs=2, random_state=1, n_jobs=1, progress=False).fit(X, halves=halves)
    assert not model.noise_scale_.is_identity
    assert (fitted.cooccurrence != X).nnz == 0
    np.testing.assert_array_equal(fitted.keyed_vectors.vectors, model.embedding_)
    word = X.words[int(np.flatnonzero(model.covariance_defined_)[0])]
    np.testing.assert_array_equal(fitted.keyed_vectors.covariance(word), model.covariance_[word])
    assert fitted.keyed_vectors.get_vecattr(word, "count") == vectorizer.word_counts_[list(X.words).index(word)]
    metadata = fitted.metadata
    assert json.loads(json.dumps(metadata)) == metadata
    assert metadata["glovev_ext_version"] == glovev_ext.__version__ and metadata["source"] == "400 paragraphs"
    assert metadata["counting"] == {"window": 4, "min_count": 3, "max_vocab_size": None, "lowercase": True}
    assert metadata["glove"] == {"n_components": 5, "epochs": 2, "learning_rate": 0.05, "x_max": 100.0,
                                 "alpha": 0.75, "random_state": 1, "schedule": "blocks", "covariance_dtype": "float64",
                                 "covariance_approximation": None,
                                 "conditioning": "exact", "point_estimate": "posterior", "n_sweeps": 1,
                                 "prior_strength": 1.0, "noise_scale": model.noise_scale_.to_dict()}
    assert metadata["corpus_sha256"] is None  # a list of paragraphs in memory
    assert metadata["counts"] == {"n_documents": 400, "n_tokens": vectorizer.n_tokens_, "n_words": X.shape[0],
                                  "n_nonzeros": X.nnz, "n_with_covariance": int(model.covariance_defined_.sum()),
                                  "n_singular": int(((model.n_contexts_ > 5) & ~model.covariance_defined_).sum()),
                                  "n_pseudo_inverse": int(model.pseudo_inverse_.sum())}
    assert set(metadata["seconds"]) == {"count", "train", "covariances"} == set(fitted.seconds)


def test_a_line_corpus_names_its_file(tmp_path, embedded_paragraphs):
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(embedded_paragraphs) + "\n", encoding="utf-8")
    fitted = glovev_ext.fit_corpus(glovev_ext.LineCorpus(path), estimator=SMALL, progress=False)
    assert fitted.metadata["source"] == str(path)
    assert fitted.metadata["corpus_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_pretrained_parameters_are_recorded_as_such(small_model, embedded_cooccurrence):
    parameters = (small_model.embedding_, small_model.context_embedding_, small_model.bias_,
                  small_model.context_bias_)
    model = glovev_ext.GloVeVEstimator(8, pretrained=parameters, n_jobs=1, progress=False).fit(embedded_cooccurrence)
    metadata = fit_metadata(source="C tool", estimator=model, vectorizer=None, seconds={"read": 1.0})
    assert metadata["counting"] is None and metadata["glove"]["epochs"] is None
    assert metadata["glove"]["schedule"] is None and metadata["corpus_sha256"] is None
    assert metadata["counts"]["n_nonzeros"] == embedded_cooccurrence.nnz and metadata["counts"]["n_tokens"] is None


class Unread:
    """A corpus that fails the test if anyone reads it."""

    def __iter__(self):
        raise AssertionError("the corpus was read before the options were checked")


@pytest.mark.parametrize("part, option, value, message", [
    ("estimator", "n_components", 0, "n_components must be >= 1"),
    ("estimator", "epochs", 0, "epochs must be >= 1"),
    ("estimator", "learning_rate", -1.0, "learning_rate must be"),
    ("estimator", "alpha", float("nan"), "alpha must be a finite number"),
    ("estimator", "x_max", 0.0, "x_max must be"),
    ("vectorizer", "window", 0, "window must be >= 1"),
    ("vectorizer", "min_count", 0, "min_count must be >= 1"),
    ("estimator", "conditioning", "pinv", "conditioning"),
    ("estimator", "point_estimate", "best", "point_estimate"),
    ("estimator", "covariance_dtype", "float16", "covariance_dtype must be"),
    ("estimator", "n_jobs", 0, "n_jobs"),
    ("vectorizer", "n_jobs", 0, "n_jobs"),
])
def test_fit_corpus_checks_every_option_before_reading_the_corpus(part, option, value, message):
    cls = glovev_ext.GloVeVEstimator if part == "estimator" else glovev_ext.CooccurrenceVectorizer
    with pytest.raises(ValueError, match=message):
        glovev_ext.fit_corpus(Unread(), progress=False, **{part: cls(**{option: value})})
    with pytest.raises(TypeError, match=f"{part} must be a {cls.__name__}, got dict"):
        glovev_ext.fit_corpus(Unread(), **{part: {option: value}})


def test_fit_corpus_saves_to_output_what_it_returns(tmp_path, embedded_paragraphs):
    fitted = glovev_ext.fit_corpus(embedded_paragraphs, estimator=SMALL, progress=False, output=tmp_path / "model")
    assert fitted.output == tmp_path / "model"
    kv, metadata = glovev_ext.load_model(fitted.output)
    np.testing.assert_array_equal(kv.vectors, fitted.keyed_vectors.vectors)
    assert metadata == json.loads(json.dumps(fitted.metadata))
    assert metadata["glove"]["random_state"] == 0  # the estimator's default seed: a default fit is reproducible
    again = glovev_ext.fit_corpus(embedded_paragraphs, estimator=SMALL, progress=False)
    assert again.output is None
    np.testing.assert_array_equal(again.keyed_vectors.vectors, fitted.keyed_vectors.vectors)


def test_fit_corpus_fits_clones_and_leaves_the_objects_it_was_given_as_they_were(embedded_paragraphs):
    generator = np.random.default_rng(7)
    vectorizer = glovev_ext.CooccurrenceVectorizer(min_count=3, n_jobs=1)
    estimator = glovev_ext.GloVeVEstimator(n_components=4, epochs=1, random_state=generator, n_jobs=1)
    before = (vectorizer.get_params(), estimator.get_params(), generator.bit_generator.state)
    fitted = glovev_ext.fit_corpus(embedded_paragraphs, vectorizer, estimator, progress=False)
    assert (vectorizer.get_params(), estimator.get_params(), generator.bit_generator.state) == before
    assert vectorizer.progress and estimator.progress  # progress=False went to the clones only
    assert not hasattr(vectorizer, "vocabulary_") and not hasattr(estimator, "embedding_")
    assert fitted.vectorizer is not vectorizer and fitted.estimator is not estimator
    assert fitted.vectorizer.min_count == 3 and fitted.estimator.n_components == 4 and not fitted.estimator.progress
    # the seed's stream as it was: a second fit with the same objects is the same fit
    again = glovev_ext.fit_corpus(embedded_paragraphs, vectorizer, estimator, progress=False)
    np.testing.assert_array_equal(again.keyed_vectors.vectors, fitted.keyed_vectors.vectors)


def test_the_old_keywords_warn_and_give_the_same_fit(embedded_paragraphs):
    with pytest.warns(DeprecationWarning, match=re.escape(
            "fit_corpus(n_components=, epochs=, min_count=, n_jobs=) is deprecated and will be removed in "
            "glovev-ext 0.4; use fit_corpus(..., vectorizer=CooccurrenceVectorizer(min_count=3, n_jobs=1), "
            "estimator=GloVeVEstimator(n_components=4, epochs=1, n_jobs=1))")) as caught:
        old = glovev_ext.fit_corpus(embedded_paragraphs, n_components=4, epochs=1, min_count=3, n_jobs=1,
                                    progress=False)
    assert len(caught) == 1 and caught[0].filename == __file__
    new = glovev_ext.fit_corpus(embedded_paragraphs, glovev_ext.CooccurrenceVectorizer(min_count=3, n_jobs=1),
                                glovev_ext.GloVeVEstimator(n_components=4, epochs=1, n_jobs=1), progress=False)
    np.testing.assert_array_equal(old.keyed_vectors.vectors, new.keyed_vectors.vectors)
    word = old.keyed_vectors.index_to_key[0]
    np.testing.assert_array_equal(old.keyed_vectors.covariance(word), new.keyed_vectors.covariance(word))
    assert old.metadata["glove"] == new.metadata["glove"] and old.metadata["counting"] == new.metadata["counting"]
    assert old.estimator.noise_scale_.to_dict() == new.estimator.noise_scale_.to_dict()
    with pytest.raises(TypeError, match="got estimator= together with epochs= of the old spelling"):
        glovev_ext.fit_corpus(Unread(), estimator=SMALL, epochs=3)
