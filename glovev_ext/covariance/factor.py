"""How one word's covariance is kept: :class:`Factor`, and one subclass per representation.

A covariance is a residual variance ``sigma2`` and a factor ``F``. Each way of keeping ``F`` is a
subclass of :class:`Factor`, with an integer ``kind`` that the store records for the word:

- ``CholeskyFactor`` (``CHOLESKY``): ``F`` is the Cholesky factor of ``H_i`` and
  ``Sigma = sigma2 (F F^T)^{-1}``;
- ``RootFactor`` (``TRANSFORMED``): ``Sigma = sigma2 F F^T`` for any lower-triangular square
  root, e.g. the image of a covariance under a linear map (the unit-normalisation Jacobian) or a
  covariance read from a file;
- :class:`PseudoInverseFactor` (``PSEUDO_INVERSE``): a root whose ``F F^T`` is the Moore-Penrose
  pseudo-inverse of ``H_i`` (the paper's rule for ill-conditioned words: eigenvalues at or below
  ``EIGENVALUE_CUTOFF`` times the largest dropped);
- ``DiagonalRootFactor`` (``DIAGONAL_ROOT``) and ``ThinRootFactor`` (``THIN_ROOT``) keep a
  release's approximate covariances (``glovev_ext.adapters``) as they come, without a D x D triangle:
  ``F`` is the diagonal (D numbers) or a ``(D, rank)`` root stored row by row, ``Sigma = sigma2 F F^T``;
- ``LowRankDiagonalFactor`` (``LOW_RANK_DIAGONAL_ROOT``) keeps a compact approximation of an exact
  covariance (:meth:`Factor.approximated`): its leading ``rank`` eigenpairs as a ``(D, rank)`` root
  ``L`` and the rest of its variances as a diagonal ``d``, ``Sigma = sigma2 (L L^T + diag(d)^2)``.

Triangles are stored packed (BLAS column-major). A factor is built by a named constructor
(:meth:`Factor.of_hessian`, :meth:`~Factor.of_covariance`, :meth:`~Factor.of_diagonal`,
:meth:`~Factor.of_low_rank`, :meth:`~Factor.of_stored` for a store's row), never by its class.
Quadratic forms, solves, maps and the scaling by ``sigma2`` are written once, on :class:`Factor`;
each subclass overrides only what its representation does differently (products with its square
root, its dense form, its variances). A stored kind is turned back into its class
through one table, used by :meth:`Factor.of_stored`, ``stored_size`` and the batched
:func:`variances`. The rank rules live here too: an eigen square root has the rank of the
eigenvalues it keeps; the image of a map has the rank ``numerical_rank`` reads off its
triangular factor.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import ClassVar

import numpy as np
from scipy.linalg import blas, lapack, solve_triangular

UNDEFINED, CHOLESKY, PSEUDO_INVERSE, TRANSFORMED, DIAGONAL_ROOT, THIN_ROOT, LOW_RANK_DIAGONAL_ROOT = range(7)
PENDING = -1  # a lazy store's word whose factor is not computed yet
# How a covariance approximates the word's: read from the GloVe-V authors' release (diagonal or low
# rank), or made compact here (low rank plus diagonal, Factor.approximated).
EXACT, DIAGONAL, LOW_RANK, LOW_RANK_PLUS_DIAGONAL, LOW_RANK_BOUND = 0, 1, 2, 3, 4
APPROXIMATION_NAMES = {EXACT: "exact", DIAGONAL: "diagonal", LOW_RANK: "low rank",
                       LOW_RANK_PLUS_DIAGONAL: "low rank plus diagonal", LOW_RANK_BOUND: "low rank bound"}
APPROXIMATION_FORMS = ("variances", "bound")
KIND_NAMES = {UNDEFINED: "undefined", CHOLESKY: "inverse", PSEUDO_INVERSE: "pseudo-inverse",
              TRANSFORMED: "transformed", DIAGONAL_ROOT: "diagonal", THIN_ROOT: "low rank",
              LOW_RANK_DIAGONAL_ROOT: "low rank plus diagonal", PENDING: "not computed yet"}
EIGENVALUE_CUTOFF = 1e-3
RANK_TOLERANCE = 1e-8
_FEW_COLUMNS = 8  # up to this many gradients, BLAS works on the packed factor without unpacking it


def packed_size(dim: int) -> int:
    """Entries of a packed D x D triangle."""
    return dim * (dim + 1) // 2


@lru_cache(maxsize=8)
def stored_size(kind: int, dim: int, rank: int) -> int:
    """Entries of a factor of ``kind`` (a store row holds ``packed_size(dim)``; compact kinds use its start)."""
    return _representation(kind)._stored_size(dim, rank)


@lru_cache(maxsize=8)
def _packed_positions(dim: int) -> np.ndarray:
    """Flat positions in a C-ordered D x D array of the packed lower triangle's entries (read-only, cached:
    every factor unpacked or packed needs them, and building them cost 5 % of a Monte Carlo coverage study)."""
    rows, cols = np.triu_indices(dim)
    positions = cols * dim + rows
    positions.flags.writeable = False
    return positions


@lru_cache(maxsize=8)
def _packed_positions_transposed(dim: int) -> np.ndarray:
    """Flat positions in the C-ordered transpose of a D x D array of its packed lower triangle's entries.

    Each column of the lower triangle is a contiguous run there (LAPACK's factors are Fortran-ordered).
    """
    rows, cols = np.triu_indices(dim)
    positions = rows * dim + cols
    positions.flags.writeable = False
    return positions


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
        first ``stored_size`` entries of its row (the rest are ignored).
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
        out[words] = _representation(kind)._unit_variances(packed[words], dim, ranks[words])
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
    """One word's covariance ``Sigma``: a residual variance and a factor, kept as one of the subclasses.

    ``Factor`` is not built directly: its named constructors (:meth:`of_hessian`,
    :meth:`of_covariance`, :meth:`of_diagonal`, :meth:`of_low_rank`, :meth:`of_stored`) pick the
    representation. Every operation works on the factor, and ``Sigma`` is formed only by :meth:`dense`.

    Attributes
    ----------
    kind : int
        The representation, as a store records it (a class attribute): ``CHOLESKY``,
        ``PSEUDO_INVERSE``, ``TRANSFORMED``, or a compact ``DIAGONAL_ROOT`` / ``THIN_ROOT``.
    packed : ndarray of float64
        ``F`` packed (column-major lower triangle); the diagonal, or the ``(D, rank)`` root row by
        row, for the compact kinds (``stored_size`` entries).
    dim : int
        D.
    rank : int
        Rank of ``Sigma``: D for an inverse, fewer for a pseudo-inverse or a rank-reducing map; for a
        ``LowRankDiagonalFactor``, the columns of its low-rank part.
    sigma2 : float
        The residual variance (1 for covariances given whole).
    dof : float
        Degrees of freedom of ``sigma2`` (``|K_i| - D``; infinite when the covariance is taken as
        known, e.g. read from a file that does not say).
    understated : int
        Directions the paper's pseudo-inverse set to zero variance (``D - rank`` for that kind, kept
        through maps; 0 otherwise): along them the variance is understated.
    approximation : int
        ``EXACT``, or how the covariance approximates the word's: read from a release, ``DIAGONAL``
        (its variances only) or ``LOW_RANK`` (its leading ``rank`` eigenpairs); made compact by
        :meth:`approximated`, ``LOW_RANK_PLUS_DIAGONAL`` or ``LOW_RANK_BOUND``. Kept through maps.
    unwidened : Factor or None
        For a covariance widened along one direction (:meth:`widened`), the covariance before: the
        part of a posterior's error its prior makes common to every fit under it (docs/method.md
        6.22). None otherwise.
    along : ndarray, shape (D,), or None
        For a widened covariance, the widening ``a`` (``Sigma = unwidened + a a^T``); None otherwise.

    Notes
    -----
    With ``S`` a square root of ``Sigma / sigma2`` (``F^{-T}`` for a ``CholeskyFactor``,
    ``diag(F)`` for a ``DiagonalRootFactor``, ``F`` otherwise), a representation provides
    ``_whiten_vector(g)`` (``S^T g``), ``_colorize_vector(y)`` (``S y``), ``_whiten(G)`` (``S^T G``)
    and ``_colorize(Z)`` (``Z S^T``) or its own :meth:`whiten` and :meth:`transform_normal`,
    ``_square_root()`` (``S``, D x D), ``_dense()`` (``S S^T``), :meth:`lower`, and the class methods
    ``_unit_variances`` (``diag(S S^T)`` of a stack of stored rows) and ``_stored_size``.
    """

    kind: ClassVar[int]
    packed: np.ndarray
    dim: int
    rank: int
    sigma2: float = 1.0
    dof: float = np.inf
    understated: int = 0
    approximation: int = EXACT
    unwidened: Factor | None = field(default=None, repr=False, compare=False)
    along: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not hasattr(self, "kind"):
            raise TypeError(f"{type(self).__name__} keeps no covariance of its own: build a factor with "
                            "Factor.of_hessian, of_covariance, of_diagonal, of_low_rank or of_stored")

    def __setstate__(self, state: dict) -> None:
        # Before the subclasses, every factor was a Factor with its kind as a field; saved lazy
        # stores hold such factors in their cache.
        if "kind" in state:
            object.__setattr__(self, "__class__", _representation(state["kind"]))
            state = {name: value for name, value in state.items() if name != "kind"}
        self.__dict__.update(state)

    @staticmethod
    def of_hessian(hessian: np.ndarray, lower: np.ndarray | None, pseudo_inverse: bool) -> Factor:
        """``H^{-1}`` from its Cholesky factor ``lower``, or (``pseudo_inverse``) the paper's pseudo-inverse.

        ``sigma2`` is 1: scale with :meth:`with_sigma2` once the residual variance is known.
        """
        dim = hessian.shape[0]
        if not pseudo_inverse:
            return CholeskyFactor(pack_lower(lower), dim, dim)
        eigenvalues, eigenvectors = np.linalg.eigh(hessian)
        kept = eigenvalues > EIGENVALUE_CUTOFF * eigenvalues[-1]
        rank = int(kept.sum())
        return PseudoInverseFactor._of_root(eigenvectors[:, kept] / np.sqrt(eigenvalues[kept]), rank,
                                            understated=dim - rank)

    @staticmethod
    def of_covariance(covariance: np.ndarray) -> Factor:
        """A covariance given whole (symmetrised): its Cholesky factor, or an eigen square root if singular.

        Eigenvalues at or below ``D * eps`` times the largest are rounding and are dropped.
        """
        covariance = (covariance + covariance.T) / 2
        dim = covariance.shape[0]
        try:
            return RootFactor(pack_lower(np.linalg.cholesky(covariance)), dim, dim)
        except np.linalg.LinAlgError:
            eigenvalues, eigenvectors = np.linalg.eigh(covariance)
            kept = eigenvalues > dim * np.finfo(float).eps * max(eigenvalues[-1], 0.0)
            return RootFactor._of_root(eigenvectors[:, kept] * np.sqrt(eigenvalues[kept]), int(kept.sum()))

    @staticmethod
    def of_diagonal(variances: np.ndarray) -> Factor:
        """The diagonal approximation ``diag(variances)`` (non-negative), kept as its diagonal root."""
        variances = np.asarray(variances, dtype=np.float64)
        return DiagonalRootFactor(np.sqrt(variances), variances.size, int((variances > 0).sum()),
                                  approximation=DIAGONAL)

    @staticmethod
    def of_low_rank(vectors: np.ndarray, values: np.ndarray) -> Factor:
        """The rank-k approximation ``U diag(s) U^T`` of ``(D, k)`` orthonormal ``vectors`` and ``values`` >= 0.

        Kept as its root ``U diag(sqrt(s))`` (a ``ThinRootFactor``; ``rank`` is its k columns)
        when that is smaller than a triangle, else as the triangle of that root: the D x D
        covariance is never formed.
        """
        values = np.asarray(values, dtype=np.float64)
        root = np.asarray(vectors, dtype=np.float64) * np.sqrt(values)
        dim, k = root.shape
        if dim * k <= packed_size(dim):
            return ThinRootFactor(np.ascontiguousarray(root).ravel(), dim, k, approximation=LOW_RANK)
        return RootFactor._of_root(root, int((values > 0).sum()), approximation=LOW_RANK)

    @staticmethod
    def of_stored(kind: int, row: np.ndarray, dim: int, rank: int, sigma2: float = 1.0, dof: float = np.inf,
                  understated: int = 0, approximation: int = EXACT) -> Factor:
        """The factor a store keeps as ``kind`` in ``row`` (its first ``stored_size`` entries, any float dtype).

        The other parameters are the attributes of the same names.
        """
        representation = _representation(kind)
        packed = np.asarray(row[:representation._stored_size(dim, rank)], dtype=np.float64)
        return representation(packed, dim, rank, sigma2, dof, understated, approximation)

    def approximated(self, keep: int | float, form: str = "variances") -> Factor:
        """A compact approximation: the leading eigenpairs of ``Sigma`` plus a diagonal.

        With ``Sigma / sigma2 = U diag(s) U^T`` (descending ``s``) and its ``k`` leading eigenpairs:

        - ``form="variances"``: ``U_k diag(s_k) U_k^T + diag(d)``, ``d`` the variances the
          eigenpairs leave out. Every variance (and the trace) is exact; the covariances between
          coordinates outside the leading directions are dropped, so a quadratic form ``g^T Sigma g``
          (a delta-method variance) may come out smaller or larger than the exact one.
        - ``form="bound"``: ``U_k diag(s_k - s_{k+1}) U_k^T + s_{k+1} I``, probabilistic PCA's form.
          It dominates ``Sigma`` (every eigenvalue it drops is at most ``s_{k+1}``), so no quadratic
          form is understated: intervals are wider than the exact ones, never narrower.

        Either takes ``D (k + 1)`` numbers instead of a triangle's ``D (D + 1) / 2``.

        Parameters
        ----------
        keep : int or float
            ``k`` (an int, 1 to D), or the share of ``trace(Sigma)`` the ``k`` leading eigenpairs must
            hold (a float in (0, 1]; the smallest such ``k``), as scikit-learn's PCA reads its
            ``n_components``.
        form : {"variances", "bound"}, default="variances"
            What the diagonal holds (above).

        Returns
        -------
        Factor
            A ``LowRankDiagonalFactor`` (``approximation`` ``LOW_RANK_PLUS_DIAGONAL`` or
            ``LOW_RANK_BOUND``; ``sigma2``, ``dof`` and ``understated`` carried over), or this factor
            itself when the approximation would not take fewer numbers than this factor does.
        """
        check_form(form)
        dim = self.dim
        if isinstance(keep, (int, np.integer)) and not isinstance(keep, bool) and \
                dim * (keep + 1) >= self._stored_size(dim, self.rank):
            check_approximation(keep, dim)
            return self  # nothing to save: no eigendecomposition
        values, vectors = np.linalg.eigh(self._dense())
        values, vectors = np.maximum(values[::-1], 0.0), vectors[:, ::-1]
        k = leading_count(values, keep, dim)
        if dim * (k + 1) >= self._stored_size(dim, self.rank):
            return self
        if form == "bound":
            root = vectors[:, :k] * np.sqrt(values[:k] - values[k])
            diagonal = np.full(dim, np.sqrt(values[k]))
            approximation = LOW_RANK_BOUND
        else:
            root = vectors[:, :k] * np.sqrt(values[:k])
            diagonal = np.sqrt(np.maximum(np.einsum("ij,ij->i", vectors[:, k:] * values[k:], vectors[:, k:]), 0.0))
            approximation = LOW_RANK_PLUS_DIAGONAL
        return LowRankDiagonalFactor(np.concatenate([root.ravel(), diagonal]), dim, k, self.sigma2, self.dof,
                                     self.understated, approximation)

    def eigenvalues(self) -> np.ndarray:
        """The eigenvalues of ``Sigma / sigma2``, largest first (negative rounding set to 0)."""
        return np.maximum(np.linalg.eigvalsh(self._dense())[::-1], 0.0)

    def with_sigma2(self, sigma2: float, dof: float | None = None) -> Factor:
        """The same factor with residual variance ``sigma2`` (estimated with ``dof`` degrees of freedom).

        A widened factor (:meth:`widened`) is refused: its widening was made for its own ``sigma2``.

        Parameters
        ----------
        sigma2 : float
            The residual variance.
        dof : float, optional
            Its degrees of freedom (this factor's by default).

        Returns
        -------
        Factor
            A factor of the same representation.
        """
        if self.unwidened is not None:
            raise ValueError("a widened factor cannot take another sigma2: rescale the factor before widening it")
        return replace(self, sigma2=float(sigma2), dof=self.dof if dof is None else float(dof))

    def mapped(self, linear_map: np.ndarray) -> Factor:
        """The covariance of ``M w``: ``M Sigma M^T``, a ``RootFactor`` (rank by ``numerical_rank``)."""
        return RootFactor._of_root(linear_map @ self.square_root() / np.sqrt(self.sigma2), sigma2=self.sigma2,
                                   dof=self.dof, understated=self.understated, approximation=self.approximation)

    def widened(self, along: np.ndarray) -> Factor:
        """``Sigma + a a^T``: this covariance with variance added along one direction, remembering this one.

        Parameters
        ----------
        along : ndarray, shape (D,)
            ``a``: the direction, its length the standard deviation added along it.

        Returns
        -------
        Factor
            A ``RootFactor`` of ``Sigma + a a^T`` (``sigma2``, ``dof``, ``understated`` and ``approximation``
            carried over) whose :attr:`unwidened` is this factor; this factor itself when ``a`` is 0.
        """
        along = np.array(along, dtype=np.float64).reshape(self.dim)
        if not along.any():
            return self
        root = np.hstack([self._square_root(), along[:, None] / np.sqrt(self.sigma2)])
        return RootFactor._of_root(root, sigma2=self.sigma2, dof=self.dof, understated=self.understated,
                                   approximation=self.approximation, unwidened=self, along=along)

    @property
    def before_widening(self) -> Factor:
        """The covariance before :meth:`widened`: :attr:`unwidened` for a widened factor, this factor otherwise."""
        return self if self.unwidened is None else self.unwidened

    def lower(self) -> np.ndarray:
        """``F`` as a D x D lower-triangular matrix (for a compact kind: a triangle with the same ``F F^T``)."""
        raise NotImplementedError

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """``(Sigma / sigma2) rhs``: ``H^{-1} rhs`` (or the pseudo-inverse's) for a Hessian's factor.

        ``S S^T rhs`` for the square root ``S``: on a triangle, two triangular products on the packed factor.
        """
        return self._colorize_vector(self._whiten_vector(np.ascontiguousarray(rhs, dtype=np.float64)))

    def quad_form(self, g: np.ndarray) -> float:
        """``g^T Sigma g`` from the factor, without forming ``Sigma``."""
        y = self._whiten_vector(np.ascontiguousarray(g, dtype=np.float64))
        return float(self.sigma2 * (y @ y))

    def whiten(self, gradients: np.ndarray) -> np.ndarray:
        """``S^T G`` for a ``(D, m)`` ``G`` and a square root ``S`` of ``Sigma``, so ``G^T Sigma G = Y^T Y``.

        ``Y`` has D rows, or ``rank`` for a ``ThinRootFactor``.
        """
        return np.sqrt(self.sigma2) * self._whiten(gradients)

    def transform_normal(self, z: np.ndarray) -> np.ndarray:
        """Map standard normal rows ``z`` (n, D) to draws from ``N(0, Sigma)`` (a ``ThinRootFactor``
        uses the first ``rank`` columns)."""
        return np.sqrt(self.sigma2) * self._colorize(np.asarray(z))

    def square_root(self) -> np.ndarray:
        """A D x D matrix ``S`` with ``Sigma = S S^T``."""
        return np.sqrt(self.sigma2) * self._square_root()

    def variances(self) -> np.ndarray:
        """The diagonal of ``Sigma`` (see :func:`variances`), without forming ``Sigma``."""
        return self.sigma2 * self._unit_variances(self.packed[None], self.dim, np.array([self.rank]))[0]

    def dense(self) -> np.ndarray:
        """``Sigma`` as a D x D matrix."""
        return self.sigma2 * self._dense()


class _TriangularFactor(Factor):
    """A factor kept as a packed D x D lower triangle ``F``."""

    @classmethod
    def _stored_size(cls, dim: int, rank: int) -> int:
        return packed_size(dim)

    def lower(self) -> np.ndarray:
        return unpack_lower(self.packed, self.dim)

    def _whiten(self, gradients: np.ndarray) -> np.ndarray:
        if gradients.shape[1] <= _FEW_COLUMNS:
            return np.column_stack([self._whiten_vector(np.ascontiguousarray(g, dtype=np.float64))
                                    for g in gradients.T])
        return self._whiten_unpacked(gradients)


class CholeskyFactor(_TriangularFactor):
    """``Sigma = sigma2 (F F^T)^{-1}``, ``F`` the Cholesky factor of the word's ``H_i`` (kind ``CHOLESKY``).

    Its square root is ``F^{-T}``: products with it are triangular solves. Built by
    :meth:`Factor.of_hessian`; the attributes are :class:`Factor`'s.
    """

    kind = CHOLESKY

    @classmethod
    def _unit_variances(cls, packed: np.ndarray, dim: int, ranks: np.ndarray) -> np.ndarray:
        # diag((F F^T)^{-1}) holds the squared column norms of F^{-1}
        return (np.linalg.inv(unpack_lower(packed, dim)) ** 2).sum(axis=-2)

    def _whiten_vector(self, g: np.ndarray) -> np.ndarray:
        return blas.dtpsv(self.dim, self.packed, g, lower=1)

    def _colorize_vector(self, y: np.ndarray) -> np.ndarray:
        return blas.dtpsv(self.dim, self.packed, y, lower=1, trans=1)

    def _whiten_unpacked(self, gradients: np.ndarray) -> np.ndarray:
        return solve_triangular(self.lower(), gradients, lower=True, check_finite=False)

    def _inverse_transpose_times(self, matrix: np.ndarray) -> np.ndarray:
        return solve_triangular(self.lower(), matrix, lower=True, trans="T", check_finite=False)

    def _colorize(self, z: np.ndarray) -> np.ndarray:
        return self._inverse_transpose_times(z.T).T

    def _square_root(self) -> np.ndarray:
        return self._inverse_transpose_times(np.eye(self.dim))

    def _dense(self) -> np.ndarray:
        inverse = lapack.dpotri(self.lower(), lower=1)[0]  # the lower triangle; the upper one left as given: 0
        symmetric = inverse + inverse.T
        np.fill_diagonal(symmetric, np.diagonal(inverse))
        return symmetric


class RootFactor(_TriangularFactor):
    """``Sigma = sigma2 F F^T`` for a lower-triangular square root ``F`` (kind ``TRANSFORMED``).

    The image of a covariance under a linear map (:meth:`Factor.mapped`), or a covariance given whole
    (:meth:`Factor.of_covariance`); the attributes are :class:`Factor`'s.
    """

    kind = TRANSFORMED

    @classmethod
    def _of_root(cls, root: np.ndarray, rank: int | None = None, **attributes) -> Factor:
        """The factor ``F`` with ``F F^T = root root^T`` for a ``(D, r)`` root: ``F^T`` is the R of a QR of ``root^T``.

        ``rank`` is known for an eigen square root (its columns); otherwise ``numerical_rank``.
        """
        dim = root.shape[0]
        triangle = np.zeros((dim, dim))
        r = np.linalg.qr(root.T, mode="r")
        triangle[:r.shape[0]] = r
        return cls(pack_lower(triangle.T), dim, numerical_rank(triangle) if rank is None else rank, **attributes)

    @classmethod
    def _unit_variances(cls, packed: np.ndarray, dim: int, ranks: np.ndarray) -> np.ndarray:
        return (unpack_lower(packed, dim) ** 2).sum(axis=-1)

    def _whiten_vector(self, g: np.ndarray) -> np.ndarray:
        return blas.dtpmv(self.dim, self.packed, g, lower=1, trans=1)

    def _colorize_vector(self, y: np.ndarray) -> np.ndarray:
        return blas.dtpmv(self.dim, self.packed, y, lower=1)

    def _whiten_unpacked(self, gradients: np.ndarray) -> np.ndarray:
        return self.lower().T @ gradients

    def _colorize(self, z: np.ndarray) -> np.ndarray:
        return (self.lower() @ z.T).T

    def _square_root(self) -> np.ndarray:
        return self.lower()

    def _dense(self) -> np.ndarray:
        lower = self.lower()
        return lower @ lower.T


class PseudoInverseFactor(RootFactor):
    """A ``RootFactor`` whose ``F F^T`` is the paper's pseudo-inverse of ``H_i`` (kind ``PSEUDO_INVERSE``).

    Eigenvalues of ``H_i`` at or below ``EIGENVALUE_CUTOFF`` times the largest are dropped, so
    ``rank`` is below D and ``understated`` is ``D - rank``. Built by :meth:`Factor.of_hessian`.
    """

    kind = PSEUDO_INVERSE


class _CompactFactor(Factor):
    """A factor kept as a ``(D, c)`` root ``R`` of ``Sigma / sigma2``, in fewer numbers than a triangle."""

    def lower(self) -> np.ndarray:
        return RootFactor._of_root(self._compact_root(), self.rank).lower()

    def _square_root(self) -> np.ndarray:
        root = np.zeros((self.dim, self.dim))
        compact = self._compact_root()
        root[:, :compact.shape[1]] = compact
        return root

    def _dense(self) -> np.ndarray:
        root = self._compact_root()
        return root @ root.T


class DiagonalRootFactor(_CompactFactor):
    """``Sigma = sigma2 diag(F)^2``, a release's diagonal approximation (kind ``DIAGONAL_ROOT``).

    ``packed`` is the diagonal ``F`` (D numbers). Built by :meth:`Factor.of_diagonal`; the
    attributes are :class:`Factor`'s.
    """

    kind = DIAGONAL_ROOT

    @classmethod
    def _stored_size(cls, dim: int, rank: int) -> int:
        return dim

    @classmethod
    def _unit_variances(cls, packed: np.ndarray, dim: int, ranks: np.ndarray) -> np.ndarray:
        return packed[:, :dim] ** 2

    def _compact_root(self) -> np.ndarray:
        return np.diag(self.packed)

    def _whiten_vector(self, g: np.ndarray) -> np.ndarray:
        return self.packed * g

    _colorize_vector = _whiten_vector

    # The scale multiplies before the diagonal, in the order that gave the recorded results.
    def whiten(self, gradients: np.ndarray) -> np.ndarray:
        return np.sqrt(self.sigma2) * self.packed[:, None] * gradients

    def transform_normal(self, z: np.ndarray) -> np.ndarray:
        return np.sqrt(self.sigma2) * np.asarray(z) * self.packed


class ThinRootFactor(_CompactFactor):
    """``Sigma = sigma2 F F^T`` for a ``(D, rank)`` root ``F``, a release's low-rank approximation (kind ``THIN_ROOT``).

    ``packed`` is ``F`` row by row (``D * rank`` numbers); whitened gradients have ``rank`` rows.
    Built by :meth:`Factor.of_low_rank`; the attributes are :class:`Factor`'s.
    """

    kind = THIN_ROOT

    @classmethod
    def _stored_size(cls, dim: int, rank: int) -> int:
        return dim * rank

    @classmethod
    def _unit_variances(cls, packed: np.ndarray, dim: int, ranks: np.ndarray) -> np.ndarray:
        out = np.empty((ranks.size, dim))
        for rank in np.unique(ranks):
            same = np.flatnonzero(ranks == rank)
            out[same] = (packed[same, :dim * rank].reshape(-1, dim, rank) ** 2).sum(axis=-1)
        return out

    def _compact_root(self) -> np.ndarray:
        return self.packed.reshape(self.dim, self.rank)

    def _whiten(self, gradients: np.ndarray) -> np.ndarray:
        return self._compact_root().T @ gradients

    _whiten_vector = _whiten

    def _colorize_vector(self, y: np.ndarray) -> np.ndarray:
        return self._compact_root() @ y

    def _colorize(self, z: np.ndarray) -> np.ndarray:
        return z[:, :self.rank] @ self._compact_root().T


class LowRankDiagonalFactor(_CompactFactor):
    """``Sigma = sigma2 (L L^T + diag(d)^2)``: a ``(D, rank)`` root ``L`` and a diagonal ``d`` (kind
    ``LOW_RANK_DIAGONAL_ROOT``).

    ``packed`` is ``L`` row by row, then ``d`` (``D (rank + 1)`` numbers); its square root is the
    ``(D, rank + D)`` matrix ``[L, diag(d)]``, so whitened gradients have ``rank + D`` rows. Draws use
    the D x D triangle with the same ``F F^T`` (one QR per call). Built by :meth:`Factor.approximated`;
    the attributes are :class:`Factor`'s (``rank`` is the columns of ``L``).
    """

    kind = LOW_RANK_DIAGONAL_ROOT

    @classmethod
    def _stored_size(cls, dim: int, rank: int) -> int:
        return dim * (rank + 1)

    @classmethod
    def _unit_variances(cls, packed: np.ndarray, dim: int, ranks: np.ndarray) -> np.ndarray:
        out = np.empty((ranks.size, dim))
        for rank in np.unique(ranks):
            same = np.flatnonzero(ranks == rank)
            low_rank = (packed[same, :dim * rank].reshape(-1, dim, rank) ** 2).sum(axis=-1)
            out[same] = low_rank + packed[same, dim * rank:dim * (rank + 1)] ** 2
        return out

    def _parts(self) -> tuple[np.ndarray, np.ndarray]:
        """``L`` (D x rank) and ``d`` (D)."""
        split = self.dim * self.rank
        return self.packed[:split].reshape(self.dim, self.rank), self.packed[split:]

    def _compact_root(self) -> np.ndarray:
        low_rank, diagonal = self._parts()
        return np.hstack([low_rank, np.diag(diagonal)])

    def _whiten(self, gradients: np.ndarray) -> np.ndarray:
        low_rank, diagonal = self._parts()
        gradients = np.asarray(gradients, dtype=np.float64)
        if gradients.ndim == 1:
            return np.concatenate([low_rank.T @ gradients, diagonal * gradients])
        return np.vstack([low_rank.T @ gradients, diagonal[:, None] * gradients])

    _whiten_vector = _whiten

    def _colorize_vector(self, y: np.ndarray) -> np.ndarray:
        low_rank, diagonal = self._parts()
        return low_rank @ y[:self.rank] + diagonal * y[self.rank:]

    def _colorize(self, z: np.ndarray) -> np.ndarray:
        return z @ self.lower().T

    def _square_root(self) -> np.ndarray:
        return self.lower()


def check_form(form: object) -> None:
    """Raise unless ``form`` is one of :data:`APPROXIMATION_FORMS`."""
    if form not in APPROXIMATION_FORMS:
        raise ValueError(f"form must be one of {', '.join(map(repr, APPROXIMATION_FORMS))}, got {form!r}")


def check_approximation(keep: object, dim: int) -> None:
    """Raise unless ``keep`` is 1 to ``dim`` eigenpairs (an int) or a share of the variance in (0, 1] (a float)."""
    if isinstance(keep, (int, np.integer)) and not isinstance(keep, bool):
        if not 1 <= keep <= dim:
            raise ValueError(f"an approximation keeps 1 to D = {dim} eigenpairs, got {keep}")
    elif not isinstance(keep, (float, np.floating)) or not 0.0 < keep <= 1.0:
        raise ValueError(f"an approximation keeps an int number of eigenpairs or a float share of the variance in "
                         f"(0, 1], got {keep!r}")


def leading_count(values: np.ndarray, keep: int | float, dim: int) -> int:
    """How many of the descending eigenvalues ``values`` :meth:`Factor.approximated` keeps for ``keep``."""
    check_approximation(keep, dim)
    if isinstance(keep, (int, np.integer)):
        return int(keep)
    total = values.sum()
    if total <= 0:
        return 1
    # the first k whose leading eigenvalues hold the share (rounding cannot push it past D)
    return min(int(np.searchsorted(np.cumsum(values) / total, keep * (1 - 1e-12))) + 1, dim)


_REPRESENTATIONS = {representation.kind: representation for representation in
                    (CholeskyFactor, PseudoInverseFactor, RootFactor, DiagonalRootFactor, ThinRootFactor,
                     LowRankDiagonalFactor)}


def _representation(kind: int) -> type[Factor]:
    """The subclass that keeps factors of ``kind``: the one place a stored kind is read."""
    try:
        return _REPRESENTATIONS[int(kind)]
    except KeyError:
        raise ValueError(f"no covariance factor of kind {KIND_NAMES.get(int(kind), int(kind))}") from None
