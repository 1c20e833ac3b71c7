"""Which of the per-word linear algebra calls run faster on several threads (one BLAS thread each)?

Usage: python bench/lapack_threads.py [--dim 300] [--calls 200] [--threads 2]

The passes that fit or compare rows (the prior, the posteriors, the halves' comparison) run the
same few calls once per word on ``n_jobs`` threads with one BLAS thread each. This times each call
on a D x D symmetric positive-definite matrix, ``--calls`` times on one thread, then the same
number of calls shared among ``--threads`` threads, and prints the speed-up (one thread's seconds
over the threads'). A call that does not run concurrently in threads shows about 1, whatever the
cores: in the halves' comparison at D = 300, the eigenvalues of each word's difference covariance
(``bench/compare_threads.py``).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from threadpoolctl import threadpool_limits

from glovev_ext.covariance.prior import shared_prior_difference


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    generator = np.random.default_rng(0)
    first, second, precision = (_positive_definite(generator, args.dim) for _ in range(3))
    vector = generator.standard_normal(args.dim)
    calls = {
        "matmul": lambda: first @ second,
        "shared_prior_difference": lambda: shared_prior_difference(first, second, precision),
        "cholesky": lambda: np.linalg.cholesky(first),
        "solve": lambda: np.linalg.solve(first, vector),
        "eigvalsh": lambda: np.linalg.eigvalsh(first),
        "svd (values)": lambda: np.linalg.svd(first, compute_uv=False),
    }
    print(f"D={args.dim}, {args.calls} calls each, {args.threads} threads of one BLAS thread, {os.cpu_count()} cores")
    print(f"{'call':<24} {'ms a call':>10} {'speed-up':>9}")
    with threadpool_limits(limits=1, user_api="blas"):
        for name, call in calls.items():
            one = _seconds(call, args.calls, 1)
            print(f"{name:<24} {one / args.calls * 1e3:>10.2f} {one / _seconds(call, args.calls, args.threads):>9.2f}")


def _positive_definite(generator: np.random.Generator, dim: int) -> np.ndarray:
    half = generator.standard_normal((dim, 2 * dim))
    return half @ half.T / (2 * dim)


def _seconds(call: Callable, n_calls: int, threads: int) -> float:
    """Wall seconds of ``n_calls`` calls shared among ``threads`` threads."""
    shares = [len(part) for part in np.array_split(np.arange(n_calls), threads)]
    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda share: [call() for _ in range(share)], shares))
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
