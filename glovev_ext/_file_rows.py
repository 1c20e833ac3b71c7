"""Rows of a matrix in files that another process maps itself (a Dask worker that shares the files' folder).

A matrix counted on a Dask cluster keeps its values and column indices in files while it lives
(:func:`~glovev_ext._memory.map_file` with ``keep=True``). A task that needs some of its rows then
carries where they are in those files, a few numbers per row, rather than the rows themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._memory import file_span, map_file, release_pages

# Entries FileRows gathers between two releases of the mapped files' pages (12 MiB of values and columns).
_GATHERED_ENTRIES = 1 << 20


@dataclass(frozen=True, eq=False)  # eq=False: compared by identity, Dask never needs their arrays compared
class FileRows:
    """Rows of a CSR matrix whose values (float64) and columns (int32) are in files kept while it lives: where they
    are, in the order given.

    ``starts`` and ``ends`` are each row's first and past-the-last entry, counted from the matrix's first entry,
    which lies at ``values_offset`` and ``columns_offset`` bytes into the files.
    """

    values_path: str
    values_offset: int
    columns_path: str
    columns_offset: int
    starts: np.ndarray  # int64
    ends: np.ndarray  # int64
    n_columns: int

    @staticmethod
    def spans_of(matrix: sp.csr_matrix) -> tuple | None:
        """Where ``matrix``'s values and columns start in their kept files, or None if either is not in one."""
        if matrix.data.dtype != np.float64 or matrix.indices.dtype != np.int32:
            return None
        spans = (file_span(matrix.data), file_span(matrix.indices))
        return None if None in spans else spans

    @classmethod
    def of(cls, matrix: sp.csr_matrix, spans: tuple, rows: np.ndarray) -> FileRows:
        """The rows ``rows`` of ``matrix`` (in that order), whose files start at ``spans`` (:meth:`spans_of`)."""
        (values_path, values_start), (columns_path, columns_start) = spans
        rows = np.asarray(rows, dtype=np.int64)
        return cls(values_path, values_start, columns_path, columns_start,
                   np.asarray(matrix.indptr[rows], dtype=np.int64), np.asarray(matrix.indptr[rows + 1], dtype=np.int64),
                   matrix.shape[1])

    def read(self) -> sp.csr_matrix:
        """The rows as a CSR matrix: for consecutive rows, its values and columns mapped from the files (nothing
        read until used); else gathered from the files into memory."""
        lengths = self.ends - self.starts
        indptr = np.zeros(lengths.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        first = int(self.starts.min()) if self.starts.size else 0
        last = int(self.ends.max()) if self.ends.size else 0
        values = map_file(self.values_path, np.float64, last - first, offset=self.values_offset // 8 + first)
        columns = map_file(self.columns_path, np.int32, last - first, offset=self.columns_offset // 4 + first)
        if not np.array_equal(self.starts[1:], self.ends[:-1]):
            values, columns = self._gathered(values, columns, lengths, indptr, first)
        return sp.csr_matrix((values, columns, indptr), shape=(lengths.size, self.n_columns), copy=False)

    def _gathered(self, values: np.ndarray, columns: np.ndarray, lengths: np.ndarray, indptr: np.ndarray,
                  first: int) -> tuple[np.ndarray, np.ndarray]:
        """The rows' values and columns copied out of the mapped files, :data:`_GATHERED_ENTRIES` at a time, the
        pages read let go after each: rows scattered over the whole matrix do not make it all resident at once."""
        where = np.repeat(self.starts - first - indptr[:-1], lengths) + np.arange(indptr[-1])
        gathered_values, gathered_columns = np.empty(where.size, values.dtype), np.empty(where.size, columns.dtype)
        for start in range(0, where.size, _GATHERED_ENTRIES):
            taken = where[start:start + _GATHERED_ENTRIES]
            gathered_values[start:start + taken.size] = values[taken]
            gathered_columns[start:start + taken.size] = columns[taken]
            release_pages(values, columns)
        return gathered_values, gathered_columns
