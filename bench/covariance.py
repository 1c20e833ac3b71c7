"""GloVe-V covariance throughput against this machine's own GEMM rate.

Usage: python bench/covariance.py [--n-components 100 300] [--epochs 2]

On the co-occurrences of gutenberg_us_10m (the embedded corpus when ../shared/data is absent),
GloVe is trained for a few epochs at each D, then:

- H build: every ``H_i = sum_j f(X_ij) v_j v_j^T`` of a word with a covariance, on all cores with
  one BLAS thread each; rate ``2 sum_i |K_i| D^2 / time``, divided by the rate of a square float64
  GEMM (n = 4000) on all cores measured in the same run (goal >= 0.8 at D = 300);
- total: the whole covariance pass (H, Cholesky, the condition estimate, s2, the least-squares
  optimum), divided by the H build time (goal <= 1.3; wall time, and the CPU time of all threads,
  steadier on a shared machine; the better of two runs, as for the build), with the default conditioning (the exact
  inverse, no eigendecomposition) and with the paper's (a pseudo-inverse, from an
  eigendecomposition, for every ill-conditioned word; also reported without the time of those
  eigendecompositions, timed on their own on the same threads);
- first writes: the time to write every row of a fresh array of the store's size once, page by
  page (``np.empty``) and mapped up front (what the pass does, ``MAP_POPULATE`` on Linux); on a
  virtual machine first writes cost seconds per gigabyte, a price of holding the store, not of
  the formulas, so the total is also given without them;
- one cosine's delta-method variance from the stored factors (goal <= 1 ms).
"""

from __future__ import annotations

import argparse
import mmap
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from _data import corpus
from threadpoolctl import threadpool_limits

import glovev_ext
from glovev_ext.covariance.factor import packed_size
from glovev_ext.covariance.passes import covariance_pass, threaded_runner
from glovev_ext.covariance.wls import WordFitter
from glovev_ext.glove import glove_weights
from glovev_ext.stats.statistics.cosine import cosine_pair_gradients


def gemm_rate(n: int = 4000) -> float:
    a, b = np.random.default_rng(0).random((2, n, n))
    a @ b
    start = time.perf_counter()
    a @ b
    return 2 * n**3 / (time.perf_counter() - start)


def hessian_build_seconds(X, context_vectors: np.ndarray, n_threads: int) -> tuple[float, float]:
    """Wall and CPU seconds to form every H_i with |K_i| > D, as the covariance pass does (gather, scale, A^T A)."""
    dim = context_vectors.shape[1]
    rows = np.flatnonzero(np.diff(X.indptr) > dim)
    blocks = np.array_split(rows, 8 * n_threads)

    def build(block):
        for i in block:
            cols, values = X.indices[X.indptr[i]:X.indptr[i + 1]], X.data[X.indptr[i]:X.indptr[i + 1]]
            design = context_vectors[cols] * np.sqrt(glove_weights(values))[:, None]
            design.T @ design

    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(n_threads) as pool:
        start, cpu = time.perf_counter(), time.process_time()
        list(pool.map(build, blocks))
        return time.perf_counter() - start, time.process_time() - cpu


def eigendecomposition_seconds(X, context_vectors: np.ndarray, rows: np.ndarray, n_threads: int,
                               sample: int = 400) -> float:
    """Time of the eigendecompositions of the given words' H_i alone (H built outside the timing),
    measured on a sample of at most ``sample`` words and scaled to all of them."""
    if rows.size == 0:
        return 0.0
    chosen = np.random.default_rng(2).choice(rows, size=min(sample, rows.size), replace=False)
    hessians = []
    for i in chosen:
        cols, values = X.indices[X.indptr[i]:X.indptr[i + 1]], X.data[X.indptr[i]:X.indptr[i + 1]]
        design = context_vectors[cols] * np.sqrt(glove_weights(values))[:, None]
        hessians.append(design.T @ design)
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(n_threads) as pool:
        start = time.perf_counter()
        list(pool.map(lambda block: [np.linalg.eigh(hessians[k]) for k in block],
                      np.array_split(np.arange(len(hessians)), 8 * n_threads)))
        return (time.perf_counter() - start) * rows.size / chosen.size


