"""The GloVe-V formulas for one word (method.md section 2), and their threaded evaluation.

For word i with contexts ``K_i = {j : X_ij > 0}`` and ``V, b, c`` held at their trained values:

- ``H_i = sum_j f(X_ij) v_j v_j^T``  (``b_i`` is fixed, so it is not a parameter);
- ``s2_i = sum_j f(X_ij) (log X_ij - b_i - c_j - w_i . v_j)^2 / (|K_i| - D)``;
- ``Sigma_i = s2_i H_i^{-1}``, defined only when ``|K_i| > D``; when ``cond(H_i) * eps > 1e-10`` the
  inverse is the Moore-Penrose pseudo-inverse from the eigendecomposition of ``H_i``, eigenvalues
  ``<= 1e-3 * max`` set to zero;
- ``w_i* = H_i^{-1} sum_j f(X_ij) (log X_ij - b_i - c_j) v_j``, the weighted-least-squares optimum
  the model assumes ``w_i`` to be, and the Mahalanobis distance of ``w_i`` from it,
  ``sqrt((w_i - w_i*)^T H_i (w_i - w_i*) / s2_i)``.

A word's covariance is kept as a lower-triangular factor ``F`` (BLAS packed, column-major):
``Sigma_i = s2_i (F F^T)^{-1}`` with ``F`` the Cholesky factor of ``H_i`` (kind ``CHOLESKY``), or
``Sigma_i = s2_i F F^T`` with ``F F^T`` the pseudo-inverse (kind ``PSEUDO_INVERSE``) or the image
of a covariance under a linear map such as the unit-normalisation Jacobian (kind ``TRANSFORMED``).

Whether ``cond(H_i) * eps > 1e-10`` is decided without an eigendecomposition: LAPACK's
condition estimate clears words far below the threshold, and otherwise ``cond_2(H) > T`` if and
only if ``H - (lambda_max / T) I`` is not positive definite, which a Cholesky attempt tells (a few
power iterations give a lower bound of ``lambda_max`` that settles most words; the others iterate
to a relative 1e-10). Only the words on the pseudo-inverse branch pay for an eigendecomposition.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.linalg import lapack
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from .glove_objective import glove_weights

UNDEFINED, CHOLESKY, PSEUDO_INVERSE, TRANSFORMED = 0, 1, 2, 3
INVERSE_ERROR_LIMIT = 1e-10
EIGENVALUE_CUTOFF = 1e-3
_EPS = np.finfo(np.float64).eps
_SCREEN_MARGIN = 30.0  # an estimated condition number this far below the threshold needs no exact test
_ROUGH_ITERATIONS = 6  # power iterations before the first, one-sided, shifted Cholesky test


def packed_size(dim: int) -> int:
    """Entries of a packed D x D triangle."""
    return dim * (dim + 1) // 2


@lru_cache(maxsize=8)
def _packed_positions(dim: int) -> np.ndarray:
    """Flat positions in a C-ordered D x D array of the packed lower triangle's entries."""
    rows, cols = np.triu_indices(dim)
    return cols * dim + rows


def pack_lower(matrix: np.ndarray) -> np.ndarray:
    """The lower triangle of a square matrix in BLAS column-major packed order."""
    return np.ascontiguousarray(matrix).ravel()[_packed_positions(matrix.shape[0])]


def unpack_lower(packed: np.ndarray, dim: int) -> np.ndarray:
    """The lower-triangular D x D float64 matrix of a BLAS column-major packed vector."""
    full = np.zeros(dim * dim)
    full[_packed_positions(dim)] = packed
    return full.reshape(dim, dim)


def lower_factor_of_root(root: np.ndarray) -> np.ndarray:
    """The packed lower-triangular ``F`` with ``F F^T = root root^T``, for a ``(D, r)`` ``root``.

    ``F^T`` is the R of a QR decomposition of ``root^T`` (zero rows below the first r).
    """
    dim = root.shape[0]
    triangle = np.zeros((dim, dim))
    r = np.linalg.qr(root.T, mode="r")
    triangle[:r.shape[0]] = r
    return pack_lower(triangle.T)


