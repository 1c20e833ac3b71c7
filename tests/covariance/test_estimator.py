"""GloVeVEstimator as a scikit-learn estimator, and its conditional (transform) estimator."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

import glovev_ext
from glovev_ext import GloVeVEstimator
from glovev_ext.glove import glove_weights


@parametrize_with_checks([GloVeVEstimator(n_components=2, epochs=5, random_state=0, progress=False),
                          GloVeVEstimator(n_components=2, epochs=5, random_state=0, point_estimate="trained",
                                          progress=False)])
def test_scikit_learn_compatible(estimator, check):
    """At the default n_jobs (every core): a seed makes a fit reproducible (check_fit_idempotent and others)."""
    check(estimator)


@pytest.fixture
def small_matrix(small_cooccurrence) -> glovev_ext.CooccurrenceMatrix:
    return small_cooccurrence


def test_pipeline_from_raw_documents_knows_its_words():
    documents = list(glovev_ext.load_default_corpus(max_documents=800))
    pipeline = make_pipeline(glovev_ext.CooccurrenceVectorizer(min_count=3, progress=False),
                             GloVeVEstimator(n_components=5, epochs=3, random_state=0, progress=False))
    pipeline.fit(documents)
    vectorizer, model = pipeline.steps[0][1], pipeline.steps[1][1]
    assert list(model.words_) == list(vectorizer.get_feature_names_out())
    assert list(model.covariance_.words) == list(model.words_)
    assert model.embedding_.shape == (len(model.words_), 5)
    # the embedding of a pipeline is its last step's, with its words
    kv = glovev_ext.KeyedVectorsWithVariance.from_estimator(pipeline)
    assert kv.index_to_key == list(model.words_) and kv.prior is model.prior_
    np.testing.assert_array_equal(kv.vectors, model.embedding_)
    with pytest.raises(TypeError, match="ends in CooccurrenceVectorizer"):
        glovev_ext.KeyedVectorsWithVariance.from_estimator(make_pipeline(vectorizer))
    # an estimator not fitted yet, alone or at a pipeline's end: scikit-learn's NotFittedError, not AttributeError
    for unfitted in (GloVeVEstimator(n_components=5), make_pipeline(GloVeVEstimator(n_components=5))):
        with pytest.raises(NotFittedError, match="not fitted yet"):
            glovev_ext.KeyedVectorsWithVariance.from_estimator(unfitted)


def test_pretrained_parameters_skip_training_and_give_the_same_covariances(small_matrix):
    trained = GloVeVEstimator(n_components=6, epochs=4, random_state=1, n_jobs=1, point_estimate="trained",
                              progress=False).fit(small_matrix)
    parameters = (trained.embedding_, trained.context_embedding_, trained.bias_, trained.context_bias_)
    reused = GloVeVEstimator(n_components=6, pretrained=parameters, n_jobs=1, point_estimate="trained",
                             progress=False).fit(small_matrix)
    assert reused.training_costs_.size == 0 and trained.training_costs_.size == 4
    np.testing.assert_array_equal(reused.embedding_, trained.embedding_)
    np.testing.assert_array_equal(reused.sigma2_, trained.sigma2_)
    i = int(np.flatnonzero(trained.covariance_defined_)[0])
    np.testing.assert_array_equal(reused.covariance_[i], trained.covariance_[i])
    glove = glovev_ext.glove.GloVeParameters(*parameters, costs=np.empty(0))
    from_dataclass = GloVeVEstimator(n_components=6, pretrained=glove, n_jobs=1, point_estimate="trained",
                                     progress=False).fit(small_matrix)
    np.testing.assert_array_equal(from_dataclass.sigma2_, trained.sigma2_)


@pytest.mark.parametrize("part, message", [(0, "centre vectors W have shape"), (1, "context vectors C have shape"),
                                           (2, "centre biases b have shape"), (3, "context biases c have shape")])
def test_pretrained_of_the_wrong_shape_is_refused(small_matrix, part, message):
    n = small_matrix.shape[0]
    parameters = [np.zeros((n, 4)), np.zeros((n, 4)), np.zeros(n), np.zeros(n)]
    parameters[part] = parameters[part][:-1]
    with pytest.raises(ValueError, match=message):
        GloVeVEstimator(n_components=4, pretrained=parameters, progress=False).fit(small_matrix)


def test_non_finite_pretrained_is_refused(small_matrix):
    n = small_matrix.shape[0]
    parameters = [np.zeros((n, 4)), np.zeros((n, 4)), np.zeros(n), np.full(n, np.nan)]
    with pytest.raises(ValueError, match="context biases c hold NaN"):
        GloVeVEstimator(n_components=4, pretrained=parameters, progress=False).fit(small_matrix)


@pytest.mark.parametrize("X, message", [
    (np.ones((3, 4)), "square"),
    (-np.ones((3, 3)), "Negative values in data"),
    (np.array([[1.0, np.nan], [1.0, 1.0]]), "NaN"),
    (np.array([[1.0, np.inf], [1.0, 1.0]]), "infinity"),
    (np.zeros((3, 3)), "no positive entry"),
    (np.ones((3, 3)), "n_components=3 must be smaller than the number of words \\(3\\)"),
    (np.ones((1, 1)), "^the co-occurrence matrix has 1 word \\(1 sample, shape=\\(1, 1\\)\\); GloVe needs at least 2$"),
])
def test_bad_matrices_are_refused(X, message):
    with pytest.raises(ValueError, match=message):
        GloVeVEstimator(n_components=3, epochs=1, progress=False).fit(X)


@pytest.mark.parametrize("params, message", [
    ({"covariance_storage": 3}, "covariance_storage must be"),
    ({"covariance_dtype": "int8"}, "covariance_dtype must be"),
    ({"n_components": 0}, "n_components must be >= 1"),
    ({"x_max": -1.0}, "x_max"),
])
def test_bad_parameters_are_refused(small_matrix, params, message):
    params = {"n_components": 3, "epochs": 1, "progress": False, **params}
    with pytest.raises((ValueError, TypeError), match=message):
        GloVeVEstimator(**params).fit(small_matrix)


def test_transform_is_weighted_least_squares_with_a_free_bias(small_matrix):
    model = GloVeVEstimator(n_components=5, epochs=5, random_state=0, n_jobs=1, point_estimate="trained",
                            progress=False).fit(small_matrix)
    rows = small_matrix[np.flatnonzero(np.diff(small_matrix.indptr) > 40)[:25]]
    fitted = model.conditional_fit(rows)
    np.testing.assert_array_equal(model.transform(rows), fitted.embedding)
    for k in range(rows.shape[0]):
        row = rows.getrow(k)
        root = np.sqrt(glove_weights(row.data))
        design = np.column_stack([model.context_embedding_[row.indices], np.ones(row.nnz)]) * root[:, None]
        target = root * (np.log(row.data) - model.context_bias_[row.indices])
        solution = np.linalg.lstsq(design, target, rcond=None)[0]
        np.testing.assert_allclose(fitted.embedding[k], solution[:5], rtol=1e-8, atol=1e-10)
        assert fitted.bias[k] == pytest.approx(solution[5], rel=1e-8, abs=1e-10)
        residual = target - design @ solution
        s2 = residual @ residual / (row.nnz - 6)
        assert fitted.sigma2[k] == pytest.approx(s2, rel=1e-10)
        if not fitted.covariance.pseudo_inverse[k]:
            expected = s2 * np.linalg.inv(design.T @ design)[:5, :5]
            np.testing.assert_allclose(fitted.covariance[k], expected, rtol=1e-9, atol=1e-15)


def test_transform_refuses_rows_with_too_few_contexts(small_matrix):
    model = GloVeVEstimator(n_components=5, epochs=2, random_state=0, n_jobs=1, point_estimate="trained",
                            progress=False).fit(small_matrix)
    rows = sp.lil_matrix((2, small_matrix.shape[0]))
    rows[0, :3] = 1.0
    rows[1, :] = 2.0
    with pytest.raises(ValueError, match="row 0 has 3"):
        model.transform(rows.tocsr())
    assert np.isnan(model.conditional_fit(rows.tocsr()).embedding[0]).all()
    with pytest.raises(ValueError, match="features"):
        model.transform(rows.tocsr()[:, :-1])


def test_progress_is_shown_on_request(small_matrix, capsys):
    GloVeVEstimator(n_components=3, epochs=1, progress=True).fit(small_matrix)
    err = capsys.readouterr().err
    assert all(stage in err for stage in ("training GloVe", "GloVe-V prior", "GloVe-V sweep", "GloVe-V covariances"))
    GloVeVEstimator(n_components=3, epochs=1, point_estimate="trained", progress=True).fit(small_matrix)
    err = capsys.readouterr().err
    assert "training GloVe" in err and "GloVe-V covariances" in err and "GloVe-V prior" not in err


def test_word_counts_travel_with_the_matrix_to_gensims_count():
    documents = list(glovev_ext.load_default_corpus(max_documents=300))
    vectorizer = glovev_ext.CooccurrenceVectorizer(min_count=3, progress=False)
    X = vectorizer.fit_transform(documents)
    np.testing.assert_array_equal(X.counts, vectorizer.word_counts_)
    np.testing.assert_array_equal(X.copy().counts, X.counts)
    model = GloVeVEstimator(4, epochs=1, random_state=0, progress=False).fit(X)
    np.testing.assert_array_equal(model.word_counts_, vectorizer.word_counts_)
    kv = glovev_ext.KeyedVectorsWithVariance.from_estimator(model)
    assert [kv.get_vecattr(w, "count") for w in X.words] == list(vectorizer.word_counts_)
    word = X.words[-1]
    kv.sort_by_descending_frequency()
    counts = [kv.get_vecattr(w, "count") for w in kv.index_to_key]
    assert counts == sorted(counts, reverse=True)
    np.testing.assert_array_equal(kv[word], model.embedding_[len(X.words) - 1])
    if kv.has_covariance(word):
        np.testing.assert_array_equal(kv.covariance(word), model.covariance_[word])
    assert GloVeVEstimator(4, epochs=1, random_state=0, progress=False).fit(sp.csr_matrix(X)).word_counts_ is None


@pytest.mark.parametrize("counts, message", [([1, 2], "counts has 2 entries for a matrix with 3 rows"),
                                             ([1, -2, 3], "non-negative integers"),
                                             ([1.5, 2, 3], "non-negative integers")])
def test_a_matrix_refuses_counts_that_do_not_fit(counts, message):
    with pytest.raises(ValueError, match=message):
        glovev_ext.CooccurrenceMatrix(sp.identity(3, format="csr"), counts=counts)
