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
from scipy import stats
from scipy.special import ndtr
from statsmodels.iolib.summary import Summary
from statsmodels.stats.contrast import ContrastResults
from statsmodels.stats.multitest import multipletests

from .._deprecation import positional_significance_level, renamed_keywords
from ._summary import notes, parameter_frame, render

ALTERNATIVES = ("two-sided", "larger", "smaller")
DELTA = "delta method"
MONTE_CARLO = "Monte Carlo"
PERMUTATION = "permutation"
RECONSTRUCTION = "GloVe-V reconstruction error (embedding uncertainty given the corpus)"
WORD_LISTS = "word-list assignment (permutation of the target words)"


def check_alternative(alternative: str) -> str:
    """Validate ``alternative`` (statsmodels' spelling)."""
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    return alternative


def wald_pvalue(statistic, alternative: str):
    """Normal p-value of a z statistic for the alternative."""
    statistic = np.asarray(statistic, dtype=np.float64)
    if alternative == "two-sided":
        return 2 * ndtr(-np.abs(statistic))
    if alternative == "larger":
        return ndtr(-statistic)
    return ndtr(statistic)


def normal_intervals(estimates, std_errors, confidence_level: float) -> np.ndarray:
    """``(m, 2)`` normal intervals ``estimate -+ q std_error`` at ``confidence_level``."""
    _check_confidence_level(confidence_level)
    q = stats.norm.ppf(0.5 + confidence_level / 2)
    estimates, std_errors = np.atleast_1d(estimates), np.atleast_1d(std_errors)
    return np.column_stack([estimates - q * std_errors, estimates + q * std_errors])


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
        ``(estimate - null_value) / std_error`` (a Wald z), or the permutation test's statistic.
    pvalue : float
    method : str
        How the uncertainty was propagated ("delta method", "Monte Carlo", "permutation").
    uncertainty : str
        Which uncertainty the result carries.
    words : tuple of str
        Words the statistic used.
    dropped : tuple of str
        Words left out (out of vocabulary or without covariance), by name.
    draws : ndarray or None
        Monte Carlo draws of the statistic (or the permutation distribution).
    variance_contributions : ndarray or None
        Delta method: the variance each word of ``words`` contributes (they add up to the variance).
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

    @classmethod
    def wald(cls, name: str, estimate: float, std_error: float, *, null_value: float = 0.0,
             alternative: str = "two-sided", method: str = DELTA, words: Sequence = (), dropped: Sequence = (),
             draws: np.ndarray | None = None, uncertainty: str = RECONSTRUCTION,
             variance_contributions: np.ndarray | None = None) -> InferenceResult:
        """A Wald z-test of ``estimate == null_value``."""
        check_alternative(alternative)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (estimate - null_value) / std_error
        return cls(name=name, estimate=float(estimate), std_error=float(std_error), null_value=float(null_value),
                   alternative=alternative, statistic=float(z), pvalue=float(wald_pvalue(z, alternative)),
                   method=method, uncertainty=uncertainty, words=tuple(words), dropped=tuple(dropped), draws=draws,
                   variance_contributions=variance_contributions)

    def __iter__(self) -> Iterator[float]:
        return iter((self.statistic, self.pvalue))

    @positional_significance_level
    def conf_int(self, *, confidence_level: float = 0.95) -> tuple[float, float]:
        """Normal interval around the estimate at the trained vectors.

        Parameters
        ----------
        confidence_level : float, default=0.95

        Notes
        -----
        For Monte Carlo results the standard error is the spread of the draws; see
        :meth:`percentile_interval` for the quantiles of the draws themselves.
        """
        if self.method == PERMUTATION:
            raise ValueError("a permutation test gives a p-value, not a confidence interval")
        low, high = normal_intervals(self.estimate, self.std_error, confidence_level)[0]
        return float(low), float(high)

    @positional_significance_level
    def percentile_interval(self, *, confidence_level: float = 0.95) -> tuple[float, float]:
        """The central ``confidence_level`` quantiles of the Monte Carlo draws.

        These describe the statistic of perturbed vectors, whose noise pulls cosines and
        correlations toward 0 (method.md section 3): the interval can miss the estimate at the
        trained vectors, which :meth:`conf_int` is centred on.
        """
        _check_confidence_level(confidence_level)
        if self.draws is None or self.method != MONTE_CARLO:
            raise ValueError("only Monte Carlo results have draws")
        low, high = np.quantile(self.draws, [0.5 - confidence_level / 2, 0.5 + confidence_level / 2])
        return float(low), float(high)

    def variance_by_word(self) -> pd.Series:
        """Each word's share of the delta-method variance, largest first (which words make it uncertain)."""
        if self.variance_contributions is None:
            raise ValueError("only delta-method results have per-word contributions")
        shares = pd.Series(self.variance_contributions / self.variance_contributions.sum(), index=list(self.words))
        return shares.sort_values(ascending=False).rename("share of variance")

    @positional_significance_level
    def summary_frame(self, *, confidence_level: float = 0.95) -> pd.DataFrame:
        """One-row table: estimate, std err, z, p-value and interval (statsmodels' column names)."""
        interval = ((np.nan, np.nan) if self.method == PERMUTATION
                    else self.conf_int(confidence_level=confidence_level))
        return parameter_frame([self.name], [self.estimate], [self.std_error], [self.statistic], [self.pvalue],
                               [interval])

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
        """The result as statsmodels ``ContrastResults`` (normal distribution, two-sided p-value)."""
        return ContrastResults(effect=np.array([self.estimate]), sd=np.array([self.std_error]),
                               statistic=np.array([self.statistic]), distribution="norm")

    def _notes(self) -> list[str]:
        null = ("no association (target labels exchangeable)" if self.method == PERMUTATION
                else f"value = {self.null_value:g}")
        return notes([f"H0: {null}, alternative: {self.alternative}"], self.uncertainty, self.words, self.dropped)

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
        Delta method: each word's contribution to each row's variance.
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

    def __post_init__(self):
        check_alternative(self.alternative)
        if self.null_values is None:
            object.__setattr__(self, "null_values", np.zeros(len(self.names)))

    def __len__(self) -> int:
        return len(self.names)

    @property
    def std_errors(self) -> np.ndarray:
        return np.sqrt(np.diag(self.covariance))

    @property
    def statistics(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return (self.estimates - self.null_values) / self.std_errors

    @property
    def pvalues(self) -> np.ndarray:
        return wald_pvalue(self.statistics, self.alternative)

    def __getitem__(self, k: int | str) -> InferenceResult:
        k = self.names.index(k) if isinstance(k, str) else k
        draws = None if self.draws is None else self.draws[:, k]
        contributions = None if self.variance_contributions is None else self.variance_contributions[:, k]
        return InferenceResult.wald(self.names[k], self.estimates[k], self.std_errors[k],
                                    null_value=self.null_values[k], alternative=self.alternative,
                                    method=self.method, words=self.words, dropped=self.dropped, draws=draws,
                                    uncertainty=self.uncertainty, variance_contributions=contributions)

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

    def contrast(self, weights: Sequence[float], name: str | None = None, null_value: float = 0.0,
                 alternative: str = "two-sided") -> InferenceResult:
        """Wald test of ``sum_k weights[k] * estimate[k] == null_value`` with the joint covariance."""
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != (len(self),):
            raise ValueError(f"weights must have {len(self)} entries, got shape {weights.shape}")
        estimate = float(weights @ self.estimates)
        std_error = float(np.sqrt(weights @ self.covariance @ weights))
        draws = None if self.draws is None else self.draws @ weights
        label = name or " ".join(f"{w:+g}*[{n}]" for w, n in zip(weights, self.names) if w != 0)
        return InferenceResult.wald(label, estimate, std_error, null_value=null_value, alternative=alternative,
                                    method=self.method, words=self.words, dropped=self.dropped, draws=draws,
                                    uncertainty=self.uncertainty)

    def difference(self, first: int | str, second: int | str, alternative: str = "two-sided") -> InferenceResult:
        """Test of ``estimate[first] - estimate[second] == 0`` with the joint covariance."""
        i = self.names.index(first) if isinstance(first, str) else first
        j = self.names.index(second) if isinstance(second, str) else second
        weights = np.zeros(len(self))
        weights[i], weights[j] = 1.0, -1.0
        return self.contrast(weights, name=f"[{self.names[i]}] - [{self.names[j]}]", alternative=alternative)

    @positional_significance_level
    def conf_int(self, *, confidence_level: float = 0.95) -> np.ndarray:
        """``(m, 2)`` normal intervals around the estimates (Monte Carlo: with the draws' spread)."""
        return normal_intervals(self.estimates, self.std_errors, confidence_level)

    @positional_significance_level
    def summary_frame(self, *, confidence_level: float = 0.95) -> pd.DataFrame:
        """The table of rows; with a correction, adjusted p-values in a named column."""
        frame = parameter_frame(self.names, self.estimates, self.std_errors, self.statistics, self.pvalues,
                                self.conf_int(confidence_level=confidence_level))
        if self.correction is not None:
            frame[f"P adj. ({self.correction})"] = self.pvalues_adjusted
        return frame

    @positional_significance_level
    def summary(self, *, confidence_level: float = 0.95) -> Summary:
        """A statsmodels ``Summary`` of the family."""
        first = [f"alternative: {self.alternative}"]
        if self.correction is not None:
            first.insert(0, f"P adj. ({self.correction}): p-values adjusted for {len(self)} tests with "
                            f"multipletests(method={self.correction!r})")
        return render(self.summary_frame(confidence_level=confidence_level), f"{self.name}: {self.method}",
                      notes(first, self.uncertainty, self.words, self.dropped))

    def to_contrast(self) -> ContrastResults:
        """The rows as statsmodels ``ContrastResults`` (normal, two-sided)."""
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
        frame["P>z (vs next)"] = np.append(self.adjacent.pvalues, np.nan)
        return frame

    @positional_significance_level
    def summary(self, *, confidence_level: float = 0.95) -> Summary:
        """Neighbour table as a statsmodels ``Summary``."""
        family = self.similarities
        return render(self.summary_frame(confidence_level=confidence_level),
                      f"Nearest neighbours of {self.word!r}: {family.method}, "
                      f"{self.n_draws} Monte Carlo draws for ranks",
                      notes([], family.uncertainty, family.words, family.dropped))

    def __str__(self) -> str:
        return str(self.summary())


def _check_confidence_level(confidence_level: float) -> None:
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level}")
