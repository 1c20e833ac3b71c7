"""Do the halves' comparisons pay for running on threads? The comparison pass timed at 1, 2, ... threads against
the most a pass that compared in its main thread could gain.

Usage: python bench/compare_threads.py [--corpus embedded|gutenberg_us_10m|gutenberg_us_31m] [--n-components 300]
[--words 1000] [--threads 1 2]

The corpus and two random halves of its documents are counted, GloVe is trained for one epoch, and
the prior comes from the most frequent ``--words`` rows' optima. ``--words`` rows drawn at random
(seed 0) across the vocabulary are then compared between the halves (``compare_half_rows``,
whose comparisons run on the fits' ``n_jobs`` threads, queued between their blocks) at each
``--threads``. The same rows are also timed in parts on one thread: both halves' posteriors alone
(``F``, ``free_row_posteriors``) and then each word's comparison written out (``C``: both dense
covariances, the shared-prior difference, its condition and a solve (``solve_within``: factorisations, the
eigenvalues where they cannot decide), the pass's work per word);
``F + C`` is the pass's work on one thread, the baseline of the speed-ups. A pass that compared in
its main thread while the pool fitted could not take less than ``C``, so its speed-up over one
thread is at most ``(F + C) / C``, whatever the number of cores; comparing on the threads pays
where the measured speed-up at ``n`` threads passes that bound, or where cores are many enough to
pass it (``n > (F + C) / C``).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _data import corpus
from threadpoolctl import threadpool_limits

import glovev_ext
from glovev_ext.covariance.noise_scale import compare_half_rows, solve_within
from glovev_ext.covariance.prior import free_row_posteriors, row_optima, shared_prior_difference
from glovev_ext.covariance.wls import WordFitter
from glovev_ext.glove import train_glove


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="embedded", choices=("embedded", "gutenberg_us_10m", "gutenberg_us_31m"))
    parser.add_argument("--n-components", type=int, default=300)
    parser.add_argument("--words", type=int, default=1000)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    label, documents = (("embedded", glovev_ext.load_default_corpus()) if args.corpus == "embedded"
                        else corpus(args.corpus))
    documents = list(documents)
    vectorizer = glovev_ext.CooccurrenceVectorizer(progress=False)
    pooled = vectorizer.fit_transform(documents)
    first = np.random.default_rng(0).random(len(documents)) < 0.5
    halves = [vectorizer.transform([d for d, a in zip(documents, first) if a == side]) for side in (True, False)]
    trained = train_glove(pooled, args.n_components, epochs=1, random_state=0, progress=False)
    options = {"context_vectors": trained.context_vectors, "context_biases": trained.context_biases,
               "x_max": 100.0, "alpha": 0.75}
    frequent = np.arange(min(args.words, pooled.shape[0]))
    optima = row_optima(WordFitter(pooled[frequent], **options), trained.center_biases[frequent], max(args.threads))
    prior = optima.prior(1.0)
    fallback = float(np.nanmedian(optima.sigma2))
    rows = np.sort(np.random.default_rng(0).choice(pooled.shape[0], min(args.words, pooled.shape[0]), replace=False))
    parts = tuple(half[rows] for half in halves)

    start = time.perf_counter()
    fits = [free_row_posteriors(WordFitter(part, **options), prior, fallback) for part in parts]
    fits_seconds = time.perf_counter() - start
    start = time.perf_counter()
    n_compared = _compare_by_hand(fits, prior.precision)
    compare_seconds = time.perf_counter() - start
    one_thread = fits_seconds + compare_seconds
    bound = one_thread / compare_seconds
    print(f"{label}: D={args.n_components}, {rows.size:,} words across the vocabulary ({n_compared:,} fitted in both "
          f"halves), {os.cpu_count()} cores")
    print(f"one thread, in parts: both halves' posteriors F = {fits_seconds:.1f} s, their comparisons C = "
          f"{compare_seconds:.1f} s ({compare_seconds / one_thread:.0%} of the work)")
    print(f"comparing in the main thread: speed-up over one thread at most (F + C) / C = {bound:.2f}, at any number "
          "of threads")
    print(f"{'threads':>8} {'seconds':>8} {'speed-up (F + C) / seconds':>27}")
    for n_jobs in args.threads:
        start = time.perf_counter()
        compare_half_rows(parts, options, prior, fallback, n_jobs=n_jobs)
        seconds = time.perf_counter() - start
        print(f"{n_jobs:>8} {seconds:>8.1f} {one_thread / seconds:>27.2f}")


def _compare_by_hand(fits: list, precision: np.ndarray) -> int:
    """Each word's comparison as the pass makes it, on one thread: the words fitted in both halves."""
    (vectors_a, _, _, store_a), (vectors_b, _, _, store_b) = fits
    both = np.flatnonzero(store_a.defined & store_b.defined)
    with threadpool_limits(limits=1, user_api="blas"):
        for i in both:
            covariance_a, covariance_b = store_a[i], store_b[i]
            difference = shared_prior_difference(covariance_a, covariance_b, precision)
            solve_within(difference, vectors_a[i] - vectors_b[i], 1e10)
    return both.size


if __name__ == "__main__":
    main()
