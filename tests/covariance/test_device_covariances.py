"""The covariance pass with its Gram matrices and Cholesky factors on a PyTorch device (the optional GPU path), run
here with ``device="cpu"``: the Gram matrices against the design written out, the factors against their matrices,
and every result of the pass against the CPU path's for the same trained parameters."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from glovev_ext import GloVeVEstimator
from glovev_ext.covariance.device import DeviceContexts, DeviceWordFitter, design_grams
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


@pytest.mark.parametrize("point_estimate", ["trained", "posterior"])
def test_the_passes_on_a_device_hold_pytorch_to_one_thread_and_give_its_threads_back(frequent_part, monkeypatch,
                                                                                    point_estimate):
    import torch

    from glovev_ext.covariance import device
    seen, compute = [], device.design_grams

    def recording(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return compute(*args, **kwargs)

    monkeypatch.setattr(device, "design_grams", recording)
    torch.set_num_threads(2)
    X, parameters = frequent_part
    GloVeVEstimator(8, pretrained=parameters, point_estimate=point_estimate, n_jobs=2, device="cpu",
                    progress=False).fit(X)
    assert seen and set(seen) == {1}
    assert torch.get_num_threads() == 2


@pytest.fixture(scope="module")
def frequent_part(embedded_cooccurrence, trained):
    """The co-occurrences among the 1,200 most frequent words, and their trained parameters."""
    n = 1200
    X = sp.csr_matrix(embedded_cooccurrence[:n][:, :n])
    return X, (trained.center_vectors[:n], trained.context_vectors[:n], trained.center_biases[:n],
               trained.context_biases[:n])


def _assert_same_covariances(device_store, cpu_store, rows, tolerance=1e-10):
    for i in rows:
        expected = cpu_store[i]
        np.testing.assert_allclose(device_store[i], expected, rtol=0, atol=tolerance * np.abs(expected).max())


def test_the_default_recipe_on_a_device_gives_the_cpu_paths_results(frequent_part, rng):
    """The posterior recipe with its sweep and the noise scale from two halves: the prior's pass, the sweep's two
    passes, both halves' bias-free posteriors and the final posteriors all take their Gram matrices from the device;
    then new rows' conditional fits and vectors."""
    X, parameters = frequent_part
    share = rng.uniform(0.3, 0.7, X.nnz)
    halves = tuple(sp.csr_matrix((X.data * part, X.indices, X.indptr), shape=X.shape) for part in (share, 1 - share))
    cpu, device = (GloVeVEstimator(8, pretrained=parameters, n_jobs=2, progress=False, **options).fit(X, halves=halves)
                   for options in ({}, {"device": "cpu"}))
    assert not cpu.noise_scale_.is_identity
    for kind in ("own", "pooled"):
        curves = [getattr(model.noise_scale_, kind) for model in (cpu, device)]
        np.testing.assert_array_equal(curves[1].log_totals, curves[0].log_totals)
        np.testing.assert_array_equal(curves[1].n_words, curves[0].n_words)
        np.testing.assert_allclose(curves[1].factors, curves[0].factors, rtol=1e-9)
    np.testing.assert_allclose(device.prior_.covariance, cpu.prior_.covariance, rtol=1e-10)
    np.testing.assert_allclose(device.embedding_, cpu.embedding_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(device.context_embedding_, cpu.context_embedding_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(device.sigma2_, cpu.sigma2_, rtol=1e-10)
    np.testing.assert_allclose(device.prior_share_, cpu.prior_share_, rtol=0, atol=1e-10)
    _assert_same_covariances(device.covariance_, cpu.covariance_, range(X.shape[0]))
    rows = halves[0][:200]
    fits = [model.conditional_fit(rows) for model in (cpu, device)]
    np.testing.assert_allclose(fits[1].embedding, fits[0].embedding, rtol=0, atol=1e-10)
    np.testing.assert_allclose(fits[1].sigma2, fits[0].sigma2, rtol=1e-10)
    _assert_same_covariances(fits[1].covariance, fits[0].covariance, np.flatnonzero(fits[0].covariance.defined))
    np.testing.assert_allclose(device.transform(rows), cpu.transform(rows), rtol=0, atol=1e-10)


def test_the_alternating_sweeps_and_new_rows_on_a_device_give_the_cpu_paths_results(frequent_part):
    X, parameters = frequent_part
    cpu, device = (GloVeVEstimator(8, pretrained=parameters, point_estimate="alternating", n_sweeps=1, n_jobs=2,
                                   progress=False, **options).fit(X) for options in ({}, {"device": "cpu"}))
    np.testing.assert_array_equal(device.covariance_defined_, cpu.covariance_defined_)
    np.testing.assert_allclose(device.embedding_, cpu.embedding_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(device.context_embedding_, cpu.context_embedding_, rtol=0, atol=1e-9)
    well = np.flatnonzero(cpu.covariance_defined_ & (cpu.condition_number_ < 1e6))
    _assert_same_covariances(device.covariance_, cpu.covariance_, well)
    rows = X[:100]
    fits = [model.conditional_fit(rows) for model in (cpu, device)]
    np.testing.assert_allclose(fits[1].embedding, fits[0].embedding, rtol=0, atol=1e-9)
    np.testing.assert_allclose(device.transform(rows), cpu.transform(rows), rtol=0, atol=1e-9)


def test_a_device_fitter_refuses_a_bias_its_gram_matrices_are_not_for(frequent_part):
    X, (W, C, b, c) = frequent_part
    fitter = DeviceWordFitter.of(WordFitter(X, C, c, 100.0, 0.75), "cpu", b)
    assert fitter.fit_word(3, float(b[3]), None).factor is not None
    with pytest.raises(ValueError, match="row 3 asked for with bias None; this device fitter's Gram matrices are "
                                         "for bias"):
        fitter.fit_word(3, None, None)
    with pytest.raises(ValueError, match="row 4 asked for with bias 0.5"):
        fitter.normal_equations(4, 0.5, fitter.workspace())
    free = DeviceWordFitter.of(WordFitter(X, C, c, 100.0, 0.75), "cpu", None)
    with pytest.raises(ValueError, match="for bias None"):
        free.fit_word(3, float(b[3]), None)
    assert DeviceWordFitter.of(fitter, None, b) is fitter
