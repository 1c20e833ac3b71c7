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

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_solve, solve_triangular
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from .._checks import check_positive_float
from ..glove import GloVeParameters
from .factor import Factor
from .passes import n_blocks_for
from .store import CovarianceStore, CovarianceStoreWriter
from .wls import WordFitter, Workspace

# Rows with more than this many times D contexts estimate the prior: their optima are precise
# enough that the spread of the optima is mostly the spread of the vectors.
FREQUENT_SPARE_RATIO = 10
# Rows without a residual variance of their own take the median of rows within this distance in log
# total co-occurrence.
_POOLING_HALF_WIDTH = 0.2


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
                   covariances: bool = True, factor_dtype=np.float64, words=None, path=None, progress: bool = False,
                   description: str = "GloVe-V covariances") -> RowPosteriors:
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
    covariances : bool, default=True
        Also build the store of ``Sigma_i`` (the centre side); the context side needs the means only.
    factor_dtype, words, path
        As for :class:`CovarianceStoreWriter`.
    progress : bool, default=False
        Show progress bars (the prior's pass, then this one's, named ``description``).
    description : str

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
    optimum, sigma2, prior = _empirical_prior(fitter, biases, strength, n_jobs, progress)
    pooled = ~np.isfinite(sigma2)
    sigma2 = pooled_sigma2(sigma2, np.asarray(fitter.cooccurrence.sum(axis=1)).ravel())
    dof = np.where(pooled, np.inf, fitter.n_contexts() - fitter.dim).astype(np.float64)
    precision = prior.precision
    shift = precision @ prior.mean
    n_words, dim = optimum.shape
    mean, share = np.empty((n_words, dim)), np.empty(n_words)

    def block(rows: np.ndarray) -> list[tuple[int, Factor]]:
        workspace = fitter.workspace()
        factors = []
        for i in rows:
            hessian, rhs = fitter.normal_equations(int(i), float(biases[i]), workspace)
            factor, mean[i], share[i] = posterior(hessian, rhs, sigma2[i], dof[i], precision, shift, workspace)
            if covariances:
                factors.append((int(i), factor))
        return factors

    blocks = np.array_split(np.arange(n_words), n_blocks_for(n_words))
    store = None
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(max(1, n_jobs)) as pool:
        if covariances:
            with CovarianceStoreWriter(n_words, dim, n_words, factor_dtype=factor_dtype, words=words,
                                       path=path) as writer:
                writer.per_word.n_contexts[:] = fitter.n_contexts()
                for factors in _mapped(pool, block, blocks, description, progress):
                    for i, factor in factors:
                        writer.add(i, factor)
            store = writer.store
        else:
            list(_mapped(pool, block, blocks, description, progress))
    return RowPosteriors(mean, store, optimum, sigma2, pooled, share, prior)


