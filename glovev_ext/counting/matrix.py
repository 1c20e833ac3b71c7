"""The co-occurrence matrix: a CSR matrix that knows its words, and the check every consumer runs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from .._memory import release_pages, row_spans
from .concentration import check_group_concentration


class CooccurrenceMatrix(sp.csr_matrix):
    """A square CSR co-occurrence matrix that carries the word of each row and column.

    It is an ordinary :class:`scipy.sparse.csr_matrix` (every scipy and scikit-learn routine
    accepts it); ``words`` (and ``counts``) let a scikit-learn ``Pipeline`` that starts from raw
    text end with an estimator that knows its vocabulary and its word frequencies. Arithmetic
    results are plain matrices without them.

    Parameters
    ----------
    arg1, shape, dtype, copy
        As for :class:`scipy.sparse.csr_matrix`.
    words : sequence of str, optional
        The word of each row (and column), in index order.
    counts : sequence of int, optional
        How often each word occurs in the corpus, in index order.
    group_concentration : sequence of float, optional
        Each word's concentration over the groups (books, authors) of the text counted,
        ``sum_g c_g^2 / (sum_g c_g)^2`` (:func:`~glovev_ext.counting.group_concentration`; NaN for a
        word none holds), in index order: the noise calibration scales each row by it
        (docs/method.md 6.21). :func:`~glovev_ext.fit_corpus` sets it when given groups.

    Attributes
    ----------
    words : numpy.ndarray of str objects or None
    counts : numpy.ndarray of int64 or None
    group_concentration : numpy.ndarray of float64 or None
    """

    def __init__(self, arg1, shape=None, dtype=None, copy=False, *, words: Sequence[str] | None = None,
                 counts: Sequence[int] | None = None, group_concentration: Sequence[float] | None = None,
                 **kwargs):
        super().__init__(arg1, shape=shape, dtype=dtype, copy=copy, **kwargs)
        if words is not None:
            words = np.asarray(list(words), dtype=object)
            if words.shape != (self.shape[0],):
                raise ValueError(f"words has {words.shape[0]} entries for a matrix with {self.shape[0]} rows")
        if counts is not None:
            counts = np.asarray(counts)
            if counts.shape != (self.shape[0],):
                raise ValueError(f"counts has {counts.size} entries for a matrix with {self.shape[0]} rows")
            if not np.issubdtype(counts.dtype, np.integer) or (counts < 0).any():
                raise ValueError("counts must be non-negative integers")
            counts = counts.astype(np.int64)
        self.words = words
        self.counts = counts
        self.group_concentration = check_group_concentration(group_concentration, self.shape[0],
                                                             "group_concentration")

    def copy(self) -> CooccurrenceMatrix:
        """Return a deep copy, words, counts and concentrations included."""
        return CooccurrenceMatrix(super().copy(), words=self.words,
                                  counts=None if self.counts is None else self.counts.copy(),
                                  group_concentration=(None if self.group_concentration is None
                                                       else self.group_concentration.copy()))


def check_cooccurrence(X: object, *, name: str = "X") -> sp.csr_matrix:
    """Validate a co-occurrence matrix and return it as a canonical float64 CSR matrix.

    Parameters
    ----------
    X : scipy sparse matrix or array, or dense 2-D array
        Square matrix of non-negative, finite co-occurrence weights with at least one positive
        entry.
    name : str
        Name used in error messages.

    Returns
    -------
    scipy.sparse.csr_matrix
        float64, duplicates summed, explicit zeros removed, column indices sorted. A sparse input
        already in that form is not copied: the result shares its arrays (read them, do not write).

    Raises
    ------
    ValueError
        If ``X`` is not 2-D and square, holds NaN, infinite or negative values, or has no
        positive entry.
    """
    if sp.issparse(X):
        if np.iscomplexobj(X.data):
            raise ValueError(f"Complex data not supported: {name} is complex")
        # No copy yet: a canonical CSR matrix (what the vectorizer gives) is returned sharing its arrays.
        matrix = sp.csr_matrix(X, dtype=np.float64)
    else:
        array = np.asarray(X)
        if np.iscomplexobj(array):
            raise ValueError(f"Complex data not supported: {name} is complex")
        try:
            array = array.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must hold numbers, got an array of dtype {array.dtype}") from None
        if array.ndim != 2:
            raise ValueError(f"{name} must be a 2-D square matrix, got an array of shape {array.shape}")
        matrix = sp.csr_matrix(array)
    if matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"{name} must be square (words x words), got shape {matrix.shape}")
    if matrix.shape[0] == 0:
        raise ValueError(f"{name} is empty: shape {matrix.shape}")
    non_finite, negative, zero, canonical = _scan_entries(matrix)
    if non_finite.count:
        row, col = _entry_position(matrix, non_finite.first)
        raise ValueError(f"{name} holds {non_finite.count} NaN or infinite entries, "
                         f"the first at ({row}, {col}): {matrix.data[non_finite.first]}")
    if negative.count:
        row, col = _entry_position(matrix, negative.first)
        raise ValueError(f"Negative values in data: {name} holds {negative.count} negative entries, "
                         f"the first at ({row}, {col}): {matrix.data[negative.first]}")
    if not canonical or zero.count:
        if sp.issparse(X):
            matrix = matrix.copy()  # the caller's matrix is left as it was
        matrix.sum_duplicates()
        matrix.eliminate_zeros()
    else:
        matrix.has_canonical_format = True  # what the scan found (scipy would read every column index again)
    if matrix.nnz == 0:
        raise ValueError(f"{name} has no positive entry: there is nothing to fit")
    release_pages(matrix)
    return matrix


# Entries the check reads at a time: of a matrix mapped from disk, at most their pages are resident at once.
_SCAN_ENTRIES = 1 << 22


class _Tally:
    """Entries of one kind found by a scan: how many, and the position of the first (-1 for none)."""

    def __init__(self):
        self.count, self.first = 0, -1

    def add(self, found: np.ndarray, offset: int) -> None:
        """Count the true entries of the chunk ``found`` that starts at entry ``offset``."""
        n = int(np.count_nonzero(found))
        if n and self.first < 0:
            self.first = offset + int(np.argmax(found))
        self.count += n


def _scan_entries(matrix: sp.csr_matrix) -> tuple[_Tally, _Tally, _Tally, bool]:
    """NaN or infinite entries, negative ones, zeros, and whether every row's columns strictly increase: read
    :data:`_SCAN_ENTRIES` entries at a time (whole rows), each chunk's pages let go of before the next is read."""
    non_finite, negative, zero, canonical = _Tally(), _Tally(), _Tally(), True
    indptr = matrix.indptr
    for start, stop in row_spans(indptr, _SCAN_ENTRIES):
        first, last = int(indptr[start]), int(indptr[stop])
        values = matrix.data[first:last]
        non_finite.add(~np.isfinite(values), first)
        negative.add(values < 0, first)
        zero.add(values == 0, first)
        if canonical and last - first > 1:
            steps = np.diff(matrix.indices[first:last])
            # the step into each row's first column may go down (rows are not compared with each other)
            row_starts = indptr[start + 1:stop] - first - 1
            steps[row_starts[(row_starts >= 0) & (row_starts < steps.size)]] = 1
            canonical = bool((steps > 0).all())
        release_pages(matrix)
    return non_finite, negative, zero, canonical


def _entry_position(matrix: sp.csr_matrix, k: int) -> tuple[int, int]:
    """Row and column of the k-th stored entry of a CSR matrix."""
    row = int(np.searchsorted(matrix.indptr, k, side="right") - 1)
    return row, int(matrix.indices[k])
