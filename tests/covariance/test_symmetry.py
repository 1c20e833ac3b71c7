"""The transpose's rows: the matrix itself only when it is its own transpose bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from glovev_ext.covariance._symmetry import transposed_rows


def brute_force_symmetric(X) -> bool:
    dense = X.toarray()
    return bool(np.array_equal(dense, dense.T))


def test_counted_matrices_are_their_own_transpose(embedded_cooccurrence):
    assert brute_force_symmetric(embedded_cooccurrence[:500, :500])
    assert transposed_rows(embedded_cooccurrence) is embedded_cooccurrence


@pytest.mark.parametrize("change", ["value", "drop", "add"])
def test_an_asymmetric_matrix_gives_its_sorted_transpose(change):
    Y = sp.random(60, 60, density=0.1, random_state=np.random.RandomState(0), format="csr")
    X = (Y + Y.T).tocsr()
    X.sort_indices()
    assert transposed_rows(X) is X
    i, j = X.nonzero()[0][3], X.nonzero()[1][3]
    X = X.tolil()
    if change == "value":  # one ulp off on one side
        X[i, j] = np.nextafter(X[i, j], np.inf)
    elif change == "drop":  # one side missing
        X[i, j] = 0
    else:  # an entry without its mirror
        k = next(k for k in range(60) if X[0, k] == 0 and k != 0)
        X[k, 0] = 1.5
    X = X.tocsr()
    X.eliminate_zeros()
    X.sort_indices()
    assert not brute_force_symmetric(X)
    transposed = transposed_rows(X)
    assert transposed is not X and transposed.has_sorted_indices
    np.testing.assert_array_equal(transposed.toarray(), X.toarray().T)


def test_unsorted_or_rectangular_matrices_are_transposed():
    X = sp.csr_matrix(np.array([[0, 2.0, 1.0], [2.0, 0, 0], [1.0, 0, 0]]))
    X.indices[:2] = X.indices[:2][::-1].copy()
    X.data[:2] = X.data[:2][::-1].copy()
    X.has_sorted_indices = False
    transposed = transposed_rows(X)
    assert transposed is not X
    np.testing.assert_array_equal(transposed.toarray(), X.toarray().T)
    rectangular = sp.csr_matrix(np.ones((2, 3)))
    np.testing.assert_array_equal(transposed_rows(rectangular).toarray(), np.ones((3, 2)))
