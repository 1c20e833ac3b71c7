"""The rows of a co-occurrence matrix's transpose, without a copy when the matrix is its own transpose."""

from __future__ import annotations

import scipy.sparse as sp
from numba import njit


@njit(nogil=True, cache=True)
def _is_symmetric(indptr, indices, data):
    """Whether every entry (i, j, v) has its mirror (j, i, v), bit for bit (rows' indices sorted)."""
    for i in range(indptr.size - 1):
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            low, high = indptr[j], indptr[j + 1]
            while low < high:  # the first position of row j whose column is >= i
                middle = (low + high) // 2
                if indices[middle] < i:
                    low = middle + 1
                else:
                    high = middle
            if low == indptr[j + 1] or indices[low] != i or data[low] != data[k]:
                return False
    return True


def transposed_rows(cooccurrence: sp.csr_matrix) -> sp.csr_matrix:
    """The transpose as canonical CSR: the matrix itself when it equals its transpose exactly (the
    symmetric counts of a window, ``Y + Y.T``, do), else a sorted copy of the transpose.

    Checking costs no memory; the copy costs the matrix's size again.
    """
    square = cooccurrence.shape[0] == cooccurrence.shape[1]
    if square and cooccurrence.has_sorted_indices and _is_symmetric(cooccurrence.indptr, cooccurrence.indices,
                                                                     cooccurrence.data):
        return cooccurrence
    transposed = cooccurrence.T.tocsr()
    transposed.sort_indices()
    return transposed
