"""A noise scale by word frequency, calibrated on two random halves of the corpus (docs/method.md 6.13).

GloVe-V's noise model, ``Var(log X_ij) = s2_i / f(X_ij)``, understates how much a word's vector
varies between two random halves of a corpus, the more so the rarer the word (a word's contexts
come from few documents, which move many cells together; section 6.10). The excess follows the
word's total co-occurrence closely, so it can be measured and undone: fit each half's rows as
posteriors under the pooled prior and contexts, take per word the Wald statistic of
``w_A = w_B`` over D with the variance of the difference (the prior's shared part taken out,
:func:`~glovev_ext.covariance.prior.shared_prior_difference`) against its expectation under the
model, and average the ratio in bins of the total co-occurrence in a half. Those averages,
interpolated in log total, are ``kappa``: the factor on each row's ``s2`` at its own total, in the
pooled fit and in any sub-corpus fitted in its basis (the ratio follows the count, not the corpus
size: section 6.10 found it the same for quarters and halves within about 0.05).

With groups (books, authors), a word that few groups hold varies between halves of the groups far
more than a word of the same total spread over many (docs/method.md 6.20): each knot then also
carries a relative slope in the row's concentration over groups, ``x = sum_g c_g^2 / (sum_g c_g)^2``
(``c_g`` the word's count in group ``g``, the text the row was counted on), so that a row's factor
is ``kappa(t) (1 + beta(t) (x - xbar(t)))`` (docs/method.md 6.21).

How strongly a word associates with all its contexts varies between documents and groups far more than the direction
of its vector does (docs/method.md 6.17, 6.21): ``kappa`` is calibrated on the part of the Wald statistic across each
word's direction, and that direction gets a factor ``r`` of its own, by total (:mod:`.along`, docs/method.md 6.22).
"""

from __future__ import annotations

import logging
import itertools
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from .._memory import release_pages, row_sums
from .along import along_direction, along_factor_of, redirected, split_wald
from ._condition import solve_within
from ._row_blocks import RowBlockMap
from .device import DeviceWordFitter
from .prior import FittedBlock, FreeRows, GaussianPrior, shared_prior_difference
from .translation import difference_translation, translation_rows
from .wls import WordFitter

logger = logging.getLogger(__name__)

# Bins of the calibration, in total co-occurrence in a half: a factor of 2 wide, each with at least
# MIN_WORDS words (a bin with fewer joins the one above it, the last the one below).
BIN_RATIO = 2.0
MIN_WORDS = 50
# A word whose difference has a covariance this ill-conditioned is held by the prior in both halves
# (both return nearly its mean); its Wald statistic says nothing about the noise.
_MAX_DIFFERENCE_CONDITION = 1e10
# Words whose Wald statistic has an F reference with this many denominator degrees of freedom or fewer
# have a mean too heavy-tailed to average.
_MIN_DOF = 4.0
# A row's factor is at least this share of its knot's level, however spread its word is over the groups.
MIN_RELATIVE_FACTOR = 0.25
# A bin whose concentrations vary less than this (their weighted variance) gets no slope: there is nothing to
# regress on (one group, or every word spread alike).
_MIN_CONCENTRATION_VARIANCE = 1e-8


