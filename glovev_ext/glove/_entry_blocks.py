"""The training entries of the blocks schedule, grouped by block, in memory or in a file on disk.

The blocks schedule (see :func:`~glovev_ext.glove.train_glove`) deals the words into G groups and
runs the entries block by block, block ``(r, c)`` holding the entries whose centre word is in group
``r`` and context word in group ``c``. Both sources below give each block's entries in the same
order, by row and then by column as in the CSR matrix, so an epoch run from either gives the same
bits. :class:`MemoryBlocks` keeps one index per nonzero (4 bytes) beside the matrix;
:class:`FileBlocks` writes the entries to a file once and holds nothing per nonzero: a block is read
when it runs and dropped after.
"""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp
from numba import njit

from .._memory import release_pages, row_spans

# Bytes per entry in a blocks file: int32 row, int32 column, float64 value.
ENTRY_FILE_BYTES = 16
# Bytes per entry of the chunk in hand while a blocks file is written: its columns and values (12), rows (4),
# positions (8), and the record written (16).
CHUNK_ENTRY_BYTES = 40


def word_groups(entries_per_word: np.ndarray, n_groups: int) -> np.ndarray:
    """Each word's group, dealing words from the most entries down in a snake order (0..G-1, G-1..0, ...)
    so that the groups hold about equal numbers of entries."""
    ranked = np.argsort(-entries_per_word, kind="stable")
    position = np.arange(ranked.size) % (2 * n_groups)
    group = np.empty(ranked.size, dtype=np.int64)
    group[ranked] = np.where(position < n_groups, position, 2 * n_groups - 1 - position)
    return group


def _index_dtype(nnz: int) -> type:
    return np.int32 if nnz < 2**31 else np.int64


@njit(nogil=True, cache=True)
def _block_counts(indptr, indices, group, n_groups, first_row, counts):
    """Add to ``counts`` the entries of each block among the rows ``first_row...`` of ``indptr``."""
    for r in range(indptr.size - 1):
        row_block = group[first_row + r] * n_groups
        for k in range(indptr[r] - indptr[0], indptr[r + 1] - indptr[0]):
            counts[row_block + group[indices[k]]] += 1


@njit(nogil=True, cache=True)
def _deal_entries(indptr, indices, group, n_groups, first_row, first_entry, cursor, order):
    """Write each entry's position (``first_entry`` + its index in the rows) to its block's next slot."""
    for r in range(indptr.size - 1):
        row_block = group[first_row + r] * n_groups
        for k in range(indptr[r] - indptr[0], indptr[r + 1] - indptr[0]):
            block = row_block + group[indices[k]]
            order[cursor[block]] = first_entry + k
            cursor[block] += 1


