"""The blocks schedule on a Dask cluster (``train_glove(backend="dask")``): the same epochs, the same bits.

The words are dealt into the schedule's G groups as on threads. Row group ``r`` (the entries whose
centre word is in group ``r``, in its G blocks) is sent once to one worker, its *owner*, and stays
there (a matrix in files kept while it lives, such as one counted on the cluster, is not sent: the
owner reads its group's rows from the files, which the workers share); so does the state of the
group's centre rows (vectors, biases and their AdaGrad accumulators, a "slab"). In each stratum the
block ``(r, c)`` runs on the owner of ``r``: it takes the centre slab ``r`` and the context slab
``c``, runs the block's entries in the order its seed gives (the threads' kernel on the same
numbers) and returns both slabs updated; the context slabs move between workers from stratum to
stratum, the entries never do. Nothing is shared between the blocks of a stratum, so each block
computes exactly what it computes on threads, and the epoch's parameters are the threads' bit for
bit.

The client holds the parameters (gathered at the end of each epoch) and, while the entries are sent,
one row group's (none for a matrix in kept files); it holds nothing per nonzero during training. A
worker that dies takes entries and slabs with it: the entries it held are sent again to a live
worker (or read again from the files) and the epoch is run again from the parameters the client
holds, which gives the same bits.
"""

from __future__ import annotations

import logging
import operator
from concurrent.futures import CancelledError

import numpy as np
import scipy.sparse as sp

from .._file_rows import FileRows
from .._memory import release_pages
from ._adagrad_kernel import block_pass
from ._entry_blocks import word_groups

logger = logging.getLogger(__name__)

_TRIES_PER_EPOCH = 4  # an epoch that loses its data to dying workers this often stops training
_WORKER_WAIT_S = 60  # a cluster left without workers is waited on this long (nannies restart the ones that died)


def _run_block(row_before: tuple, context: np.ndarray, entries: tuple, block: int, seed: int, learning_rate: float,
               grad_clip: float, x_max: float, alpha: float) -> tuple[tuple[np.ndarray, dict], np.ndarray]:
    """Block ``(r, c)`` on a worker: the centre slab ``r`` and context slab ``c`` (each ``[parameters, accumulators]``,
    shape ``(2, rows, D + 1)``) after the block's entries.

    The centre slab comes as the first item of ``row_before`` (what the row's previous block returned, on this
    worker already) with the costs of the blocks it has run (block index -> cost); it goes on with this block's
    cost added.
    """
    center, costs = row_before[0]
    n_center, n_context = center.shape[1], context.shape[1]
    half = max(n_center, n_context)  # the kernel finds context row j at half + j
    params = np.zeros((2 * half, center.shape[2]))
    gradsq = np.ones_like(params)
    params[:n_center], gradsq[:n_center] = center
    params[half:half + n_context], gradsq[half:half + n_context] = context
    rows, cols, values = entries
    costs = {**costs, block: block_pass(params, gradsq, rows, cols, values, seed, learning_rate, grad_clip, x_max,
                                        alpha)}
    return ((np.stack([params[:n_center], gradsq[:n_center]]), costs),
            np.stack([params[half:half + n_context], gradsq[half:half + n_context]]))


