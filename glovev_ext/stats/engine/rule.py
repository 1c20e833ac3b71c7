"""The one rule that turns an inference core into statistics, p-values and intervals (:class:`InferenceRule`).

``glovev_ext.stats.engine.intervals`` holds the formulas; the rule decides which of them a result uses: a
Wald test and interval on the test scale, or, for a Monte Carlo result, the interval that uses its
draws and the test that inverts it. It also says what each row's test statistic is
(:data:`PLAIN`, :data:`ATANH` or :data:`FROM_P`), so a table can head that column truthfully.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .intervals import (EXTENDED, PIVOT, UNION, draws_shift, extended_intervals, extended_pvalues, intervals,
                        pivot_intervals, pivot_pvalues, pvalue, scaled_errors, statistic_of_pvalue, union_intervals,
                        union_pvalues, wald_statistics)

MONTE_CARLO = "Monte Carlo"
NULL_DRAWS = "null draws"  # tests and intervals from draws of the statistic under its null (a pivot), not of the words
PLAIN = "plain"  # (estimate - null) / std err
ATANH = "atanh"  # the same on atanh of the value mapped to (-1, 1), with the std err carried there
FROM_P = "from p"  # the t whose tail is the p-value of a test that inverts an interval using draws
MIXED_INTERVALS = ("Intervals: each row's as its own Monte Carlo judgement chose (method='auto' judges the rows one "
                   "by one): the delta method's t interval, that interval joined with the draws' percentile "
                   "interval slid to the estimate, or extended by the draws' shift (docs/method.md 6.4, 6.9)")


@dataclass(frozen=True)
class InferenceRule:
    """What intervals and tests of ``m`` values rest on, and the one rule that turns it into them.

    On the test scale with ``se g'(estimate)`` (the delta method's ``se`` for Monte Carlo, when known)
    and t(``df``). A Monte Carlo rule with draws uses them, row by row, as ``draws_interval`` says:
    ``"union"`` (bounded scale only) joins the draws' percentile interval, slid from their median to
    the estimate; ``"extended"`` extends the interval by the draws' shift. Its test then inverts that
    interval, and its statistic is the t with that p-value (:data:`FROM_P`). Rows in ``delta_rows``
    keep the delta method's Wald interval and test (``method="auto"`` judged them one by one). A
    :data:`NULL_DRAWS` rule's draws are of ``(estimate - truth) / se`` under the test's null
    (``"pivot"``): its intervals are ``estimate - se q`` at their quantiles, and its tests invert them.
    """

    estimates: np.ndarray
    std_errors: np.ndarray
    delta_std_errors: np.ndarray | None
    df: np.ndarray
    bounds: np.ndarray
    scale: str
    method: str
    draws: np.ndarray | None
    draws_interval: np.ndarray
    delta_rows: np.ndarray

    def take(self, rows) -> InferenceRule:
        """The rule of ``rows`` alone (their values and columns of draws)."""
        rows = np.atleast_1d(np.asarray(rows, dtype=np.intp))
        return InferenceRule(self.estimates[rows], self.std_errors[rows],
                             None if self.delta_std_errors is None else self.delta_std_errors[rows], self.df[rows],
                             self.bounds[rows], self.scale, self.method,
                             None if self.draws is None else self.draws[:, rows], self.draws_interval[rows],
                             self.delta_rows[rows])

    def row(self, k: int) -> InferenceRule:
        """The rule of row ``k`` alone (one value, its column of draws)."""
        return self.take([k])

    @property
    def uses(self) -> np.ndarray:
        """How each row's draws enter: ``UNION``, ``EXTENDED`` or ``""`` (a Wald interval)."""
        m = len(self.estimates)
        if self.method not in (MONTE_CARLO, NULL_DRAWS) or self.draws is None:
            return np.full(m, "", dtype=object)
        kinds = np.where(self.draws_interval == EXTENDED, EXTENDED, UNION if self.scale == "bounded" else "")
        kinds = np.where(self.draws_interval == PIVOT, PIVOT, kinds)
        return np.where(self.delta_rows, "", kinds).astype(object)

    @property
    def tested_errors(self) -> np.ndarray:
        """The standard errors (on the statistic's own scale) the intervals and tests are built from: the
        delta method's where a Monte Carlo row uses its draws or keeps the delta method, else ``std_errors``."""
        if self.delta_std_errors is None:
            return self.std_errors
        uses = self.uses
        use_delta = (uses == UNION) | (uses == EXTENDED) | self.delta_rows
        return np.where(use_delta, self.delta_std_errors, self.std_errors)

    @property
    def statistic_kinds(self) -> np.ndarray:
        """What each row's test statistic is: :data:`PLAIN`, :data:`ATANH` or :data:`FROM_P`."""
        bounded = np.isfinite(self.bounds).all(axis=1) & (self.scale == "bounded")
        return np.where(self.uses != "", FROM_P, np.where(bounded, ATANH, PLAIN)).astype(object)

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
        pvalues = self.pvalues(null_values, alternative)
        from_p = self.uses != ""
        statistics = wald.copy()
        statistics[from_p] = statistic_of_pvalue(pvalues[from_p], wald[from_p], self.df[from_p], alternative)
        return statistics, pvalues

    def statistics(self, null_values, alternative: str) -> np.ndarray:
        """Each row's test statistic (see :meth:`tests`)."""
        return self.tests(null_values, alternative)[0]

    def pvalues(self, null_values, alternative: str) -> np.ndarray:
        """Each row's p-value: the Wald test's, or the test that inverts the row's interval using its draws."""
        nulls = np.broadcast_to(np.asarray(null_values, dtype=np.float64), self.estimates.shape)
        result = np.array(pvalue(self.wald_statistics(nulls), self.df, alternative), dtype=np.float64)
        for kind, rows in self._by_use():
            part = self.take(rows)
            if kind == PIVOT:
                result[rows] = pivot_pvalues(part.estimates, part.tested_errors, part.draws, nulls[rows], alternative)
            elif kind == EXTENDED:
                result[rows] = extended_pvalues(part.estimates, part._scale_errors, part._shift, nulls[rows], part.df,
                                                part.bounds, part.scale, alternative)
            else:
                result[rows] = union_pvalues(part.estimates, part._scale_errors, part.draws, nulls[rows], part.df,
                                             part.bounds, part.scale, alternative)
        return result

    def conf_int(self, confidence_level: float) -> np.ndarray:
        """Each row's interval, ``(m, 2)``: the Wald interval, or the one its draws give as ``draws_interval`` says."""
        result = np.array(intervals(self.estimates, self._scale_errors, self.df, self.bounds, self.scale,
                                    confidence_level), dtype=np.float64).reshape(-1, 2)
        for kind, rows in self._by_use():
            part = self.take(rows)
            if kind == PIVOT:
                result[rows] = pivot_intervals(part.estimates, part.tested_errors, part.draws, confidence_level)
            elif kind == EXTENDED:
                result[rows] = extended_intervals(part.estimates, part._scale_errors, part._shift, part.df,
                                                  part.bounds, part.scale, confidence_level)
            else:
                result[rows] = union_intervals(part.estimates, part._scale_errors, part.draws, part.df, part.bounds,
                                               part.scale, confidence_level)
        return result

    def _by_use(self) -> list[tuple[str, np.ndarray]]:
        """The rows that use their draws, by how (``UNION`` or ``EXTENDED``)."""
        uses = self.uses
        return [(kind, np.flatnonzero(uses == kind)) for kind in (UNION, EXTENDED, PIVOT) if (uses == kind).any()]

    def interval_lines(self) -> list[str]:
        """What a summary says about an interval that uses draws: how it is formed, and, for one value, where
        the draws lie."""
        where = "on atanh" if self.scale == "bounded" and np.isfinite(self.bounds).all() else ""
        which = "the delta method's" if self.delta_std_errors is not None else "the draws'"
        reference = "t" if np.isfinite(self.df).any() else "normal"
        uses = set(self.uses)
        if uses == {""}:
            return []
        if uses == {PIVOT}:
            return [f"Interval and test: the estimate less its standard error times the quantiles of the statistic "
                    f"(estimate - null) / std err over {len(self.draws) // 2} draws under the null and their mirror "
                    "images, the reference the equality test uses; the interval holds the nulls the test does not "
                    "reject"]
        if uses == {UNION}:
            return [f"Interval: the union of the {reference} interval around the estimate ({which} standard error) and "
                    "the draws' percentile interval, slid from the draws' median to the estimate (one piece; "
                    "docs/method.md 6.9)"]
        if uses != {EXTENDED}:
            return [MIXED_INTERVALS]
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
