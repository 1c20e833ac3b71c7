"""Shared fixtures: slices of real text that ship with the package or with gensim, and the fitted models
every stage's tests reuse (each fitted once per session, on one thread, so it is reproducible).

BLAS runs on one thread throughout: the tests' linear algebra is on small matrices, where
multithreaded BLAS costs far more than it gives.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time

import numpy as np
import pytest
from gensim.test.utils import datapath
from threadpoolctl import threadpool_limits

import glovev_ext

# The files that take longest, longest first (seconds of their tests under pytest-xdist, `--durations=0`, summed
# per file: 349, 306, 122, 109, 108, 91, 90, 70). They are collected first and, with --no-loadscope-reorder
# (pyproject.toml), sent out in this order, so that the two processes start them early and none runs alone at the end.
LONGEST_FILES = ("tests/test_readme.py", "tests/stats/test_coverage.py", "tests/covariance/test_noise_scale.py",
                 "tests/app/test_cli.py", "tests/test_tutorials.py", "tests/covariance/test_dask_posterior.py",
                 "tests/stats/test_shared_prior.py", "tests/app/test_cli_trust.py")


def pytest_collection_modifyitems(session, config, items) -> None:
    """Move the tests of :data:`LONGEST_FILES` to the front, each file's tests and the rest keeping their order."""
    def rank(item) -> int:
        path = item.path.as_posix()
        return next((k for k, name in enumerate(LONGEST_FILES) if path.endswith(name)), len(LONGEST_FILES))

    items.sort(key=rank)


@pytest.fixture(scope="session", autouse=True)
def one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


@pytest.fixture(scope="session")
def embedded_paragraphs() -> list[str]:
    """The first 400 paragraphs of the embedded corpus (about 30k tokens)."""
    return list(glovev_ext.load_default_corpus(max_documents=400))


@pytest.fixture(scope="session")
def lee_documents() -> list[str]:
    """gensim's bundled Lee background news corpus, one raw document per line."""
    with open(datapath("lee_background.cor"), encoding="utf-8") as stream:
        return [line.rstrip("\n") for line in stream]


@pytest.fixture(scope="session")
def small_cooccurrence() -> glovev_ext.CooccurrenceMatrix:
    """Co-occurrences of the first 1,500 paragraphs of the embedded corpus (min_count 5)."""
    return glovev_ext.CooccurrenceVectorizer(min_count=5, progress=False).fit_transform(
        glovev_ext.load_default_corpus(max_documents=1500))


@pytest.fixture(scope="session")
def embedded_counts() -> tuple[glovev_ext.CooccurrenceVectorizer, glovev_ext.CooccurrenceMatrix]:
    """The first 6,000 paragraphs of the embedded corpus counted (min_count 5): the vectorizer and the matrix."""
    vectorizer = glovev_ext.CooccurrenceVectorizer(min_count=5, progress=False)
    return vectorizer, vectorizer.fit_transform(glovev_ext.load_default_corpus(max_documents=6000))


@pytest.fixture(scope="session")
def embedded_vectorizer(embedded_counts) -> glovev_ext.CooccurrenceVectorizer:
    return embedded_counts[0]


@pytest.fixture(scope="session")
def embedded_cooccurrence(embedded_counts) -> glovev_ext.CooccurrenceMatrix:
    return embedded_counts[1]


@pytest.fixture(scope="session")
def small_model(embedded_cooccurrence) -> glovev_ext.GloVeVEstimator:
    """D = 8, 8 epochs on ``embedded_cooccurrence``: covariances, the container, adapters, the command line.

    The paper's recipe (``point_estimate="trained"``): GloVe-V's own formulas, and words without a
    covariance; the default posterior has its own tests (tests/covariance/test_prior.py).
    """
    return glovev_ext.GloVeVEstimator(n_components=8, epochs=8, random_state=0, n_jobs=1, point_estimate="trained",
                                      progress=False).fit(embedded_cooccurrence)


@pytest.fixture(scope="session")
def corpus_cooccurrence() -> glovev_ext.CooccurrenceMatrix:
    """Co-occurrences of the whole embedded corpus (2.6M tokens, min_count 5)."""
    return glovev_ext.CooccurrenceVectorizer(min_count=5, progress=False).fit_transform(
        glovev_ext.load_default_corpus())


@pytest.fixture(scope="session")
def stats_kv(corpus_cooccurrence) -> glovev_ext.KeyedVectorsWithVariance:
    """D = 10, 12 epochs on the whole embedded corpus: the statistics' tests (never mutated; the paper's recipe, so
    that some words have no covariance)."""
    model = glovev_ext.GloVeVEstimator(n_components=10, epochs=12, random_state=0, n_jobs=1,
                                       point_estimate="trained", progress=False).fit(corpus_cooccurrence)
    return glovev_ext.KeyedVectorsWithVariance.from_estimator(model)


@pytest.fixture(scope="session")
def dask_client():
    """A local Dask cluster of two single-threaded worker processes, shared by the tests of the Dask backends."""
    distributed = pytest.importorskip("dask.distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with distributed.Client(cluster) as active:
        yield active
    cluster.close()


@pytest.fixture
def worker_killer(dask_client):
    """``start(prefix)``: a thread that kills (``os._exit``) the first worker of ``dask_client`` found holding the
    result of a task whose key starts with ``prefix``; ``start`` returns the thread and the list it appends the
    victim's address to. The test joins the thread and waits for the cluster to have its workers again."""
    dask_client.wait_for_workers(2, timeout=60)

    def start(prefix: str) -> tuple[threading.Thread, list]:
        killed: list = []

        def kill_a_holder() -> None:
            deadline = time.time() + 120
            while time.time() < deadline:
                holders = [workers for key, workers in dask_client.who_has().items()
                           if str(key).startswith(prefix) and workers]
                if holders:
                    victim = holders[0][0]
                    try:
                        dask_client.run(os._exit, 1, workers=[victim])
                    except Exception:  # the worker dies before answering
                        pass
                    killed.append(victim)
                    return
                time.sleep(0.01)

        watcher = threading.Thread(target=kill_a_holder, daemon=True)
        watcher.start()
        return watcher, killed

    yield start
    dask_client.wait_for_workers(2, timeout=60)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261125)


@pytest.fixture
def private_tmpdir(tmp_path, monkeypatch):
    """TMPDIR for this test alone (``tempfile``'s folder), so that what the code leaves there can be listed."""
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.fixture(scope="session")
def resident_pages_of():
    """``resident_pages_of(array)``: pages of ``array`` resident in this process, from /proc/self/smaps (the
    mapping holding its first byte)."""
    return _resident_pages_of


def _resident_pages_of(array: np.ndarray) -> int:
    address = array.__array_interface__["data"][0]
    with open("/proc/self/smaps", encoding="ascii") as smaps:
        lines = smaps.read().splitlines()
    for k, line in enumerate(lines):
        fields = line.split()
        if "-" in fields[0] and not fields[0].endswith(":"):
            start, end = (int(part, 16) for part in fields[0].split("-"))
            if start <= address < end:
                rss = next(item for item in lines[k + 1:] if item.startswith("Rss:"))
                return int(rss.split()[1]) // 4
    raise AssertionError("no mapping holds the array")
