"""Memory given back: arrays memory-mapped from files on disk, the pages a pass over them has read, and the
heap a stage has freed.

A co-occurrence matrix counted under a memory budget keeps its column indices and values in files
mapped into memory (:func:`map_file`): the operating system reads them in as they are used. The
pages read stay in the process's resident set until memory runs short, so a pass over the whole
matrix would show the whole matrix as resident; :func:`release_pages` drops them from this process
(they stay in the page cache, and are read back if used again), which passes call after each block;
scattered reads of small parts, such as a statistic's words' factors, are counted with
:func:`count_read`, which lets go every so many reads.
:func:`trim_heap` hands the C heap's free memory back to the operating system after a stage that
allocated and freed many blocks (counting), which glibc otherwise keeps for the process.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import mmap
import os
import weakref

import numpy as np
import scipy.sparse as sp


# The read-only file mappings map_file made (the only bare mmap objects whose pages are let go of).
_FILE_MAPPINGS: weakref.WeakSet = weakref.WeakSet()
# Of those, the ones whose file is kept while they live (map_file's keep): its path and the byte offset mapped from.
_KEPT_FILES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_SHARED_MODES = ("r", "r+", "w+", "readonly", "readwrite", "write")
# madvise exists on Unix only; elsewhere the pages stay until the system reclaims them.
_DONT_NEED = getattr(mmap, "MADV_DONTNEED", None) if hasattr(mmap.mmap, "madvise") else None


def map_file(path: str | os.PathLike, dtype, count: int, *, offset: int = 0, keep: bool = False) -> np.ndarray:
    """Items ``offset`` to ``offset + count - 1`` of the raw file ``path`` as a read-only array mapped from it.

    Parameters
    ----------
    path : str or path
    dtype : numpy dtype
    count : int
        Items mapped.
    offset : int, default=0
        Items of the file before the first one mapped.
    keep : bool, default=False
        Keep the file while the mapping lives, so that other processes that share its folder (a
        Dask cluster's workers) can map the same items (:func:`file_span`), and delete it (and
        its folder, once empty) when the mapping is freed. Otherwise the caller may delete the
        file at once: the mapping keeps its contents until the array is freed.
    """
    dtype = np.dtype(dtype)
    if count == 0:
        return np.empty(0, dtype=dtype)
    start, end = offset * dtype.itemsize, (offset + count) * dtype.itemsize
    aligned = start - start % mmap.ALLOCATIONGRANULARITY
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size < end:
            raise OSError(f"{path} holds {size} bytes, fewer than the {end} of {offset + count} {dtype} "
                          "items: it is truncated")
        mapping = mmap.mmap(handle.fileno(), end - aligned, access=mmap.ACCESS_READ, offset=aligned)
    _FILE_MAPPINGS.add(mapping)
    if keep:
        _KEPT_FILES[mapping] = (os.path.abspath(path), aligned)
        weakref.finalize(mapping, _remove_file, os.path.abspath(path))
    return np.frombuffer(mapping, dtype=dtype, count=count, offset=start - aligned)


def file_span(array: np.ndarray) -> tuple[str, int] | None:
    """For a 1-D contiguous ``array`` that views a file kept by :func:`map_file` (``keep=True``): the file's path and
    the byte offset of the array's first item in it (what another process needs to map the same items); else None."""
    mapping = mapping_of(array)
    kept = _KEPT_FILES.get(mapping) if mapping is not None else None
    if kept is None or array.ndim != 1 or not array.flags.c_contiguous:
        return None
    path, mapped_from = kept
    first = array.__array_interface__["data"][0] - np.frombuffer(mapping, np.uint8).__array_interface__["data"][0]
    return path, mapped_from + first


def _remove_file(path: str) -> None:
    """Delete a kept file when its mapping is freed, and its folder if that leaves it empty."""
    try:
        os.remove(path)
        os.rmdir(os.path.dirname(path))
    except OSError:  # gone already, or the folder holds other files still mapped
        pass


def mapping_of(array: np.ndarray) -> mmap.mmap | None:
    """The mapping of a file shared with this process that ``array`` views, or None.

    Only mappings whose pages can be let go of without losing data count: those :func:`map_file`
    made, and ``numpy.memmap`` arrays opened read-only or read-write (``"r"``, ``"r+"``, ``"w+"``).
    Anonymous mappings (memory) and copy-on-write ones (``"c"``, whose changes live only in this
    process) are None.
    """
    base = array
    while isinstance(base, np.ndarray):
        if isinstance(base, np.memmap):
            shared = base.mode in _SHARED_MODES and isinstance(base.base, mmap.mmap)
            return base.base if shared else None
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    return base if isinstance(base, mmap.mmap) and base in _FILE_MAPPINGS else None


