"""Cosine similarity and unit normalisation, with all their derivatives.

Every statistic built on cosines (similarities, neighbours, WEAT, the cosine bias, evaluations)
and the container's ``unit_normalize_all`` take their formulas from here:

- ``d cos(a, b) / d a = b / (|a| |b|) - cos(a, b) a / |a|^2`` (:func:`cosine_pair_gradients`, and
  :func:`cosine_product_gradient` for weighted sums over many pairs);
- the Jacobian of ``w -> w / |w|`` is ``(I - u u^T) / |w|`` with ``u = w / |w|``
  (:func:`unit_vector_jacobian`, and :func:`through_normalisation` for gradients).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..engine.statistic import Statistic

COSINE_BOUNDS = (-1.0, 1.0)


def cosines(vectors: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``cos(w_left[p], w_right[p])`` for index pairs, vectorised over leading axes: ``(..., p)``."""
    a, b = vectors[..., left, :], vectors[..., right, :]
    return np.einsum("...d,...d->...", a, b) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))


def cosine_pair_gradients(vectors: np.ndarray, left: np.ndarray, right: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray]:
    """``d cos(w_left[p], w_right[p]) / d w_left[p]`` and ``/ d w_right[p]``, each ``(p, D)``."""
    a, b = vectors[left], vectors[right]
    norm_a, norm_b = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    cosine = np.einsum("pd,pd->p", a, b) / (norm_a * norm_b)
    return (b / (norm_a * norm_b)[:, None] - (cosine / norm_a**2)[:, None] * a,
            a / (norm_a * norm_b)[:, None] - (cosine / norm_b**2)[:, None] * b)


def cosine_product_gradient(vectors: np.ndarray, left: np.ndarray, right: np.ndarray,
                            weights: np.ndarray) -> np.ndarray:
    """``sum_pq weights[p, q] d cos(w_left[p], w_right[q]) / d W`` as a ``(k, D)`` array.

    Matrix products replace the per-pair terms: the cost is ``(|left| + |right|) D``, not their product.
    """
    a, b = vectors[left], vectors[right]
    norm_a, norm_b = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    unit_a, unit_b = a / norm_a[:, None], b / norm_b[:, None]
    weighted_cosines = weights * (unit_a @ unit_b.T)
    grad_a = (weights @ unit_b) / norm_a[:, None] - (weighted_cosines.sum(axis=1) / norm_a**2)[:, None] * a
    grad_b = (weights.T @ unit_a) / norm_b[:, None] - (weighted_cosines.sum(axis=0) / norm_b**2)[:, None] * b
    return scatter_rows(left, grad_a, vectors.shape[0]) + scatter_rows(right, grad_b, vectors.shape[0])


def unit_vector_jacobian(vector: np.ndarray) -> np.ndarray:
    """The D x D Jacobian of ``w -> w / |w|`` at ``vector``: ``(I - u u^T) / |w|``."""
    norm = np.linalg.norm(vector)
    unit = vector / norm
    return (np.eye(vector.size) - np.outer(unit, unit)) / norm


def through_normalisation(vectors: np.ndarray, gradients: np.ndarray) -> np.ndarray:
    """Gradients with respect to unit vectors ``w / |w|`` carried back to the ``w`` (rows of both).

    Row-wise ``J(w)^T g = (g - u (u . g)) / |w|`` with :func:`unit_vector_jacobian` ``J``.
    """
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / norms
    return (gradients - unit * np.einsum("kd,kd->k", unit, gradients)[:, None]) / norms


def scatter_rows(positions: np.ndarray, rows: np.ndarray, n_rows: int) -> np.ndarray:
    """Sum of ``rows`` by target position, into ``n_rows`` rows (sorted segment sums; ``np.add.at`` is slow)."""
    order = np.argsort(positions, kind="stable")
    ordered = positions[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    total = np.zeros((n_rows, rows.shape[1]))
    if positions.size:
        total[ordered[starts]] = np.add.reduceat(rows[order], starts, axis=0)
    return total


def cosine_statistic(pairs: Sequence[tuple], name: str = "cosine similarity") -> Statistic:
    """Cosine similarities of word pairs, as one statistic with one value per pair."""
    keys = tuple(dict.fromkeys(word for pair in pairs for word in pair))
    position = {key: i for i, key in enumerate(keys)}
    left = np.array([position[a] for a, _ in pairs], dtype=np.int64)
    right = np.array([position[b] for _, b in pairs], dtype=np.int64)

    def gradient(vectors):
        jacobian = np.zeros((len(pairs), *vectors.shape))
        grad_left, grad_right = cosine_pair_gradients(vectors, left, right)
        pair = np.arange(len(pairs))
        jacobian[pair, left] += grad_left
        jacobian[pair, right] += grad_right  # a word on both sides gets both terms, which cancel
        return jacobian

    return Statistic(name, keys, tuple(f"cos({a}, {b})" for a, b in pairs),
                     lambda vectors: cosines(vectors, left, right), gradient, COSINE_BOUNDS)
