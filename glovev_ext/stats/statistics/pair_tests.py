"""Many cosine similarities tested one by one: :func:`similarity_tests` and its table, :class:`SimilarityTests`.

:func:`~glovev_ext.stats.similarity_family` estimates pairs *together* (their joint covariance, for
contrasts); a screen of thousands of pairs wants each pair's own test, and the joint covariance of
10,000 pairs would not fit in memory. Here the delta method runs vectorised over the pairs: the
gradients of every cosine at once, then one pass over the distinct words, each whitening all the
gradients that involve it with its stored factor. Each row equals :func:`~glovev_ext.stats.similarity`
for that pair with the same options (tests check it to 1e-12). ``method="auto"`` and
``"monte carlo"`` draw vectors for every pair, so they run pair by pair through
:func:`~glovev_ext.stats.similarity` (``python bench/batched_tests.py`` gives both rates).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from statsmodels.iolib.summary import Summary
from statsmodels.stats.multitest import multipletests
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from ..._checks import DEFAULT_SEED
from ..._deprecation import warn_renamed
from ..._docstrings import fill_doc
from ..engine.rendering import column_lines, notes, parameter_frame, reference_line, render
from .cosine import COSINE_BOUNDS, cosine_pair_gradients
from ..engine.estimation import DEFAULT_METHOD, check_method, word_caveats
from ..engine.intervals import UNION, bounds_of, check_alternative, check_scale, welch_satterthwaite
from ..engine.results import DELTA, RECONSTRUCTION, InferenceResult
from ..engine.rule import InferenceRule
from .similarity import similarity
from ..engine.words import DEFAULT_MISSING, EmbeddingWithCovariance, ResolvedWords, resolve, usable_groups, vectors_of


@dataclass(frozen=True)
class SimilarityTests:
    """Separate Wald tests of many cosine similarities, one row per pair.

    The rows are not a family: each has its own test at its own level (adjust with
    :meth:`correct`), and two rows cannot be compared from this table (pairs sharing a word are
    correlated: use :func:`~glovev_ext.stats.similarity_family` for contrasts).

    Attributes
    ----------
    pairs : tuple of (str, str)
    names : tuple of str
        ``"cos(a, b)"`` for each pair.
    estimates, std_errors, df : ndarray, shape (m,)
        Cosines at the trained vectors, the standard errors their intervals and tests are built from
        (``bse``), and degrees of freedom.
    methods : tuple of str
        How each row's uncertainty was propagated.
    method_reasons : tuple of str
        Why (what ``method="auto"`` found for that pair).
    variance_contributions : ndarray, shape (m, 2)
        The variance each pair's first and second word contribute (delta method).
    null_value : float
    alternative : str
    scale : {"bounded", "linear"}
    dropped : tuple of str
        Pairs left out with ``missing="drop"``, with the reasons.
    caveats : tuple of str
    correction : str or None
        The ``multipletests`` method :meth:`correct` applied, if any (``pvalues_adjusted``).
    significance_level : float
        The level the correction was made at (two-stage methods use it).

    Its ``summary_frame`` has the columns of every result (``bse``, ``tvalues``, ``pvalues``), the
    statistic under the head of its kind for each row (a Monte Carlo row may differ from the delta
    rows), then each row's method.
    """

    pairs: tuple
    names: tuple
    estimates: np.ndarray
    std_errors: np.ndarray
    df: np.ndarray
    methods: tuple
    method_reasons: tuple
    variance_contributions: np.ndarray = field(repr=False)
    null_value: float = 0.0
    alternative: str = "two-sided"
    scale: str = "bounded"
    dropped: tuple = ()
    caveats: tuple = ()
    _drawn: dict = field(default_factory=dict, repr=False, compare=False)  # row -> InferenceResult (Monte Carlo)
    correction: str | None = None
    significance_level: float = 0.05

    def __len__(self) -> int:
        return len(self.pairs)

    @property
    def _delta_rule(self) -> InferenceRule:
        return InferenceRule(self.estimates, self.std_errors, None, self.df, bounds_of(COSINE_BOUNDS, len(self)),
                             self.scale, DELTA, None, np.full(len(self), UNION, dtype=object),
                             np.zeros(len(self), dtype=bool))

    def _by_row(self, delta_values: np.ndarray, row_value) -> np.ndarray:
        """Delta-method values, with the rows that drew vectors replaced by their own results' values."""
        values = np.array(delta_values)
        for row, result in self._drawn.items():
            values[row] = row_value(result)
        return values

    @property
    def params(self) -> np.ndarray:
        """The cosines at the trained vectors (statsmodels' name)."""
        return self.estimates

    @property
    def draws_std_errors(self) -> np.ndarray:
        """Each row's spread over its Monte Carlo draws (the ``draws sd`` column; NaN for the delta method's rows)."""
        return self._by_row(np.full(len(self), np.nan), lambda result: result.draws_std_error)

    @property
    def bse(self) -> np.ndarray:
        """The standard errors the rows' intervals and tests are built from (the ``std err`` column)."""
        return self._by_row(self.std_errors, lambda result: result.tested_std_error)

    def _tests(self) -> tuple[np.ndarray, np.ndarray]:
        """Each row's statistic and p-value, each row's test asked once."""
        statistics, pvalues = self._delta_rule.tests(np.full(len(self), self.null_value), self.alternative)
        for row, result in self._drawn.items():
            statistics[row], pvalues[row] = result
        return statistics, pvalues

    @property
    def statistics(self) -> np.ndarray:
        """Each row's test statistic (:attr:`statistic_kinds` says what each is)."""
        return self._tests()[0]

    tvalues = statistics

    @property
    def statistic_kinds(self) -> np.ndarray:
        """What each row's statistic is (see :attr:`~glovev_ext.stats.ResultFamily.statistic_kinds`)."""
        return self._by_row(self._delta_rule.statistic_kinds, lambda result: result.statistic_kind)

    @property
    def pvalues(self) -> np.ndarray:
        """p-values of each row's own test (unadjusted)."""
        return self._tests()[1]

    @property
    def pvalues_adjusted(self) -> np.ndarray | None:
        """p-values adjusted by :meth:`correct`'s method (None without a correction)."""
        return None if self.correction is None else self._adjusted(self.pvalues)

    def _adjusted(self, pvalues: np.ndarray) -> np.ndarray:
        return multipletests(pvalues, alpha=self.significance_level, method=self.correction)[1]

    def conf_int(self, *, confidence_level: float = 0.95) -> np.ndarray:
        """``(m, 2)`` intervals, each inside [-1, 1] on the bounded scale (see :class:`InferenceResult`)."""
        interval = self._delta_rule.conf_int(confidence_level)
        for row, result in self._drawn.items():
            interval[row] = result.conf_int(confidence_level=confidence_level)
        return interval

    def correct(self, method: str | None = None, significance_level: float = 0.05) -> SimilarityTests:
        """The same tests with p-values adjusted for the ``m`` tests by ``multipletests(method=...)``.

        Parameters
        ----------
        method : str
            Any ``statsmodels.stats.multitest.multipletests`` method, named explicitly (e.g.
            ``"fdr_bh"``, ``"holm"``). Called without one, ``"fdr_bh"`` with a DeprecationWarning
            (the default of 0.2, which returned the adjusted p-values as an array); glovev-ext 0.4
            requires it.
        significance_level : float, default=0.05
            The false discovery rate (or family-wise error rate); only two-stage methods use it.
        """
        if method is None:
            warn_renamed("SimilarityTests.correct() without a method", "correct('fdr_bh') (or another multipletests "
                         "method), which returns the tests with the adjusted p-values in pvalues_adjusted")
            method = "fdr_bh"
        multipletests(np.array([0.5]), method=method)  # an unknown method fails here, before any p-value
        return dataclasses.replace(self, correction=method, significance_level=significance_level)

    def summary_frame(self, *, confidence_level: float = 0.95) -> pd.DataFrame:
        """One row per pair: the columns of every result, then the method (and adjusted p-values, if corrected)."""
        tested = self.bse
        spreads = np.where(np.isnan(self.draws_std_errors), tested, self.draws_std_errors)
        statistics, pvalues = self._tests()
        frame = parameter_frame(self.names, self.estimates, tested, statistics, self.statistic_kinds, pvalues,
                                self.conf_int(confidence_level=confidence_level), self.df, self.alternative,
                                spreads=None if np.array_equal(tested, spreads, equal_nan=True) else spreads)
        frame["method"] = list(self.methods)
        if self.correction is not None:
            frame[f"P adj. ({self.correction})"] = self._adjusted(pvalues)
        return frame

    def summary(self, *, confidence_level: float = 0.95) -> Summary:
        """A statsmodels ``Summary`` of the table."""
        counts = pd.Series(self.methods).value_counts()
        first = [f"alternative: {self.alternative}; null value {self.null_value:g}; each row its own test",
                 reference_line(self.df, bounds_of(COSINE_BOUNDS, len(self)), self.scale),
                 "Method: " + ", ".join(f"{name} for {count} of {len(self)} pairs" for name, count in counts.items())]
        if self.correction is not None:
            first.insert(0, f"P adj. ({self.correction}): p-values adjusted for {len(self)} tests with "
                            f"multipletests(method={self.correction!r})")
        frame = self.summary_frame(confidence_level=confidence_level)
        return render(frame, "cosine similarities, tested one by one",
                      notes([*first, *column_lines(frame), *self.caveats], RECONSTRUCTION, _words_of(self.pairs),
                            self.dropped, dropped_noun="pair"))

    def __str__(self) -> str:
        return str(self.summary())


