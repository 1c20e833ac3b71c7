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
For the rarest words even that linearisation fails (their cosines are far from linear in noise as
large as their vectors; on the halves above the difference of atanh cosines was 1.5 times its
linearisation, median, for words seen 5-99 times), so the equality test takes its p-value from
:func:`null_draws`: the fits' values at draws of their estimates under the null that one truth
underlies them all. :func:`~glovev_ext.compare_models` uses both when every result carries a
:class:`PriorLink` to the same prior.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from ..._checks import as_generator
from ...covariance import GaussianPrior
from ...covariance.along import redirected
from ...covariance.prior import shared_prior_difference
from .statistic import Statistic
from .words import ResolvedWords


@dataclass(frozen=True)
class PriorLink:
    """What a result keeps to be compared with results of other fits under the same prior.

    Attributes
    ----------
    fingerprint : str
        :attr:`GaussianPrior.fingerprint <glovev_ext.covariance.GaussianPrior.fingerprint>` of the prior.
    mean : ndarray, shape (D,)
        The prior's mean ``mu``.
    precision : ndarray, shape (D, D)
        Its precision ``P``.
    keys : tuple
        The statistic's words.
    vectors : ndarray, shape (k, D)
        Their vectors (the estimate's).
    factors : tuple of Factor
        Their covariances.
    jacobian : scipy.sparse.csr_array, shape (r, k D)
        The gradient of each value with respect to each word's vector, at the estimate (word by word
        along a row; sparse, as a family of pairs touches two words per value).
    function : callable or None
        The statistic's ``(..., k, D) -> (..., m)``; not pickled (an unpickled result's comparison
        has no null draws, :func:`null_draws`).
    combination : ndarray, shape (r, m)
        The values are ``combination @ function(vectors)`` (a row, or a linear map of the statistic's).
    """

    fingerprint: str
    mean: np.ndarray = field(repr=False)
    precision: np.ndarray = field(repr=False)
    keys: tuple
    vectors: np.ndarray = field(repr=False)
    factors: tuple = field(repr=False)
    jacobian: sp.csr_array = field(repr=False)
    function: Callable[[np.ndarray], np.ndarray] | None = field(repr=False)
    combination: np.ndarray = field(repr=False)

    @classmethod
    def of(cls, prior: GaussianPrior | None, words: ResolvedWords, statistic: Statistic,
           jacobian: np.ndarray) -> PriorLink | None:
        """The link of ``statistic`` of ``words`` whose covariances are posteriors under ``prior`` (None: none)."""
        if prior is None:
            return None
        jacobian = np.asarray(jacobian, dtype=np.float64)
        m = jacobian.shape[0]
        return cls(prior.fingerprint, prior.mean, prior.precision, tuple(words.keys), words.vectors, words.factors,
                   sp.csr_array(jacobian.reshape(m, -1)), statistic.function, np.eye(m))

    def row(self, k: int) -> PriorLink:
        """The link of value ``k`` alone."""
        return replace(self, jacobian=self.jacobian[k:k + 1], combination=self.combination[k:k + 1])

    def mapped(self, weights: np.ndarray) -> PriorLink:
        """The link of ``weights @ values`` (``(r, m)`` weights)."""
        weights = np.atleast_2d(np.asarray(weights, dtype=np.float64))
        return replace(self, jacobian=sp.csr_array(sp.csr_array(weights) @ self.jacobian),
                       combination=weights @ self.combination)

    @cached_property
    def covariances(self) -> tuple:
        """Each word's covariance before any widening along its vector (the part the prior makes common to the fits
        under it: docs/method.md 6.22), as a dense ``(D, D)`` matrix (formed once per link)."""
        return tuple(factor.before_widening.dense() for factor in self.factors)

    @property
    def widenings(self) -> tuple:
        """Each word's widening along its vector (``a``: its covariance is ``covariances + a a^T``), None for none."""
        return tuple(factor.along for factor in self.factors)

    def gradients(self) -> np.ndarray:
        """``(k, D)``: the gradient of the single value with respect to each word's vector."""
        return self.jacobian.toarray().reshape(len(self.keys), -1)

    def values(self, vectors: np.ndarray) -> np.ndarray:
        """``(n,)``: the single value at ``n`` draws of the words' vectors, ``(n, k, D)``."""
        values = np.asarray(self.function(vectors), dtype=np.float64).reshape(vectors.shape[0], -1)
        return values @ self.combination[0]

    def __getstate__(self) -> dict:
        state = {**self.__dict__, "function": None}  # a statistic's function may be a closure
        state.pop("covariances", None)  # formed again when asked
        return state


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
    derivatives : ndarray, shape (n,) or (s, n)
        ``d (test scale) / d value`` at each fit's estimate (1 on the linear scale): each fit's gradient
        is taken to the test scale by it before the two fits' gradients are averaged. Several rows give
        the variances on several scales from one pass over the words.

    Returns
    -------
    ndarray, shape (n, n) or (s, n, n)
        Symmetric, zero on the diagonal.
    """
    with threadpool_limits(limits=1, user_api="blas"):  # D x D matrices: one thread is fastest
        return _difference_variances(links, derivatives)


def _difference_variances(links: Sequence[PriorLink], derivatives: np.ndarray) -> np.ndarray:
    precision = links[0].precision
    scales = np.atleast_2d(derivatives)  # (s, n): each row a set of scales, each difference covariance formed once
    gradients = [dict(zip(link.keys, link.gradients())) for link in links]
    dense = [dict(zip(link.keys, link.covariances)) for link in links]
    along = [dict(zip(link.keys, link.widenings)) for link in links]
    vectors = [dict(zip(link.keys, link.vectors)) for link in links]
    n = len(links)
    out = np.zeros((scales.shape[0], n, n))
    for i in range(n):
        for j in range(i + 1, n):
            variance = np.zeros(scales.shape[0])
            for key in dict.fromkeys([*gradients[i], *gradients[j]]):  # in order: the sum is reproducible
                if key not in gradients[j]:
                    variance += scales[:, i] ** 2 * _quad_form(gradients[i][key], dense[i][key], along[i][key])
                elif key not in gradients[i]:
                    variance += scales[:, j] ** 2 * _quad_form(gradients[j][key], dense[j][key], along[j][key])
                else:
                    common = vectors[i][key] + vectors[j][key]  # both widenings along it (docs/method.md 6.22)
                    joint = shared_prior_difference(dense[i][key], dense[j][key], precision,
                                                    redirected(along[i][key], dense[i][key], common, precision),
                                                    redirected(along[j][key], dense[j][key], common, precision))
                    means = (scales[:, i, None] * gradients[i][key] + scales[:, j, None] * gradients[j][key]) / 2.0
                    variance += np.einsum("sd,de,se->s", means, joint, means)
            out[:, i, j] = out[:, j, i] = variance
    return out if np.ndim(derivatives) == 2 else out[0]


def _quad_form(gradient: np.ndarray, covariance: np.ndarray, along: np.ndarray | None) -> float:
    """``g^T (Sigma + a a^T) g`` (``a`` None: 0)."""
    return float(gradient @ covariance @ gradient + (0.0 if along is None else (along @ gradient) ** 2))


def null_draws(links: Sequence[PriorLink], n_draws: int, random_state=None, *,
               use_t: bool = False) -> np.ndarray | None:
    """The fits' values at ``n_draws`` draws of their estimates under the null that one truth underlies them all.

    Per word, the truth is drawn from its posterior given every fit (precision ``sum_i Sigma_i^-1 -
    (n - 1) P``, the prior counted once); given the truth ``w``, fit i's posterior mean is
    ``w - Sigma_i P (w - mu)`` plus its own noise, of covariance ``Sigma_i - Sigma_i P Sigma_i`` (the
    Gaussian model of the posterior: ``Sigma_i^-1 = H_i / s2_i + P``). So the draws carry the
    shrinkage each fit applies and the statistic's nonlinearity, which the delta method's difference
    does not (docs/method.md 6.14). A fit widened along the word's vector (docs/method.md 6.22) enters the
    truth's posterior and the shrinkage with its covariance before widening; its noise has the widening added,
    along the direction of the sum of the fits' estimates.

    Parameters
    ----------
    links : sequence of PriorLink
        One per fit, each with one value (:func:`common_prior`).
    n_draws : int
    random_state : None, int or numpy Generator
    use_t : bool, default=False
        Draw each fit's noise of a word from t on the degrees of freedom of that word's covariance
        (its factor's ``dof``: its residual variance's, at most ``G - 1`` when the noise was calibrated on
        halves of ``G`` groups), as the results' own t references do; normal where they are infinite.

    Returns
    -------
    ndarray, shape (n_draws, n), or None
        None when a link has no function (an unpickled result) or the fits' statistics use different words.
    """
    if any(link.function is None for link in links) or len({frozenset(link.keys) for link in links}) > 1:
        return None
    with threadpool_limits(limits=1, user_api="blas"):  # D x D matrices: one thread is fastest
        return _null_draws(links, n_draws, as_generator(random_state), use_t)


def _null_draws(links: Sequence[PriorLink], n_draws: int, generator: np.random.Generator,
                use_t: bool) -> np.ndarray:
    mean, precision = links[0].mean, links[0].precision
    keys = links[0].keys
    drawn = [np.empty((n_draws, len(keys), mean.size)) for _ in links]
    positions = [{key: k for k, key in enumerate(link.keys)} for link in links]
    for key in keys:
        estimates = [link.vectors[place[key]] for link, place in zip(links, positions)]
        shared = [link.covariances[place[key]] for link, place in zip(links, positions)]
        common = sum(estimates)  # every fit's widening along the direction of their sum (docs/method.md 6.22)
        covariances = [_widened(covariance, redirected(link.widenings[place[key]], covariance, common, precision))
                       for covariance, link, place in zip(shared, links, positions)]
        # the truth's posterior from the covariances before widening: a widened one may exceed the prior's along the
        # word's vector, where its inverse less P would be no precision of data
        inverses = [np.linalg.inv(covariance) for covariance in shared]
        pooled = sum(inverses) - (len(links) - 1) * precision
        centre = np.linalg.solve(pooled, sum(q @ x for q, x in zip(inverses, estimates))
                                 - (len(links) - 1) * precision @ mean)
        truth = centre + generator.standard_normal((n_draws, mean.size)) @ _root(np.linalg.inv(pooled)).T
        for link, out, place, covariance, unwidened in zip(links, drawn, positions, covariances, shared):
            shrink = unwidened @ precision  # the prior's pull acts through the covariance before widening
            noise = generator.standard_normal((n_draws, mean.size)) @ _root(covariance - shrink @ unwidened).T
            dof = float(link.factors[place[key]].dof)
            if use_t and np.isfinite(dof):  # a multivariate t: the normal noise over sqrt(chi2 / dof)
                noise /= np.sqrt(generator.chisquare(dof, size=(n_draws, 1)) / dof)
            out[:, place[key]] = truth - (truth - mean) @ shrink.T + noise
    return np.column_stack([link.values(out) for link, out in zip(links, drawn)])


def _widened(covariance: np.ndarray, along: np.ndarray | None) -> np.ndarray:
    """``Sigma + a a^T`` (``a`` None: ``Sigma``)."""
    return covariance if along is None else covariance + np.outer(along, along)


def _root(covariance: np.ndarray) -> np.ndarray:
    """``R`` with ``R R^T = covariance`` (symmetrised; negative eigenvalues of rounding set to 0)."""
    values, vectors = np.linalg.eigh((covariance + covariance.T) / 2.0)
    return vectors * np.sqrt(np.clip(values, 0.0, None))
