"""The GloVe-V formulas for one word (method.md section 2): H, s2, the optimum and the conditioning rule.

For word i with contexts ``K_i = {j : X_ij > 0}`` and ``V, b, c`` held at their trained values:

- ``H_i = sum_j f(X_ij) v_j v_j^T``  (``b_i`` is fixed, so it is not a parameter);
- ``s2_i = sum_j f(X_ij) r_ij^2 / (|K_i| - D)`` with the GloVe residual ``r_ij``
  (:func:`glovev_ext.glove.objective.glove_residuals`; per word, weighted, from the design already gathered):
  :func:`residual_variance`;
- ``Sigma_i = s2_i H_i^{-1}``, defined only when ``|K_i| > D`` and ``H_i`` is not numerically
  singular. Two conditioning rules (``conditioning``): ``"exact"`` (the default, docs/method.md
  section 6) inverts ``H_i`` from its Cholesky factor whenever LAPACK's estimate of its condition
  number is at most :data:`MAX_CONDITION`, and gives a word above it no covariance;
  ``"paper"`` (:func:`is_ill_conditioned`) switches to the paper's pseudo-inverse when
  ``cond(H_i) * eps > 1e-10`` (:meth:`Factor.of_hessian <glovev_ext.covariance.factor.Factor.of_hessian>`);
- ``w_i* = H_i^{-1} sum_j f(X_ij) (log X_ij - b_i - c_j) v_j``, the weighted-least-squares optimum
  the model assumes ``w_i`` to be, and the Mahalanobis distance of ``w_i`` from it,
  ``sqrt((w_i - w_i*)^T H_i (w_i - w_i*) / s2_i)``.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.linalg import lapack

from .._deprecation import warn_renamed
from ..glove import glove_weights
from ..glove.objective import weighted_squared_residuals
from ._lapack import cholesky_condition, factor_condition, lapack_buffers
from .factor import UNDEFINED, Factor

INVERSE_ERROR_LIMIT = 1e-10
# The inverse from a Cholesky factor has relative error about cond * eps (2e-6 at 1e10, measured in
# tests/covariance/test_conditioning.py), far below what a standard error needs; above it a direction
# of H is lost in rounding and the word's variance along it is unknown, not merely large.
MAX_CONDITION = 1e10
CONDITIONING_CHOICES = ("exact", "paper")
_EPS = np.finfo(np.float64).eps
_SCREEN_MARGIN = 30.0  # an estimated condition number this far below the threshold needs no exact test
_ROUGH_ITERATIONS = 6  # power iterations before the first, one-sided, shifted Cholesky test
# The Gram expansion of a residual sum of squares is kept when the sum is at least this share of
# its terms' magnitudes: rounding (about |K|^(1/2) eps of the terms) then stays below 1e-10 of it.
_CANCELLATION_MARGIN = 1e-3


def residual_variance(weighted_squares_sum, n_contexts, dim: int, free_bias: bool = False):
    """``s2 = sum_j f(X_ij) r_ij^2 / (|K| - D)`` (``- 1`` more with a free bias); NaN without a degree of freedom.

    Works on numbers and on arrays of words alike.
    """
    dof = np.asarray(n_contexts) - dim - (1 if free_bias else 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(dof > 0, np.asarray(weighted_squares_sum, dtype=np.float64) / dof, np.nan)


def is_ill_conditioned(hessian: np.ndarray, start: np.ndarray, condition: float | None = None, *legacy) -> bool:
    """The paper's conditioning rule: ``cond_2(H) * eps > INVERSE_ERROR_LIMIT``, decided without an eigendecomposition.

    LAPACK's estimate of the 1-norm condition number (a lower bound, in practice within a factor 3
    of it, and ``cond_1 >= cond_2``) clears a word far below the threshold. Otherwise the test is
    exact: ``cond_2(H) > T`` if and only if ``H - (lambda_max / T) I`` is not positive definite, which
    one Cholesky attempt tells. Every power-iteration estimate of ``lambda_max`` is a lower bound, so
    a failed attempt with a rough estimate already proves the word ill-conditioned; only the others
    need ``lambda_max`` to a relative 1e-10.

    Parameters
    ----------
    hessian : ndarray, shape (D, D)
    start : ndarray, shape (D,)
        A starting vector for the power iteration.
    condition : float, optional
        :func:`estimated_condition` of ``H`` (computed when not given).

    The call of 0.2, ``is_ill_conditioned(hessian, lower, start)``, still works with a
    deprecation warning (the Cholesky factor is no longer needed).
    """
    if np.ndim(start) == 2:
        warn_renamed("is_ill_conditioned(hessian, lower, start)", "is_ill_conditioned(hessian, start)")
        start, condition = condition, (legacy[0] if legacy else None)
    if condition is None:
        condition = estimated_condition(hessian)
    limit = INVERSE_ERROR_LIMIT / _EPS
    if _SCREEN_MARGIN * condition < limit:
        return False
    rough, vector = _largest_eigenvalue(hessian, start, max_iterations=_ROUGH_ITERATIONS)
    if _shift_breaks_cholesky(hessian, rough / limit):
        return True
    largest, _ = _largest_eigenvalue(hessian, vector)
    return largest > rough and _shift_breaks_cholesky(hessian, largest / limit)


@dataclass
class WordFit:
    """GloVe-V quantities of one word.

    Attributes
    ----------
    n_contexts : int
    factor : Factor or None
        The covariance; None when it is undefined (too few contexts).
    optimum : ndarray, shape (D,)
        The weighted-least-squares vector.
    distance : float
        Mahalanobis distance of the vector used for the residuals from the optimum.
    bias : float
        For a row fitted with a free bias, its estimated bias (else the fixed one).
    condition : float
        :func:`estimated_condition` of ``H_i`` (NaN with too few contexts).
    """

    n_contexts: int
    factor: Factor | None
    optimum: np.ndarray
    distance: float
    bias: float = np.nan
    condition: float = np.nan

    @property
    def kind(self) -> int:
        return UNDEFINED if self.factor is None else self.factor.kind

    @property
    def rank(self) -> int:
        return 0 if self.factor is None else self.factor.rank

    @property
    def sigma2(self) -> float:
        return np.nan if self.factor is None else self.factor.sigma2


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
    conditioning : {"exact", "paper"}, default="exact"
        How an ill-conditioned ``H_i`` is treated (see the module docstring).
    """

    def __init__(self, cooccurrence: sp.csr_matrix, context_vectors: np.ndarray, context_biases: np.ndarray,
                 x_max: float, alpha: float, conditioning: str = "exact"):
        self.cooccurrence = cooccurrence
        self.context_vectors = np.ascontiguousarray(context_vectors, dtype=np.float64)
        self.context_biases = np.asarray(context_biases, dtype=np.float64)
        self.x_max = x_max
        self.alpha = alpha
        self.conditioning = check_conditioning(conditioning)
        self.dim = self.context_vectors.shape[1]

    def n_contexts(self) -> np.ndarray:
        """|K_i| for every row."""
        return np.diff(self.cooccurrence.indptr)

    def for_rows(self, rows: sp.csr_matrix, block: np.ndarray) -> WordFitter:
        """A fitter of ``rows``, the rows ``block`` of this fitter's matrix, against the same context parameters."""
        return WordFitter(rows, self.context_vectors, self.context_biases, self.x_max, self.alpha, self.conditioning)

    def compute_threads(self) -> AbstractContextManager:
        """Held while threads fit rows in parallel: here nothing (BLAS's threads are held by the caller); a device
        fitter holds PyTorch's to one."""
        return nullcontext()

    def workspace(self) -> Workspace:
        """Buffers for fitting any row of this fitter's matrix (one per thread)."""
        return Workspace(self.dim, int(self.n_contexts().max(initial=0)))

    def fit_word(self, i: int, center_bias: float | None, center_vector: np.ndarray | None,
                 workspace: Workspace | None = None) -> WordFit:
        """The GloVe-V quantities of row ``i`` given its trained bias (None: free, as in :meth:`fit_row`) and centre
        vector (None: at the optimum)."""
        start, stop = self.cooccurrence.indptr[i], self.cooccurrence.indptr[i + 1]
        return self.fit_row(self.cooccurrence.indices[start:stop], self.cooccurrence.data[start:stop],
                            center_bias, center_vector, workspace)

    def fit_row(self, cols: np.ndarray, values: np.ndarray, center_bias: float | None,
                center_vector: np.ndarray | None, workspace: Workspace | None = None,
                weights: np.ndarray | None = None) -> WordFit:
        """The GloVe-V quantities of a co-occurrence row given as (columns, positive values).

        With ``center_bias`` None the row's bias is estimated with its vector (a word outside the
        fit has none): the bias is profiled out of ``H`` and ``|K| - D - 1`` degrees of freedom
        remain. With ``center_vector`` None the residuals are taken at the optimum ``w*``.
        ``workspace`` (:meth:`workspace`), if given, is reused instead of allocating buffers.
        ``weights`` replace ``f(values)`` (the model's weights are fixed, so a simulation of the
        model holds them at the observed counts').
        """
        dim = self.dim
        n_contexts = cols.size
        free_bias = center_bias is None
        if n_contexts - dim - (1 if free_bias else 0) <= 0:
            return WordFit(n_contexts, None, np.full(dim, np.nan), np.nan, np.nan if free_bias else center_bias)
        if workspace is None:
            workspace = Workspace(dim, n_contexts)
        augmented, gram = self._weighted_gram(cols, values, 0.0 if free_bias else center_bias, workspace, weights)
        return self.fit_gram(gram, n_contexts, center_bias, center_vector, workspace, lambda: augmented)

    def fit_gram(self, gram: np.ndarray, n_contexts: int, center_bias: float | None, center_vector: np.ndarray | None,
                 workspace: Workspace, design, factored: tuple | None = None) -> WordFit:
        """:meth:`fit_row` from the Gram matrix of the row's weighted design ``[A | s | t]`` (``(D + 2, D + 2)``),
        computed elsewhere (on a device, for many rows at once); ``design()`` gives the design itself, which a fit
        needs only where its residual sum of squares cancels in the Gram expansion. The row must have
        more than ``D`` contexts (one more with a free bias). ``factored``, with the bias fixed, is the
        Cholesky factor of ``H`` computed there too, with its status (``(L, 0)``, or ``(None, k)`` where it failed)."""
        dim = self.dim
        free_bias = center_bias is None
        hessian, rhs = gram[:dim, :dim], gram[:dim, dim + 1]
        if free_bias:
            # Profiling the intercept out: H and A^T t become Schur complements.
            weight_sum, design_sum, target_sum = gram[dim, dim], gram[:dim, dim], gram[dim, dim + 1]
            hessian = hessian - np.outer(design_sum, design_sum) / weight_sum
            rhs = rhs - design_sum * (target_sum / weight_sum)

        if factored is None:
            lower, info, condition = workspace.cholesky(hessian)
        else:
            lower, info, condition = workspace.factored(hessian, factored[0])
        if self.conditioning == "exact":
            if condition > MAX_CONDITION:
                return WordFit(n_contexts, None, np.full(dim, np.nan), np.nan,
                               np.nan if free_bias else center_bias, condition)
            shape = Factor.of_hessian(hessian, lower, pseudo_inverse=False)
        else:
            ill = info != 0 or is_ill_conditioned(hessian, gram[:dim, dim], condition)
            shape = Factor.of_hessian(hessian, lower, pseudo_inverse=ill)
        optimum = shape.solve(rhs)
        vector = optimum if center_vector is None else center_vector
        bias = (target_sum - design_sum @ vector) / weight_sum if free_bias else center_bias
        sigma2 = float(residual_variance(self._weighted_squares_sum(design, gram, vector, bias if free_bias else None),
                                         n_contexts, dim, free_bias))
        delta = vector - optimum
        return WordFit(n_contexts, shape.with_sigma2(sigma2, n_contexts - dim - (1 if free_bias else 0)), optimum,
                       _mahalanobis(float(delta @ hessian @ delta), sigma2), float(bias), condition)

    def weighted_design(self, i: int, center_bias: float, workspace: Workspace) -> np.ndarray:
        """Row ``i``'s weighted design ``[A | s | t]`` with its bias fixed (a view into ``workspace``'s buffer)."""
        start, stop = self.cooccurrence.indptr[i], self.cooccurrence.indptr[i + 1]
        return self._weighted_gram(self.cooccurrence.indices[start:stop], self.cooccurrence.data[start:stop],
                                   center_bias, workspace, None)[0]

    def normal_equations(self, i: int, center_bias: float | None, workspace: Workspace) -> tuple:
        """``(H_i, A_i^T t_i)`` of row ``i`` with its bias fixed: the optimum solves ``H_i w = A_i^T t_i``.

        ``H_i = sum_j f(X_ij) v_j v_j^T`` and ``A_i^T t_i = sum_j f(X_ij) (log X_ij - b_i - c_j) v_j``
        (views into ``workspace``'s buffers, valid until its next use). With ``center_bias`` None, as
        :meth:`row_normal_equations`: the bias profiled out, and the function giving it third.
        """
        start, stop = self.cooccurrence.indptr[i], self.cooccurrence.indptr[i + 1]
        return self.row_normal_equations(self.cooccurrence.indices[start:stop], self.cooccurrence.data[start:stop],
                                         center_bias, workspace)

    def row_normal_equations(self, cols: np.ndarray, values: np.ndarray, center_bias: float | None,
                             workspace: Workspace, weights: np.ndarray | None = None) -> tuple:
        """:meth:`normal_equations` of a row given as (columns, positive values), ``weights`` as in :meth:`fit_row`.

        With ``center_bias`` None the bias is free and profiled out (``H`` and ``A^T t`` become Schur
        complements), and a third element is returned: the function giving the bias that goes with a
        vector, ``(sum_j f_j (log X_ij - c_j) - w . sum_j f_j v_j) / sum_j f_j``.
        """
        _, gram = self._weighted_gram(cols, values, 0.0 if center_bias is None else center_bias, workspace, weights)
        return gram_normal_equations(gram, self.dim, center_bias is None)

    def _weighted_gram(self, cols: np.ndarray, values: np.ndarray, center_bias: float, workspace: Workspace,
                       weights: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """The weighted design ``[A | s | t]`` (``s = sqrt f``, ``t = s (log X - c - b)``) and its Gram matrix.

        One pass over the contexts and one symmetric product give ``H = A^T A`` and every cross
        product the formulas need.
        """
        if weights is None:
            weights = glove_weights(values, self.x_max, self.alpha)
        root_weights = np.sqrt(weights)
        target = root_weights * (np.log(values) - self.context_biases[cols] - center_bias)
        augmented = workspace.design(cols.size)
        _gather_weighted_rows(self.context_vectors, cols, root_weights, target, augmented)
        return augmented, augmented.T @ augmented

    @staticmethod
    def _weighted_squares_sum(design, gram: np.ndarray, vector: np.ndarray, free_bias: float | None) -> float:
        """``sum_j f(X_ij) r_ij^2`` at ``vector``: ``||A w + b s - t||^2`` (``b`` only for a free bias).

        Expanded through the Gram matrix of ``[A | s | t]`` it costs O(D^2) instead of a pass over
        the contexts. The expansion subtracts terms as large as ``t^T t``; where the sum is small
        against them (a fit nearly exact, e.g. at the optimum of a noiseless row) rounding would
        dominate it, so it is computed from the residuals themselves, of the design ``design()`` gives.
        """
        dim = vector.size
        coefficients = np.append(vector, 0.0 if free_bias is None else free_bias)
        block = gram[:dim + 1, :dim + 1]
        terms = (coefficients @ block @ coefficients, -2.0 * (coefficients @ gram[:dim + 1, dim + 1]),
                 gram[dim + 1, dim + 1])
        expanded = sum(terms)
        if expanded > _CANCELLATION_MARGIN * sum(abs(term) for term in terms):
            return float(expanded)
        augmented = design()
        residuals = augmented[:, :dim] @ vector - augmented[:, dim + 1]
        if free_bias is not None:
            residuals += free_bias * augmented[:, dim]
        return float(residuals @ residuals)


class Workspace:
    """Buffers one thread reuses from word to word: the weighted design and the Cholesky factor.

    Parameters
    ----------
    dim : int
        D.
    max_contexts : int
        Rows the design buffer holds at first (it grows for a longer row).
    """

    def __init__(self, dim: int, max_contexts: int):
        self._design = np.empty((max(1, max_contexts), dim + 2))
        self._factor = np.empty((dim, dim))
        self._ints, self._doubles = lapack_buffers(dim)

    def design(self, n_contexts: int) -> np.ndarray:
        """A ``(n_contexts, D + 2)`` buffer for the weighted design ``[A | s | t]``."""
        if self._design.shape[0] < n_contexts:
            self._design = np.empty((n_contexts, self._design.shape[1]))
        return self._design[:n_contexts]

    def cholesky(self, hessian: np.ndarray) -> tuple[np.ndarray, int, float]:
        """``(L, info, condition)``: the lower Cholesky factor of ``H`` (valid in its lower triangle, and
        overwritten by the next call), LAPACK's status, and its estimate of the 1-norm condition
        number (inf where the factorisation failed): see :func:`estimated_condition`."""
        info, condition = cholesky_condition(hessian, self._factor, self._ints, self._doubles)
        return self._factor.T, int(info), float(condition)

    def factored(self, hessian: np.ndarray, lower: np.ndarray | None) -> tuple[np.ndarray, int, float]:
        """:meth:`cholesky`'s ``(L, info, condition)`` for a factor ``lower`` computed elsewhere (None: the
        factorisation failed there), the condition estimated by LAPACK from it."""
        if lower is None:
            return self._factor.T, 1, np.inf
        condition = factor_condition(hessian, lower, self._factor, self._ints, self._doubles)
        return self._factor.T, 0, float(condition)


def estimated_condition(hessian: np.ndarray) -> float:
    """LAPACK's estimate of the 1-norm condition number of a symmetric ``H`` from its Cholesky factor.

    Inf when ``H`` is not numerically positive definite. A lower bound of ``cond_1(H)``, in
    practice within a factor 3 of it; ``cond_1 >= cond_2``.
    """
    return Workspace(hessian.shape[0], 1).cholesky(hessian)[2]


def check_conditioning(conditioning: str) -> str:
    """Validate a conditioning rule."""
    if conditioning not in CONDITIONING_CHOICES:
        raise ValueError(f"conditioning must be one of {CONDITIONING_CHOICES}, got {conditioning!r}")
    return conditioning


def singular_reason(condition: float) -> str:
    """Why a word with enough contexts has no covariance: its ``H_i`` is numerically singular."""
    return (f"a numerically singular H (estimated condition number {condition:.2g} > {MAX_CONDITION:.0e}): "
            "its contexts do not place the vector along every direction; train longer or lower n_components")


def residual_variances(fitter: WordFitter, center_vectors: np.ndarray, center_biases: np.ndarray) -> np.ndarray:
    """``s2_i`` of every word at the trained parameters, vectorised over the nonzeros (NaN if |K_i| <= D)."""
    matrix = fitter.cooccurrence
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    squares = weighted_squared_residuals(matrix, center_vectors, fitter.context_vectors, center_biases,
                                         fitter.context_biases, fitter.x_max, fitter.alpha)
    sums = np.bincount(rows, weights=squares, minlength=matrix.shape[0])
    return residual_variance(sums, fitter.n_contexts(), fitter.dim)


def gram_normal_equations(gram: np.ndarray, dim: int, free_bias: bool) -> tuple:
    """:meth:`WordFitter.row_normal_equations` from the Gram matrix of the row's weighted design ``[A | s | t]``."""
    hessian, rhs = gram[:dim, :dim], gram[:dim, dim + 1]
    if not free_bias:
        return hessian, rhs
    weight_sum, design_sum, target_sum = gram[dim, dim], gram[:dim, dim].copy(), gram[dim, dim + 1]
    profiled = (hessian - np.outer(design_sum, design_sum) / weight_sum,
                rhs - design_sum * (target_sum / weight_sum))
    return (*profiled, lambda vector: float((target_sum - design_sum @ vector) / weight_sum))


def fit_free_rows(fitter: WordFitter) -> list[WordFit]:
    """Every row of ``fitter``'s matrix fitted as a new word: bias free, residuals at the optimum."""
    workspace = fitter.workspace()
    with fitter.compute_threads():
        return [fitter.fit_word(k, None, None, workspace) for k in range(fitter.cooccurrence.shape[0])]


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


def _shift_breaks_cholesky(hessian: np.ndarray, shift: float) -> bool:
    """Whether ``H - shift I`` is not positive definite."""
    return lapack.dpotrf(hessian - np.diag(np.full(hessian.shape[0], shift)), lower=1, clean=0)[1] != 0


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
