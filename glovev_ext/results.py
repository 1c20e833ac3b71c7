"""Result objects that read like statsmodels results: one state, several renderings."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import ndtr
from statsmodels.iolib.summary import Summary, summary_params
from statsmodels.iolib.table import SimpleTable
from statsmodels.stats.contrast import ContrastResults
from statsmodels.stats.multitest import multipletests

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

    def conf_int(self, alpha: float = 0.05) -> tuple[float, float]:
        """Normal ``1 - alpha`` interval around the estimate at the trained vectors.

        For Monte Carlo results the standard error is the spread of the draws; see
        :meth:`percentile_interval` for the quantiles of the draws themselves.
        """
        _check_alpha(alpha)
        if self.method == PERMUTATION:
            raise ValueError("a permutation test gives a p-value, not a confidence interval")
        q = stats.norm.ppf(1 - alpha / 2)
        return self.estimate - q * self.std_error, self.estimate + q * self.std_error

    def percentile_interval(self, alpha: float = 0.05) -> tuple[float, float]:
        """Quantiles ``alpha/2`` and ``1 - alpha/2`` of the Monte Carlo draws.

        These describe the statistic of perturbed vectors, whose noise pulls cosines and
        correlations toward 0 (method.md section 3): the interval can miss the estimate at the
        trained vectors, which :meth:`conf_int` is centred on.
        """
        _check_alpha(alpha)
        if self.draws is None or self.method != MONTE_CARLO:
            raise ValueError("only Monte Carlo results have draws")
        low, high = np.quantile(self.draws, [alpha / 2, 1 - alpha / 2])
        return float(low), float(high)

    def variance_by_word(self) -> pd.Series:
        """Each word's share of the delta-method variance, largest first (which words make it uncertain)."""
        if self.variance_contributions is None:
            raise ValueError("only delta-method results have per-word contributions")
        shares = pd.Series(self.variance_contributions / self.variance_contributions.sum(), index=list(self.words))
        return shares.sort_values(ascending=False).rename("share of variance")

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """One-row table: estimate, std err, z, p-value and interval (statsmodels' column names)."""
        low, high = self.conf_int(alpha) if self.method != PERMUTATION else (np.nan, np.nan)
        return pd.DataFrame({"coef": [self.estimate], "std err": [self.std_error], "z": [self.statistic],
                             "P>|z|": [self.pvalue], "Conf. Int. Low": [low], "Conf. Int. Upp.": [high]},
                            index=[self.name])

    def summary(self, alpha: float = 0.05) -> Summary:
        """A statsmodels ``Summary`` with the parameter table and what the result rests on."""
        if self.method == PERMUTATION:
            summary = Summary()
            n = 0 if self.draws is None else self.draws.size
            summary.tables.append(SimpleTable([[f"{self.estimate:.4f}", f"{self.pvalue:.4g}", f"{n}"]],
                                              headers=["statistic", "p-value", "partitions"],
                                              title=f"{self.name}: {self.method}"))
            summary.add_extra_txt(self._notes())
            return summary
        low, high = self.conf_int(alpha)
        return _summary(f"{self.name}: {self.method}", [self.name], np.array([self.estimate]),
                        np.array([self.std_error]), np.array([self.statistic]), np.array([self.pvalue]),
                        np.array([[low, high]]), alpha, self._notes())

    def to_contrast(self) -> ContrastResults:
        """The result as statsmodels ``ContrastResults`` (normal distribution, two-sided p-value)."""
        return ContrastResults(effect=np.array([self.estimate]), sd=np.array([self.std_error]),
                               statistic=np.array([self.statistic]), distribution="norm")

    def _notes(self) -> list[str]:
        null = "no association (target labels exchangeable)" if self.method == PERMUTATION else f"value = {self.null_value:g}"
        notes = [f"H0: {null}, alternative: {self.alternative}",
                 f"Uncertainty: {self.uncertainty}",
                 f"Words used: {len(self.words)}; dropped: {len(self.dropped)}"]
        if self.dropped:
            notes.append("Dropped: " + ", ".join(map(str, self.dropped[:20])) + (" ..." if len(self.dropped) > 20 else ""))
        return notes

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

    def correct(self, method: str, alpha: float = 0.05) -> ResultFamily:
        """The same family with p-values adjusted by ``statsmodels.stats.multitest.multipletests``."""
        adjusted = multipletests(self.pvalues, alpha=alpha, method=method)[1]
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

    def conf_int(self, alpha: float = 0.05) -> np.ndarray:
        """``(m, 2)`` normal intervals around the estimates (Monte Carlo: with the draws' spread)."""
        _check_alpha(alpha)
        q = stats.norm.ppf(1 - alpha / 2)
        return np.column_stack([self.estimates - q * self.std_errors, self.estimates + q * self.std_errors])

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """The table of rows; with a correction, adjusted p-values in a named column."""
        interval = self.conf_int(alpha)
        frame = pd.DataFrame({"coef": self.estimates, "std err": self.std_errors, "z": self.statistics,
                              "P>|z|": self.pvalues, "Conf. Int. Low": interval[:, 0],
                              "Conf. Int. Upp.": interval[:, 1]}, index=list(self.names))
        if self.correction is not None:
            frame[f"P adj. ({self.correction})"] = self.pvalues_adjusted
        return frame

    def summary(self, alpha: float = 0.05) -> Summary:
        """A statsmodels ``Summary`` of the family."""
        pvalues = self.pvalues if self.correction is None else self.pvalues_adjusted
        notes = [f"alternative: {self.alternative}", f"Uncertainty: {self.uncertainty}",
                 f"Words used: {len(self.words)}; dropped: {len(self.dropped)}"]
        if self.correction is not None:
            notes.insert(0, f"P>|z| adjusted for {len(self)} tests with multipletests(method={self.correction!r})")
        return _summary(f"{self.name}: {self.method}", list(self.names), self.estimates, self.std_errors,
                        self.statistics, pvalues, self.conf_int(alpha), alpha, notes)

    def to_contrast(self) -> ContrastResults:
        """The rows as statsmodels ``ContrastResults`` (normal, two-sided)."""
        return ContrastResults(effect=self.estimates, sd=self.std_errors, statistic=self.statistics,
                               distribution="norm")

    def __str__(self) -> str:
        return str(self.summary())


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")


def _summary(title: str, names: list, estimates, std_errors, statistics, pvalues, intervals, alpha: float,
             notes: list[str]) -> Summary:
    summary = Summary()
    table = summary_params((None, np.asarray(estimates, dtype=float), np.asarray(std_errors, dtype=float),
                            np.asarray(statistics, dtype=float), np.asarray(pvalues, dtype=float),
                            np.asarray(intervals, dtype=float)),
                           yname="statistic", xname=[str(n) for n in names], use_t=False, alpha=alpha, title=title)
    summary.tables.append(table)
    summary.add_extra_txt(notes)
    return summary


def frame_summary(frame: pd.DataFrame, title: str, notes: list[str]) -> Summary:
    """A statsmodels ``Summary`` showing a DataFrame (numbers to 4 significant digits)."""
    summary = Summary()
    cells = [[f"{value:.4g}" if isinstance(value, (float, np.floating)) else str(value) for value in row]
             for row in frame.itertuples(index=False)]
    summary.tables.append(SimpleTable(cells, headers=[str(c) for c in frame.columns],
                                      stubs=[str(i) for i in frame.index], title=title))
    summary.add_extra_txt(notes)
    return summary
