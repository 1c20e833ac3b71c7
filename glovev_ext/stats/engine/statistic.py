"""Statistic: smooth functions of a few words' vectors, with their gradients.

A statistic declares the words it uses (``keys``) and computes ``m`` numbers from their vectors,
vectorised over leading axes so Monte Carlo draws evaluate in batches. Its gradient with
respect to each word's vector feeds the delta method; a word in several roles simply has one
position in ``keys``, so its gradients from every role add up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .intervals import bounds_of


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
    bounds : array-like of shape (m, 2) or (2,), or None
        The range each value can attain (a cosine's ``(-1, 1)``); intervals and tests then respect
        it (``glovev_ext.stats.engine.intervals``). None: unbounded.
    """

    name: str
    keys: tuple
    names: tuple
    function: Callable[[np.ndarray], np.ndarray]
    gradient: Callable[[np.ndarray], np.ndarray] | None = None
    bounds: np.ndarray | tuple | None = None

    def __post_init__(self):
        if len(set(self.keys)) != len(self.keys):
            raise ValueError("a statistic's keys must be distinct")
        bounds = bounds_of(self.bounds, len(self.names))
        if not (bounds[:, 0] < bounds[:, 1]).all():
            raise ValueError(f"{self.name}: each lower bound must be below its upper bound, got {bounds.tolist()}")
        object.__setattr__(self, "bounds", bounds)

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

    return Statistic(name or " & ".join(s.name for s in statistics), keys, names, function, gradient,
                     np.vstack([s.bounds for s in statistics]))


def coordinate_statistic(key, dim: int) -> Statistic:
    """The D coordinates of one word's vector, as a statistic (their intervals use t with ``|K| - D`` df)."""
    def gradient(vectors):
        return np.eye(dim)[:, None, :]

    return Statistic(f"coordinates of {key}", (key,), tuple(f"{key}[{d}]" for d in range(dim)),
                     lambda vectors: vectors[..., 0, :], gradient)