@dataclass(frozen=True)
class ScaleCurve:
    """``kappa`` as a function of total co-occurrence: piecewise linear in log total between the knots,
    constant beyond them; no knots is 1 everywhere. With slopes, also linear in the row's concentration over
    groups: ``kappa(t) * max(1 + beta(t) (x - xbar(t)), MIN_RELATIVE_FACTOR)``, ``beta`` and ``xbar``
    interpolated as ``kappa`` is.

    Attributes
    ----------
    log_totals : ndarray, shape (k,)
        The knots: the mean log total co-occurrence (in a half) of each calibration bin, increasing.
    factors : ndarray, shape (k,)
        ``kappa`` at each knot: the bin's mean Wald statistic per dimension over its mean expectation.
    n_words : ndarray, shape (k,)
        Words each knot was estimated from.
    slopes : ndarray, shape (k,) or None
        ``beta`` at each knot: the factor's change per unit of concentration, relative to ``kappa``
        (None: no dependence on concentration).
    centres : ndarray, shape (k,) or None
        ``xbar`` at each knot: the bin's mean concentration (weighted by the words' expectations), where
        the factor is ``kappa``.
    """

    log_totals: np.ndarray
    factors: np.ndarray
    n_words: np.ndarray
    slopes: np.ndarray | None = None
    centres: np.ndarray | None = None

    @classmethod
    def empty(cls) -> ScaleCurve:
        return cls(np.empty(0), np.empty(0), np.empty(0, dtype=np.int64))

    @property
    def by_concentration(self) -> bool:
        """Whether the factor depends on a row's concentration over groups."""
        return self.slopes is not None and bool(np.any(self.slopes != 0))

    def slope(self, totals: np.ndarray) -> np.ndarray:
        """``beta`` at each total (0 without slopes)."""
        totals = np.asarray(totals, dtype=np.float64)
        if self.slopes is None or self.factors.size == 0:
            return np.zeros_like(totals)
        return np.interp(_log(totals), self.log_totals, self.slopes)

    def __call__(self, totals: np.ndarray, concentration: np.ndarray | None = None) -> np.ndarray:
        totals = np.asarray(totals, dtype=np.float64)
        if self.factors.size == 0:
            return np.ones_like(totals)
        logs = _log(totals)
        level = np.interp(logs, self.log_totals, self.factors)
        if concentration is None or not self.by_concentration:
            return level
        concentration = np.broadcast_to(np.asarray(concentration, dtype=np.float64), totals.shape)
        relative = 1.0 + (np.interp(logs, self.log_totals, self.slopes)
                          * (concentration - np.interp(logs, self.log_totals, self.centres)))
        # a row whose concentration is unknown (NaN) takes the level
        return level * np.where(np.isfinite(relative), np.maximum(relative, MIN_RELATIVE_FACTOR), 1.0)

    def to_dict(self) -> dict:
        knots = {"total": [round(float(np.exp(x)), 3) for x in self.log_totals],
                 "factor": [round(float(f), 4) for f in self.factors], "n_words": [int(n) for n in self.n_words]}
        if self.by_concentration:
            knots["slope"] = [round(float(b), 4) for b in self.slopes]
            knots["concentration"] = [round(float(c), 5) for c in self.centres]
        return knots

    def __str__(self) -> str:
        if self.factors.size == 0:
            return "-"
        if not self.by_concentration:
            return ", ".join(f"{f:.2f} at {np.exp(x):,.0f}" for x, f in zip(self.log_totals, self.factors))
        return ", ".join(f"{f:.2f} (slope {b:.1f}) at {np.exp(x):,.0f}"
                         for x, f, b in zip(self.log_totals, self.factors, self.slopes))


def _log(totals: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(totals, np.finfo(float).tiny))