@dataclass
class WordFit:
    """GloVe-V quantities of one word; factor is None when the covariance is undefined.

    ``optimum`` is the weighted-least-squares vector; for a row fitted with a free bias,
    ``bias`` is its estimated bias (else the fixed one).
    """

    kind: int
    rank: int
    n_contexts: int
    sigma2: float
    factor: np.ndarray | None
    optimum: np.ndarray
    distance: float
    bias: float = np.nan


class WordFitter:
    """Evaluates the per-word formulas against fixed context parameters.

    Parameters
    ----------
    cooccurrence : scipy.sparse.csr_matrix, shape (V, V)
        Canonical co-occurrence matrix (rows are centre words).
    context_vectors : ndarray, shape (V, D)
    context_biases : ndarray, shape (V,)
    x_max, alpha : float
        Weighting function.
    """

    def __init__(self, cooccurrence: sp.csr_matrix, context_vectors: np.ndarray, context_biases: np.ndarray,
                 x_max: float, alpha: float):
        self.cooccurrence = cooccurrence
        self.context_vectors = np.ascontiguousarray(context_vectors, dtype=np.float64)
        self.context_biases = np.asarray(context_biases, dtype=np.float64)
        self.x_max = x_max
        self.alpha = alpha
        self.dim = self.context_vectors.shape[1]

    def n_contexts(self) -> np.ndarray:
        """|K_i| for every row."""
        return np.diff(self.cooccurrence.indptr)

    def fit_word(self, i: int, center_bias: float, center_vector: np.ndarray,
                 scratch: np.ndarray | None = None) -> WordFit:
        """The GloVe-V quantities of row ``i`` given its trained bias and centre vector."""
        start, stop = self.cooccurrence.indptr[i], self.cooccurrence.indptr[i + 1]
        return self.fit_row(self.cooccurrence.indices[start:stop], self.cooccurrence.data[start:stop],
                            center_bias, center_vector, scratch)

    def fit_row(self, cols: np.ndarray, values: np.ndarray, center_bias: float | None,
                center_vector: np.ndarray | None, scratch: np.ndarray | None = None) -> WordFit:
        """The GloVe-V quantities of a co-occurrence row given as (columns, positive values).

        With ``center_bias`` None the row's bias is estimated with its vector (a word outside the
        fit has none): the bias is profiled out of ``H`` and ``|K| - D - 1`` degrees of freedom
        remain. With ``center_vector`` None the residuals are taken at the optimum ``w*``.
        ``scratch``, if given, is a float64 buffer of at least ``(|K|, D + 2)`` to reuse.
        """
        dim = self.dim
        n_contexts = cols.size
        free_bias = center_bias is None
        dof = n_contexts - dim - (1 if free_bias else 0)
        if dof <= 0:
            return WordFit(UNDEFINED, 0, n_contexts, np.nan, None, np.full(dim, np.nan), np.nan,
                           np.nan if free_bias else center_bias)
        root_weights = np.sqrt(glove_weights(values, self.x_max, self.alpha))
        target = root_weights * (np.log(values) - self.context_biases[cols] - (0.0 if free_bias else center_bias))
        if scratch is None or scratch.shape[0] < n_contexts or scratch.shape[1] != dim + 2:
            scratch = np.empty((n_contexts, dim + 2))
        # One pass over the weighted contexts [A | s | t] (s = sqrt f, t = s (log X - c - b)) and one
        # symmetric product give H = A^T A and every cross product the formulas need.
        augmented = scratch[:n_contexts]
        _gather_weighted_rows(self.context_vectors, cols, root_weights, target, augmented)
        gram = augmented.T @ augmented
        hessian, rhs = gram[:dim, :dim], gram[:dim, dim + 1]
        if free_bias:
            # Profiling the intercept out: H and A^T t become Schur complements.
            weight_sum, design_sum, target_sum = gram[dim, dim], gram[:dim, dim], gram[dim, dim + 1]
            hessian = hessian - np.outer(design_sum, design_sum) / weight_sum
            rhs = rhs - design_sum * (target_sum / weight_sum)
        else:
            hessian = hessian.copy()

        lower, info = lapack.dpotrf(hessian, lower=1, clean=1)
        if info == 0 and not self._ill_conditioned(hessian, lower, gram[:dim, dim]):
            kind, rank, factor = CHOLESKY, dim, pack_lower(lower)
            optimum = lapack.dpotrs(lower, rhs, lower=1)[0]
        else:
            eigenvalues, eigenvectors = np.linalg.eigh(hessian)
            kept = eigenvalues > EIGENVALUE_CUTOFF * eigenvalues[-1]
            root = eigenvectors[:, kept] / np.sqrt(eigenvalues[kept])
            kind, rank, factor = PSEUDO_INVERSE, int(kept.sum()), lower_factor_of_root(root)
            optimum = root @ (root.T @ rhs)
        vector = optimum if center_vector is None else center_vector
        residual = augmented[:, dim + 1] - augmented[:, :dim] @ vector
        bias = center_bias
        if free_bias:
            bias = (target_sum - design_sum @ vector) / weight_sum
            residual -= augmented[:, dim] * bias
        sigma2 = float(residual @ residual) / dof
        delta = vector - optimum
        return WordFit(kind, rank, n_contexts, sigma2, factor, optimum,
                       _mahalanobis(float(delta @ hessian @ delta), sigma2), float(bias))

    def _ill_conditioned(self, hessian: np.ndarray, lower: np.ndarray, start: np.ndarray) -> bool:
        """``cond_2(H) * eps > 1e-10``, decided without an eigendecomposition.

        LAPACK's estimate of the 1-norm condition number (a lower bound, in practice within a
        factor 3 of it, and ``cond_1 >= cond_2``) clears a word far below the threshold. Otherwise
        the test is exact: ``cond_2(H) > T`` if and only if ``H - (lambda_max / T) I`` is not positive
        definite, which one Cholesky attempt tells. Every power-iteration estimate of
        ``lambda_max`` is a lower bound, so a failed attempt with a rough estimate already proves
        the word ill-conditioned; only the others need ``lambda_max`` to a relative 1e-10.
        """
        limit = INVERSE_ERROR_LIMIT / _EPS
        rcond, info = lapack.dpocon(lower, np.abs(hessian).sum(axis=0).max(), uplo="L")
        if info == 0 and rcond > 0 and _SCREEN_MARGIN / rcond < limit:
            return False
        rough, vector = _largest_eigenvalue(hessian, start, max_iterations=_ROUGH_ITERATIONS)
        if self._shift_breaks_cholesky(hessian, rough / limit):
            return True
        largest, _ = _largest_eigenvalue(hessian, vector)
        return largest > rough and self._shift_breaks_cholesky(hessian, largest / limit)

    def _shift_breaks_cholesky(self, hessian: np.ndarray, shift: float) -> bool:
        """Whether ``H - shift I`` is not positive definite."""
        return lapack.dpotrf(hessian - np.diag(np.full(self.dim, shift)), lower=1, clean=0)[1] != 0


