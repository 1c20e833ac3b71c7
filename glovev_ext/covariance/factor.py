"""How one word's covariance is kept, and every operation that depends on how it is kept.

A covariance is a residual variance ``sigma2`` and a lower-triangular factor ``F`` (stored packed,
BLAS column-major), in one of three kinds:

- ``CHOLESKY``: ``F`` is the Cholesky factor of ``H_i`` and ``Sigma = sigma2 (F F^T)^{-1}``;
- ``PSEUDO_INVERSE``: ``F F^T`` is the Moore-Penrose pseudo-inverse of ``H_i`` (the paper's rule for
  ill-conditioned words: eigenvalues at or below ``EIGENVALUE_CUTOFF`` times the largest dropped)
  and ``Sigma = sigma2 F F^T``;
- ``TRANSFORMED``: ``Sigma = sigma2 F F^T`` for any other square root, e.g. the image of a
  covariance under a linear map (the unit-normalisation Jacobian) or a covariance read from a file.

Two compact kinds keep a release's approximate covariances (``glovev_ext.adapters``) as they come,
without a D x D triangle: ``DIAGONAL_ROOT`` (``F`` is the diagonal, D numbers) and ``THIN_ROOT``
(``F`` is a ``(D, rank)`` root, ``Sigma = sigma2 F F^T``, stored row by row).

:class:`Factor` is the only place that branches on the kind: quadratic forms, whitening, draws,
square roots, dense matrices and solves all go through it, and it owns the rank rules: an eigen
square root has the rank of the eigenvalues it keeps; the image of a map has the rank
:func:`numerical_rank` reads off its triangular factor.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
from scipy.linalg import blas, lapack, solve_triangular

UNDEFINED, CHOLESKY, PSEUDO_INVERSE, TRANSFORMED, DIAGONAL_ROOT, THIN_ROOT = 0, 1, 2, 3, 4, 5
PENDING = -1  # a lazy store's word whose factor is not computed yet
# How a covariance read from elsewhere approximates the word's covariance (the GloVe-V authors' release):
EXACT, DIAGONAL, LOW_RANK = 0, 1, 2
APPROXIMATION_NAMES = {EXACT: "exact", DIAGONAL: "diagonal", LOW_RANK: "low rank"}
KIND_NAMES = {UNDEFINED: "undefined", CHOLESKY: "inverse", PSEUDO_INVERSE: "pseudo-inverse",
              TRANSFORMED: "transformed", DIAGONAL_ROOT: "diagonal", THIN_ROOT: "low rank",
              PENDING: "not computed yet"}
_COMPACT = (DIAGONAL_ROOT, THIN_ROOT)
EIGENVALUE_CUTOFF = 1e-3
RANK_TOLERANCE = 1e-8
_FEW_COLUMNS = 8  # up to this many gradients, BLAS works on the packed factor without unpacking it


def packed_size(dim: int) -> int:
    """Entries of a packed D x D triangle."""
    return dim * (dim + 1) // 2


@lru_cache(maxsize=8)
def stored_size(kind: int, dim: int, rank: int) -> int:
    """Entries of a factor of ``kind`` (a store row holds ``packed_size(dim)``; compact kinds use its start)."""
    if kind == DIAGONAL_ROOT:
        return dim
    if kind == THIN_ROOT:
        return dim * rank
    return packed_size(dim)


def _packed_positions(dim: int) -> np.ndarray:
    """Flat positions in a C-ordered D x D array of the packed lower triangle's entries."""
    rows, cols = np.triu_indices(dim)
    return cols * dim + rows


@lru_cache(maxsize=8)
def _packed_positions_transposed(dim: int) -> np.ndarray:
    """Flat positions in the C-ordered transpose of a D x D array of its packed lower triangle's entries.

    Each column of the lower triangle is a contiguous run there (LAPACK's factors are Fortran-ordered).
    """
    rows, cols = np.triu_indices(dim)
    return rows * dim + cols


def pack_lower(matrix: np.ndarray) -> np.ndarray:
    """The lower triangle of a square matrix in BLAS column-major packed order."""
    if matrix.flags.f_contiguous and not matrix.flags.c_contiguous:
        return matrix.T.ravel()[_packed_positions_transposed(matrix.shape[0])]
    return np.ascontiguousarray(matrix).ravel()[_packed_positions(matrix.shape[0])]


def unpack_lower(packed: np.ndarray, dim: int) -> np.ndarray:
    """The lower-triangular D x D float64 matrix of a BLAS column-major packed vector.

    A stack of packed vectors ``(..., D (D + 1) / 2)`` gives a stack of matrices ``(..., D, D)``.
    """
    packed = np.asarray(packed)
    full = np.zeros((*packed.shape[:-1], dim * dim))
    full[..., _packed_positions(dim)] = packed
    return full.reshape(*packed.shape[:-1], dim, dim)


