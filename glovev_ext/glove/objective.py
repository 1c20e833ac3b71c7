"""The GloVe objective: the weighting function f, the residual of an entry, and the cost J.

:func:`glove_residuals` is the one place the model's residual is written; the cost here and the
residual variances of GloVe-V (``glovev_ext.covariance``) call it. (The AdaGrad kernel computes it
inline, in its compiled loop; a per-word fit sums its weighted squares through the Gram matrix of
the weighted design, checked against this function in ``tests/covariance/test_wls.py``.)
"""

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


def glove_residuals(products, center_biases, context_biases, values: np.ndarray) -> np.ndarray:
    """``r_ij = w_i . v_j + b_i + c_j - log X_ij`` of entries, given their products ``w_i . v_j``.

    The products are an argument so that callers can gather them as suits them (per entry in
    ``weighted_squared_residuals``).

    Parameters
    ----------
    products : ndarray, shape (...)
        ``w_i . v_j`` of each entry.
    center_biases, context_biases : float or ndarray, shape (...)
        ``b_i`` and ``c_j`` of each entry.
    values : ndarray, shape (...)
        Positive ``X_ij``.

    Returns
    -------
    ndarray
    """
    return products + center_biases + context_biases - np.log(values)


def weighted_squared_residuals(cooccurrence: sp.spmatrix, center_vectors: np.ndarray, context_vectors: np.ndarray,
                               center_biases: np.ndarray, context_biases: np.ndarray, x_max: float = 100.0,
                               alpha: float = 0.75) -> np.ndarray:
    """``f(X_ij) r_ij^2`` of every positive entry, in the matrix's row-major order, computed in blocks.

    Parameters
    ----------
    cooccurrence : scipy.sparse matrix, shape (V, V)
    center_vectors, context_vectors : ndarray, shape (V, D)
    center_biases, context_biases : ndarray, shape (V,)
    x_max, alpha : float
        Weighting parameters of :func:`glove_weights`.

    Returns
    -------
    ndarray, shape (number of positive entries,)
    """
    entries = sp.coo_matrix(cooccurrence)
    positive = entries.data > 0
    rows, cols, values = entries.row[positive], entries.col[positive], entries.data[positive]
    out = np.empty(values.size)
    for start in range(0, values.size, _BLOCK):
        block = slice(start, start + _BLOCK)
        r, c, x = rows[block], cols[block], values[block]
        products = np.einsum("ij,ij->i", center_vectors[r], context_vectors[c])
        residuals = glove_residuals(products, center_biases[r], context_biases[c], x)
        out[block] = glove_weights(x, x_max, alpha) * residuals**2
    return out


def glove_cost(cooccurrence: sp.spmatrix, center_vectors: np.ndarray, context_vectors: np.ndarray,
               center_biases: np.ndarray, context_biases: np.ndarray, x_max: float = 100.0,
               alpha: float = 0.75) -> float:
    """``J = sum_{X_ij > 0} f(X_ij) (w_i.v_j + b_i + c_j - log X_ij) ** 2``.

    The parameters are those of ``weighted_squared_residuals``, whose values ``J`` sums.

    Returns
    -------
    float
    """
    return float(weighted_squared_residuals(cooccurrence, center_vectors, context_vectors, center_biases,
                                            context_biases, x_max, alpha).sum())
