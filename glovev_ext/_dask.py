"""A Dask client for the stages that run on a cluster (``pip install 'glovev-ext[dask]'``)."""

from __future__ import annotations

import os
from contextlib import contextmanager

from sklearn.base import clone


BACKENDS = ("threads", "dask")


def check_backend(backend: str, client) -> None:
    """Refuse a backend other than :data:`BACKENDS`, and a client with the threads (it would be ignored)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be 'threads' or 'dask', got {backend!r}")
    if client is not None and backend != "dask":
        raise ValueError(f"client is the Dask cluster of backend='dask'; backend is {backend!r}")


@contextmanager
def connected(client, n_workers: int | None):
    """The client to use: the one given, one for a scheduler address, or a new local cluster's."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ImportError("the dask backend needs dask.distributed: pip install 'glovev-ext[dask]'") from None
    if client is not None and not isinstance(client, str):
        yield client
        return
    cluster = None
    if client is None:
        cluster = LocalCluster(n_workers=n_workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                               dashboard_address=None)
    active = Client(cluster if cluster is not None else client)
    try:
        yield active
    finally:
        active.close()
        if cluster is not None:
            cluster.close()


def clone_sharing_client(estimator):
    """scikit-learn's ``clone`` of ``estimator`` (a vectorizer or estimator with a ``client`` parameter), sharing its
    Dask client: a client is a connection to a cluster, and a deep copy of one is no client."""
    params = estimator.get_params(deep=False)
    client = params.pop("client")
    return type(estimator)(**{name: clone(value, safe=False) for name, value in params.items()}, client=client)
