"""Statistic: smooth functions of a few words' vectors, with their gradients; the cosine formulas.

A statistic declares the words it uses (``keys``) and computes ``m`` numbers from their vectors,
vectorised over leading axes so Monte Carlo draws evaluate in batches. Its gradient with
respect to each word's vector feeds the delta method; a word in several roles simply has one
position in ``keys``, so its gradients from every role add up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Statistic:
    """``m`` functions of the vectors of ``keys``.

    Attributes
    ----------
    name : str
        What the statistic is.
    keys : tuple
        The words it uses, each once.
    names : tuple of str
        Name of each of the ``m`` values.
    function : callable
        ``(..., k, D) -> (..., m)``: the values for vectors stacked along the last two axes.
    gradient : callable or None
        ``(k, D) -> (m, k, D)``: derivatives at one point; None means central finite differences.
    """

    name: str
    keys: tuple
    names: tuple
    function: Callable[[np.ndarray], np.ndarray]
    gradient: Callable[[np.ndarray], np.ndarray] | None = None

    def __post_init__(self):
        if len(set(self.keys)) != len(self.keys):
            raise ValueError("a statistic's keys must be distinct")

    def value(self, vectors: np.ndarray) -> np.ndarray:
        """The ``m`` values at one point (``vectors`` of shape ``(k, D)``)."""
        return np.asarray(self.function(vectors), dtype=np.float64).reshape(len(self.names))

    def jacobian(self, vectors: np.ndarray) -> np.ndarray:
        """``(m, k, D)`` derivatives: analytic when available, else central finite differences."""
        if self.gradient is not None:
            return np.asarray(self.gradient(vectors), dtype=np.float64).reshape(len(self.names), *vectors.shape)
        return numerical_jacobian(self.function, vectors, len(self.names))


def numerical_jacobian(function: Callable[[np.ndarray], np.ndarray], vectors: np.ndarray, n_values: int,
                       relative_step: float = 1e-5) -> np.ndarray:
    """Central finite differences of a vectorised function, all perturbations in one batch."""
    k, dim = vectors.shape
    steps = relative_step * np.maximum(1.0, np.linalg.norm(vectors, axis=1))
    perturbed = np.repeat(vectors[None], 2 * k * dim, axis=0).reshape(2, k, dim, k, dim)
    for i in range(k):
        for d in range(dim):
            perturbed[0, i, d, i, d] += steps[i]
            perturbed[1, i, d, i, d] -= steps[i]
    values = np.asarray(function(perturbed.reshape(2 * k * dim, k, dim)), dtype=np.float64)
    values = values.reshape(2, k, dim, n_values)
    return np.moveaxis((values[0] - values[1]) / (2 * steps[:, None, None]), -1, 0)


def stack(statistics: Sequence[Statistic], name: str | None = None) -> Statistic:
    """Several statistics as one, over the union of their words (for joint covariances and contrasts)."""
    keys = tuple(dict.fromkeys(key for statistic in statistics for key in statistic.keys))
    position = {key: i for i, key in enumerate(keys)}
    maps = [np.array([position[key] for key in statistic.keys], dtype=np.int64) for statistic in statistics]
    names = tuple(f"{statistic.name}: {row}" if len(statistic.names) > 1 else statistic.name
                  for statistic in statistics for row in statistic.names)

    def function(vectors):
        return np.concatenate([np.asarray(s.function(vectors[..., m, :]), dtype=np.float64).reshape(
            *vectors.shape[:-2], len(s.names)) for s, m in zip(statistics, maps)], axis=-1)

    def gradient(vectors):
        jacobian = np.zeros((len(names), *vectors.shape))
        row = 0
        for statistic, m in zip(statistics, maps):
            part = statistic.jacobian(vectors[m])
            jacobian[row:row + part.shape[0], m] = part
            row += part.shape[0]
        return jacobian

    return Statistic(name or " & ".join(s.name for s in statistics), keys, names, function, gradient)


def cosines(vectors: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``cos(w_left[p], w_right[p])`` for index pairs, vectorised over leading axes: ``(..., p)``."""
    a, b = vectors[..., left, :], vectors[..., right, :]
    return np.einsum("...d,...d->...", a, b) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))


def cosine_pair_gradients(vectors: np.ndarray, left: np.ndarray, right: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray]:
    """``d cos(w_left[p], w_right[p]) / d w_left[p]`` and ``/ d w_right[p]``, each ``(p, D)``.

    ``d cos(a, b) / d a = b / (|a| |b|) - cos(a, b) a / |a|^2``, and symmetrically for b.
    """
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
                     lambda vectors: cosines(vectors, left, right), gradient)
