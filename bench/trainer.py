"""GloVe training throughput, in co-occurrence updates per second.

Usage: python bench/trainer.py [--epochs 3]

Trains with every core on the co-occurrences of Brown at D=50 and of gutenberg_us_10m at D=100
(window 8, min_count 5, lowercased; the embedded corpus when ../shared/data is absent) and prints
updates per second of both schedules: the default ``"blocks"`` (deterministic at any thread count)
against ``"hogwild"`` (the C tool's lock-free order; goal: blocks within 10 % of it). Baselines: the same run's memory floor (a kernel that reads and writes the
same four random parameter rows per update with no arithmetic, on the same threads), and the
Stanford C tool's ``glove`` with 2 threads as measured on this kind of 2-core machine (1.6M
updates/s at D=50 on Brown, 0.86M at D=100 on gutenberg_us_10m; recorded in issue 2, not re-run).
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from _data import corpus
from numba import njit

import glovev_ext

C_TOOL_UPDATES_PER_SECOND = {("brown", 50): 1.6e6, ("gutenberg_us_10m", 100): 0.86e6}


@njit(nogil=True)
def touch_rows(params, gradsq, rows, cols, order):
    """The memory traffic of an update without its arithmetic: read and write four rows."""
    n_words = params.shape[0] // 2
    total = 0.0
    for k in range(order.size):
        e = order[k]
        center, context = params[rows[e]], params[n_words + cols[e]]
        center_sq, context_sq = gradsq[rows[e]], gradsq[n_words + cols[e]]
        for d in range(params.shape[1]):
            total += center[d] + context[d]
            center_sq[d] += 1.0
            context_sq[d] += 1.0
    return total


def memory_floor(X, dim: int, n_threads: int) -> float:
    """Updates per second of ``touch_rows`` over one shuffled epoch on ``n_threads`` threads."""
    entries = X.tocoo()
    rows, cols = entries.row.astype(np.int32), entries.col.astype(np.int32)
    params = np.ones((2 * X.shape[0], dim + 1))
    gradsq = np.ones_like(params)
    order = np.random.default_rng(0).permutation(entries.nnz)
    touch_rows(params, gradsq, rows, cols, order[:10])
    segments = np.array_split(order, n_threads)
    start = time.perf_counter()
    with ThreadPoolExecutor(n_threads) as pool:
        list(pool.map(lambda segment: touch_rows(params, gradsq, rows, cols, segment), segments))
    return entries.nnz / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    n_threads = os.cpu_count() or 1
    for name, dim in (("brown", 50), ("gutenberg_us_10m", 100)):
        label, documents = corpus(name)
        X = glovev_ext.CooccurrenceVectorizer(progress=False).fit_transform(documents)
        glovev_ext.glove.train_glove(X[:100, :100], dim, epochs=1, progress=False)  # compile outside the timing
        rates = {}
        for schedule in ("hogwild", "blocks", "hogwild", "blocks"):  # alternated: the better of two runs each
            start = time.perf_counter()
            glovev_ext.glove.train_glove(X, dim, epochs=args.epochs, random_state=0, n_jobs=-1, schedule=schedule,
                                   progress=False)
            rate = X.nnz * args.epochs / (time.perf_counter() - start)
            rates[schedule] = max(rate, rates.get(schedule, 0.0))
        rate = rates["blocks"]
        floor = memory_floor(X, dim, n_threads)
        line = (f"{label}: {X.shape[0]:,} words, {X.nnz:,} nonzeros, D={dim}, {n_threads} threads: "
                f"blocks {rate / 1e6:.2f}M updates/s, hogwild {rates['hogwild'] / 1e6:.2f}M/s "
                f"(blocks / hogwild = {rate / rates['hogwild']:.2f}); memory floor {floor / 1e6:.2f}M/s "
                f"(ratio {rate / floor:.2f})")
        if (name, dim) in C_TOOL_UPDATES_PER_SECOND and label == name:
            line += f"; / C tool glove = {rate / C_TOOL_UPDATES_PER_SECOND[name, dim]:.2f}"
        print(line)


if __name__ == "__main__":
    main()
