"""The GloVe objective against its definition, entry by entry."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from glovev_ext.glove import glove_cost, glove_weights
from glovev_ext.glove.objective import glove_residuals, weighted_squared_residuals


def test_weights_follow_the_definition():
    values = np.array([0.5, 10.0, 99.999, 100.0, 250.0])
    expected = [(x / 100.0) ** 0.75 if x < 100.0 else 1.0 for x in values]
    np.testing.assert_allclose(glove_weights(values), expected, rtol=1e-15)
    assert glove_weights(np.array([3.0]), x_max=10.0, alpha=0.5)[0] == pytest.approx(math.sqrt(0.3))


@pytest.fixture
def parameters(rng):
    n_words, dim = 7, 3
    X = sp.random(n_words, n_words, density=0.6, random_state=1, data_rvs=lambda n: rng.uniform(0.2, 300, n)).tocsr()
    return (X, rng.normal(size=(n_words, dim)), rng.normal(size=(n_words, dim)), rng.normal(size=n_words),
            rng.normal(size=n_words))


def test_residuals_and_cost_equal_a_loop_over_the_entries(parameters):
    X, W, C, b, c = parameters
    loop_squares, loop_residuals = [], []
    for i, j in zip(*X.nonzero()):
        residual = W[i] @ C[j] + b[i] + c[j] - math.log(X[i, j])
        loop_residuals.append(residual)
        loop_squares.append(glove_weights(np.array([X[i, j]]))[0] * residual**2)
    rows, cols = X.nonzero()
    products = np.einsum("ij,ij->i", W[rows], C[cols])
    np.testing.assert_allclose(glove_residuals(products, b[rows], c[cols], np.asarray(X[rows, cols]).ravel()),
                               loop_residuals, rtol=1e-13)
    np.testing.assert_allclose(weighted_squared_residuals(X, W, C, b, c), loop_squares, rtol=1e-13)
    assert glove_cost(X, W, C, b, c) == pytest.approx(sum(loop_squares), rel=1e-13)


def test_one_centre_bias_broadcasts_against_its_contexts(parameters):
    X, W, C, b, c = parameters
    cols, values = X[2].indices, X[2].data
    np.testing.assert_allclose(glove_residuals(C[cols] @ W[2], b[2], c[cols], values),
                               [W[2] @ C[j] + b[2] + c[j] - math.log(x) for j, x in zip(cols, values)], rtol=1e-13)


def test_explicit_zeros_are_not_entries(parameters):
    X, W, C, b, c = parameters
    with_zero = X.copy()
    with_zero.data[0] = 0.0
    without = with_zero.copy()
    without.eliminate_zeros()
    assert glove_cost(with_zero, W, C, b, c) == pytest.approx(glove_cost(without, W, C, b, c), rel=1e-14)
