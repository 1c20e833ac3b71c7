"""fit_corpus: the main job once, equal to its stages run by hand, with the one metadata schema."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

import glovev_ext


def test_fit_corpus_equals_its_stages_and_records_how_it_was_fitted(embedded_paragraphs):
    fitted = glovev_ext.fit_corpus(embedded_paragraphs, n_components=5, epochs=2, min_count=3, window=4,
                                   random_state=1, n_jobs=1, progress=False, source="400 paragraphs")
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
    fitted = glovev_ext.fit_corpus(glovev_ext.LineCorpus(path), n_components=4, epochs=1, n_jobs=1, progress=False)
    assert fitted.metadata["source"] == str(path)
    assert fitted.metadata["corpus_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_pretrained_parameters_are_recorded_as_such(small_model, embedded_cooccurrence):
    parameters = (small_model.embedding_, small_model.context_embedding_, small_model.bias_,
                  small_model.context_bias_)
    model = glovev_ext.GloVeVEstimator(8, pretrained=parameters, n_jobs=1, progress=False).fit(embedded_cooccurrence)
    metadata = glovev_ext.fit_metadata(source="C tool", estimator=model, vectorizer=None, seconds={"read": 1.0})
    assert metadata["counting"] is None and metadata["glove"]["epochs"] is None
    assert metadata["glove"]["schedule"] is None and metadata["corpus_sha256"] is None
    assert metadata["counts"]["n_nonzeros"] == embedded_cooccurrence.nnz and metadata["counts"]["n_tokens"] is None


class Unread:
    """A corpus that fails the test if anyone reads it."""

    def __iter__(self):
        raise AssertionError("the corpus was read before the options were checked")


@pytest.mark.parametrize("option, value, message", [
    ("n_components", 0, "n_components must be >= 1"),
    ("epochs", 0, "epochs must be >= 1"),
    ("learning_rate", -1.0, "learning_rate must be"),
    ("alpha", float("nan"), "alpha must be a finite number"),
    ("x_max", 0.0, "x_max must be"),
    ("window", 0, "window must be >= 1"),
    ("min_count", 0, "min_count must be >= 1"),
    ("conditioning", "pinv", "conditioning"),
    ("point_estimate", "best", "point_estimate"),
    ("covariance_dtype", "float16", "covariance_dtype must be"),
    ("n_jobs", 0, "n_jobs"),
])
def test_fit_corpus_checks_every_option_before_reading_the_corpus(option, value, message):
    with pytest.raises(ValueError, match=message):
        glovev_ext.fit_corpus(Unread(), progress=False, **{option: value})


def test_fit_corpus_saves_to_output_what_it_returns(tmp_path, embedded_paragraphs):
    fitted = glovev_ext.fit_corpus(embedded_paragraphs, n_components=4, epochs=1, n_jobs=1, progress=False,
                                   output=tmp_path / "model")
    assert fitted.output == tmp_path / "model"
    kv, metadata = glovev_ext.load_model(fitted.output)
    np.testing.assert_array_equal(kv.vectors, fitted.keyed_vectors.vectors)
    assert metadata == json.loads(json.dumps(fitted.metadata))
    assert glovev_ext.fit_corpus(embedded_paragraphs, n_components=4, epochs=1, n_jobs=1, progress=False).output is None
