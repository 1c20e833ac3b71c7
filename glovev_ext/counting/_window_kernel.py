"""Numba kernel that counts distance-weighted right contexts in one chunk of a corpus.

The vectorizer feeds this kernel chunks of word ids; it never sees text. Each chunk yields the
CSR parts of ``Y`` with ``Y[a, b] = sum 1/d`` over every occurrence of word ``b`` exactly ``d``
in-vocabulary positions to the right of word ``a`` (``1 <= d <= window``) in the same document.
The symmetric co-occurrence matrix of the C tool is then ``X = Y + Y.T``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._prefetch import prefetch_item
from ._kernel_arrays import grown

_PREFETCH_DISTANCE = 16


@njit(nogil=True, cache=True)
def _sentinel_stream(ids, doc_ends):
    """In-vocabulary ids with a -1 after every document, so windows stop at the first -1.

    Dropping out-of-vocabulary words before windows are formed is what the C tool does.
    """
    stream = np.empty(ids.size + doc_ends.size, np.int32)
    n = 0
    start = 0
    for d in range(doc_ends.size):
        for p in range(start, doc_ends[d]):
            if ids[p] >= 0:
                stream[n] = ids[p]
                n += 1
        stream[n] = -1
        n += 1
        start = doc_ends[d]
    return stream[:n]


@njit(nogil=True, cache=True)
def _heapsort(values, start, stop):
    """Sort ``values[start:stop]`` in place (a loop numba compiles in a fraction of ``ndarray.sort``'s time)."""
    n = stop - start
    for root in range(n // 2 - 1, -1, -1):
        _sift_down(values, start, root, n)
    for end in range(n - 1, 0, -1):
        values[start], values[start + end] = values[start + end], values[start]
        _sift_down(values, start, 0, end)


@njit(nogil=True, cache=True)
def _sift_down(values, start, root, n):
    while True:
        child = 2 * root + 1
        if child >= n:
            return
        if child + 1 < n and values[start + child + 1] > values[start + child]:
            child += 1
        if values[start + root] >= values[start + child]:
            return
        values[start + root], values[start + child] = values[start + child], values[start + root]
        root = child


@njit(nogil=True, cache=True)
def _sort_touched_columns(indices, start, stop, last_row_seen, row):
    """Sort the columns a row touched: insertion sort when few, a scan of all columns when many."""
    n_words = last_row_seen.size
    count = stop - start
    if count < 48:
        for i in range(start + 1, stop):
            v = indices[i]
            j = i - 1
            while j >= start and indices[j] > v:
                indices[j + 1] = indices[j]
                j -= 1
            indices[j + 1] = v
    elif count * 16 < n_words:
        _heapsort(indices, start, stop)
    else:
        k = start
        for c in range(n_words):
            if last_row_seen[c] == row:
                indices[k] = c
                k += 1


@njit(nogil=True, cache=True)
def count_right_contexts(ids, doc_ends, window, n_words):
    """Distance-weighted right-context counts of one chunk, as CSR arrays.

    Parameters
    ----------
    ids : ndarray of int32
        Word ids of the chunk in corpus order; negative ids are out-of-vocabulary words and are
        removed before windows are formed.
    doc_ends : ndarray of int64
        Exclusive end offset in ``ids`` of each document of the chunk, ascending.
    window : int
        Number of positions looked at to the right of each word.
    n_words : int
        Vocabulary size (number of rows and columns).

    Returns
    -------
    indptr : ndarray of int64
    indices : ndarray of int32
        Sorted within each row.
    data : ndarray of float64
    """
    stream = _sentinel_stream(ids, doc_ends)

    # Positions grouped by centre word (a counting sort), so each row is accumulated at once in
    # a dense scratch row: one scattered write per token instead of one per pair.
    row_starts = np.zeros(n_words + 1, np.int64)
    for p in range(stream.size):
        if stream[p] >= 0:
            row_starts[stream[p] + 1] += 1
    for r in range(n_words):
        row_starts[r + 1] += row_starts[r]
    positions = np.empty(row_starts[n_words], np.int64)
    fill = row_starts[:n_words].copy()
    for p in range(stream.size):
        r = stream[p]
        if r >= 0:
            positions[fill[r]] = p
            fill[r] += 1

    inverse_distance = np.zeros(window + 1)
    for k in range(1, window + 1):
        inverse_distance[k] = 1.0 / k

    accumulator = np.zeros(n_words)
    last_row_seen = np.full(n_words, -1, np.int64)
    indptr = np.empty(n_words + 1, np.int64)
    capacity = max(1024, 2 * positions.size)
    indices = np.empty(capacity, np.int32)
    data = np.empty(capacity)
    nnz = 0
    for r in range(n_words):
        indptr[r] = nnz
        for k in range(row_starts[r], row_starts[r + 1]):
            if k + _PREFETCH_DISTANCE < positions.size:
                prefetch_item(stream, positions[k + _PREFETCH_DISTANCE])
            p = positions[k]
            for d in range(1, window + 1):
                c = stream[p + d]
                if c < 0:
                    break
                if last_row_seen[c] != r:
                    last_row_seen[c] = r
                    accumulator[c] = 0.0
                    if nnz == indices.size:
                        indices = grown(indices, 2 * indices.size)
                        data = grown(data, 2 * data.size)
                    indices[nnz] = c
                    nnz += 1
                accumulator[c] += inverse_distance[d]
        _sort_touched_columns(indices, indptr[r], nnz, last_row_seen, r)
        for t in range(indptr[r], nnz):
            data[t] = accumulator[indices[t]]
    indptr[n_words] = nnz
    return indptr, indices[:nnz].copy(), data[:nnz].copy()