@dataclass(frozen=True)
class NoiseScale:
    """``kappa``: the factor on a row's residual variance ``s2`` by its total co-occurrence, one curve for rows
    with an ``s2`` of their own and one for rows whose ``s2`` is pooled (D or fewer spare contexts).

    The two kinds of row differ: a rare word with many contexts estimates its ``s2`` from a few
    residual degrees of freedom, a pooled one borrows its neighbours'. A kind without a curve of its
    own takes the other's; both empty is the model's own noise (1 everywhere).

    Attributes
    ----------
    own : ScaleCurve
        For rows with their own ``s2`` (and for the prior's rows).
    pooled : ScaleCurve
        For rows whose ``s2`` is pooled.
    n_groups : int or None
        How many groups (books, authors) the calibration's halves split; None when each document
        was its own group. ``G`` groups say only so much about how groups vary, so every row scaled
        by this calibration has at most ``G - 1`` reference degrees of freedom (:attr:`max_dof`), as
        cluster-robust errors do (docs/method.md 6.16).
    n_halvings : int
        How many random halvings of the documents or groups the calibration pooled (:meth:`corrected`).
    along : ScaleCurve
        ``r``, the factor on the variance along each row's own vector by its total (its ``factors``; no knots: 1):
        the covariance ``Sigma`` of a posterior scaled by ``kappa`` becomes ``Sigma + (r - 1) (m^T Sigma m) m m^T``,
        ``m`` the unit direction in which noise in the word's strength moves its posterior mean
        (docs/method.md 6.22).
    """

    own: ScaleCurve
    pooled: ScaleCurve
    n_groups: int | None = None
    n_halvings: int = 1
    along: ScaleCurve = field(default_factory=ScaleCurve.empty)

    @classmethod
    def identity(cls) -> NoiseScale:
        """The model's own noise: ``kappa = 1``."""
        return cls(ScaleCurve.empty(), ScaleCurve.empty())

    @property
    def max_dof(self) -> float:
        """The most reference degrees of freedom a row scaled by this calibration has: ``n_groups - 1``, or inf."""
        return np.inf if self.n_groups is None else float(self.n_groups - 1)

    def of_groups(self, n_groups: int | None) -> NoiseScale:
        """This scale, calibrated on halves of ``n_groups`` groups (None: of documents)."""
        return replace(self, n_groups=n_groups)

    def corrected(self, first: NoiseScale, refined: NoiseScale) -> NoiseScale:
        """Correct this scale, a first comparison of several halvings pooled, by ``refined`` over ``first``.

        How the halves' statistic responds to the scale (:meth:`refined`) is a property of the model
        that one halving measures; the level is what varies from halving to halving, and the pooled
        first comparison measures it (docs/method.md 6.20).

        Parameters
        ----------
        first : NoiseScale
            One halving's first comparison (the model's own noise).
        refined : NoiseScale
            The same halving's scale after its second comparison.

        Returns
        -------
        NoiseScale
            This scale's knots and counts, each factor multiplied by ``refined`` over ``first``
            there (for its kind of row), and each slope in concentration moved by ``refined``'s
            less ``first``'s.
        """
        curves = []
        for curve, pooled in ((self.own, False), (self.pooled, True)):
            totals = np.exp(curve.log_totals)
            factors = curve.factors * refined(totals, pooled) / first(totals, pooled)
            if curve.slopes is None:
                curves.append(replace(curve, factors=factors))
                continue
            moved = refined.slope(totals, pooled) - first.slope(totals, pooled)
            curves.append(replace(curve, factors=factors, slopes=_admissible(curve.slopes + moved, curve.centres)))
        corrected = replace(self, own=curves[0], pooled=curves[1])
        return replace(corrected, along=_along_under(refined.along, refined, corrected))

    @property
    def by_concentration(self) -> bool:
        """Whether a row's factor depends on its concentration over groups, not only on its total."""
        return self.own.by_concentration or self.pooled.by_concentration

    def slope(self, totals, pooled=False) -> np.ndarray:
        """``beta``, the factor's relative slope in concentration, at each total (0 without one).

        Parameters
        ----------
        totals : array-like
            Total co-occurrence of each row.
        pooled : bool or array-like of bool, default=False
            Rows whose ``s2`` is pooled.

        Returns
        -------
        ndarray
        """
        totals = np.asarray(totals, dtype=np.float64)
        own, other = self._curves()
        return np.where(np.broadcast_to(pooled, totals.shape), other.slope(totals), own.slope(totals))

    def along_factor(self, totals) -> np.ndarray:
        """``r``, the factor on the variance along each row's own vector, at each total (1 without one).

        Parameters
        ----------
        totals : array-like
            Total co-occurrence of each row.

        Returns
        -------
        ndarray
            ``r`` at each total.
        """
        return self.along(np.asarray(totals, dtype=np.float64))

    def _curves(self) -> tuple[ScaleCurve, ScaleCurve]:
        """The curves of rows with their own ``s2`` and of pooled rows, each the other's where it has no knots."""
        own = self.own if self.own.factors.size else self.pooled
        other = self.pooled if self.pooled.factors.size else self.own
        return own, other

    @property
    def is_identity(self) -> bool:
        """Whether this scale changes nothing."""
        return self.own.factors.size == 0 and self.pooled.factors.size == 0

    def __call__(self, totals, pooled=False, concentration=None) -> np.ndarray:
        """``kappa`` at each total co-occurrence, for rows whose ``s2`` is pooled where ``pooled`` is True, and at
        each row's concentration over groups where given (NaN or None: the knots' level)."""
        totals = np.asarray(totals, dtype=np.float64)
        own, other = self._curves()
        return np.where(np.broadcast_to(pooled, totals.shape), other(totals, concentration),
                        own(totals, concentration))

    def refined(self, rescaled: HalfComparison) -> NoiseScale:
        """The scale after a second comparison of the same halves with this scale applied (its residual).

        This scale is the first comparison's ratio ``W0`` (the noise taken as the model's); the halves'
        Wald statistic does not fall in proportion to ``kappa`` (for rare rows the posterior moves
        toward the prior as ``kappa`` grows, so the difference shrinks too: on the embedded corpus a
        scale of 1.83 left a ratio of 1.30, not 1), so each knot takes a secant step in ``log kappa``
        through the two comparisons, ``log kappa_2 = L^2 / (L - l1)`` with ``L = log kappa_1 = log W0``
        and ``l1 = log W1``, kept between ``kappa_1 W1`` and ``kappa_1 W1^2``; where the first scale is
        within 5 % of 1, or the residual did not move, or the knots differ, ``kappa_1 W1``. That is
        ``log kappa_2 = L + a l1`` with ``a`` in [1, 2]; a slope in concentration takes the same step,
        ``beta_2 = beta_1 + a rho_1`` (``rho_1`` the residual's relative slope), kept in ``[0, 1 / xbar]``.
        """
        curves = []
        for first, kind in ((self.own, rescaled.own), (self.pooled, rescaled.pooled)):
            residual = scale_curve(rescaled.total[kind], rescaled.wald_per_dim[kind], rescaled.expected[kind],
                                   rescaled.concentration[kind], nonnegative_slopes=False)
            if residual.factors.size == 0:
                curves.append(first)
                continue
            start = first(np.exp(residual.log_totals))
            factors = start * residual.factors
            step = np.ones_like(factors)  # a
            if first.log_totals.shape == residual.log_totals.shape and np.allclose(first.log_totals,
                                                                                    residual.log_totals):
                log_start, log_residual = np.log(start), np.log(residual.factors)
                with np.errstate(divide="ignore", invalid="ignore"):
                    secant = np.exp(log_start**2 / (log_start - log_residual))
                    step = np.clip(log_start / (log_start - log_residual), 1.0, 2.0)
                usable = (np.abs(log_start) > np.log(1.05)) & (np.abs(log_start - log_residual) > 1e-3)
                bounds = np.sort(np.stack([factors, start * residual.factors**2]), axis=0)
                factors = np.where(usable, np.clip(secant, bounds[0], bounds[1]), factors)
                step = np.where(usable, step, 1.0)
            if residual.slopes is None:  # no concentrations: the curve in total only
                curves.append(ScaleCurve(residual.log_totals, factors, residual.n_words))
                continue
            slopes = first.slope(np.exp(residual.log_totals)) + step * residual.slopes
            curves.append(ScaleCurve(residual.log_totals, factors, residual.n_words,
                                     _admissible(slopes, residual.centres), residual.centres))
        refined = NoiseScale(*curves, self.n_groups)
        # r measured with this scale's kappa; the variance along each direction it gives is kept under the refined one
        return replace(refined, along=_along_under(along_curve(rescaled), self, refined))

    def to_dict(self) -> dict:
        """The knots as plain lists (for a model's metadata)."""
        knots = {"own": self.own.to_dict(), "pooled": self.pooled.to_dict()}
        if self.along.factors.size:
            knots["along"] = self.along.to_dict()
        if self.n_groups is not None:
            knots["n_groups"] = int(self.n_groups)
        if self.n_halvings > 1:
            knots["n_halvings"] = int(self.n_halvings)
        return knots

    def __str__(self) -> str:
        if self.is_identity:
            return "1 (the model's own noise)"
        halves = "halves" if self.n_halvings == 1 else f"{self.n_halvings} halvings"
        if self.n_groups is not None:
            halves = f" ({halves} of {self.n_groups} groups: at most {self.n_groups - 1} df)"
        else:
            halves = "" if self.n_halvings == 1 else f" ({halves} of the documents)"
        slopes = "; slope: relative change per unit of concentration over groups" if self.by_concentration else ""
        along = f"; along each word's vector: {self.along}" if self.along.factors.size else ""
        return f"own s2: {self.own}; pooled s2: {self.pooled}{along}{halves}{slopes}"