@fill_doc
def similarity_tests(kv: EmbeddingWithCovariance, pairs: Sequence[tuple], *, null_value: float = 0.0,
                     alternative: str = "two-sided", method: str = DEFAULT_METHOD, missing: str = DEFAULT_MISSING,
                     n_draws: int = 2000, random_state=DEFAULT_SEED, use_t: bool = True, scale: str = "bounded",
                     progress: bool = False) -> SimilarityTests:
    """Test many cosine similarities, each on its own, as :func:`similarity` would one at a time.

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    pairs : sequence of (str, str)
    {null_value}
    {alternative}
    method : {"auto", "delta", "monte carlo"}, default="auto"
        ``"delta"`` is vectorised (thousands of pairs per second at D = 300); ``"auto"`` judges each
        pair by its own Monte Carlo draws, as :func:`similarity` does, and costs as much.
    {missing}
        A pair with an unusable word is refused, or left out and named.
    {n_draws}
    {random_state}
        Every pair is tested with it, so each row is :func:`similarity` of its pair with the same
        ``random_state`` (a Generator gives one seed for all the pairs).
    {use_t}
    {scale}
    progress : bool, default=False
        A progress bar over the pairs for ``method="auto"`` and ``"monte carlo"``.

    Returns
    -------
    SimilarityTests
    """
    check_alternative(alternative)
    check_scale(scale)
    method = check_method(method)
    pairs = [tuple(pair) for pair in pairs]
    for pair in pairs:
        if len(pair) != 2:
            raise ValueError(f"each pair must hold two words, got {pair!r}")
        if pair[0] == pair[1]:
            raise ValueError(f"cos({pair[0]}, {pair[1]}) is 1 with no uncertainty: a pair needs two different words")
    kept, dropped = usable_groups(kv, pairs, missing)
    if not kept:
        raise ValueError(f"no pair is usable; dropped: {', '.join(dropped[:10])}")
    names = tuple(f"cos({a}, {b})" for a, b in kept)
    if method == "delta":
        estimates, variances, contributions, df, caveats = _delta_rows(kv, kept, use_t)
        return SimilarityTests(tuple(kept), names, estimates, np.sqrt(variances), df, (DELTA,) * len(kept),
                               ("delta method, as asked (method='delta')",) * len(kept), contributions,
                               float(null_value), alternative, scale, tuple(dropped), tuple(caveats))
    if isinstance(random_state, np.random.Generator):  # one seed for every pair, so each reads as it would alone
        random_state = int(random_state.integers(2**63))
    results: list[InferenceResult] = [
        similarity(kv, a, b, null_value=null_value, alternative=alternative, method=method, n_draws=n_draws,
                   random_state=random_state, use_t=use_t, scale=scale)
        for a, b in tqdm(kept, desc="similarity tests", unit="pair", disable=not progress)]
    return SimilarityTests(tuple(kept), names, np.array([r.estimate for r in results]),
                           np.array([r.std_error for r in results]), np.array([r.df for r in results]),
                           tuple(r.method for r in results), tuple(r.method_reason for r in results),
                           np.vstack([r.variance_contributions for r in results]), float(null_value), alternative,
                           scale, tuple(dropped), tuple(word_caveats(resolve(kv, _words_of(kept)))),
                           {row: r for row, r in enumerate(results) if r.method != DELTA})


