"""Point estimates other than the trained vectors: the optimum and alternating sweeps, against lstsq."""

from __future__ import annotations

import numpy as np
import pytest

import glovev_ext
from glovev_ext.glove import glove_weights
from glovev_ext.covariance.refit import alternating_sweeps
from glovev_ext.covariance.wls import WordFitter, residual_variances
from glovev_ext.glove import GloVeParameters, glove_cost

DIM = 8


def lstsq_row(matrix, i, fixed_vectors, fixed_biases, own_bias):
    """The weighted-least-squares vector of row i by numpy, one context at a time."""
    row = matrix.getrow(i)
    root = np.sqrt(glove_weights(row.data))
    design = fixed_vectors[row.indices] * root[:, None]
    target = root * (np.log(row.data) - own_bias - fixed_biases[row.indices])
    return np.linalg.lstsq(design, target, rcond=None)[0]


def test_the_optimum_replaces_each_vector_and_takes_its_residual_variance_there(embedded_cooccurrence, small_model):
    parameters = (small_model.embedding_, small_model.context_embedding_, small_model.bias_, small_model.context_bias_)
    model = glovev_ext.GloVeVEstimator(DIM, pretrained=parameters, point_estimate="optimum", n_jobs=1,
                                       progress=False).fit(embedded_cooccurrence)
    defined = model.covariance_defined_
    np.testing.assert_allclose(model.embedding_[defined], small_model.optimum_[defined], rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(model.embedding_[~defined], small_model.embedding_[~defined])
    fitter = WordFitter(embedded_cooccurrence, model.context_embedding_, model.context_bias_, 100.0, 0.75)
    np.testing.assert_allclose(model.sigma2_[defined],
                               residual_variances(fitter, model.embedding_, model.bias_)[defined], rtol=1e-8)
    assert np.all(model.optimum_distance_[defined] == 0)
    assert glove_cost(embedded_cooccurrence, model.embedding_, *parameters[1:]) < glove_cost(
        embedded_cooccurrence, *parameters)


def test_an_alternating_sweep_solves_centres_then_contexts(embedded_cooccurrence, small_model):
    X = embedded_cooccurrence
    start = GloVeParameters(small_model.embedding_, small_model.context_embedding_, small_model.bias_,
                            small_model.context_bias_, costs=np.empty(0))
    swept = alternating_sweeps(X, start, 1, 100.0, 0.75, "exact", n_jobs=2)
    n_contexts = np.diff(X.indptr)
    for i in np.flatnonzero(n_contexts > DIM)[::500]:
        np.testing.assert_allclose(swept.center_vectors[i], lstsq_row(X, i, start.context_vectors,
                                                                      start.context_biases, start.center_biases[i]),
                                   rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(swept.context_vectors[i], lstsq_row(X.T.tocsr(), i, swept.center_vectors,
                                                                       start.center_biases, start.context_biases[i]),
                                   rtol=1e-7, atol=1e-9)
    short = np.flatnonzero(n_contexts <= DIM)
    np.testing.assert_array_equal(swept.center_vectors[short], start.center_vectors[short])
    model = glovev_ext.GloVeVEstimator(DIM, pretrained=start, point_estimate="alternating", n_sweeps=1, n_jobs=1,
                                       progress=False).fit(X)
    costs = [glove_cost(X, start.center_vectors, start.context_vectors, start.center_biases, start.context_biases),
             glove_cost(X, model.embedding_, model.context_embedding_, model.bias_, model.context_bias_)]
    assert costs[1] < costs[0]
    np.testing.assert_allclose(model.context_embedding_, swept.context_vectors)


def test_point_estimates_are_checked(embedded_cooccurrence):
    with pytest.raises(ValueError, match="point_estimate must be one of"):
        glovev_ext.GloVeVEstimator(4, epochs=1, point_estimate="best", progress=False).fit(embedded_cooccurrence)
    with pytest.raises(ValueError, match="lazy storage does not compute"):
        glovev_ext.GloVeVEstimator(4, epochs=1, point_estimate="optimum", covariance_storage="lazy",
                                   progress=False).fit(embedded_cooccurrence)