def _group_blocks(rows: sp.csr_matrix, column_group: np.ndarray, column_local: np.ndarray,
                  n_groups: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """A row group's G blocks ``(r, c)`` from its rows: local rows and columns (int32) and values (float64), each
    block's entries by row and then by column, as the threads' sources give them."""
    counts = np.diff(rows.indptr)
    local_rows = np.repeat(np.arange(rows.shape[0], dtype=np.int32), counts)
    column_groups = column_group[rows.indices]
    by_block = np.argsort(column_groups, kind="stable")  # stable: each block keeps the row-then-column order
    bounds = np.searchsorted(column_groups[by_block], np.arange(n_groups + 1))
    blocks = []
    for c in range(n_groups):
        taken = by_block[bounds[c]:bounds[c + 1]]
        blocks.append((local_rows[taken], column_local[rows.indices[taken]],
                       np.asarray(rows.data[taken], dtype=np.float64)))
    return blocks


def _read_group_blocks(rows: FileRows, columns: tuple[np.ndarray, np.ndarray], n_groups: int) -> list:
    """On a worker: a row group's G blocks from its rows in the matrix's files (``columns``: each word's group and
    place in it)."""
    return _group_blocks(rows.read(), *columns, n_groups)


class DaskBlockSchedule:
    """The blocks schedule's epoch run on a Dask cluster (see the module's description).

    Parameters
    ----------
    client : dask.distributed.Client
    matrix : scipy.sparse.csr_matrix
        Canonical; read one row group at a time (a memory-mapped matrix is released page by page), on the
        client, or by the workers where its values and columns are in kept files.
    n_groups : int
        G, as on threads.
    x_max, alpha : float
        The weighting function.
    """

    def __init__(self, client, matrix: sp.csr_matrix, n_groups: int, x_max: float, alpha: float):
        self.client = client
        self.matrix = matrix
        self.n_groups = n_groups
        self.x_max, self.alpha = x_max, alpha
        group = word_groups(np.diff(matrix.indptr), n_groups)
        self.members = [np.flatnonzero(group == g) for g in range(n_groups)]
        self.group = group
        self.local = np.empty(group.size, dtype=np.int32)  # each word's place in its group
        for words in self.members:
            self.local[words] = np.arange(words.size, dtype=np.int32)
        self.in_files = FileRows.spans_of(matrix)
        self.owners: list[str] = [""] * n_groups
        self.entries: list[list] = [[] for _ in range(n_groups)]  # futures of the blocks (r, 0..G-1)
        self._send_entries(range(n_groups))
        held = sum(client.nbytes(keys=[future.key for blocks in self.entries for future in blocks],
                                 summary=False).values())
        logger.info("training entries %s %d Dask worker(s): %s bytes, %.1f bytes per nonzero",
                    "read from the matrix's files by" if self.in_files else "sent to", len(set(self.owners)),
                    f"{held:,}", held / max(1, matrix.nnz))

    def _live_workers(self) -> list[str]:
        workers = sorted(self.client.scheduler_info().get("workers", {}))
        if not workers:
            try:
                self.client.wait_for_workers(1, timeout=_WORKER_WAIT_S)
                workers = sorted(self.client.scheduler_info().get("workers", {}))
            except TimeoutError:
                pass
        if not workers:
            raise RuntimeError(f"the Dask cluster has no workers to train on (none came back within "
                               f"{_WORKER_WAIT_S} s)")
        return workers

    def _send_entries(self, row_groups) -> None:
        """Send the row groups' entries to workers, dealt round the live workers (for a matrix in kept files, where
        they are: each owner reads its groups' rows and keeps their blocks)."""
        workers = self._live_workers()
        client, groups = self.client, self.n_groups
        if self.in_files:
            [columns] = client.scatter([(self.group.astype(np.int32), self.local)], broadcast=True, hash=False)
        for r in row_groups:
            owner = self.owners[r] = workers[r % len(workers)]
            if not self.in_files:
                rows = self.matrix[self.members[r]]
                release_pages(self.matrix)
                self.entries[r] = client.scatter(_group_blocks(rows, self.group, self.local, groups), workers=[owner],
                                                 hash=False)
                continue
            # another worker may take the task if the owner leaves first, as it may take the owner's blocks
            blocks = client.submit(_read_group_blocks, FileRows.of(self.matrix, self.in_files, self.members[r]),
                                   columns, groups, workers=[owner], allow_other_workers=True, pure=False)
            self.entries[r] = [client.submit(operator.getitem, blocks, c, workers=[owner], allow_other_workers=True,
                                             pure=False) for c in range(groups)]
        if self.in_files:
            from dask.distributed import wait  # the client is Dask's: dask is installed
            read = [future for r in row_groups for future in self.entries[r]]
            wait(read)
            for future in read:
                if future.status == "error":
                    future.result()  # a worker that could not read the files: its error, here

    def _resend_lost_entries(self) -> None:
        """Send again the row groups whose entries left with a worker (some of their blocks are on no live worker)."""
        kept = [future for blocks in self.entries for future in blocks if future.status == "finished"]
        holders = self.client.who_has(kept) if kept else {}
        live = set(self._live_workers())
        lost = [r for r, blocks in enumerate(self.entries)
                if any(not live.intersection(holders.get(future.key, ())) for future in blocks)]
        if lost:
            logger.warning("a Dask worker left the cluster during training: the entries of %d row group(s) are %s "
                           "again and the epoch runs from its start", len(lost),
                           "read from the matrix's files" if self.in_files else "sent")
            self._send_entries(lost)

    def __call__(self, args: tuple, rng: np.random.Generator, pool=None) -> float:
        groups = self.n_groups
        strata = rng.permutation(groups)
        seeds = rng.integers(2**63 - 1, size=groups**2)
        params, gradsq, learning_rate, grad_clip = args
        for attempt in range(1, _TRIES_PER_EPOCH + 1):
            self._resend_lost_entries()
            try:
                centers, contexts = self._epoch(params, gradsq, strata, seeds, learning_rate, grad_clip)
                break
            except CancelledError:
                if attempt == _TRIES_PER_EPOCH:
                    raise RuntimeError(f"a training epoch lost its data to dying Dask workers {attempt} times "
                                       "(workers keep leaving the cluster)") from None
        n_words = params.shape[0] // 2
        costs = np.zeros(groups**2)
        for words, (center, block_costs), context in zip(self.members, centers, contexts):
            params[words], gradsq[words] = center
            params[n_words + words], gradsq[n_words + words] = context
            for block, cost in block_costs.items():
                costs[block] = cost
        return float(costs.sum())

    def _epoch(self, params: np.ndarray, gradsq: np.ndarray, strata: np.ndarray, seeds: np.ndarray,
               learning_rate: float, grad_clip: float) -> tuple[list, list]:
        """One epoch from the client's parameters; the slabs gathered (the centre slabs with their blocks' costs)."""
        client, groups = self.client, self.n_groups
        n_words = params.shape[0] // 2
        first = int(strata[0])
        rows, contexts = [None] * groups, [None] * groups  # each row group's last result; each context slab
        for g, words in enumerate(self.members):
            # a context slab starts on the worker of the first block that takes it
            [rows[g]] = client.scatter([((np.stack([params[words], gradsq[words]]), {}), None)],
                                       workers=[self.owners[g]], hash=False)
            [contexts[g]] = client.scatter([np.stack([params[n_words + words], gradsq[n_words + words]])],
                                           workers=[self.owners[(g - first) % groups]], hash=False)
        for stratum in strata:
            for r in range(groups):
                c = (r + int(stratum)) % groups
                block = r * groups + c
                rows[r] = client.submit(_run_block, rows[r], contexts[c], self.entries[r][c], block,
                                        int(seeds[block]), learning_rate, grad_clip, self.x_max, self.alpha,
                                        workers=[self.owners[r]], allow_other_workers=True, pure=False)
                # only the context slab moves on: the centre slab stays in rows[r], on this worker
                contexts[c] = client.submit(operator.getitem, rows[r], 1, pure=False)
        centers = client.gather([client.submit(operator.getitem, last, 0, pure=False) for last in rows])
        return centers, client.gather(contexts)