def _delta_rows(kv: EmbeddingWithCovariance, pairs: list[tuple], use_t: bool
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Cosines, delta-method variances, each word's contribution ``(m, 2)``, degrees of freedom and caveats."""
    words = _words_of(pairs)
    position = {word: k for k, word in enumerate(words)}
    left = np.array([position[a] for a, _ in pairs], dtype=np.int64)
    right = np.array([position[b] for _, b in pairs], dtype=np.int64)
    vectors = vectors_of(kv, words)
    norms = np.linalg.norm(vectors, axis=1)
    estimates = np.einsum("pd,pd->p", vectors[left], vectors[right]) / (norms[left] * norms[right])
    gradients = np.concatenate(cosine_pair_gradients(vectors, left, right))  # (2m, D): all left rows, then right
    owner = np.concatenate([left, right])
    order = np.argsort(owner, kind="stable")
    starts = np.flatnonzero(np.r_[True, owner[order][1:] != owner[order][:-1]])
    stops = np.r_[starts[1:], order.size]
    quadratic = np.empty(owner.size)
    dofs = np.empty(len(words))
    factors = {}
    with threadpool_limits(limits=1, user_api="blas"):  # D x D triangles: one thread is fastest
        for start, stop in zip(starts, stops):
            rows = order[start:stop]
            factor = kv.covariance_factor(words[owner[rows[0]]])
            whitened = factor.whiten(gradients[rows].T)
            quadratic[rows] = np.einsum("dr,dr->r", whitened, whitened)
            dofs[owner[rows[0]]] = factor.dof
            factors[owner[rows[0]]] = factor
    m = len(pairs)
    contributions = np.column_stack([quadratic[:m], quadratic[m:]])
    df = welch_satterthwaite(contributions.T, np.vstack([dofs[left], dofs[right]])) if use_t else np.full(m, np.inf)
    caveats = word_caveats(ResolvedWords(tuple(words), vectors, tuple(factors[k] for k in range(len(words)))))
    return estimates, contributions.sum(axis=1), contributions, df, caveats


def _words_of(pairs) -> list:
    """The distinct words of pairs, in order of first appearance."""
    return list(dict.fromkeys(word for pair in pairs for word in pair))