@dataclass(frozen=True)
class HalfComparison:
    """Per word fitted in both halves: its total co-occurrence in a half (the geometric mean of the two), the part
    of its Wald statistic across its direction over ``D - 1`` (``wald_per_dim``, :func:`~.along.split_wald`, the
    direction from the sum of the halves' means), the statistic's mean per degree of freedom under the model
    (``nu / (nu - 2)``, 1 with known ``s2``) and whether both halves pooled its ``s2`` (``pooled``) or neither did
    (``own``); a word of mixed kind is in neither. With the halves' concentrations over groups, ``concentration`` is
    the two halves' concentrations weighted by the traces of their covariances (the share each has in the
    difference's variance); NaN without them. ``along`` is the part along the direction (one degree of freedom,
    the same mean under the model) and ``gain`` how widening both halves by ``r`` along it divides that part,
    ``1 + (r - 1) gain`` (:func:`~.along.along_factor_of`)."""

    total: np.ndarray
    wald_per_dim: np.ndarray
    expected: np.ndarray
    pooled: np.ndarray
    own: np.ndarray
    concentration: np.ndarray
    along: np.ndarray
    gain: np.ndarray

    @classmethod
    def joined(cls, comparisons: Sequence[HalfComparison]) -> HalfComparison:
        """The comparisons of several halvings as one.

        Parameters
        ----------
        comparisons : sequence of HalfComparison
            One per halving.

        Returns
        -------
        HalfComparison
            Their words one after the other (a word compared in each halving is in it once per halving).
        """
        return cls(*(np.concatenate([getattr(c, name) for c in comparisons]) for name in cls.__dataclass_fields__))


