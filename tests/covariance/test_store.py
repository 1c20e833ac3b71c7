"""The covariance store: indexing, factor operations against dense matrices, files, lazy storage."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glovev_ext import GloVeVEstimator, UndefinedCovarianceError
from glovev_ext.covariance import CovarianceStore, CovarianceStoreWriter, Factor
from glovev_ext.covariance.factor import CHOLESKY, DIAGONAL_ROOT, PSEUDO_INVERSE, THIN_ROOT, TRANSFORMED
from glovev_ext.covariance.layout import PerWord
from glovev_ext.covariance import store as store_module

DIM = 8


@pytest.fixture
def fitted(small_model):
    """The shared D = 8 model (read only)."""
    return small_model


def relative_error(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


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
        np.asarray(CovarianceStore(PerWord.undefined(10**6), np.zeros((1, 5050)), 100))


@pytest.mark.parametrize("factor_dtype", ["float64", "float32"])
def test_save_and_load_round_trip_bit_for_bit(fitted, tmp_path, factor_dtype):
    store = fitted.covariance_ if factor_dtype == "float64" else _float32_copy(fitted)
    path = tmp_path / "covariances.glovev"
    store.save(path)
    for mmap in (True, False):
        loaded = CovarianceStore.load(path, mmap=mmap)
        assert loaded.factor_dtype == np.dtype(factor_dtype)
        for (name, loaded_values), (_, values) in zip(loaded.per_word, store.per_word):
            np.testing.assert_array_equal(loaded_values, values, err_msg=name)
        assert np.array_equal(np.asarray(loaded._factors), np.asarray(store._factors))
        assert list(loaded.words) == list(store.words)
        i = int(np.flatnonzero(store.defined)[0])
        assert np.array_equal(loaded[i], store[i])


@pytest.mark.parametrize("factor_dtype", ["float64", "float32"])
def test_diagonal_of_every_kind_in_chunks_equals_the_dense_diagonal(rng, monkeypatch, factor_dtype):
    """The batched diagonal, word by word against the dense covariance, across chunks (NaN for no covariance)."""
    monkeypatch.setattr(store_module, "_DIAGONAL_CHUNK_ENTRIES", 3 * DIM * DIM)  # three words per chunk
    hessians = [(lambda a: a @ a.T + 0.1 * np.eye(DIM))(rng.normal(size=(DIM, DIM))) for _ in range(9)]
    ill = hessians[1] @ np.diag(np.geomspace(1.0, 1e-7, DIM)) @ hessians[1].T
    vectors = np.linalg.qr(rng.normal(size=(DIM, 3)))[0]
    factors = [Factor.of_hessian(h, np.linalg.cholesky(h), pseudo_inverse=False).with_sigma2(s2)
               for h, s2 in zip(hessians, rng.uniform(0.5, 2.0, 9))]
    factors += [Factor.of_hessian(ill, None, pseudo_inverse=True).with_sigma2(0.4),
                Factor.of_covariance(np.linalg.inv(hessians[2])), Factor.of_diagonal(rng.uniform(0.1, 1.0, DIM)),
                Factor.of_low_rank(vectors, rng.uniform(0.5, 1.0, 3)),
                Factor.of_low_rank(vectors[:, :2], rng.uniform(0.5, 1.0, 2)).with_sigma2(3.0)]
    kinds = {factor.kind for factor in factors}
    assert kinds == {CHOLESKY, PSEUDO_INVERSE, TRANSFORMED, DIAGONAL_ROOT, THIN_ROOT}
    order = rng.permutation(len(factors) + 2)  # two words without a covariance, among the others
    with CovarianceStoreWriter(len(order), DIM, len(factors), factor_dtype=factor_dtype) as writer:
        for position, factor in zip(order, factors):
            writer.add(int(position), factor)
    store = writer.store
    diagonal = store.diagonal()
    for i in range(len(store)):
        expected = np.diag(store[i]) if store.has_covariance(i) else np.full(DIM, np.nan)
        np.testing.assert_allclose(diagonal[i], expected, rtol=1e-9, err_msg=f"word {i}")
    some = [int(order[-1]), int(order[0]), int(order[-2])]
    np.testing.assert_array_equal(store.diagonal(some), diagonal[some])


def _float32_copy(fitted):
    per_word = PerWord(*(values.copy() for _, values in fitted.covariance_.per_word))
    return CovarianceStore(per_word, fitted.covariance_._factors.astype(np.float32), DIM,
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

    per_word = fitted.covariance_.per_word
    per_word.sigma2 = Interrupting()
    with pytest.raises(KeyboardInterrupt):
        CovarianceStore(per_word, fitted.covariance_._factors, DIM).save(path)
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
    on_disk = GloVeVEstimator(n_components=DIM, pretrained=_parameters(fitted), point_estimate="trained", covariance_storage=path,
                              progress=False).fit(embedded_cooccurrence)
    assert isinstance(on_disk.covariance_._factors, np.memmap)
    i = int(np.flatnonzero(fitted.covariance_defined_)[5])
    np.testing.assert_array_equal(on_disk.covariance_[i], fitted.covariance_[i])
    np.testing.assert_array_equal(on_disk.sigma2_, fitted.sigma2_)


def test_lazy_storage_computes_words_on_demand(embedded_cooccurrence, fitted):
    lazy = GloVeVEstimator(n_components=DIM, pretrained=_parameters(fitted), point_estimate="trained", covariance_storage="lazy",
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


def random_factors(rng, n):
    """Distinct full-rank covariances of every kind a store keeps."""
    factors = []
    for k in range(n):
        a = rng.normal(size=(DIM + 3, DIM))
        hessian = a.T @ a
        factors.append([Factor.of_hessian(hessian, np.linalg.cholesky(hessian), pseudo_inverse=False),
                        Factor.of_hessian(hessian, None, pseudo_inverse=True),
                        Factor.of_covariance(np.linalg.inv(hessian))][k % 3].with_sigma2(rng.uniform(0.5, 2)))
    return factors


@pytest.mark.parametrize("path", [None, "store.cov"])
def test_writer_builds_a_store_word_by_word(rng, tmp_path, path):
    factors = random_factors(rng, 6)
    positions = [4, 0, 7, 2, 5, 1]
    with CovarianceStoreWriter(9, DIM, len(factors), words=[f"w{i}" for i in range(9)],
                               path=None if path is None else tmp_path / path) as writer:
        writer.per_word.n_contexts[:] = np.arange(9) + 20
        for position, factor in zip(positions, factors):
            writer.add(position, factor)
    store = writer.store
    assert isinstance(store._factors, np.memmap) == (path is not None)
    for position, factor in zip(positions, factors):
        np.testing.assert_allclose(store[f"w{position}"], factor.dense(), rtol=1e-12)
        assert store.sigma2[position] == factor.sigma2 and store.rank[position] == factor.rank
    assert list(np.flatnonzero(~store.defined)) == [3, 6, 8]
    np.testing.assert_array_equal(store.n_contexts, np.arange(9) + 20)
    with pytest.raises(UndefinedCovarianceError, match="'w3' \\(index 3\\) has no covariance"):
        store["w3"]


def test_a_file_writer_lets_go_of_the_rows_written_every_32_mib(rng, tmp_path, monkeypatch, resident_pages_of):
    """Counted in bytes, not rows: at D = 300 in float32, 4,096 rows were 740 MB of written pages held."""
    dim = 40  # 820 numbers a row: 6,560 bytes in float64
    writer = CovarianceStoreWriter(10, dim, 10, path=tmp_path / "store.cov")
    assert writer._release_every == (32 << 20) // 6560
    monkeypatch.setattr(store_module, "_RELEASE_EVERY_BYTES", 2 * 6560)
    hessian = np.eye(dim) + 0.1
    resident = []
    with CovarianceStoreWriter(10, dim, 10, path=tmp_path / "store.cov") as writer:
        assert writer._release_every == 2
        for position in range(10):
            writer.add(position, Factor.of_hessian(hessian, np.linalg.cholesky(hessian), pseudo_inverse=False)
                       .with_sigma2(1.0))
            resident.append(resident_pages_of(writer.factors))
    assert resident[1::2] == [0] * 5 and max(resident) <= 3  # a row spans two or three pages
    np.testing.assert_allclose(writer.store[9], np.linalg.inv(hessian), rtol=1e-12)


def test_an_interrupted_writer_leaves_no_file(rng, tmp_path):
    with pytest.raises(RuntimeError):
        with CovarianceStoreWriter(3, DIM, 3, path=tmp_path / "store.cov") as writer:
            writer.add(0, random_factors(rng, 1)[0])
            raise RuntimeError("stopped")
    assert list(tmp_path.iterdir()) == []


def test_taking_words_keeps_their_factors_as_stored(fitted):
    store = _float32_copy(fitted)
    defined = np.flatnonzero(store.defined)
    rows = np.array([defined[3], -1, defined[0], int(np.flatnonzero(~store.defined)[0])])
    taken = store.take(rows)
    assert taken.factor_dtype == np.float32 and list(taken.defined) == [True, False, True, False]
    np.testing.assert_array_equal(taken[0], store[int(defined[3])])
    np.testing.assert_array_equal(taken[2], store[int(defined[0])])
    assert taken.words[1] == "<no covariance 1>" and taken.words[3] == store.words[rows[3]]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(1, 2000))
def test_truncated_covariance_store_files_are_refused(tmp_path, fitted, cut):
    path = tmp_path / "store.cov"
    if not path.exists():
        fitted.covariance_.save(path)
    data = path.read_bytes()
    (tmp_path / "cut.cov").write_bytes(data[:max(0, len(data) - cut)])
    with pytest.raises(ValueError, match="cut.cov (is truncated|is not a glovev-ext covariance store)"):
        CovarianceStore.load(tmp_path / "cut.cov")


def test_a_store_file_of_glovev_ext_0_2_loads_with_its_degrees_of_freedom(fitted, tmp_path, monkeypatch):
    """A file without the arrays added in 0.3 (dof, condition, understated): they are derived on load."""
    from glovev_ext.covariance import store_file
    old = {name: dtype for name, dtype in store_file.PER_WORD_DTYPES.items()
           if name not in ("dof", "condition", "understated")}
    monkeypatch.setattr(store_file, "PER_WORD_DTYPES", old)
    fitted.covariance_.save(tmp_path / "old.cov")
    monkeypatch.undo()
    header, offsets = store_file.read_header(tmp_path / "old.cov")
    assert "dof" not in offsets
    loaded = CovarianceStore.load(tmp_path / "old.cov")
    dim = fitted.embedding_.shape[1]
    defined = fitted.covariance_defined_
    np.testing.assert_array_equal(loaded.dof[defined], fitted.n_contexts_[defined] - dim)
    assert np.isnan(loaded.condition).all()
    word = int(np.flatnonzero(defined)[0])
    np.testing.assert_array_equal(loaded[word], fitted.covariance_[word])
    assert loaded.factor(word).dof == fitted.covariance_.factor(word).dof
