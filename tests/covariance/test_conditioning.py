"""The default conditioning rule: the exact inverse up to a condition number of 1e10, no covariance above it."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

import glovev_ext
from glovev_ext import UndefinedCovarianceError
from glovev_ext.covariance.factor import CHOLESKY, PSEUDO_INVERSE
from glovev_ext.covariance.wls import MAX_CONDITION, WordFitter


def designed_fitter(rng, eigenvalues, conditioning="exact", n=200):
    """One word whose H (all weights 1) is ``Q diag(eigenvalues) Q^T`` for a random orthogonal Q."""
    dim = eigenvalues.size
    basis, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    raw = rng.normal(size=(n, dim))
    whitened = raw @ np.linalg.inv(np.linalg.cholesky(raw.T @ raw)).T
    contexts = whitened @ np.diag(np.sqrt(eigenvalues)) @ basis.T
    X = sp.csr_matrix((np.full(n, 500.0), (np.zeros(n, int), np.arange(n))), shape=(n, n))
    return WordFitter(X, contexts, np.zeros(n), 100.0, 0.75, conditioning), basis


@pytest.mark.parametrize("condition", [1e6, 1e8, 1.5e9])
def test_the_inverse_is_accurate_for_statistics_up_to_the_threshold(rng, condition):
    """Quadratic forms of the inverse, along the strongest, the weakest and random directions, to 1e-5.

    The threshold is on LAPACK's estimate of cond_1, which exceeds cond_2 by a factor of a few at
    D = 50: the last Hessian's estimate lies just below the threshold.
    """
    dim = 50
    eigenvalues = np.geomspace(1.0, 1.0 / condition, dim)
    fitter, basis = designed_fitter(rng, eigenvalues)
    fit = fitter.fit_word(0, 0.0, np.zeros(dim))
    assert fit.kind == CHOLESKY and fit.condition <= MAX_CONDITION
    assert np.linalg.cond(fitter.context_vectors.T @ fitter.context_vectors, 1) / 3 <= fit.condition
    exact = basis @ np.diag(1.0 / eigenvalues) @ basis.T  # the inverse of the H designed
    directions = np.column_stack([basis[:, 0], basis[:, -1], rng.normal(size=(dim, 8))])
    for g in directions.T:
        relative = abs(fit.factor.solve(g) @ g - g @ exact @ g) / (g @ exact @ g)
        assert relative < 1e-5, (condition, relative)


def test_a_numerically_singular_word_gets_no_covariance_and_a_reason(rng):
    eigenvalues = np.geomspace(1.0, 1e-13, 20)
    fit = designed_fitter(rng, eigenvalues)[0].fit_word(0, 0.0, np.zeros(20))
    assert fit.factor is None and fit.condition > MAX_CONDITION
    assert np.isnan(fit.optimum).all()
    paper = designed_fitter(rng, eigenvalues, conditioning="paper")[0].fit_word(0, 0.0, np.zeros(20))
    assert paper.kind == PSEUDO_INVERSE and paper.factor.understated == 20 - paper.rank > 0


def test_conditioning_is_checked():
    with pytest.raises(ValueError, match="conditioning must be one of"):
        WordFitter(sp.csr_matrix((3, 3)), np.zeros((3, 2)), np.zeros(3), 100.0, 0.75, "pinv")


def test_the_estimator_records_condition_numbers_and_names_singular_words(embedded_cooccurrence):
    """D = 100 after 3 epochs: a few H_i singular; the exact rule names them, the paper's rule keeps them."""
    settings = {"n_components": 100, "epochs": 3, "random_state": 0, "n_jobs": 1, "point_estimate": "trained",
                "progress": False}
    exact = glovev_ext.GloVeVEstimator(**settings).fit(embedded_cooccurrence)
    paper = glovev_ext.GloVeVEstimator(conditioning="paper", **settings).fit(embedded_cooccurrence)
    enough = exact.n_contexts_ > 100
    np.testing.assert_array_equal(exact.condition_number_[enough], paper.condition_number_[enough])
    assert np.isnan(exact.condition_number_[~enough]).all()
    singular = enough & ~exact.covariance_defined_
    np.testing.assert_array_equal(exact.singular_, singular)
    assert singular.any() and (exact.condition_number_[singular] > MAX_CONDITION).all()
    assert (exact.condition_number_[exact.covariance_defined_] <= MAX_CONDITION).all()
    assert not exact.pseudo_inverse_.any() and paper.pseudo_inverse_.any()
    np.testing.assert_array_equal(paper.covariance_defined_, enough)
    # a few defined words against numpy's 1-norm condition number of H_i, built here
    X = embedded_cooccurrence
    for i in np.flatnonzero(exact.covariance_defined_)[::400]:
        row = X.getrow(i)
        contexts = exact.context_embedding_[row.indices]
        hessian = (contexts * glovev_ext.glove.glove_weights(row.data)[:, None]).T @ contexts
        true = np.linalg.cond(hessian, 1)
        assert true / 3 <= exact.condition_number_[i] <= true * (1 + 1e-8)
    kv = glovev_ext.KeyedVectorsWithVariance.from_estimator(exact)
    word = X.words[np.flatnonzero(singular)[0]]
    assert "numerically singular H" in kv.unusable_reason(word)
    with pytest.raises(UndefinedCovarianceError, match=re.escape(f"word {word!r}") + ".*numerically singular"):
        kv.covariance(word)
    lazy = glovev_ext.GloVeVEstimator(covariance_storage="lazy", **settings).fit(embedded_cooccurrence)
    lazy_kv = glovev_ext.KeyedVectorsWithVariance.from_estimator(lazy)
    assert "numerically singular H" in lazy_kv.unusable_reason(word)
    first = np.flatnonzero(singular)[0]
    assert not lazy.covariance_.defined[first] and lazy.condition_number_[first] == exact.condition_number_[first]
