"""The whole path on growing prefixes of gutenberg_us_31m: time and peak memory per stage, and Dask vs threads.

Usage: python bench/scale.py [--n-components 300] [--epochs 3] [--fractions 0.1 0.33 1] [--workdir /tmp]
       python bench/scale.py --compare-only 0.33   (just the Dask/threads comparison on that prefix)

For each prefix (a fraction of the corpus's paragraphs; the embedded corpus when ../shared/data is
absent) it runs the main job, ``glovev_ext.fit_corpus`` (count, a few epochs of training, every
word's covariance written to a float32 store file), and prints each stage's wall time, the peak
resident memory during the stage and its growth over the stage's start, with the corpus's tokens,
words and nonzeros. Memory is sampled every 20 ms through the whole fit and cut into stages by the
stage times the fit reports. Right after the middle prefix,
the covariance pass on a Dask LocalCluster of 2 worker processes against the threaded pass on it,
measured in the same run (the cluster's start-up timed apart). At the end, the growth exponent of
each stage's time and peak memory against corpus tokens (least squares on log-log).
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _data import corpus

import glovev_ext


class MemorySampler:
    """Resident set size of this process while a ``with`` block runs, sampled every 20 ms with its time."""

    def __enter__(self) -> MemorySampler:
        self.began = time.perf_counter()
        self.samples = [(0.0, _resident_bytes())]
        self._running = True
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._running = False
        self._thread.join()
        self.samples.append((time.perf_counter() - self.began, _resident_bytes()))

    def _sample(self) -> None:
        while self._running:
            self.samples.append((time.perf_counter() - self.began, _resident_bytes()))
            time.sleep(0.02)

    def stages(self, seconds: dict) -> dict:
        """``{stage: Stage}`` for consecutive stages of the given durations from the block's start."""
        times, sizes = np.array(self.samples).T
        stages, start = {}, 0.0
        for name, duration in seconds.items():
            inside = (times >= start) & (times <= start + duration)
            before = sizes[times <= start][-1]
            stages[name] = Stage(duration, max(before, sizes[inside].max(initial=before)), before)
            start += duration
        return stages


@dataclass
class Stage:
    seconds: float
    peak: float
    start: float


def _resident_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-components", type=int, default=300)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.1, 0.33, 1.0])
    parser.add_argument("--workdir", default=tempfile.gettempdir())
    parser.add_argument("--compare-only", type=float, default=None, metavar="FRACTION",
                        help="only the Dask/threads comparison, on this prefix")
    args = parser.parse_args()
    label, documents = corpus("gutenberg_us_31m")
    n_documents = sum(1 for _ in documents)
    dim = args.n_components
    print(f"{label}: {n_documents:,} paragraphs; D={dim}, {args.epochs} epochs, covariances to float32 store files "
          f"in {args.workdir}")

    def prefix(fraction: float) -> glovev_ext.LineCorpus:
        return glovev_ext.LineCorpus(documents.source, max_documents=int(fraction * n_documents))

    with tempfile.TemporaryDirectory(dir=args.workdir) as workdir:
        if args.compare_only is not None:
            X = glovev_ext.CooccurrenceVectorizer(progress=False).fit_transform(prefix(args.compare_only))
            glove = glovev_ext.GloVeVEstimator(dim, epochs=args.epochs, random_state=0, covariance_storage="lazy",
                                               point_estimate="trained", progress=False).fit(X)
            compare_backends(X, glove, Path(workdir), dim)
            return
        rows = []
        for fraction in args.fractions:
            path = Path(workdir) / f"prefix_{fraction}.cov"
            with MemorySampler() as memory:
                estimator = glovev_ext.GloVeVEstimator(n_components=dim, epochs=args.epochs, covariance_storage=path,
                                                       covariance_dtype="float32", point_estimate="trained")
                fitted = glovev_ext.fit_corpus(prefix(fraction), estimator=estimator, progress=False)
            stages = memory.stages({"count": fitted.seconds["count"], "train": fitted.seconds["train"],
                                    "covariances": fitted.seconds["covariances"]})
            counts = fitted.metadata["counts"]
            rows.append((counts["n_tokens"], counts["n_words"], counts["n_nonzeros"], stages))
            print(f"\n{counts['n_tokens']:,} tokens, {counts['n_words']:,} words, {counts['n_nonzeros']:,} nonzeros, "
                  f"{counts['n_with_covariance']:,} covariances ({counts['n_pseudo_inverse']:,} pseudo-inverse), "
                  f"store {path.stat().st_size / 1e9:.2f} GB")
            for name, stage in stages.items():
                print(f"  {name:<12} {stage.seconds:8.1f} s   peak {stage.peak / 1e9:6.2f} GB   "
                      f"grew {(stage.peak - stage.start) / 1e9:6.2f} GB")
            X, glove = fitted.cooccurrence, fitted.estimator
            del fitted
            path.unlink()
            if fraction == args.fractions[len(args.fractions) // 2]:
                # here, not after the loop, so the larger prefixes' peaks do not carry this one's data
                compare_backends(X, glove, Path(workdir), dim)
            del X, glove
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


def compare_backends(X, glove: glovev_ext.GloVeVEstimator, folder: Path, dim: int) -> None:
    """The covariance pass on 2 threads and on a Dask LocalCluster of 2 single-threaded worker processes, for the
    parameters ``glove`` was trained to."""
    from dask.distributed import Client, LocalCluster

    start = time.perf_counter()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    startup = time.perf_counter() - start
    timings = {}
    try:
        for backend in ("threads", "dask"):
            start = time.perf_counter()
            parameters = (glove.embedding_, glove.context_embedding_, glove.bias_, glove.context_bias_)
            glovev_ext.GloVeVEstimator(dim, pretrained=parameters, covariance_storage=folder / f"{backend}.cov",
                                       covariance_dtype="float32", backend=backend, client=client, n_jobs=2,
                                       point_estimate="trained", progress=False).fit(X)
            timings[backend] = time.perf_counter() - start
    finally:
        client.close()
        cluster.close()
    print(f"\ncovariance pass on {X.shape[0]:,} words: threads {timings['threads']:.1f} s, Dask LocalCluster of 2 "
          f"worker processes {timings['dask']:.1f} s (dask / threads = {timings['dask'] / timings['threads']:.2f}; "
          f"the cluster took {startup:.1f} s more to start)")


if __name__ == "__main__":
    main()
