"""Counting and training a synthetic corpus under a memory budget: wall time and exact peak memory per stage.

Usage: python bench/synthetic_corpus.py [--tokens 1e9] [--types 1000000] [--exponent 1.0] [--max-memory 6G]
[--n-components 100] [--epochs 1] [--n-jobs -1] [--seed 0]

The corpus is generated on the fly, the same every time for a seed: documents whose lengths are
log-normal (median 90 tokens, mean about 150, as paragraphs are), tokens drawn independently from
a Zipf law (rank ``r`` with probability proportional to ``r ** -exponent``) over ``--types`` word
types named ``w0, w1, ...`` (w0 the most frequent).
Nothing of it is held but the document in hand. Two stages run in this process, each under
``--max-memory``: counting (``CooccurrenceVectorizer(max_memory=...).fit_transform``: one read
of the corpus, partial counts spilled to TMPDIR, the matrix memory-mapped) and training
(``train_glove(max_memory=...)``: the entries in a file, one block per thread in memory). Each
stage's peak resident set is exact: ``VmHWM`` of /proc/self/status, reset (``5`` written to
/proc/self/clear_refs) as the stage begins; the table gives it per nonzero too, and the most disk
in use on TMPDIR's file system during the stage beyond what was in use before counting (sampled
every second: training's includes the counted matrix's files, 12 bytes per nonzero). Independent tokens
co-occur far less selectively than words of a text, so this corpus has more distinct pairs per
token than a real one (gutenberg_us_10m: 1.7 nonzeros per token). At 1e7 tokens over 1,000,000
types, exponent 1.0 gives 5.3 nonzeros per token (1e8 tokens: 5.65), 1.1 gives 2.8, 1.2 gives 1.3
and 1.3 gives 0.6; the counted runs and the training entries take 16 bytes per nonzero each on
disk, so at 1e9 tokens exponent 1.0 needs more disk than 1.2 by about the same factor.

Issue 26's check: ``python bench/synthetic_corpus.py --tokens 1e9 --types 1000000 --exponent 1.2
--max-memory 6G --n-components 100 --epochs 1`` (30 min on 2 cores; TMPDIR on a disk with 30 GB
free). It gave 999,373 types, 764,035,226 nonzeros (0.76 per token), counting in 1,221 s (0.82 M
tokens/s) at a peak of 5,863 MiB and 29.0 GB of disk, training in 553 s (1.38 M updates/s) at a
peak of 5,433 MiB (3,080 of them the parameters and their accumulators) and 20.1 GB of disk. At
exponent 1.0 the same corpus would have several times the nonzeros (1e8 tokens: 565 M).
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import threading
import time

import numpy as np

from _peaks import peak_since_last_call

import glovev_ext
from glovev_ext.glove import train_glove

_BATCH_TOKENS = 1 << 20


class ZipfCorpus:
    """A re-iterable corpus of ``n_tokens`` Zipf-distributed tokens in log-normal documents, generated from a seed."""

    def __init__(self, n_tokens: int, n_types: int, seed: int = 0, exponent: float = 1.0):
        self.n_tokens, self.n_types, self.seed = n_tokens, n_types, seed
        weights = np.arange(1, n_types + 1, dtype=np.float64) ** -exponent
        self.cumulative = np.cumsum(weights / weights.sum())
        self.names = np.array([f"w{k}" for k in range(n_types)], dtype=object)

    def __iter__(self):
        rng = np.random.default_rng(self.seed)
        left = self.n_tokens
        while left > 0:
            tokens = min(_BATCH_TOKENS, left)
            ids = np.minimum(np.searchsorted(self.cumulative, rng.random(tokens)), self.n_types - 1)
            lengths = np.maximum(1, rng.lognormal(np.log(90.0), 1.0, size=tokens // 20 + 1).astype(np.int64))
            ends = np.cumsum(lengths)
            ends = np.append(ends[ends < tokens], tokens)
            words = self.names[ids]
            start = 0
            for end in ends:
                yield " ".join(words[start:end])
                start = end
            left -= tokens


class DiskSampler:
    """The most disk in use on TMPDIR's file system beyond what was in use when the sampler started, sampled every
    second (other processes writing there count too)."""

    def __init__(self):
        self.start = self.peak = self._used()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    @staticmethod
    def _used() -> int:
        stats = os.statvfs(tempfile.gettempdir())
        return (stats.f_blocks - stats.f_bfree) * stats.f_frsize

    def _sample(self) -> None:
        while not self._stop.wait(1.0):
            self.peak = max(self.peak, self._used())

    def take(self) -> int:
        """Bytes: the most in use beyond the start since the last call (files of an earlier stage still there
        count); the next call reports from now on."""
        self.peak = max(self.peak, self._used())
        peak, self.peak = self.peak - self.start, self._used()
        return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=float, default=1e9)
    parser.add_argument("--types", type=int, default=1_000_000)
    parser.add_argument("--exponent", type=float, default=1.0)
    parser.add_argument("--max-memory", default="6G")
    parser.add_argument("--n-components", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="  %(asctime)s %(message)s")
    corpus = ZipfCorpus(int(args.tokens), args.types, args.seed, args.exponent)
    rows = []
    disk = DiskSampler()
    peak_since_last_call()
    started = time.perf_counter()
    vectorizer = glovev_ext.CooccurrenceVectorizer(min_count=5, lowercase=False, max_memory=args.max_memory,
                                                   n_jobs=args.n_jobs, progress=False)
    matrix = vectorizer.fit_transform(corpus)
    seconds = time.perf_counter() - started
    rows.append(("count", seconds, peak_since_last_call(), disk.take(),
                 f"{vectorizer.n_tokens_ / seconds / 1e6:.2f} M tokens/s"))
    started = time.perf_counter()
    params = train_glove(matrix, args.n_components, epochs=args.epochs, n_jobs=args.n_jobs,
                         max_memory=args.max_memory, progress=False)
    seconds = time.perf_counter() - started
    rows.append(("train", seconds, peak_since_last_call(), disk.take(),
                 f"{matrix.nnz * args.epochs / seconds / 1e6:.2f} M updates/s, cost {params.costs[-1]:.5f}"))
    parameters = 2 * 2 * matrix.shape[0] * (args.n_components + 1) * 8  # both rows of each word, and their sums
    print(f"synthetic corpus: {vectorizer.n_tokens_:,} tokens in {vectorizer.n_documents_:,} documents, "
          f"{matrix.shape[0]:,} of {args.types:,} types kept (min_count 5), {matrix.nnz:,} nonzeros "
          f"({matrix.nnz / vectorizer.n_tokens_:.2f} per token); D={args.n_components}, {args.epochs} epoch(s), "
          f"max_memory={args.max_memory}; the parameters and their accumulators take {parameters / 2**20:,.0f} MiB")
    print(f"{'stage':>6} {'seconds':>9} {'peak MiB':>9} {'bytes/nonzero':>14} {'disk MiB':>9}  rate")
    for stage, seconds, peak, disk_peak, rate in rows:
        print(f"{stage:>6} {seconds:9.1f} {peak / 2**20:9.0f} {peak / matrix.nnz:14.1f} {disk_peak / 2**20:9.0f}  "
              f"{rate}")


if __name__ == "__main__":
    main()
