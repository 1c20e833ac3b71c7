"""The halves' comparison's condition check: the eigenvalues' answer, most matrices decided without them."""

from __future__ import annotations

import numpy as np
import pytest

from glovev_ext.covariance import _condition
from glovev_ext.covariance._condition import condition_within, solve_within, symmetric_condition

LIMIT = 1e10


def test_the_condition_of_a_symmetric_matrix_is_numpys_from_its_eigenvalues():
    rng = np.random.default_rng(5)
    for dim in (1, 3, 40):
        basis = np.linalg.qr(rng.standard_normal((dim, dim)))[0]
        for spectrum in (rng.uniform(1, 2, dim), np.logspace(0, -12, dim), np.linspace(-1.0, 2.0, dim) + 0.05):
            matrix = (basis * spectrum) @ basis.T
            matrix = (matrix + matrix.T) / 2
            assert symmetric_condition(matrix) == pytest.approx(np.linalg.cond(matrix), rel=1e-4)
    assert symmetric_condition(np.diag([1.0, 0.0])) == np.inf


def test_the_check_answers_as_the_eigenvalues_do_and_needs_them_only_near_the_limit(monkeypatch):
    """Matrices whose condition is just within or beyond the limit, far within or beyond, indefinite, singular or
    zero, at several scales and sizes: always the eigenvalues' answer; far from the limit (and from what float64
    resolves), without them."""
    rng, needed = np.random.default_rng(8), []
    monkeypatch.setattr(_condition, "symmetric_condition",
                        lambda matrix: needed.append(1) or symmetric_condition(matrix))
    for dim in (2, 30, 120):
        basis = np.linalg.qr(rng.standard_normal((dim, dim)))[0]
        for condition in (1.0, 1e3, 1e9, LIMIT * 0.999, LIMIT * 1.001, 1e12, 1e14, 1e17, np.inf):
            spectrum = (np.logspace(0, -np.log10(condition), dim) if np.isfinite(condition)
                        else np.r_[np.ones(dim - 1), 0.0])
            for scale, sign in ((1.0, 1.0), (1e-8, 1.0), (1e6, 1.0), (1.0, -1.0)):
                signed = spectrum * np.where(np.arange(dim) == dim // 2, sign, 1.0)  # one negative: indefinite
                matrix = (basis * signed * scale) @ basis.T
                matrix = (matrix + matrix.T) / 2
                needed.clear()
                answer = condition_within(matrix, LIMIT)
                assert answer == (np.linalg.cond(matrix) <= LIMIT), (dim, condition, scale, sign)
                if sign > 0 and (condition <= 1e3 or 1e12 <= condition <= 1e14):
                    assert not needed, (dim, condition, scale)  # decided by a factorisation alone
    assert not condition_within(np.zeros((3, 3)), LIMIT)
    with np.errstate(invalid="ignore"):
        assert condition_within(np.full((2, 2), np.nan), LIMIT) == (symmetric_condition(np.full((2, 2), np.nan))
                                                                    <= LIMIT)
        assert not condition_within(np.full((2, 2), np.nan), LIMIT)  # NaN is never within (not only the same path)


def test_a_solve_within_the_limit_is_numpys_and_none_beyond_it():
    """Positive definite (solved by Cholesky), indefinite (by LU) and beyond the limit, at several sizes."""
    rng = np.random.default_rng(11)
    for dim in (1, 5, 60):
        basis = np.linalg.qr(rng.standard_normal((dim, dim)))[0]
        rhs = rng.standard_normal(dim)
        for condition in (1.0, 1e4, 1e9, 1e12, np.inf):
            spectrum = (np.logspace(0, -np.log10(condition), dim) if np.isfinite(condition)
                        else np.r_[np.ones(dim - 1), 0.0])
            for sign in (1.0, -1.0):
                signed = spectrum * np.where(np.arange(dim) == dim // 2, sign, 1.0)
                matrix = (basis * signed) @ basis.T
                matrix = (matrix + matrix.T) / 2
                solved = solve_within(matrix, rhs, LIMIT)
                if np.linalg.cond(matrix) <= LIMIT:
                    np.testing.assert_allclose(matrix @ solved, rhs, rtol=0, atol=1e-8 * max(condition, 1.0))
                    np.testing.assert_allclose(solved, np.linalg.solve(matrix, rhs), rtol=1e-6)
                else:
                    assert solved is None, (dim, condition, sign)
