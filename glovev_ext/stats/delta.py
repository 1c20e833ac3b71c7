"""The delta method: a statistic's values at the trained vectors and their covariance from the word covariances.

``Cov(t_k, t_l) = sum_i g_ki^T Sigma_i g_li`` over the words i of the statistic, with
``g_ki = d t_k / d w_i`` (method.md section 3). Each word's share is formed from ``S_i^T G_i``
(``Sigma_i = S_i S_i^T``, :meth:`Factor.whiten <glovev_ext.covariance.Factor.whiten>`), so no dense
covariance is built.
"""

from __future__ import annotations

import numpy as np

from .statistic import Statistic
from .words import ResolvedWords


def delta_covariance(words: ResolvedWords, statistic: Statistic) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Values at the trained vectors, their delta-method covariance, and each word's share of it.

    Parameters
    ----------
    words : ResolvedWords
        The statistic's words (``statistic.keys``, in that order) with their vectors and factors.
    statistic : Statistic

    Returns
    -------
    values : ndarray, shape (m,)
    covariance : ndarray, shape (m, m)
    contributions : ndarray, shape (k, m)
        ``g_i^T Sigma_i g_i`` for each word i and value: the variances are their column sums.
    """
    words.check_keys(statistic.keys)
    jacobian = statistic.jacobian(words.vectors)
    covariance = np.zeros((jacobian.shape[0], jacobian.shape[0]))
    contributions = np.zeros((len(words.keys), jacobian.shape[0]))
    for i, factor in enumerate(words.factors):
        gradients = jacobian[:, i, :].T
        if not gradients.any():
            continue
        whitened = factor.whiten(gradients)
        covariance += whitened.T @ whitened
        contributions[i] = np.einsum("rm,rm->m", whitened, whitened)
    return statistic.value(words.vectors), covariance, contributions
