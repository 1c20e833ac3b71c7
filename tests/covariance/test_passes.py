"""The one covariance pass: threads or Dask, in memory or to a resumable store file; same results, complete or
absent stores."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

from glovev_ext import GloVeVEstimator
from glovev_ext.covariance import CovarianceStore
from glovev_ext.covariance.passes import cost_balanced_blocks, covariance_pass, n_blocks_for, threaded_runner
from glovev_ext.covariance.wls import WordFitter

distributed = pytest.importorskip("dask.distributed")


@pytest.fixture(scope="module")
def model(embedded_cooccurrence):
    """D = 30 (so the blocks have work), in memory on one thread: the reference for every other pass."""
    X = embedded_cooccurrence
    return X, GloVeVEstimator(n_components=30, epochs=4, random_state=0, n_jobs=1, point_estimate="trained",
                              progress=False).fit(X)


@pytest.fixture
def client(dask_client):
    return dask_client


def parameters(model):
    return (model.embedding_, model.context_embedding_, model.bias_, model.context_bias_)


def assert_same_store(store: CovarianceStore, reference: CovarianceStore, rtol=1e-12):
    for (name, values), (_, expected) in zip(store.per_word, reference.per_word):
        np.testing.assert_array_equal(values, expected, err_msg=name)
    np.testing.assert_allclose(np.asarray(store._factors), np.asarray(reference._factors), rtol=rtol, atol=0)


def test_blocks_that_return_factors_hold_at_most_16_mib_of_them():
    assert n_blocks_for(54_890) == 274 and n_blocks_for(100) == 16  # by count: balance and little work lost
    factor_bytes = 300 * 301 // 2 * 8  # a D = 300 factor in float64
    for n_words in (1, 45, 46, 2_000, 54_890):
        blocks = np.array_split(np.arange(n_words), n_blocks_for(n_words, factor_bytes))
        assert max(block.size for block in blocks) * factor_bytes <= 16 << 20
        assert len(blocks) >= min(16, n_words) and sum(block.size for block in blocks) == n_words
    assert n_blocks_for(54_890, 1275 * 8) == 274  # D = 50: the count's blocks are small enough already


def test_dask_pass_equals_the_threaded_pass(model, client, tmp_path):
    X, fitted = model
    dask_model = GloVeVEstimator(30, pretrained=parameters(fitted), point_estimate="trained", backend="dask", client=client,
                                 covariance_storage=tmp_path / "dask.cov", progress=False).fit(X)
    assert_same_store(dask_model.covariance_, fitted.covariance_)
    np.testing.assert_allclose(dask_model.optimum_distance_, fitted.optimum_distance_, rtol=1e-12)
    assert not (tmp_path / "dask.cov.partial").exists() and not (tmp_path / "dask.cov.journal").exists()


@pytest.mark.parametrize("storage", ["memory", "threads.cov"])
def test_two_threads_in_memory_or_to_a_file_equal_one_thread(model, tmp_path, storage):
    X, fitted = model
    other = GloVeVEstimator(30, pretrained=parameters(fitted), point_estimate="trained", n_jobs=2, progress=False,
                            covariance_storage=storage if storage == "memory" else tmp_path / storage).fit(X)
    assert_same_store(other.covariance_, fitted.covariance_, rtol=0)
    np.testing.assert_array_equal(other.optimum_, fitted.optimum_)


def test_a_worker_killed_mid_run_still_gives_a_complete_correct_store(model, client, tmp_path):
    X, fitted = model
    client.wait_for_workers(2, timeout=60)
    path = tmp_path / "killed.cov"
    journal = tmp_path / "killed.cov.journal"
    killed = []

    def kill_a_worker_after_the_first_block():
        deadline = time.time() + 60
        while time.time() < deadline and not list(journal.glob("block_*.npz")):
            time.sleep(0.005)
        victim = sorted(client.scheduler_info()["workers"])[0]
        try:
            client.run(os._exit, 1, workers=[victim])
        except Exception:  # the worker dies before answering
            pass
        killed.append(time.time())
        while time.time() < deadline and victim in client.scheduler_info()["workers"]:
            time.sleep(0.05)
        killed.append(victim not in client.scheduler_info()["workers"])

    watcher = threading.Thread(target=kill_a_worker_after_the_first_block, daemon=True)
    watcher.start()
    result = GloVeVEstimator(30, pretrained=parameters(fitted), point_estimate="trained", backend="dask", client=client,
                             covariance_storage=path, progress=False).fit(X)
    finished = time.time()
    watcher.join(timeout=60)
    assert killed and killed[0] < finished, "no worker was killed during the run"
    assert killed[1], "the worker told to exit is still in the cluster"
    assert_same_store(CovarianceStore.load(path), fitted.covariance_)
    assert_same_store(result.covariance_, fitted.covariance_)
    client.wait_for_workers(2, timeout=60)


class CancellingClient:
    """A real client whose first ``n`` block tasks are cancelled, as when a dying worker takes their data;
    with ``lose_broadcast`` the first cancellation also cancels the scattered context vectors and biases."""

    def __init__(self, client, n, lose_broadcast=False):
        self.client, self.n, self.lose_broadcast, self.cancelled = client, n, lose_broadcast, 0

    def __getattr__(self, name):
        return getattr(self.client, name)

    def submit(self, function, *args, **kwargs):
        future = self.client.submit(function, *args, **kwargs)
        if self.cancelled < self.n:
            self.cancelled += 1
            shared = [a for a in args if isinstance(a, distributed.Future)]
            lost = shared if self.lose_broadcast and self.cancelled == 1 else []
            self.client.cancel([future, *lost], reason="the test lost this block's data", force=True)
        return future


@pytest.mark.parametrize("lose_broadcast", [False, True])
def test_cancelled_blocks_are_rerun_with_their_data_sent_again(model, client, tmp_path, lose_broadcast):
    X, fitted = model
    cancelling = CancellingClient(client, 3, lose_broadcast)
    result = GloVeVEstimator(30, pretrained=parameters(fitted), point_estimate="trained", backend="dask", client=cancelling,
                             covariance_storage=tmp_path / "cancelled.cov", progress=False).fit(X)
    assert cancelling.cancelled == 3
    assert_same_store(result.covariance_, fitted.covariance_)


def test_a_block_cancelled_every_time_stops_the_pass_naming_it(model, client, tmp_path):
    X, fitted = model
    with pytest.raises(RuntimeError, match=r"block \d+ of the covariance pass was cancelled 4 times"):
        GloVeVEstimator(30, pretrained=parameters(fitted), point_estimate="trained", backend="dask", client=CancellingClient(client, 10**6),
                        covariance_storage=tmp_path / "never.cov", progress=False).fit(X)
    assert not (tmp_path / "never.cov").exists()


class InterruptAfter:
    """A runner that lets ``n`` blocks finish, then stops as a killed run would."""

    def __init__(self, n):
        self.n = n

    def __call__(self, tasks):
        for count, finished in enumerate(threaded_runner(1)(tasks)):
            if count == self.n:
                raise KeyboardInterrupt
            yield finished


class Counting:
    def __init__(self):
        self.blocks = 0

    def __call__(self, tasks):
        for finished in threaded_runner(1)(tasks):
            self.blocks += 1
            yield finished


def test_an_interrupted_pass_resumes_and_other_inputs_are_refused(model, tmp_path):
    X, fitted = model
    fitter = WordFitter(X, fitted.context_embedding_, fitted.context_bias_, 100.0, 0.75)
    path = tmp_path / "resumed.cov"
    arguments = dict(path=path, factor_dtype=np.float64, words=None, progress=False)
    with pytest.raises(KeyboardInterrupt):
        covariance_pass(fitter, fitted.embedding_, fitted.bias_, runner=InterruptAfter(3), **arguments)
    assert not path.exists()
    assert len(list((tmp_path / "resumed.cov.journal").glob("block_*.npz"))) == 3
    with pytest.raises(FileExistsError, match="unfinished covariance store for other inputs"):
        covariance_pass(fitter, fitted.embedding_ + 1.0, fitted.bias_, runner=Counting(), **arguments)
    counting = Counting()
    result = covariance_pass(fitter, fitted.embedding_, fitted.bias_, runner=counting, **arguments)
    n_blocks = len(cost_balanced_blocks(fitter.n_contexts(), 30, n_blocks_for(X.shape[0])))
    assert counting.blocks == n_blocks - 3
    assert_same_store(CovarianceStore.load(path), fitted.covariance_, rtol=0)
    # the blocks done before the interruption come back from the journal: every word's optimum is there
    np.testing.assert_array_equal(result.optimum, fitted.optimum_)
    np.testing.assert_array_equal(result.distance, fitted.optimum_distance_)


def test_dask_transform_equals_the_local_transform(model, client, tmp_path):
    X, fitted = model
    rows = X[np.flatnonzero(np.diff(X.indptr) > 60)[:300]]
    remote = GloVeVEstimator(30, pretrained=parameters(fitted), point_estimate="trained", backend="dask", client=client,
                             covariance_storage=tmp_path / "t.cov", progress=False).fit(X)
    np.testing.assert_array_equal(remote.transform(rows), fitted.transform(rows))
    short = X[np.flatnonzero(np.diff(X.indptr) <= 31)[:2]]
    with pytest.raises(ValueError, match="too few contexts"):
        remote.transform(short)


def test_dask_backend_needs_a_store_file(model):
    X, fitted = model
    with pytest.raises(ValueError, match="give covariance_storage a file path"):
        GloVeVEstimator(30, pretrained=parameters(fitted), point_estimate="trained", backend="dask", progress=False).fit(X)