def fit_free_rows(fitter: WordFitter) -> list[WordFit]:
    """Every row of ``fitter``'s matrix fitted as a new word: bias free, residuals at the optimum."""
    matrix = fitter.cooccurrence
    return [fitter.fit_row(matrix.indices[a:b], matrix.data[a:b], None, None)
            for a, b in zip(matrix.indptr[:-1], matrix.indptr[1:])]


def free_row_vectors(fitter: WordFitter) -> tuple[np.ndarray, np.ndarray]:
    """Weighted-least-squares vectors (bias free) and context counts of every row of ``fitter``'s matrix."""
    fits = fit_free_rows(fitter)
    return (np.array([fit.optimum for fit in fits]).reshape(len(fits), fitter.dim),
            np.array([fit.n_contexts for fit in fits], dtype=np.int64))


@njit(nogil=True, cache=True)
def _gather_weighted_rows(context_vectors, cols, root_weights, target, out):
    """``out[k] = [s_k v_{cols[k]}, s_k, t_k]``: the weighted design, weights and target side by side."""
    dim = context_vectors.shape[1]
    for k in range(cols.size):
        scale = root_weights[k]
        row = context_vectors[cols[k]]
        for d in range(dim):
            out[k, d] = scale * row[d]
        out[k, dim] = scale
        out[k, dim + 1] = target[k]


