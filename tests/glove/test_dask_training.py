"""Training on a Dask cluster: the blocks schedule's parameters bit for bit, a worker lost mid-epoch survived."""

from __future__ import annotations

from concurrent.futures import CancelledError

import numpy as np
import pytest

import glovev_ext
from glovev_ext._file_rows import FileRows
from glovev_ext.glove import train_glove
from glovev_ext.glove._dask_schedule import DaskBlockSchedule

distributed = pytest.importorskip("dask.distributed")

FIELDS = ("center_vectors", "context_vectors", "center_biases", "context_biases", "costs")


@pytest.fixture(scope="module")
def cooccurrence():
    """The co-occurrences of 1,500 paragraphs of the embedded corpus (1,916 words)."""
    return glovev_ext.CooccurrenceVectorizer(min_count=3, progress=False, n_jobs=1).fit_transform(
        glovev_ext.load_default_corpus(max_documents=1500))


@pytest.fixture(scope="module")
def counted_on_the_cluster(dask_client):
    """The same paragraphs counted on the cluster: a matrix whose values and columns are in files the workers share."""
    return glovev_ext.CooccurrenceVectorizer(min_count=3, progress=False, backend="dask", client=dask_client
                                             ).fit_transform(glovev_ext.load_default_corpus(max_documents=1500))


@pytest.fixture(params=["in memory", "in the cluster's files"])
def source(request, cooccurrence):
    """A matrix to train on: one the client sends, one the workers read from its files."""
    matrix = cooccurrence if request.param == "in memory" else request.getfixturevalue("counted_on_the_cluster")
    assert (FileRows.spans_of(matrix) is None) == (request.param == "in memory")
    return matrix


def assert_same_bits(trained, reference):
    for name in FIELDS:
        assert np.array_equal(getattr(trained, name), getattr(reference, name)), name


def test_the_blocks_on_the_workers_are_the_threads_blocks(dask_client, source, monkeypatch, caplog):
    """Each row group's blocks, as sent (or as read by the workers from the matrix's files, the client building
    none), hold the entries of the threads' blocks, in the same order."""
    from glovev_ext.glove import _dask_schedule
    built_here, build = [], _dask_schedule._group_blocks
    monkeypatch.setattr(_dask_schedule, "_group_blocks", lambda *args: built_here.append(1) or build(*args))
    in_files = FileRows.spans_of(source) is not None
    with caplog.at_level("INFO", logger="glovev_ext.glove._dask_schedule"):
        schedule = DaskBlockSchedule(dask_client, source, 4, 100.0, 0.75)
    assert len(built_here) == (0 if in_files else 4)
    assert ("read from the matrix's files by" if in_files else "sent to") in caplog.text
    threads = glovev_ext.glove._entry_blocks.MemoryBlocks(source, 4)
    for r in range(4):
        for c, future in enumerate(schedule.entries[r]):
            local_rows, local_cols, values = future.result()
            rows, cols, reference_values = threads.read(r * 4 + c)
            assert np.array_equal(schedule.members[r][local_rows], rows)
            assert np.array_equal(schedule.members[c][local_cols], cols)
            assert np.array_equal(values, reference_values)
    # the entries stay where they were sent: each row group on its one worker
    holders = dask_client.who_has([future for blocks in schedule.entries for future in blocks])
    for r, blocks in enumerate(schedule.entries):
        assert {tuple(holders[future.key]) for future in blocks} == {(schedule.owners[r],)}


def test_training_on_the_cluster_gives_the_threads_bits(dask_client, source):
    reference = train_glove(source, 8, epochs=2, random_state=5, n_jobs=2, progress=False)
    trained = train_glove(source, 8, epochs=2, random_state=5, backend="dask", client=dask_client,
                          progress=False)
    assert_same_bits(trained, reference)
    assert trained.costs[1] < trained.costs[0]


def test_the_estimator_trains_on_the_cluster(dask_client, cooccurrence, tmp_path):
    options = dict(epochs=1, random_state=1, point_estimate="trained", progress=False)
    threads = glovev_ext.GloVeVEstimator(6, n_jobs=1, **options).fit(cooccurrence)
    dask = glovev_ext.GloVeVEstimator(6, backend="dask", client=dask_client, covariance_storage=tmp_path / "store",
                                      **options).fit(cooccurrence)
    np.testing.assert_array_equal(dask.embedding_, threads.embedding_)
    np.testing.assert_array_equal(dask.training_costs_, threads.training_costs_)
    word = int(np.flatnonzero(threads.covariance_defined_)[0])
    np.testing.assert_allclose(dask.covariance_[word], threads.covariance_[word], rtol=1e-10, atol=0)


