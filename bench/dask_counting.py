"""Counting on a Dask cluster against counting on threads (issue 26, item 3): time per stage, same counts.

Usage: python bench/dask_counting.py [--corpus embedded|gutenberg_us_10m|gutenberg_us_31m] [--workers 1 2 4]
                                     [--memory-limit 2GB] [--window 8] [--min-count 5]

Counts the corpus on threads (``n_jobs=-1``, the reference) and then, for each ``--workers``, on a
``LocalCluster`` of that many single-threaded worker processes, each limited to ``--memory-limit``
(``CooccurrenceVectorizer(backend="dask")``), and prints per run: the seconds of the vocabulary
pass and of the co-occurrence pass, tokens per second, and the largest relative difference of
the matrix from the threaded one (its words, counts, nonzero pattern and values; the values
differ only by the order of the sums). The shared corpora fall back to the embedded one when
../shared/data is absent. On a machine of 2 cores more than 2 workers share them.
About 2 minutes for gutenberg_us_10m with 1, 2 and 4 workers on 2 cores.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _data import corpus
from dask.distributed import Client, LocalCluster

import glovev_ext


def timed_count(vectorizer: glovev_ext.CooccurrenceVectorizer, lines) -> tuple[float, float, object]:
    started = time.perf_counter()
    vectorizer.fit(lines)
    fitted = time.perf_counter()
    matrix = vectorizer.transform(lines)
    return fitted - started, time.perf_counter() - fitted, matrix


def difference(matrix, reference) -> float:
    if list(matrix.words) != list(reference.words) or not np.array_equal(matrix.counts, reference.counts):
        return np.inf
    if not (np.array_equal(matrix.indptr, reference.indptr) and np.array_equal(matrix.indices, reference.indices)):
        return np.inf
    return float(np.max(np.abs(np.asarray(matrix.data) - reference.data) / np.abs(reference.data)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="gutenberg_us_10m", choices=("embedded", "gutenberg_us_10m",
                                                                         "gutenberg_us_31m"))
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--memory-limit", default="2GB")
    parser.add_argument("--window", type=int, default=8)
    parser.add_argument("--min-count", type=int, default=5)
    args = parser.parse_args()
    if args.corpus == "embedded":
        name, lines = "the embedded corpus", glovev_ext.load_default_corpus()
    else:
        name, lines = corpus(args.corpus)
    settings = dict(window=args.window, min_count=args.min_count, progress=False)
    threads = glovev_ext.CooccurrenceVectorizer(**settings)
    vocabulary_seconds, matrix_seconds, reference = timed_count(threads, lines)
    n_tokens = threads.n_tokens_
    print(f"{name}: {n_tokens:,} tokens, {reference.shape[0]:,} words, {reference.nnz:,} nonzeros")
    print(f"{'run':>24} {'vocabulary s':>13} {'co-occurrences s':>17} {'M tokens/s':>11} {'max rel. diff':>14}")
    total = vocabulary_seconds + matrix_seconds
    print(f"{'threads (all cores)':>24} {vocabulary_seconds:>13.1f} {matrix_seconds:>17.1f} "
          f"{n_tokens / total / 1e6:>11.2f} {0.0:>14.1e}")
    for n_workers in args.workers:
        with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, memory_limit=args.memory_limit,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            dask = glovev_ext.CooccurrenceVectorizer(**settings, backend="dask", client=client)
            vocabulary_seconds, matrix_seconds, matrix = timed_count(dask, lines)
        total = vocabulary_seconds + matrix_seconds
        label = f"dask, {n_workers} x {args.memory_limit}"
        print(f"{label:>24} {vocabulary_seconds:>13.1f} {matrix_seconds:>17.1f} {n_tokens / total / 1e6:>11.2f} "
              f"{difference(matrix, reference):>14.1e}")


if __name__ == "__main__":
    main()
