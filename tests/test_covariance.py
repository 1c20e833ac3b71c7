"""GloVe-V covariances against brute-force formulas, simulation coverage, and the covariance store."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

from glovev_ext import CovarianceStore, GloVeVEstimator, UndefinedCovarianceError, glove_weights
from glovev_ext._covariance_kernel import (CHOLESKY, INVERSE_ERROR_LIMIT, PSEUDO_INVERSE, WordFitter,
                                           fit_all_words, residual_variances)

DIM = 8
PER_WORD = ("kind", "rank", "n_contexts", "sigma2", "factor_row")
THRESHOLD = INVERSE_ERROR_LIMIT / np.finfo(float).eps


@pytest.fixture(scope="module")
def fitted(embedded_cooccurrence) -> GloVeVEstimator:
    return GloVeVEstimator(n_components=DIM, epochs=8, random_state=0, n_jobs=1, progress=False).fit(
        embedded_cooccurrence)


def brute_force(X, model, i):
    """H_i, s2_i and Sigma_i straight from method.md section 2, one context at a time."""
    row = X.getrow(i)
    H = np.zeros((DIM, DIM))
    weighted_squares = 0.0
    for j, x in zip(row.indices, row.data):
        f = (x / 100.0) ** 0.75 if x < 100.0 else 1.0
        v = model.context_embedding_[j]
        H += f * np.outer(v, v)
        residual = np.log(x) - model.bias_[i] - model.context_bias_[j] - model.embedding_[i] @ v
        weighted_squares += f * residual**2
    s2 = weighted_squares / (row.nnz - DIM)
    eigenvalues = np.linalg.eigvalsh(H)
    ill = eigenvalues[0] <= 0 or eigenvalues[-1] / eigenvalues[0] > THRESHOLD
    inverse = np.linalg.pinv(H, rcond=1e-3, hermitian=True) if ill else np.linalg.inv(H)
    return H, s2, s2 * inverse, ill, eigenvalues


def relative_error(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


def test_covariances_equal_brute_force_on_real_cooccurrences(embedded_cooccurrence, fitted):
    X = embedded_cooccurrence
    checked = 0
    for i in np.flatnonzero(fitted.covariance_defined_)[::7]:
        H, s2, sigma, ill, eigenvalues = brute_force(X, fitted, i)
        assert abs(fitted.sigma2_[i] - s2) <= 1e-12 * s2
        near_threshold = abs(eigenvalues[-1] / eigenvalues[0] / THRESHOLD - 1) < 1e-6
        if not near_threshold:
            assert bool(fitted.pseudo_inverse_[i]) == ill, i
            assert relative_error(fitted.covariance_[int(i)], sigma) < 1e-10, i
        checked += 1
    assert checked > 500


def test_words_with_too_few_contexts_have_no_covariance(embedded_cooccurrence, fitted):
    n_contexts = np.diff(embedded_cooccurrence.indptr)
    np.testing.assert_array_equal(fitted.n_contexts_, n_contexts)
    undefined = np.flatnonzero(n_contexts <= DIM)
    assert undefined.size > 0
    np.testing.assert_array_equal(fitted.covariance_defined_, n_contexts > DIM)
    assert np.isnan(fitted.sigma2_[undefined]).all()
    assert (fitted.covariance_rank_[undefined] == 0).all()
    word = embedded_cooccurrence.words[undefined[0]]
    with pytest.raises(UndefinedCovarianceError, match=re.escape(f"word {word!r} (index {undefined[0]}) has no "
                                                                 f"covariance: it has {n_contexts[undefined[0]]}")):
        fitted.covariance_[int(undefined[0])]
    assert np.isnan(fitted.covariance_.diagonal([int(undefined[0])])).all()
    with pytest.raises(UndefinedCovarianceError):
        fitted.covariance_.quad_form(word, np.ones(DIM))


def ill_conditioned_fitter(rng, n_contexts=60):
    """Contexts that nearly span only 3 of 5 dimensions: one word with cond(H) far above 1e10 * eps."""
    dim = 5
    contexts = np.zeros((n_contexts, dim))
    contexts[:, :3] = rng.normal(size=(n_contexts, 3))
    contexts[:, 3:] = 1e-5 * rng.normal(size=(n_contexts, 2))
    X = sp.csr_matrix((rng.uniform(1, 300, n_contexts), (np.zeros(n_contexts, int), np.arange(n_contexts))),
                      shape=(n_contexts, n_contexts))
    return WordFitter(X, contexts, rng.normal(size=n_contexts), 100.0, 0.75), contexts


def test_pseudo_inverse_branch_matches_numpy_pinv(rng):
    fitter, contexts = ill_conditioned_fitter(rng)
    center, bias = rng.normal(size=5), 0.3
    fit = fitter.fit_word(0, bias, center)
    assert fit.kind == PSEUDO_INVERSE and fit.rank == 3
    row = fitter.cooccurrence.getrow(0)
    f = glove_weights(row.data)
    H = (contexts[row.indices] * f[:, None]).T @ contexts[row.indices]
    residual = np.log(row.data) - bias - fitter.context_biases[row.indices] - contexts[row.indices] @ center
    s2 = f @ residual**2 / (row.nnz - 5)
    store = CovarianceStore.from_arrays(fit_all_words(fitter, np.tile(center, (row.shape[1], 1)),
                                                      np.full(row.shape[1], bias), progress=False))
    np.testing.assert_allclose(store[0], s2 * np.linalg.pinv(H, rcond=1e-3, hermitian=True), rtol=1e-9, atol=0)
    assert store.pseudo_inverse[0] and store.rank[0] == 3
    g = rng.normal(size=5)
    assert store.quad_form(0, g) == pytest.approx(g @ store[0] @ g, rel=1e-10)


def test_branch_decision_is_exact_near_the_threshold(rng):
    """Hessians built with cond(H) just below and just above the threshold land on the right side."""
    dim, n = 4, 50
    basis, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    # 1e-5 from the threshold, a rough power-iteration estimate of lambda_max cannot decide
    for factor, expected in ((0.999, CHOLESKY), (1.001, PSEUDO_INVERSE), (0.99999, CHOLESKY),
                             (1.00001, PSEUDO_INVERSE)):
        eigenvalues = np.array([1.0, 0.5, 0.2, 1.0 / (THRESHOLD * factor)])
        # contexts whose f-weighted Gram matrix is basis diag(eigenvalues) basis^T (all f = 1)
        raw = rng.normal(size=(n, dim))
        whitened = raw @ np.linalg.inv(np.linalg.cholesky(raw.T @ raw)).T
        contexts = whitened @ np.diag(np.sqrt(eigenvalues)) @ basis.T
        X = sp.csr_matrix((np.full(n, 500.0), (np.zeros(n, int), np.arange(n))), shape=(n, n))
        fit = WordFitter(X, contexts, np.zeros(n), 100.0, 0.75).fit_word(0, 0.0, np.zeros(dim))
        assert fit.kind == expected, factor


def test_quadratic_forms_gram_and_draws_agree_with_dense_covariance(fitted, rng):
    store = fitted.covariance_
    cholesky_word = int(np.flatnonzero(store.defined & ~store.pseudo_inverse)[3])
    words = [cholesky_word]
    if store.pseudo_inverse.any():
        words.append(int(np.flatnonzero(store.pseudo_inverse)[0]))
    for i in words:
        sigma = store[i]
        g, h = rng.normal(size=DIM), rng.normal(size=(DIM, 3))
        assert store.quad_form(i, g) == pytest.approx(g @ sigma @ g, rel=1e-10)
        np.testing.assert_allclose(store.gram(i, h), h.T @ sigma @ h, rtol=1e-10, atol=1e-14)
        draws = store.sample(i, 20000, rng)
        assert draws.shape == (20000, DIM)
        sample_cov = np.cov(draws.T)
        standard_error = np.sqrt((np.outer(np.diag(sigma), np.diag(sigma)) + sigma**2) / 20000)
        assert (np.abs(sample_cov - sigma) <= 5 * standard_error + 1e-15).all()
        assert np.abs(draws.mean(axis=0)).max() <= 5 * np.sqrt(np.diag(sigma).max() / 20000)


def test_store_indexing_like_an_array(fitted, embedded_cooccurrence):
    store = fitted.covariance_
    n = embedded_cooccurrence.shape[0]
    assert store.shape == (n, DIM, DIM) and len(store) == n and store.dtype == np.float64 and store.ndim == 3
    defined = np.flatnonzero(store.defined)[:4]
    stack = store[defined]
    assert stack.shape == (4, DIM, DIM)
    np.testing.assert_array_equal(stack[1], store[int(defined[1])])
    word = embedded_cooccurrence.words[defined[0]]
    np.testing.assert_array_equal(store[word], stack[0])
    np.testing.assert_allclose(store.diagonal(defined), np.diagonal(stack, axis1=1, axis2=2))
    assert [store.has_covariance(i) for i in range(n)] == list(embedded_cooccurrence.getnnz(axis=1) > DIM)
    with pytest.raises(IndexError, match="out of range"):
        store[n]
    with pytest.raises(KeyError, match="not in the vocabulary"):
        store["zzzz-not-a-word"]
    with pytest.raises(MemoryError, match="index the words you need"):
        np.asarray(CovarianceStore({"kind": np.ones(10**6, np.int8), "rank": np.zeros(10**6, np.int32),
                                    "n_contexts": np.zeros(10**6), "sigma2": np.zeros(10**6),
                                    "factor_row": np.zeros(10**6, np.int64)}, np.zeros((1, 5050)), 100))


@pytest.mark.parametrize("factor_dtype", ["float64", "float32"])
def test_save_and_load_round_trip_bit_for_bit(fitted, tmp_path, factor_dtype):
    store = fitted.covariance_ if factor_dtype == "float64" else _float32_copy(fitted)
    path = tmp_path / "covariances.glovev"
    store.save(path)
    for mmap in (True, False):
        loaded = CovarianceStore.load(path, mmap=mmap)
        assert loaded.factor_dtype == np.dtype(factor_dtype)
        for name in ("kind", "rank", "n_contexts", "sigma2", "factor_row"):
            np.testing.assert_array_equal(getattr(loaded, "_" + name), getattr(store, "_" + name))
        assert np.array_equal(np.asarray(loaded._factors), np.asarray(store._factors))
        assert list(loaded.words) == list(store.words)
        i = int(np.flatnonzero(store.defined)[0])
        assert np.array_equal(loaded[i], store[i])


def _float32_copy(fitted):
    arrays = {name: np.array(getattr(fitted.covariance_, "_" + name)) for name in PER_WORD}
    return CovarianceStore(arrays, fitted.covariance_._factors.astype(np.float32), DIM,
                           words=fitted.covariance_.words)


def test_float32_factors_are_close_to_float64(fitted):
    single = _float32_copy(fitted)
    i = int(np.flatnonzero(~fitted.pseudo_inverse_ & fitted.covariance_defined_)[10])
    assert relative_error(single[i], fitted.covariance_[i]) < 1e-4


def test_interrupted_save_leaves_previous_file_intact(fitted, tmp_path):
    path = tmp_path / "covariances.glovev"
    fitted.covariance_.save(path)
    before = path.read_bytes()

    class Interrupting:
        def __array__(self, *args, **kwargs):
            raise KeyboardInterrupt

    arrays = {name: getattr(fitted.covariance_, "_" + name) for name in PER_WORD}
    arrays["sigma2"] = Interrupting()
    with pytest.raises(KeyboardInterrupt):
        CovarianceStore(arrays, fitted.covariance_._factors, DIM).save(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["covariances.glovev"]


def test_damaged_files_are_refused_with_a_clear_error(fitted, tmp_path):
    path = tmp_path / "covariances.glovev"
    fitted.covariance_.save(path)
    data = path.read_bytes()
    (tmp_path / "truncated").write_bytes(data[:-1000])
    with pytest.raises(ValueError, match="truncated"):
        CovarianceStore.load(tmp_path / "truncated")
    (tmp_path / "other").write_bytes(b"not a store at all")
    with pytest.raises(ValueError, match="not a glovev-ext covariance store"):
        CovarianceStore.load(tmp_path / "other")
    with pytest.raises(FileNotFoundError):
        CovarianceStore.load(tmp_path / "absent")


def test_disk_storage_memory_maps_the_same_covariances(embedded_cooccurrence, fitted, tmp_path):
    path = tmp_path / "fit.glovev"
    on_disk = GloVeVEstimator(n_components=DIM, pretrained=_parameters(fitted), covariance_storage=path,
                              progress=False).fit(embedded_cooccurrence)
    assert isinstance(on_disk.covariance_._factors, np.memmap)
    i = int(np.flatnonzero(fitted.covariance_defined_)[5])
    np.testing.assert_array_equal(on_disk.covariance_[i], fitted.covariance_[i])
    np.testing.assert_array_equal(on_disk.sigma2_, fitted.sigma2_)


def test_lazy_storage_computes_words_on_demand(embedded_cooccurrence, fitted):
    lazy = GloVeVEstimator(n_components=DIM, pretrained=_parameters(fitted), covariance_storage="lazy",
                           progress=False).fit(embedded_cooccurrence)
    store = lazy.covariance_
    defined = np.flatnonzero(fitted.covariance_defined_)
    assert (store.rank[defined] == -1).all()
    # vectorised residual variances equal the per-word kernel's
    np.testing.assert_allclose(lazy.sigma2_, fitted.sigma2_, rtol=1e-12)
    for i in defined[:20]:
        # BLAS may use other threads here, so only the summation order differs
        np.testing.assert_allclose(store[int(i)], fitted.covariance_[int(i)], rtol=1e-12, atol=1e-18)
    assert (store.rank[defined[:20]] == fitted.covariance_rank_[defined[:20]]).all()
    assert (store.rank[defined[20:]] == -1).all()
    # the estimator's flags follow the words computed since the fit
    assert (lazy.covariance_rank_[defined[:20]] == fitted.covariance_rank_[defined[:20]]).all()
    np.testing.assert_array_equal(lazy.pseudo_inverse_[defined[:20]], fitted.pseudo_inverse_[defined[:20]])
    assert not lazy.pseudo_inverse_[defined[20:]].any()


def _parameters(model):
    return (model.embedding_, model.context_embedding_, model.bias_, model.context_bias_)


def test_optimum_is_the_weighted_least_squares_solution(embedded_cooccurrence, fitted):
    X = embedded_cooccurrence
    for i in np.flatnonzero(fitted.covariance_defined_ & ~fitted.pseudo_inverse_)[::200]:
        row = X.getrow(i)
        root = np.sqrt(glove_weights(row.data))
        design = fitted.context_embedding_[row.indices] * root[:, None]
        target = root * (np.log(row.data) - fitted.bias_[i] - fitted.context_bias_[row.indices])
        optimum = np.linalg.lstsq(design, target, rcond=None)[0]
        np.testing.assert_allclose(fitted.optimum_[i], optimum, rtol=1e-8, atol=1e-10)
        delta = fitted.embedding_[i] - optimum
        distance = np.sqrt(delta @ np.linalg.solve(fitted.covariance_[int(i)], delta))
        assert fitted.optimum_distance_[i] == pytest.approx(distance, rel=1e-6)


@pytest.mark.parametrize("unit_weights", [True, False])
def test_intervals_cover_at_the_nominal_rate_in_simulation(rng, unit_weights):
    """Rows simulated from the model with known w and fixed C, b, c: 95 % intervals cover 95 %."""
    dim, n_contexts, replications = 4, 300, 2000
    contexts = rng.normal(size=(n_contexts, dim))
    context_biases = rng.normal(0, 0.5, n_contexts)
    truth, bias = rng.normal(size=dim), 1.5
    mean_log = bias + context_biases + contexts @ truth
    x_max = 1e-3 if unit_weights else 100.0
    sigma = 0.1 if unit_weights else 0.02
    f_true = glove_weights(np.exp(mean_log), x_max, 0.75)
    covered = []
    for _ in range(replications):
        log_x = mean_log + rng.normal(size=n_contexts) * sigma / np.sqrt(f_true)
        fitter = WordFitter(sp.csr_matrix(np.exp(log_x)[None, :]), contexts, context_biases, x_max, 0.75)
        fit = fitter.fit_row(np.arange(n_contexts), np.exp(log_x), bias, None)
        store = CovarianceStore.from_arrays(_single(fit, dim))
        se = np.sqrt(np.diag(store[0]))
        covered.append(np.abs(fit.optimum - truth) <= 1.959964 * se)
    coverage = np.mean(covered)
    assert 0.935 <= coverage <= 0.965, coverage


def _single(fit, dim):
    from glovev_ext._covariance_kernel import CovarianceArrays
    return CovarianceArrays(kind=np.array([fit.kind], np.int8), rank=np.array([fit.rank], np.int32),
                            n_contexts=np.array([fit.n_contexts]), sigma2=np.array([fit.sigma2]),
                            factor_row=np.array([0]), factors=fit.factor[None, :], optimum=fit.optimum[None, :],
                            distance=np.array([fit.distance]))


def test_residual_variances_vectorised_equal_per_word(embedded_cooccurrence, fitted):
    fitter = WordFitter(embedded_cooccurrence, fitted.context_embedding_, fitted.context_bias_, 100.0, 0.75)
    np.testing.assert_allclose(residual_variances(fitter, fitted.embedding_, fitted.bias_), fitted.sigma2_,
                               rtol=1e-11)
