"""The passes over rows on a Dask cluster: the default recipe (point_estimate="posterior") and the alternating sweeps give
the threads' bits, a worker lost mid-pass is survived, and a block lost again and again stops the pass naming it."""

from __future__ import annotations

from concurrent.futures import Future

import numpy as np
import pytest

import glovev_ext
from glovev_ext.covariance._row_blocks import RowBlockMap
from glovev_ext.covariance.prior import _own_sigma2_block
from glovev_ext.covariance.refit import alternating_sweeps
from glovev_ext.covariance.wls import WordFitter
from glovev_ext.glove import GloVeParameters

distributed = pytest.importorskip("dask.distributed")

DIM = 8


@pytest.fixture(scope="module")
def trained(small_model) -> GloVeParameters:
    return GloVeParameters(small_model.embedding_, small_model.context_embedding_, small_model.bias_,
                           small_model.context_bias_, costs=np.empty(0))


@pytest.fixture(scope="module")
def on_threads(trained, embedded_cooccurrence, halves) -> glovev_ext.GloVeVEstimator:
    return glovev_ext.GloVeVEstimator(DIM, pretrained=trained, n_jobs=2, progress=False).fit(embedded_cooccurrence,
                                                                                           halves=halves)


def assert_same_fit(fitted, reference):
    """Every number the posterior recipe gives, bit for bit."""
    for name in ("embedding_", "context_embedding_", "sigma2_", "prior_share_", "optimum_", "condition_number_"):
        np.testing.assert_array_equal(getattr(fitted, name), getattr(reference, name), err_msg=name)
    np.testing.assert_array_equal(fitted.prior_.mean, reference.prior_.mean)
    np.testing.assert_array_equal(fitted.prior_.covariance, reference.prior_.covariance)
    np.testing.assert_array_equal(fitted.noise_scale_.own.factors, reference.noise_scale_.own.factors)
    np.testing.assert_array_equal(fitted.noise_scale_.pooled.factors, reference.noise_scale_.pooled.factors)
    np.testing.assert_array_equal(fitted.covariance_defined_, reference.covariance_defined_)
    for word in np.flatnonzero(reference.covariance_defined_):
        np.testing.assert_array_equal(fitted.covariance_[word], reference.covariance_[word])


def test_the_posterior_recipe_on_the_cluster_gives_the_threads_bits(dask_client, trained, embedded_cooccurrence,
                                                                     halves, on_threads):
    """The prior's pass, both halves' comparisons, the sweep and the posteriors, each on the workers."""
    assert on_threads.n_sweeps_ == 1 and not on_threads.noise_scale_.is_identity
    on_dask = glovev_ext.GloVeVEstimator(DIM, pretrained=trained, backend="dask", client=dask_client,
                                         progress=False).fit(embedded_cooccurrence, halves=halves)
    assert_same_fit(on_dask, on_threads)


def test_a_worker_killed_mid_posterior_is_survived(dask_client, trained, embedded_cooccurrence, halves, on_threads,
                                                   worker_killer):
    watcher, killed = worker_killer("_run_block")
    on_dask = glovev_ext.GloVeVEstimator(DIM, pretrained=trained, backend="dask", client=dask_client,
                                         progress=False).fit(embedded_cooccurrence, halves=halves)
    watcher.join(timeout=120)
    assert killed, "no worker was killed during the posterior's passes"
    assert_same_fit(on_dask, on_threads)


def test_the_alternating_sweeps_on_the_cluster_give_the_threads_bits(dask_client, trained, embedded_cooccurrence):
    options = (embedded_cooccurrence, trained, 1, 100.0, 0.75, "exact", 2)
    on_threads = alternating_sweeps(*options)
    on_dask = alternating_sweeps(*options, client=dask_client)
    for name in ("center_vectors", "context_vectors"):
        assert not np.array_equal(getattr(on_threads, name), getattr(trained, name))  # the sweep moved them
        np.testing.assert_array_equal(getattr(on_dask, name), getattr(on_threads, name), err_msg=name)


def test_rows_counted_on_the_cluster_are_read_by_the_workers_from_the_matrixs_files(dask_client, monkeypatch):
    """A matrix counted on Dask lives in files the workers share: a task carries where its block's rows are in them,
    consecutive or not, never the rows, and the results are the threads'."""
    from glovev_ext._file_rows import FileRows
    from glovev_ext.covariance import _row_blocks
    matrix = glovev_ext.CooccurrenceVectorizer(min_count=3, progress=False, backend="dask", client=dask_client
                                               ).fit_transform(glovev_ext.load_default_corpus(max_documents=1500))
    assert FileRows.spans_of(matrix) is not None
    rng = np.random.default_rng(0)
    fitter = WordFitter(matrix, rng.normal(size=(matrix.shape[0], 4)), rng.normal(size=matrix.shape[0]), 100.0, 0.75)
    one_by_one = [fitter.fit_row(matrix.indices[a:b], matrix.data[a:b], None, None).sigma2
                  for a, b in zip(matrix.indptr[:-1], matrix.indptr[1:])]
    travelled = []
    monkeypatch.setattr(_row_blocks, "_block_rows", lambda matrix, block: travelled.append(block.size) or
                        matrix[block])
    blocks = np.array_split(np.arange(matrix.shape[0]), 5)
    with RowBlockMap(2, dask_client) as blocks_map:
        results = list(blocks_map.map(_own_sigma2_block, fitter, blocks))
    np.testing.assert_array_equal(np.concatenate(results), one_by_one)
    assert travelled == []
    scattered = [np.arange(0, 40, 2), np.arange(39, 0, -2)]
    with RowBlockMap(2, dask_client) as blocks_map:
        results = list(blocks_map.map(_own_sigma2_block, fitter, scattered))
    np.testing.assert_array_equal(np.concatenate(results), np.asarray(one_by_one)[np.concatenate(scattered)])
    assert travelled == []


def test_blocks_come_back_in_order_and_a_block_lost_every_time_stops_the_pass(dask_client, embedded_cooccurrence,
                                                                            small_model, monkeypatch):
    fitter = WordFitter(embedded_cooccurrence, small_model.context_embedding_,
                                                  small_model.context_bias_, 100.0, 0.75)
    n_words = embedded_cooccurrence.shape[0]
    blocks = np.array_split(np.arange(n_words), 7)
    matrix = embedded_cooccurrence
    one_by_one = [fitter.fit_row(matrix.indices[a:b], matrix.data[a:b], None, None).sigma2
                  for a, b in zip(matrix.indptr[:-1], matrix.indptr[1:])]
    for blocks_map in (RowBlockMap(2), RowBlockMap(2, dask_client)):
        with blocks_map:
            results = list(blocks_map.map(_own_sigma2_block, fitter, blocks))
        assert [len(result) for result in results] == [len(block) for block in blocks]
        np.testing.assert_array_equal(np.concatenate(results), one_by_one)

    tries = []

    def lost_submitter(self, function, fitter, shared):
        def submit(block, arguments):
            tries.append(int(block[0]))
            future = Future()
            future.cancel()
            return future
        return submit

    monkeypatch.setattr(RowBlockMap, "_submitter", lost_submitter)
    lost = f"a block of {blocks[0].size} rows was lost 4 times"
    with RowBlockMap(1, dask_client) as blocks_map, pytest.raises(RuntimeError, match=lost):
        list(blocks_map.map(_own_sigma2_block, fitter, blocks))
    assert tries.count(0) == 4  # the first block, sent 4 times; the others waited behind it
