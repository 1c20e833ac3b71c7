"""The variance along each word's own vector, which a factor on the whole covariance cannot give (docs/method.md 6.22).

How strongly a word associates with all its contexts varies between documents and groups several times more than the
direction of its vector does. Noise in that strength moves a posterior mean along ``m = (I - Sigma P) u`` (``u`` the
unit vector of the mean: the mean's weight on its data is ``Sigma H / s2 = I - Sigma P``). Between two fits of a word,
with ``u`` from the sum of the two means (which their difference does not move), the Wald statistic ``d^T V^{-1} d``
splits exactly into its part along ``m`` (one degree of freedom) and the rest (``D - 1``); a covariance widened along
``m`` changes only the first. So the calibration scales the whole covariance by the rest (``kappa``) and widens it
along ``m`` by the part along (``r``): ``Sigma + (r - 1) (m^T Sigma m) m m^T``, ``m`` of unit length, which makes the
variance along ``m`` ``r`` times what it was. A fitted model widens each word along its own mean's direction.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from .factor import Factor


def along_direction(covariance: Factor | np.ndarray, mean: np.ndarray, precision: np.ndarray) -> np.ndarray | None:
    """``m = (I - Sigma P) u`` of unit length, ``u`` the unit vector of ``mean`` (None where either is 0 or not finite).

    Parameters
    ----------
    covariance : Factor or ndarray, shape (D, D)
        The posterior's covariance ``Sigma`` (before any widening).
    mean : ndarray, shape (D,)
        The posterior mean, or any vector along the word's (the sum of two fits' means).
    precision : ndarray, shape (D, D)
        The prior's precision ``P``.

    Returns
    -------
    ndarray, shape (D,), or None
        The unit direction.
    """
    length = float(np.linalg.norm(mean))
    if not np.isfinite(length) or length == 0.0:
        return None
    unit = mean / length
    pulled = precision @ unit
    shrunk = (covariance.sigma2 * covariance.solve(pulled) if isinstance(covariance, Factor)
              else covariance @ pulled)
    direction = unit - shrunk
    length = float(np.linalg.norm(direction))
    if not np.isfinite(length) or length == 0.0:
        return None
    return direction / length


def redirected(along: np.ndarray | None, covariance: Factor | np.ndarray, mean: np.ndarray,
               precision: np.ndarray) -> np.ndarray | None:
    """A fit's widening ``a``, of the same length, along :func:`along_direction` of another vector.

    Two fits of one word are widened along their own means' directions, which differ by their noise: the difference of
    the two means lies in the span of the two, so widenings along them would explain the difference away. Compared, both
    are widened along the direction of the sum of their means instead, which their difference does not move.

    Parameters
    ----------
    along : ndarray, shape (D,), or None
        The fit's widening (None: none).
    covariance : Factor or ndarray
        The fit's covariance before widening.
    mean : ndarray, shape (D,)
        The vector whose direction the widening takes.
    precision : ndarray, shape (D, D)
        The prior's precision.

    Returns
    -------
    ndarray, shape (D,), or None
        None for no widening; ``along`` itself where ``mean`` gives no direction.
    """
    if along is None:
        return None
    direction = along_direction(covariance, mean, precision)
    return along if direction is None else float(np.linalg.norm(along)) * direction


def widening(factor: Factor, mean: np.ndarray, precision: np.ndarray, along_factor: float) -> np.ndarray:
    """``a`` with ``Sigma + a a^T`` the posterior's covariance ``along_factor`` times as large along
    :func:`along_direction` (zeros where ``along_factor`` is at most 1 or there is no direction).

    Parameters
    ----------
    factor : Factor
        The posterior's covariance ``Sigma``.
    mean : ndarray, shape (D,)
        The posterior mean.
    precision : ndarray, shape (D, D)
        The prior's precision ``P``.
    along_factor : float
        ``r``.

    Returns
    -------
    ndarray, shape (D,)
        The widening ``a``.
    """
    if not along_factor > 1.0:
        return np.zeros(factor.dim)
    direction = along_direction(factor, mean, precision)
    if direction is None:
        return np.zeros(factor.dim)
    return np.sqrt((along_factor - 1.0) * factor.quad_form(direction)) * direction


def split_wald(difference: np.ndarray, solved: np.ndarray, direction: np.ndarray,
               solved_direction: np.ndarray) -> tuple[float, float, float]:
    """One word's Wald statistic ``d^T V^{-1} d`` split into its part along ``m`` and the rest.

    Parameters
    ----------
    difference, solved : ndarray, shape (D,)
        ``d`` and ``V^{-1} d``.
    direction, solved_direction : ndarray, shape (D,)
        ``m`` and ``V^{-1} m``.

    Returns
    -------
    along : float
        ``(m^T V^{-1} d)^2 / (m^T V^{-1} m)`` (one degree of freedom).
    across : float
        The rest (``D - 1``): the generalised least-squares residual of ``d`` on ``m``, which no variance added along
        ``m`` changes.
    precision_along : float
        ``m^T V^{-1} m``: a variance ``c`` added along ``m`` divides the part along by ``1 + c m^T V^{-1} m``
        (Sherman-Morrison).
    """
    whole = float(difference @ solved)
    precision_along = float(direction @ solved_direction)
    along = float(direction @ solved) ** 2 / precision_along
    return along, whole - along, precision_along


def along_factor_of(along: np.ndarray, gain: np.ndarray, expected: np.ndarray) -> float:
    """``r`` with ``sum(along_i / (1 + (r - 1) g_i)) = sum(expected_i)``: the factor on the variance along each
    word's direction that brings the parts along to their expectation (1 where they are at or below it).

    Parameters
    ----------
    along : ndarray
        The words' parts along (:func:`split_wald`).
    gain : ndarray
        ``g_i``: the two fits' variances along ``m``, ``m^T (Sigma_A + Sigma_B) m``, times ``m^T V^{-1} m``, so that
        widening both fits by ``r`` along ``m`` divides the part along by ``1 + (r - 1) g_i``.
    expected : ndarray
        Each part's expectation.

    Returns
    -------
    float
        ``r``, at least 1.
    """
    target = float(np.sum(expected))

    def excess(r: float) -> float:
        return float(np.sum(along / (1.0 + (r - 1.0) * gain))) - target

    if along.size == 0 or excess(1.0) <= 0.0:
        return 1.0
    high = 2.0
    while excess(high) > 0.0:
        if high > 1e8:  # the parts along do not fall with r (no gain): nothing to widen with
            return 1.0
        high *= 2.0
    return float(brentq(excess, 1.0, high, xtol=1e-6, rtol=1e-8))
