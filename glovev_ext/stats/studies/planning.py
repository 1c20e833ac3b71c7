"""Planning a study: the standard error a statistic has now, what it could detect, and with more text.

For a fitted model (a pilot corpus) and planned statistics, :func:`plan_study` reports each
statistic's standard error, its minimum detectable effect at a chosen power (against its null
value, and between two independent corpora of the same size, as in a before/after comparison), the
same for corpora ``k`` times larger, and the largest embedding dimension at which every word of the
statistic keeps a covariance. The projection rule, ``se(k n) = se(n) / sqrt(k)``, is derived in
docs/method.md section 7.4: it is exact when the residuals of the co-occurrence fit are sampling
noise, whether or not counts exceed ``x_max``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..engine.estimation import wald_test
from .power import minimum_detectable_effect
from ..engine.statistic import Statistic
from ..engine.words import EmbeddingWithCovariance

CORPUS_SCALES = (1, 2, 3, 5, 10)


@dataclass(frozen=True)
class StudyPlan:
    """What planned statistics can detect now and in larger corpora of the same kind.

    Attributes
    ----------
    statistics : DataFrame
        One row per statistic: ``estimate``, ``std err``, ``df``, ``fewest contexts`` (of its
        words), ``max D`` (the largest dimension at which all its words keep a covariance: their
        fewest contexts minus one) and ``words``.
    projection : DataFrame
        Rows ``(statistic, k)``: ``std err``, ``MDE`` (the smallest true distance from the null value
        that the test detects with the asked power) and ``MDE, two corpora`` (the smallest
        difference between two independent corpora, each k times the pilot's size).
    power_goal, significance_level : float
    alternative : str
    """

    statistics: pd.DataFrame
    projection: pd.DataFrame
    power_goal: float
    significance_level: float
    alternative: str

    def summary_frame(self) -> pd.DataFrame:
        """The projection table."""
        return self.projection

    def __str__(self) -> str:
        head = (f"Study plan: minimum detectable effects at power {self.power_goal:.0%}, level "
                f"{self.significance_level:g}, {self.alternative}; k = corpus size / the pilot's, "
                "se(k) = se / sqrt(k) (docs/method.md section 7.4)")
        with pd.option_context("display.width", 200, "display.max_columns", 20):
            return "\n".join([head, self.statistics.to_string(float_format=lambda x: f"{x:.4g}"),
                              self.projection.to_string(float_format=lambda x: f"{x:.4g}")])


def plan_study(kv: EmbeddingWithCovariance, statistics: Mapping[str, Statistic] | Statistic, *,
               corpus_scales: Sequence[float] = CORPUS_SCALES, power_goal: float = 0.8,
               significance_level: float = 0.05, alternative: str = "two-sided",
               null_value: float = 0.0) -> StudyPlan:
    """Standard errors and minimum detectable effects of planned statistics, now and with k times the text.

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
        The pilot's fitted model.
    statistics : Statistic or dict of Statistic
        Single-valued statistics (e.g. ``{"gender bias": cosine_bias_statistic(...)}``) whose words
        have covariances.
    corpus_scales : sequence of float, default=(1, 2, 3, 5, 10)
        Corpus sizes as multiples of the pilot's.
    power_goal : float, default=0.8
    significance_level : float, default=0.05
    alternative : {"two-sided", "larger", "smaller"}
    null_value : float, default=0

    Returns
    -------
    StudyPlan

    Notes
    -----
    Standard errors by the delta method, tests as the library runs them (t with the statistic's
    degrees of freedom, on the bounded scale: :func:`~glovev_ext.stats.minimum_detectable_effect`).
    The projection keeps the statistic's value and degrees of freedom; it assumes the larger corpus
    is of the same kind (each word about k times as frequent).
    """
    if isinstance(statistics, Statistic):
        statistics = {statistics.name: statistics}
    scales = np.asarray(corpus_scales, dtype=np.float64)
    if scales.ndim != 1 or scales.size == 0 or not (scales > 0).all():
        raise ValueError(f"corpus_scales must be positive numbers, got {list(corpus_scales)}")
    options = {"power_goal": power_goal, "significance_level": significance_level, "alternative": alternative}
    rows, projected = [], []
    for name, statistic in statistics.items():
        if len(statistic.names) != 1:
            raise ValueError(f"{name}: plan single-valued statistics ({len(statistic.names)} values)")
        now = wald_test(kv, statistic, method="delta", null_value=null_value, alternative=alternative)
        fewest = min(int(kv.covariance_store.n_contexts[kv.covariance_row(w)]) for w in statistic.keys)
        rows.append({"statistic": name, "estimate": now.estimate, "std err": now.std_error, "df": now.df,
                     "fewest contexts": fewest, "max D": fewest - 1, "words": len(statistic.keys)})
        low, high = now.bounds
        for k in scales:
            error = now.std_error / np.sqrt(k)
            projected.append({
                "statistic": name, "k": k, "std err": error,
                "MDE": minimum_detectable_effect(error, null_value=null_value, at=now.estimate, df=now.df,
                                                 bounds=now.bounds, scale=now.scale, **options),
                "MDE, two corpora": minimum_detectable_effect(np.sqrt(2) * error, df=now.df,
                                                              bounds=(low - high, high - low), scale=now.scale,
                                                              **options)})
    return StudyPlan(pd.DataFrame(rows).set_index("statistic"), pd.DataFrame(projected).set_index(["statistic", "k"]),
                     power_goal, significance_level, alternative)
