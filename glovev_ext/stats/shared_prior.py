"""Statistics of fits under one prior: the part of their errors the prior makes common (docs/method.md 6.14).

Fits that are posteriors under one Gaussian prior ``N(mu, P^-1)`` (the pooled fit and its
:func:`~glovev_ext.fit_subcorpora`, under the pooled fit's prior) give each word an error
``-Sigma P (w - mu)`` plus the fit's own noise. The first part is the same in every fit, up to the
factor ``Sigma``: a word's two posteriors have ``Cov(w_A, w_B) = Sigma_A P Sigma_B``, and their
difference ``Var(w_A - w_B) = Sigma_A + Sigma_B - Sigma_A P Sigma_B - Sigma_B P Sigma_A``, which is
far below ``Sigma_A + Sigma_B`` for a word the prior holds.

A statistic's difference between two fits is, to second order, ``sum_w gbar_w^T (w_A - w_B)`` with
``gbar_w`` the mean of the two fits' gradients at their own estimates (the trapezoid rule), so

    ``Var(t_A - t_B) = sum_w gbar_w^T (Sigma_A + Sigma_B - Sigma_A P Sigma_B - Sigma_B P Sigma_A) gbar_w``

over the words in both (a word in one fit only adds ``g^T Sigma g``). Each fit's gradient taken at
its own estimate, with ``Cov = g_A^T Sigma_A P Sigma_B g_B``, is not enough for rare words: their two
estimates differ by their noise, so their two gradients differ too, and the shared part does not
cancel between them (on two random halves of the embedded corpus it left the equality test of a
cosine rejecting 0.7 % of pairs of words seen 5-99 times; docs/method.md 6.14).
:func:`~glovev_ext.compare_models` uses this when every result carries a :class:`PriorLink` to the
same prior.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..covariance import Factor, GaussianPrior
from ..covariance.prior import shared_prior_difference


@dataclass(frozen=True)
class PriorLink:
    """What a delta-method result keeps to be compared with results of other fits under the same prior.

    Attributes
    ----------
    fingerprint : str
        :attr:`GaussianPrior.fingerprint <glovev_ext.covariance.GaussianPrior.fingerprint>` of the prior.
    precision : ndarray, shape (D, D)
        Its precision ``P``.
    keys : tuple
        The statistic's words.
    jacobian : scipy.sparse.csr_array, shape (m, k D)
        The gradient of each of the ``m`` values with respect to each word's vector, at the estimate
        (word by word along a row; sparse, as a family of pairs touches two words per value).
    factors : tuple of Factor
        Each word's covariance.
    """

    fingerprint: str
    precision: np.ndarray = field(repr=False)
    keys: tuple
    jacobian: np.ndarray = field(repr=False)
    factors: tuple = field(repr=False)

    @classmethod
    def of(cls, prior: GaussianPrior | None, keys: Sequence, jacobian: np.ndarray,
           factors: Sequence[Factor]) -> PriorLink | None:
        """The link of a statistic of words whose covariances are posteriors under ``prior`` (None: none)."""
        if prior is None:
            return None
        jacobian = np.asarray(jacobian, dtype=np.float64)
        return cls(prior.fingerprint, prior.precision, tuple(keys),
                   sp.csr_array(jacobian.reshape(jacobian.shape[0], -1)), tuple(factors))

    def row(self, k: int) -> PriorLink:
        """The link of value ``k`` alone."""
        return PriorLink(self.fingerprint, self.precision, self.keys, self.jacobian[k:k + 1], self.factors)

    def mapped(self, weights: np.ndarray) -> PriorLink:
        """The link of ``weights @ values`` (``(r, m)`` weights)."""
        jacobian = sp.csr_array(np.atleast_2d(np.asarray(weights, dtype=np.float64))) @ self.jacobian
        return PriorLink(self.fingerprint, self.precision, self.keys, sp.csr_array(jacobian), self.factors)

    def gradients(self) -> np.ndarray:
        """``(k, D)``: the gradient of the single value with respect to each word's vector."""
        return self.jacobian.toarray().reshape(len(self.keys), -1)


def common_prior(links: Sequence[PriorLink | None]) -> bool:
    """Whether every result is linked to one prior, with one value each."""
    return (all(link is not None and link.jacobian.shape[0] == 1 for link in links)
            and len({link.fingerprint for link in links}) == 1)


def difference_variances(links: Sequence[PriorLink], derivatives: np.ndarray) -> np.ndarray:
    """``Var(t_i - t_j)`` of single-valued statistics of fits under one prior, on their test scale.

    Parameters
    ----------
    links : sequence of PriorLink
        One per fit, each with one value (:func:`common_prior`).
    derivatives : ndarray, shape (n,)
        ``d (test scale) / d value`` at each fit's estimate (1 on the linear scale): each fit's gradient
        is taken to the test scale by it before the two fits' gradients are averaged.

    Returns
    -------
    ndarray, shape (n, n)
        Symmetric, zero on the diagonal.
    """
    precision = links[0].precision
    gradients = [dict(zip(link.keys, derivative * link.gradients())) for link, derivative in zip(links, derivatives)]
    dense = [{key: factor.dense() for key, factor in zip(link.keys, link.factors)} for link in links]
    n = len(links)
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            variance = 0.0
            for key in set(gradients[i]) | set(gradients[j]):
                if key not in gradients[j]:
                    variance += gradients[i][key] @ dense[i][key] @ gradients[i][key]
                elif key not in gradients[i]:
                    variance += gradients[j][key] @ dense[j][key] @ gradients[j][key]
                else:
                    mean = (gradients[i][key] + gradients[j][key]) / 2.0
                    variance += mean @ shared_prior_difference(dense[i][key], dense[j][key], precision) @ mean
            out[i, j] = out[j, i] = variance
    return out
