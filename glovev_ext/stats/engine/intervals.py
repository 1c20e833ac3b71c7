"""From an estimate and its standard error to intervals and p-values: the reference distribution and the scale.

docs/method.md section 6:

- **Reference distribution.** ``s2_i`` has ``|K_i| - D`` degrees of freedom, so one word's
  coordinates follow a t distribution with that many; a statistic of several words gets the
  Welch-Satterthwaite degrees of freedom of its variance ``sum_i c_i`` (``c_i`` the contribution of
  word i, estimated with ``nu_i`` degrees of freedom): ``(sum_i c_i)^2 / sum_i (c_i^2 / nu_i)``
  (:func:`welch_satterthwaite`). Infinite degrees of freedom are the normal distribution.
- **Scale.** A statistic bounded to ``[lo, hi]`` (a cosine, a WEAT effect size) is tested and given
  an interval on ``atanh((2 theta - lo - hi) / (hi - lo))`` (Fisher's z for a cosine), whose
  standard error is the delta method's ``se * d/dtheta``; the interval is mapped back, so it stays
  inside the bounds. ``"linear"`` is the paper's symmetric interval on the statistic itself.

- **Where the draws are centred.** :func:`median_shift` is the gap between the estimate and the
  draws' median on the test scale, in standard errors there (its Monte Carlo noise is
  :func:`median_shift_noise`). Noise added to trained vectors pulls cosines and correlations toward
  0, so draws around the estimate are centred nearer 0 than it is (docs/method.md sections 3 and 6.9).
- **Intervals that use Monte Carlo draws** (``method="auto"`` chose Monte Carlo, or Monte Carlo
  was asked for) come in two kinds, both one piece that holds the estimate:

  - :data:`UNION` (:func:`union_intervals`, bounded scale): where the delta method's standard error
    is not accurate, the union of the interval above and the percentile interval of draws in which
    each word's vector follows its t distribution (``w_i + S_i z sqrt(nu_i / chi2_nu_i)``), slid
    from the draws' median to the estimate (the union of the two when they overlap); a test
    rejects only when every part does. Each alone under-covers in places the others do not.
  - :data:`EXTENDED` (:func:`extended_intervals`): where the standard error is accurate but the
    draws are shifted, and for model evaluations, the interval above extended by the draws' shift
    ``d = g(estimate) - g(median)``: the union of the intervals centred anywhere between ``g(estimate)``
    and ``g(estimate) + d``, the estimate corrected for the shift (the estimate is shifted from the
    noise-free value as the draws are from the estimate); the p-value is the largest over those centres.

Intervals and p-values use the same distribution and scale, so a p-value is below ``1 - level``
exactly when the null value lies outside the interval at that level.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

SCALES = ("bounded", "linear")
UNION = "union"
EXTENDED = "extended"
PIVOT = "pivot"  # the draws are of the test's statistic under its null: a studentized pivot (docs/method.md 6.19)
DRAWS_INTERVALS = (UNION, EXTENDED, PIVOT)
ALTERNATIVES = ("two-sided", "larger", "smaller")
UNBOUNDED = (-np.inf, np.inf)


def check_scale(scale: str) -> str:
    """Validate a scale."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    return scale


def check_alternative(alternative: str) -> str:
    """Validate ``alternative`` (statsmodels' spelling)."""
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    return alternative


def check_draws_interval(draws_interval: str) -> str:
    """Validate how an interval uses draws (:data:`UNION`, :data:`EXTENDED` or :data:`PIVOT`)."""
    if draws_interval not in DRAWS_INTERVALS:
        raise ValueError(f"draws_interval must be one of {DRAWS_INTERVALS}, got {draws_interval!r}")
    return draws_interval


def check_confidence_level(confidence_level: float) -> float:
    """Validate a confidence level."""
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level}")
    return confidence_level


