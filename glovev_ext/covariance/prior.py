"""An empirical-Bayes Gaussian prior on the vectors, and every row's posterior (docs/method.md 6.11-6.12).

The prior is ``w_i ~ N(mu, T / gamma)``: ``mu`` and ``T`` are the mean and covariance of the
weighted-least-squares optima of the rows with more than :data:`FREQUENT_SPARE_RATIO` D contexts,
less their mean noise covariance ``s2_i H_i^{-1}`` (so ``T`` is the spread of the vectors
themselves, not of their estimates), made positive definite; ``gamma`` (``prior_strength``) scales
its precision, 1 being the strength the data give. Given the other side of the model held fixed,
row i's posterior is Gaussian:

- covariance ``Sigma_i = s2_i (H_i + s2_i P)^{-1}`` with ``P = gamma T^{-1}``;
- mean ``w_i = (H_i + s2_i P)^{-1} (A_i^T t_i + s2_i P mu)``, which is also the ridge-regularised
  weighted-least-squares fit of the row;

with ``s2_i`` the residual variance at the row's optimum (``|K_i| - D`` degrees of freedom) and,
for a row with ``D`` or fewer contexts, the median of the rows whose total co-occurrence is within
a factor ``exp(0.2)`` of its own (taken as known). Every row gets a vector and a covariance; where
the data are few, both are mostly the prior's (:attr:`RowPosteriors.prior_share`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_solve, solve_triangular

from .._checks import check_positive_float
from .._memory import row_sums
from .along import redirected, widening
from ..glove import GloVeParameters
from ._row_blocks import RowBlockMap
from ._symmetry import transposed_rows
from .device import DeviceWordFitter
from .factor import Factor, packed_size
from .passes import n_blocks_for
from .store import CovarianceStore, CovarianceStoreWriter
from .wls import WordFitter, Workspace

# Rows with more than this many times D contexts estimate the prior: their optima are precise
# enough that the spread of the optima is mostly the spread of the vectors.
FREQUENT_SPARE_RATIO = 10
# Rows without a residual variance of their own take the median of rows within this distance in log
# total co-occurrence.
_POOLING_HALF_WIDTH = 0.2
# The prior rows' noise covariances are summed in bins of this width in log total co-occurrence, so that
# a noise scale found after the pass can weigh them (within 5 % in count of each row's own total).
NOISE_BIN_WIDTH = 0.05

NoiseScaleFunction = Callable[..., np.ndarray]
"""``kappa(totals, pooled, concentration=None)``: a factor on each row's ``s2`` from its total co-occurrence, whether
its ``s2`` is pooled and its concentration over groups (:class:`~glovev_ext.covariance.NoiseScale`)."""


@dataclass(frozen=True)
class GaussianPrior:
    """``N(mean, covariance / strength)`` on a D-dimensional vector.

    Attributes
    ----------
    mean : ndarray, shape (D,)
    covariance : ndarray, shape (D, D)
        ``T``: the covariance the data give (strength 1).
    strength : float
        ``gamma``: the prior's precision is ``gamma T^{-1}``.
    n_rows : int
        Rows it was estimated from.
    """

    mean: np.ndarray
    covariance: np.ndarray
    strength: float
    n_rows: int

    @property
    def precision(self) -> np.ndarray:
        """``gamma T^{-1}``."""
        return self.strength * np.linalg.inv(self.covariance)

    @cached_property
    def fingerprint(self) -> str:
        """A digest of the mean, covariance and strength: equal for the same prior, after saving and loading too.

        Posteriors of two fits are correlated only when they are under the same prior; results compare
        their priors by this (``PriorLink``).
        """
        digest = hashlib.sha256()
        for array in (self.mean, self.covariance):
            digest.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
        digest.update(repr(float(self.strength)).encode())
        return digest.hexdigest()


@dataclass(frozen=True)
class RowPosteriors:
    """Every row's posterior under a :class:`GaussianPrior`, the other side of the model held fixed.

    Attributes
    ----------
    mean : ndarray, shape (V, D)
        Posterior means (the reported vectors).
    covariance : CovarianceStore or None
        ``Sigma_i`` of every row (None when only the means were asked for).
    optimum : ndarray, shape (V, D)
        The unregularised optima (NaN for rows with ``D`` or fewer contexts).
    sigma2 : ndarray, shape (V,)
        ``s2_i``, pooled for rows without one of their own.
    pooled : ndarray of bool, shape (V,)
        Rows whose ``s2_i`` is pooled.
    prior_share : ndarray, shape (V,)
        ``tr(s2_i P (H_i + s2_i P)^{-1}) / D``: the share of the posterior precision that is the
        prior's (0: the data alone; 1: the prior alone).
    prior : GaussianPrior
    """

    mean: np.ndarray
    covariance: CovarianceStore | None
    optimum: np.ndarray
    sigma2: np.ndarray
    pooled: np.ndarray
    prior_share: np.ndarray
    prior: GaussianPrior


def row_posteriors(fitter: WordFitter, biases: np.ndarray, strength: float, n_jobs: int, *,
                   optima: RowOptima | None = None, noise_scale: NoiseScaleFunction | None = None,
                   concentration: np.ndarray | None = None, covariances: bool = True, factor_dtype=np.float64,
                   words=None, path=None, progress: bool = False, description: str = "GloVe-V covariances",
                   client=None) -> RowPosteriors:
    """Estimate the prior from ``fitter``'s rows, then give every row its posterior.

    Parameters
    ----------
    fitter : WordFitter
        The rows (centre words, or context words through the transposed matrix) and the other
        side's vectors and biases.
    biases : ndarray, shape (V,)
        The rows' own biases, held fixed.
    strength : float
        ``gamma``.
    n_jobs : int
        Threads (one BLAS thread each).
    optima : RowOptima, optional
        :func:`row_optima` of the same rows, when the caller has it.
    noise_scale : callable, optional
        ``kappa(totals, pooled)``: the factor on each row's ``s2`` as a function of its total
        co-occurrence and whether its ``s2`` is pooled (:class:`~glovev_ext.covariance.NoiseScale`);
        it also scales the noise taken out of the prior's covariance, and its ``max_dof`` (halves of
        ``G`` groups: ``G - 1``) caps each row's degrees of freedom. None: 1 (the model's own noise).
    concentration : ndarray, shape (V,), optional
        Each row's concentration over groups, at which ``noise_scale`` scales it (None: its level).
    covariances : bool, default=True
        Also build the store of ``Sigma_i`` (the centre side); the context side needs the means only.
    factor_dtype, words, path
        As for :class:`CovarianceStoreWriter`.
    progress : bool, default=False
        Show progress bars (the prior's pass, then this one's, named ``description``).
    description : str
    client : dask.distributed.Client or str, optional
        Fit the rows on this Dask cluster (the prior's pass too, when ``optima`` is not given); the
        same numbers as on threads.

    Returns
    -------
    RowPosteriors

    Raises
    ------
    ValueError
        When ``D`` or fewer rows have a residual variance of their own (the prior's covariance is not
        identified).
    """
    strength = check_positive_float(strength, "prior_strength")
    if optima is None:
        optima = row_optima(fitter, biases, n_jobs, progress, client=client)
    optimum, prior = optima.optimum, optima.prior(strength, noise_scale)
    pooled = ~np.isfinite(optima.sigma2)
    totals = row_sums(fitter.cooccurrence)
    sigma2 = pooled_sigma2(optima.sigma2, totals) * _scale_at(noise_scale, totals, pooled, concentration)
    dof = np.minimum(np.where(pooled, np.inf, fitter.n_contexts() - fitter.dim), _max_dof(noise_scale))
    along = _along_at(noise_scale, totals)
    precision = prior.precision
    shift = precision @ prior.mean
    n_words, dim = optimum.shape
    mean, share = np.empty((n_words, dim)), np.empty(n_words)
    factor_bytes = packed_size(dim) * np.dtype(np.float64).itemsize if covariances else 0
    blocks = np.array_split(np.arange(n_words), n_blocks_for(n_words, factor_bytes))
    with RowBlockMap(n_jobs, client) as blocks_map, ExitStack() as stack:
        writer = None
        if covariances:
            writer = stack.enter_context(CovarianceStoreWriter(n_words, dim, n_words, factor_dtype=factor_dtype,
                                                               words=words, path=path, along=bool((along > 1).any())))
            writer.per_word.n_contexts[:] = fitter.n_contexts()
        fitted = blocks_map.map(_posterior_block, fitter, blocks,
                                lambda rows: (biases[rows], sigma2[rows], dof[rows], along[rows]),
                                (precision, shift, covariances), description=description, progress=progress)
        for rows, (block_mean, block_share, factors) in zip(blocks, fitted):
            mean[rows], share[rows] = block_mean, block_share
            for k, factor, widened_by in factors:
                writer.add(int(rows[k]), factor, widened_by)
    return RowPosteriors(mean, None if writer is None else writer.store, optimum, sigma2, pooled, share, prior)


def _posterior_block(fitter: WordFitter, biases: np.ndarray, sigma2: np.ndarray, dof: np.ndarray, along: np.ndarray,
                     precision: np.ndarray, shift: np.ndarray,
                     covariances: bool) -> tuple[np.ndarray, np.ndarray, list[tuple[int, Factor, np.ndarray | None]]]:
    """A block's posterior means, prior shares and (with ``covariances``) ``(row in the block, factor, widening)`` of
    each row, the widening by its row's factor ``along`` on the variance along its vector (None: none)."""
    workspace = fitter.workspace()
    n_rows = biases.size
    mean, share, factors = np.empty((n_rows, fitter.dim)), np.empty(n_rows), []
    for k in range(n_rows):
        hessian, rhs = fitter.normal_equations(k, float(biases[k]), workspace)
        factor, mean[k], share[k] = posterior(hessian, rhs, sigma2[k], dof[k], precision, shift, workspace)
        if covariances:
            factors.append((k, factor, _widening_or_none(factor, mean[k], precision, along[k])))
    return mean, share, factors


def posterior(hessian: np.ndarray, rhs: np.ndarray, sigma2: float, dof: float, precision: np.ndarray,
              shift: np.ndarray, workspace: Workspace, *, with_share: bool = True) -> tuple[Factor, np.ndarray, float]:
    """One row's posterior from its normal equations ``H w = rhs``, residual variance and the prior's ``P``, ``P mu``.

    Returns the factor of ``Sigma = s2 (H + s2 P)^{-1}`` (``dof`` degrees of freedom), the mean
    ``(H + s2 P)^{-1} (rhs + s2 P mu)`` and the prior's share of the precision, ``1 - tr((H + s2 P)^{-1} H) / D``
    (NaN with ``with_share=False``: the share costs two triangular solves with D right-hand sides, about as
    much as the rest of a rare row's posterior).
    """
    regularised = hessian + sigma2 * precision
    lower, info, _ = workspace.cholesky(regularised)
    if info == 0:
        factor = Factor.of_hessian(regularised, lower, pseudo_inverse=False).with_sigma2(sigma2, dof)
        mean = factor.solve(rhs + sigma2 * shift)
        if not with_share:
            return factor, mean, np.nan
        share = 1.0 - np.trace(cho_solve((lower, True), hessian, check_finite=False)) / hessian.shape[0]
        return factor, mean, float(min(max(share, 0.0), 1.0))
    inverse, share = _whitened_inverse(hessian, sigma2, precision)
    factor = Factor.of_covariance(inverse).with_sigma2(sigma2, dof)
    return factor, inverse @ (rhs + sigma2 * shift), float(min(max(share, 0.0), 1.0)) if with_share else np.nan


def _whitened_inverse(hessian: np.ndarray, sigma2: float, precision: np.ndarray) -> tuple[np.ndarray, float]:
    """``(H + s2 P)^{-1}`` and the prior's share of the precision where rounding in ``H`` breaks the Cholesky
    factorisation (``s2 P`` tiny against a nearly singular ``H``, e.g. a row its contexts fit almost exactly).

    In the prior's whitened coordinates, ``P = R R^T`` and ``G = R^{-1} H R^{-T}`` (positive
    semi-definite, its rounding negatives set to 0): ``(H + s2 P)^{-1} = R^{-T} U (diag(g) + s2)^{-1} U^T R^{-1}``
    and the share is ``mean(s2 / (g + s2))``. Directions ``H`` lost in rounding stay lost: they are
    as accurate as ``H`` is.
    """
    root = np.linalg.cholesky(precision)
    whitened = solve_triangular(root, solve_triangular(root, hessian, lower=True).T, lower=True)
    values, vectors = np.linalg.eigh((whitened + whitened.T) / 2)
    mapped = solve_triangular(root, vectors, lower=True, trans="T")
    values = np.maximum(values, 0.0)
    return (mapped / (values + sigma2)) @ mapped.T, float(np.mean(sigma2 / (values + sigma2)))


def free_row_posteriors(fitter: WordFitter, prior: GaussianPrior, fallback_sigma2: float, *,
                        noise_scale: NoiseScaleFunction | None = None, concentration: np.ndarray | None = None,
                        n_jobs: int = 1,
                        factor_dtype=np.float64) -> tuple[np.ndarray, np.ndarray, np.ndarray, CovarianceStore]:
    """Posteriors of new co-occurrence rows under ``prior``, each row's bias free (flat prior, profiled out).

    ``s2`` is the row's own (``|K| - D - 1`` degrees of freedom) where it has more than ``D + 1``
    contexts, else pooled over these rows by total co-occurrence (``fallback_sigma2`` when none has
    its own). Rows with fewer than two contexts say nothing about their vector beyond its bias: they
    get NaN and no covariance.

    Parameters
    ----------
    fitter : WordFitter
        The new rows and the fitted context vectors and biases.
    prior : GaussianPrior
        The fitted prior (``GloVeVEstimator.prior_``).
    fallback_sigma2 : float
        ``s2`` for every row when none has its own (before ``noise_scale``).
    noise_scale : callable, optional
        ``kappa(totals, pooled)`` on each row's ``s2``, at the row's own total co-occurrence (None: 1); its
        ``max_dof`` caps each row's degrees of freedom.
    concentration : ndarray, shape (n,), optional
        Each row's concentration over the groups of the text it was counted on, at which
        ``noise_scale`` scales it (None: the scale's level at the row's total).
    n_jobs : int, default=1
        Threads (one BLAS thread each); the result is the same at any number.
    factor_dtype : numpy dtype, default=float64

    Returns
    -------
    vectors : ndarray, shape (n, D)
    biases : ndarray, shape (n,)
    sigma2 : ndarray, shape (n,)
    covariance : CovarianceStore
    """
    n_rows, dim = fitter.cooccurrence.shape[0], fitter.dim
    vectors, biases = np.full((n_rows, dim), np.nan), np.full(n_rows, np.nan)
    with RowBlockMap(n_jobs) as blocks_map:
        rows = FreeRows(fitter, prior, fallback_sigma2, noise_scale, blocks_map, concentration=concentration)
        with CovarianceStoreWriter(n_rows, dim, int(rows.identified.sum()), factor_dtype=factor_dtype,
                                   along=bool((rows.along > 1).any())) as writer:
            writer.per_word.n_contexts[:] = rows.n_contexts
            for block, fitted in zip(rows.blocks, rows.fitted_blocks()):
                vectors[block], biases[block] = fitted.vectors, fitted.biases
                for k, factor in fitted.factors:
                    writer.add(k, factor, fitted.alongs.get(k))
    return vectors, biases, np.where(rows.identified, rows.sigma2, np.nan), writer.store


@dataclass(frozen=True)
class FittedBlock:
    """One block of :class:`FreeRows`: its rows' posterior means (NaN where not identified) and biases, the
    ``(row, factor)`` of each identified row, in row order, and each widened row's widening along its vector (the
    factors are before widening: docs/method.md 6.22)."""

    vectors: np.ndarray
    biases: np.ndarray
    factors: list[tuple[int, Factor]]
    alongs: dict[int, np.ndarray]


class FreeRows:
    """The bias-free posteriors of :func:`free_row_posteriors`, a block of rows at a time: every row's noise is
    fixed at construction (its own ``s2`` needs one pass over all rows; pooling needs them all), then
    :meth:`fitted_blocks` fits the blocks in turn, so that a caller can use each block and let it go.

    Parameters
    ----------
    fitter, prior, fallback_sigma2, noise_scale
        As for :func:`free_row_posteriors`.
    blocks_map : RowBlockMap
        Where the rows are fitted (threads or a Dask cluster; an entered map).
    concentration : ndarray, shape (n,), optional
        As for :func:`free_row_posteriors`.
    first : ndarray of int, optional
        Sorted rows to fit before all others, in blocks of their own (the first :attr:`n_first_blocks`).

    Attributes
    ----------
    blocks : list of ndarray
        The rows of each block, sorted: those of ``first`` (if given), then the others (consecutive runs of rows
        only without ``first``).
    n_first_blocks : int
        How many of :attr:`blocks` hold ``first`` (0 without it).
    n_contexts, sigma2, dof, identified : ndarray, shape (n,)
    """

    def __init__(self, fitter: WordFitter, prior: GaussianPrior, fallback_sigma2: float,
                 noise_scale: NoiseScaleFunction | None, blocks_map: RowBlockMap, *,
                 concentration: np.ndarray | None = None, first: np.ndarray | None = None):
        self.fitter = fitter
        self._blocks_map = blocks_map
        matrix, dim = fitter.cooccurrence, fitter.dim
        n_rows = matrix.shape[0]
        self.n_contexts = fitter.n_contexts()
        factor_bytes = packed_size(dim) * np.dtype(np.float64).itemsize
        first = np.empty(0, dtype=np.intp) if first is None else np.asarray(first, dtype=np.intp)
        rest = np.setdiff1d(np.arange(n_rows), first, assume_unique=True)
        first_blocks = np.array_split(first, n_blocks_for(first.size, factor_bytes)) if first.size else []
        self.n_first_blocks = len(first_blocks)
        self.blocks = first_blocks + ([] if first.size == n_rows
                                      else np.array_split(rest, n_blocks_for(rest.size, factor_bytes)))
        self.identified = self.n_contexts >= 2
        own = np.empty(n_rows)
        for block, values in zip(self.blocks, blocks_map.map(_own_sigma2_block, fitter, self.blocks)):
            own[block] = values
        has_own = np.isfinite(own)
        totals = row_sums(matrix)
        sigma2 = pooled_sigma2(own, totals) if has_own.any() else np.where(has_own, own, fallback_sigma2)
        self.sigma2 = sigma2 * _scale_at(noise_scale, totals, ~has_own, concentration)
        self.dof = np.minimum(np.where(has_own, self.n_contexts - dim - 1, np.inf), _max_dof(noise_scale))
        self.along = _along_at(noise_scale, totals)
        self.precision = prior.precision
        self.shift = self.precision @ prior.mean

    def fitted_blocks(self) -> Iterator[FittedBlock]:
        """The posteriors of each of :attr:`blocks`, in order."""
        fitted = self._blocks_map.map(_free_posterior_block, self.fitter, self.blocks,
                                      lambda block: (self.sigma2[block], self.dof[block], self.along[block],
                                                     self.identified[block]),
                                      (self.precision, self.shift))
        for block, (vectors, biases, factors) in zip(self.blocks, fitted):
            yield FittedBlock(vectors, biases, [(int(block[k]), factor) for k, factor, _ in factors],
                              {int(block[k]): along for k, _, along in factors if along is not None})


def _own_sigma2_block(fitter: WordFitter) -> np.ndarray:
    """Each row's own ``s2`` with its bias free (NaN where it has too few contexts)."""
    workspace = fitter.workspace()
    return np.array([fitter.fit_word(k, None, None, workspace).sigma2 for k in range(fitter.cooccurrence.shape[0])],
                    dtype=np.float64)


def _free_posterior_block(fitter: WordFitter, sigma2: np.ndarray, dof: np.ndarray, along: np.ndarray,
                          identified: np.ndarray, precision: np.ndarray,
                          shift: np.ndarray) -> tuple[np.ndarray, np.ndarray, list]:
    """A block's bias-free posterior means and biases (NaN where not identified), and ``(row in the block, factor,
    widening)`` of each identified row, the widening by its factor ``along`` on the variance along its vector (None:
    none)."""
    n_rows = sigma2.size
    workspace = fitter.workspace()
    vectors, biases = np.full((n_rows, fitter.dim), np.nan), np.full(n_rows, np.nan)
    factors = []
    for k in np.flatnonzero(identified):
        hessian, rhs, bias_of = fitter.normal_equations(int(k), None, workspace)
        factor, vectors[k], _ = posterior(hessian, rhs, sigma2[k], dof[k], precision, shift, workspace,
                                          with_share=False)
        biases[k] = bias_of(vectors[k])
        factors.append((int(k), factor, _widening_or_none(factor, vectors[k], precision, along[k])))
    return vectors, biases, factors


def pooled_sigma2(sigma2: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """``sigma2`` with each missing (NaN) value replaced by the median of the known values of rows whose
    ``log(totals)`` is within 0.2 of its own (the median of all known values where none is)."""
    out = np.array(sigma2, dtype=np.float64, copy=True)
    known = np.isfinite(out)
    if not known.any():
        raise ValueError("no row has more contexts than dimensions, so no residual variance can be estimated: "
                         "lower n_components")
    logs = np.log(np.maximum(totals, np.finfo(float).tiny))
    order = np.argsort(logs[known])
    sorted_logs, sorted_sigma2 = logs[known][order], out[known][order]
    overall = float(np.median(sorted_sigma2))
    for i in np.flatnonzero(~known):
        low = np.searchsorted(sorted_logs, logs[i] - _POOLING_HALF_WIDTH, side="left")
        high = np.searchsorted(sorted_logs, logs[i] + _POOLING_HALF_WIDTH, side="right")
        out[i] = float(np.median(sorted_sigma2[low:high])) if high > low else overall
    return out


def posterior_sweeps(cooccurrence: sp.csr_matrix, parameters: GloVeParameters, n_sweeps: int, strength: float,
                     x_max: float, alpha: float, n_jobs: int, progress: bool = False, *,
                     client=None, device: str | None = None) -> GloVeParameters:
    """``n_sweeps`` regularised sweeps: every centre row's posterior mean given C, b, c, then every context
    row's given W, b, c (each side under its own empirical prior); the last W step is left to the caller.

    Biases stay as trained. Returns new centre and context vectors. The rows are fitted on ``n_jobs``
    threads, or on the Dask cluster of ``client`` (the same numbers); with ``device``, their Gram
    matrices are computed on that PyTorch device (:class:`~glovev_ext.covariance.device.DeviceWordFitter`).
    """
    transposed = transposed_rows(cooccurrence)
    center, context = parameters.center_vectors, parameters.context_vectors
    center_biases, context_biases = parameters.center_biases, parameters.context_biases
    for sweep in range(1, n_sweeps + 1):
        rows = DeviceWordFitter.of(WordFitter(cooccurrence, context, context_biases, x_max, alpha), device,
                                   center_biases)
        center = row_posteriors(rows, center_biases, strength, n_jobs, covariances=False, progress=progress,
                                description=f"GloVe-V sweep {sweep}/{n_sweeps}: centre rows", client=client).mean
        rows = DeviceWordFitter.of(WordFitter(transposed, center, center_biases, x_max, alpha), device, context_biases)
        context = row_posteriors(rows, context_biases, strength, n_jobs, covariances=False, progress=progress,
                                 description=f"GloVe-V sweep {sweep}/{n_sweeps}: context rows", client=client).mean
    return GloVeParameters(center, context, parameters.center_biases, parameters.context_biases,
                           costs=parameters.costs)


@dataclass(frozen=True)
class RowOptima:
    """Every row's unregularised optimum and ``s2``, and the moments the prior is made of.

    Attributes
    ----------
    optimum : ndarray, shape (V, D)
        NaN for rows with ``D`` or fewer contexts or a singular ``H_i``.
    sigma2 : ndarray, shape (V,)
        The rows' own ``s2_i`` (NaN where they have none).
    prior_mean : ndarray, shape (D,)
        Mean of the prior rows' optima.
    spread : ndarray, shape (D, D)
        Covariance of the prior rows' optima.
    noise_sums : dict
        ``{bin: sum of s2_i H_i^{-1}}`` over the prior rows whose log total co-occurrence lies in
        ``[bin, bin + 1) * NOISE_BIN_WIDTH``: a noise scale, known only later, weighs them by bin.
    n_rows : int
        Rows the prior is estimated from.
    """

    optimum: np.ndarray
    sigma2: np.ndarray
    prior_mean: np.ndarray
    spread: np.ndarray
    noise_sums: dict
    n_rows: int

    def prior(self, strength: float, noise_scale: NoiseScaleFunction | None = None) -> GaussianPrior:
        """The prior: the optima's spread less their mean noise covariance, each row's times ``noise_scale``
        of its total (taken at the middle of its bin), every eigenvalue at least 1e-3 of the spread's largest."""
        noise = np.zeros_like(self.spread)
        for index in sorted(self.noise_sums):
            noise += _scale_at(noise_scale, np.exp([(index + 0.5) * NOISE_BIN_WIDTH]))[0] * self.noise_sums[index]
        covariance = self.spread - noise / self.n_rows
        # The noise can exceed the spread along a direction: keep every direction at least 1e-3 of the optima's
        # largest spread.
        floor = 1e-3 * np.linalg.eigvalsh(self.spread)[-1]
        covariance += max(0.0, floor - np.linalg.eigvalsh(covariance)[0]) * np.eye(covariance.shape[0])
        return GaussianPrior(self.prior_mean, covariance, strength, self.n_rows)


def row_optima(fitter: WordFitter, biases: np.ndarray, n_jobs: int, progress: bool = False, *,
               client=None) -> RowOptima:
    """Every row's unregularised optimum and ``s2_i`` (each row's bias held at ``biases``), and the moments of the
    prior rows (:func:`_prior_rows`): the mean and spread of their optima and their noise covariances by bin.

    The rows are fitted on ``n_jobs`` threads, or on the Dask cluster of ``client`` (the same numbers)."""
    n_words, dim = fitter.cooccurrence.shape[0], fitter.dim
    n_contexts = fitter.n_contexts()
    bins = np.floor(np.log(np.maximum(row_sums(fitter.cooccurrence), np.finfo(float).tiny))
                    / NOISE_BIN_WIDTH).astype(np.int64)
    optimum, sigma2 = np.full((n_words, dim), np.nan), np.full(n_words, np.nan)
    frequent = n_contexts > FREQUENT_SPARE_RATIO * dim
    rows = np.flatnonzero(n_contexts > dim)
    blocks = np.array_split(rows, n_blocks_for(n_words))  # fixed blocks summed in order: the same prior at any n_jobs
    noise_sums: dict = {}
    with RowBlockMap(n_jobs, client) as blocks_map:
        fitted = blocks_map.map(_optima_block, fitter, blocks, lambda block: (biases[block], frequent[block],
                                                                              bins[block]),
                                description="GloVe-V prior", progress=progress)
        for block, (block_optimum, block_sigma2, sums) in zip(blocks, fitted):
            optimum[block], sigma2[block] = block_optimum, block_sigma2
            for index, total in sums.items():
                _add_to_bin(noise_sums, index, total)
    chosen = _prior_rows(n_contexts, np.isfinite(sigma2), dim)
    if not frequent[chosen].all():  # a small matrix: the prior's rows are not the frequent ones, fit them again
        workspace = fitter.workspace()
        noise_sums = {}
        for i in chosen:
            fit = fitter.fit_word(int(i), float(biases[i]), None, workspace)
            _add_to_bin(noise_sums, int(bins[i]), fit.factor.dense())
    vectors = optimum[chosen]
    return RowOptima(optimum, sigma2, vectors.mean(axis=0), np.atleast_2d(np.cov(vectors, rowvar=False)), noise_sums,
                     int(chosen.size))


def _optima_block(fitter: WordFitter, biases: np.ndarray, frequent: np.ndarray,
                  bins: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict]:
    """A block's optima and ``s2`` (NaN where a row has no covariance), and its frequent rows' noise covariances
    summed by bin (taken while each fit is at hand)."""
    workspace = fitter.workspace()
    n_rows = biases.size
    optimum, sigma2, sums = np.full((n_rows, fitter.dim), np.nan), np.full(n_rows, np.nan), {}
    for k in range(n_rows):
        fit = fitter.fit_word(k, float(biases[k]), None, workspace)
        if fit.factor is not None:
            optimum[k], sigma2[k] = fit.optimum, fit.sigma2
            if frequent[k]:
                _add_to_bin(sums, int(bins[k]), fit.factor.dense())
    return optimum, sigma2, sums


def _add_to_bin(sums: dict, index: int, matrix: np.ndarray) -> None:
    if index in sums:
        sums[index] += matrix
    else:
        sums[index] = matrix.copy()


def _scale_at(noise_scale: NoiseScaleFunction | None, totals: np.ndarray, pooled=False,
              concentration: np.ndarray | None = None) -> np.ndarray:
    """``noise_scale(totals, pooled)`` (at ``concentration`` where given), or ones."""
    totals = np.asarray(totals, dtype=np.float64)
    if noise_scale is None:
        return np.ones_like(totals)
    if concentration is None:  # a plain callable of (totals, pooled) works too
        return np.asarray(noise_scale(totals, pooled), dtype=np.float64)
    return np.asarray(noise_scale(totals, pooled, concentration), dtype=np.float64)


def _widening_or_none(factor: Factor, mean: np.ndarray, precision: np.ndarray, along_factor: float) -> np.ndarray | None:
    """:func:`~.along.widening`, None where it is zero (kept beside the factor: a widened factor's square root costs
    a QR factorisation, which only statistics need)."""
    along = widening(factor, mean, precision, along_factor)
    return along if along.any() else None


def _along_at(noise_scale: NoiseScaleFunction | None, totals: np.ndarray) -> np.ndarray:
    """Each row's factor on the variance along its vector: ``noise_scale.along_factor(totals)``, or ones (a scale
    without one, or a plain callable)."""
    along_factor = getattr(noise_scale, "along_factor", None)
    return np.ones(np.shape(totals)) if along_factor is None else np.asarray(along_factor(totals), dtype=np.float64)


def _max_dof(noise_scale: NoiseScaleFunction | None) -> float:
    """The most degrees of freedom a row scaled by ``noise_scale`` has (its ``max_dof``: a calibration on halves of
    ``G`` groups gives ``G - 1``), or inf."""
    return float(getattr(noise_scale, "max_dof", np.inf))


def shared_prior_difference(covariance_a: np.ndarray, covariance_b: np.ndarray, precision: np.ndarray,
                            along_a: np.ndarray | None = None, along_b: np.ndarray | None = None) -> np.ndarray:
    """``Var(w_A - w_B)`` of one word's posteriors fitted on disjoint text under one prior of precision ``P``.

    Each posterior's error is ``-Sigma P (w - mu)`` plus its own noise, so the two errors share
    ``Cov = Sigma_A P Sigma_B`` and ``Var(w_A - w_B) = Sigma_A + Sigma_B - Sigma_A P Sigma_B - Sigma_B P Sigma_A``
    (docs/method.md 6.12): nearly 0 for a word both posteriors leave at the prior's mean. A posterior widened along
    its vector (``Sigma + a a^T``, docs/method.md 6.22) shares only ``Sigma``'s part: its widening ``a`` adds
    ``a a^T`` to the difference's variance.

    Parameters
    ----------
    covariance_a, covariance_b : ndarray, shape (D, D)
        The two posteriors' covariances ``Sigma_A``, ``Sigma_B`` (before any widening).
    precision : ndarray, shape (D, D)
        The prior's precision ``P``.
    along_a, along_b : ndarray, shape (D,), optional
        Each posterior's widening (None: none).

    Returns
    -------
    ndarray, shape (D, D)
        ``Var(w_A - w_B)``.
    """
    shared = covariance_a @ precision @ covariance_b
    difference = covariance_a + covariance_b - shared - shared.T
    for along in (along_a, along_b):
        if along is not None:
            difference += np.outer(along, along)
    return difference


def posterior_difference(factor_a: Factor, factor_b: Factor, precision: np.ndarray, mean_a: np.ndarray,
                         mean_b: np.ndarray) -> np.ndarray:
    """:func:`shared_prior_difference` of two posteriors' factors, each widened or not.

    Each widening keeps its length and takes the direction of the sum of the two means (:func:`.along.redirected`).

    Parameters
    ----------
    factor_a, factor_b : Factor
        The two posteriors' covariances (:attr:`Factor.unwidened` and :attr:`Factor.along` where widened).
    precision : ndarray, shape (D, D)
        The prior's precision ``P``.
    mean_a, mean_b : ndarray, shape (D,)
        The two posterior means.

    Returns
    -------
    ndarray, shape (D, D)
        ``Var(w_A - w_B)``.
    """
    bases = [factor_a.before_widening, factor_b.before_widening]
    alongs = [redirected(factor.along, base, mean_a + mean_b, precision) for factor, base in zip((factor_a, factor_b),
                                                                                                 bases)]
    return shared_prior_difference(bases[0].dense(), bases[1].dense(), precision, *alongs)


def _prior_rows(n_contexts: np.ndarray, fitted: np.ndarray, dim: int) -> np.ndarray:
    """The rows whose optima estimate the prior: those with more than :data:`FREQUENT_SPARE_RATIO` D contexts, or,
    where fewer than D + 1 rows have that many, the ``4 D`` fitted rows with the most contexts (a small matrix)."""
    frequent = np.flatnonzero(fitted & (n_contexts > FREQUENT_SPARE_RATIO * dim))
    if frequent.size > dim:
        return frequent
    candidates = np.flatnonzero(fitted)
    if candidates.size <= dim:
        raise ValueError(f"{candidates.size} words have more contexts than n_components = {dim} (and a covariance); "
                         f"the prior of point_estimate='posterior' needs more than {dim}: lower n_components or use a "
                         "larger corpus")
    return np.sort(candidates[np.argsort(-n_contexts[candidates], kind="stable")[:4 * dim]])

