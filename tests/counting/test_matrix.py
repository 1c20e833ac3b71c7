"""check_cooccurrence: canonical matrices pass through without a copy; others are fixed in a copy."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import glovev_ext


def test_a_canonical_matrix_is_not_copied(small_cooccurrence):
    checked = glovev_ext.counting.matrix.check_cooccurrence(small_cooccurrence)
    assert np.shares_memory(checked.data, small_cooccurrence.data)
    assert (checked != small_cooccurrence).nnz == 0


def test_duplicates_and_zeros_are_fixed_in_a_copy():
    rows, cols = np.array([0, 0, 1, 2]), np.array([1, 1, 2, 0])
    raw = sp.csr_matrix((np.array([1.0, 2.0, 0.0, 4.0]), (rows, cols)), shape=(3, 3))
    raw.has_canonical_format = False
    raw.indices, raw.data = np.array([1, 1, 2, 0], np.int32), np.array([1.0, 2.0, 0.0, 4.0])
    raw.indptr = np.array([0, 2, 3, 4], np.int32)
    before = (raw.indptr.copy(), raw.indices.copy(), raw.data.copy())
    checked = glovev_ext.counting.matrix.check_cooccurrence(raw)
    np.testing.assert_array_equal(checked.toarray(), [[0, 3, 0], [0, 0, 0], [4, 0, 0]])
    assert checked.nnz == 2 and checked.has_canonical_format
    for array, saved in zip((raw.indptr, raw.indices, raw.data), before):
        np.testing.assert_array_equal(array, saved)