def welch_satterthwaite(contributions: np.ndarray, dofs: np.ndarray) -> np.ndarray:
    """Degrees of freedom of ``sum_i c_i`` for contributions ``c_i`` estimated with ``nu_i`` degrees of freedom.

    Parameters
    ----------
    contributions : ndarray, shape (k, ...)
        Each word's contribution to each variance.
    dofs : ndarray, shape (k,) or the shape of ``contributions``
        Each word's degrees of freedom (inf for a contribution taken as known), or each
        contribution's own (e.g. the two words of each of many pairs).

    Returns
    -------
    ndarray, shape (...)
        Infinite where every contribution is known (or all are zero).
    """
    contributions = np.asarray(contributions, dtype=np.float64)
    dofs = np.asarray(dofs, dtype=np.float64)
    if dofs.shape != contributions.shape:
        dofs = dofs.reshape((-1,) + (1,) * (contributions.ndim - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = np.where(np.isfinite(dofs), contributions**2 / dofs, 0.0).sum(axis=0)
        return np.where(spread > 0, contributions.sum(axis=0) ** 2 / spread, np.inf)


def bounds_of(bounds, m: int) -> np.ndarray:
    """``(m, 2)`` lower and upper bounds (``None``: unbounded rows)."""
    if bounds is None:
        return np.tile(np.asarray(UNBOUNDED, dtype=np.float64), (m, 1))
    return np.broadcast_to(np.asarray(bounds, dtype=np.float64).reshape(-1, 2), (m, 2)).copy()


def linear_bounds(weights: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Bounds of the rows of ``weights @ theta`` for ``theta`` in the box ``bounds`` (``(r, m)`` weights)."""
    weights = np.atleast_2d(weights)
    with np.errstate(invalid="ignore"):
        low = np.where(weights > 0, weights * bounds[:, 0], weights * bounds[:, 1])
        high = np.where(weights > 0, weights * bounds[:, 1], weights * bounds[:, 0])
    low, high = np.where(weights == 0, 0.0, low).sum(axis=1), np.where(weights == 0, 0.0, high).sum(axis=1)
    return np.column_stack([low, high])


def _bounded(bounds: np.ndarray, scale: str) -> np.ndarray:
    return np.isfinite(bounds).all(axis=1) & (scale == "bounded")


def to_scale(values, bounds: np.ndarray, scale: str) -> np.ndarray:
    """Values on the test scale: ``atanh`` of the value mapped to (-1, 1) for bounded rows, else themselves."""
    values = np.asarray(values, dtype=np.float64)
    bounded = _bounded(bounds, scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        unit = np.clip((2 * values - bounds[:, 0] - bounds[:, 1]) / (bounds[:, 1] - bounds[:, 0]), -1.0, 1.0)
        return np.where(bounded, np.arctanh(unit), values)


def from_scale(values, bounds: np.ndarray, scale: str) -> np.ndarray:
    """The inverse of :func:`to_scale`."""
    values = np.asarray(values, dtype=np.float64)
    bounded = _bounded(bounds, scale)
    with np.errstate(invalid="ignore"):
        mapped = (np.tanh(values) * (bounds[:, 1] - bounds[:, 0]) + bounds[:, 0] + bounds[:, 1]) / 2
    return np.where(bounded, mapped, values)


def scale_derivative(values, bounds: np.ndarray, scale: str) -> np.ndarray:
    """``d to_scale / d value``: ``2 / ((hi - lo) (1 - u^2))`` for bounded rows, 1 for the others."""
    values = np.asarray(values, dtype=np.float64)
    bounded = _bounded(bounds, scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        unit = (2 * values - bounds[:, 0] - bounds[:, 1]) / (bounds[:, 1] - bounds[:, 0])
        return np.where(bounded, 2 / ((bounds[:, 1] - bounds[:, 0]) * (1 - unit**2)), 1.0)


def quantile(probability: float, df) -> np.ndarray:
    """The ``probability`` quantile of t with ``df`` degrees of freedom (normal where ``df`` is infinite)."""
    df = np.asarray(df, dtype=np.float64)
    return np.where(np.isfinite(df), stats.t.ppf(probability, np.where(np.isfinite(df), df, 1.0)),
                    stats.norm.ppf(probability))


def _reference(df) -> tuple:
    """The upper tail and its inverse of t with ``df`` degrees of freedom (normal where ``df`` is infinite)."""
    df = np.asarray(df, dtype=np.float64)
    finite = np.isfinite(df)
    safe_df = np.where(finite, df, 1.0)
    return (lambda x: np.where(finite, stats.t.sf(x, safe_df), stats.norm.sf(x)),
            lambda p: np.where(finite, stats.t.isf(p, safe_df), stats.norm.isf(p)))


def pvalue(statistic, df, alternative: str) -> np.ndarray:
    """p-value of a t (or, with infinite ``df``, z) statistic for the alternative."""
    statistic = np.asarray(statistic, dtype=np.float64)
    upper, _ = _reference(df)
    if alternative == "two-sided":
        return 2 * upper(np.abs(statistic))
    if alternative == "larger":
        return upper(statistic)
    return upper(-statistic)


def scaled_errors(estimates, std_errors, bounds: np.ndarray, scale: str) -> np.ndarray:
    """Standard errors on the test scale by the delta method: ``se * g'(estimate)``."""
    return np.asarray(std_errors, dtype=np.float64) * scale_derivative(estimates, bounds, scale)


def wald_statistics(estimates, scale_errors, null_values, bounds: np.ndarray, scale: str) -> np.ndarray:
    """``(g(estimate) - g(null)) / se_g`` on the test scale ``g`` (:func:`to_scale`)."""
    centre = to_scale(estimates, bounds, scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        statistics = (centre - to_scale(null_values, bounds, scale)) / np.asarray(scale_errors)
    # at a bound the statistic tends to 0 (its interval to the whole range): the test cannot reject there
    return np.where(np.isinf(centre), 0.0, statistics)


def intervals(estimates, scale_errors, df, bounds: np.ndarray, scale: str, confidence_level: float) -> np.ndarray:
    """``(m, 2)`` intervals: ``g(estimate) -+ q se_g`` mapped back by ``g^{-1}``, ``q`` from t(df)."""
    check_confidence_level(confidence_level)
    estimates = np.atleast_1d(np.asarray(estimates, dtype=np.float64))
    q = quantile(0.5 + confidence_level / 2, df)
    centre = to_scale(estimates, bounds, scale)
    half = np.broadcast_to(q * np.atleast_1d(scale_errors), centre.shape)
    with np.errstate(invalid="ignore"):
        interval = np.column_stack([from_scale(centre - half, bounds, scale), from_scale(centre + half, bounds, scale)])
    # an estimate at a bound (an accuracy of 0 or 1) sits at infinity on the atanh scale, where
    # g(estimate) -+ q se g'(estimate) tends to the whole range (to the estimate itself without error)
    at_bound = np.isinf(centre)
    whole = np.where((half > 0)[:, None], bounds, estimates[:, None])
    return np.where(at_bound[:, None], whole, interval)


def percentile_bounds(draws: np.ndarray, confidence_level: float) -> np.ndarray:
    """``(m, 2)`` central ``confidence_level`` quantiles of draws ``(n, m)``."""
    check_confidence_level(confidence_level)
    return np.quantile(np.asarray(draws).reshape(len(draws), -1), [0.5 - confidence_level / 2,
                                                                   0.5 + confidence_level / 2], axis=0).T


def median_shift(estimates, draws: np.ndarray, scale_errors, bounds: np.ndarray, scale: str) -> np.ndarray:
    """Where draws are centred: ``(g(estimate) - g(median of the draws)) / se_g`` on the test scale ``g``.

    Positive when the draws lie below the estimate. The median, unlike the mean, is the same on
    every monotone scale, and it is the centre of the intervals of :func:`intervals` mapped back.

    Parameters
    ----------
    estimates : array_like, shape (m,)
    draws : ndarray, shape (n, m)
    scale_errors : array_like, shape (m,)
        Standard errors on the test scale (:func:`scaled_errors`).
    bounds : ndarray, shape (m, 2)
    scale : {"bounded", "linear"}

    Returns
    -------
    ndarray, shape (m,)
        0 where it is undefined (no spread, or estimate and median at the same bound).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = draws_shift(estimates, draws, bounds, scale) / np.asarray(scale_errors, dtype=np.float64)
    return np.where(np.isnan(shift), 0.0, shift)


def median_shift_noise(n_draws: int) -> float:
    """The Monte Carlo standard error of :func:`median_shift`, in standard errors: ``sqrt(pi / (2 n))``, that of
    the median of ``n`` normal draws."""
    return float(np.sqrt(np.pi / (2 * n_draws)))


def draws_shift(estimates, draws: np.ndarray, bounds: np.ndarray, scale: str) -> np.ndarray:
    """``d = g(estimate) - g(median of the draws)`` on the test scale (0 where both sit at the same bound)."""
    draws = np.asarray(draws, dtype=np.float64).reshape(len(draws), -1)
    with np.errstate(invalid="ignore"):
        shift = to_scale(estimates, bounds, scale) - to_scale(np.median(draws, axis=0), bounds, scale)
    return np.where(np.isnan(shift), 0.0, shift)


def _centres(estimates, shift: np.ndarray, bounds: np.ndarray, scale: str) -> tuple[np.ndarray, np.ndarray]:
    """The lower and upper ends of the segment from ``g(estimate)`` to ``g(estimate) + shift``, as values."""
    centre = to_scale(estimates, bounds, scale)
    with np.errstate(invalid="ignore"):
        ends = np.where(np.isnan(centre + shift), centre, centre + shift)
    return (from_scale(np.minimum(centre, ends), bounds, scale), from_scale(np.maximum(centre, ends), bounds, scale))


def extended_intervals(estimates, scale_errors, shift: np.ndarray, df, bounds: np.ndarray, scale: str,
                       confidence_level: float) -> np.ndarray:
    """``(m, 2)`` intervals of :func:`intervals` centred anywhere from ``g(estimate)`` to ``g(estimate) + shift``.

    With ``shift`` from :func:`draws_shift`: the interval around the estimate extended by the draws'
    shift, on the side away from the draws. Always one piece, holding the estimate.
    """
    low, high = _centres(estimates, shift, bounds, scale)
    return np.column_stack([intervals(low, scale_errors, df, bounds, scale, confidence_level)[:, 0],
                            intervals(high, scale_errors, df, bounds, scale, confidence_level)[:, 1]])


def extended_pvalues(estimates, scale_errors, shift: np.ndarray, null_values, df, bounds: np.ndarray, scale: str,
                     alternative: str) -> np.ndarray:
    """The p-values that invert :func:`extended_intervals`, read off one confidence distribution (:func:`cdf_pvalues`).

    The intervals are those of every centre from ``g(estimate)`` to ``g(estimate) + shift``, so their
    confidence distribution at a null is the t distribution's about the lowest centre below it, about
    the highest above it, and 1/2 between the two: two-sided p is 1 between the estimate and its
    corrected value, and the two one-sided p-values sum to 1.
    """
    low, high = _centres(estimates, shift, bounds, scale)
    nulls = np.broadcast_to(np.asarray(null_values, dtype=np.float64), low.shape)
    below = pvalue(wald_statistics(low, scale_errors, nulls, bounds, scale), df, "larger")
    above = pvalue(wald_statistics(high, scale_errors, nulls, bounds, scale), df, "larger")
    return cdf_pvalues(_joined(below, above), alternative)


def cdf_pvalues(confidence: np.ndarray, alternative: str) -> np.ndarray:
    """p-values from a confidence distribution's value at each null, ``H(null)``: "larger" is ``H``, "smaller"
    ``1 - H``, two-sided twice the smaller of the two, so every p-value of a result comes from one nested
    family of intervals."""
    confidence = np.asarray(confidence, dtype=np.float64)
    if alternative == "larger":
        return confidence
    if alternative == "smaller":
        return 1.0 - confidence
    return np.minimum(1.0, 2.0 * np.minimum(confidence, 1.0 - confidence))


def _joined(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """One confidence distribution from the lower ends' (``lower``, below 1/2 left of the intervals' common centre)
    and the upper ends' (``upper``, above 1/2 right of it): each where it is on its side of 1/2, else 1/2 (every
    interval holds the null, however small its level)."""
    return np.where(lower < 0.5, lower, np.where(upper > 0.5, upper, 0.5))


def draws_cdf(draws: np.ndarray, values, side: str) -> np.ndarray:
    """The inverse of ``np.quantile``'s (linear) quantile function of each column of ``draws`` at ``values``.

    Between draws it interpolates as ``np.quantile`` does, so a value below the ``q`` quantile has a
    share below ``q`` exactly. At a value several draws share, ``side="lower"`` gives the top of their
    block (a lower interval end there holds the value), ``"upper"`` its bottom.
    """
    ordered = np.sort(np.asarray(draws, dtype=np.float64).reshape(len(draws), -1), axis=0)
    n = ordered.shape[0]
    values = np.broadcast_to(np.asarray(values, dtype=np.float64), (ordered.shape[1],))
    shares = np.empty(values.shape)
    for k, (column, value) in enumerate(zip(ordered.T, values)):
        below, at_most = np.searchsorted(column, value, "left"), np.searchsorted(column, value, "right")
        if np.isnan(value):
            position = np.nan
        elif at_most > below:
            position = at_most - 1 if side == "lower" else below
        elif below == 0:
            position = -np.inf
        elif below == n:
            position = np.inf
        else:
            position = below - 1 + (value - column[below - 1]) / (column[below] - column[below - 1])
        shares[k] = np.clip(position / max(n - 1, 1), 0.0, 1.0)
    return shares


def pivot_intervals(estimates, errors, pivots: np.ndarray, confidence_level: float) -> np.ndarray:
    """``(m, 2)`` intervals ``estimate - se q(1 - alpha / 2)`` to ``estimate - se q(alpha / 2)``, ``q`` the quantiles of
    each column of ``pivots``, draws of ``(estimate - truth) / se`` (unbounded rows on their own scale)."""
    check_confidence_level(confidence_level)
    quantiles = np.quantile(np.asarray(pivots).reshape(len(pivots), -1),
                            [0.5 + confidence_level / 2, 0.5 - confidence_level / 2], axis=0)
    return (np.asarray(estimates, dtype=np.float64) - np.asarray(errors, dtype=np.float64) * quantiles).T


def pivot_pvalues(estimates, errors, pivots: np.ndarray, null_values, alternative: str) -> np.ndarray:
    """p-values that invert :func:`pivot_intervals`: with ``t = (estimate - null) / se`` and ``F`` the pivots'
    share at most ``t`` (:func:`draws_cdf`), "smaller" is ``F(t)``, "larger" ``1 - F(t)``, two-sided
    ``min(1, 2 min)``; a row without error has two-sided p 1 at its estimate and 0 elsewhere."""
    estimates, errors = np.asarray(estimates, dtype=np.float64), np.asarray(errors, dtype=np.float64)
    gaps = estimates - np.broadcast_to(np.asarray(null_values, dtype=np.float64), estimates.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        statistics = np.where(errors > 0, gaps / errors, np.sign(gaps) * np.inf)
    shares = np.where(np.isposinf(statistics), 1.0, np.where(np.isneginf(statistics), 0.0,
                                                             draws_cdf(pivots, np.nan_to_num(statistics), "lower")))
    smaller = np.where(gaps == 0, 0.5, shares)
    larger = 1.0 - smaller
    if alternative == "larger":
        return larger
    if alternative == "smaller":
        return smaller
    return np.minimum(1.0, 2 * np.minimum(larger, smaller))


def union_intervals(estimates, scale_errors, draws: np.ndarray, df, bounds: np.ndarray, scale: str,
                    confidence_level: float) -> np.ndarray:
    """``(m, 2)`` unions of the interval of :func:`intervals` and the draws' percentile interval, slid on the test
    scale from the draws' median to the estimate.

    Every part holds the estimate or meets one that does, so the union is one piece: where the
    percentile interval meets the interval around the estimate, it is their union.
    """
    wald = intervals(estimates, scale_errors, df, bounds, scale, confidence_level)
    shift = draws_shift(estimates, draws, bounds, scale)
    low, high = percentile_bounds(draws, confidence_level).T
    with np.errstate(invalid="ignore"):
        slid_low = from_scale(to_scale(low, bounds, scale) + np.minimum(shift, 0.0), bounds, scale)
        slid_high = from_scale(to_scale(high, bounds, scale) + np.maximum(shift, 0.0), bounds, scale)
    # fmin / fmax: a draw interval at a bound slid by an infinite shift is undefined (NaN) and gives way
    return np.column_stack([np.fmin(wald[:, 0], np.fmin(low, slid_low)), np.fmax(wald[:, 1], np.fmax(high, slid_high))])


def union_pvalues(estimates, scale_errors, draws: np.ndarray, null_values, df, bounds: np.ndarray, scale: str,
                  alternative: str) -> np.ndarray:
    """The p-values that invert :func:`union_intervals`, read off one confidence distribution (:func:`cdf_pvalues`).

    A lower end of the union is the lower of the Wald interval's and the slid draws' (slid down by the
    draws' shift where it is negative), so left of the centre the confidence distribution is the larger
    of the t distribution's and the slid draws' share at the null; right of it, the smaller of the two
    (the draws slid up where the shift is positive); 1/2 where neither side's is past 1/2.
    """
    draws = np.asarray(draws, dtype=np.float64).reshape(len(draws), -1)
    nulls = np.broadcast_to(np.asarray(null_values, dtype=np.float64), (draws.shape[1],))
    shift = draws_shift(estimates, draws, bounds, scale)
    null_on_scale = to_scale(nulls, bounds, scale)
    wald = pvalue(wald_statistics(estimates, scale_errors, nulls, bounds, scale), df, "larger")
    with np.errstate(invalid="ignore"):
        # the null moved against the slide is the slid draws' share at the null
        down = from_scale(null_on_scale - np.minimum(shift, 0.0), bounds, scale)
        up = from_scale(null_on_scale - np.maximum(shift, 0.0), bounds, scale)
    down, up = np.where(np.isnan(down), nulls, down), np.where(np.isnan(up), nulls, up)
    lower = np.maximum(wald, draws_cdf(draws, down, "lower"))
    upper = np.minimum(wald, draws_cdf(draws, up, "upper"))
    return cdf_pvalues(_joined(lower, upper), alternative)


def statistic_of_pvalue(pvalues, signs, df, alternative: str) -> np.ndarray:
    """The t (z with infinite ``df``) statistic whose p-value for ``alternative`` is ``pvalues``: :func:`pvalue`'s inverse.

    A two-sided p-value gives the statistic's size only; ``signs`` (of the estimate minus the null) give
    its sign.
    """
    pvalues = np.asarray(pvalues, dtype=np.float64)
    _, upper_quantile = _reference(df)
    if alternative == "two-sided":
        return np.sign(signs) * upper_quantile(pvalues / 2) + 0.0  # no -0 where p is 1
    if alternative == "larger":
        return upper_quantile(pvalues)
    return -upper_quantile(pvalues)
