"""The one rule that turns an inference core into statistics, p-values and intervals (:class:`InferenceRule`).

``glovev_ext.stats.engine.intervals`` holds the formulas; the rule decides which of them a result uses: a
Wald test and interval on the test scale, or, for a Monte Carlo result, the interval that uses its
draws and the test that inverts it. It also says what each row's test statistic is
(:data:`PLAIN`, :data:`ATANH` or :data:`FROM_P`), so a table can head that column truthfully.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .intervals import (EXTENDED, UNION, draws_shift, extended_intervals, extended_pvalues, intervals, pvalue,
                        scaled_errors, statistic_of_pvalue, union_intervals, union_pvalues, wald_statistics)

MONTE_CARLO = "Monte Carlo"
PLAIN = "plain"  # (estimate - null) / std err
ATANH = "atanh"  # the same on atanh of the value mapped to (-1, 1), with the std err carried there
FROM_P = "from p"  # the t whose tail is the p-value of a test that inverts an interval using draws


@dataclass(frozen=True)
class InferenceRule:
    """What intervals and tests of ``m`` values rest on, and the one rule that turns it into them.

    On the test scale with ``se g'(estimate)`` (the delta method's ``se`` for Monte Carlo, when known)
    and t(``df``). A Monte Carlo rule with draws uses them as ``draws_interval`` says: ``"union"``
    (bounded scale only) joins the draws' percentile interval, slid from their median to the
    estimate; ``"extended"`` extends the interval by the draws' shift. Its test then inverts that
    interval, and its statistic is the t with that p-value (:data:`FROM_P`).
    """

    estimates: np.ndarray
    std_errors: np.ndarray
    delta_std_errors: np.ndarray | None
    df: np.ndarray
    bounds: np.ndarray
    scale: str
    method: str
    draws: np.ndarray | None
    draws_interval: str = UNION

    def row(self, k: int) -> InferenceRule:
        """The rule of row ``k`` alone (one value, its column of draws)."""
        pick = slice(k, k + 1)
        return InferenceRule(self.estimates[pick], self.std_errors[pick],
                             None if self.delta_std_errors is None else self.delta_std_errors[pick], self.df[pick],
                             self.bounds[pick], self.scale, self.method,
                             None if self.draws is None else self.draws[:, pick], self.draws_interval)

    @property
    def _uses(self) -> str | None:
        """How the draws enter: ``UNION``, ``EXTENDED`` or None (a Wald interval)."""
        if self.method != MONTE_CARLO or self.draws is None:
            return None
        if self.draws_interval == EXTENDED:
            return EXTENDED
        return UNION if self.scale == "bounded" else None

    @property
    def tested_errors(self) -> np.ndarray:
        """The standard errors (on the statistic's own scale) the intervals and tests are built from: the
        delta method's where a Monte Carlo rule uses its draws and has them, else ``std_errors``."""
        use_delta = self._uses is not None and self.delta_std_errors is not None
        return self.delta_std_errors if use_delta else self.std_errors

    @property
    def statistic_kinds(self) -> np.ndarray:
        """What each row's test statistic is: :data:`PLAIN`, :data:`ATANH` or :data:`FROM_P`."""
        if self._uses is not None:
            return np.full(len(self.estimates), FROM_P, dtype=object)
        bounded = np.isfinite(self.bounds).all(axis=1) & (self.scale == "bounded")
        return np.where(bounded, ATANH, PLAIN).astype(object)

    @property
    def _scale_errors(self) -> np.ndarray:
        return scaled_errors(self.estimates, self.tested_errors, self.bounds, self.scale)

    @property
    def _shift(self) -> np.ndarray:
        return draws_shift(self.estimates, self.draws, self.bounds, self.scale)

    def wald_statistics(self, null_values) -> np.ndarray:
        """``(g(estimate) - g(null)) / se_g`` on the test scale, whatever the test."""
        return wald_statistics(self.estimates, self._scale_errors, np.asarray(null_values, dtype=np.float64),
                               self.bounds, self.scale)

    def tests(self, null_values, alternative: str) -> tuple[np.ndarray, np.ndarray]:
        """Each row's test statistic and p-value, the draws asked once: the Wald statistic, or with draws the t
        whose p-value the test gives."""
        wald = self.wald_statistics(null_values)
        if self._uses is None:
            return wald, pvalue(wald, self.df, alternative)
        pvalues = self.pvalues(null_values, alternative)
        return statistic_of_pvalue(pvalues, wald, self.df, alternative), pvalues

    def statistics(self, null_values, alternative: str) -> np.ndarray:
        """Each row's test statistic (see :meth:`tests`)."""
        return self.tests(null_values, alternative)[0]

    def pvalues(self, null_values, alternative: str) -> np.ndarray:
        nulls = np.asarray(null_values, dtype=np.float64)
        if self._uses == EXTENDED:
            return extended_pvalues(self.estimates, self._scale_errors, self._shift, nulls, self.df, self.bounds,
                                    self.scale, alternative)
        if self._uses == UNION:
            return union_pvalues(self.estimates, self._scale_errors, self.draws, nulls, self.df, self.bounds,
                                 self.scale, alternative)
        return pvalue(self.wald_statistics(nulls), self.df, alternative)

    def conf_int(self, confidence_level: float) -> np.ndarray:
        if self._uses == EXTENDED:
            return extended_intervals(self.estimates, self._scale_errors, self._shift, self.df, self.bounds,
                                      self.scale, confidence_level)
        if self._uses == UNION:
            return union_intervals(self.estimates, self._scale_errors, self.draws, self.df, self.bounds, self.scale,
                                   confidence_level)
        return intervals(self.estimates, self._scale_errors, self.df, self.bounds, self.scale, confidence_level)

    def interval_lines(self) -> list[str]:
        """What a summary says about an interval that uses draws: how it is formed, and, for one value, where
        the draws lie."""
        where = "on atanh" if self.scale == "bounded" and np.isfinite(self.bounds).all() else ""
        which = "the delta method's" if self.delta_std_errors is not None else "the draws'"
        reference = "t" if np.isfinite(self.df).any() else "normal"
        if self._uses == UNION:
            return [f"Interval: the union of the {reference} interval around the estimate ({which} standard error) and "
                    "the draws' percentile interval, slid from the draws' median to the estimate (one piece; "
                    "docs/method.md 6.9)"]
        if self._uses != EXTENDED:
            return []
        line = (f"Interval: the {reference} interval around the estimate ({which} standard error"
                f"{', ' + where if where else ''})"
                " extended by the draws' shift, up to 2 g(estimate) - g(median of the draws): the noise that moves "
                "the draws from the estimate moves the estimate from its noise-free value about as far "
                "(docs/method.md 6.9)")
        if len(self.estimates) == 1:
            median = float(np.median(self.draws))
            gap = float(self.estimates[0]) - median
            line += (f"; the draws' median is {median:.4g}, {abs(gap):.4g} {'below' if gap > 0 else 'above'} the "
                     "estimate (attenuation)")
        return [line]
