"""The whole path on growing prefixes of gutenberg_us_31m: time and peak memory per stage, and Dask vs threads.

Usage: python bench/scale.py [--dim 300] [--epochs 3] [--fractions 0.1 0.33 1] [--workdir /tmp]
       python bench/scale.py --compare-only 0.33   (just the Dask/threads comparison on that prefix)

For each prefix (a fraction of the corpus's paragraphs; the embedded corpus when ../shared/data is
absent) it runs the three stages -- count (CooccurrenceVectorizer), train (a few epochs of
train_glove), covariances (GloVeVEstimator with covariances written to a float32 store file) --
and prints each stage's wall time, the peak resident memory during the stage and its growth over
the stage's start, with the corpus's tokens, words and nonzeros. Right after the middle prefix,
the covariance pass on a Dask LocalCluster of 2 worker processes against the threaded pass on it,
measured in the same run (the cluster's start-up timed apart). At the end, the growth exponent of
each stage's time and peak memory against corpus tokens (least squares on log-log).
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from _data import corpus

import glovev_ext


class MemorySampler:
    """Peak resident set size of this process while a ``with`` block runs (sampled every 20 ms)."""

    def __enter__(self) -> MemorySampler:
        self.start = self.peak = _resident_bytes()
        self._running = True
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        self._began = time.perf_counter()
        return self

    def __exit__(self, *exc_info) -> None:
        self.seconds = time.perf_counter() - self._began
        self._running = False
        self._thread.join()
        self.peak = max(self.peak, _resident_bytes())

    def _sample(self) -> None:
        while self._running:
            self.peak = max(self.peak, _resident_bytes())
            time.sleep(0.02)


def _resident_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.1, 0.33, 1.0])
    parser.add_argument("--workdir", default=tempfile.gettempdir())
    parser.add_argument("--compare-only", type=float, default=None, metavar="FRACTION",
                        help="only the Dask/threads comparison, on this prefix")
    args = parser.parse_args()
    label, documents = corpus("gutenberg_us_31m")
    n_documents = sum(1 for _ in documents)
    print(f"{label}: {n_documents:,} paragraphs; D={args.dim}, {args.epochs} epochs, covariances to float32 store "
          f"files in {args.workdir}")

    def prefix(fraction: float) -> glovev_ext.LineCorpus:
        return glovev_ext.LineCorpus(documents.source, max_documents=int(fraction * n_documents))

    with tempfile.TemporaryDirectory(dir=args.workdir) as workdir:
        if args.compare_only is not None:
            X = glovev_ext.CooccurrenceVectorizer(progress=False).fit_transform(prefix(args.compare_only))
            glove = glovev_ext.train_glove(X, args.dim, epochs=args.epochs, random_state=0, progress=False)
            compare_backends(X, glove, Path(workdir), args.dim)
            return
        rows = []
        for fraction in args.fractions:
            with MemorySampler() as count:
                vectorizer = glovev_ext.CooccurrenceVectorizer(progress=False)
                X = vectorizer.fit_transform(prefix(fraction))
            with MemorySampler() as train:
                glove = glovev_ext.train_glove(X, args.dim, epochs=args.epochs, random_state=0, progress=False)
            store = Path(workdir) / f"prefix_{fraction}.cov"
            with MemorySampler() as covariances:
                model = glovev_ext.GloVeVEstimator(args.dim, pretrained=glove, covariance_storage=store,
                                                   covariance_dtype="float32", progress=False).fit(X)
            stages = {"count": count, "train": train, "covariances": covariances}
            rows.append((vectorizer.n_tokens_, X.shape[0], X.nnz, stages))
            print(f"\n{vectorizer.n_tokens_:,} tokens, {X.shape[0]:,} words, {X.nnz:,} nonzeros, "
                  f"{int(model.covariance_defined_.sum()):,} covariances ({int(model.pseudo_inverse_.sum()):,} "
                  f"pseudo-inverse), store {store.stat().st_size / 1e9:.2f} GB")
            for name, sample in stages.items():
                print(f"  {name:<12} {sample.seconds:8.1f} s   peak {sample.peak / 1e9:6.2f} GB   "
                      f"grew {(sample.peak - sample.start) / 1e9:6.2f} GB")
            store.unlink()
            if fraction == args.fractions[len(args.fractions) // 2]:
                # here, not after the loop, so the larger prefixes' peaks do not carry this one's data
                compare_backends(X, glove, Path(workdir), args.dim)
            del model, X, glove
        report_growth(rows)


def report_growth(rows: list) -> None:
    """Least-squares exponents of time and peak memory against corpus tokens, per stage."""
    tokens = np.log([row[0] for row in rows])
    print("\ngrowth exponents against corpus tokens (time ~ tokens^k, peak memory ~ tokens^k):")
    for name in ("count", "train", "covariances"):
        times = np.log([row[3][name].seconds for row in rows])
        peaks = np.log([row[3][name].peak for row in rows])
        print(f"  {name:<12} time k = {np.polyfit(tokens, times, 1)[0]:.2f}   "
              f"peak memory k = {np.polyfit(tokens, peaks, 1)[0]:.2f}")
    nonzeros = np.log([row[2] for row in rows])
    print(f"  (nonzeros grow as tokens^{np.polyfit(tokens, nonzeros, 1)[0]:.2f}, words as "
          f"tokens^{np.polyfit(tokens, np.log([row[1] for row in rows]), 1)[0]:.2f})")


def compare_backends(X, glove, folder: Path, dim: int) -> None:
    """The covariance pass on 2 threads and on a Dask LocalCluster of 2 single-threaded worker processes."""
    from dask.distributed import Client, LocalCluster

    start = time.perf_counter()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    startup = time.perf_counter() - start
    timings = {}
    try:
        for backend in ("threads", "dask"):
            start = time.perf_counter()
            glovev_ext.GloVeVEstimator(dim, pretrained=glove, covariance_storage=folder / f"{backend}.cov",
                                       covariance_dtype="float32", backend=backend, client=client, n_jobs=2,
                                       progress=False).fit(X)
            timings[backend] = time.perf_counter() - start
    finally:
        client.close()
        cluster.close()
    print(f"\ncovariance pass on {X.shape[0]:,} words: threads {timings['threads']:.1f} s, Dask LocalCluster of 2 "
          f"worker processes {timings['dask']:.1f} s (dask / threads = {timings['dask'] / timings['threads']:.2f}; "
          f"the cluster took {startup:.1f} s more to start)")


if __name__ == "__main__":
    main()
