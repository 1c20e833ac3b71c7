"""The GloVe objective: the weighting function f and the weighted least-squares cost J."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

_BLOCK = 1 << 18  # entries per block, so the gathered vectors stay small


def glove_weights(values: np.ndarray, x_max: float = 100.0, alpha: float = 0.75) -> np.ndarray:
    """GloVe's weighting ``f(x) = (x / x_max) ** alpha`` for ``x < x_max``, else 1.

    Parameters
    ----------
    values : ndarray
        Positive co-occurrence weights.
    x_max, alpha : float
        Cut-off and exponent.

    Returns
    -------
    ndarray of float64
    """
    values = np.asarray(values, dtype=np.float64)
    return np.where(values < x_max, (values / x_max) ** alpha, 1.0)


def glove_cost(cooccurrence: sp.csr_matrix, center_vectors: np.ndarray, context_vectors: np.ndarray,
               center_biases: np.ndarray, context_biases: np.ndarray, x_max: float = 100.0,
               alpha: float = 0.75) -> float:
    """``J = sum_{X_ij > 0} f(X_ij) (w_i . v_j + b_i + c_j - log X_ij) ** 2``.

    Parameters
    ----------
    cooccurrence : scipy.sparse.csr_matrix, shape (V, V)
        Co-occurrence matrix; only its positive entries enter the sum.
    center_vectors, context_vectors : ndarray, shape (V, D)
    center_biases, context_biases : ndarray, shape (V,)
    x_max, alpha : float
        Weighting parameters of :func:`glove_weights`.

    Returns
    -------
    float
    """
    entries = sp.coo_matrix(cooccurrence)
    positive = entries.data > 0
    rows, cols, values = entries.row[positive], entries.col[positive], entries.data[positive]
    total = 0.0
    for start in range(0, values.size, _BLOCK):
        r, c, x = rows[start:start + _BLOCK], cols[start:start + _BLOCK], values[start:start + _BLOCK]
        residual = (np.einsum("ij,ij->i", center_vectors[r], context_vectors[c])
                    + center_biases[r] + context_biases[c] - np.log(x))
        total += float(np.sum(glove_weights(x, x_max, alpha) * residual**2))
    return total
