"""Running the covariance pass on a Dask cluster (``pip install 'glovev-ext[dask]'``).

Each block of words is a task: the context vectors and biases are broadcast to the workers once,
each task carries only its block's co-occurrence rows and centre parameters, writes its factors
straight into the store file (which the workers must see: a local cluster, or a shared file
system) and sends back a small summary. A worker that dies has its tasks rerun elsewhere; the
store at the final path is complete or absent, never partial.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

from .covariance_build import BlockRunner, fit_block_into_file

logger = logging.getLogger(__name__)


def dask_runner(client=None, n_workers: int | None = None) -> BlockRunner:
    """A block runner on Dask.

    Parameters
    ----------
    client : dask.distributed.Client, str or None
        A client, a scheduler address, or None for a ``LocalCluster`` of ``n_workers``
        single-threaded worker processes (closed when the pass ends).
    n_workers : int, optional
        Workers of the local cluster (every core by default).
    """

    def run(tasks) -> Iterator:
        try:
            from dask.distributed import Client, LocalCluster, as_completed
        except ImportError:
            raise ImportError("the dask backend needs dask.distributed: pip install 'glovev-ext[dask]'") from None
        owned = []
        if client is None:
            cluster = LocalCluster(n_workers=n_workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            owned = [Client(cluster), cluster]
            active = owned[0]
        elif isinstance(client, str):
            active = Client(client)
            owned = [active]
        else:
            active = client
        try:
            n_active = max(1, len(active.scheduler_info().get("workers", {})))
            broadcast = {}
            in_flight = as_completed()
            keys = {}
            pending = iter(tasks)

            def submit_next() -> bool:
                step = next(pending, None)
                if step is None:
                    return False
                k, (path, block_matrix, contexts, biases, *rest) = step
                if "contexts" not in broadcast:
                    broadcast["contexts"], broadcast["biases"] = active.scatter([contexts, biases], broadcast=True)
                future = active.submit(fit_block_into_file, path, block_matrix, broadcast["contexts"],
                                       broadcast["biases"], *rest, pure=False)
                keys[future.key] = k
                in_flight.add(future)
                return True

            for _ in range(2 * n_active):
                if not submit_next():
                    break
            for future in in_flight:
                yield keys.pop(future.key), future.result()
                submit_next()
        finally:
            for resource in owned:
                resource.close()

    return run