def populated_empty(shape: tuple[int, int]) -> np.ndarray:
    """A float64 array whose pages are mapped in one call, as the covariance pass maps its factors."""
    size = shape[0] * shape[1] * 8
    if size == 0 or not hasattr(mmap, "MAP_POPULATE"):
        return np.empty(shape)
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE
    return np.frombuffer(mmap.mmap(-1, size, flags=flags), dtype=np.float64).reshape(shape)


def first_write_seconds(shape: tuple[int, int]) -> tuple[float, float]:
    """Seconds to write each row of a fresh float64 array once: allocated plainly, and populated up front."""
    row = np.ones(shape[1])
    times = []
    for allocate in (np.empty, populated_empty):
        start = time.perf_counter()
        array = allocate(shape)
        for k in range(shape[0]):
            array[k] = row
        times.append(time.perf_counter() - start)
        del array
    return times[0], times[1]


def cosine_variance(store, a: int, b: int, vectors: np.ndarray) -> float:
    """Delta-method variance of cos(w_a, w_b) from the stored factors."""
    grad_a, grad_b = cosine_pair_gradients(vectors, np.array([a]), np.array([b]))
    return store.quad_form(a, grad_a[0]) + store.quad_form(b, grad_b[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-components", type=int, nargs="+", default=[100, 300])
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    n_threads = os.cpu_count() or 1
    label, documents = corpus("gutenberg_us_10m")
    X = glovev_ext.CooccurrenceVectorizer(progress=False).fit_transform(documents)
    peak = gemm_rate()
    print(f"{label}: {X.shape[0]:,} words, {X.nnz:,} nonzeros; square GEMM on {n_threads} threads: "
          f"{peak / 1e9:.1f} GFLOP/s")
    for dim in args.n_components:
        glove = glovev_ext.glove.train_glove(X, dim, epochs=args.epochs, random_state=0, progress=False)
        n_contexts = np.diff(X.indptr)
        flops = 2.0 * float(n_contexts[n_contexts > dim].sum()) * dim**2
        build, build_cpu = min(hessian_build_seconds(X, glove.context_vectors, n_threads) for _ in range(2))
        print(f"D={dim}: H build {build:.1f} s = {flops / build / 1e9:.1f} GFLOP/s = {flops / build / peak:.2f} of GEMM")
        for conditioning in ("exact", "paper"):
            fitter = WordFitter(X, glove.context_vectors, glove.context_biases, 100.0, 0.75, conditioning)
            # Like the H build, the better of two runs for the default (one for the paper's rule: slow).
            timings = []
            for _ in range(2 if conditioning == "exact" else 1):
                store = None  # the previous run's factors are freed before the next is allocated
                start, cpu = time.perf_counter(), time.process_time()
                store = covariance_pass(fitter, glove.center_vectors, glove.center_biases,
                                        runner=threaded_runner(n_threads), progress=False).store
                timings.append((time.perf_counter() - start, time.process_time() - cpu))
            total, total_cpu = min(timings)
            defined = np.flatnonzero(store.defined)
            line = (f"  conditioning={conditioning!r}: {defined.size:,} words with a covariance "
                    f"({int(((n_contexts > dim) & ~store.defined).sum())} numerically singular, "
                    f"{int(store.pseudo_inverse.sum())} pseudo-inverse); total {total:.1f} s = {total / build:.2f} x H build "
                    f"(CPU time {total_cpu / build_cpu:.2f} x)")
            if conditioning == "paper":
                eigen = eigendecomposition_seconds(X, glove.context_vectors, np.flatnonzero(store.pseudo_inverse),
                                                   n_threads)
                line += f" ({(total - eigen) / build:.2f} x without the {eigen:.1f} s of eigendecompositions)"
            else:
                shape = (store.per_word.n_factors, packed_size(dim))
                plain, populated = first_write_seconds(shape)
                line += (f"; first writes to its {shape[0] * shape[1] * 8 / 1e9:.1f} GB of factors: {plain:.1f} s page by "
                         f"page, {populated:.1f} s populated up front; without them {(total - populated) / build:.2f} x")
                pairs = np.random.default_rng(1).choice(defined, size=(200, 2))
                start = time.perf_counter()
                for a, b in pairs:
                    cosine_variance(store, int(a), int(b), glove.center_vectors)
                line += f"; one cosine variance {(time.perf_counter() - start) / len(pairs) * 1e3:.3f} ms"
            print(line, flush=True)


if __name__ == "__main__":
    main()