def compare_half_rows(halves: tuple[sp.csr_matrix, sp.csr_matrix], fitter_options: dict, prior: GaussianPrior,
                      fallback_sigma2: float, noise_scale: NoiseScale | None = None, n_jobs: int = 1, *,
                      client=None, device: str | None = None,
                      concentrations: tuple[np.ndarray | None, np.ndarray | None] = (None, None),
                      translation: np.ndarray | str | None = None) -> HalfComparison:
    """Fit each half's rows as posteriors under ``prior`` (bias free) and compare every word fitted in both.

    Parameters
    ----------
    halves : (csr_matrix, csr_matrix)
        The two halves' co-occurrence rows, in the pooled vocabulary.
    fitter_options : dict
        ``context_vectors``, ``context_biases``, ``x_max``, ``alpha`` of :class:`WordFitter`.
    prior : GaussianPrior
    fallback_sigma2, noise_scale
        As for :func:`~glovev_ext.covariance.prior.free_row_posteriors` (a scale to check on other
        halves than the ones it was calibrated on; None to calibrate one).
    n_jobs : int, default=1
        Threads of the halves' fits and of their comparisons, shared (on Dask, this machine's threads of the
        comparisons).
    client : dask.distributed.Client or str, optional
        Fit the halves' rows on this Dask cluster instead (the same numbers; the comparisons stay on
        this machine's threads).
    device : str or None
        The PyTorch device on which both halves' rows get their Gram matrices
        (:class:`~glovev_ext.covariance.device.DeviceWordFitter`, rows' biases free).
    concentrations : (ndarray or None, ndarray or None)
        Each half's rows' concentrations over the groups it holds (None: unknown), at which
        ``noise_scale`` scales them and which :attr:`HalfComparison.concentration` weighs.
    translation : ndarray, shape (D,), or "estimate", optional
        ``t = v_A - v_B``, the two halves' translation, taken out of each word's difference as ``M t``, ``M``
        the mean of the halves' ``I - S P`` (docs/method.md 6.23); ``"estimate"``: found first, by
        :func:`.translation.difference_translation` over the ``translation_rows`` of largest total in both halves,
        which are fitted before the others and compared once it is known (no row is fitted twice); None: none.

    Returns
    -------
    HalfComparison
    """
    totals = [row_sums(rows) for rows in halves]
    concentrations = [None if x is None else np.asarray(x, dtype=np.float64) for x in concentrations]
    estimate = isinstance(translation, str)
    if estimate and translation != "estimate":
        raise ValueError(f"translation must be an array, 'estimate' or None, got {translation!r}")
    first = np.sort(translation_rows(totals[0] + totals[1])) if estimate else None
    kept, wald, expected, share, along = [], [], [], [], []
    # Each half's blocks are fitted, compared and let go in turn: a few blocks of factors in memory, not two stores.
    # The comparisons (dense covariances, a difference, its condition and a solve per word: at D = 300, about 70 % of
    # the pass's work, bench/compare_threads.py) run on the fits' threads, queued between their blocks.
    with RowBlockMap(n_jobs, client) as blocks_map:
        fits = [FreeRows(DeviceWordFitter.of(WordFitter(rows, **fitter_options), device, None), prior,
                         fallback_sigma2, noise_scale, blocks_map, concentration=x, first=first)
                for rows, x in zip(halves, concentrations)]
        fitted = zip(fits[0].blocks, fits[0].fitted_blocks(), fits[1].fitted_blocks())
        if estimate:  # the translation rows' blocks come first: kept until the translation is known
            held = list(itertools.islice(fitted, fits[0].n_first_blocks))
            translation = _held_translation(held, prior.precision)
            fitted = itertools.chain(held, fitted)

        def comparisons() -> Iterator[Future]:
            for block, block_a, block_b in fitted:
                release_pages(*halves)
                yield blocks_map.submit_here(_compare_block, block, block_a, block_b, fits[0].dof, fits[1].dof,
                                             prior.precision, translation)

        for block_kept, block_wald, block_expected, block_share, block_along in _in_order(comparisons(),
                                                                                          2 * max(1, n_jobs)):
            kept += block_kept
            wald += block_wald
            expected += block_expected
            share += block_share
            along += block_along
    order = np.argsort(np.asarray(kept, dtype=np.int64), kind="stable")  # row order, whichever blocks came first
    kept = np.asarray(kept, dtype=np.int64)[order]
    wald, expected = np.asarray(wald, dtype=np.float64)[order], np.asarray(expected, dtype=np.float64)[order]
    share = np.asarray(share, dtype=np.float64)[order]
    along = np.asarray(along, dtype=np.float64).reshape(-1, 2)[order]  # each word's part along and its gain
    pooled_a, pooled_b = np.isinf(fits[0].dof[kept]), np.isinf(fits[1].dof[kept])
    return HalfComparison(np.sqrt(totals[0][kept] * totals[1][kept]), wald, expected,
                          pooled_a & pooled_b, ~pooled_a & ~pooled_b,
                          share * _at(concentrations[0], kept) + (1.0 - share) * _at(concentrations[1], kept),
                          along[:, 0], along[:, 1])


