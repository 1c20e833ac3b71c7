"""Partial co-occurrence matrices kept on disk as sorted runs, for counting within a memory budget.

A partial is either an in-memory CSR matrix or a :class:`SortedRun` on disk: its entries as
``key = row * n_words + col`` (int64, ascending) and values (float64), in two raw files. Merging
two partials adds the entries they share as ``earlier + later``, exactly as scipy's sparse
addition does, so a merge tree gives the same bits whether its partials lived in memory or on
disk; only where they live changes. Large merges stream block by block from disk to disk.
"""

from __future__ import annotations

import itertools
import os
import shutil
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp
from numba import njit

from .._memory import map_file
from .._temporaries import make_temporary_folder
from ..atomic import temporary_path

# Bytes per entry of a CSR partial (int32 column, float64 value) and of an entry in flight in a
# block merge (int64 key, float64 value).
_CSR_ENTRY_BYTES = 12
_KEY_ENTRY_BYTES = 16
# Blocks smaller than this cost more in Python overhead than they save in memory.
_MIN_BLOCK_ENTRIES = 1 << 14
# Runs merged at once: each holds two open files and a share of one block, and a block's merge costs the
# number of runs it reads, so the transpose's many runs are merged in a tree of this fan-in.
_MAX_FAN_IN = 16


class SortedRun:
    """One partial on disk: ascending int64 keys and their float64 values, ``nnz`` of each.

    Parameters
    ----------
    keys_path, values_path : str
        The raw files of the keys and the values.
    nnz : int
        Number of entries.
    """

    def __init__(self, keys_path: str, values_path: str, nnz: int):
        self.keys_path = keys_path
        self.values_path = values_path
        self.nnz = nnz

    def remove(self) -> None:
        """Delete the run's files once a merge has consumed it."""
        for path in (self.keys_path, self.values_path):
            os.remove(path)