def _largest_eigenvalue(hessian: np.ndarray, start: np.ndarray, tolerance: float = 1e-10,
                        max_iterations: int = 500) -> tuple[float, np.ndarray]:
    """A lower bound of the largest eigenvalue of a symmetric positive semi-definite matrix by power
    iteration (converged to ``tolerance`` unless ``max_iterations`` stop it first), and the last
    iterate, from which a later call can go on."""
    vector = start if np.any(start) else np.ones(hessian.shape[0])
    vector = vector / np.linalg.norm(vector)
    value = 0.0
    for _ in range(max_iterations):
        image = hessian @ vector
        new_value = float(vector @ image)
        norm = float(np.linalg.norm(image))
        if norm == 0.0:
            return 0.0, vector
        vector = image / norm
        if new_value - value <= tolerance * new_value:
            return max(new_value, norm), vector
        value = new_value
    # The Rayleigh quotient and ||H v|| of a unit v are both at most lambda_max.
    return max(value, norm), vector


def _mahalanobis(squared_spread: float, sigma2: float) -> float:
    """``sqrt(spread / s2)``, with 0 / 0 = 0 (an exact fit) and x / 0 = inf."""
    if sigma2 > 0:
        return float(np.sqrt(squared_spread / sigma2))
    return 0.0 if squared_spread == 0 else float("inf")