def variances(kinds: np.ndarray, packed: np.ndarray, dim: int, ranks: np.ndarray,
              sigma2: np.ndarray) -> np.ndarray:
    """The diagonals of many words' covariances at once, from their factors as a store keeps them.

    Each kind's words go through one batched computation, so no word's ``Sigma`` is formed on its
    own: per-word LAPACK calls on D x D matrices cost far more in call and threading overhead than
    in arithmetic.

    Parameters
    ----------
    kinds, ranks : ndarray of int, shape (n,)
        Each factor's kind (``UNDEFINED`` and ``PENDING`` not allowed) and rank.
    packed : ndarray, shape (n, m)
        Each factor's entries: a packed triangle (``m = D (D + 1) / 2``), or a compact factor in the
        first :func:`stored_size` entries of its row (the rest are ignored).
    dim : int
        D.
    sigma2 : ndarray, shape (n,)
        Residual variances.

    Returns
    -------
    ndarray of float64, shape (n, D)
    """
    kinds = np.asarray(kinds)
    ranks = np.asarray(ranks)
    packed = np.asarray(packed, dtype=np.float64)
    out = np.empty((kinds.size, dim))
    for kind in np.unique(kinds):
        words = np.flatnonzero(kinds == kind)
        if kind == DIAGONAL_ROOT:
            out[words] = packed[words, :dim] ** 2
        elif kind == THIN_ROOT:
            for rank in np.unique(ranks[words]):
                same = words[ranks[words] == rank]
                out[same] = (packed[same, :dim * rank].reshape(-1, dim, rank) ** 2).sum(axis=-1)
        elif kind == CHOLESKY:
            # diag((F F^T)^{-1}) holds the squared column norms of F^{-1}
            out[words] = (np.linalg.inv(unpack_lower(packed[words], dim)) ** 2).sum(axis=-2)
        elif kind in (PSEUDO_INVERSE, TRANSFORMED):
            out[words] = (unpack_lower(packed[words], dim) ** 2).sum(axis=-1)
        else:
            raise ValueError(f"no covariance to take the diagonal of: kind {KIND_NAMES.get(int(kind), int(kind))}")
    return np.asarray(sigma2, dtype=np.float64)[:, None] * out


def numerical_rank(triangle: np.ndarray) -> int:
    """Rank of a triangular square root: its diagonal entries above ``RANK_TOLERANCE`` times the largest.

    Square roots built here have at most a few thousand between their largest and smallest genuine
    directions, so 1e-8 separates those from the directions a map annihilates (rounding, ~1e-16).
    """
    diagonal = np.abs(np.diag(triangle))
    return int((diagonal > RANK_TOLERANCE * diagonal.max()).sum()) if diagonal.size and diagonal.max() > 0 else 0