def _held_translation(held: list[tuple[np.ndarray, FittedBlock, FittedBlock]], precision: np.ndarray) -> np.ndarray:
    """:func:`.translation.difference_translation` over the rows of ``held`` (blocks of both halves' fits) fitted in
    both, logged."""
    means_a, means_b, factors_a, factors_b = [], [], [], []
    for block, fitted_a, fitted_b in held:
        in_b = dict(fitted_b.factors)
        for i, factor in fitted_a.factors:
            if i in in_b:
                k = int(np.searchsorted(block, i))
                means_a.append(fitted_a.vectors[k])
                means_b.append(fitted_b.vectors[k])
                factors_a.append(factor)
                factors_b.append(in_b[i])
    translation = difference_translation(means_a, means_b, factors_a, factors_b, precision)
    logger.info("noise scale: the halves' translation, of length %.3g from their %d rows of largest total, taken out "
                "of their comparison", float(np.linalg.norm(translation)), len(means_a))
    return translation


def _at(concentration: np.ndarray | None, rows: np.ndarray) -> np.ndarray:
    """``concentration[rows]``, or NaN for each row where none is known."""
    return np.full(rows.size, np.nan) if concentration is None else concentration[rows]


def _in_order(futures: Iterator[Future], width: int) -> Iterator:
    """The results of ``futures`` in order, with at most ``width`` of them submitted and not yet taken."""
    waiting: deque = deque()
    for future in futures:
        waiting.append(future)
        if len(waiting) >= width:
            yield waiting.popleft().result()
    while waiting:
        yield waiting.popleft().result()


