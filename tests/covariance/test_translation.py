"""The translation fixed context vectors leave free: its estimates against stacked least squares, and its removal."""

import numpy as np
import pytest

from glovev_ext.covariance import Factor
from glovev_ext.covariance.prior import posterior_difference
from glovev_ext.covariance.store import CovarianceStoreWriter
from glovev_ext.covariance.translation import (difference_translation, move_design, posterior_move,
                                               remove_translation, translation_against, translation_rows)

DIM = 4


def _spd(generator, scale=1.0):
    root = generator.normal(size=(DIM, DIM))
    return scale * (root @ root.T / DIM + 0.2 * np.eye(DIM))


def _rows(generator, n_rows, precision):
    """Posterior covariances under ``precision``: ``(H + P)^-1`` for random data precisions ``H``."""
    covariances = [np.linalg.inv(_spd(generator, 10.0) + precision) for _ in range(n_rows)]
    return covariances, [Factor.of_covariance(c) for c in covariances]


def _stacked(designs, covariances, targets):
    """Generalised least squares by whitening each row with its Cholesky factor and stacking (lstsq)."""
    blocks, right = [], []
    for design, covariance, target in zip(designs, covariances, targets):
        lower = np.linalg.cholesky(covariance)
        blocks.append(np.linalg.solve(lower, design))
        right.append(np.linalg.solve(lower, target))
    return np.linalg.lstsq(np.vstack(blocks), np.concatenate(right), rcond=None)[0]


def test_the_translation_against_references_is_the_stacked_generalised_least_squares():
    generator = np.random.default_rng(0)
    precision = np.linalg.inv(_spd(generator))
    covariances, factors = _rows(generator, 30, precision)
    references = generator.normal(size=(30, DIM))
    move = generator.normal(size=DIM)
    designs = [np.eye(DIM) - c @ precision for c in covariances]
    vectors = np.array([r + d @ move + generator.multivariate_normal(np.zeros(DIM), c)
                        for r, d, c in zip(references, designs, covariances)])
    estimate = translation_against(vectors, factors, references, precision)
    np.testing.assert_allclose(estimate, _stacked(designs, covariances, vectors - references), rtol=1e-9)
    exact = np.array([r + d @ move for r, d in zip(references, designs)])
    np.testing.assert_allclose(translation_against(exact, factors, references, precision), move, rtol=1e-9)


def test_the_translation_between_two_fits_is_the_stacked_generalised_least_squares():
    generator = np.random.default_rng(1)
    precision = np.linalg.inv(_spd(generator))
    covariances_a, factors_a = _rows(generator, 25, precision)
    covariances_b, factors_b = _rows(generator, 25, precision)
    means_b = generator.normal(size=(25, DIM))
    move = generator.normal(size=DIM)
    designs = [np.eye(DIM) - 0.5 * (a + b) @ precision for a, b in zip(covariances_a, covariances_b)]
    joints = [posterior_difference(fa, fb, precision, mb, mb) for fa, fb, mb in zip(factors_a, factors_b, means_b)]
    noise = np.array([generator.multivariate_normal(np.zeros(DIM), j) for j in joints])
    means_a = means_b + np.array([d @ move for d in designs]) + noise
    estimate = difference_translation(means_a, means_b, factors_a, factors_b, precision)
    stacked_joints = [posterior_difference(fa, fb, precision, ma, mb)
                      for fa, fb, ma, mb in zip(factors_a, factors_b, means_a, means_b)]
    np.testing.assert_allclose(estimate, _stacked(designs, stacked_joints, means_a - means_b), rtol=1e-9)
    exact = means_b + np.array([d @ move for d in designs])
    np.testing.assert_allclose(difference_translation(exact, means_b, factors_a, factors_b, precision), move,
                               rtol=1e-9)


def test_a_move_of_the_data_moves_a_posterior_by_its_covariance_before_widening():
    generator = np.random.default_rng(2)
    precision = np.linalg.inv(_spd(generator))
    covariance = _spd(generator, 0.1)
    factor = Factor.of_covariance(covariance)
    widened = factor.widened(0.3 * generator.normal(size=DIM))
    move = generator.normal(size=DIM)
    expected = (np.eye(DIM) - covariance @ precision) @ move
    for f in (factor, widened):
        np.testing.assert_allclose(move_design(f, precision), np.eye(DIM) - covariance @ precision, atol=1e-12)
        np.testing.assert_allclose(posterior_move(f, move, precision), expected, atol=1e-12)


def test_the_rows_that_estimate_a_translation_are_those_of_largest_total_in_row_order():
    totals = np.array([5.0, 50.0, 1.0, 20.0, 50.0])
    np.testing.assert_array_equal(translation_rows(totals, 3), [1, 3, 4])
    np.testing.assert_array_equal(translation_rows(totals, 10), [0, 1, 2, 3, 4])


def _store(factors):
    with CovarianceStoreWriter(len(factors), DIM, sum(f is not None for f in factors)) as writer:
        for k, factor in enumerate(factors):
            if factor is not None:
                writer.add(k, factor)
    return writer.store


def test_removing_a_translation_estimates_it_on_the_rows_of_largest_total_and_moves_every_fitted_row():
    generator = np.random.default_rng(3)
    precision = np.linalg.inv(_spd(generator))
    covariances, factors = _rows(generator, 12, precision)
    factors[5] = None  # a row without a covariance: neither used nor moved
    store = _store(factors)
    references = generator.normal(size=(12, DIM))
    references[2] = np.nan  # a row without a reference: not used, but moved
    move = generator.normal(size=DIM)
    embedding = references + np.array([(np.eye(DIM) - c @ precision) @ move for c in covariances])
    embedding[2] = generator.normal(size=DIM)
    embedding[7] = np.nan  # not fitted: left as it is
    totals = np.arange(12, 0, -1, dtype=float)  # row 0 the largest
    original = embedding.copy()
    found = remove_translation(embedding, store, references, precision, totals, n_rows=6)
    used = [0, 1, 3, 4, 6, 8]  # the six of largest total with a covariance, a reference and a fit
    np.testing.assert_allclose(found, translation_against(original[used], [store.factor(i) for i in used],
                                                          references[used], precision), rtol=1e-12)
    np.testing.assert_allclose(found, move, rtol=1e-9)
    for i in range(12):
        if i in (5, 7):
            np.testing.assert_array_equal(embedding[i], original[i])
        else:
            np.testing.assert_allclose(embedding[i], original[i] - (np.eye(DIM) - covariances[i] @ precision) @ move,
                                       atol=1e-10)
    np.testing.assert_allclose(embedding[[0, 1, 3, 4, 6, 8, 9, 10, 11]], references[[0, 1, 3, 4, 6, 8, 9, 10, 11]],
                               atol=1e-9)


def test_no_row_to_estimate_a_translation_from_is_refused_by_name():
    with pytest.raises(ValueError, match="no row to estimate the translation from"):
        translation_against([], [], [], np.eye(DIM))
