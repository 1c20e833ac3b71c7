"""Any Statistic of an embedding with its uncertainty: :func:`estimate` (all values) and :func:`wald_test` (one)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ..._checks import DEFAULT_SEED
from ..._docstrings import fill_doc
from ...covariance import Factor
from ...covariance.factor import DIAGONAL, LOW_RANK, LOW_RANK_BOUND, LOW_RANK_PLUS_DIAGONAL
from .delta import delta_covariance
from .intervals import (EXTENDED, UNION, bounds_of, check_alternative, check_scale, median_shift, median_shift_noise,
                        scaled_errors, welch_satterthwaite)
from .monte_carlo import draw_values
from .results import DELTA, MONTE_CARLO, RECONSTRUCTION, InferenceResult, ResultFamily
from .shared_prior import PriorLink
from .statistic import Statistic
from .words import EmbeddingWithCovariance, ResolvedWords, resolve

METHODS = ("auto", "delta", "monte carlo")
DEFAULT_METHOD = "auto"
# method="auto" keeps the delta method while its standard errors are within this of Monte Carlo's
AUTO_TOLERANCE = 0.03
# ... and while the draws' median lies within this many standard errors of the estimate (on the test scale):
# a 95 % interval centred this far off covers 0.943, as one whose standard error is AUTO_TOLERANCE short
SHIFT_TOLERANCE = 0.25
# ... and only for values whose every word has at least this many degrees of freedom: a covariance resting on fewer
# residuals can be far too small by chance, and draws judged under it cannot tell (docs/method.md 6.19)
AUTO_MIN_DOF = 10
# a statistic's variance is "dominated" when at most two of its words carry this share of it
DOMINANT_SHARE = 2 / 3
_SHOWN_CAVEATS = 5


def check_method(method: str) -> str:
    """Validate a propagation method (``"monte-carlo"`` and ``"mc"`` also name Monte Carlo)."""
    if method in ("monte-carlo", "mc"):
        return "monte carlo"
    if method not in METHODS:
        raise ValueError(f"method must be 'auto', 'delta' or 'monte carlo', got {method!r}")
    return method


@fill_doc
def estimate(kv: EmbeddingWithCovariance, statistic: Statistic, *, method: str = DEFAULT_METHOD,
             null_values: Sequence[float] | float | None = None, alternative: str = "two-sided",
             n_draws: int = 2000, random_state=DEFAULT_SEED, dropped: Sequence[str] = (), use_t: bool = True,
             scale: str = "bounded") -> ResultFamily:
    """All values of a statistic with their joint covariance, by the delta method or Monte Carlo.

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
        Every word of ``statistic.keys`` must be in it with a covariance.
    statistic : Statistic
    method : {"auto", "delta", "monte carlo"}, default="auto"
        ``"auto"`` (docs/method.md section 6) computes both and keeps the delta method for a value
        when its standard error agrees with Monte Carlo's within ``AUTO_TOLERANCE`` (3 %; judged with
        the linearised statistic as a control variate), the draws' median lies within
        ``SHIFT_TOLERANCE`` (0.25) standard errors of the estimate on the test scale
        (``median_shift``) and every word carrying its variance has at least ``AUTO_MIN_DOF`` (10)
        degrees of freedom, else Monte Carlo; each value is judged on its own (so it reads the same in
        any family), and the result says which and why. Monte Carlo takes the covariance from
        ``n_draws`` draws; the estimate stays the value at the trained vectors. Its intervals extend
        the delta method's by the draws' shift where only the shift failed
        (``draws_interval="extended"``), else join the draws' percentile intervals (``"union"``;
        docs/method.md section 6.9).
    null_values : float or sequence, optional
        Null values of the rows (0 by default).
    {alternative}
    {n_draws}
    {random_state}
    dropped : sequence of str, default=()
        Words the caller left out, reported in the result.
    {use_t}
    {scale}

    Returns
    -------
    ResultFamily

    Notes
    -----
    The paper's recipe is ``method="delta", use_t=False, scale="linear"`` (with covariances fitted
    with ``conditioning="paper"``).
    """
    return estimate_resolved(resolve(kv, statistic.keys), statistic, method=method, null_values=null_values,
                             alternative=alternative, n_draws=n_draws, random_state=random_state, dropped=dropped,
                             use_t=use_t, scale=scale)


def estimate_resolved(words: ResolvedWords, statistic: Statistic, *, method: str = DEFAULT_METHOD,
                      null_values: Sequence[float] | float | None = None, alternative: str = "two-sided",
                      n_draws: int = 2000, random_state=DEFAULT_SEED, dropped: Sequence[str] = (),
                      use_t: bool = True, scale: str = "bounded") -> ResultFamily:
    """:func:`estimate` on words already resolved (``words.keys`` are ``statistic.keys``, in order)."""
    check_alternative(alternative)
    check_scale(scale)
    method = check_method(method)
    words.check_keys(statistic.keys)
    m = len(statistic.names)
    nulls = np.zeros(m) if null_values is None else np.broadcast_to(np.asarray(null_values, float), (m,)).copy()
    jacobian = statistic.jacobian(words.vectors)
    values, covariance, shares = delta_covariance(words, statistic, jacobian)
    contributions = shares.contributions(np.eye(m))
    df = welch_satterthwaite(contributions, shares.dofs) if use_t else np.full(m, np.inf)
    generator = np.random.default_rng(random_state)
    draws = delta_cov = None
    choice = _Choice(DELTA, "delta method, as asked (method='delta')", UNION, None, ())
    if method != "delta":
        normal, judged = _normal_draws(words, statistic, jacobian, covariance, n_draws, generator)
        bounds = bounds_of(statistic.bounds, m)
        shift = median_shift(values, normal, scaled_errors(values, np.sqrt(np.diag(covariance)), bounds, scale),
                             bounds, scale)
        diagnosis = _Diagnosis(statistic.names, np.diag(covariance), judged, shift, n_draws,
                               _fewest_dof(contributions, shares.dofs))
        choice = diagnosis.choice(asked=method == "monte carlo")
        if choice.method == MONTE_CARLO:
            delta_cov, covariance = covariance, np.atleast_2d(np.cov(normal, rowvar=False))
            draws = _t_draws(words, statistic, n_draws, generator) if use_t else normal
    caveats = (*_dominance(statistic.names, words.keys, contributions), *word_caveats(words))
    return ResultFamily.of(statistic.name, statistic.names, values, covariance, null_values=nulls,
                           alternative=alternative, method=choice.method, uncertainty=RECONSTRUCTION,
                           words=tuple(statistic.keys), dropped=tuple(dropped), draws=draws, df=df,
                           bounds=statistic.bounds, scale=scale, method_reason=choice.reason, caveats=caveats,
                           shares=shares, delta_covariance=delta_cov, draws_interval=choice.draws_interval,
                           delta_rows=choice.delta_rows, row_reasons=choice.row_reasons,
                           prior_link=PriorLink.of(words.prior, words, statistic, jacobian))


@fill_doc
def wald_test(kv: EmbeddingWithCovariance, statistic: Statistic, *, null_value: float = 0.0,
              alternative: str = "two-sided", method: str = DEFAULT_METHOD, n_draws: int = 2000,
              random_state=DEFAULT_SEED, dropped: Sequence[str] = (), use_t: bool = True,
              scale: str = "bounded") -> InferenceResult:
    """Wald test of a single-valued statistic (see :func:`estimate`).

    Parameters
    ----------
    kv, statistic
        As for :func:`estimate`; the statistic has one value.
    {null_value}
    alternative, method, n_draws, random_state, dropped, use_t, scale
        As for :func:`estimate`.

    Returns
    -------
    InferenceResult
    """
    if len(statistic.names) != 1:
        raise ValueError(f"{statistic.name} has {len(statistic.names)} values; use estimate() for several")
    family = estimate(kv, statistic, method=method, null_values=null_value, alternative=alternative,
                      n_draws=n_draws, random_state=random_state, dropped=dropped, use_t=use_t, scale=scale)
    return family[0].replace(name=statistic.name)


def _normal_draws(words: ResolvedWords, statistic: Statistic, jacobian: np.ndarray, delta: np.ndarray,
                  n_draws: int, generator: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The statistic at normal draws of the vectors, and the variances to judge the delta method by.

    The judgement uses the linearised statistic ``L = sum_i g_i . (w_i' - w_i)``, whose variance (the
    delta method's) is known exactly, as a regression control variate: ``beta^2 Var(L) + Var(t - beta L)``
    with ``beta`` the regression of ``t`` on ``L`` in the draws. Where the delta method is nearly right
    this is far less noisy than the draws' own variance; where it is far off it is about as noisy,
    and the gap is large anyway.
    """
    m = len(statistic.names)
    base = words.vectors

    def values_and_linear_part(drawn):
        value = np.asarray(statistic.function(drawn), dtype=np.float64).reshape(drawn.shape[0], m)
        return np.concatenate([value, np.einsum("mkd,nkd->nm", jacobian, drawn - base)], axis=1)

    both = draw_values(words, values_and_linear_part, n_draws, generator)
    normal, linear = both[:, :m], both[:, m:]
    centred_values, centred_linear = normal - normal.mean(axis=0), linear - linear.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        beta = np.where(np.diag(delta) > 0, (centred_values * centred_linear).sum(axis=0)
                        / (centred_linear**2).sum(axis=0), 0.0)
    judged = beta**2 * np.diag(delta) + (centred_values - beta * centred_linear).var(axis=0, ddof=1)
    return normal, judged


