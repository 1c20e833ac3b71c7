"""The Dask backend (``pip install 'glovev-ext[dask]'``): the covariance pass and ``transform`` on a cluster.

The covariance pass: each block of words is a task; the context vectors and biases are broadcast
to the workers once, each task carries only its block's co-occurrence rows and centre parameters,
writes its factors straight into the store file (which the workers must see: a local cluster, or
a shared file system) and sends back a small summary. A worker that dies has its tasks rerun
elsewhere; the store at the final path is complete or absent, never partial.

``transform``: blocks of new co-occurrence rows are fitted on the workers, which send back only
the vectors.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from .._dask import connected
from .passes import BlockRunner, BlockSummary, fit_block
from .wls import WordFitter, free_row_vectors

_ROWS_PER_TASK = 2000  # new co-occurrence rows fitted per transform task
_TRIES_PER_BLOCK = 4  # a block cancelled this often (its data lost with dying workers) stops the pass


def _fit_block_one_blas_thread(*arguments) -> BlockSummary:
    with threadpool_limits(limits=1, user_api="blas"):
        return fit_block(*arguments)


def dask_runner(client=None, n_workers: int | None = None) -> BlockRunner:
    """A block runner of the covariance pass on Dask.

    Parameters
    ----------
    client : dask.distributed.Client, str or None
        A client, a scheduler address, or None for a ``LocalCluster`` of ``n_workers``
        single-threaded worker processes (closed when the pass ends).
    n_workers : int, optional
        Workers of the local cluster (every core by default).
    """

    def run(tasks: Iterable[tuple[int, tuple]]) -> Iterator[tuple[int, BlockSummary]]:
        from concurrent.futures import CancelledError

        from dask.distributed import as_completed

        with connected(client, n_workers) as active:
            n_active = max(1, len(active.scheduler_info().get("workers", {})))
            broadcast = {}
            in_flight = as_completed()
            submitted = {}  # future key -> (block index, its task, tries so far)
            pending = iter(tasks)

            def submit(k: int, step: tuple, tries: int) -> None:
                target, block_matrix, contexts, biases, *rest = step
                if any(shared.status != "finished" for shared in broadcast.values()) or not broadcast:
                    # Fresh keys (hash=False): scattering again under the old key can wait on its release.
                    broadcast["contexts"], broadcast["biases"] = active.scatter([contexts, biases], broadcast=True,
                                                                                hash=False)
                future = active.submit(_fit_block_one_blas_thread, target, block_matrix, broadcast["contexts"],
                                       broadcast["biases"], *rest, pure=False)
                submitted[future.key] = (k, step, tries)
                in_flight.add(future)

            def submit_next() -> bool:
                step = next(pending, None)
                if step is None:
                    return False
                submit(*step, tries=1)
                return True

            for _ in range(2 * n_active):
                if not submit_next():
                    break
            for future in in_flight:
                k, step, tries = submitted.pop(future.key)
                try:
                    summary = future.result()
                except CancelledError:
                    # A worker that died took data with it (the broadcast contexts, or this task's
                    # inputs): rerun the block, scattering again what was lost; a block cancelled every
                    # time is an error.
                    if tries >= _TRIES_PER_BLOCK:
                        raise RuntimeError(f"block {k} of the covariance pass was cancelled {tries} times "
                                           "(workers keep leaving the cluster)") from None
                    submit(k, step, tries + 1)
                    continue
                yield k, summary
                submit_next()

    return run


def _transform_block(rows: sp.csr_matrix, contexts: np.ndarray, biases: np.ndarray, x_max: float,
                     alpha: float, conditioning: str) -> tuple[np.ndarray, np.ndarray]:
    """Weighted-least-squares vectors (free bias) and context counts of a block of co-occurrence rows."""
    with threadpool_limits(limits=1, user_api="blas"):
        return free_row_vectors(WordFitter(rows, contexts, biases, x_max, alpha, conditioning))


def dask_transform(client, rows: sp.csr_matrix, contexts: np.ndarray, biases: np.ndarray, x_max: float,
                   alpha: float, conditioning: str, n_workers: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`free_row_vectors` over blocks of ``rows`` on Dask; only the vectors come back."""
    with connected(client, n_workers) as active:
        shared_contexts, shared_biases = active.scatter([contexts, biases], broadcast=True)
        bounds = list(range(0, rows.shape[0], _ROWS_PER_TASK)) + [rows.shape[0]]
        futures = [active.submit(_transform_block, rows[a:b], shared_contexts, shared_biases, x_max, alpha,
                                 conditioning, pure=False) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
        parts = active.gather(futures)
    if not parts:
        return np.empty((0, contexts.shape[1])), np.empty(0, np.int64)
    return np.vstack([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
