"""Training with and without a memory budget: memory per nonzero, wall time, and the same bits.

Usage: python bench/train_memory.py [--corpus embedded|gutenberg_us_10m|gutenberg_us_31m]
[--n-components 50] [--epochs 1] [--max-memory 600M] [--n-jobs -1]

The corpus is counted once (window 8, min_count 5) and its matrix saved to a temporary folder.
Each training (``train_glove``, the blocks schedule) runs in a fresh child process that loads
the matrix, then trains while a thread samples its resident set (``VmRSS``) every 2 ms: "training
adds" is the sampled peak during training less the resident set just before it (interpreter,
libraries and the matrix, which neither path bounds), and "per nonzero" divides what training
adds beyond its parameters and AdaGrad accumulators (``2 x 2V x (D+1) x 8`` bytes, the same in
both) by the number of nonzeros. The last line says whether the two trainings gave the same bits.
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import tempfile
import threading
import time
from pathlib import Path

import scipy.sparse as sp
from _data import corpus

import glovev_ext
from glovev_ext.glove import train_glove


def resident_bytes() -> int:
    """This process's resident set now, from /proc/self/status."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def train(matrix_path: str, n_components: int, epochs: int, max_memory: str | None, n_jobs: int) -> dict:
    """Train in this process; the sampled peak resident set during training and a digest of the parameters."""
    matrix = sp.load_npz(matrix_path).tocsr()
    train_glove(matrix[:50, :50], 5, epochs=1, n_jobs=n_jobs, max_memory=max_memory, progress=False)  # compile
    before = resident_bytes()
    peak, stop = [before], threading.Event()

    def sample() -> None:
        while not stop.wait(0.002):
            peak[0] = max(peak[0], resident_bytes())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    params = train_glove(matrix, n_components, epochs=epochs, random_state=0, n_jobs=n_jobs, max_memory=max_memory,
                         progress=False)
    elapsed = time.perf_counter() - started
    stop.set()
    sampler.join()
    peak[0] = max(peak[0], resident_bytes())
    digest = hashlib.sha256()
    for array in (params.center_vectors, params.context_vectors, params.center_biases, params.context_biases,
                  params.costs):
        digest.update(array.tobytes())
    return {"seconds": elapsed, "before": before, "peak": peak[0], "digest": digest.hexdigest(),
            "nnz": matrix.nnz, "n_words": matrix.shape[0], "cost": float(params.costs[-1])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="embedded", choices=("embedded", "gutenberg_us_10m", "gutenberg_us_31m"))
    parser.add_argument("--n-components", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--max-memory", default="600M", help="the budget of the second training (default %(default)s)")
    parser.add_argument("--n-jobs", type=int, default=-1)
    args = parser.parse_args()
    label, documents = ("embedded", glovev_ext.load_default_corpus()) if args.corpus == "embedded" else corpus(args.corpus)
    matrix = glovev_ext.CooccurrenceVectorizer(n_jobs=args.n_jobs, progress=False).fit_transform(documents)
    # spawn, not fork: a forked child would inherit the parent's resident set.
    context = multiprocessing.get_context("spawn")
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        matrix_path = str(Path(folder) / "cooccurrence.npz")
        sp.save_npz(matrix_path, sp.csr_matrix(matrix), compressed=False)
        for budget in (None, args.max_memory):
            with context.Pool(1) as pool:
                results[budget] = pool.apply(train, (matrix_path, args.n_components, args.epochs, budget,
                                                     args.n_jobs))
                pool.close()
                pool.join()
    first = results[None]
    n_words, nnz = first["n_words"], first["nnz"]
    parameters = 2 * 2 * n_words * (args.n_components + 1) * 8
    print(f"{label}: {n_words:,} words, {nnz:,} nonzeros ({nnz * 12 / 2**20:.0f} MiB as CSR), "
          f"D={args.n_components}, {args.epochs} epoch(s), n_jobs={args.n_jobs}; parameters and accumulators "
          f"{parameters / 2**20:.0f} MiB")
    print(f"{'max_memory':>12} {'seconds':>8} {'before MiB':>11} {'training adds MiB':>18} "
          f"{'beyond parameters, bytes per nonzero':>37} {'last cost':>10}")
    for budget, result in results.items():
        added = result["peak"] - result["before"]
        print(f"{str(budget):>12} {result['seconds']:8.2f} {result['before'] / 2**20:11.0f} {added / 2**20:18.0f} "
              f"{(added - parameters) / nnz:37.2f} {result['cost']:10.6f}")
    bounded = results[args.max_memory]
    print(f"budget / none: time x{bounded['seconds'] / first['seconds']:.2f}; same bits: "
          f"{bounded['digest'] == first['digest']}")


if __name__ == "__main__":
    main()
