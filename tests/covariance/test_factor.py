"""Factor: every operation of every kind against the dense covariance it stands for."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from glovev_ext.covariance import Factor
from glovev_ext.covariance.factor import (CHOLESKY, DIAGONAL_ROOT, EIGENVALUE_CUTOFF, PSEUDO_INVERSE, THIN_ROOT,
                                          TRANSFORMED, CholeskyFactor, DiagonalRootFactor, PseudoInverseFactor,
                                          RootFactor, ThinRootFactor, numerical_rank, pack_lower, packed_size,
                                          stored_size, unpack_lower)

DIM = 6


def hessian(rng, condition=50.0):
    basis, _ = np.linalg.qr(rng.normal(size=(DIM, DIM)))
    return basis @ np.diag(np.geomspace(1.0, 1.0 / condition, DIM)) @ basis.T


def factors_and_covariances(rng):
    """One factor of each kind with the dense covariance it must equal, computed independently."""
    h = hessian(rng)
    ill = hessian(rng, condition=1e7)
    values, vectors = np.linalg.eigh(ill)
    kept = values > EIGENVALUE_CUTOFF * values[-1]
    pseudo_inverse = vectors[:, kept] @ np.diag(1 / values[kept]) @ vectors[:, kept].T
    given = np.linalg.inv(hessian(rng, condition=20.0))
    cholesky = Factor.of_hessian(h, np.linalg.cholesky(h), pseudo_inverse=False)
    return [(cholesky.with_sigma2(1.7), 1.7 * np.linalg.inv(h)),
            (Factor.of_hessian(ill, None, pseudo_inverse=True).with_sigma2(0.3), 0.3 * pseudo_inverse),
            (Factor.of_covariance(given), given)]


def test_kinds_and_ranks(rng):
    (cholesky, _), (pinv, _), (given, _) = factors_and_covariances(rng)
    assert (cholesky.kind, cholesky.rank) == (CHOLESKY, DIM)
    assert pinv.kind == PSEUDO_INVERSE and pinv.rank == 3  # eigenvalues 1 ... 1e-7: three above 1e-3
    assert (given.kind, given.rank) == (TRANSFORMED, DIM)


@pytest.mark.parametrize("kind", [0, 1, 2])
def test_every_operation_equals_the_dense_covariance(rng, kind):
    factor, covariance = factors_and_covariances(rng)[kind]
    np.testing.assert_allclose(factor.dense(), covariance, rtol=1e-10, atol=1e-12 * np.abs(covariance).max())
    np.testing.assert_allclose(factor.variances(), np.diag(covariance), rtol=1e-10)
    g = rng.normal(size=DIM)
    assert factor.quad_form(g) == pytest.approx(g @ covariance @ g, rel=1e-10)
    for columns in (3, 20):  # BLAS on the packed factor, and the unpacked path
        gradients = rng.normal(size=(DIM, columns))
        whitened = factor.whiten(gradients)
        np.testing.assert_allclose(whitened.T @ whitened, gradients.T @ covariance @ gradients, rtol=1e-9,
                                   atol=1e-12 * np.abs(covariance).max())
    root = factor.square_root()
    np.testing.assert_allclose(root @ root.T, covariance, rtol=1e-9, atol=1e-12 * np.abs(covariance).max())
    z = rng.normal(size=(4, DIM))
    np.testing.assert_allclose(factor.transform_normal(z) @ factor.transform_normal(z).T,
                               z @ root.T @ root @ z.T, rtol=1e-9, atol=1e-12)
    rhs = rng.normal(size=DIM)
    np.testing.assert_allclose(factor.solve(rhs), covariance @ rhs / factor.sigma2, rtol=1e-9,
                               atol=1e-12 * np.abs(covariance).max())


def test_draws_have_the_covariance(rng):
    factor, covariance = factors_and_covariances(rng)[0]
    draws = factor.transform_normal(rng.standard_normal((40000, DIM)))
    standard_error = np.sqrt((np.outer(np.diag(covariance), np.diag(covariance)) + covariance**2) / 40000)
    assert (np.abs(np.cov(draws.T) - covariance) <= 5 * standard_error).all()


def test_a_map_gives_its_image_and_loses_the_rank_it_annihilates(rng):
    factor, covariance = factors_and_covariances(rng)[0]
    unit = rng.normal(size=DIM)
    unit /= np.linalg.norm(unit)
    projection = np.eye(DIM) - np.outer(unit, unit)
    mapped = factor.mapped(projection)
    assert mapped.kind == TRANSFORMED and mapped.rank == DIM - 1 and mapped.sigma2 == factor.sigma2
    np.testing.assert_allclose(mapped.dense(), projection @ covariance @ projection.T, rtol=1e-9, atol=1e-13)


def test_a_singular_covariance_keeps_its_rank(rng):
    root = rng.normal(size=(DIM, 2))
    factor = Factor.of_covariance(root @ root.T)
    assert factor.rank == 2
    np.testing.assert_allclose(factor.dense(), root @ root.T, rtol=1e-9, atol=1e-12)


def test_numerical_rank_reads_the_diagonal():
    assert numerical_rank(np.diag([3.0, 1e-3, 1e-12])) == 2
    assert numerical_rank(np.zeros((3, 3))) == 0


@pytest.mark.parametrize("order", ["C", "F"])
def test_packing_reads_either_memory_order_column_by_column(rng, order):
    """The packed lower triangle is BLAS's column-major order whatever the input's layout."""
    matrix = np.asarray(rng.normal(size=(7, 7)), order=order)
    expected = np.concatenate([matrix[j:, j] for j in range(7)])
    np.testing.assert_array_equal(pack_lower(matrix), expected)
    np.testing.assert_array_equal(unpack_lower(pack_lower(matrix), 7), np.tril(matrix))


def test_unpacking_a_stack_unpacks_each_triangle(rng):
    matrices = rng.normal(size=(2, 3, 5, 5))
    packed = np.stack([[pack_lower(m) for m in row] for row in matrices])
    np.testing.assert_array_equal(unpack_lower(packed, 5), np.tril(matrices))


@pytest.mark.parametrize("form", ["diagonal", "thin"])
def test_compact_factors_agree_with_the_dense_covariance_they_hold(form):
    rng = np.random.default_rng(11)
    dim, k = 7, 3
    if form == "diagonal":
        variances = rng.uniform(0.1, 2.0, dim)
        factor = Factor.of_diagonal(variances).with_sigma2(1.7)
        covariance = 1.7 * np.diag(variances)
        assert factor.kind == DIAGONAL_ROOT and factor.packed.size == dim
    else:
        vectors = np.linalg.qr(rng.standard_normal((dim, k)))[0]
        values = rng.uniform(0.2, 3.0, k)
        factor = Factor.of_low_rank(vectors, values).with_sigma2(1.7)
        covariance = 1.7 * (vectors * values) @ vectors.T
        assert factor.kind == THIN_ROOT and factor.packed.size == dim * k and factor.rank == k
    gradients = rng.standard_normal((dim, 12))
    np.testing.assert_allclose(factor.dense(), covariance, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(factor.variances(), np.diag(covariance), rtol=1e-12)
    whitened = factor.whiten(gradients)
    np.testing.assert_allclose(whitened.T @ whitened, gradients.T @ covariance @ gradients, rtol=1e-12, atol=1e-13)
    assert factor.quad_form(gradients[:, 0]) == pytest.approx(gradients[:, 0] @ covariance @ gradients[:, 0],
                                                              rel=1e-12)
    np.testing.assert_allclose(factor.solve(gradients[:, 0]), covariance @ gradients[:, 0] / 1.7, rtol=1e-12)
    root = factor.square_root()
    np.testing.assert_allclose(root @ root.T, covariance, rtol=1e-12, atol=1e-14)
    lower = factor.lower()
    np.testing.assert_allclose(1.7 * lower @ lower.T, covariance, rtol=1e-10, atol=1e-13)
    assert np.allclose(lower, np.tril(lower))
    z = rng.standard_normal((20000, dim))
    draws = factor.transform_normal(z)
    np.testing.assert_allclose(draws, z @ root.T, rtol=1e-12, atol=1e-13)  # the root S with S S^T = Sigma
    linear_map = rng.standard_normal((dim, dim))
    mapped = factor.mapped(linear_map)
    np.testing.assert_allclose(mapped.dense(), linear_map @ covariance @ linear_map.T, rtol=1e-10, atol=1e-12)
    assert mapped.approximation == factor.approximation


def one_of_each_representation(rng):
    vectors = np.linalg.qr(rng.standard_normal((DIM, 2)))[0]
    return [factor for factor, _ in factors_and_covariances(rng)] + [
        Factor.of_diagonal(rng.uniform(0.1, 2.0, DIM)).with_sigma2(0.8),
        Factor.of_low_rank(vectors, rng.uniform(0.2, 3.0, 2)).with_sigma2(1.3)]


def test_each_constructor_picks_the_representation_of_its_kind(rng):
    expected = [(CholeskyFactor, CHOLESKY), (PseudoInverseFactor, PSEUDO_INVERSE), (RootFactor, TRANSFORMED),
                (DiagonalRootFactor, DIAGONAL_ROOT), (ThinRootFactor, THIN_ROOT)]
    assert [(type(factor), factor.kind) for factor in one_of_each_representation(rng)] == expected
    assert isinstance(Factor.of_hessian(hessian(rng, 1e7), None, pseudo_inverse=True), RootFactor)


def test_a_factor_is_built_by_its_constructors_not_by_the_base_class(rng):
    with pytest.raises(TypeError, match="of_stored"):
        Factor(np.ones(packed_size(DIM)), DIM, DIM)


def test_a_stored_row_gives_back_the_same_factor(rng):
    for factor in one_of_each_representation(rng):
        row = np.zeros(packed_size(DIM), dtype=np.float32)
        row[:factor.packed.size] = factor.packed
        assert stored_size(factor.kind, DIM, factor.rank) == factor.packed.size
        stored = Factor.of_stored(factor.kind, row, DIM, factor.rank, factor.sigma2, factor.dof, factor.understated,
                                  factor.approximation)
        assert type(stored) is type(factor) and stored.packed.dtype == np.float64
        np.testing.assert_allclose(stored.dense(), factor.dense(), rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="undefined"):
        Factor.of_stored(0, row, DIM, DIM)


def pickled_as_before_the_subclasses(factor) -> bytes:
    """``factor`` as pickled when every factor was a Factor with its kind as a field (saved lazy stores cache some)."""
    state = pickle.dumps({"kind": factor.kind, **vars(factor)}, protocol=2)
    return (state[:2] + pickle.GLOBAL + b"glovev_ext.covariance.factor\nFactor\n" + pickle.EMPTY_TUPLE + pickle.NEWOBJ
            + state[2:-1] + pickle.BUILD + pickle.STOP)


def test_factors_pickled_now_and_before_the_subclasses_load_as_their_representation(rng):
    for factor in one_of_each_representation(rng):
        for loaded in (pickle.loads(pickle.dumps(factor)), pickle.loads(pickled_as_before_the_subclasses(factor))):
            assert type(loaded) is type(factor) and "kind" not in vars(loaded)
            np.testing.assert_array_equal(loaded.dense(), factor.dense())
            assert (loaded.rank, loaded.sigma2, loaded.understated) == (factor.rank, factor.sigma2, factor.understated)
