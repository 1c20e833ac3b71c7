"""Power and minimum detectable effect of the library's Wald tests, on their own scale and reference.

A test of ``value == null`` rejects when ``|g(estimate) - g(null)| / se_g`` exceeds the t (or normal)
quantile, with ``g`` the test scale (:func:`.intervals.to_scale`: atanh of a bounded value mapped
to (-1, 1), or the value itself) and ``se_g = se g'(at)``, ``at`` the value where ``se`` was measured.
``se_g`` is taken to hold whatever the true value (the atanh scale is chosen to stabilise it, as
Fisher's z does for correlations). If the true value is ``null + effect``, the statistic is about t
with noncentrality ``(g(null + effect) - g(null)) / se_g``;
the power is the chance it falls beyond the quantiles, and the minimum detectable effect is the
smallest ``effect`` (in the statistic's own units, away from ``null``) with the asked power.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, stats

from ..engine.intervals import bounds_of, check_alternative, quantile, scale_derivative, to_scale


def power(effect: float, std_error: float, *, null_value: float = 0.0, at: float | None = None,
          significance_level: float = 0.05, alternative: str = "two-sided", df: float = np.inf, bounds=None,
          scale: str = "linear") -> float:
    """Probability that the test of ``value == null_value`` rejects when the value is ``null_value + effect``.

    Parameters
    ----------
    effect : float
        True value minus the null value, in the statistic's units.
    std_error : float
        The statistic's standard error, measured at ``at``.
    null_value : float, default=0
    at : float, optional
        Where ``std_error`` was measured (the estimate); the null value by default. Matters only on
        the bounded scale.
    significance_level : float, default=0.05
    alternative : {"two-sided", "larger", "smaller"}
    df : float, default=inf
        Degrees of freedom of the t reference (inf: normal).
    bounds : (float, float), optional
        The statistic's range; with ``scale="bounded"`` the test is on atanh of the rescaled value.
    scale : {"linear", "bounded"}

    Returns
    -------
    float
    """
    check_alternative(alternative)
    box = bounds_of(bounds, 1)
    truth = null_value + effect
    if not box[0, 0] <= truth <= box[0, 1]:
        raise ValueError(f"the true value {truth} lies outside the statistic's range {tuple(box[0])}")
    where = null_value if at is None else at
    scaled_error = std_error * float(scale_derivative([where], box, scale)[0])
    shift = float((to_scale([truth], box, scale) - to_scale([null_value], box, scale))[0]) / scaled_error
    if not np.isfinite(shift):
        return 1.0
    reference = stats.nct(df, shift) if np.isfinite(df) else stats.norm(shift)

    def above(q):  # scipy's noncentral t gives NaN for tails far beyond 1e-12; they are 0 then
        return float(np.nan_to_num(reference.sf(q), nan=0.0))

    def below(q):
        return float(np.nan_to_num(reference.cdf(q), nan=0.0))

    if alternative == "two-sided":
        q = float(quantile(1 - significance_level / 2, df))
        return above(q) + below(-q)
    q = float(quantile(1 - significance_level, df))
    return above(q) if alternative == "larger" else below(-q)


def minimum_detectable_effect(std_error: float, *, power_goal: float = 0.8, null_value: float = 0.0,
                              at: float | None = None, significance_level: float = 0.05, alternative: str = "two-sided",
                              df: float = np.inf, bounds=None, scale: str = "linear") -> float:
    """The smallest effect (true value minus null) the test detects with probability ``power_goal``.

    Searched above the null (below it for ``alternative="smaller"``); NaN when no value inside the
    statistic's range reaches the power.

    Parameters
    ----------
    std_error : float
    power_goal : float, default=0.8
    null_value, at, significance_level, alternative, df, bounds, scale
        As for :func:`power`.

    Returns
    -------
    float
        Positive (negative for ``"smaller"``), in the statistic's units.
    """
    if not 0 < power_goal < 1:
        raise ValueError(f"power_goal must be in (0, 1), got {power_goal}")
    if not (np.isfinite(std_error) and std_error > 0):
        raise ValueError(f"the standard error must be positive and finite, got {std_error}")
    box = bounds_of(bounds, 1)[0]
    sign = -1.0 if alternative == "smaller" else 1.0
    room = (null_value - box[0]) if sign < 0 else (box[1] - null_value)
    limit = room * (1 - 1e-12) if np.isfinite(room) else 1.0

    def gap(size):
        return power(sign * size, std_error, null_value=null_value, at=at, significance_level=significance_level,
                     alternative=alternative, df=df, bounds=box, scale=scale) - power_goal

    while not np.isfinite(room) and gap(limit) < 0:
        limit *= 2
    if gap(limit) < 0:
        return float("nan")
    return sign * float(optimize.brentq(gap, 0.0, limit, xtol=1e-10 * max(1.0, limit)))