class SpillingMerger:
    """Merges partials of an ``n_words x n_words`` sum, writing large ones to a temporary folder.

    A merge whose result may exceed a quarter of ``max_memory`` (or that has an input on disk)
    streams to a new run on disk; smaller merges stay in memory. Levels of the binary-counter
    merge roughly double in size, so the partials held in memory stay below about half the budget.
    Runs are read with plain reads, block by block, so the pages they pass through do not stay in
    the resident set; only the final matrix is memory-mapped (:meth:`symmetric_total`). Used as a context manager: the folder and every run
    in it are removed on exit, error or not.

    Parameters
    ----------
    n_words : int
        Rows and columns of the matrices.
    max_memory : int
        Memory budget in bytes for the partials held and the blocks of a streaming merge.
    """

    def __init__(self, n_words: int, max_memory: int):
        self._n_words = n_words
        self._spill_bytes = max_memory // 4
        self._block_entries = max(_MIN_BLOCK_ENTRIES, max_memory // (8 * _KEY_ENTRY_BYTES))
        self._folder: str | None = None
        self._names = itertools.count()
        self._written = threading.Lock()  # runs are written on the counting threads
        self.n_runs_written = 0

    def __enter__(self) -> SpillingMerger:
        self._folder = make_temporary_folder("spill")
        return self

    def __exit__(self, *exc_info) -> None:
        shutil.rmtree(self._folder, ignore_errors=True)

    @property
    def folder(self) -> str | None:
        """The temporary folder of the runs while the merger is open."""
        return self._folder

    def add(self, earlier, later) -> sp.csr_matrix | SortedRun:
        """``earlier + later`` in memory, or as a run on disk when large; the inputs may be futures."""
        earlier, later = resolved(earlier), resolved(later)
        if isinstance(earlier, sp.csr_matrix) and isinstance(later, sp.csr_matrix) \
                and (earlier.nnz + later.nnz) * _CSR_ENTRY_BYTES <= self._spill_bytes:
            return earlier + later
        return self._merge_to_run([earlier, later])

    def symmetric_total(self, partials: list) -> sp.csr_matrix:
        """``Y + Y.T`` as CSR, for ``Y`` the sum of ``partials`` (oldest first) added in that order.

        The additions are those of ``PartialSums.total`` and scipy's ``Y + Y.T``, so the result is
        the in-memory one bit for bit. When the partials are all in memory and ``Y``, ``Y.T`` and
        the result (about four times the partials) fit the budget, the sums are scipy's own.
        Otherwise ``Y`` is merged block by block into a run on disk, its transpose is written as
        sorted runs, and their merge becomes the matrix: its values and column indices memory-mapped
        from files (deleted at once; the mappings keep them until the matrix is freed), its row
        pointers in memory. Counting then holds a block, not the matrix.
        """
        partials = [resolved(partial) for partial in partials]
        if all(isinstance(partial, sp.csr_matrix) for partial in partials) \
                and 4 * sum(partial.nnz for partial in partials) * _CSR_ENTRY_BYTES <= self._spill_bytes:
            right = sp.csr_matrix((self._n_words, self._n_words))
            if partials:
                right = partials.pop(0)
                while partials:
                    right = right + partials.pop(0)
            return right + right.T.tocsr()
        right = self._merge_to_run(partials)
        # The transposed runs hold distinct keys, so merging them adds nothing; then Y[i, j] + Y[j, i] is what
        # scipy adds, and IEEE addition commutes, so any run order gives its bits.
        transposed = self._transposed_runs(right)
        while len(transposed) >= _MAX_FAN_IN:
            transposed = [self._merge_to_run(transposed[start:start + _MAX_FAN_IN])
                          for start in range(0, len(transposed), _MAX_FAN_IN)]
        return self._read_csr(self._merge_to_run([right, *transposed]))

    def _transposed_runs(self, run: SortedRun) -> list[SortedRun]:
        """``run``'s transpose as sorted runs of one block each (``run`` is kept)."""
        runs = []
        with open(run.keys_path, "rb") as keys_file, open(run.values_path, "rb") as values_file:
            while True:
                keys = np.fromfile(keys_file, np.int64, count=self._block_entries)
                if keys.size == 0:
                    return runs
                values = np.fromfile(values_file, np.float64, count=keys.size)
                rows, cols = np.divmod(keys, self._n_words)
                transposed = cols * self._n_words + rows
                order = np.argsort(transposed, kind="stable")
                with self._run_writer() as writer:
                    writer.append(transposed[order], values[order])
                runs.append(writer.run)

    def _read_csr(self, run: SortedRun) -> sp.csr_matrix:
        """The CSR matrix of a run, its values and column indices memory-mapped from files (only the row
        pointers in memory); the run's files are deleted, their contents living on in the mappings."""
        indices_path = run.keys_path + ".indices"
        row_counts = np.zeros(self._n_words, np.int64)
        with open(run.keys_path, "rb") as keys_file, open(indices_path, "wb") as indices_file:
            for _ in range(0, run.nnz, self._block_entries):
                rows, columns = np.divmod(np.fromfile(keys_file, np.int64, count=self._block_entries), self._n_words)
                columns.astype(np.int32).tofile(indices_file)
                row_counts += np.bincount(rows, minlength=self._n_words)
        data, indices = map_file(run.values_path, np.float64, run.nnz), map_file(indices_path, np.int32, run.nnz)
        run.remove()
        os.remove(indices_path)
        indptr = np.zeros(self._n_words + 1, np.int64)
        np.cumsum(row_counts, out=indptr[1:])
        return sp.csr_matrix((data, indices, indptr), shape=(self._n_words, self._n_words))

    def _merge_to_run(self, partials: list) -> SortedRun:
        """Sum ``partials`` (oldest first) into a new run, block by block over the key space; they are released.

        Each partial is read ``block_entries / k`` entries at a time. A block ends below the
        smallest last key read, so it holds at most ``block_entries`` entries and every entry of
        its key range, and each block empties at least one partial's buffer.
        """
        cursors = [_Cursor(partial, self._n_words, max(1, self._block_entries // max(1, len(partials))))
                   for partial in partials]
        try:
            with self._run_writer() as writer:
                while True:
                    lasts = [last for last in (cursor.last_key() for cursor in cursors) if last is not None]
                    if not lasts:
                        break
                    high = min(lasts) + 1
                    keys, values = cursors[0].take_below(high)
                    for cursor in cursors[1:]:
                        keys, values = _merge_sorted(keys, values, *cursor.take_below(high))
                    writer.append(keys, values)
        finally:
            for cursor in cursors:
                cursor.close()
        for partial in partials:
            if isinstance(partial, SortedRun):
                partial.remove()
        partials.clear()  # the caller's list too: the in-memory partials are not held while the total is built
        return writer.run

    @contextmanager
    def _run_writer(self) -> Iterator[_RunWriter]:
        name = os.path.join(self._folder, f"run-{next(self._names)}")
        writer = _RunWriter(name)
        try:
            yield writer
        except BaseException:
            writer.discard()
            raise
        writer.finish()
        with self._written:
            self.n_runs_written += 1


class _RunWriter:
    """Appends blocks of sorted entries to temporary files, renamed to the run's names once complete."""

    def __init__(self, name: str):
        self._final = (name + ".keys", name + ".values")
        self._temporary = tuple(str(temporary_path(path)) for path in self._final)
        self._files = [open(path, "wb") for path in self._temporary]
        self._nnz = 0
        self.run: SortedRun | None = None

    def append(self, keys: np.ndarray, values: np.ndarray) -> None:
        keys.tofile(self._files[0])
        values.tofile(self._files[1])
        self._nnz += keys.size

    def finish(self) -> None:
        # Renamed only once complete, so a run at its final name is never a half-written one.
        for file, temporary, final in zip(self._files, self._temporary, self._final):
            file.close()
            os.replace(temporary, final)
        self.run = SortedRun(*self._final, self._nnz)

    def discard(self) -> None:
        for file, temporary in zip(self._files, self._temporary):
            file.close()
            os.remove(temporary)


class _Cursor:
    """Reads the entries of a CSR partial or a run in ascending key order, a buffer at a time."""

    def __init__(self, partial: sp.csr_matrix | SortedRun, n_words: int, buffer_entries: int):
        self._n_words = n_words
        self._buffer_entries = buffer_entries
        self._keys = np.empty(0, np.int64)
        self._values = np.empty(0, np.float64)
        self._position = 0
        if isinstance(partial, SortedRun):
            self._files = [open(partial.keys_path, "rb"), open(partial.values_path, "rb")]
            self._matrix = None
        else:
            self._files = []
            self._matrix = partial
            partial.sort_indices()
            self._read = 0

    def last_key(self) -> int | None:
        """The largest key buffered, after refilling an empty buffer; None once all is read."""
        if self._position == self._keys.size:
            self._refill()
        return int(self._keys[-1]) if self._keys.size else None

    def take_below(self, high: int) -> tuple[np.ndarray, np.ndarray]:
        """The buffered entries with keys below ``high`` (all entries below it not yet taken)."""
        start = self._position
        self._position = start + int(np.searchsorted(self._keys[start:], high))
        return self._keys[start:self._position], self._values[start:self._position]

    def close(self) -> None:
        for file in self._files:
            file.close()
        self._matrix = None

    def _refill(self) -> None:
        self._position = 0
        if self._matrix is None:
            self._keys = np.fromfile(self._files[0], np.int64, count=self._buffer_entries)
            self._values = np.fromfile(self._files[1], np.float64, count=self._keys.size)
            return
        matrix, start = self._matrix, self._read
        stop = min(start + self._buffer_entries, matrix.nnz)
        rows = np.searchsorted(matrix.indptr, np.arange(start, stop), side="right") - 1
        self._keys = rows.astype(np.int64) * self._n_words + matrix.indices[start:stop]
        self._values = matrix.data[start:stop]
        self._read = stop


@njit(nogil=True, cache=True)
def _merge_sorted(keys_a, values_a, keys_b, values_b):
    """Union of two ascending key arrays; a key in both gets ``a + b``, as scipy's sparse addition."""
    keys = np.empty(keys_a.size + keys_b.size, np.int64)
    values = np.empty(keys.size, np.float64)
    i = j = n = 0
    while i < keys_a.size and j < keys_b.size:
        if keys_a[i] < keys_b[j]:
            keys[n], values[n] = keys_a[i], values_a[i]
            i += 1
        elif keys_b[j] < keys_a[i]:
            keys[n], values[n] = keys_b[j], values_b[j]
            j += 1
        else:
            keys[n], values[n] = keys_a[i], values_a[i] + values_b[j]
            i += 1
            j += 1
        n += 1
    while i < keys_a.size:
        keys[n], values[n] = keys_a[i], values_a[i]
        i += 1
        n += 1
    while j < keys_b.size:
        keys[n], values[n] = keys_b[j], values_b[j]
        j += 1
        n += 1
    return keys[:n], values[:n]


def resolved(partial):
    """A partial, or the result of a future of one."""
    return partial.result() if isinstance(partial, Future) else partial
