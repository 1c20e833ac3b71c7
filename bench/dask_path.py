"""The whole path on a Dask cluster against threads (issue 26, item 3): time and memory per stage, same results.

Usage: python bench/dask_path.py [--corpus embedded|gutenberg_us_10m|gutenberg_us_31m] [--workers 1 2 4]
                                 [--memory-limit 2GB] [--dim 50] [--epochs 2] [--window 8] [--min-count 5]
                                 [--stages count train covariances posterior] [--cluster-count]

Runs each stage on threads (every core; the reference) and then, for each ``--workers``, on a
``LocalCluster`` of that many single-threaded worker processes, each limited to
``--memory-limit``: counting (``CooccurrenceVectorizer(backend="dask")``: the vocabulary and
the co-occurrence passes), training (``train_glove(backend="dask")``, the blocks schedule, ``--dim``
and ``--epochs``) and the covariance pass of the paper's recipe (``GloVeVEstimator(
point_estimate="trained", pretrained=..., backend="dask")``, to a store file in TMPDIR), and the
default recipe's passes (``GloVeVEstimator(pretrained=..., backend="dask")`` given two random halves
of the documents, counted on threads: the prior's pass, the halves' comparisons, one regularised
sweep and the posteriors). Training and the passes on the cluster start from the threads' matrix
and parameters, so each stage is compared on the same input; with ``--cluster-count`` they start
instead from the matrix that cluster counted (and its halves, counted there before the posterior
stage, untimed), whose files its workers read for themselves, as a user's whole path on Dask does
(the parameters stay the threads'). Per stage and run it prints the seconds, the largest worker's peak
resident memory (each worker's high-water mark, reset before the stage), and the difference from
the threads: the matrix's largest relative difference (the sums run in another order), the
trained parameters' largest absolute difference (0: the same bits), the covariances' largest
relative difference over 500 words. For training it prints what the workers hold for the
entries, in all and per nonzero (as training logs it). The shared corpora fall back to the embedded one when ../shared/data is
absent. On a machine of 2 cores, more than 2 workers share them.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import tempfile
import time

import _peaks
import cloudpickle
import numpy as np
from _data import corpus
from dask.distributed import Client, LocalCluster

import glovev_ext
from glovev_ext.counting.corpus import DocumentSubset
from glovev_ext.glove import GloVeParameters, train_glove

cloudpickle.register_pickle_by_value(_peaks)  # the workers cannot import the bench's modules


def matrix_difference(matrix, reference) -> float:
    if list(matrix.words) != list(reference.words) or not np.array_equal(matrix.counts, reference.counts):
        return np.inf
    if not (np.array_equal(matrix.indptr, reference.indptr) and np.array_equal(matrix.indices, reference.indices)):
        return np.inf
    return float(np.max(np.abs(np.asarray(matrix.data) - reference.data) / np.abs(reference.data)))


def parameter_difference(trained: GloVeParameters, reference: GloVeParameters) -> float:
    return max(float(np.max(np.abs(getattr(trained, name) - getattr(reference, name))))
               for name in ("center_vectors", "context_vectors", "center_biases", "context_biases"))


def covariance_difference(model, reference, words: np.ndarray) -> float:
    return max(float(np.max(np.abs(model.covariance_[w] - reference.covariance_[w]) /
                            np.max(np.abs(reference.covariance_[w])))) for w in words)


def count(lines, settings: dict, client=None):
    vectorizer = glovev_ext.CooccurrenceVectorizer(**settings, **({} if client is None else
                                                                  {"backend": "dask", "client": client}))
    return vectorizer.fit_transform(lines), vectorizer


def covariances(matrix, parameters: GloVeParameters, dim: int, store: str, client=None):
    options = {} if client is None else {"backend": "dask", "client": client}
    return glovev_ext.GloVeVEstimator(dim, pretrained=parameters, point_estimate="trained", progress=False,
                                      covariance_storage=store, **options).fit(matrix)


def posteriors(matrix, halves: tuple, parameters: GloVeParameters, dim: int, store: str, client=None):
    options = {} if client is None else {"backend": "dask", "client": client}
    return glovev_ext.GloVeVEstimator(dim, pretrained=parameters, progress=False, covariance_storage=store,
                                      **options).fit(matrix, halves=halves)


def split_halves(lines, vectorizer) -> tuple:
    """The co-occurrences of two random halves of the documents (the same halves on every run), in the vocabulary of
    the whole, counted as ``vectorizer`` counts (on threads or on its cluster)."""
    first = np.random.default_rng(1).random(vectorizer.n_documents_) < 0.5
    return tuple(vectorizer.transform(DocumentSubset(lines, first == side)) for side in (True, False))


class EntriesMessage(logging.Handler):
    """Keeps what training logs of the entries on the workers (sent to them or read from the files; Dask's own size)."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.message = ""

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("training entries"):
            self.message = record.getMessage()


def main() -> None:
    folder = tempfile.mkdtemp(prefix="glovev-bench-dask-")
    try:
        run(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run(folder: str) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="gutenberg_us_10m", choices=("embedded", "gutenberg_us_10m",
                                                                         "gutenberg_us_31m"))
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--memory-limit", default="2GB")
    parser.add_argument("--dim", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--window", type=int, default=8)
    parser.add_argument("--min-count", type=int, default=5)
    parser.add_argument("--stages", nargs="+", default=["count", "train", "covariances"],
                        choices=("count", "train", "covariances", "posterior"))
    parser.add_argument("--cluster-count", action="store_true",
                        help="start training and the passes on each cluster from the matrix it counted")
    args = parser.parse_args()
    if args.cluster_count and "count" not in args.stages:
        parser.error("--cluster-count needs the count stage")
    if args.corpus == "embedded":
        name, lines = "the embedded corpus", glovev_ext.load_default_corpus()
    else:
        name, lines = corpus(args.corpus)
    settings = dict(window=args.window, min_count=args.min_count, progress=False)
    training = dict(epochs=args.epochs, random_state=0, progress=False)
    rng = np.random.default_rng(0)
    entries = EntriesMessage()
    logging.getLogger("glovev_ext.glove").addHandler(entries)
    logging.getLogger("glovev_ext.glove").setLevel(logging.INFO)

    seconds = {}
    started = time.perf_counter()
    reference, vectorizer = count(lines, settings)
    seconds["count"] = time.perf_counter() - started
    print(f"{name}: {vectorizer.n_tokens_:,} tokens, {reference.shape[0]:,} words, {reference.nnz:,} nonzeros; "
          f"D={args.dim}, {args.epochs} epoch(s)")
    started = time.perf_counter()
    parameters = train_glove(reference, args.dim, **training)
    seconds["train"] = time.perf_counter() - started
    if "covariances" in args.stages:
        started = time.perf_counter()
        threads_model = covariances(reference, parameters, args.dim, os.path.join(folder, "threads.glovev"))
        seconds["covariances"] = time.perf_counter() - started
        sample = rng.choice(np.flatnonzero(threads_model.covariance_defined_),
                            size=min(500, int(threads_model.covariance_defined_.sum())), replace=False)
    if "posterior" in args.stages:
        halves = split_halves(lines, vectorizer)
        started = time.perf_counter()
        threads_posterior = posteriors(reference, halves, parameters, args.dim, os.path.join(folder, "posterior.glovev"))
        seconds["posterior"] = time.perf_counter() - started
        posterior_sample = rng.choice(reference.shape[0], size=min(500, reference.shape[0]), replace=False)
    print(f"{'run':>22} {'stage':>12} {'seconds':>8} {'worker peak MB':>15} {'difference':>11}  note")
    for stage in args.stages:
        print(f"{'threads (all cores)':>22} {stage:>12} {seconds[stage]:>8.1f} {'':>15} {0.0:>11.1e}")
    for n_workers in args.workers:
        label = f"dask, {n_workers} x {args.memory_limit}"
        with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, memory_limit=args.memory_limit,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            source, source_halves = reference, halves if "posterior" in args.stages else None
            for stage in args.stages:
                client.run(_peaks.peak_since_last_call)
                started = time.perf_counter()
                note = ""
                if stage == "count":
                    matrix, cluster_vectorizer = count(lines, settings, client)
                    elapsed = time.perf_counter() - started
                    difference = matrix_difference(matrix, reference)
                    if args.cluster_count:
                        source = matrix
                        if "posterior" in args.stages:  # untimed: the threads' halves are counted outside the stages
                            counted = time.perf_counter()
                            source_halves = split_halves(lines, cluster_vectorizer)
                            note = f"its halves then counted in {time.perf_counter() - counted:.1f} s"
                elif stage == "train":
                    trained = train_glove(source, args.dim, **training, backend="dask", client=client)
                    elapsed = time.perf_counter() - started
                    difference = parameter_difference(trained, parameters)
                    note = entries.message.removeprefix("training entries ")
                elif stage == "covariances":
                    model = covariances(source, parameters, args.dim, os.path.join(folder, f"dask{n_workers}.glovev"),
                                        client)
                    elapsed = time.perf_counter() - started
                    difference = covariance_difference(model, threads_model, sample)
                else:
                    model = posteriors(source, source_halves, parameters, args.dim,
                                       os.path.join(folder, f"posterior{n_workers}.glovev"), client)
                    elapsed = time.perf_counter() - started
                    difference = covariance_difference(model, threads_posterior, posterior_sample)
                    note = (f"vectors' largest difference "
                            f"{np.max(np.abs(model.embedding_ - threads_posterior.embedding_)):.1e}")
                peak = max(client.run(_peaks.peak_since_last_call).values()) / 2**20
                print(f"{label:>22} {stage:>12} {elapsed:>8.1f} {peak:>15,.0f} {difference:>11.1e}  {note}")


if __name__ == "__main__":
    main()
