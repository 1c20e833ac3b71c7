"""The covariance pass with its Gram matrices and Cholesky factors on a PyTorch device (the optional GPU path), run
here with ``device="cpu"``: the Gram matrices against the design written out, the factors against their matrices,
and every result of the pass against the CPU path's for the same trained parameters."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from glovev_ext import GloVeVEstimator
from glovev_ext.covariance.device import DeviceContexts, design_grams
from glovev_ext.covariance.wls import WordFitter
from glovev_ext.glove import glove_weights, train_glove

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def trained(embedded_cooccurrence):
    return train_glove(embedded_cooccurrence, 8, epochs=8, random_state=0, progress=False)


def test_the_gram_matrices_are_those_of_the_weighted_designs_written_out(embedded_cooccurrence, trained):
    X = embedded_cooccurrence
    fitter = WordFitter(X, trained.context_vectors, trained.context_biases, 100.0, 0.75)
    n_contexts = fitter.n_contexts()
    # the most frequent words, some of middling frequency and some with a handful of contexts: several padded groups
    words = np.concatenate([np.arange(5), np.flatnonzero((n_contexts > 40) & (n_contexts < 60))[:5],
                            np.flatnonzero(n_contexts == 3)[:3]])
    grams, factors, failed = design_grams(fitter, words, trained.center_biases[words],
                                          DeviceContexts.of(trained.context_vectors, "cpu"))
    assert not failed.any()
    for gram, factor in zip(grams, factors):  # each factor is the lower Cholesky factor of its H
        np.testing.assert_array_equal(factor, np.tril(factor))
        np.testing.assert_allclose(factor @ factor.T, gram[:8, :8], rtol=1e-12, atol=1e-12 * np.abs(gram).max())
    for gram, i in zip(grams, words):
        row = X.getrow(i)
        cols, values = row.indices, row.data
        root = np.sqrt(glove_weights(values))
        design = np.column_stack([root[:, None] * trained.context_vectors[cols], root,
                                  root * (np.log(values) - trained.context_biases[cols] - trained.center_biases[i])])
        np.testing.assert_allclose(gram, design.T @ design, rtol=1e-12, atol=1e-12 * np.abs(design.T @ design).max())


@pytest.mark.parametrize("point_estimate", ["trained", "optimum"])
def test_the_pass_on_a_device_gives_the_cpu_paths_results(embedded_cooccurrence, trained, point_estimate):
    parameters = (trained.center_vectors, trained.context_vectors, trained.center_biases, trained.context_biases)
    fits = [GloVeVEstimator(8, pretrained=parameters, point_estimate=point_estimate, n_jobs=2, progress=False,
                            **options).fit(embedded_cooccurrence) for options in ({}, {"device": "cpu"})]
    cpu, device = fits
    np.testing.assert_array_equal(device.covariance_defined_, cpu.covariance_defined_)
    np.testing.assert_array_equal(device.singular_, cpu.singular_)
    defined = cpu.covariance_defined_
    assert defined.sum() > 1000
    np.testing.assert_allclose(device.sigma2_[defined], cpu.sigma2_[defined], rtol=1e-10)
    np.testing.assert_allclose(device.condition_number_[defined], cpu.condition_number_[defined], rtol=1e-6)
    np.testing.assert_allclose(device.embedding_, cpu.embedding_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(device.optimum_distance_[defined], cpu.optimum_distance_[defined], rtol=1e-8,
                               atol=1e-12)
    # every covariance to 1e-10 of its largest entry, where H_i is not near singular (cond < 1e6: rounding in the
    # Gram matrix grows by the condition number in the inverse)
    for i in np.flatnonzero(defined & (cpu.condition_number_ < 1e6)):
        expected = cpu.covariance_[i]
        np.testing.assert_allclose(device.covariance_[i], expected, rtol=0, atol=1e-10 * np.abs(expected).max())


def test_a_row_its_contexts_fit_exactly_takes_its_residuals_from_the_design(rng):
    """Noiseless co-occurrences at their own parameters: the Gram expansion of the residual sum cancels, and the fit
    computes it from the design itself (on the CPU path and the device path alike)."""
    n_words, dim = 40, 3
    W, C = rng.normal(0, 0.5, (n_words, dim)), rng.normal(0, 0.5, (n_words, dim))
    b, c = rng.normal(2.0, 0.3, n_words), rng.normal(2.0, 0.3, n_words)
    X = sp.csr_matrix(np.exp(W @ C.T + b[:, None] + c[None, :]))
    fits = [GloVeVEstimator(dim, pretrained=(W, C, b, c), point_estimate="trained", n_jobs=1, progress=False,
                            **options).fit(X) for options in ({}, {"device": "cpu"})]
    assert np.all(fits[0].sigma2_ < 1e-25)
    np.testing.assert_allclose(fits[1].sigma2_, fits[0].sigma2_, rtol=0, atol=1e-25)


def test_a_singular_h_gets_no_covariance_on_either_path(rng):
    """Row 0's contexts all have a zero first coordinate: its H is singular, and its factorisation fails on the
    device as on the CPU (or leaves a condition number above the limit); either way it gets no covariance."""
    n_words, dim = 40, 3
    W, C = rng.normal(0, 0.5, (n_words, dim)), rng.normal(0, 0.5, (n_words, dim))
    C[:20, 0] = 0.0
    b, c = rng.normal(2.0, 0.3, n_words), rng.normal(2.0, 0.3, n_words)
    dense = np.exp(W @ C.T + b[:, None] + c[None, :] + rng.normal(0, 0.1, (n_words, n_words)))
    dense[0, 20:] = 0.0
    X = sp.csr_matrix(dense)
    fits = [GloVeVEstimator(dim, pretrained=(W, C, b, c), point_estimate="trained", n_jobs=1, progress=False,
                            **options).fit(X) for options in ({}, {"device": "cpu"})]
    assert fits[0].singular_[0] and fits[1].singular_[0]
    np.testing.assert_array_equal(fits[1].covariance_defined_, fits[0].covariance_defined_)
    assert fits[1].covariance_defined_[1:].all()


def test_the_pass_on_a_device_holds_pytorch_to_one_thread_and_gives_its_threads_back(embedded_cooccurrence, trained,
                                                                                     monkeypatch):
    import torch

    from glovev_ext.covariance import passes
    seen, compute = [], passes.design_grams

    def recording(*args):
        seen.append(torch.get_num_threads())
        return compute(*args)

    monkeypatch.setattr(passes, "design_grams", recording)
    before = torch.get_num_threads()
    parameters = (trained.center_vectors, trained.context_vectors, trained.center_biases, trained.context_biases)
    GloVeVEstimator(8, pretrained=parameters, point_estimate="trained", n_jobs=2, device="cpu",
                    progress=False).fit(embedded_cooccurrence)
    assert seen and set(seen) == {1}
    assert torch.get_num_threads() == before
