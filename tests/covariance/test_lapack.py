"""The compiled Cholesky factorisation and condition estimate against scipy's LAPACK wrappers and numpy."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from scipy.linalg import lapack

from glovev_ext.covariance.passes import _prefaulted_empty
from glovev_ext.covariance.wls import Workspace, estimated_condition


def spd(rng, dim, condition):
    basis, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    hessian = basis @ np.diag(np.geomspace(1.0, 1.0 / condition, dim)) @ basis.T
    return (hessian + hessian.T) / 2  # exactly symmetric, as a Gram matrix is


def scipy_reference(hessian):
    lower, info = lapack.dpotrf(hessian, lower=1, clean=1)
    if info != 0:
        return lower, info, np.inf
    rcond, _ = lapack.dpocon(lower, np.abs(hessian).sum(axis=0).max(), uplo="L")
    return lower, info, 1.0 / rcond


@pytest.mark.parametrize("condition", [3.0, 1e4, 1e9])
def test_factor_and_condition_equal_scipys(rng, condition):
    hessian = spd(rng, 40, condition)
    lower, info, estimate = Workspace(40, 1).cholesky(hessian)
    expected_lower, expected_info, expected = scipy_reference(hessian)
    assert info == expected_info == 0
    np.testing.assert_allclose(np.tril(lower), expected_lower, rtol=0, atol=1e-13 * np.abs(expected_lower).max())
    np.testing.assert_allclose(estimate, expected, rtol=1e-10)
    true = np.linalg.cond(hessian, 1)
    assert true / 3 <= estimate <= true * (1 + 1e-8)


def test_a_strided_view_is_read_as_the_matrix_it_shows(rng):
    """The pass hands over the top-left block of a larger Gram matrix, not a contiguous array."""
    design = rng.normal(size=(60, 12))
    gram = design.T @ design
    view = gram[:10, :10]
    lower, info, estimate = Workspace(10, 1).cholesky(view)
    np.testing.assert_allclose(np.tril(lower) @ np.tril(lower).T, view, rtol=1e-12)
    assert estimate == pytest.approx(scipy_reference(np.ascontiguousarray(view))[2], rel=1e-10)


def test_a_matrix_that_is_not_positive_definite_reports_its_minor(rng):
    hessian = spd(rng, 15, 10.0)
    hessian[6, :] = hessian[:, 6] = 0.0
    _, info, estimate = Workspace(15, 1).cholesky(hessian)
    assert info == scipy_reference(hessian)[1] == 7 and estimate == np.inf
    assert estimated_condition(-np.eye(3)) == np.inf


def test_threads_with_their_own_workspaces_agree_with_one_thread(rng):
    hessians = [spd(rng, 50, 10.0 ** k) for k in range(1, 9)]
    expected = [estimated_condition(h) for h in hessians]

    def run(chunk):
        workspace = Workspace(50, 1)
        return [workspace.cholesky(hessians[k])[2] for k in chunk]

    with ThreadPoolExecutor(2) as pool:
        results = [value for part in pool.map(run, [range(0, 8, 2), range(1, 8, 2)]) for value in part]
    assert sorted(results) == sorted(expected)


@pytest.mark.parametrize("shape", [(3, 5), (0, 5)])
def test_prefaulted_arrays_are_writable_arrays_of_the_shape_asked(shape):
    array = _prefaulted_empty(shape, np.dtype(np.float32))
    assert array.shape == shape and array.dtype == np.float32 and array.flags.writeable
    array[:] = 2.0
    assert array.sum() == 2.0 * shape[0] * shape[1]
