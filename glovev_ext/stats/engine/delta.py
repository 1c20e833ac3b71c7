"""The delta method: a statistic's values at the trained vectors and their covariance from the word covariances.

``Cov(t_k, t_l) = sum_i g_ki^T Sigma_i g_li`` over the words i of the statistic, with
``g_ki = d t_k / d w_i`` (method.md section 3). Each word's share is formed from ``Y_i = S_i^T G_i``
(``Sigma_i = S_i S_i^T``, :meth:`Factor.whiten <glovev_ext.covariance.Factor.whiten>`), so no dense
covariance is built; the shares are kept (:class:`WordShares`) because the degrees of freedom of
any linear combination of the values, and which words dominate its variance, come from them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .statistic import Statistic
from .words import ResolvedWords


@dataclass(frozen=True)
class WordShares:
    """Each word's share of a delta-method covariance: ``Cov = sum_i Y_i^T Y_i``.

    Attributes
    ----------
    columns : tuple of ndarray of int
        For each word, the values (rows of the statistic) its gradient touches.
    whitened : tuple of ndarray
        For each word, ``Y_i`` restricted to those values: ``(r_i, len(columns_i))``.
    dofs : ndarray, shape (k,)
        Degrees of freedom of each word's residual variance.
    understated : ndarray of int, shape (k,)
        Directions along which each word's covariance is understated (the paper's pseudo-inverse).
    """

    columns: tuple
    whitened: tuple
    dofs: np.ndarray
    understated: np.ndarray

    def contributions(self, weights: np.ndarray) -> np.ndarray:
        """``(k, r)``: each word's contribution to the variance of each row of ``weights @ values`` (``(r, m)``)."""
        weights = np.atleast_2d(np.asarray(weights, dtype=np.float64))
        out = np.zeros((len(self.columns), weights.shape[0]))
        for i, (columns, whitened) in enumerate(zip(self.columns, self.whitened)):
            if columns.size:
                combined = whitened @ weights[:, columns].T
                out[i] = np.einsum("rc,rc->c", combined, combined)
        return out

    def mapped(self, weights: np.ndarray) -> WordShares:
        """The shares of ``weights @ values`` (``(r, m)`` weights): for contrasts and differences."""
        weights = np.atleast_2d(np.asarray(weights, dtype=np.float64))
        columns, whitened = [], []
        for touched, part in zip(self.columns, self.whitened):
            combined = part @ weights[:, touched].T
            rows = np.flatnonzero(np.abs(combined).sum(axis=0) > 0)
            columns.append(rows)
            whitened.append(combined[:, rows])
        return WordShares(tuple(columns), tuple(whitened), self.dofs, self.understated)


def delta_covariance(words: ResolvedWords, statistic: Statistic,
                     jacobian: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, WordShares]:
    """Values at the trained vectors, their delta-method covariance, and each word's share of it.

    Parameters
    ----------
    words : ResolvedWords
        The statistic's words (``statistic.keys``, in that order) with their vectors and factors.
    statistic : Statistic
    jacobian : ndarray, shape (m, k, D), optional
        ``statistic.jacobian(words.vectors)``, when the caller has it already.

    Returns
    -------
    values : ndarray, shape (m,)
    covariance : ndarray, shape (m, m)
    shares : WordShares
        ``shares.contributions(numpy.eye(m))`` is ``g_i^T Sigma_i g_i`` for each word and value:
        the variances are their column sums.
    """
    words.check_keys(statistic.keys)
    if jacobian is None:
        jacobian = statistic.jacobian(words.vectors)
    covariance = np.zeros((jacobian.shape[0], jacobian.shape[0]))
    columns, whitened = [], []
    for i, factor in enumerate(words.factors):
        touched = np.flatnonzero(np.abs(jacobian[:, i, :]).sum(axis=1) > 0)
        part = factor.whiten(jacobian[touched, i, :].T) if touched.size else np.zeros((0, 0))
        covariance[np.ix_(touched, touched)] += part.T @ part
        columns.append(touched)
        whitened.append(part)
    shares = WordShares(tuple(columns), tuple(whitened), np.array([f.dof for f in words.factors], dtype=np.float64),
                        np.array([f.understated for f in words.factors], dtype=np.int64))
    return statistic.value(words.vectors), covariance, shares