# Reads of each file mapping since its pages were last let go (count_read).
_READS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# A read maps a whole folio of the file, up to 2 MiB, around it: 16 reads hold at most 32 MiB.
_RELEASE_EVERY_READS = 16


def count_read(mapping: mmap.mmap | None) -> None:
    """Count a read of the file mapping ``mapping`` (:func:`mapping_of` an array read; None, an array in memory:
    nothing) and let go of its pages every :data:`_RELEASE_EVERY_READS` reads.

    For scattered reads of small parts of a large file, such as a statistic's few hundred words'
    factors: the kernel maps a whole folio (up to 2 MiB) of the file around each part read, so
    the reads would keep up to 2 MiB each resident. Reads close together share a folio until the
    release, so reading a file in order costs one fault per folio per release, not one per read.
    """
    if mapping is None:
        return
    _READS[mapping] = _READS.get(mapping, 0) + 1
    if _READS[mapping] >= _RELEASE_EVERY_READS:
        _let_go(mapping)


def release_pages(*holders: sp.spmatrix | np.ndarray | None) -> None:
    """Drop the pages of the memory-mapped arrays in ``holders`` from this process's resident set.

    A holder is a sparse matrix (its values and indices), an array, or None. Arrays held in memory
    are left as they are. The data stay where they are: a page used again is read back from the
    page cache or the file.
    """
    for holder in holders:
        arrays = (holder,) if isinstance(holder, np.ndarray) else (getattr(holder, "data", None),
                                                                   getattr(holder, "indices", None))
        for array in arrays:
            mapping = mapping_of(array) if isinstance(array, np.ndarray) else None
            if mapping is not None:
                _let_go(mapping)


def _let_go(mapping: mmap.mmap) -> None:
    """Drop ``mapping``'s pages from this process's resident set and start its count of reads again."""
    if not mapping.closed and _DONT_NEED is not None:
        mapping.madvise(_DONT_NEED)
        _READS.pop(mapping, None)


def consecutive_rows(matrix: sp.csr_matrix, first: int, stop: int) -> sp.csr_matrix:
    """Rows ``first`` to ``stop - 1`` of a CSR matrix, their values and columns views of ``matrix``'s (nothing copied
    but the row pointers; nothing of a memory-mapped matrix read)."""
    start, end = matrix.indptr[first], matrix.indptr[stop]
    return sp.csr_matrix((matrix.data[start:end], matrix.indices[start:end], matrix.indptr[first:stop + 1] - start),
                         shape=(stop - first, matrix.shape[1]), copy=False)


def row_spans(indptr: np.ndarray, entries: int) -> list[tuple[int, int]]:
    """Consecutive row ranges ``(start, stop)`` of a CSR matrix's row pointers, each of at most ``entries`` entries
    (or one row): the spans a pass reads and lets go of in turn."""
    n_rows = indptr.size - 1
    spans, start = [], 0
    while start < n_rows:
        stop = int(np.searchsorted(indptr, indptr[start] + entries, side="right")) - 1
        stop = min(max(stop, start + 1), n_rows)
        spans.append((start, stop))
        start = stop
    return spans


# Entries row_sums sums between two releases of a mapped matrix's pages (48 MiB of 4-byte indices, 8-byte values).
_SUMMED_ENTRIES = 1 << 22


def row_sums(matrix: sp.csr_matrix) -> np.ndarray:
    """Each row's sum of a CSR matrix (``matrix.sum(axis=1)`` raveled, the same numbers), a span of rows at a time,
    the pages of a memory-mapped matrix let go after each span: a sum over the whole matrix does not make it all
    resident at once."""
    parts = []
    for first, stop in row_spans(matrix.indptr, _SUMMED_ENTRIES):
        parts.append(np.asarray(consecutive_rows(matrix, first, stop).sum(axis=1)).ravel())
        release_pages(matrix)
    return np.concatenate(parts) if parts else np.asarray(matrix.sum(axis=1)).ravel()


def trim_heap() -> None:
    """Give the C heap's free memory back to the operating system (glibc's ``malloc_trim``; elsewhere nothing)."""
    library = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(library).malloc_trim if library else None
    except (OSError, AttributeError):  # not glibc
        trim = None
    if trim is not None:
        trim(0)
    else:
        logging.getLogger(__name__).debug("no malloc_trim in this C library: the heap is left as it is")
