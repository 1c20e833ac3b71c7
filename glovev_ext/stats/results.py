"""Result objects that read like statsmodels results: one state, several renderings.

:class:`InferenceResult` (one statistic), :class:`ResultFamily` (several, with their joint
covariance) and :class:`NeighborsResult` (a neighbour table) render their summaries through one
path (``._summary``): a DataFrame and notes saying what the result rests on.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from statsmodels.iolib.summary import Summary
from statsmodels.stats.contrast import ContrastResults
from statsmodels.stats.multitest import multipletests

from .._deprecation import positional_significance_level, renamed_keywords
from ._summary import notes, parameter_frame, reference_line, render
from .delta import WordShares
from .shared_prior import PriorLink
from .intervals import (EXTENDED, UNBOUNDED, UNION, bounds_of, check_alternative, check_draws_interval, draws_shift,
                        extended_intervals, extended_pvalues, intervals, linear_bounds, percentile_bounds, pvalue,
                        scaled_errors, union_intervals, union_pvalues, wald_statistics, welch_satterthwaite)

DELTA = "delta method"
MONTE_CARLO = "Monte Carlo"
PERMUTATION = "permutation"
RECONSTRUCTION = "GloVe-V reconstruction error (embedding uncertainty given the corpus)"
WORD_LISTS = "word-list assignment (permutation of the target words)"
NEIGHBOR_COLUMNS = ("Columns: rank and coef, the cosine similarity of the trained vectors; std err and the "
                    "interval, from GloVe-V; P(this rank), the share of Monte Carlo draws of the embedding in "
                    "which the word holds exactly this rank among the listed words (not among the whole "
                    "vocabulary); P>t (vs next), the one-sided p-value of the test that the word is more similar "
                    "than the next one (P>z with a normal reference; none for the last row).")


@dataclass(frozen=True)
class InferenceResult:
    """A statistic of the embedding with its standard error, test and interval.

    Unpacks as ``statistic, pvalue = result``.

    Attributes
    ----------
    name : str
        What was estimated.
    estimate : float
        The statistic at the trained vectors.
    std_error : float
        Its standard error (delta method, or the spread of Monte Carlo draws).
    null_value : float
        Value under the null hypothesis.
    alternative : {"two-sided", "larger", "smaller"}
    statistic : float
        The Wald t (or z) statistic on the test scale, or the permutation test's statistic.
    pvalue : float
    method : str
        How the uncertainty was propagated ("delta method", "Monte Carlo", "permutation").
    uncertainty : str
        Which uncertainty the result carries.
    words : tuple of str
        Words the statistic used.
    dropped : tuple of str
        What was left out (out of vocabulary or without covariance), by name, with the reasons.
    dropped_noun : str
        What ``dropped`` holds: "word", "pair" or "question".
    draws : ndarray or None
        Monte Carlo draws of the statistic (each word drawn from its t distribution with
        ``use_t``), or the permutation distribution.
    variance_contributions : ndarray or None
        The variance each word of ``words`` contributes (delta method; they add up to its variance).
    df : float
        Degrees of freedom of the t reference distribution (inf: normal).
    bounds : tuple of float
        The range the statistic can attain (``(-inf, inf)`` if unbounded).
    scale : {"bounded", "linear"}
        Where intervals and tests are formed: ``"bounded"`` on ``atanh`` of the value mapped to
        (-1, 1) (Fisher's z for a cosine), so intervals stay inside ``bounds``; ``"linear"`` on the
        statistic itself (the paper's intervals).
    method_reason : str
        Why ``method`` was used (``method="auto"`` says what its diagnostic found).
    caveats : tuple of str
        What the reader must know: words that dominate the variance, covariances known to be
        understated.
    delta_std_error : float
        The delta method's standard error when ``std_error`` is Monte Carlo's (NaN otherwise): the
        Wald half of a Monte Carlo interval on the bounded scale (``glovev_ext.stats.intervals``).
    draws_interval : {"union", "extended"}
        How a Monte Carlo result's interval and test use its draws (``glovev_ext.stats.intervals``):
        ``"union"``, the interval around the estimate joined with the draws' percentile interval slid
        from their median to the estimate (bounded scale); ``"extended"``, the interval around the
        estimate extended by the draws' shift (:attr:`attenuation`) to the estimate corrected for it.
        Either is one piece that holds the estimate. The ``statistic`` stays the Wald statistic at the
        estimate; the p-value inverts the interval.
    dropped_noun : str
        What ``dropped`` holds: "word", "pair" or "question".
    prior_link : PriorLink or None
        For a statistic of posteriors under a prior: its gradients, its words' covariances and the
        prior, with which :func:`~glovev_ext.compare_models` takes out the part of the error that fits
        under the same prior share (:mod:`glovev_ext.stats.shared_prior`).
    """

    name: str
    estimate: float
    std_error: float
    null_value: float = 0.0
    alternative: str = "two-sided"
    statistic: float = np.nan
    pvalue: float = np.nan
    method: str = DELTA
    uncertainty: str = RECONSTRUCTION
    words: tuple = ()
    dropped: tuple = ()
    draws: np.ndarray | None = field(default=None, repr=False, compare=False)
    variance_contributions: np.ndarray | None = field(default=None, repr=False, compare=False)
    df: float = np.inf
    bounds: tuple = UNBOUNDED
    scale: str = "linear"
    method_reason: str = ""
    caveats: tuple = ()
    delta_std_error: float = np.nan
    dropped_noun: str = "word"
    draws_interval: str = UNION
    prior_link: PriorLink | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        check_draws_interval(self.draws_interval)

    @classmethod
    def wald(cls, name: str, estimate: float, std_error: float, *, null_value: float = 0.0,
             alternative: str = "two-sided", method: str = DELTA, words: Sequence = (), dropped: Sequence = (),
             draws: np.ndarray | None = None, uncertainty: str = RECONSTRUCTION,
             variance_contributions: np.ndarray | None = None, df: float = np.inf, bounds: tuple = UNBOUNDED,
             scale: str = "linear", method_reason: str = "", caveats: Sequence[str] = (),
             delta_std_error: float = np.nan, dropped_noun: str = "word",
             draws_interval: str = UNION, prior_link: PriorLink | None = None) -> InferenceResult:
        """A Wald test of ``estimate == null_value`` (t with ``df`` degrees of freedom, on ``scale``).

        With Monte Carlo draws the test also asks the draws, as ``draws_interval`` says (see
        ``glovev_ext.stats.intervals``).
        """
        check_alternative(alternative)
        box = bounds_of(bounds, 1)
        rule = InferenceRule.of_one(estimate, std_error, delta_std_error, df, box, scale, method, draws,
                                    draws_interval)
        statistic = float(rule.statistics([null_value])[0])
        p = float(rule.pvalues([null_value], alternative)[0])
        return cls(name=name, estimate=float(estimate), std_error=float(std_error), null_value=float(null_value),
                   alternative=alternative, statistic=statistic, pvalue=p, method=method, uncertainty=uncertainty,
                   words=tuple(words), dropped=tuple(dropped), draws=draws,
                   variance_contributions=variance_contributions, df=float(df), bounds=tuple(map(float, box[0])),
                   scale=scale, method_reason=method_reason, caveats=tuple(caveats),
                   delta_std_error=float(delta_std_error), dropped_noun=dropped_noun, draws_interval=draws_interval,
                   prior_link=prior_link)

    def __iter__(self) -> Iterator[float]:
        return iter((self.statistic, self.pvalue))

    @positional_significance_level
    def conf_int(self, *, confidence_level: float = 0.95) -> tuple[float, float]:
        """Interval around the estimate at the trained vectors, on the result's scale and reference distribution.

        Parameters
        ----------
        confidence_level : float, default=0.95

        Notes
        -----
        On the bounded scale: ``g(estimate) -+ q se_g`` mapped back (``g`` the atanh of the value
        rescaled to (-1, 1), ``q`` the t quantile, ``se_g = se g'(estimate)`` with the delta method's
        ``se``). Monte Carlo results use their draws as :attr:`draws_interval` says: joined with the
        draws' percentile interval slid to the estimate (bounded scale), or extended by the draws'
        shift (``glovev_ext.stats.intervals``). On the linear scale otherwise: the paper's
        ``estimate -+ q se``, with the draws' spread as ``se`` for Monte Carlo.
        """
        if self.method == PERMUTATION:
            raise ValueError("a permutation test gives a p-value, not a confidence interval")
        low, high = self._rule.conf_int(confidence_level)[0]
        return float(low), float(high)

    @property
    def _rule(self) -> InferenceRule:
        return InferenceRule.of_one(self.estimate, self.std_error, self.delta_std_error, self.df,
                                    bounds_of(self.bounds, 1), self.scale, self.method, self.draws,
                                    self.draws_interval)

    @property
    def tested_std_error(self) -> float:
        """The standard error this result's interval and test are built from.

        ``std_error``, except for a Monte Carlo result whose interval uses its draws: there the delta
        method's (:attr:`delta_std_error`), since the draws' spread, which a bounded statistic caps,
        understates how far the estimate moves (docs/method.md 6.3 and 7.2). Comparisons of results
        (:func:`~glovev_ext.stats.compare_models`) weigh them by it.
        """
        return float(self._rule.tested_errors[0])

    @property
    def attenuation(self) -> float:
        """The estimate minus the median of the Monte Carlo draws (NaN without draws).

        The draws perturb the trained vectors with GloVe-V's noise, which pulls cosines and
        correlations toward 0: for those, a positive value (negative for a negative estimate) says
        how far the noise attenuates the statistic, and the estimate is attenuated likewise by the
        noise in the trained vectors (docs/method.md section 6.9).
        """
        if self.draws is None or self.method != MONTE_CARLO:
            return np.nan
        return float(self.estimate - np.median(self.draws))

    @positional_significance_level
    def percentile_interval(self, *, confidence_level: float = 0.95) -> tuple[float, float]:
        """The central ``confidence_level`` quantiles of the Monte Carlo draws.

        These describe the statistic of perturbed vectors (each word's t distribution with
        ``use_t``), whose noise pulls cosines and correlations toward 0 (docs/method.md section 3):
        the interval can miss the estimate at the trained vectors. :meth:`conf_int` says what the
        reported interval makes of them.
        """
        if self.draws is None or self.method != MONTE_CARLO:
            raise ValueError("only Monte Carlo results have draws")
        low, high = percentile_bounds(self.draws, confidence_level)[0]
        return float(low), float(high)

    def variance_by_word(self) -> pd.Series:
        """Each word's share of the delta-method variance, largest first (which words make it uncertain)."""
        if self.variance_contributions is None:
            raise ValueError("only results of a Statistic have per-word contributions")
        shares = pd.Series(self.variance_contributions / self.variance_contributions.sum(), index=list(self.words))
        return shares.sort_values(ascending=False).rename("share of variance")

    @positional_significance_level
    def summary_frame(self, *, confidence_level: float = 0.95) -> pd.DataFrame:
        """One-row table: estimate, std err, t (or z), p-value, interval and, for t, its degrees of freedom."""
        interval = ((np.nan, np.nan) if self.method == PERMUTATION
                    else self.conf_int(confidence_level=confidence_level))
        return parameter_frame([self.name], [self.estimate], [self.std_error], [self.statistic], [self.pvalue],
                               [interval], [self.df])

    @positional_significance_level
    def summary(self, *, confidence_level: float = 0.95) -> Summary:
        """A statsmodels ``Summary`` with the parameter table and what the result rests on."""
        if self.method == PERMUTATION:
            n = 0 if self.draws is None else self.draws.size
            frame = pd.DataFrame({"statistic": [self.estimate], "p-value": [self.pvalue], "partitions": [n]},
                                 index=[self.name])
        else:
            frame = self.summary_frame(confidence_level=confidence_level)
        return render(frame, f"{self.name}: {self.method}", self._notes())

    def to_contrast(self) -> ContrastResults:
        """The result as statsmodels ``ContrastResults`` (t with ``df``, or normal; two-sided p-value).

        Its own ``conf_int`` is symmetric on the statistic; :meth:`conf_int` here respects the bounds.
        """
        if np.isfinite(self.df):
            return ContrastResults(t=np.array([self.statistic]), effect=np.array([self.estimate]),
                                   sd=np.array([self.std_error]), df_denom=self.df)
        return ContrastResults(effect=np.array([self.estimate]), sd=np.array([self.std_error]),
                               statistic=np.array([self.statistic]), distribution="norm")

    def _notes(self) -> list[str]:
        if self.method == PERMUTATION:
            first = ["H0: no association (target labels exchangeable), alternative: " + self.alternative]
        else:
            first = [f"H0: value = {self.null_value:g}, alternative: {self.alternative}",
                     reference_line([self.df], np.array([self.bounds]), self.scale)]
        if self.method_reason:
            first.append(f"Method: {self.method_reason}")
        first += self._rule.interval_lines()
        return notes([*first, *self.caveats], self.uncertainty, self.words, self.dropped, self.dropped_noun)

    def __str__(self) -> str:
        return str(self.summary())


@dataclass(frozen=True)
class ResultFamily:
    """Several statistics estimated together, with their joint covariance.

    A family of tests: each row has its Wald test, adjusted for multiplicity only through
    :meth:`correct` with a named ``multipletests`` method; any linear :meth:`contrast` of the rows
    uses the joint covariance (statistics sharing words are correlated).

    Attributes
    ----------
    name : str
    names : tuple of str
        Name of each row.
    estimates : ndarray, shape (m,)
    covariance : ndarray, shape (m, m)
    null_values : ndarray, shape (m,)
    alternative : str
    method, uncertainty : str
    words, dropped : tuple of str
    correction : str or None
        The ``multipletests`` method applied, if any.
    pvalues_adjusted : ndarray or None
    draws : ndarray, shape (n, m), or None
        Monte Carlo draws (their spread gives the covariance).
    variance_contributions : ndarray, shape (len(words), m), or None
        Each word's delta-method contribution to each row's variance.
    df : ndarray, shape (m,), or None
        Degrees of freedom of each row's t reference distribution (None or inf: normal).
    bounds : ndarray, shape (m, 2), or None
        The range each row can attain (None: unbounded).
    scale : {"bounded", "linear"}
        Where intervals and tests are formed (see :class:`InferenceResult`).
    method_reason : str
    caveats : tuple of str
    shares : WordShares or None
        Each word's part of the covariance (delta method), from which contrasts get their degrees
        of freedom.
    delta_covariance : ndarray, shape (m, m), or None
        The delta method's covariance when ``covariance`` is Monte Carlo's (the Wald half of the
        intervals on the bounded scale); None otherwise.
    dropped_noun : str
        What ``dropped`` holds: "word", "pair" or "question".
    draws_interval : {"union", "extended"}
        How Monte Carlo intervals and tests use the draws (see :class:`InferenceResult`).
    prior_link : PriorLink or None
        For statistics of posteriors under a prior (see :class:`InferenceResult`).
    """

    name: str
    names: tuple
    estimates: np.ndarray
    covariance: np.ndarray
    null_values: np.ndarray | None = None
    alternative: str = "two-sided"
    method: str = DELTA
    uncertainty: str = RECONSTRUCTION
    words: tuple = ()
    dropped: tuple = ()
    correction: str | None = None
    pvalues_adjusted: np.ndarray | None = field(default=None, repr=False)
    draws: np.ndarray | None = field(default=None, repr=False, compare=False)
    variance_contributions: np.ndarray | None = field(default=None, repr=False, compare=False)
    df: np.ndarray | None = field(default=None, repr=False)
    bounds: np.ndarray | None = field(default=None, repr=False)
    scale: str = "linear"
    method_reason: str = ""
    caveats: tuple = ()
    shares: WordShares | None = field(default=None, repr=False, compare=False)
    delta_covariance: np.ndarray | None = field(default=None, repr=False, compare=False)
    dropped_noun: str = "word"
    draws_interval: str = UNION
    prior_link: PriorLink | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        check_alternative(self.alternative)
        check_draws_interval(self.draws_interval)
        m = len(self.names)
        if self.null_values is None:
            object.__setattr__(self, "null_values", np.zeros(m))
        object.__setattr__(self, "df", np.full(m, np.inf) if self.df is None
                           else np.broadcast_to(np.asarray(self.df, dtype=np.float64), (m,)).copy())
        object.__setattr__(self, "bounds", bounds_of(self.bounds, m))

    def __len__(self) -> int:
        return len(self.names)

    @property
    def std_errors(self) -> np.ndarray:
        return np.sqrt(np.diag(self.covariance))

    @property
    def _rule(self) -> InferenceRule:
        delta = None if self.delta_covariance is None else np.sqrt(np.diag(self.delta_covariance))
        return InferenceRule(self.estimates, self.std_errors, delta, self.df, self.bounds, self.scale, self.method,
                             self.draws, self.draws_interval)

    @property
    def tested_std_errors(self) -> np.ndarray:
        """The standard errors the rows' intervals and tests are built from (see
        :attr:`InferenceResult.tested_std_error`)."""
        return self._rule.tested_errors

    @property
    def attenuation(self) -> np.ndarray:
        """Each estimate minus the median of its Monte Carlo draws (NaN without draws; see
        :attr:`InferenceResult.attenuation`)."""
        if self.draws is None or self.method != MONTE_CARLO:
            return np.full(len(self), np.nan)
        return self.estimates - np.median(self.draws, axis=0)

    @property
    def statistics(self) -> np.ndarray:
        """Wald t (or z) statistics on the test scale."""
        return self._rule.statistics(self.null_values)

    @property
    def pvalues(self) -> np.ndarray:
        """p-values (with Monte Carlo draws on the bounded scale: the larger of the Wald and the draws')."""
        return self._rule.pvalues(self.null_values, self.alternative)

    def __getitem__(self, k: int | str) -> InferenceResult:
        k = self.names.index(k) if isinstance(k, str) else k
        draws = None if self.draws is None else self.draws[:, k]
        contributions = None if self.variance_contributions is None else self.variance_contributions[:, k]
        return InferenceResult.wald(self.names[k], self.estimates[k], self.std_errors[k],
                                    null_value=self.null_values[k], alternative=self.alternative,
                                    method=self.method, words=self.words, dropped=self.dropped, draws=draws,
                                    uncertainty=self.uncertainty, variance_contributions=contributions,
                                    df=self.df[k], bounds=tuple(self.bounds[k]), scale=self.scale,
                                    method_reason=self.method_reason, caveats=self.caveats,
                                    delta_std_error=(np.nan if self.delta_covariance is None
                                                     else float(np.sqrt(self.delta_covariance[k, k]))),
                                    dropped_noun=self.dropped_noun, draws_interval=self.draws_interval,
                                    prior_link=None if self.prior_link is None else self.prior_link.row(k))

    @renamed_keywords(alpha=("significance_level", None))
    def correct(self, method: str, significance_level: float = 0.05) -> ResultFamily:
        """The same family with p-values adjusted by ``statsmodels.stats.multitest.multipletests``.

        Parameters
        ----------
        method : str
            Any ``multipletests`` method, named explicitly (e.g. ``"holm"``, ``"fdr_bh"``).
        significance_level : float, default=0.05
            The family-wise error rate (or false discovery rate); only two-stage methods use it.
        """
        adjusted = multipletests(self.pvalues, alpha=significance_level, method=method)[1]
        return replace(self, correction=method, pvalues_adjusted=adjusted)

    def linear(self, weights: np.ndarray, names: Sequence[str], name: str, alternative: str = "two-sided",
               null_values: Sequence[float] | float | None = None) -> ResultFamily:
        """The family of ``weights @ estimates`` (``(r, m)`` weights) with its joint covariance.

        Bounds follow from the rows' bounds; degrees of freedom from each word's share of the new
        variances (Welch-Satterthwaite), when the rows had t distributions.
        """
        weights = np.atleast_2d(np.asarray(weights, dtype=np.float64))
        if weights.shape[1] != len(self):
            raise ValueError(f"weights must have {len(self)} columns, got shape {weights.shape}")
        shares = None if self.shares is None else self.shares.mapped(weights)
        contributions = None if shares is None else shares.contributions(np.eye(weights.shape[0]))
        if contributions is not None and np.isfinite(self.df).any():
            df = welch_satterthwaite(contributions, shares.dofs)
        else:
            df = np.full(weights.shape[0], np.inf)
        nulls = (np.zeros(weights.shape[0]) if null_values is None
                 else np.broadcast_to(np.asarray(null_values, float), (weights.shape[0],)).copy())
        return ResultFamily(name=name, names=tuple(names), estimates=weights @ self.estimates,
                            covariance=weights @ self.covariance @ weights.T, null_values=nulls,
                            alternative=alternative, method=self.method, uncertainty=self.uncertainty,
                            words=self.words, dropped=self.dropped,
                            draws=None if self.draws is None else self.draws @ weights.T,
                            variance_contributions=contributions, df=df,
                            bounds=linear_bounds(weights, self.bounds), scale=self.scale,
                            method_reason=self.method_reason, caveats=self.caveats, shares=shares,
                            delta_covariance=(None if self.delta_covariance is None
                                              else weights @ self.delta_covariance @ weights.T),
                            dropped_noun=self.dropped_noun, draws_interval=self.draws_interval,
                            prior_link=None if self.prior_link is None else self.prior_link.mapped(weights))

    def contrast(self, weights: Sequence[float], name: str | None = None, null_value: float = 0.0,
                 alternative: str = "two-sided") -> InferenceResult:
        """Wald test of ``sum_k weights[k] * estimate[k] == null_value`` with the joint covariance."""
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != (len(self),):
            raise ValueError(f"weights must have {len(self)} entries, got shape {weights.shape}")
        label = name or " ".join(f"{w:+g}*[{n}]" for w, n in zip(weights, self.names) if w != 0)
        return self.linear(weights[None], [label], label, alternative, null_value)[0]

    def difference(self, first: int | str, second: int | str, alternative: str = "two-sided") -> InferenceResult:
        """Test of ``estimate[first] - estimate[second] == 0`` with the joint covariance."""
        i = self.names.index(first) if isinstance(first, str) else first
        j = self.names.index(second) if isinstance(second, str) else second
        if i % len(self) == j % len(self):
            raise ValueError(f"{self.names[i]!r} compared with itself: name two different rows")
        weights = np.zeros(len(self))
        weights[i], weights[j] = 1.0, -1.0
        return self.contrast(weights, name=f"[{self.names[i]}] - [{self.names[j]}]", alternative=alternative)

    @positional_significance_level
    def conf_int(self, *, confidence_level: float = 0.95) -> np.ndarray:
        """``(m, 2)`` intervals around the estimates, on the family's scale and reference distributions.

        See :meth:`InferenceResult.conf_int`.
        """
        return self._rule.conf_int(confidence_level)

    @positional_significance_level
    def summary_frame(self, *, confidence_level: float = 0.95) -> pd.DataFrame:
        """The table of rows; with a correction, adjusted p-values in a named column."""
        frame = parameter_frame(self.names, self.estimates, self.std_errors, self.statistics, self.pvalues,
                                self.conf_int(confidence_level=confidence_level), self.df)
        if self.correction is not None:
            frame[f"P adj. ({self.correction})"] = self.pvalues_adjusted
        return frame

    @positional_significance_level
    def summary(self, *, confidence_level: float = 0.95) -> Summary:
        """A statsmodels ``Summary`` of the family."""
        first = [f"alternative: {self.alternative}", reference_line(self.df, self.bounds, self.scale)]
        if self.correction is not None:
            first.insert(0, f"P adj. ({self.correction}): p-values adjusted for {len(self)} tests with "
                            f"multipletests(method={self.correction!r})")
        if self.method_reason:
            first.append(f"Method: {self.method_reason}")
        first += self._rule.interval_lines()
        return render(self.summary_frame(confidence_level=confidence_level), f"{self.name}: {self.method}",
                      notes([*first, *self.caveats], self.uncertainty, self.words, self.dropped, self.dropped_noun))

    def to_contrast(self) -> ContrastResults:
        """The rows as statsmodels ``ContrastResults`` (two-sided; t when every row has finite df)."""
        if np.isfinite(self.df).all():
            return ContrastResults(t=self.statistics, effect=self.estimates, sd=self.std_errors, df_denom=self.df)
        return ContrastResults(effect=self.estimates, sd=self.std_errors, statistic=self.statistics,
                               distribution="norm")

    def __str__(self) -> str:
        return str(self.summary())


@dataclass(frozen=True)
class NeighborsResult:
    """Nearest neighbours of a word with intervals, adjacent-rank tests and rank distributions.

    Attributes
    ----------
    word : str
    similarities : ResultFamily
        ``cos(word, neighbour)`` in descending order of the estimate, with joint covariance.
    adjacent : ResultFamily
        ``cos(rank r) - cos(rank r + 1)`` for each r, tested against 0 (alternative "larger").
    rank_probabilities : pandas.DataFrame
        Monte Carlo probability that each neighbour (row) takes each rank (column, 1-based)
        among the candidates.
    n_draws : int
        Draws behind ``rank_probabilities``.
    """

    word: str
    similarities: ResultFamily
    adjacent: ResultFamily
    rank_probabilities: pd.DataFrame
    n_draws: int

    @property
    def neighbors(self) -> list:
        return list(self.rank_probabilities.index)

    def top_k_probability(self, k: int) -> pd.Series:
        """Probability that each neighbour ranks among the first ``k``."""
        return self.rank_probabilities.iloc[:, :k].sum(axis=1).rename(f"P(top {k})")

    @positional_significance_level
    def summary_frame(self, *, confidence_level: float = 0.95) -> pd.DataFrame:
        """Similarity, standard error, interval, rank probability and the test against the next neighbour."""
        frame = self.similarities.summary_frame(confidence_level=confidence_level)
        frame = frame[["coef", "std err", "Conf. Int. Low", "Conf. Int. Upp."]]
        frame.index = self.neighbors
        frame.insert(0, "rank", np.arange(1, len(frame) + 1))
        frame["P(this rank)"] = np.diag(self.rank_probabilities.to_numpy())
        reference = "t" if np.isfinite(self.adjacent.df).all() else "z"
        frame[f"P>{reference} (vs next)"] = np.append(self.adjacent.pvalues, np.nan)
        return frame

    @property
    def method(self) -> str:
        """How the similarities' errors were computed (``similarities.method``); ranks are always Monte Carlo."""
        return self.similarities.method

    @positional_significance_level
    def summary(self, *, confidence_level: float = 0.95) -> Summary:
        """Neighbour table as a statsmodels ``Summary``."""
        family = self.similarities
        adjacent = self.adjacent
        first = [reference_line(family.df, family.bounds, family.scale, df_column=False).replace(
                     "Reference:", "Reference of the intervals:"),
                 reference_line(adjacent.df, adjacent.bounds, adjacent.scale, df_column=False).replace(
                     "Reference:", "Reference of the one-sided tests against the next:")]
        if family.method_reason:
            first.append(f"Method: {family.method_reason}")
        first += family._rule.interval_lines()
        return render(self.summary_frame(confidence_level=confidence_level),
                      f"Nearest neighbours of {self.word!r}: {family.method}, "
                      f"{self.n_draws} Monte Carlo draws for ranks",
                      [*notes([*first, *family.caveats], family.uncertainty, family.words, family.dropped,
                              family.dropped_noun), NEIGHBOR_COLUMNS])

    def __str__(self) -> str:
        return str(self.summary())


@dataclass(frozen=True)
class InferenceRule:
    """What intervals and tests of ``m`` values rest on, and the one rule that turns it into them.

    ``glovev_ext.stats.intervals``: on the test scale with ``se g'(estimate)`` (the delta method's
    ``se`` for Monte Carlo, when known) and t(``df``). A Monte Carlo rule with draws uses them as
    ``draws_interval`` says: ``"union"`` (bounded scale only) joins the draws' percentile interval,
    slid from their median to the estimate; ``"extended"`` extends the interval by the draws' shift.
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

    @classmethod
    def of_one(cls, estimate: float, std_error: float, delta_std_error: float, df: float, bounds: np.ndarray,
               scale: str, method: str, draws: np.ndarray | None, draws_interval: str = UNION) -> InferenceRule:
        """The rule for a single value (a draw per row, if any)."""
        return cls(np.array([estimate]), np.array([std_error]),
                   None if np.isnan(delta_std_error) else np.array([delta_std_error]), np.array([df]), bounds, scale,
                   method, None if draws is None else np.asarray(draws).reshape(-1, 1), draws_interval)

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
    def _scale_errors(self) -> np.ndarray:
        return scaled_errors(self.estimates, self.tested_errors, self.bounds, self.scale)

    @property
    def _shift(self) -> np.ndarray:
        return draws_shift(self.estimates, self.draws, self.bounds, self.scale)

    def statistics(self, null_values) -> np.ndarray:
        return wald_statistics(self.estimates, self._scale_errors, np.asarray(null_values, dtype=np.float64),
                               self.bounds, self.scale)

    def pvalues(self, null_values, alternative: str) -> np.ndarray:
        nulls = np.asarray(null_values, dtype=np.float64)
        if self._uses == EXTENDED:
            return extended_pvalues(self.estimates, self._scale_errors, self._shift, nulls, self.df, self.bounds,
                                    self.scale, alternative)
        if self._uses == UNION:
            return union_pvalues(self.estimates, self._scale_errors, self.draws, nulls, self.df, self.bounds,
                                 self.scale, alternative)
        return pvalue(self.statistics(nulls), self.df, alternative)

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