def _t_draws(words: ResolvedWords, statistic: Statistic, n_draws: int, generator: np.random.Generator) -> np.ndarray:
    """The statistic at draws in which each word's deviation ``S_i z`` is scaled by ``sqrt(nu_i / chi2)``: its t."""
    m = len(statistic.names)
    return draw_values(words, lambda drawn: np.asarray(statistic.function(drawn), dtype=np.float64).reshape(
        drawn.shape[0], m), n_draws, generator, use_t=True)


class _Choice(NamedTuple):
    """What ``method="auto"`` (or ``"monte carlo"``) chose: the family's method and why, how each value's
    interval uses the draws, the values that kept the delta method, and each value's own reason."""

    method: str
    reason: str
    draws_interval: np.ndarray
    delta_rows: np.ndarray | None
    row_reasons: tuple


@dataclasses.dataclass(frozen=True)
class _Diagnosis:
    """What ``method="auto"`` judges the delta method by, for each value: its standard error's gap to Monte
    Carlo's (``delta`` and ``drawn`` are the two variances) and where the normal draws are centred (``shift``,
    ``median_shift``)."""

    names: Sequence[str]
    delta: np.ndarray
    drawn: np.ndarray
    shift: np.ndarray
    n_draws: int
    min_dof: np.ndarray

    @property
    def gap(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            gap = np.abs(np.sqrt(self.delta / self.drawn) - 1)
        return np.where(np.isnan(gap), 0.0, gap)

    def choice(self, asked: bool) -> _Choice:
        """The method, why, and how each value's interval uses the draws, each value judged on its own.

        ``method="auto"`` keeps the delta method for a value when its standard error is within
        ``AUTO_TOLERANCE``, its draws within ``SHIFT_TOLERANCE`` of its estimate and each of its words
        has at least ``AUTO_MIN_DOF`` degrees of freedom, and takes Monte Carlo for the others (the
        family is Monte Carlo when any value is): a value reads the same whatever other values are
        estimated with it. A Monte Carlo value's interval is the delta method's extended by the shift
        where only the shift failed, else joined with the draws' percentile interval.
        """
        m = len(self.names)
        accurate, centred = self.gap <= AUTO_TOLERANCE, np.abs(self.shift) <= SHIFT_TOLERANCE
        accurate &= self.min_dof >= AUTO_MIN_DOF
        kinds = np.where(accurate & ~centred, EXTENDED, UNION).astype(object)
        kept = np.zeros(m, dtype=bool) if asked else accurate & centred
        row_reasons = tuple(self._take([k])._reason(asked) for k in range(m)) if m > 1 else ()
        if kept.all():
            return _Choice(DELTA, self._reason(asked), kinds, None, row_reasons)
        reason = self._take(np.flatnonzero(~kept))._reason(asked)
        if kept.any():
            names = ", ".join(str(self.names[k]) for k in np.flatnonzero(kept)[:_SHOWN_CAVEATS])
            more = f" and {kept.sum() - _SHOWN_CAVEATS} more" if kept.sum() > _SHOWN_CAVEATS else ""
            reason += (f"; the delta method kept for {names}{more} (method='auto' judges each value on its own, so a "
                       "value reads the same in any family)")
        return _Choice(MONTE_CARLO, reason, kinds, kept if kept.any() else None, row_reasons)

    def _take(self, rows) -> _Diagnosis:
        rows = np.asarray(rows, dtype=np.intp)
        return _Diagnosis([self.names[k] for k in rows], self.delta[rows], self.drawn[rows], self.shift[rows],
                          self.n_draws, self.min_dof[rows])

    def _reason(self, asked: bool) -> str:
        """Why these values, judged together, take the method they take (the worst of them named)."""
        gap, shift = self.gap, np.abs(self.shift)
        worst_gap, worst_shift = int(np.argmax(gap)), int(np.argmax(shift))
        accurate, centred = gap[worst_gap] <= AUTO_TOLERANCE, shift[worst_shift] <= SHIFT_TOLERANCE
        if asked:
            reason = f"Monte Carlo, as asked ({self.n_draws} draws)"
            return reason + ("" if centred else f"; {self._shifted(worst_shift)}")
        fewest = int(np.argmin(self.min_dof))
        if self.min_dof[fewest] < AUTO_MIN_DOF:
            reason = (f"Monte Carlo ({self.n_draws} draws): a word of {self.names[fewest]} has "
                      f"{self.min_dof[fewest]:.3g} degrees of freedom, too few for its covariance to show whether the "
                      f"delta method holds (method='auto' keeps it only from {AUTO_MIN_DOF})")
            return reason + ("" if centred else f"; {self._shifted(worst_shift)}")
        if accurate and centred:
            return (f"delta method: its standard errors agree with {self.n_draws} Monte Carlo draws within "
                    f"{gap[worst_gap]:.1%} and the draws' medians lie within {shift[worst_shift]:.2f} standard "
                    f"errors of the estimates (method='auto' keeps it within {AUTO_TOLERANCE:.0%} and "
                    f"{SHIFT_TOLERANCE:g})")
        if accurate:
            keeps = f"; method='auto' keeps the delta method only within {SHIFT_TOLERANCE:g}"
            return (f"Monte Carlo ({self.n_draws} draws): {self._shifted(worst_shift, keeps)}, though its "
                    f"standard errors agree within {gap[worst_gap]:.1%}")
        reason = (f"Monte Carlo ({self.n_draws} draws): the delta method's standard error of "
                  f"{self.names[worst_gap]} is {gap[worst_gap]:.0%} off the draws' (method='auto' keeps it only "
                  f"within {AUTO_TOLERANCE:.0%})")
        return reason + ("" if centred else f"; {self._shifted(worst_shift)}")

    def _shifted(self, k: int, aside: str = "") -> str:
        """Where the draws of value ``k`` lie (``aside`` joins the parenthesis on how that was measured)."""
        side = "below" if self.shift[k] > 0 else "above"
        return (f"the draws of {self.names[k]} are centred {abs(self.shift[k]):.2f} standard errors {side} the "
                f"estimate (their median on the test scale, Monte Carlo noise {median_shift_noise(self.n_draws):.2f}"
                f"{aside})")


def _fewest_dof(contributions: np.ndarray, dofs: np.ndarray) -> np.ndarray:
    """Each value's fewest degrees of freedom among the words that carry any of its variance (inf: none)."""
    carried = contributions > 0
    return np.where(carried, np.asarray(dofs, dtype=np.float64)[:, None], np.inf).min(axis=0, initial=np.inf)


def _dominance(names: Sequence[str], keys: Sequence, contributions: np.ndarray) -> list[str]:
    """Lines naming the one or two words that carry ``DOMINANT_SHARE`` of a value's variance, among more words."""
    lines = []
    for row, name in enumerate(names):
        column = contributions[:, row]
        total = column.sum()
        involved = int((column > 0).sum())
        if total <= 0:
            continue
        order = np.argsort(-column)
        for n_top in (1, 2):
            share = column[order[:n_top]].sum() / total
            if share >= DOMINANT_SHARE and involved > n_top:
                who = " and ".join(f"{keys[i]!r} ({column[i] / total:.0%})" for i in order[:n_top])
                lines.append(f"Variance of {name} dominated by {who}")
                break
    if len(lines) > _SHOWN_CAVEATS:
        more = len(lines) - _SHOWN_CAVEATS
        lines = [*lines[:_SHOWN_CAVEATS],
                 f"... and {more} more values dominated by one or two words (see variance_contributions)"]
    return lines


def understated_caveat(keys: Sequence, understated: np.ndarray, dim: int) -> list[str]:
    """A line naming the words whose covariance the paper's pseudo-inverse understates."""
    which = np.flatnonzero(understated > 0)
    if not which.size:
        return []
    listed = ", ".join(f"{keys[i]!r} along {understated[i]} of {dim} directions" for i in which[:10])
    more = f" and {which.size - 10} more words" if which.size > 10 else ""
    line = (f"Variance understated (the paper's pseudo-inverse sets it to zero; fit with conditioning='exact' "
            f"to avoid it): {listed}{more}")
    return [line]


def word_caveats(words: ResolvedWords) -> list[str]:
    """What a result must say about its words' covariances: understated (the paper's pseudo-inverse) or approximate."""
    understated = np.array([factor.understated for factor in words.factors], dtype=np.int64)
    return [*understated_caveat(words.keys, understated, words.vectors.shape[1]),
            *approximate_caveat(words.keys, words.factors)]


def approximate_caveat(keys: Sequence, factors: Sequence[Factor]) -> list[str]:
    """Lines naming the words whose covariance approximates theirs: a release's (diagonal or low rank), or made
    compact here (low rank plus diagonal, ``CovarianceStore.approximated``)."""
    lines = []
    released = [(key, factor) for key, factor in zip(keys, factors) if factor.approximation in (DIAGONAL, LOW_RANK)]
    if released:
        listed = ", ".join(f"{key!r} ({'diagonal' if factor.approximation == DIAGONAL else f'rank {factor.rank}'} "
                           f"of {factor.dim})" for key, factor in released[:10])
        lines.append(f"Approximate covariance (the release keeps at least 90 % of each word's variance, so intervals "
                     f"may be slightly narrow): {listed}{_more(released)}")
    compact = [(key, factor) for key, factor in zip(keys, factors) if factor.approximation == LOW_RANK_PLUS_DIAGONAL]
    if compact:
        listed = ", ".join(f"{key!r} (rank {factor.rank} plus diagonal, of {factor.dim})"
                           for key, factor in compact[:10])
        lines.append(f"Approximate covariance (leading eigenpairs plus the other variances: each coordinate's variance "
                     f"is exact, some covariances between coordinates are dropped, so intervals may be narrow or "
                     f"wide): {listed}{_more(compact)}")
    bounded = [(key, factor) for key, factor in zip(keys, factors) if factor.approximation == LOW_RANK_BOUND]
    if bounded:
        listed = ", ".join(f"{key!r} (rank {factor.rank} plus a bound, of {factor.dim})" for key, factor in bounded[:10])
        lines.append(f"Approximate covariance (leading eigenpairs plus a bound on the others: no variance is "
                     f"understated, so intervals are wider than the exact ones, never narrower): {listed}"
                     f"{_more(bounded)}")
    return lines


def _more(listed: Sequence) -> str:
    return f" and {len(listed) - 10} more words" if len(listed) > 10 else ""
