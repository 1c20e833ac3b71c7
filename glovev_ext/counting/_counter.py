"""Parallel counting of chunks into one right-context matrix, with bounded memory."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
import threading
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from ._spill import SpillingMerger, resolved
from ._window_kernel import count_right_contexts
from .partial_sums import PartialSums


class ContextCounter:
    """Counts chunks of word ids on worker threads and sums their right-context matrices.

    Each submitted job produces ``(ids, doc_ends)`` (negative ids are out-of-vocabulary words)
    on a worker thread, which then counts them with the numba kernel; both steps release the GIL.
    The chunks' matrices are summed by :class:`~glovev_ext.counting.partial_sums.PartialSums`; merges run on the
    workers too (scipy's sparse addition releases the GIL), each queued only once both of its
    inputs exist, so no worker ever waits on another job. The merge tree depends only on the chunk
    order, so the result is bit-for-bit the same whatever the number of threads. At most
    ``max_in_flight`` (by default ``2 * n_jobs``) counting jobs are in flight.

    With ``max_memory``, large merges stream to sorted runs in a temporary folder (see
    :class:`~glovev_ext.counting._spill.SpillingMerger`) and the runs are merged at the end; the
    merge tree is unchanged, so is the result, bit for bit. Use the counter as a context manager:
    the folder is removed on exit, error or not.

    Parameters
    ----------
    n_words : int
        Vocabulary size.
    window : int
        Context words on each side.
    n_jobs : int
        Worker threads; 1 counts on the calling thread.
    on_counted : callable
        Called on the calling thread with the number of tokens of each counted chunk.
    max_memory : int or None, default=None
        Memory budget in bytes for the partial matrices held; None holds them all in memory.
    max_in_flight : int or None, default=None
        Counting jobs in flight at most; None is ``2 * n_jobs``. Fewer bound the memory of the
        chunks being counted without changing the result.
    """

    def __init__(self, n_words: int, window: int, n_jobs: int, on_counted: Callable[[int], object],
                 max_memory: int | None = None, max_in_flight: int | None = None):
        self._n_words = n_words
        self._window = window
        self._max_in_flight = 2 * n_jobs if max_in_flight is None else max_in_flight
        self._on_counted = on_counted
        self._pool = ThreadPoolExecutor(n_jobs, thread_name_prefix="glovev-count") if n_jobs > 1 else None
        self._in_flight: deque[Future] = deque()
        self._merger = None if max_memory is None else SpillingMerger(n_words, max_memory)
        self._add = _add_matrices if self._merger is None else self._merger.add
        self._sums = PartialSums(self._add if self._pool is None else self._merge_when_ready)

    def __enter__(self) -> ContextCounter:
        if self._merger is not None:
            self._merger.__enter__()
        return self

    def __exit__(self, *exc_info) -> None:
        if self._pool is not None:
            # Cancelled here, not by shutdown(cancel_futures=True): cancelling runs the merge callbacks,
            # which submit to the pool and would deadlock on the lock that shutdown holds meanwhile.
            for counted in self._in_flight:
                counted.cancel()
            self._pool.shutdown(wait=True)
        # After the pool is down, so that no merge still writes into the folder.
        if self._merger is not None:
            self._merger.__exit__(*exc_info)

    @property
    def n_runs_written(self) -> int:
        """Runs written to disk so far (0 without ``max_memory``)."""
        return 0 if self._merger is None else self._merger.n_runs_written

    def submit(self, make_ids: Callable[..., tuple[np.ndarray, np.ndarray]], *args) -> None:
        """Queue one chunk: ``make_ids(*args)`` returns its word ids and document end offsets."""
        if self._pool is None:
            matrix, n_tokens = self._count(make_ids, *args)
            self._sums.add(matrix)
            self._on_counted(n_tokens)
            return
        while len(self._in_flight) >= self._max_in_flight:
            self._on_counted(self._in_flight.popleft().result()[1])
        counted = self._pool.submit(self._count, make_ids, *args)
        self._in_flight.append(counted)
        self._sums.add(_then(counted, _first))

    def symmetric_result(self) -> sp.csr_matrix:
        """``Y + Y.T`` for the sum ``Y`` of all chunks' right-context matrices (sorted indices)."""
        while self._in_flight:
            self._on_counted(self._in_flight.popleft().result()[1])
        if self._merger is not None:
            return self._merger.symmetric_total(self._sums.drain())
        right = self._sums.total(resolved)
        if right is None:
            right = sp.csr_matrix((self._n_words, self._n_words))
        # One addition: slicing into row blocks to add them on several threads costs more than it saves.
        return right + right.T.tocsr()

    def _count(self, make_ids, *args) -> tuple[sp.csr_matrix, int]:
        ids, doc_ends = make_ids(*args)
        return right_contexts(ids, doc_ends, self._window, self._n_words), ids.size

    def _merge_when_ready(self, earlier: Future, later: Future) -> Future:
        merged: Future = Future()
        # The callbacks reach the inputs only through this list, emptied once the merge is queued:
        # a closure holding the futures would tie each one to its own callbacks in a reference
        # cycle, and the partial matrices would wait for the garbage collector.
        inputs = [earlier, later]
        n_waiting = [2]
        lock = threading.Lock()
        pool = self._pool

        def input_done(_: Future) -> None:
            with lock:
                n_waiting[0] -= 1
                if n_waiting[0]:
                    return
            pair = tuple(inputs)
            inputs.clear()
            try:
                job = pool.submit(self._add, *pair)
            except RuntimeError as exc:  # the pool shut down after an error elsewhere
                merged.set_exception(exc)
                return
            job.add_done_callback(lambda finished: _settle(merged, finished.result))

        earlier.add_done_callback(input_done)
        later.add_done_callback(input_done)
        return merged


def right_contexts(ids: np.ndarray, doc_ends: np.ndarray, window: int, n_words: int) -> sp.csr_matrix:
    """One chunk's right-context matrix: row ``i``, column ``j`` sums ``1 / distance`` over the times ``j`` follows
    ``i`` within ``window`` words in a document (negative ids are out-of-vocabulary words, removed first)."""
    indptr, indices, data = count_right_contexts(ids, doc_ends, window, n_words)
    return sp.csr_matrix((data, indices, indptr), shape=(n_words, n_words))


def _then(future: Future, function: Callable) -> Future:
    """A future of ``function(future.result())``, computed by whichever thread completes ``future``."""
    mapped: Future = Future()
    future.add_done_callback(lambda finished: _settle(mapped, lambda: function(finished.result())))
    return mapped


def _settle(target: Future, compute: Callable) -> None:
    """Complete ``target`` with ``compute()`` or with the exception it raises."""
    try:
        target.set_result(compute())
    except Exception as exc:
        target.set_exception(exc)


def _first(counted: tuple[sp.csr_matrix, int]) -> sp.csr_matrix:
    return counted[0]


def _add_matrices(earlier, later) -> sp.csr_matrix:
    return resolved(earlier) + resolved(later)
