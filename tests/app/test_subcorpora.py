"""Sub-corpora in one basis (against weighted least squares by hand) and study planning (against the library's tests)."""

from __future__ import annotations

import numpy as np
import pytest

import glovev_ext
from glovev_ext.stats import cosine_statistic, minimum_detectable_effect, power

DIM = 6


@pytest.fixture(scope="module")
def documents() -> list[str]:
    return list(glovev_ext.load_default_corpus(max_documents=3000))


@pytest.fixture(scope="module")
def pooled(documents) -> glovev_ext.FittedCorpus:
    """The paper's recipe, whose sub-corpus rows are plain weighted least squares (the posterior's are tested in
    tests/covariance/test_prior.py)."""
    return glovev_ext.fit_corpus(documents, estimator=glovev_ext.GloVeVEstimator(n_components=DIM, epochs=5, n_jobs=1,
                                                                                 point_estimate="trained"),
                                 progress=False)


@pytest.fixture(scope="module")
def halves(pooled, documents) -> dict:
    """The halves' rows as fitted, their translation kept (the plain weighted least squares)."""
    return glovev_ext.fit_subcorpora(pooled, {"first": documents[:1500], "second": documents[1500:]},
                                     translation="keep")


def test_a_subcorpus_row_is_the_weighted_least_squares_fit_given_the_pooled_contexts(pooled, documents, halves):
    """Vector and covariance of words in a half equal the WLS of its counts on [C_j, 1] (bias free), by lstsq."""
    kv = halves["first"]
    counts = glovev_ext.CooccurrenceVectorizer(min_count=5, progress=False).fit(documents)  # the pooled vocabulary
    X = counts.transform(documents[:1500])
    estimator = pooled.estimator
    words = list(X.words)
    for word in ("man", "house", kv.index_to_key[len(kv) // 2]):
        i = words.index(word)
        cols, values = X.indices[X.indptr[i]:X.indptr[i + 1]], X.data[X.indptr[i]:X.indptr[i + 1]]
        weights = np.minimum(1.0, (values / 100.0) ** 0.75)
        design = np.column_stack([estimator.context_embedding_[cols], np.ones(cols.size)])
        target = np.log(values) - estimator.context_bias_[cols]
        root = np.sqrt(weights)[:, None]
        solution = np.linalg.lstsq(design * root, target * root[:, 0], rcond=None)[0]
        residual = target - design @ solution
        s2 = (weights * residual**2).sum() / (cols.size - DIM - 1)
        covariance = s2 * np.linalg.inv(design.T @ (weights[:, None] * design))[:DIM, :DIM]
        np.testing.assert_allclose(kv.get_vector(word), solution[:DIM], rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(kv.covariance(word), covariance, rtol=1e-7, atol=1e-12)


def test_subcorpora_keep_exactly_the_words_they_can_fit(pooled, documents, halves):
    X = pooled.vectorizer.transform(documents[1500:])
    fitted_words = {X.words[i] for i in np.flatnonzero(np.diff(X.indptr) > DIM)}
    kv = halves["second"]
    assert isinstance(kv, glovev_ext.KeyedVectorsWithVariance)
    assert set(kv.index_to_key) <= fitted_words and len(kv) >= 0.99 * len(fitted_words)
    assert all(kv.unusable_reason(w) is None for w in kv.index_to_key[:200])
    assert kv.index_to_key == [w for w in pooled.keyed_vectors.index_to_key if w in kv.key_to_index]
    assert kv.most_similar("man", topn=3)  # a gensim workflow on a sub-corpus


def test_subcorpora_of_the_default_posterior_keep_every_word_with_two_contexts(documents):
    estimator = glovev_ext.GloVeVEstimator(n_components=DIM, epochs=5, n_jobs=1)
    pooled = glovev_ext.fit_corpus(documents, estimator=estimator, progress=False)
    kv = glovev_ext.fit_subcorpora(pooled, {"second": documents[1500:]}, translation="keep")["second"]
    assert kv.prior is pooled.estimator.prior_  # posteriors under the pooled prior, which comparisons take out
    X = pooled.vectorizer.transform(documents[1500:])
    expected = pooled.estimator.conditional_fit(X)
    kept = np.flatnonzero(np.diff(X.indptr) >= 2)
    assert kv.index_to_key == [X.words[i] for i in kept]
    np.testing.assert_array_equal(kv.vectors, expected.embedding[kept])
    word = X.words[int(kept[-1])]
    np.testing.assert_array_equal(kv.covariance(word), expected.covariance[int(kept[-1])])


def _stacked_translation(kept, pooled_kv, words, precision):
    """The generalised least squares of ``w - w_pooled = (I - S P) v`` over ``words``, by whitening and lstsq."""
    blocks, right = [], []
    for word in words:
        covariance = kept.covariance_factor(word)
        base = (covariance if covariance.unwidened is None else covariance.unwidened).dense()
        lower = np.linalg.cholesky(base)  # weighted by the covariance before widening, which no translation moves
        blocks.append(np.linalg.solve(lower, np.eye(DIM) - base @ precision))
        right.append(np.linalg.solve(lower, kept[word] - pooled_kv[word]))
    return np.linalg.lstsq(np.vstack(blocks), np.concatenate(right), rcond=None)[0]


@pytest.mark.parametrize("recipe", ["trained", "posterior"])
def test_a_subcorpus_loses_the_translation_its_context_biases_leave_free(documents, pooled, recipe):
    """Rows fitted at context biases moved by ``-c_j . v0`` move by ``v0`` (through the prior: ``(I - S P) v0``) and
    are the same once the translation is out, covariances (widened along the moved vectors) included; it is the least
    squares over the rows of largest total."""
    import copy
    if recipe == "posterior":
        pooled = glovev_ext.fit_corpus(documents, estimator=glovev_ext.GloVeVEstimator(n_components=DIM, epochs=5,
                                                                                       n_jobs=1), progress=False)
    precision = np.zeros((DIM, DIM)) if pooled.estimator.prior_ is None else pooled.estimator.prior_.precision
    part = {"first": documents[:1500]}
    kept = glovev_ext.fit_subcorpora(pooled, part, translation="keep")["first"]
    removed = glovev_ext.fit_subcorpora(pooled, part)["first"]
    move = np.random.default_rng(0).normal(size=DIM)
    gauged = copy.deepcopy(pooled)
    gauged.estimator.context_bias_ = pooled.estimator.context_bias_ - pooled.estimator.context_embedding_ @ move
    kept_gauged = glovev_ext.fit_subcorpora(gauged, part, translation="keep")["first"]
    removed_gauged = glovev_ext.fit_subcorpora(gauged, part)["first"]
    assert kept.index_to_key == removed.index_to_key == kept_gauged.index_to_key == removed_gauged.index_to_key
    rows = pooled.vectorizer.transform(documents[:1500])
    totals = np.asarray(rows.sum(axis=1)).ravel()
    words = list(rows.words)
    largest = sorted((w for w in kept.index_to_key if w in pooled.keyed_vectors.key_to_index),
                     key=lambda w: -totals[words.index(w)])[:1000]
    found = _stacked_translation(kept, pooled.keyed_vectors, largest, precision)
    for word in kept.index_to_key[::40]:
        factor = kept.covariance_factor(word)
        base = (factor if factor.unwidened is None else factor.unwidened).dense()
        design = np.eye(DIM) - base @ precision
        np.testing.assert_allclose(kept_gauged[word], kept[word] + design @ move, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(removed[word], kept[word] - design @ found, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(removed_gauged[word], removed[word], rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(removed_gauged.covariance(word), removed.covariance(word), rtol=1e-6, atol=1e-10)
        removed_factor = removed.covariance_factor(word)
        np.testing.assert_array_equal((removed_factor if removed_factor.unwidened is None
                                       else removed_factor.unwidened).dense(), base)
        if recipe == "trained":  # nothing widened: the covariance is the fit's
            np.testing.assert_array_equal(removed.covariance(word), kept.covariance(word))
    assert np.linalg.norm(found) > 1e-3  # there was a translation to take out
    with pytest.raises(ValueError, match="translation must be one of"):
        glovev_ext.fit_subcorpora(pooled, part, translation="center")


def test_no_subcorpus_is_an_error(pooled):
    with pytest.raises(ValueError, match="no sub-corpus"):
        glovev_ext.fit_subcorpora(pooled, {})
    with pytest.raises(ValueError, match="no word has more than D"):
        glovev_ext.fit_subcorpora(pooled, {"tiny": ["the man"]})


def test_the_plan_reports_what_the_library_computes_and_projects_by_the_square_root_rule(pooled):
    """se now is the delta method's; se(k) = se / sqrt(k); the MDEs invert the power of the library's test;
    max D is the fewest contexts (nonzeros of the words' rows) minus one."""
    statistic = cosine_statistic([("man", "woman")])
    kv = pooled.keyed_vectors
    plan = glovev_ext.plan_study(kv, {"man-woman": statistic}, corpus_scales=(1, 4))
    now = kv.similarity_test("man", "woman", method="delta")
    row = plan.statistics.loc["man-woman"]
    assert row["std err"] == pytest.approx(now.std_error, rel=1e-12) and row["estimate"] == pytest.approx(now.estimate)
    projected = plan.projection.loc[("man-woman", 4.0)]
    assert projected["std err"] == pytest.approx(now.std_error / 2, rel=1e-12)
    mde = minimum_detectable_effect(now.std_error / 2, at=now.estimate, df=now.df, bounds=(-1, 1), scale="bounded")
    assert projected["MDE"] == pytest.approx(mde, rel=1e-9)
    assert power(mde, now.std_error / 2, at=now.estimate, df=now.df, bounds=(-1, 1), scale="bounded") == \
        pytest.approx(0.8, abs=1e-8)
    assert projected["MDE, two corpora"] == pytest.approx(minimum_detectable_effect(
        np.sqrt(2) * now.std_error / 2, df=now.df, bounds=(-2, 2), scale="bounded"), rel=1e-9)
    assert plan.projection.loc[("man-woman", 1.0), "MDE"] > projected["MDE"]
    contexts = np.diff(pooled.cooccurrence.indptr)
    words = list(pooled.cooccurrence.words)
    assert row["max D"] == min(contexts[words.index("man")], contexts[words.index("woman")]) - 1
    assert "se(k) = se / sqrt(k)" in str(plan)


def test_a_plan_refuses_what_it_cannot_plan(pooled):
    kv = pooled.keyed_vectors
    with pytest.raises(ValueError, match="single-valued"):
        glovev_ext.plan_study(kv, {"two": cosine_statistic([("man", "woman"), ("man", "boy")])})
    with pytest.raises(ValueError, match="corpus_scales must be positive"):
        glovev_ext.plan_study(kv, cosine_statistic([("man", "woman")]), corpus_scales=(1, 0))
    with pytest.raises(glovev_ext.UndefinedCovarianceError, match="zzzz"):
        glovev_ext.plan_study(kv, cosine_statistic([("man", "zzzz")]))


def test_subcorpora_told_their_groups_are_scaled_at_their_own_concentrations(documents, monkeypatch):
    from glovev_ext.counting import CooccurrenceMatrix, group_concentration
    from glovev_ext.covariance import NoiseScale
    from glovev_ext.covariance.noise_scale import ScaleCurve
    estimator = glovev_ext.GloVeVEstimator(n_components=DIM, epochs=5, n_jobs=1)
    fitted = glovev_ext.fit_corpus(documents, estimator=estimator, calibrate_noise=False, progress=False)
    curve = ScaleCurve(np.log([10.0, 1000.0]), np.array([2.0, 3.0]), np.array([60, 60]), np.array([4.0, 4.0]),
                       np.array([0.2, 0.2]))
    monkeypatch.setattr(fitted.estimator, "noise_scale_", NoiseScale(curve, ScaleCurve.empty()))
    labels = np.arange(len(documents)) // 100  # 30 "books" of 100 paragraphs
    parts = {"first": documents[:1500], "second": iter(documents[1500:])}  # a one-shot iterator is read twice
    halves = glovev_ext.fit_subcorpora(fitted, parts, groups={"first": labels[:1500], "second": labels[1500:]})
    for name, chosen in (("first", slice(0, 1500)), ("second", slice(1500, None))):
        rows = fitted.vectorizer.transform(documents[chosen])
        x = group_concentration(fitted.vectorizer.count_by_group(documents[chosen], labels[chosen]))
        told = fitted.estimator.conditional_fit(CooccurrenceMatrix(rows, group_concentration=x))
        level = fitted.estimator.conditional_fit(rows)
        words = list(rows.words)
        kv = halves[name]
        moved = 0
        for word in kv.index_to_key[::50]:
            i = words.index(word)
            np.testing.assert_allclose(kv.covariance(word), told.covariance[i], rtol=1e-10)
            moved += not np.allclose(told.covariance[i], level.covariance[i], rtol=1e-6)
        assert moved > 0
    alone = glovev_ext.fit_subcorpora(fitted, {"first": documents[:1500]})["first"]  # no labels: the level
    i = list(fitted.vectorizer.transform(documents[:1500]).words).index("man")
    np.testing.assert_allclose(alone.covariance("man"), level_of(fitted, documents[:1500])[i], rtol=1e-10)
    with pytest.raises(ValueError, match="groups names 'third', which is not a sub-corpus"):
        glovev_ext.fit_subcorpora(fitted, {"first": documents[:1500]}, groups={"third": labels[:10]})
    # a scale by total only: the labels change no factor, so the words are not counted by group
    by_total_curve = ScaleCurve(curve.log_totals, curve.factors, curve.n_words)
    monkeypatch.setattr(fitted.estimator, "noise_scale_", NoiseScale(by_total_curve, ScaleCurve.empty()))
    monkeypatch.setattr(type(fitted.vectorizer), "count_by_group", lambda *_: pytest.fail("counted by group"))
    by_total = glovev_ext.fit_subcorpora(fitted, {"first": documents[:1500]}, groups={"first": labels[:1500]})
    unlabelled = glovev_ext.fit_subcorpora(fitted, {"first": documents[:1500]})
    np.testing.assert_array_equal(by_total["first"].covariance("man"), unlabelled["first"].covariance("man"))


def level_of(fitted, documents):
    return fitted.estimator.conditional_fit(fitted.vectorizer.transform(documents)).covariance
