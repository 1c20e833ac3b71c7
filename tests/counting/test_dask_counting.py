"""Counting on a Dask cluster: the same vocabulary and matrix as the threads, bit for bit, a worker lost mid-count
survived."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from sklearn.base import clone

import glovev_ext
from glovev_ext._memory import file_span, mapping_of
from glovev_ext.counting.corpus import DocumentSubset

distributed = pytest.importorskip("dask.distributed")


@pytest.fixture
def client(dask_client):
    return dask_client


@pytest.fixture(scope="module")
def corpus_folder(tmp_path_factory):
    """The first 3,000 paragraphs of the embedded corpus in three files (a folder corpus, read in name order)."""
    folder = tmp_path_factory.mktemp("corpus")
    documents = list(glovev_ext.load_default_corpus(max_documents=3000))
    for k in range(3):
        (folder / f"part{k}.txt").write_text("\n".join(documents[k * 1000:(k + 1) * 1000]) + "\n", encoding="utf-8")
    return folder


def assert_same_counts(matrix, reference, vectorizer, reference_vectorizer):
    assert list(matrix.words) == list(reference.words)
    np.testing.assert_array_equal(matrix.counts, reference.counts)
    assert vectorizer.n_tokens_ == reference_vectorizer.n_tokens_
    assert vectorizer.n_documents_ == reference_vectorizer.n_documents_
    np.testing.assert_array_equal(matrix.indptr, reference.indptr)
    np.testing.assert_array_equal(matrix.indices, reference.indices)
    assert matrix.data.tobytes() == reference.data.tobytes()  # the threads' sums, in their order: the same bits


@pytest.mark.parametrize("source", ["file", "folder"])
def test_counting_on_the_cluster_equals_counting_on_threads(client, corpus_folder, private_tmpdir, source):
    corpus = (glovev_ext.load_default_corpus(max_documents=2500) if source == "file"
              else glovev_ext.LineCorpus(corpus_folder, max_documents=2800))
    # chunks of 20 kB: 27 (file) and 29 (folder) of them, in 4 runs of 8 on the 2 workers, the last one short: trees
    # of several levels, runs merged at their level and a short run's partial sums added at theirs
    threads = glovev_ext.CooccurrenceVectorizer(min_count=3, window=5, progress=False, n_jobs=1, chunk_size=20_000)
    reference = threads.fit_transform(corpus)
    dask = glovev_ext.CooccurrenceVectorizer(min_count=3, window=5, progress=False, backend="dask", client=client,
                                             chunk_size=20_000)
    matrix = dask.fit_transform(corpus)
    assert_same_counts(matrix, reference, dask, threads)
    # the matrix is mapped from the files the workers wrote, kept while it lives (the passes' workers read them)
    assert mapping_of(matrix.data) is not None and mapping_of(matrix.indices) is not None
    (folder,) = private_tmpdir.iterdir()
    assert sorted(path.name for path in folder.iterdir()) == ["data", "indices"]
    assert file_span(matrix.data) == (str(folder / "data"), 0)
    assert file_span(matrix.indices) == (str(folder / "indices"), 0)
    # transform with the fitted vocabulary (a matrix freed at once: its files go with it), and fit alone
    assert_same_counts(dask.transform(corpus), reference, dask, threads)
    assert glovev_ext.CooccurrenceVectorizer(min_count=3, backend="dask", client=client,
                                             progress=False).fit(corpus).vocabulary_ == threads.vocabulary_
    assert list(private_tmpdir.iterdir()) == [folder]
    del matrix
    gc.collect()
    assert list(private_tmpdir.iterdir()) == []  # nothing is left behind once the matrix is freed


def test_a_subset_of_documents_is_counted_as_on_threads(client, monkeypatch):
    """In runs of at most 2 chunks: 5 runs of the subset's 9 chunks, the last of one (more than the workers take at
    once)."""
    from glovev_ext.counting import _dask_counting
    monkeypatch.setattr(_dask_counting, "_MAX_RUN_CHUNKS", 2)
    corpus = glovev_ext.load_default_corpus(max_documents=2500)
    keep = np.random.default_rng(3).random(2500) < 0.5
    threads = glovev_ext.CooccurrenceVectorizer(min_count=3, progress=False, n_jobs=1, chunk_size=30_000).fit(corpus)
    reference = threads.transform(document for document, kept in zip(corpus, keep) if kept)
    assert (threads.transform(DocumentSubset(corpus, keep)) != reference).nnz == 0
    dask = glovev_ext.CooccurrenceVectorizer(min_count=3, progress=False, backend="dask", client=client,
                                             chunk_size=30_000).fit(corpus)
    assert_same_counts(dask.transform(DocumentSubset(corpus, keep)), reference, dask, threads)
    none = np.zeros(2500, dtype=bool)  # no document at all: no chunk, the empty matrix, as on threads
    empty = dask.transform(DocumentSubset(corpus, none))
    assert empty.shape == reference.shape and empty.nnz == 0 == threads.transform(DocumentSubset(corpus, none)).nnz


def test_fit_corpus_counts_the_corpus_and_its_halves_on_the_cluster(client):
    corpus = glovev_ext.load_default_corpus(max_documents=1500)
    estimator = glovev_ext.GloVeVEstimator(6, epochs=2, n_jobs=1, random_state=0)
    on_threads = glovev_ext.fit_corpus(corpus, glovev_ext.CooccurrenceVectorizer(min_count=3, n_jobs=1), estimator,
                                       progress=False)
    vectorizer = glovev_ext.CooccurrenceVectorizer(min_count=3, backend="dask", client=client)
    assert clone(vectorizer).client is client  # cloning shares the connection
    assert clone(glovev_ext.GloVeVEstimator(backend="dask", client=client)).client is client
    assert clone(vectorizer).get_params() == vectorizer.get_params()
    on_dask = glovev_ext.fit_corpus(corpus, vectorizer, estimator, progress=False)
    assert on_dask.cooccurrence.data.tobytes() == on_threads.cooccurrence.data.tobytes()
    # the halves are the same documents, counted to the same bits: the whole fit is the threads' bit for bit
    for name in ("embedding_", "context_embedding_", "bias_"):
        assert getattr(on_dask.estimator, name).tobytes() == getattr(on_threads.estimator, name).tobytes(), name
    assert (on_dask.estimator.noise_scale_.own.factors.tobytes()
            == on_threads.estimator.noise_scale_.own.factors.tobytes())
    word = int(np.flatnonzero(on_threads.estimator.covariance_defined_)[0])
    assert on_dask.estimator.covariance_[word].tobytes() == on_threads.estimator.covariance_[word].tobytes()


def test_a_worker_killed_mid_count_is_survived(client, worker_killer):
    corpus = glovev_ext.load_default_corpus()
    threads = glovev_ext.CooccurrenceVectorizer(min_count=5, progress=False, n_jobs=1, chunk_size=1_000_000)
    reference = threads.fit_transform(corpus)
    dask = glovev_ext.CooccurrenceVectorizer(min_count=5, progress=False, backend="dask", client=client,
                                             chunk_size=1_000_000)
    dask.fit(corpus)
    watcher, killed = worker_killer("run_sums")
    matrix = dask.transform(corpus)
    watcher.join(timeout=120)
    assert killed, "no worker was killed during the count"
    assert_same_counts(matrix, reference, dask, threads)


def test_the_cluster_needs_a_corpus_its_workers_can_read(client):
    with pytest.raises(TypeError, match="give a LineCorpus"):
        glovev_ext.CooccurrenceVectorizer(backend="dask", client=client).fit(["a list", "of documents"])
    with pytest.raises(ValueError, match="backend must be 'threads' or 'dask'"):
        glovev_ext.CooccurrenceVectorizer(backend="spark").fit(["a b"])
    with pytest.raises(ValueError, match="client is the Dask cluster of backend='dask'"):
        glovev_ext.CooccurrenceVectorizer(client=client).fit(["a b"])
