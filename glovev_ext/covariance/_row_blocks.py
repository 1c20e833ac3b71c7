"""Passes over blocks of rows fitted against fixed context parameters, on threads or on a Dask cluster.

The prior's pass, the posteriors, the regularised sweeps and the halves' comparison all fit
rows one at a time against the same context vectors and biases, and no row's fit depends on
another's. Each of them is a *block function*, a top-level function ``function(fitter, *arguments)``
whose ``fitter`` is a :class:`~glovev_ext.covariance.wls.WordFitter` of the block's rows alone (its
row ``k`` is the block's ``k``-th row) and which returns the block's results. :class:`RowBlockMap`
runs one over blocks and gives the results in block order, so a caller that sums or writes them
in that order gets the same numbers on threads and on Dask:

- threads: the block function reads its rows in place (consecutive rows) or a copy of them;
- Dask: the context parameters and the shared arguments are sent to every worker once per map;
  each task carries its block's rows (or, for a matrix in files kept while it lives, such as one
  counted on the cluster, where its rows are in them: the worker reads them) and its arguments,
  and runs with one BLAS thread; a task lost with a worker runs again elsewhere, and a block
  whose task was cancelled (its shared data lost) is sent again (an error after
  :data:`_TRIES_PER_BLOCK` tries).

BLAS runs on one thread in this process while the map is entered (the callers' work between
blocks is on small matrices too). At most ``2 n`` blocks (``n`` threads or workers) are in
flight at a time, so only their rows and results are held. A caller's own work on the blocks'
results goes to :meth:`RowBlockMap.submit_here`: on threads, the map's own ``n_jobs`` threads, so
that the fits and that work share them rather than each taking ``n_jobs``.
"""

from __future__ import annotations

import warnings
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from contextlib import ExitStack

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from .._dask import connected
from .._file_rows import FileRows
from .._memory import consecutive_rows, release_pages
from .wls import WordFitter

_TRIES_PER_BLOCK = 4  # a block lost with dying workers this often stops the pass

BlockArguments = Callable[[np.ndarray], tuple]
"""``per_block(block)``: the arguments of the block function that belong to the rows ``block``."""


