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
import tempfile
from concurrent.futures import Future

import numpy as np
import scipy.sparse as sp
from numba import njit

from ..atomic import temporary_path

# Bytes per entry of a CSR partial (int32 column, float64 value) and of an entry in flight in a
# block merge (int64 key, float64 value).
_CSR_ENTRY_BYTES = 12
_KEY_ENTRY_BYTES = 16
# Blocks smaller than this cost more in Python overhead than they save in memory.
_MIN_BLOCK_ENTRIES = 1 << 14


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

    def keys(self) -> np.ndarray:
        """The keys, memory-mapped (an empty array when the run is empty)."""
        if self.nnz == 0:
            return np.empty(0, np.int64)
        return np.memmap(self.keys_path, dtype=np.int64, mode="r", shape=(self.nnz,))

    def values(self) -> np.ndarray:
        """The values, memory-mapped (an empty array when the run is empty)."""
        if self.nnz == 0:
            return np.empty(0, np.float64)
        return np.memmap(self.values_path, dtype=np.float64, mode="r", shape=(self.nnz,))

    def remove(self) -> None:
        """Delete the run's files once a merge has consumed it."""
        for path in (self.keys_path, self.values_path):
            os.remove(path)


class SpillingMerger:
    """Merges partials of an ``n_words x n_words`` sum, writing large ones to a temporary folder.

    A merge whose result may exceed a quarter of ``max_memory`` (or that has an input on disk)
    streams to a new run on disk; smaller merges stay in memory. Levels of the binary-counter
    merge roughly double in size, so the partials held in memory stay below about half the budget.
    Used as a context manager: the folder and every run in it are removed on exit, error or not.

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
        self.n_runs_written = 0

    def __enter__(self) -> SpillingMerger:
        self._folder = tempfile.mkdtemp(prefix="glovev-spill-")
        return self

    def __exit__(self, *exc_info) -> None:
        shutil.rmtree(self._folder, ignore_errors=True)

    @property
    def folder(self) -> str | None:
        """The temporary folder of the runs while the merger is open."""
        return self._folder

    def add(self, earlier, later) -> sp.csr_matrix | SortedRun:
        """``earlier + later`` in memory, or as a run on disk when large; the inputs may be futures."""
        earlier, later = _resolved(earlier), _resolved(later)
        if isinstance(earlier, sp.csr_matrix) and isinstance(later, sp.csr_matrix) \
                and (earlier.nnz + later.nnz) * _CSR_ENTRY_BYTES <= self._spill_bytes:
            return earlier + later
        return self._merge_to_run([earlier, later])

    def total(self, partials: list) -> sp.csr_matrix:
        """The sum of ``partials`` (oldest first) as CSR, added in that order as ``PartialSums.total`` does.

        Unless they are all in memory and small, the partials are merged block by block into one
        run on disk, which is then read into the CSR arrays, so the merge holds the final matrix
        plus one block.
        """
        partials = [_resolved(partial) for partial in partials]
        if not partials:
            return sp.csr_matrix((self._n_words, self._n_words))
        if all(isinstance(partial, sp.csr_matrix) for partial in partials) \
                and sum(partial.nnz for partial in partials) * _CSR_ENTRY_BYTES <= 2 * self._spill_bytes:
            total = partials.pop(0)
            while partials:
                total = total + partials.pop(0)
            return total
        run = self._merge_to_run(partials)
        data = np.fromfile(run.values_path, dtype=np.float64, count=run.nnz)
        indices = np.empty(run.nnz, np.int32)
        row_counts = np.zeros(self._n_words, np.int64)
        keys = run.keys()
        for start in range(0, run.nnz, self._block_entries):
            block = np.asarray(keys[start:start + self._block_entries])
            rows, indices[start:start + block.size] = np.divmod(block, self._n_words)
            row_counts += np.bincount(rows, minlength=self._n_words)
        del keys
        run.remove()
        indptr = np.zeros(self._n_words + 1, np.int64)
        np.cumsum(row_counts, out=indptr[1:])
        return sp.csr_matrix((data, indices, indptr), shape=(self._n_words, self._n_words))

    def _merge_to_run(self, partials: list) -> SortedRun:
        """Sum ``partials`` (oldest first) into a new run, block by block over the key space."""
        sources = [_Entries(partial, self._n_words) for partial in partials]
        # Each partial cuts the key space every block_entries / k of its own entries, so a block
        # between consecutive cuts holds at most block_entries entries of all partials together.
        step = max(1, self._block_entries // len(sources))
        cuts = np.unique(np.concatenate([source.sampled_keys(step) for source in sources]
                                        + [np.array([self._n_words * self._n_words], np.int64)]))
        name = os.path.join(self._folder, f"run-{next(self._names)}")
        keys_path, values_path = temporary_path(name + ".keys"), temporary_path(name + ".values")
        nnz = 0
        with open(keys_path, "wb") as keys_file, open(values_path, "wb") as values_file:
            low = 0
            for high in cuts.tolist():
                keys, values = sources[0].between(low, high)
                for source in sources[1:]:
                    keys, values = _merge_sorted(keys, values, *source.between(low, high))
                keys.tofile(keys_file)
                values.tofile(values_file)
                nnz += keys.size
                low = high
        # Renamed only once complete, so a run at its final name is never a half-written one.
        os.replace(keys_path, name + ".keys")
        os.replace(values_path, name + ".values")
        for source in sources:
            source.release()
        self.n_runs_written += 1
        return SortedRun(name + ".keys", name + ".values", nnz)


class _Entries:
    """Keyed access to the entries of a CSR partial or a run, between two keys."""

    def __init__(self, partial: sp.csr_matrix | SortedRun, n_words: int):
        self._partial = partial
        self._n_words = n_words
        if isinstance(partial, SortedRun):
            self._keys, self._values = partial.keys(), partial.values()
        else:
            partial.sort_indices()

    def sampled_keys(self, step: int) -> np.ndarray:
        """Every ``step``-th key, from the first."""
        if isinstance(self._partial, SortedRun):
            return np.asarray(self._keys[::step])
        positions = np.arange(0, self._partial.nnz, step)
        rows = np.searchsorted(self._partial.indptr, positions, side="right") - 1
        return rows.astype(np.int64) * self._n_words + self._partial.indices[positions]

    def between(self, low: int, high: int) -> tuple[np.ndarray, np.ndarray]:
        """The keys in ``[low, high)`` and their values, as in-memory arrays."""
        if isinstance(self._partial, SortedRun):
            start, stop = np.searchsorted(self._keys, [low, high])
            return np.asarray(self._keys[start:stop]), np.asarray(self._values[start:stop])
        matrix = self._partial
        first_row, last_row = low // self._n_words, min((high - 1) // self._n_words, self._n_words - 1)
        start, stop = matrix.indptr[first_row], matrix.indptr[last_row + 1]
        rows = np.repeat(np.arange(first_row, last_row + 1, dtype=np.int64), np.diff(matrix.indptr[first_row:last_row + 2]))
        keys = rows * self._n_words + matrix.indices[start:stop]
        inside = slice(*np.searchsorted(keys, [low, high]))
        return keys[inside], matrix.data[start:stop][inside]

    def release(self) -> None:
        """Drop the partial; a run's files are deleted."""
        if isinstance(self._partial, SortedRun):
            del self._keys, self._values
            self._partial.remove()
        self._partial = None


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


def _resolved(partial):
    return partial.result() if isinstance(partial, Future) else partial