def posterior(hessian: np.ndarray, rhs: np.ndarray, sigma2: float, dof: float, precision: np.ndarray,
              shift: np.ndarray, workspace: Workspace) -> tuple[Factor, np.ndarray, float]:
    """One row's posterior from its normal equations ``H w = rhs``, residual variance and the prior's ``P``, ``P mu``.

    Returns the factor of ``Sigma = s2 (H + s2 P)^{-1}`` (``dof`` degrees of freedom), the mean
    ``(H + s2 P)^{-1} (rhs + s2 P mu)`` and the prior's share of the precision, ``1 - tr((H + s2 P)^{-1} H) / D``.
    """
    regularised = hessian + sigma2 * precision
    lower, info, _ = workspace.cholesky(regularised)
    if info == 0:
        factor = Factor.of_hessian(regularised, lower, pseudo_inverse=False).with_sigma2(sigma2, dof)
        share = 1.0 - np.trace(cho_solve((lower, True), hessian, check_finite=False)) / hessian.shape[0]
        return factor, factor.solve(rhs + sigma2 * shift), float(min(max(share, 0.0), 1.0))
    inverse, share = _whitened_inverse(hessian, sigma2, precision)
    factor = Factor.of_covariance(inverse).with_sigma2(sigma2, dof)
    return factor, inverse @ (rhs + sigma2 * shift), float(min(max(share, 0.0), 1.0))


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
        ``s2`` for every row when none has its own.
    factor_dtype : numpy dtype, default=float64

    Returns
    -------
    vectors : ndarray, shape (n, D)
    biases : ndarray, shape (n,)
    sigma2 : ndarray, shape (n,)
    covariance : CovarianceStore
    """
    matrix, dim = fitter.cooccurrence, fitter.dim
    n_rows, n_contexts = matrix.shape[0], fitter.n_contexts()
    workspace = fitter.workspace()
    rows = [(matrix.indices[a:b], matrix.data[a:b]) for a, b in zip(matrix.indptr[:-1], matrix.indptr[1:])]
    own = np.array([fitter.fit_row(cols, values, None, None, workspace).sigma2 for cols, values in rows])
    has_own = np.isfinite(own)
    totals = np.asarray(matrix.sum(axis=1)).ravel()
    sigma2 = pooled_sigma2(own, totals) if has_own.any() else np.where(has_own, own, fallback_sigma2)
    dof = np.where(has_own, n_contexts - dim - 1, np.inf).astype(np.float64)
    precision = prior.precision
    shift = precision @ prior.mean
    vectors, biases = np.full((n_rows, dim), np.nan), np.full(n_rows, np.nan)
    identified = n_contexts >= 2
    with CovarianceStoreWriter(n_rows, dim, int(identified.sum()), factor_dtype=factor_dtype) as writer:
        writer.per_word.n_contexts[:] = n_contexts
        for k in np.flatnonzero(identified):
            hessian, rhs, bias_of = fitter.row_normal_equations(*rows[k], None, workspace)
            factor, vectors[k], _ = posterior(hessian, rhs, sigma2[k], dof[k], precision, shift, workspace)
            biases[k] = bias_of(vectors[k])
            writer.add(int(k), factor)
    return vectors, biases, np.where(identified, sigma2, np.nan), writer.store


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
                     x_max: float, alpha: float, n_jobs: int, progress: bool = False) -> GloVeParameters:
    """``n_sweeps`` regularised sweeps: every centre row's posterior mean given C, b, c, then every context
    row's given W, b, c (each side under its own empirical prior); the last W step is left to the caller.

    Biases stay as trained. Returns new centre and context vectors.
    """
    transposed = cooccurrence.T.tocsr()
    transposed.sort_indices()
    center, context = parameters.center_vectors, parameters.context_vectors
    for sweep in range(1, n_sweeps + 1):
        center = row_posteriors(WordFitter(cooccurrence, context, parameters.context_biases, x_max, alpha),
                                parameters.center_biases, strength, n_jobs, covariances=False, progress=progress,
                                description=f"GloVe-V sweep {sweep}/{n_sweeps}: centre rows").mean
        context = row_posteriors(WordFitter(transposed, center, parameters.center_biases, x_max, alpha),
                                 parameters.context_biases, strength, n_jobs, covariances=False, progress=progress,
                                 description=f"GloVe-V sweep {sweep}/{n_sweeps}: context rows").mean
    return GloVeParameters(center, context, parameters.center_biases, parameters.context_biases,
                           costs=parameters.costs)


def _empirical_prior(fitter: WordFitter, biases: np.ndarray, strength: float, n_jobs: int,
                     progress: bool) -> tuple[np.ndarray, np.ndarray, GaussianPrior]:
    """Every row's unregularised optimum and ``s2_i`` (NaN with ``D`` or fewer contexts or a singular ``H_i``),
    and the prior from the frequent rows (:func:`_prior_rows`)."""
    n_words, dim = fitter.cooccurrence.shape[0], fitter.dim
    n_contexts = fitter.n_contexts()
    optimum, sigma2 = np.full((n_words, dim), np.nan), np.full(n_words, np.nan)

    frequent = n_contexts > FREQUENT_SPARE_RATIO * dim

    def block(rows: np.ndarray) -> np.ndarray:
        """Fit the rows; return the sum of the frequent ones' noise covariances (taken while the fit is at hand)."""
        workspace = fitter.workspace()
        noise_sum = np.zeros((dim, dim))
        for i in rows:
            fit = fitter.fit_word(int(i), float(biases[i]), None, workspace)
            if fit.factor is not None:
                optimum[i], sigma2[i] = fit.optimum, fit.sigma2
                if frequent[i]:
                    noise_sum += fit.factor.dense()
        return noise_sum

    rows = np.flatnonzero(n_contexts > dim)
    blocks = np.array_split(rows, n_blocks_for(n_words))  # fixed blocks summed in order: the same prior at any n_jobs
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(max(1, n_jobs)) as pool:
        noise_sum = sum(_mapped(pool, block, blocks, "GloVe-V prior", progress), np.zeros((dim, dim)))
    chosen = _prior_rows(n_contexts, np.isfinite(sigma2), dim)
    if not frequent[chosen].all():  # a small matrix: the prior's rows are not the frequent ones, fit them again
        workspace = fitter.workspace()
        noise_sum = sum((fitter.fit_word(int(i), float(biases[i]), None, workspace).factor.dense() for i in chosen),
                        np.zeros((dim, dim)))
    vectors = optimum[chosen]
    spread = np.atleast_2d(np.cov(vectors, rowvar=False))
    covariance = spread - noise_sum / chosen.size
    # The noise can exceed the spread along a direction: keep every direction at least 1e-3 of the optima's
    # largest spread.
    floor = 1e-3 * np.linalg.eigvalsh(spread)[-1]
    covariance += max(0.0, floor - np.linalg.eigvalsh(covariance)[0]) * np.eye(dim)
    return optimum, sigma2, GaussianPrior(vectors.mean(axis=0), covariance, strength, int(chosen.size))


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


def _mapped(pool: ThreadPoolExecutor, function, blocks: list[np.ndarray], description: str, progress: bool):
    """``pool.map(function, blocks)`` with a progress bar counting the blocks' rows."""
    with tqdm(total=sum(len(block) for block in blocks), desc=description, unit="word", disable=not progress,
              leave=False) as bar:
        for block, result in zip(blocks, pool.map(function, blocks)):
            bar.update(len(block))
            yield result
