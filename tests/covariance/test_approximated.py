"""Compact covariances: leading eigenpairs plus the other variances on a diagonal, against dense matrices."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import glovev_ext
from glovev_ext import GloVeVEstimator, KeyedVectorsWithVariance
from glovev_ext.covariance import CovarianceStore, CovarianceStoreWriter, Factor
from glovev_ext.covariance.factor import LOW_RANK_BOUND, LOW_RANK_DIAGONAL_ROOT, LOW_RANK_PLUS_DIAGONAL, packed_size
from glovev_ext.covariance.store_file import open_store_arrays
from glovev_ext.pipeline import check_fit_params

DIM = 12


def spd(rng, dim=DIM, spread=3.0):
    """A covariance whose eigenvalues span about ``spread`` decades, in random directions."""
    q, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    return (q * np.logspace(0, -spread, dim)) @ q.T


def reference(covariance: np.ndarray, k: int) -> np.ndarray:
    """The approximation written out: the k leading eigenpairs, and the diagonal of the rest."""
    values, vectors = np.linalg.eigh(covariance)
    order = np.argsort(values)[::-1]
    values, vectors = values[order], vectors[:, order]
    low_rank = sum(values[j] * np.outer(vectors[:, j], vectors[:, j]) for j in range(k))
    return low_rank + np.diag(np.diag(covariance - low_rank))


def factors(rng):
    """One factor of each exact kind: a Hessian's Cholesky factor, a covariance's root, a pseudo-inverse."""
    hessian = np.linalg.inv(spd(rng))
    cholesky = Factor.of_hessian(hessian, np.linalg.cholesky(hessian), pseudo_inverse=False).with_sigma2(0.7, 40.0)
    root = Factor.of_covariance(spd(rng))
    singular = spd(rng, spread=12)
    pseudo = Factor.of_hessian(singular, None, pseudo_inverse=True).with_sigma2(2.0, 15.0)
    return [cholesky, root, pseudo]


@pytest.mark.parametrize("k", [1, 3, 5])
def test_an_approximation_is_the_leading_eigenpairs_plus_the_other_variances(rng, k):
    for exact in factors(rng):
        approximate = exact.approximated(k)
        assert approximate.kind == LOW_RANK_DIAGONAL_ROOT and approximate.approximation == LOW_RANK_PLUS_DIAGONAL
        assert approximate.rank == k and approximate.packed.size == DIM * (k + 1)
        assert (approximate.sigma2, approximate.dof, approximate.understated) == (exact.sigma2, exact.dof,
                                                                                  exact.understated)
        sigma = exact.dense()
        expected = reference(sigma, k)
        np.testing.assert_allclose(approximate.dense(), expected, rtol=1e-9, atol=1e-12 * np.abs(sigma).max())
        np.testing.assert_allclose(np.diag(approximate.dense()), np.diag(sigma), rtol=1e-9)
        np.testing.assert_allclose(approximate.variances(), np.diag(sigma), rtol=1e-9)


@pytest.mark.parametrize("k", [1, 4])
def test_the_bound_is_the_leading_eigenpairs_over_the_next_eigenvalue_and_understates_nothing(rng, k):
    for exact in factors(rng):
        bound = exact.approximated(k, "bound")
        assert bound.kind == LOW_RANK_DIAGONAL_ROOT and bound.approximation == LOW_RANK_BOUND and bound.rank == k
        sigma = exact.dense()
        values, vectors = np.linalg.eigh(sigma)
        order = np.argsort(values)[::-1]
        values, vectors = values[order], vectors[:, order]
        expected = (vectors[:, :k] * (values[:k] - values[k])) @ vectors[:, :k].T + values[k] * np.eye(DIM)
        np.testing.assert_allclose(bound.dense(), expected, rtol=1e-9, atol=1e-12 * values[0])
        # it dominates Sigma: Sigma_bound - Sigma is positive semidefinite
        assert np.linalg.eigvalsh(bound.dense() - sigma).min() >= -1e-10 * values[0]
        gradients = rng.normal(size=(DIM, 200))
        exact_forms = np.einsum("dm,dm->m", gradients, sigma @ gradients)
        bound_forms = np.einsum("dm,dm->m", bound.whiten(gradients), bound.whiten(gradients))
        assert (bound_forms >= exact_forms * (1 - 1e-10)).all()
    with pytest.raises(ValueError, match="form must be one of 'variances', 'bound'"):
        exact.approximated(2, "tight")


def test_every_operation_of_an_approximation_agrees_with_its_dense_matrix(rng):
    approximate = factors(rng)[0].approximated(4)
    dense = approximate.dense()
    g, gradients = rng.normal(size=DIM), rng.normal(size=(DIM, 11))
    assert approximate.quad_form(g) == pytest.approx(g @ dense @ g, rel=1e-12)
    whitened = approximate.whiten(gradients)
    assert whitened.shape == (4 + DIM, 11)
    np.testing.assert_allclose(whitened.T @ whitened, gradients.T @ dense @ gradients, rtol=1e-10)
    np.testing.assert_allclose(approximate.solve(g), dense @ g / approximate.sigma2, rtol=1e-10)
    root = approximate.square_root()
    assert root.shape == (DIM, DIM)
    np.testing.assert_allclose(root @ root.T, dense, rtol=1e-10, atol=1e-14)
    # draws: rows z S^T, so the identity's rows give a matrix whose Gram matrix is Sigma, exactly
    rows = approximate.transform_normal(np.eye(DIM))
    np.testing.assert_allclose(rows.T @ rows, dense, rtol=1e-10, atol=1e-14)
    draws = approximate.transform_normal(rng.normal(size=(100_000, DIM)))
    scale = np.sqrt(np.outer(np.diag(dense), np.diag(dense)) + dense**2)
    assert (np.abs(np.cov(draws.T) - dense) <= 5 * scale / np.sqrt(100_000)).all()
    lower = approximate.lower()
    np.testing.assert_allclose(lower @ lower.T, dense / approximate.sigma2, rtol=1e-10, atol=1e-14)
    mapping = rng.normal(size=(DIM, DIM))
    np.testing.assert_allclose(approximate.mapped(mapping).dense(), mapping @ dense @ mapping.T, rtol=1e-9)
    assert approximate.mapped(mapping).approximation == LOW_RANK_PLUS_DIAGONAL


@pytest.mark.parametrize("share", [0.3, 0.5, 0.62, 0.8])
def test_a_share_keeps_the_fewest_eigenpairs_that_hold_it(rng, share):
    exact = factors(rng)[1]
    values = np.sort(np.linalg.eigvalsh(exact.dense()))[::-1]
    k = 1
    while values[:k].sum() < share * values.sum():  # the plain loop
        k += 1
    approximate = exact.approximated(share)
    assert approximate.rank == k


def test_an_approximation_that_saves_nothing_keeps_the_exact_factor(rng):
    exact = factors(rng)[0]
    largest_saving = max(k for k in range(1, DIM + 1) if DIM * (k + 1) < packed_size(DIM))
    assert exact.approximated(largest_saving).kind == LOW_RANK_DIAGONAL_ROOT
    assert exact.approximated(largest_saving + 1) is exact
    assert exact.approximated(1.0) is exact
    compact = exact.approximated(2)
    assert compact.approximated(2) is compact  # already as small


@pytest.mark.parametrize("keep", [0, DIM + 1, 0.0, 1.5, -0.1, True, "0.9", None])
def test_what_an_approximation_keeps_is_checked(rng, keep):
    with pytest.raises(ValueError, match="eigenpairs"):
        factors(rng)[0].approximated(keep)


def _store(rng, n_words=30):
    """An in-memory store of random exact covariances; every fifth word has none."""
    dim = DIM
    defined = [i for i in range(n_words) if i % 5]
    with CovarianceStoreWriter(n_words, dim, len(defined), words=[f"w{i}" for i in range(n_words)]) as writer:
        writer.per_word.n_contexts[:] = 50
        for i in defined:
            writer.add(i, Factor.of_covariance(spd(rng, spread=rng.uniform(1, 4))).with_sigma2(rng.uniform(0.5, 2), 38))
    return writer.store


def test_a_store_approximated_holds_each_words_approximation_in_narrower_rows(rng, tmp_path):
    store = _store(rng)
    compact = store.approximated(0.7)
    approximations = {i: store.factor(i).approximated(0.7) for i in np.flatnonzero(store.defined)}
    widest = max(f.packed.size for f in approximations.values())
    assert compact.factor_row_width == widest < packed_size(DIM)
    np.testing.assert_array_equal(compact.defined, store.defined)
    np.testing.assert_array_equal(compact.n_contexts, store.n_contexts)
    for i, expected in approximations.items():
        got = compact.factor(i)
        assert got.kind == expected.kind and got.rank == expected.rank
        np.testing.assert_array_equal(got.packed, expected.packed)
        np.testing.assert_array_equal(compact[i], expected.dense())
    assert (compact.approximation[compact.defined] == LOW_RANK_PLUS_DIAGONAL).all()
    np.testing.assert_allclose(compact.diagonal(), store.diagonal(), rtol=1e-9)  # variances are kept exactly
    # threads give the same store; float32 factors; a file written atomically, loaded memory-mapped
    threaded = store.approximated(0.7, n_jobs=2)
    np.testing.assert_array_equal(np.asarray(threaded._factors), np.asarray(compact._factors))
    single = store.approximated(0.7, factor_dtype=np.float32, path=tmp_path / "compact.glovev")
    assert single.factor_dtype == np.float32 and single.factor_row_width == widest
    np.testing.assert_allclose(single[1], compact[1], rtol=1e-5)
    compact.save(tmp_path / "again.glovev")
    loaded = CovarianceStore.load(tmp_path / "again.glovev")
    assert loaded.factor_row_width == widest
    np.testing.assert_array_equal(loaded[3], compact[3])
    taken = compact.take(np.array([3, -1, 1]))
    halved = compact.take(np.array([3, -1, 1]), factor_dtype=np.float32)
    assert halved.factor_dtype == np.float32 and taken.factor_dtype == compact.factor_dtype == np.float64
    np.testing.assert_allclose(halved[0], compact[3], rtol=1e-5)
    assert taken.factor_row_width == widest
    np.testing.assert_array_equal(taken[0], compact[3])
    with pytest.raises(ValueError, match="eigenpairs"):
        store.approximated(0)


def test_a_store_file_whose_rows_cannot_hold_its_factors_is_refused(rng, tmp_path):
    compact = _store(rng).approximated(3)
    compact.save(tmp_path / "compact.glovev")
    wider = compact.rank.copy()
    wider[compact.defined] = 7
    arrays = open_store_arrays(tmp_path / "compact.glovev")
    arrays["rank"][:] = wider
    arrays["rank"].flush()
    del arrays
    with pytest.raises(ValueError, match="cannot hold its low rank plus diagonal factors of rank 7"):
        CovarianceStore.load(tmp_path / "compact.glovev")


def test_a_fit_with_approximated_covariances_says_so_in_its_results(small_model, embedded_cooccurrence, tmp_path):
    exact = small_model
    params = {**exact.get_params(), "covariance_approximation": 3}
    model = GloVeVEstimator(**params).fit(embedded_cooccurrence)
    np.testing.assert_array_equal(model.embedding_, exact.embedding_)
    np.testing.assert_array_equal(model.covariance_rank_, exact.covariance_rank_)  # the covariances', not k
    assert (model.covariance_.rank[exact.covariance_defined_] == 3).all()
    assert model.covariance_.factor_row_width == 8 * (3 + 1)
    defined = np.flatnonzero(exact.covariance_defined_)
    for i in defined[:20]:
        np.testing.assert_allclose(model.covariance_[int(i)], exact.covariance_.factor(int(i)).approximated(3).dense(),
                                   rtol=1e-12, atol=1e-15)
    kv = KeyedVectorsWithVariance.from_estimator(model)
    word1, word2 = (embedded_cooccurrence.words[int(i)] for i in defined[:2])
    result = kv.similarity_test(word1, word2)
    assert any("rank 3 plus diagonal, of 8" in caveat for caveat in result.caveats)
    assert not any("plus diagonal" in caveat for caveat in
                   KeyedVectorsWithVariance.from_estimator(exact).similarity_test(word1, word2).caveats)
    bounded = KeyedVectorsWithVariance.from_estimator(exact)
    bounded.attach_covariances(exact.covariance_.approximated(3, "bound"))
    bounded_result = bounded.similarity_test(word1, word2)
    assert any("rank 3 plus a bound, of 8" in caveat for caveat in bounded_result.caveats)
    assert bounded_result.bse >= KeyedVectorsWithVariance.from_estimator(exact).similarity_test(word1, word2).bse
    # its standard error is the delta method's under the approximated covariances
    v1, v2 = kv[word1].astype(np.float64), kv[word2].astype(np.float64)
    n1, n2 = np.linalg.norm(v1), np.linalg.norm(v2)
    cosine = v1 @ v2 / (n1 * n2)
    g1, g2 = v2 / (n1 * n2) - cosine * v1 / n1**2, v1 / (n1 * n2) - cosine * v2 / n2**2
    variance = g1 @ kv.covariance(word1) @ g1 + g2 @ kv.covariance(word2) @ g2
    assert result.bse == pytest.approx(np.sqrt(variance), rel=1e-8)
    kv.save(str(tmp_path / "kv"))
    loaded = KeyedVectorsWithVariance.load(str(tmp_path / "kv"))
    np.testing.assert_array_equal(loaded.covariance(word1), kv.covariance(word1))
    assert loaded.covariance_factor(word1).approximation == LOW_RANK_PLUS_DIAGONAL
    # to a file, and to a temporary file under a memory budget
    stored = GloVeVEstimator(**{**params, "covariance_storage": str(tmp_path / "c.glovev")}).fit(embedded_cooccurrence)
    assert CovarianceStore.load(tmp_path / "c.glovev").factor_row_width == 32
    budget = GloVeVEstimator(**{**params, "max_memory": "1M"}).fit(embedded_cooccurrence)
    assert budget.covariance_.factor_row_width == 32 and isinstance(budget.covariance_._factors, np.memmap)
    for fitted in (stored, budget):
        np.testing.assert_array_equal(np.asarray(fitted.covariance_._factors), np.asarray(model.covariance_._factors))
        np.testing.assert_array_equal(fitted.covariance_.rank, model.covariance_.rank)


def test_an_approximation_is_refused_before_any_work():
    with pytest.raises(ValueError, match="lazy storage stores none"):
        GloVeVEstimator(4, covariance_approximation=2, covariance_storage="lazy", point_estimate="trained").fit(
            sp.eye(3, format="csr"))
    with pytest.raises(ValueError, match="1 to D = 4 eigenpairs, got 5"):
        check_fit_params(glovev_ext.CooccurrenceVectorizer(), GloVeVEstimator(4, covariance_approximation=5))