def _compare_block(block: np.ndarray, fitted_a: FittedBlock, fitted_b: FittedBlock, dof_a: np.ndarray,
                   dof_b: np.ndarray, precision: np.ndarray,
                   translation: np.ndarray | None) -> tuple[list[int], list[float], list[float], list[float],
                                                            list[tuple[float, float]]]:
    """The rows of ``block`` fitted in both halves whose comparison is kept, the parts of their Wald statistics across
    their direction over ``D - 1``, the statistics' expectations per degree of freedom, the first half's share of the
    two covariances' traces, and each word's part along its direction and its gain (:class:`HalfComparison`), each
    difference without the halves' ``translation`` (None: none)."""
    factors_a, factors_b = dict(fitted_a.factors), dict(fitted_b.factors)  # before any widening
    both = np.flatnonzero(np.isfinite(fitted_a.vectors).all(axis=1) & np.isfinite(fitted_b.vectors).all(axis=1))
    kept, wald, expected, share, along = [], [], [], [], []
    for position in both:
        i = int(block[position])
        bases = factors_a[i], factors_b[i]
        widenings = fitted_a.alongs.get(i), fitted_b.alongs.get(i)
        covariances = bases[0].dense(), bases[1].dense()
        trace_a, trace_b = (np.trace(covariance) + (0.0 if a is None else float(a @ a))
                            for covariance, a in zip(covariances, widenings))
        nu = _welch_satterthwaite(trace_a, trace_b, dof_a[i], dof_b[i])
        if nu <= _MIN_DOF:
            continue
        means = (fitted_a.vectors[position], fitted_b.vectors[position])
        if translation is not None:  # half of M t off each half: their difference loses it, their sum keeps its own
            moved = 0.5 * (translation - 0.5 * (covariances[0] + covariances[1]) @ (precision @ translation))
            means = (means[0] - moved, means[1] + moved)
        # the halves' directions from the sum of their means, which their difference does not move (method.md 6.22)
        directions = [along_direction(base, means[0] + means[1], precision) for base in bases]
        if any(direction is None for direction in directions):
            continue
        direction = directions[0] + directions[1]
        direction /= np.linalg.norm(direction)
        difference = means[0] - means[1]
        joint = shared_prior_difference(*covariances, precision, *(
            redirected(a, covariance, means[0] + means[1], precision) for a, covariance in zip(widenings, covariances)))
        solved = solve_within(joint, np.column_stack([difference, direction]), _MAX_DIFFERENCE_CONDITION)
        if solved is None:
            continue
        part_along, across, precision_along = split_wald(difference, solved[:, 0], direction, solved[:, 1])
        kept.append(i)
        wald.append(across / (difference.size - 1))
        expected.append(1.0 if np.isinf(nu) else nu / (nu - 2.0))
        share.append(float(trace_a / (trace_a + trace_b)))
        along.append((part_along, (bases[0].quad_form(direction) + bases[1].quad_form(direction)) * precision_along))
    return kept, wald, expected, share, along


def noise_scale_from(comparison: HalfComparison, *, bin_ratio: float = BIN_RATIO,
                     min_words: int = MIN_WORDS) -> NoiseScale:
    """``kappa`` from a :class:`HalfComparison`: for each kind of row (own ``s2``, pooled ``s2``), per bin of
    total (``bin_ratio`` wide, at least ``min_words`` words), the mean Wald statistic per dimension over its
    mean expectation (:func:`scale_curve`)."""
    curves = [scale_curve(comparison.total[kind], comparison.wald_per_dim[kind], comparison.expected[kind],
                          comparison.concentration[kind], bin_ratio=bin_ratio, min_words=min_words)
              for kind in (comparison.own, comparison.pooled)]
    scale = NoiseScale(*curves)
    if scale.is_identity:
        logger.info("noise scale: fewer than %d words of either kind fitted in both halves: the model's own noise "
                    "is kept", min_words)
    return scale


def along_curve(comparison: HalfComparison, *, bin_ratio: float = BIN_RATIO, min_words: int = MIN_WORDS) -> ScaleCurve:
    """``r`` from a :class:`HalfComparison`: per bin of total (as :func:`scale_curve`'s, every word of either kind),
    the factor on the variance along each word's direction that brings the bin's parts along to their expectation
    (:func:`~.along.along_factor_of`; 1 where they are at or below it).

    Parameters
    ----------
    comparison : HalfComparison
        The halves' comparison.
    bin_ratio : float, default=BIN_RATIO
        How wide a bin of total is (its largest total over its smallest).
    min_words : int, default=MIN_WORDS
        The fewest words a bin has.

    Returns
    -------
    ScaleCurve
        One knot per bin: its mean log total and its ``r``; no knots for fewer than ``min_words`` words.
    """
    members = _bins(comparison.total, bin_ratio, min_words)
    if not members:
        return ScaleCurve.empty()
    logs = np.log(comparison.total)
    factors = np.array([along_factor_of(comparison.along[m], comparison.gain[m], comparison.expected[m])
                        for m in members])
    return ScaleCurve(np.array([logs[m].mean() for m in members]), factors,
                      np.array([m.size for m in members], dtype=np.int64))


def _along_under(along: ScaleCurve, measured: NoiseScale, scale: NoiseScale) -> ScaleCurve:
    """``along``, measured on covariances scaled by ``measured``, for covariances scaled by ``scale``: the same
    variance along each direction, ``r measured(t) / scale(t)`` (own ``s2``'s curve), at least 1."""
    if along.factors.size == 0:
        return along
    totals = np.exp(along.log_totals)
    return replace(along, factors=np.maximum(along.factors * measured(totals) / scale(totals), 1.0))