def residual_variances(fitter: WordFitter, center_vectors: np.ndarray, center_biases: np.ndarray) -> np.ndarray:
    """``s2_i`` of every word at the trained parameters, vectorised over the nonzeros (NaN if |K_i| <= D)."""
    matrix = fitter.cooccurrence
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    weighted_squares = np.empty(matrix.nnz)
    block = 1 << 18
    for start in range(0, matrix.nnz, block):
        r, c = rows[start:start + block], matrix.indices[start:start + block]
        values = matrix.data[start:start + block]
        residual = (np.log(values) - center_biases[r] - fitter.context_biases[c]
                    - np.einsum("ij,ij->i", center_vectors[r], fitter.context_vectors[c]))
        weighted_squares[start:start + block] = glove_weights(values, fitter.x_max, fitter.alpha) * residual**2
    dof = fitter.n_contexts() - fitter.dim
    sums = np.bincount(rows, weights=weighted_squares, minlength=matrix.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(dof > 0, sums / dof, np.nan)


@dataclass
class CovarianceArrays:
    """Every word's GloVe-V quantities, as filled in by :func:`fit_all_words`."""

    kind: np.ndarray
    rank: np.ndarray
    n_contexts: np.ndarray
    sigma2: np.ndarray
    factor_row: np.ndarray
    factors: np.ndarray
    optimum: np.ndarray
    distance: np.ndarray

    def absorb(self, rows: np.ndarray, summary: BlockSummary) -> None:
        """Copy a block's per-word results into place."""
        self.kind[rows], self.rank[rows], self.sigma2[rows] = summary.kind, summary.rank, summary.sigma2
        self.optimum[rows], self.distance[rows] = summary.optimum, summary.distance


def word_costs(n_contexts: np.ndarray, dim: int) -> np.ndarray:
    """Work per word: ``|K_i| D^2 + D^3`` for a word with a covariance, 1 for the others."""
    return np.where(n_contexts > dim, n_contexts.astype(np.float64) * dim**2 + float(dim) ** 3, 1.0)


def cost_balanced_blocks(n_contexts: np.ndarray, dim: int, n_blocks: int) -> list[np.ndarray]:
    """Consecutive row blocks of about equal total cost (empty blocks dropped)."""
    cost = word_costs(n_contexts, dim)
    bounds = np.searchsorted(np.cumsum(cost), np.linspace(0, cost.sum(), n_blocks + 1)[1:-1])
    return [block for block in np.split(np.arange(n_contexts.size), bounds) if block.size]


def factor_rows(n_contexts: np.ndarray, dim: int) -> np.ndarray:
    """Row of each word's factor in the factor array, -1 for words without covariance."""
    defined = n_contexts > dim
    rows = np.full(n_contexts.size, -1, np.int64)
    rows[defined] = np.arange(int(defined.sum()))
    return rows


@dataclass
class BlockSummary:
    """The per-word results of one block, everything but the factors (written in place)."""

    kind: np.ndarray
    rank: np.ndarray
    sigma2: np.ndarray
    optimum: np.ndarray
    distance: np.ndarray


def fit_block(fitter: WordFitter, rows: np.ndarray, center_vectors: np.ndarray, center_biases: np.ndarray,
              factors: np.ndarray, block_factor_rows: np.ndarray) -> BlockSummary:
    """Fit ``rows`` of ``fitter``'s matrix (their centre parameters given in the same order), writing
    each defined word's packed factor to ``factors[block_factor_rows[k]]``."""
    n, dim = rows.size, fitter.dim
    summary = BlockSummary(kind=np.zeros(n, np.int8), rank=np.zeros(n, np.int32), sigma2=np.full(n, np.nan),
                           optimum=np.full((n, dim), np.nan), distance=np.full(n, np.nan))
    n_contexts = fitter.n_contexts()[rows]
    scratch = np.empty((max(1, int(n_contexts.max())), dim + 2))
    for k, row in enumerate(rows):
        fit = fitter.fit_word(int(row), float(center_biases[k]), center_vectors[k], scratch)
        summary.kind[k], summary.rank[k], summary.sigma2[k] = fit.kind, fit.rank, fit.sigma2
        summary.optimum[k], summary.distance[k] = fit.optimum, fit.distance
        if fit.factor is not None:
            factors[block_factor_rows[k]] = fit.factor
    return summary


def fit_all_words(fitter: WordFitter, center_vectors: np.ndarray, center_biases: np.ndarray, *,
                  factor_dtype=np.float64, n_jobs: int = 1, progress: bool = True) -> CovarianceArrays:
    """Run :meth:`WordFitter.fit_word` over every row in memory, on threads with one BLAS thread each.

    Rows go to ``8 * n_jobs`` blocks of equal cost (:func:`word_costs`), which idle threads pick up
    in turn.

    Parameters
    ----------
    fitter : WordFitter
    center_vectors : ndarray, shape (V, D)
    center_biases : ndarray, shape (V,)
    factor_dtype : numpy dtype
        dtype of the stored factors.
    n_jobs : int
        Threads.
    progress : bool
        Show a tqdm bar weighted by cost.

    Returns
    -------
    CovarianceArrays
    """
    n_words, dim = center_vectors.shape
    n_contexts = fitter.n_contexts()
    rows_of_factors = factor_rows(n_contexts, dim)
    factors = np.empty((int((rows_of_factors >= 0).sum()), packed_size(dim)), dtype=factor_dtype)
    arrays = CovarianceArrays(kind=np.zeros(n_words, np.int8), rank=np.zeros(n_words, np.int32),
                              n_contexts=n_contexts, sigma2=np.full(n_words, np.nan), factor_row=rows_of_factors,
                              factors=factors, optimum=np.full((n_words, dim), np.nan),
                              distance=np.full(n_words, np.nan))
    cost = word_costs(n_contexts, dim)

    def run(block: np.ndarray) -> float:
        summary = fit_block(fitter, block, center_vectors[block], center_biases[block], factors,
                            rows_of_factors[block])
        arrays.absorb(block, summary)
        return float(cost[block].sum())

    with threadpool_limits(limits=1, user_api="blas"), \
            tqdm(total=float(cost.sum()), desc="GloVe-V covariances", unit="flop", unit_scale=True,
                 disable=not progress, leave=False) as bar, \
            ThreadPoolExecutor(max(1, n_jobs), thread_name_prefix="glovev-cov") as pool:
        for done in pool.map(run, cost_balanced_blocks(n_contexts, dim, 8 * n_jobs)):
            bar.update(done)
    return arrays
