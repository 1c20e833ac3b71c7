"""Whether a symmetric matrix's condition number is within a limit, deciding most matrices without their eigenvalues.

The halves' comparison keeps a word only where the covariance of its difference has a 2-norm
condition number (the ratio of its largest to its smallest eigenvalue magnitude) of at most
``1e10``. Eigenvalues answer that at about 4 ms a word at D = 300, the largest part of a
comparison; two cheaper proofs settle most words first, each with room left for its own
rounding (of order ``D eps`` times the largest eigenvalue), and the eigenvalues decide the rest,
so the answer is always theirs:

- *within the limit*, tried first (most matrices are): a Cholesky factorisation of ``A`` less a
  little more than ``u / limit`` times the identity succeeds, where ``u`` (the smaller of the
  1-norm and the Frobenius norm) bounds the largest eigenvalue magnitude. Then ``A`` is positive
  definite and its smallest eigenvalue is above its largest over the limit;
- *beyond the limit*: a few steps of inverse iteration (an LU factorisation and triangular
  solves) find a unit vector ``x`` with ``||A x||`` below the largest diagonal magnitude over the
  limit. The smallest eigenvalue magnitude is at most ``||A x||``, the largest at least every
  diagonal magnitude.

The two proofs cannot both hold, so the order in which they are tried does not change an answer.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.linalg import lapack

_INVERSE_STEPS = 3


def condition_within(matrix: np.ndarray, limit: float) -> bool:
    """Whether ``symmetric_condition(matrix) <= limit``, for a symmetric ``matrix``."""
    verdict = _factorised_verdict(matrix, limit)
    return symmetric_condition(matrix) <= limit if verdict is None else verdict


def solve_within(matrix: np.ndarray, rhs: np.ndarray, limit: float) -> np.ndarray | None:
    """``matrix^{-1} rhs`` where ``condition_within(matrix, limit)``, else None, for a symmetric ``matrix``.

    A matrix proved within the limit by a Cholesky factorisation is positive definite, and its own Cholesky
    factorisation solves (a third of an LU factorisation's work); the others, by LU.
    """
    if not condition_within(matrix, limit):
        return None
    factor, info = lapack.dpotrf(matrix, lower=1, clean=0)
    if info == 0:
        return lapack.dpotrs(factor, rhs, lower=1)[0]
    return np.linalg.solve(matrix, rhs)


def _factorised_verdict(matrix: np.ndarray, limit: float) -> bool | None:
    """``condition_within``'s answer where one of the two proofs gives it (the Cholesky one first: most matrices
    are within the limit), None where only the eigenvalues can."""
    dim = matrix.shape[0]
    upper = min(float(np.abs(matrix).sum(axis=0).max()), float(np.linalg.norm(matrix)))
    if not np.isfinite(upper) or upper == 0:
        return None
    rounding = 8.0 * dim * np.finfo(np.float64).eps * upper
    shifted = matrix - (1.1 * upper / limit + rounding) * np.eye(dim)
    if lapack.dpotrf(shifted, lower=1, clean=0, overwrite_a=1)[1] == 0:
        return True
    lower = float(np.abs(np.diagonal(matrix)).max())
    if _nearly_annihilated(matrix, lower / limit - rounding):
        return False
    return None


def _nearly_annihilated(matrix: np.ndarray, bound: float) -> bool:
    """Whether inverse iteration from a fixed start finds a unit vector ``x`` with ``1.01 ||matrix x|| < bound``."""
    if bound <= 0:
        return False
    factor, pivots, info = lapack.dgetrf(matrix)
    if info != 0:  # an exact zero pivot: left to the eigenvalues
        return False
    vector = _start(matrix.shape[0])
    for _ in range(_INVERSE_STEPS):
        vector, _ = lapack.dgetrs(factor, pivots, vector)
        norm = float(np.linalg.norm(vector))
        if not np.isfinite(norm) or norm == 0:
            return False
        vector = vector / norm
    return 1.01 * float(np.linalg.norm(matrix @ vector)) < bound


@functools.lru_cache(maxsize=8)
def _start(dim: int) -> np.ndarray:
    """The same start of inverse iteration every time for a size (read only)."""
    start = np.random.default_rng(0).standard_normal(dim)
    start /= np.linalg.norm(start)
    start.flags.writeable = False
    return start


def symmetric_condition(matrix: np.ndarray) -> float:
    """The 2-norm condition number of a symmetric matrix, ``np.linalg.cond``'s, from its eigenvalues (its singular
    values are their magnitudes) for about 60 % of an SVD's time at D = 300."""
    magnitudes = np.abs(np.linalg.eigvalsh(matrix))
    smallest = magnitudes.min()
    return np.inf if smallest == 0 else float(magnitudes.max() / smallest)