class RowBlockMap:
    """Runs block functions over row blocks on threads or on Dask; a context manager holding the threads or client.

    Parameters
    ----------
    n_jobs : int
        Threads (without ``client``).
    client : dask.distributed.Client, str or None
        Run on this Dask cluster (a client, or a scheduler address connected to while the map is
        entered) instead of threads.
    """

    def __init__(self, n_jobs: int, client=None):
        self.n_jobs = max(1, int(n_jobs))
        self.client = client
        self._stack = ExitStack()
        self._pool: ThreadPoolExecutor | None = None

    def __enter__(self) -> RowBlockMap:
        # One BLAS thread for the caller's own small-matrix work between blocks too (on threads, for the pool's).
        self._stack.enter_context(threadpool_limits(limits=1, user_api="blas"))
        if self.client is not None:
            self._active = self._stack.enter_context(connected(self.client, self.n_jobs))
            self._width = max(1, len(self._active.scheduler_info().get("workers", {})))
        else:
            self._threads()
            self._width = self.n_jobs
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()
        self._pool = None

    def submit_here(self, function: Callable, *arguments) -> Future:
        """``function(*arguments)`` on this process's threads: the map's own on threads (queued behind the blocks
        submitted before it), ``n_jobs`` threads of their own on Dask."""
        return self._threads().submit(function, *arguments)

    def _threads(self) -> ThreadPoolExecutor:
        """This process's ``n_jobs`` threads, started at the first call while the map is entered."""
        if self._pool is None:
            self._pool = self._stack.enter_context(ThreadPoolExecutor(self.n_jobs, thread_name_prefix="glovev-rows"))
        return self._pool

    def map(self, function: Callable, fitter: WordFitter, blocks: Sequence[np.ndarray],
            per_block: BlockArguments | None = None, shared: tuple = (), *, description: str = "",
            progress: bool = False) -> Iterator:
        """``function(fitter of the block's rows, *per_block(block), *shared)`` for each block, in block order.

        Parameters
        ----------
        function : callable
            A top-level function (Dask sends it by name).
        fitter : WordFitter
            All rows and the context parameters.
        blocks : sequence of ndarray of int
            Rows of each block, increasing.
        per_block : callable, optional
            The block's own arguments.
        shared : tuple
            Arguments every block takes (sent once to each worker on Dask).
        description : str
        progress : bool
            A tqdm bar counting the blocks' rows.
        """
        per_block = per_block or (lambda block: ())
        submit = self._submitter(function, fitter, shared)
        matrix = fitter.cooccurrence
        pending = iter(blocks)
        in_flight: deque = deque()
        if self.client is None:
            self._stack.enter_context(fitter.compute_threads())

        def submit_next() -> None:
            block = next(pending, None)
            if block is not None:
                in_flight.append((block, submit(block, per_block(block)), 1))

        with tqdm(total=sum(len(block) for block in blocks), desc=description, unit="word", disable=not progress,
                  leave=False) as bar:
            for _ in range(2 * self._width):
                submit_next()
            while in_flight:
                block, future, tries = in_flight.popleft()
                try:
                    result = future.result()
                except CancelledError:
                    if tries >= _TRIES_PER_BLOCK:
                        raise RuntimeError(f"a block of {len(block)} rows was lost {tries} times (workers keep "
                                           "leaving the cluster)") from None
                    in_flight.appendleft((block, submit(block, per_block(block)), tries + 1))
                    continue
                release_pages(matrix)
                bar.update(len(block))
                yield result
                submit_next()

    def _submitter(self, function: Callable, fitter: WordFitter, shared: tuple):
        """``submit(block, arguments) -> future`` (on Dask, sending the shared arguments again where a worker's
        death lost them)."""
        options = (fitter.context_vectors, fitter.context_biases, fitter.x_max, fitter.alpha, fitter.conditioning)
        matrix = fitter.cooccurrence
        if self.client is None:
            def run(block: np.ndarray, arguments: tuple):
                return function(fitter.for_rows(_block_rows(matrix, block), block), *arguments, *shared)

            return lambda block, arguments: self._threads().submit(run, block, arguments)

        if type(fitter) is not WordFitter:
            raise ValueError(f"a {type(fitter).__name__} fits rows in this process; on a Dask cluster rows are fitted "
                             "by the workers' own WordFitter")
        active = self._active
        sent: list = []
        in_files = FileRows.spans_of(matrix)

        def send() -> None:
            # Fresh keys (hash=False): scattering again under the old key can wait on its release.
            sent[:] = active.scatter([options[0], options[1], *shared], broadcast=True, hash=False)

        def submit(block: np.ndarray, arguments: tuple):
            if not sent or any(future.status != "finished" for future in sent):
                send()
            # The rows travel inside the task (or where they are in the matrix's files, which the workers share), so
            # the scheduler can run it again on another worker if its worker dies (rows scattered to a worker would
            # die with it, and scattering to a dying worker fails); a block of frequent words can pass the 10 MiB at
            # which Dask warns of a large graph: they are meant to.
            rows = FileRows.of(matrix, in_files, block) if in_files else _block_rows(matrix, block)
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
                return active.submit(_run_block, function, rows, sent[0], sent[1], *options[2:], *arguments,
                                     *sent[2:], pure=False)

        return submit


def _run_block(function: Callable, rows: sp.csr_matrix | FileRows, context_vectors: np.ndarray,
               context_biases: np.ndarray, x_max: float, alpha: float, conditioning: str, *arguments):
    """A block function on a Dask worker, with one BLAS thread (``arguments``: the block's own, then the shared)."""
    if isinstance(rows, FileRows):
        rows = rows.read()
    with threadpool_limits(limits=1, user_api="blas"):
        return function(WordFitter(rows, context_vectors, context_biases, x_max, alpha, conditioning), *arguments)


def _block_rows(matrix: sp.csr_matrix, block: np.ndarray) -> sp.csr_matrix:
    """The rows ``block`` of ``matrix`` as a CSR matrix: where they are consecutive, one whose values and columns are
    views of ``matrix``'s (nothing copied but the row pointers); else a copy."""
    if not block.size or block[-1] - block[0] + 1 != block.size:
        return matrix[block]
    return consecutive_rows(matrix, int(block[0]), int(block[-1]) + 1)
