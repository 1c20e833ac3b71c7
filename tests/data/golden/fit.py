"""Fit the saved models of the golden results (models/), once: the golden test reads them and trains nothing.

Run from the repository root::

    python tests/data/golden/fit.py

It writes, under tests/data/golden/models/ (D = 8, 8 epochs, ``random_state=0``, one thread):

- ``posterior``: the default recipe (``point_estimate="posterior"``, noise calibrated on random
  halves) on the first 1,500 paragraphs of the embedded corpus, its 1,000 most frequent words;
- ``trained``: the paper's recipe (``point_estimate="trained"``) on the same paragraphs, every word
  seen 5 times (1,746 words; ``*`` and ``chapter`` have too few contexts for a covariance);
- ``first``, ``second``, ``third``: :func:`glovev_ext.fit_subcorpora` of ``posterior`` on its
  paragraphs 1-500, 501-1,000 and 1,001-1,500 (posteriors under the pooled fit's prior, saved with each);
- ``relational``: the paper's recipe on the whole embedded corpus, saved with only the words of the
  bundled SemEval-2012 subcategory 1a (the 1,500 paragraphs hold too few of them to score it); the
  scores of the restricted model are checked here to equal the whole model's.

Training is not bit-reproducible across machines, so running this again makes other models: record
the golden results again afterwards (record.py), and only before a change they are meant to guard.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from gensim.models import KeyedVectors
from sklearn.base import clone
from threadpoolctl import threadpool_limits

import glovev_ext
from glovev_ext.stats.statistics.semeval import SAMPLE_PATH

MODELS = Path(__file__).resolve().parent / "models"
N_DOCUMENTS = 1500
SUBCORPORA = {"first": (0, 500), "second": (500, 1000), "third": (1000, 1500)}
VECTORIZER = glovev_ext.CooccurrenceVectorizer(n_jobs=1)
ESTIMATOR = glovev_ext.GloVeVEstimator(n_components=8, epochs=8, random_state=0, n_jobs=1)


def restricted(kv: glovev_ext.KeyedVectorsWithVariance, words: list[str]) -> glovev_ext.KeyedVectorsWithVariance:
    """``kv`` with only ``words`` (those it holds), each with its own vector and covariance."""
    kept = [word for word in words if word in kv.key_to_index]
    vectors = KeyedVectors(kv.vector_size, 0, dtype=kv.vectors.dtype)
    vectors.add_vectors(kept, np.vstack([kv.get_vector(word) for word in kept]))
    rows = np.array([kv.get_index(word) for word in kept])
    return glovev_ext.KeyedVectorsWithVariance.from_keyed_vectors(
        vectors, kv.aligned_covariance_store().take(rows, words=kept))


def main() -> None:
    documents = list(glovev_ext.load_default_corpus(max_documents=N_DOCUMENTS))
    source = f"the first {N_DOCUMENTS:,} paragraphs of the embedded corpus"
    posterior = glovev_ext.fit_corpus(documents, clone(VECTORIZER).set_params(max_vocab_size=1000), ESTIMATOR,
                                      source=source, progress=False)
    glovev_ext.save_model(MODELS / "posterior", posterior.keyed_vectors, posterior.metadata, overwrite=True)
    paper = clone(ESTIMATOR).set_params(point_estimate="trained")
    trained = glovev_ext.fit_corpus(documents, VECTORIZER, paper, source=source, progress=False)
    glovev_ext.save_model(MODELS / "trained", trained.keyed_vectors, trained.metadata, overwrite=True)
    parts = glovev_ext.fit_subcorpora(posterior, {name: documents[start:stop]
                                                  for name, (start, stop) in SUBCORPORA.items()})
    for name, kv in parts.items():
        start, stop = SUBCORPORA[name]
        metadata = {"glovev_ext_version": glovev_ext.__version__, "pooled": "posterior",
                    "source": f"paragraphs {start + 1:,} to {stop:,} of the embedded corpus, fitted given the "
                              "pooled contexts of models/posterior (glovev_ext.fit_subcorpora)"}
        glovev_ext.save_model(MODELS / name, kv, metadata, overwrite=True)
    whole = glovev_ext.fit_corpus(glovev_ext.load_default_corpus(), VECTORIZER, paper, progress=False)
    relations = glovev_ext.read_semeval2012(SAMPLE_PATH, ["1a"])
    words = list(dict.fromkeys(word for pair in (*relations["1a"].pairs, *relations["1a"].paradigms)
                               for word in pair))
    small = restricted(whole.keyed_vectors, words)
    options = {"n_draws": 200, "random_state": 0, "missing": "drop"}
    full = whole.keyed_vectors.evaluate_relational_similarity_with_uncertainty(relations, **options)
    kept = small.evaluate_relational_similarity_with_uncertainty(relations, **options)
    if not full.summary_frame().equals(kept.summary_frame()):
        raise AssertionError("the restricted model scores SemEval 1a otherwise than the whole model")
    metadata = {**whole.metadata, "restricted_to": "the words of SemEval-2012 Task 2 subcategory 1a (bundled sample)"}
    glovev_ext.save_model(MODELS / "relational", small, metadata, overwrite=True)


if __name__ == "__main__":
    with threadpool_limits(limits=1, user_api="blas"):
        main()