def _bins(total: np.ndarray, bin_ratio: float, min_words: int) -> list[np.ndarray]:
    """The calibration's bins of ``total``: ``bin_ratio`` wide from the smallest, a bin with fewer than
    ``min_words`` words joining the next one up, the last one the one below; none for fewer than ``min_words``."""
    if total.size < min_words:
        return []
    logs = np.log(total)
    order = np.argsort(logs, kind="stable")
    width = np.log(bin_ratio)
    edges = logs.min() + width * np.arange(1, int(np.ceil((logs.max() - logs.min()) / width)) + 1)
    bins = [list(members) for members in np.split(order, np.searchsorted(logs[order], edges, side="left"))]
    merged: list[list] = []
    for members in (m for m in bins if m):  # a small bin joins the next one up
        if merged and len(merged[-1]) < min_words:
            merged[-1] += members
        else:
            merged.append(members)
    if len(merged) > 1 and len(merged[-1]) < min_words:  # the last joins the one below
        last = merged.pop()
        merged[-1] = merged[-1] + last
    return [np.asarray(m) for m in merged]


def scale_curve(total: np.ndarray, wald_per_dim: np.ndarray, expected: np.ndarray,
                concentration: np.ndarray | None = None, *, bin_ratio: float = BIN_RATIO, min_words: int = MIN_WORDS,
                nonnegative_slopes: bool = True) -> ScaleCurve:
    """The knots of one :class:`ScaleCurve`: bins of total ``bin_ratio`` wide from the smallest (a bin with fewer
    than ``min_words`` words joins the next one up, the last one the one below), each bin's mean log total and
    mean Wald statistic per dimension over its mean expectation. Fewer than ``min_words`` words: no knots.

    With the words' ``concentration`` (NaN where unknown), each knot also gets the slope of its known words' ratios
    ``W / E`` on their concentration, weighted by ``E`` (so that the line passes through the bin's factor at
    its ``E``-weighted mean concentration, the knot's centre), relative to the factor: a slope below 0,
    which sampling groups cannot give, is 0, and one above ``1 / xbar``, which would make the factor negative
    at ``x = 0``, is ``1 / xbar``, unless ``nonnegative_slopes`` is False (a residual's)."""
    members = _bins(total, bin_ratio, min_words)
    if not members:
        return ScaleCurve.empty()
    logs = np.log(total)
    factors = np.array([wald_per_dim[m].mean() / expected[m].mean() for m in members])
    curve = ScaleCurve(np.array([logs[m].mean() for m in members]), factors,
                       np.array([m.size for m in members], dtype=np.int64))
    if concentration is None or not np.isfinite(concentration).any():
        return curve
    slopes, centres = np.zeros(len(members)), np.zeros(len(members))
    for k, m in enumerate(members):
        m = m[np.isfinite(concentration[m])]  # words whose concentration is known
        if m.size < 2:
            continue
        weights, x = expected[m], concentration[m]
        centres[k] = np.sum(weights * x) / np.sum(weights)
        spread = np.sum(weights * (x - centres[k]) ** 2)
        if spread > _MIN_CONCENTRATION_VARIANCE * np.sum(weights):
            # the E-weighted least-squares slope of W / E on x, through (xbar, factor), over the factor
            slopes[k] = np.sum((x - centres[k]) * (wald_per_dim[m] - weights * factors[k])) / spread / factors[k]
    if nonnegative_slopes:
        slopes = _admissible(slopes, centres)
    return replace(curve, slopes=slopes, centres=centres)


def _admissible(slopes: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Slopes between 0 and ``1 / xbar``: a factor ``kappa (1 + beta (x - xbar))`` that neither falls as a word
    gets more concentrated nor goes below 0 for a word spread evenly over very many groups (``x`` near 0)."""
    with np.errstate(divide="ignore"):
        return np.clip(slopes, 0.0, np.where(centres > 0, 1.0 / centres, 0.0))


def _welch_satterthwaite(trace_a: float, trace_b: float, dof_a: float, dof_b: float) -> float:
    """Degrees of freedom of ``trace_a + trace_b``, each estimated with its own degrees of freedom (inf: known)."""
    denominator = trace_a**2 / dof_a + trace_b**2 / dof_b
    return np.inf if denominator == 0 else float((trace_a + trace_b) ** 2 / denominator)
