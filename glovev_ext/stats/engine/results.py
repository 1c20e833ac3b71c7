"""Result objects that read like statsmodels results: one inference core, several renderings.

A result is a core and its provenance: ``Estimates`` (the estimates, their covariance, degrees
of freedom, bounds, test scale and Monte Carlo draws) and ``Provenance`` (the method and why,
the uncertainty carried, the words used and dropped, the caveats). :class:`ResultFamily` is names +
core + provenance + the hypotheses tested; :class:`InferenceResult` is a one-row view of a family.
Standard errors, statistics, p-values and intervals are derived from the core by one rule
(:class:`~glovev_ext.stats.engine.rule.InferenceRule`), never stored beside it, and every table is rendered
by one path (:mod:`.rendering`), each column what its head says.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from statsmodels.iolib.summary import Summary
from statsmodels.stats.contrast import ContrastResults
from statsmodels.stats.multitest import multipletests

from .rendering import DRAWS_SD, column_lines, notes, parameter_frame, reference_line, render
from .delta import WordShares
from .intervals import (EXTENDED, PIVOT, UNBOUNDED, UNION, bounds_of, check_alternative, check_draws_interval,
                        linear_bounds, percentile_bounds, welch_satterthwaite)
from .rule import MONTE_CARLO, NULL_DRAWS, InferenceRule
from .shared_prior import PriorLink

DELTA = "delta method"
PERMUTATION = "permutation"
RECONSTRUCTION = "GloVe-V reconstruction error (embedding uncertainty given the corpus)"
WORD_LISTS = "word-list assignment (permutation of the target words)"
NEIGHBOR_COLUMNS = ("Columns: rank and coef, the cosine similarity of the trained vectors; std err and the "
                    "interval, from GloVe-V; P(this rank), the share of Monte Carlo draws of the embedding in "
                    "which the word holds exactly this rank among the listed words (not among the whole "
                    "vocabulary); P>t (vs next), the one-sided p-value of the test that the word is more similar "
                    "than the next one (P>z with a normal reference; none for the last row).")


@dataclass(frozen=True, eq=False)
class Estimates:
    """The inference core of ``m`` statistics: what every standard error, test and interval is derived from.

    Attributes
    ----------
    estimates : ndarray, shape (m,)
        The statistics at the trained vectors.
    covariance : ndarray, shape (m, m)
        Their joint covariance (delta method, or of normal Monte Carlo draws of the words' vectors, which
        are :attr:`draws` only without ``use_t``).
    df : ndarray, shape (m,)
        Degrees of freedom of each row's t reference distribution (inf: normal).
    bounds : ndarray, shape (m, 2)
        The range each row can attain (``-inf, inf`` if unbounded).
    scale : {"bounded", "linear"}
        Where intervals and tests are formed: ``"bounded"`` on ``atanh`` of the value mapped to
        (-1, 1) (Fisher's z for a cosine), so intervals stay inside ``bounds``; ``"linear"`` on the
        statistic itself (the paper's intervals).
    draws : ndarray, shape (n, m), or None
        Monte Carlo draws of the statistics (each word drawn from its t distribution with ``use_t``).
    delta_covariance : ndarray, shape (m, m), or None
        The delta method's covariance when ``covariance`` is Monte Carlo's (the Wald half of the
        intervals that use the draws); None otherwise.
    draws_interval : {"union", "extended", "pivot"} or array of them, shape (m,)
        How each row's interval and test use its draws (``glovev_ext.stats.engine.intervals``):
        ``"union"``, the interval around the estimate joined with the draws' percentile interval slid
        from their median to the estimate (bounded scale); ``"extended"``, the interval around the
        estimate extended by the draws' shift to the estimate corrected for it. Either is one piece
        that holds the estimate; the test inverts it. ``"pivot"`` (the "null draws" method): the draws
        are of ``(estimate - truth) / se`` under a test's null, and the interval is the estimate less
        ``se`` times their quantiles. One value stands for every row.
    delta_rows : ndarray of bool, shape (m,), or None
        Rows of a Monte Carlo core that keep the delta method's Wald interval and test
        (``method="auto"`` judges each row on its own, so a row reads the same in any family); None:
        no row.
    """

    estimates: np.ndarray
    covariance: np.ndarray
    df: np.ndarray | None = None
    bounds: np.ndarray | None = None
    scale: str = "linear"
    draws: np.ndarray | None = None
    delta_covariance: np.ndarray | None = None
    draws_interval: str | np.ndarray = UNION
    delta_rows: np.ndarray | None = None

    def __post_init__(self):
        estimates = np.atleast_1d(np.asarray(self.estimates, dtype=np.float64))
        m = estimates.size
        kinds = np.broadcast_to(np.asarray(self.draws_interval, dtype=object), (m,)).copy()
        for kind in kinds:
            check_draws_interval(kind)
        covariance = np.asarray(self.covariance, dtype=np.float64).reshape(m, m)
        df = np.full(m, np.inf) if self.df is None else np.broadcast_to(np.asarray(self.df, dtype=np.float64), (m,))
        delta_rows = (np.zeros(m, dtype=bool) if self.delta_rows is None
                      else np.broadcast_to(np.asarray(self.delta_rows, dtype=bool), (m,)).copy())
        for name, value in (("estimates", estimates), ("covariance", covariance), ("df", df.copy()),
                            ("bounds", bounds_of(self.bounds, m)), ("draws_interval", kinds),
                            ("delta_rows", delta_rows)):
            object.__setattr__(self, name, value)

    def __len__(self) -> int:
        return self.estimates.size

    @property
    def std_errors(self) -> np.ndarray:
        """Square roots of the covariance's diagonal (for Monte Carlo: the spread over normal draws)."""
        return np.sqrt(np.diag(self.covariance))

    @property
    def delta_std_errors(self) -> np.ndarray | None:
        return None if self.delta_covariance is None else np.sqrt(np.diag(self.delta_covariance))

    def rule(self, method: str) -> InferenceRule:
        """The rule that turns this core into tests and intervals for ``method``."""
        return InferenceRule(self.estimates, self.std_errors, self.delta_std_errors, self.df, self.bounds, self.scale,
                             method, self.draws, self.draws_interval, self.delta_rows)

    def mapped(self, weights: np.ndarray, df: np.ndarray) -> Estimates:
        """The core of ``weights @ estimates`` (``(r, m)`` weights), with the degrees of freedom ``df``.

        A new row keeps the delta method when every row it weighs does; otherwise it uses the draws,
        joined with their percentile interval when any row it weighs does, else extended by their shift.
        Pivot draws (under a test's null) are not draws of the values: a row weighing them is a Wald test.
        """
        involved = weights != 0
        kept = ~involved | self.delta_rows[None] | (self.draws_interval == PIVOT)[None]
        drawn = involved & ~kept
        union = (drawn & (self.draws_interval == UNION)[None]).any(axis=1)
        return Estimates(weights @ self.estimates, weights @ self.covariance @ weights.T, df,
                         linear_bounds(weights, self.bounds), self.scale,
                         None if self.draws is None else self.draws @ weights.T,
                         None if self.delta_covariance is None else weights @ self.delta_covariance @ weights.T,
                         np.where(union | ~drawn.any(axis=1), UNION, EXTENDED).astype(object), kept.all(axis=1))


@dataclass(frozen=True)
class Provenance:
    """Where a result comes from: how its uncertainty was propagated and from which words.

    Attributes
    ----------
    method : str
        How the uncertainty was propagated ("delta method", "Monte Carlo", "permutation").
    method_reason : str
        Why (``method="auto"`` says what its diagnostic found).
    uncertainty : str
        Which uncertainty the result carries.
    words : tuple of str
        Words the statistics used.
    dropped : tuple of str
        What was left out (out of vocabulary or without covariance), by name, with the reasons.
    dropped_noun : str
        What ``dropped`` holds: "word", "pair" or "question".
    caveats : tuple of str
        What the reader must know: words that dominate the variance, covariances known to be
        understated.
    row_reasons : tuple of str
        Each row's own method and why, as ``method="auto"`` judged it alone (empty for a single row,
        or where ``method_reason`` serves every row).
    """

    method: str = DELTA
    method_reason: str = ""
    uncertainty: str = RECONSTRUCTION
    words: tuple = ()
    dropped: tuple = ()
    dropped_noun: str = "word"
    caveats: tuple = ()
    row_reasons: tuple = ()

    def __post_init__(self):
        for name in ("words", "dropped", "caveats", "row_reasons"):
            object.__setattr__(self, name, tuple(getattr(self, name)))


_CORE_FIELDS = {f.name for f in dataclasses.fields(Estimates)}
_PROVENANCE_FIELDS = {f.name for f in dataclasses.fields(Provenance)}


def _delegate(part: str, name: str, doc: str) -> property:
    return property(lambda self: getattr(getattr(self, part), name), doc=doc)


@dataclass(frozen=True, eq=False)
class ResultFamily:
    """Several statistics estimated together, with their joint covariance.

    A family of tests: each row has its Wald test, adjusted for multiplicity only through
    :meth:`correct` with a named ``multipletests`` method; any linear :meth:`contrast` of the rows
    uses the joint covariance (statistics sharing words are correlated). Build one with
    :meth:`of`; ``family[k]`` is row ``k`` as an :class:`InferenceResult`.

    Attributes
    ----------
    name : str
    names : tuple of str
        Name of each row.
    core : Estimates
        The estimates, covariance, degrees of freedom, bounds, scale and draws.
    provenance : Provenance
        Method and why, uncertainty, words used and dropped, caveats.
    null_values : ndarray, shape (m,)
    alternative : {"two-sided", "larger", "smaller"}
    correction : str or None
        The ``multipletests`` method applied by :meth:`correct`, if any.
    significance_level : float
        The level the correction was made at (two-stage methods use it).
    shares : WordShares or None
        Each word's part of the covariance (delta method), from which contrasts get their degrees
        of freedom and :attr:`variance_contributions` come.
    prior_link : PriorLink or None
        For statistics of posteriors under a prior: their gradients, their words' covariances and
        the prior, with which :func:`~glovev_ext.compare_models` takes out the part of the error
        that fits under the same prior share (``glovev_ext.stats.engine.shared_prior``).

    The core's and the provenance's attributes read through (``family.estimates``,
    ``family.method``, ...).
    """

    name: str
    names: tuple
    core: Estimates
    provenance: Provenance = field(default_factory=Provenance)
    null_values: np.ndarray | None = None
    alternative: str = "two-sided"
    correction: str | None = None
    significance_level: float = 0.05
    shares: WordShares | None = field(default=None, repr=False)
    prior_link: PriorLink | None = field(default=None, repr=False)

    estimates = _delegate("core", "estimates", "The statistics at the trained vectors, shape (m,).")
    covariance = _delegate("core", "covariance", "Their joint covariance, shape (m, m).")
    df = _delegate("core", "df", "Degrees of freedom of each row's t reference (inf: normal).")
    bounds = _delegate("core", "bounds", "The range each row can attain, shape (m, 2).")
    scale = _delegate("core", "scale", "Where intervals and tests are formed.")
    draws = _delegate("core", "draws", "Monte Carlo draws, shape (n, m), or None.")
    delta_covariance = _delegate("core", "delta_covariance", "The delta method's covariance of a Monte Carlo core.")
    draws_interval = _delegate("core", "draws_interval", "How Monte Carlo intervals use the draws.")
    method = _delegate("provenance", "method", "How the uncertainty was propagated.")
    method_reason = _delegate("provenance", "method_reason", "Why that method.")
    uncertainty = _delegate("provenance", "uncertainty", "Which uncertainty the rows carry.")
    words = _delegate("provenance", "words", "Words the statistics used.")
    dropped = _delegate("provenance", "dropped", "What was left out, with the reasons.")
    dropped_noun = _delegate("provenance", "dropped_noun", "What ``dropped`` holds.")
    caveats = _delegate("provenance", "caveats", "What the reader must know.")

    def __post_init__(self):
        check_alternative(self.alternative)
        m = len(self.names)
        if len(self.core) != m:
            raise ValueError(f"{m} names for {len(self.core)} estimates")
        object.__setattr__(self, "names", tuple(self.names))
        object.__setattr__(self, "null_values", np.zeros(m) if self.null_values is None
                           else np.broadcast_to(np.asarray(self.null_values, dtype=np.float64), (m,)).copy())

    @classmethod
    def of(cls, name: str, names: Sequence, estimates, covariance, **attributes) -> ResultFamily:
        """A family from its parts by name: any attribute of ``Estimates``, ``Provenance`` or the family."""
        core = {key: attributes.pop(key) for key in list(attributes) if key in _CORE_FIELDS}
        provenance = {key: attributes.pop(key) for key in list(attributes) if key in _PROVENANCE_FIELDS}
        return cls(name, tuple(names), Estimates(estimates, covariance, **core), Provenance(**provenance), **attributes)

    def replace(self, **changes) -> ResultFamily:
        """A copy with some attributes changed (the core's and the provenance's by their own names)."""
        core = {key: changes.pop(key) for key in list(changes) if key in _CORE_FIELDS}
        provenance = {key: changes.pop(key) for key in list(changes) if key in _PROVENANCE_FIELDS}
        return dataclasses.replace(self, core=dataclasses.replace(self.core, **core) if core else self.core,
                                   provenance=(dataclasses.replace(self.provenance, **provenance) if provenance
                                               else self.provenance), **changes)

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, k: int | str) -> InferenceResult:
        k = self.names.index(k) if isinstance(k, str) else range(len(self))[k]
        return InferenceResult(self, k)

    @property
    def _rule(self) -> InferenceRule:
        return self.core.rule(self.method)

    @property
    def _null_draws(self) -> int | None:
        """How many draws under the null the tests use, each with its mirror image (None: no null draws)."""
        return len(self.draws) // 2 if self.method == NULL_DRAWS and self.draws is not None else None

    # --- derived from the core -----------------------------------------------------------------

    @property
    def params(self) -> np.ndarray:
        """The estimates (statsmodels' name)."""
        return self.estimates

    @property
    def bse(self) -> np.ndarray:
        """The standard errors the intervals and tests are built from: the ``std err`` column (statsmodels' name)."""
        return self.tested_std_errors

    @property
    def std_errors(self) -> np.ndarray:
        """The standard errors the intervals and tests are built from (:attr:`bse`, the ``std err`` column)."""
        return self.tested_std_errors

    @property
    def draws_std_errors(self) -> np.ndarray:
        """The statistics' spread over the Monte Carlo draws (the ``draws sd`` column; NaN without draws, and for
        rows that kept the delta method)."""
        if self.method != MONTE_CARLO:
            return np.full(len(self), np.nan)
        return np.where(self.core.delta_rows, np.nan, self.core.std_errors)

    @property
    def tested_std_errors(self) -> np.ndarray:
        """The standard errors the rows' intervals and tests are built from (see
        :attr:`InferenceResult.tested_std_error`)."""
        return self._rule.tested_errors

    @property
    def statistics(self) -> np.ndarray:
        """Each row's test statistic, as :attr:`statistic_kinds` says what it is."""
        return self._rule.statistics(self.null_values, self.alternative)

    tvalues = statistics

    @property
    def statistic_kinds(self) -> np.ndarray:
        """What each row's statistic is: ``"plain"`` (coef minus null over std err), ``"atanh"`` (the same on
        atanh of the bounded value) or ``"from p"`` (the t with the row's p-value, for a test that inverts an
        interval using Monte Carlo draws)."""
        return self._rule.statistic_kinds

    @property
    def pvalues(self) -> np.ndarray:
        """p-values of each row's test (with Monte Carlo draws: the test that inverts the interval)."""
        return self._rule.pvalues(self.null_values, self.alternative)

    @property
    def pvalues_adjusted(self) -> np.ndarray | None:
        """p-values adjusted by :meth:`correct`'s method (None without a correction)."""
        if self.correction is None:
            return None
        return multipletests(self.pvalues, alpha=self.significance_level, method=self.correction)[1]

    @property
    def variance_contributions(self) -> np.ndarray | None:
        """``(len(words), m)``: each word's delta-method contribution to each row's variance."""
        return None if self.shares is None else self.shares.contributions(np.eye(len(self)))

    @property
    def attenuation(self) -> np.ndarray:
        """Each estimate minus the median of its Monte Carlo draws (NaN without draws; see
        :attr:`InferenceResult.attenuation`)."""
        if self.draws is None or self.method != MONTE_CARLO:
            return np.full(len(self), np.nan)
        return np.where(self.core.delta_rows, np.nan, self.estimates - np.median(self.draws, axis=0))

    def conf_int(self, *, confidence_level: float = 0.95) -> pd.DataFrame:
        """Intervals around the estimates, a row per statistic (columns ``lower``, ``upper``).

        See :meth:`InferenceResult.conf_int`.
        """
        return pd.DataFrame(self._rule.conf_int(confidence_level), index=list(self.names), columns=["lower", "upper"])

    # --- new families from this one ------------------------------------------------------------

    def correct(self, method: str, significance_level: float = 0.05) -> ResultFamily:
        """The same family with p-values adjusted by ``statsmodels.stats.multitest.multipletests``.

        Parameters
        ----------
        method : str
            Any ``multipletests`` method, named explicitly (e.g. ``"holm"``, ``"fdr_bh"``).
        significance_level : float, default=0.05
            The family-wise error rate (or false discovery rate); only two-stage methods use it.
        """
        multipletests(np.array([0.5]), alpha=significance_level, method=method)  # an unknown method fails here
        return dataclasses.replace(self, correction=method, significance_level=significance_level)

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
        provenance = dataclasses.replace(self.provenance, row_reasons=())
        return ResultFamily(name, tuple(names), self.core.mapped(weights, df), provenance, null_values,
                            alternative, shares=shares,
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

    # --- renderings ----------------------------------------------------------------------------

    def _frame(self, row: int | None, confidence_level: float) -> pd.DataFrame:
        """The parameter table of every row, or of ``row`` alone: the one rendering of a family and of its views."""
        rule, pick = (self._rule, slice(None)) if row is None else (self._rule.row(row), [row])
        tested, spreads = rule.tested_errors, self.draws_std_errors[pick]
        shown = not (np.isnan(spreads).all() or np.array_equal(tested, spreads, equal_nan=True))
        statistics, pvalues = rule.tests(self.null_values[pick], self.alternative)
        return parameter_frame(list(np.asarray(self.names, dtype=object)[pick]), rule.estimates, tested, statistics,
                               rule.statistic_kinds, pvalues, rule.conf_int(confidence_level), rule.df,
                               self.alternative, spreads=spreads if shown else None)

    def _summary(self, rule: InferenceRule, title: str, first: Sequence[str], frame: pd.DataFrame,
                 reason: str | None = None) -> Summary:
        """The summary of ``frame`` (the family's rows, or one of them with its ``rule`` and ``reason``): the one
        rendering path."""
        provenance = self.provenance
        reason = provenance.method_reason if reason is None else reason
        drawn = "the draws under the null" if provenance.method == NULL_DRAWS else "the Monte Carlo draws"
        lines = [*first, *([f"Method: {reason}"] if reason else []),
                 *rule.interval_lines(), *column_lines(frame, drawn), *provenance.caveats]
        return render(frame, title, notes(lines, provenance.uncertainty, provenance.words, provenance.dropped,
                                          provenance.dropped_noun))

    def summary_frame(self, *, confidence_level: float = 0.95) -> pd.DataFrame:
        """The table of rows; with a correction, adjusted p-values in a named column."""
        frame = self._frame(None, confidence_level)
        if self.correction is not None:
            frame[f"P adj. ({self.correction})"] = self.pvalues_adjusted
        return frame

    def summary(self, *, confidence_level: float = 0.95) -> Summary:
        """A statsmodels :class:`~statsmodels.iolib.summary.Summary` of the family."""
        first = [f"alternative: {self.alternative}", reference_line(self.df, self.bounds, self.scale,
                                                                   null_draws=self._null_draws)]
        if self.correction is not None:
            first.insert(0, f"P adj. ({self.correction}): p-values adjusted for {len(self)} tests with "
                            f"multipletests(method={self.correction!r})")
        return self._summary(self._rule, f"{self.name}: {self.method}", first,
                             self.summary_frame(confidence_level=confidence_level))

    def to_contrast(self) -> ContrastResults:
        """The rows as statsmodels :class:`~statsmodels.stats.contrast.ContrastResults` (two-sided; t when every
        row has finite df)."""
        if np.isfinite(self.df).all():
            return ContrastResults(t=self.statistics, effect=self.estimates, sd=self.tested_std_errors,
                                   df_denom=self.df)
        return ContrastResults(effect=self.estimates, sd=self.tested_std_errors, statistic=self.statistics,
                               distribution="norm")

    def __str__(self) -> str:
        return str(self.summary())


@dataclass(frozen=True, eq=False)
class InferenceResult:
    """A statistic of the embedding with its standard error, test and interval: row ``row`` of ``family``.

    Unpacks as ``statistic, pvalue = result``. Build one with :meth:`wald`, or take a row of a
    :class:`ResultFamily`; every number reads through to the family's core.

    Attributes
    ----------
    family : ResultFamily
    row : int
    """

    family: ResultFamily
    row: int = 0

    @classmethod
    def wald(cls, name: str, estimate: float, std_error: float, *, null_value: float = 0.0,
             alternative: str = "two-sided", delta_std_error: float = np.nan, bounds: tuple = UNBOUNDED,
             df: float = np.inf, prior_link: PriorLink | None = None, **attributes) -> InferenceResult:
        """A Wald test of ``estimate == null_value`` (t with ``df`` degrees of freedom, on ``scale``).

        ``attributes`` are any of ``Estimates`` (``scale``, ``draws``, ``draws_interval``) and
        ``Provenance``. With Monte Carlo draws the test asks the draws, as ``draws_interval``
        says (see ``glovev_ext.stats.engine.intervals``).
        """
        draws = attributes.pop("draws", None)
        delta = None if np.isnan(delta_std_error) else np.array([[float(delta_std_error) ** 2]])
        family = ResultFamily.of(name, [name], [float(estimate)], [[float(std_error) ** 2]], df=[df],
                                 bounds=bounds, delta_covariance=delta,
                                 draws=None if draws is None else np.asarray(draws, dtype=np.float64).reshape(-1, 1),
                                 null_values=null_value, alternative=alternative, prior_link=prior_link,
                                 **attributes)
        return cls(family)

    def replace(self, **changes) -> InferenceResult:
        """A copy with some attributes changed (``name``, and those of the core, provenance or family)."""
        if "name" in changes:
            name = changes.pop("name")
            changes.update(name=name, names=tuple(name if k == self.row else n
                                                 for k, n in enumerate(self.family.names)))
        return InferenceResult(self.family.replace(**changes), self.row)

    def __iter__(self) -> Iterator[float]:
        statistics, pvalues = self._rule.tests([self.null_value], self.alternative)  # the draws asked once
        return iter((float(statistics[0]), float(pvalues[0])))

    def __repr__(self) -> str:
        return (f"InferenceResult(name={self.name!r}, estimate={self.estimate:.6g}, std_error={self.std_error:.6g}, "
                f"statistic={self.statistic:.6g}, pvalue={self.pvalue:.6g}, method={self.method!r})")

    # --- what the row holds ---------------------------------------------------------------------

    @property
    def _rule(self) -> InferenceRule:
        return self.family._rule.row(self.row)

    @property
    def name(self) -> str:
        return self.family.names[self.row]

    @property
    def estimate(self) -> float:
        """The statistic at the trained vectors."""
        return float(self.family.estimates[self.row])

    @property
    def std_error(self) -> float:
        """Its standard error, the one its interval and test are built from (:attr:`bse`, the ``std err`` column).

        The delta method's, or for a Monte Carlo result whose interval does not use the delta
        method's error, the statistic's spread over the draws (:attr:`draws_std_error`).
        """
        return self.tested_std_error

    @property
    def draws_std_error(self) -> float:
        """The statistic's spread over normal Monte Carlo draws of the words' vectors (the ``draws sd`` column; NaN
        for the delta method). With ``use_t`` the kept :attr:`draws` are t draws, so not their spread."""
        return float(self.family.draws_std_errors[self.row])

    @property
    def delta_std_error(self) -> float:
        """The delta method's standard error when :attr:`std_error` is Monte Carlo's (NaN otherwise)."""
        delta = self.family.delta_covariance
        return np.nan if delta is None else float(np.sqrt(delta[self.row, self.row]))

    @property
    def null_value(self) -> float:
        return float(self.family.null_values[self.row])

    @property
    def df(self) -> float:
        """Degrees of freedom of the t reference distribution (inf: normal)."""
        return float(self.family.df[self.row])

    @property
    def bounds(self) -> tuple:
        """The range the statistic can attain (``(-inf, inf)`` if unbounded)."""
        return tuple(map(float, self.family.bounds[self.row]))

    @property
    def draws(self) -> np.ndarray | None:
        """Monte Carlo draws of the statistic."""
        return None if self.family.draws is None else self.family.draws[:, self.row]

    @property
    def variance_contributions(self) -> np.ndarray | None:
        """The variance each word of ``words`` contributes (delta method; they add up to its variance)."""
        contributions = self.family.variance_contributions
        return None if contributions is None else contributions[:, self.row]

    @property
    def prior_link(self) -> PriorLink | None:
        link = self.family.prior_link
        return None if link is None else link.row(self.row)

    alternative = property(lambda self: self.family.alternative)
    scale = property(lambda self: self.family.scale)
    draws_interval = property(lambda self: str(self.family.draws_interval[self.row]),
                              doc="How this row's Monte Carlo interval and test use the draws.")
    uncertainty = property(lambda self: self.family.uncertainty)

    @property
    def method(self) -> str:
        """How this result's uncertainty was propagated (a row that kept the delta method says so)."""
        return DELTA if self.family.core.delta_rows[self.row] else self.family.method

    @property
    def method_reason(self) -> str:
        """Why that method (this row's own judgement, where the family's rows were judged apart)."""
        reasons = self.family.provenance.row_reasons
        return reasons[self.row] if reasons else self.family.method_reason

    words = property(lambda self: self.family.words)
    dropped = property(lambda self: self.family.dropped)
    dropped_noun = property(lambda self: self.family.dropped_noun)
    caveats = property(lambda self: self.family.caveats)

    # --- derived from the core -----------------------------------------------------------------

    @property
    def statistic(self) -> float:
        """The test statistic; :attr:`statistic_kind` says what it is (see :attr:`ResultFamily.statistic_kinds`)."""
        return float(self._rule.statistics([self.null_value], self.alternative)[0])

    @property
    def statistic_kind(self) -> str:
        return str(self._rule.statistic_kinds[0])

    @property
    def pvalue(self) -> float:
        return float(self._rule.pvalues([self.null_value], self.alternative)[0])

    @property
    def tested_std_error(self) -> float:
        """The standard error this result's interval and test are built from.

        ``std_error``, except for a Monte Carlo result whose interval uses its draws: there the delta
        method's (:attr:`delta_std_error`), since the draws' spread, which a bounded statistic caps,
        understates how far the estimate moves (docs/method.md 6.3 and 7.2). Comparisons of results
        (:func:`~glovev_ext.stats.compare_models`) weigh them by it.
        """
        return float(self._rule.tested_errors[0])

    params = estimate
    bse = tested_std_error
    tvalues = statistic
    pvalues = pvalue

    @property
    def attenuation(self) -> float:
        """The estimate minus the median of the Monte Carlo draws (NaN without draws).

        The draws perturb the trained vectors with GloVe-V's noise, which pulls cosines and
        correlations toward 0: for those, a positive value (negative for a negative estimate) says
        how far the noise attenuates the statistic, and the estimate is attenuated likewise by the
        noise in the trained vectors (docs/method.md section 6.9).
        """
        return float(self.family.attenuation[self.row])

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
        shift (``glovev_ext.stats.engine.intervals``). On the linear scale otherwise: the paper's
        ``estimate -+ q se``, with the draws' spread as ``se`` for Monte Carlo.
        """
        low, high = self._rule.conf_int(confidence_level)[0]
        return float(low), float(high)

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
        contributions = self.variance_contributions
        if contributions is None:
            raise ValueError("only results of a Statistic have per-word contributions")
        shares = pd.Series(contributions / contributions.sum(), index=list(self.words))
        return shares.sort_values(ascending=False).rename("share of variance")

    # --- renderings ----------------------------------------------------------------------------

    def summary_frame(self, *, confidence_level: float = 0.95) -> pd.DataFrame:
        """One-row table: estimate, std err, statistic, p-value, interval and, for t, its degrees of freedom."""
        return self.family._frame(self.row, confidence_level)

    def summary(self, *, confidence_level: float = 0.95) -> Summary:
        """A statsmodels ``Summary`` with the parameter table and what the result rests on."""
        first = [f"H0: value = {self.null_value:g}, alternative: {self.alternative}",
                 reference_line([self.df], np.array([self.bounds]), self.scale, null_draws=self.family._null_draws)]
        return self.family._summary(self._rule, f"{self.name}: {self.method}", first,
                                    self.summary_frame(confidence_level=confidence_level), self.method_reason)

    def to_contrast(self) -> ContrastResults:
        """The result as statsmodels :class:`~statsmodels.stats.contrast.ContrastResults` (t with ``df``, or normal;
        two-sided p-value).

        Its own ``conf_int`` is symmetric on the statistic; :meth:`conf_int` here respects the bounds.
        """
        if np.isfinite(self.df):
            return ContrastResults(t=np.array([self.statistic]), effect=np.array([self.estimate]),
                                   sd=np.array([self.tested_std_error]), df_denom=self.df)
        return ContrastResults(effect=np.array([self.estimate]), sd=np.array([self.tested_std_error]),
                               statistic=np.array([self.statistic]), distribution="norm")

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

    def summary_frame(self, *, confidence_level: float = 0.95) -> pd.DataFrame:
        """Similarity, standard error, interval, rank probability and the test against the next neighbour."""
        frame = self.similarities.summary_frame(confidence_level=confidence_level)
        frame = frame[[column for column in ("coef", "std err", DRAWS_SD, "Conf. Int. Low", "Conf. Int. Upp.")
                       if column in frame]]
        frame.index = self.neighbors
        frame.insert(0, "rank", np.arange(1, len(frame) + 1))
        frame["P(this rank)"] = np.diag(self.rank_probabilities.to_numpy())
        reference = "t" if np.isfinite(self.adjacent.df).any() else "z"  # as the frames of every result head it
        frame[f"P>{reference} (vs next)"] = np.append(self.adjacent.pvalues, np.nan)
        return frame

    @property
    def method(self) -> str:
        """How the similarities' errors were computed (``similarities.method``); ranks are always Monte Carlo."""
        return self.similarities.method

    def summary(self, *, confidence_level: float = 0.95) -> Summary:
        """Neighbour table as a statsmodels ``Summary``."""
        family = self.similarities
        adjacent = self.adjacent
        first = [reference_line(family.df, family.bounds, family.scale, df_column=False).replace(
                     "Reference:", "Reference of the intervals:"),
                 reference_line(adjacent.df, adjacent.bounds, adjacent.scale, df_column=False).replace(
                     "Reference:", "Reference of the one-sided tests against the next:")]
        title = f"Nearest neighbours of {self.word!r}: {family.method}, {self.n_draws} Monte Carlo draws for ranks"
        summary = family._summary(family._rule, title, first, self.summary_frame(confidence_level=confidence_level))
        summary.add_extra_txt([NEIGHBOR_COLUMNS])
        return summary

    def __str__(self) -> str:
        return str(self.summary())