class MemoryBlocks:
    """The blocks of a CSR matrix held in memory: one entry index per nonzero, sorted by block.

    Parameters
    ----------
    matrix : scipy.sparse.csr_matrix
        Canonical (sorted indices, no duplicates).
    n_groups : int
    """

    def __init__(self, matrix: sp.csr_matrix, n_groups: int):
        self.matrix = matrix
        self.n_groups = n_groups
        group = word_groups(np.diff(matrix.indptr), n_groups)
        counts = np.zeros(n_groups**2, dtype=np.int64)
        _block_counts(matrix.indptr, matrix.indices, group, n_groups, 0, counts)
        self.bounds = np.concatenate([[0], np.cumsum(counts)])
        self.order = np.empty(matrix.nnz, dtype=_index_dtype(matrix.nnz))
        _deal_entries(matrix.indptr, matrix.indices, group, n_groups, 0, 0, self.bounds[:-1].copy(), self.order)

    def read(self, block: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The block's rows (int32), columns (int32) and values (float64), by row then column."""
        entries = self.order[self.bounds[block]:self.bounds[block + 1]]
        rows = (np.searchsorted(self.matrix.indptr, entries, side="right") - 1).astype(np.int32)
        return rows, self.matrix.indices[entries].astype(np.int32, copy=False), self.matrix.data[entries]


class FileBlocks:
    """The blocks of a matrix written once to a file: each block's rows, columns and values together.

    Parameters
    ----------
    matrix : scipy.sparse.csr_matrix
        Canonical; read in chunks of rows (a matrix whose arrays are memory-mapped is read as it is
        written out).
    n_groups : int
    path : str or path
        The file to write (replaced); :meth:`remove` deletes it.
    chunk_entries : int
        Entries read from the matrix at once while the file is written (a row more if one row holds more).
    """

    def __init__(self, matrix: sp.csr_matrix, n_groups: int, path: str | os.PathLike, chunk_entries: int = 1 << 20):
        self.path = os.fspath(path)
        self.n_groups = n_groups
        group = word_groups(np.diff(matrix.indptr), n_groups)
        chunks = row_spans(matrix.indptr, chunk_entries)
        chunk_counts = np.zeros((len(chunks), n_groups**2), dtype=np.int64)  # each chunk's entries per block
        for k, (start, stop) in enumerate(chunks):
            _block_counts(matrix.indptr[start:stop + 1], matrix.indices[matrix.indptr[start]:matrix.indptr[stop]],
                          group, n_groups, start, chunk_counts[k])
            release_pages(matrix)
        self.bounds = np.concatenate([[0], np.cumsum(chunk_counts.sum(axis=0))])
        cursor = self.bounds[:-1].copy()
        with open(self.path, "wb") as handle:
            handle.truncate(int(self.bounds[-1]) * ENTRY_FILE_BYTES)
            descriptor = handle.fileno()
            for (start, stop), counts in zip(chunks, chunk_counts):
                self._write_chunk(descriptor, matrix, group, start, stop, counts, cursor)
                release_pages(matrix)

    def _write_chunk(self, descriptor: int, matrix: sp.csr_matrix, group: np.ndarray, start: int, stop: int,
                     counts: np.ndarray, cursor: np.ndarray) -> None:
        """Append the entries of rows ``start:stop`` (``counts`` of them per block) to their blocks, each block's
        slots in order."""
        indptr = matrix.indptr[start:stop + 1]
        first, last = int(indptr[0]), int(indptr[-1])
        cols = np.asarray(matrix.indices[first:last], dtype=np.int32)
        values = np.asarray(matrix.data[first:last], dtype=np.float64)
        rows = np.repeat(np.arange(start, stop, dtype=np.int32), np.diff(indptr))
        local = np.empty(last - first, dtype=np.int64)
        local_bounds = np.concatenate([[0], np.cumsum(counts)])
        _deal_entries(indptr, cols, group, self.n_groups, start, 0, local_bounds[:-1].copy(), local)
        for block in np.flatnonzero(counts):
            taken = local[local_bounds[block]:local_bounds[block + 1]]
            record = np.empty(taken.size, dtype=[("row", np.int32), ("col", np.int32), ("value", np.float64)])
            record["row"], record["col"], record["value"] = rows[taken], cols[taken], values[taken]
            os.pwrite(descriptor, record.tobytes(), int(cursor[block]) * ENTRY_FILE_BYTES)
            cursor[block] += taken.size

    def read(self, block: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The block's rows (int32), columns (int32) and values (float64), by row then column."""
        start, stop = int(self.bounds[block]), int(self.bounds[block + 1])
        record = np.fromfile(self.path, dtype=[("row", np.int32), ("col", np.int32), ("value", np.float64)],
                             count=stop - start, offset=start * ENTRY_FILE_BYTES)
        if record.size != stop - start:
            raise OSError(f"the training entries file {self.path} is truncated (block {block})")
        return (np.ascontiguousarray(record["row"]), np.ascontiguousarray(record["col"]),
                np.ascontiguousarray(record["value"]))

    def remove(self) -> None:
        """Delete the file."""
        if os.path.exists(self.path):
            os.remove(self.path)