@dataclass(frozen=True)
class Factor:
    """One word's covariance: ``Sigma = sigma2 (F F^T)^{-1}`` (kind ``CHOLESKY``) or ``sigma2 F F^T``.

    Attributes
    ----------
    kind : int
        ``CHOLESKY``, ``PSEUDO_INVERSE``, ``TRANSFORMED``, or a compact ``DIAGONAL_ROOT`` / ``THIN_ROOT``.
    packed : ndarray of float64
        ``F`` packed (column-major lower triangle); the diagonal, or the ``(D, rank)`` root row by
        row, for the compact kinds (:func:`stored_size` entries).
    dim : int
        D.
    rank : int
        Rank of ``Sigma``: D for an inverse, fewer for a pseudo-inverse or a rank-reducing map.
    sigma2 : float
        The residual variance (1 for covariances given whole).
    dof : float
        Degrees of freedom of ``sigma2`` (``|K_i| - D``; infinite when the covariance is taken as
        known, e.g. read from a file that does not say).
    understated : int
        Directions the paper's pseudo-inverse set to zero variance (``D - rank`` for that kind, kept
        through maps; 0 otherwise): along them the variance is understated.
    approximation : int
        ``EXACT``, or how a covariance read from a release approximates the word's: ``DIAGONAL``
        (its variances only) or ``LOW_RANK`` (its leading ``rank`` eigenpairs); kept through maps.
    """

    kind: int
    packed: np.ndarray
    dim: int
    rank: int
    sigma2: float = 1.0
    dof: float = np.inf
    understated: int = 0
    approximation: int = EXACT

    @classmethod
    def of_hessian(cls, hessian: np.ndarray, lower: np.ndarray | None, pseudo_inverse: bool) -> Factor:
        """``H^{-1}`` from its Cholesky factor ``lower``, or (``pseudo_inverse``) the paper's pseudo-inverse.

        ``sigma2`` is 1: scale with :meth:`with_sigma2` once the residual variance is known.
        """
        dim = hessian.shape[0]
        if not pseudo_inverse:
            return cls(CHOLESKY, pack_lower(lower), dim, dim)
        eigenvalues, eigenvectors = np.linalg.eigh(hessian)
        kept = eigenvalues > EIGENVALUE_CUTOFF * eigenvalues[-1]
        rank = int(kept.sum())
        root = cls._of_root(eigenvectors[:, kept] / np.sqrt(eigenvalues[kept]), PSEUDO_INVERSE, 1.0, rank)
        return replace(root, understated=dim - rank)

    @classmethod
    def of_covariance(cls, covariance: np.ndarray) -> Factor:
        """A covariance given whole (symmetrised): its Cholesky factor, or an eigen square root if singular.

        Eigenvalues at or below ``D * eps`` times the largest are rounding and are dropped.
        """
        covariance = (covariance + covariance.T) / 2
        dim = covariance.shape[0]
        try:
            return cls(TRANSFORMED, pack_lower(np.linalg.cholesky(covariance)), dim, dim)
        except np.linalg.LinAlgError:
            eigenvalues, eigenvectors = np.linalg.eigh(covariance)
            kept = eigenvalues > dim * np.finfo(float).eps * max(eigenvalues[-1], 0.0)
            return cls._of_root(eigenvectors[:, kept] * np.sqrt(eigenvalues[kept]), TRANSFORMED, 1.0, int(kept.sum()))

    @classmethod
    def of_diagonal(cls, variances: np.ndarray) -> Factor:
        """The diagonal approximation ``diag(variances)`` (non-negative), kept as its diagonal root."""
        variances = np.asarray(variances, dtype=np.float64)
        return cls(DIAGONAL_ROOT, np.sqrt(variances), variances.size, int((variances > 0).sum()),
                   approximation=DIAGONAL)

    @classmethod
    def of_low_rank(cls, vectors: np.ndarray, values: np.ndarray) -> Factor:
        """The rank-k approximation ``U diag(s) U^T`` of ``(D, k)`` orthonormal ``vectors`` and ``values`` >= 0.

        Kept as its root ``U diag(sqrt(s))`` (kind ``THIN_ROOT``; ``rank`` is its k columns) when that
        is smaller than a triangle, else as the triangle of that root: the D x D covariance is never formed.
        """
        values = np.asarray(values, dtype=np.float64)
        root = np.asarray(vectors, dtype=np.float64) * np.sqrt(values)
        dim, k = root.shape
        if dim * k <= packed_size(dim):
            return cls(THIN_ROOT, np.ascontiguousarray(root).ravel(), dim, k, approximation=LOW_RANK)
        return replace(cls._of_root(root, TRANSFORMED, 1.0, int((values > 0).sum())), approximation=LOW_RANK)

    @classmethod
    def _of_root(cls, root: np.ndarray, kind: int, sigma2: float, rank: int | None = None) -> Factor:
        """The factor ``F`` with ``F F^T = root root^T`` for a ``(D, r)`` root: ``F^T`` is the R of a QR of ``root^T``.

        ``rank`` is known for an eigen square root (its columns); otherwise :func:`numerical_rank`.
        """
        dim = root.shape[0]
        triangle = np.zeros((dim, dim))
        r = np.linalg.qr(root.T, mode="r")
        triangle[:r.shape[0]] = r
        return cls(kind, pack_lower(triangle.T), dim, numerical_rank(triangle) if rank is None else rank, sigma2)

    def with_sigma2(self, sigma2: float, dof: float | None = None) -> Factor:
        """The same factor with residual variance ``sigma2`` (estimated with ``dof`` degrees of freedom)."""
        return replace(self, sigma2=float(sigma2), dof=self.dof if dof is None else float(dof))

    def mapped(self, linear_map: np.ndarray) -> Factor:
        """The covariance of ``M w``: ``M Sigma M^T``, of kind ``TRANSFORMED`` (rank by :func:`numerical_rank`)."""
        image = self._of_root(linear_map @ self.square_root() / np.sqrt(self.sigma2), TRANSFORMED, self.sigma2)
        return replace(image, dof=self.dof, understated=self.understated, approximation=self.approximation)

    def lower(self) -> np.ndarray:
        """``F`` as a D x D lower-triangular matrix (for a compact kind: a triangle with the same ``F F^T``)."""
        if self.kind in _COMPACT:
            return self._of_root(self._compact_root(), TRANSFORMED, 1.0, self.rank).lower()
        return unpack_lower(self.packed, self.dim)

    def _compact_root(self) -> np.ndarray:
        """The ``(D, c)`` root of a compact kind (the diagonal as a D x D matrix)."""
        if self.kind == DIAGONAL_ROOT:
            return np.diag(self.packed)
        return self.packed.reshape(self.dim, self.rank)

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """``(Sigma / sigma2) rhs``: ``H^{-1} rhs`` (or the pseudo-inverse's) for a Hessian's factor.

        Two triangular products on the packed factor: ``F^{-T} F^{-1} rhs`` or ``F F^T rhs``.
        """
        y = self._packed_whiten(np.ascontiguousarray(rhs, dtype=np.float64))
        if self.kind == DIAGONAL_ROOT:
            return self.packed * y
        if self.kind == THIN_ROOT:
            return self.packed.reshape(self.dim, self.rank) @ y
        if self.kind == CHOLESKY:
            return blas.dtpsv(self.dim, self.packed, y, lower=1, trans=1)
        return blas.dtpmv(self.dim, self.packed, y, lower=1)

    def quad_form(self, g: np.ndarray) -> float:
        """``g^T Sigma g`` from the factor, without forming ``Sigma``."""
        y = self._packed_whiten(np.ascontiguousarray(g, dtype=np.float64))
        return float(self.sigma2 * (y @ y))

    def whiten(self, gradients: np.ndarray) -> np.ndarray:
        """``S^T G`` for a ``(D, m)`` ``G`` and a square root ``S`` of ``Sigma``, so ``G^T Sigma G = Y^T Y``.

        ``Y`` has D rows, or ``rank`` for a ``THIN_ROOT``.
        """
        if self.kind == DIAGONAL_ROOT:
            return np.sqrt(self.sigma2) * self.packed[:, None] * gradients
        if self.kind == THIN_ROOT:
            return np.sqrt(self.sigma2) * (self.packed.reshape(self.dim, self.rank).T @ gradients)
        if gradients.shape[1] <= _FEW_COLUMNS:
            columns = [self._packed_whiten(np.ascontiguousarray(g, dtype=np.float64)) for g in gradients.T]
            return np.sqrt(self.sigma2) * np.column_stack(columns)
        if self.kind == CHOLESKY:
            return np.sqrt(self.sigma2) * solve_triangular(self.lower(), gradients, lower=True, check_finite=False)
        return np.sqrt(self.sigma2) * (self.lower().T @ gradients)

    def _packed_whiten(self, g: np.ndarray) -> np.ndarray:
        """``F^{-1} g`` (CHOLESKY) or ``F^T g`` (the others) by BLAS on the packed triangle."""
        if self.kind == DIAGONAL_ROOT:
            return self.packed * g
        if self.kind == THIN_ROOT:
            return self.packed.reshape(self.dim, self.rank).T @ g
        if self.kind == CHOLESKY:
            return blas.dtpsv(self.dim, self.packed, g, lower=1)
        return blas.dtpmv(self.dim, self.packed, g, lower=1, trans=1)

    def transform_normal(self, z: np.ndarray) -> np.ndarray:
        """Map standard normal rows ``z`` (n, D) to draws from ``N(0, Sigma)`` (a ``THIN_ROOT`` uses the first
        ``rank`` columns)."""
        if self.kind == DIAGONAL_ROOT:
            return np.sqrt(self.sigma2) * np.asarray(z) * self.packed
        if self.kind == THIN_ROOT:
            return np.sqrt(self.sigma2) * (np.asarray(z)[:, :self.rank] @ self.packed.reshape(self.dim, self.rank).T)
        if self.kind == CHOLESKY:
            draws = solve_triangular(self.lower(), np.asarray(z).T, lower=True, trans="T", check_finite=False)
        else:
            draws = self.lower() @ np.asarray(z).T
        return np.sqrt(self.sigma2) * draws.T

    def square_root(self) -> np.ndarray:
        """A D x D matrix ``S`` with ``Sigma = S S^T``."""
        if self.kind in _COMPACT:
            root = np.zeros((self.dim, self.dim))
            compact = self._compact_root()
            root[:, :compact.shape[1]] = compact
            return np.sqrt(self.sigma2) * root
        lower = self.lower()
        if self.kind == CHOLESKY:
            lower = solve_triangular(lower, np.eye(self.dim), lower=True, trans="T", check_finite=False)
        return np.sqrt(self.sigma2) * lower

    def variances(self) -> np.ndarray:
        """The diagonal of ``Sigma`` (see :func:`variances`), without forming ``Sigma``."""
        return variances(np.array([self.kind]), self.packed[None], self.dim, np.array([self.rank]),
                         np.array([self.sigma2]))[0]

    def dense(self) -> np.ndarray:
        """``Sigma`` as a D x D matrix."""
        if self.kind in _COMPACT:
            root = self._compact_root()
            return self.sigma2 * (root @ root.T)
        lower = self.lower()
        if self.kind == CHOLESKY:
            inverse = lapack.dpotri(lower, lower=1)[0]
            inverse = np.tril(inverse) + np.tril(inverse, -1).T
        else:
            inverse = lower @ lower.T
        return self.sigma2 * inverse
