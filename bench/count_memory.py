"""Counting with and without a memory budget: wall time and peak resident memory of each.

Usage: python bench/count_memory.py [--corpus embedded|gutenberg_us_10m|gutenberg_us_31m]
[--max-memory 64M] [--n-jobs -1] [--window 8] [--min-count 5]

Each count (``CooccurrenceVectorizer.fit_transform``, one read of the corpus) runs in a fresh
child process, so its peak resident set (``getrusage``'s ``ru_maxrss``) is its own; the child
first counts a few documents, so the compiled kernels are loaded before the clock starts. The peak
includes the interpreter, the libraries and the final matrix, which the budget does not bound.
The line "sorted runs ... written" on stderr says how many partials were spilled.
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import resource
import time

from _data import corpus

import glovev_ext


def count(corpus_name: str, max_memory: str | None, n_jobs: int, window: int, min_count: int) -> dict:
    """Count the corpus in this process: seconds, peak RSS before and after counting, and the matrix's size."""
    logging.basicConfig(level=logging.INFO, format="  %(message)s")
    logging.getLogger("glovev_ext").setLevel(logging.WARNING)
    logging.getLogger("glovev_ext.counting.vectorizer").setLevel(logging.INFO)
    _, documents = corpus(corpus_name) if corpus_name != "embedded" else ("", glovev_ext.load_default_corpus())
    params = dict(window=window, min_count=min_count, n_jobs=n_jobs, progress=False, max_memory=max_memory)
    glovev_ext.CooccurrenceVectorizer(**{**params, "min_count": 1}).fit_transform(
        glovev_ext.load_default_corpus(max_documents=50))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    started = time.perf_counter()
    matrix = glovev_ext.CooccurrenceVectorizer(**params).fit_transform(documents)
    elapsed = time.perf_counter() - started
    return {"seconds": elapsed, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "before": before, "nnz": matrix.nnz, "n_words": matrix.shape[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="embedded", choices=("embedded", "gutenberg_us_10m", "gutenberg_us_31m"))
    parser.add_argument("--max-memory", default="64M", help="the budget of the second count (default %(default)s)")
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--window", type=int, default=8)
    parser.add_argument("--min-count", type=int, default=5)
    args = parser.parse_args()
    # spawn, not fork: a forked child would inherit the parent's peak resident set.
    context = multiprocessing.get_context("spawn")
    results = {}
    for budget in (None, args.max_memory):
        with context.Pool(1) as pool:
            results[budget] = pool.apply(count, (args.corpus, budget, args.n_jobs, args.window, args.min_count))
            # A clean exit, not the terminate() of leaving the block, so the child's semaphores are released.
            pool.close()
            pool.join()
    unbounded, bounded = results[None], results[args.max_memory]
    label = args.corpus if args.corpus == "embedded" else corpus(args.corpus)[0]
    print(f"{label}: {unbounded['n_words']:,} words, {unbounded['nnz']:,} nonzeros "
          f"({unbounded['nnz'] * 12 / 2**20:.0f} MiB as CSR), n_jobs={args.n_jobs}, window={args.window}")
    print(f"{'max_memory':>12} {'seconds':>8} {'peak RSS MiB':>13} {'before counting':>16} {'counting adds':>14}")
    for budget, result in results.items():
        print(f"{str(budget):>12} {result['seconds']:8.2f} {result['peak'] / 2**20:13.0f} "
              f"{result['before'] / 2**20:16.0f} {(result['peak'] - result['before']) / 2**20:14.0f}")
    print(f"budget / none: time x{bounded['seconds'] / unbounded['seconds']:.2f}, peak RSS "
          f"x{bounded['peak'] / unbounded['peak']:.2f}, memory counting adds "
          f"x{(bounded['peak'] - bounded['before']) / max(1, unbounded['peak'] - unbounded['before']):.2f}")


if __name__ == "__main__":
    main()