def test_a_worker_killed_mid_training_is_survived(dask_client, source, worker_killer, caplog):
    reference = train_glove(source, 8, epochs=2, random_state=2, n_jobs=1, progress=False)
    watcher, killed = worker_killer("_run_block")
    with caplog.at_level("WARNING", logger="glovev_ext.glove._dask_schedule"):
        trained = train_glove(source, 8, epochs=2, random_state=2, backend="dask", client=dask_client,
                              progress=False)
    watcher.join(timeout=120)
    assert killed, "no worker was killed during training"
    again = "read from the matrix's files again" if FileRows.spans_of(source) else "sent again"
    assert any("entries of" in record.getMessage() and again in record.getMessage() for record in caplog.records)
    assert_same_bits(trained, reference)


def test_a_cluster_left_without_workers_for_a_moment_is_waited_on(dask_client, cooccurrence, monkeypatch):
    """Where every worker has died, training waits for the nannies to bring one back (the scheduler sees none
    for a moment), then goes on; a cluster that stays empty is an error naming the wait."""
    from glovev_ext.glove import _dask_schedule
    reference = train_glove(cooccurrence, 4, epochs=1, random_state=2, n_jobs=1, progress=False)
    seen, empty_answers, waits = dask_client.scheduler_info, [1], []

    def scheduler_info(*args, **kwargs):
        if empty_answers[0]:
            empty_answers[0] -= 1
            return {"workers": {}}
        return seen(*args, **kwargs)

    def wait_for_workers(n_workers, timeout=None):
        waits.append((n_workers, timeout))

    monkeypatch.setattr(dask_client, "scheduler_info", scheduler_info)
    monkeypatch.setattr(dask_client, "wait_for_workers", wait_for_workers)
    trained = train_glove(cooccurrence, 4, epochs=1, random_state=2, backend="dask", client=dask_client,
                          progress=False)
    assert_same_bits(trained, reference)
    assert waits == [(1, _dask_schedule._WORKER_WAIT_S)] and not empty_answers[0]

    def never_back(n_workers, timeout=None):
        raise distributed.client.WorkerStartTimeoutError(0, n_workers, timeout)

    empty_answers[0] = 10**6
    monkeypatch.setattr(dask_client, "wait_for_workers", never_back)
    with pytest.raises(RuntimeError, match="no workers to train on \\(none came back within 60 s\\)"):
        train_glove(cooccurrence, 4, epochs=1, backend="dask", client=dask_client, progress=False)


def test_an_epoch_that_keeps_losing_its_data_stops_training_naming_it(dask_client, cooccurrence, monkeypatch):
    tries = []

    def lose_the_data(self, *args):
        tries.append(1)
        raise CancelledError("a worker left with this epoch's data")

    monkeypatch.setattr(DaskBlockSchedule, "_epoch", lose_the_data)
    with pytest.raises(RuntimeError, match=r"a training epoch lost its data to dying Dask workers 4 times"):
        train_glove(cooccurrence, 4, epochs=1, backend="dask", client=dask_client, progress=False)
    assert len(tries) == 4


def test_the_cluster_runs_the_blocks_schedule_only(dask_client, cooccurrence):
    with pytest.raises(ValueError, match="backend='dask' runs schedule='blocks'"):
        train_glove(cooccurrence, 4, epochs=1, schedule="hogwild", backend="dask", client=dask_client, progress=False)
    with pytest.raises(ValueError, match="backend must be 'threads' or 'dask', got 'spark'"):
        train_glove(cooccurrence, 4, epochs=1, backend="spark", progress=False)
    with pytest.raises(ValueError, match="client is the Dask cluster of backend='dask'"):
        train_glove(cooccurrence, 4, epochs=1, client=dask_client, progress=False)
    with pytest.raises(ValueError, match="client is the Dask cluster of backend='dask'; backend is 'threads'"):
        glovev_ext.GloVeVEstimator(4, epochs=1, client=dask_client, progress=False).fit(cooccurrence)
