"""The cosine and normalisation derivatives against finite differences and their definitions."""

from __future__ import annotations

import numpy as np

from glovev_ext.stats.statistics.cosine import (cosine_pair_gradients, cosine_product_gradient, cosines,
                                                through_normalisation, unit_vector_jacobian)


def central_differences(function, x, step=1e-6):
    return np.stack([(function(x + step * e) - function(x - step * e)) / (2 * step) for e in np.eye(x.size)], axis=-1)


def test_the_unit_vector_jacobian(rng):
    w = rng.normal(size=5)
    np.testing.assert_allclose(unit_vector_jacobian(w), central_differences(lambda x: x / np.linalg.norm(x), w),
                               rtol=1e-7, atol=1e-9)


def test_gradients_through_normalisation_are_the_jacobian_transposed(rng):
    vectors, gradients = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    expected = np.stack([unit_vector_jacobian(w).T @ g for w, g in zip(vectors, gradients)])
    np.testing.assert_allclose(through_normalisation(vectors, gradients), expected, rtol=1e-12)


def test_pair_gradients(rng):
    vectors = rng.normal(size=(3, 4))
    grad_a, grad_b = cosine_pair_gradients(vectors, np.array([0, 2]), np.array([1, 1]))
    for p, (i, j) in enumerate([(0, 1), (2, 1)]):
        def cos_of(a, b):
            return a @ b / (np.linalg.norm(a) * np.linalg.norm(b))
        np.testing.assert_allclose(grad_a[p], central_differences(lambda x: cos_of(x, vectors[j]), vectors[i]),
                                   rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(grad_b[p], central_differences(lambda x: cos_of(vectors[i], x), vectors[j]),
                                   rtol=1e-6, atol=1e-9)


def test_product_gradient_is_the_weighted_sum_of_pair_gradients(rng):
    vectors = rng.normal(size=(6, 4))
    left, right = np.array([0, 1, 1]), np.array([2, 3])
    weights = rng.normal(size=(3, 2))
    expected = np.zeros_like(vectors)
    for p in range(3):
        for q in range(2):
            grad_a, grad_b = cosine_pair_gradients(vectors, left[[p]], right[[q]])
            expected[left[p]] += weights[p, q] * grad_a[0]
            expected[right[q]] += weights[p, q] * grad_b[0]
    np.testing.assert_allclose(cosine_product_gradient(vectors, left, right, weights), expected, rtol=1e-12)
    np.testing.assert_allclose(cosines(vectors[None], left[:2], right)[0],
                               [vectors[0] @ vectors[2] / np.linalg.norm(vectors[0]) / np.linalg.norm(vectors[2]),
                                vectors[1] @ vectors[3] / np.linalg.norm(vectors[1]) / np.linalg.norm(vectors[3])])
