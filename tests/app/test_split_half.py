"""The split-half check: its numbers against a brute-force computation, and its verdict on halves whose
covariances are right by construction."""

from __future__ import annotations

import numpy as np
import pytest
from gensim.models import KeyedVectors
from scipy import stats

import glovev_ext
from glovev_ext.split_half import compare_halves, split_half_check


@pytest.fixture(scope="module")
def documents() -> list[str]:
    return list(glovev_ext.load_default_corpus(max_documents=3000))


@pytest.fixture(scope="module")
def fitted(documents):
    return glovev_ext.fit_corpus(documents, estimator=glovev_ext.GloVeVEstimator(n_components=8, epochs=5, n_jobs=1),
                                 progress=False)


@pytest.fixture(scope="module")
def check(fitted, documents):
    return split_half_check(fitted, documents, n_pairs=12, bands=(5, 30, 200), random_state=3, progress=False)


def brute_cosine_and_error(kv, a, b) -> tuple[float, float]:
    """cos(a, b) and its delta-method standard error, from the vectors and covariances by hand."""
    x, y = np.asarray(kv[a], dtype=np.float64), np.asarray(kv[b], dtype=np.float64)
    nx, ny = np.linalg.norm(x), np.linalg.norm(y)
    cosine = x @ y / (nx * ny)
    gx, gy = y / (nx * ny) - cosine * x / nx**2, x / (nx * ny) - cosine * y / ny**2
    return cosine, float(np.sqrt(gx @ kv.covariance(a) @ gx + gy @ kv.covariance(b) @ gy))


def gradient(kv, pair, word) -> np.ndarray:
    """d cos(first, second) / d word, by hand."""
    other = pair["second"] if word == pair["first"] else pair["first"]
    x, y = np.asarray(kv[word], dtype=np.float64), np.asarray(kv[other], dtype=np.float64)
    nx, ny = np.linalg.norm(x), np.linalg.norm(y)
    return y / (nx * ny) - (x @ y / (nx * ny)) * x / nx**2


def difference_covariance(half_a, half_b, word, precision) -> np.ndarray:
    """Var(w_A - w_B) by hand: posteriors under one prior, whose errors share shared_a P shared_b (docs/method.md
    6.12), each the covariance before its widening along the word's vector, each widening (of its own length) along
    (I - shared P) u, u the direction of the two means' sum (6.22)."""
    unit = np.asarray(half_a[word], dtype=np.float64) + np.asarray(half_b[word], dtype=np.float64)
    unit /= np.linalg.norm(unit)
    joint = np.zeros((unit.size, unit.size))
    shared = []
    for half in (half_a, half_b):
        covariance, along = half.covariance(word), half.covariance_factor(word).along
        base = covariance if along is None else covariance - np.outer(along, along)
        shared.append(base)
        joint += base
        if along is not None:
            direction = unit - base @ precision @ unit
            direction *= np.linalg.norm(along) / np.linalg.norm(direction)
            joint += np.outer(direction, direction)
    return joint - shared[0] @ precision @ shared[1] - shared[1] @ precision @ shared[0]


def test_every_number_equals_a_computation_by_hand(fitted, documents, check):
    side = np.random.default_rng(3).random(len(documents)) < 0.5
    halves = glovev_ext.fit_subcorpora(fitted, {"A": [d for d, s in zip(documents, side) if s],
                                                "B": [d for d, s in zip(documents, side) if not s]})
    half_a, half_b = halves["A"], halves["B"]
    pooled, precision = fitted.keyed_vectors, fitted.estimator.prior_.precision
    both = [w for w in half_a.index_to_key if w in half_b.key_to_index and pooled.get_vecattr(w, "count") >= 5]
    assert list(check.words.index) == both
    widened = 0
    for word in both[::37]:
        row = check.words.loc[word]
        difference = half_a[word] - half_b[word]
        sum_a, sum_b = half_a.covariance(word), half_b.covariance(word)
        widened += half_a.covariance_factor(word).along is not None
        joint = difference_covariance(half_a, half_b, word, precision)
        assert row["wald_per_dim"] == pytest.approx(difference @ np.linalg.solve(joint, difference) / 8)
        traces = np.array([np.trace(sum_a), np.trace(sum_b)])
        dofs = np.array([half_a.covariance_factor(word).dof, half_b.covariance_factor(word).dof])
        spread = (traces**2 / dofs).sum()
        df = np.inf if spread == 0 else traces.sum() ** 2 / spread
        expected = 1.0 if np.isinf(df) else df / (df - 2)
        assert row["df"] == pytest.approx(df) and row["expected"] == pytest.approx(expected)
        assert row["pvalue"] == pytest.approx(stats.f.sf(row["wald_per_dim"], 8, df))
        count = pooled.get_vecattr(word, "count")
        assert row["count"] == count and row["band"] == ("5-29" if count < 30 else "30-199" if count < 200 else "200+")
    assert widened > 0
    for _, pair in check.pairs.iterrows():
        (cos_a, se_a), (cos_b, se_b) = (brute_cosine_and_error(h, pair["first"], pair["second"])
                                        for h in (half_a, half_b))
        assert pair["cos_a"] == pytest.approx(cos_a) and pair["se_b"] == pytest.approx(se_b)
        # the difference's variance with the prior's shared part out, the two halves' gradients averaged
        variance = 0.0
        for word in (pair["first"], pair["second"]):
            mean = (gradient(half_a, pair, word) + gradient(half_b, pair, word)) / 2
            variance += mean @ difference_covariance(half_a, half_b, word, precision) @ mean
        assert pair["z"] == pytest.approx((cos_a - cos_b) / np.sqrt(variance))
        assert check.words.loc[pair["first"], "band"] == check.words.loc[pair["second"], "band"] == pair["band"]
    pair = check.pairs.iloc[5]
    expected = glovev_ext.compare_models([
        half_a.similarity_test(pair["first"], pair["second"], random_state=int(pair["seed"])),
        half_b.similarity_test(pair["first"], pair["second"], random_state=int(pair["seed"]) + 1)]).equality()
    assert pair["equality_pvalue"] == pytest.approx(float(np.asarray(expected.pvalue)))
    # the pairwise test of the same two results, against the same null draws: the same p to their resolution
    assert abs(pair["pairwise_pvalue"] - pair["equality_pvalue"]) <= 2.5 / 2000
    assert len(check.pairs) == 36 and len(set(zip(check.pairs["first"], check.pairs["second"]))) == 36


def test_the_summary_aggregates_the_frames(check):
    frame = check.summary_frame()
    assert list(frame.index) == ["5-29", "30-199", "200+"]
    for band, row in frame.iterrows():
        words = check.words[check.words["band"] == band]
        finite = words[np.isfinite(words["expected"])]
        pairs = check.pairs[check.pairs["band"] == band]
        assert row["words"] == len(words) and row["pairs"] == len(pairs)
        assert row["ratio"] == pytest.approx(finite["wald_per_dim"].mean() / finite["expected"].mean())
        assert row["vector test rejects"] == pytest.approx(np.mean(words["pvalue"] < 0.05))
        assert row["sd of z"] == pytest.approx(np.std(pairs["z"], ddof=1))
        assert row["linear z rejects"] == pytest.approx(np.mean(np.abs(pairs["z"]) > 1.959964))
        assert row["equality rejects"] == pytest.approx(np.mean(pairs["equality_pvalue"] < 0.05))
        assert row["pairwise rejects"] == pytest.approx(np.mean(pairs["pairwise_pvalue"] < 0.05))
        assert row["equality KS p"] == pytest.approx(stats.kstest(pairs["equality_pvalue"], "uniform").pvalue)


def simulated_half(kv, words: list, truth: np.ndarray, seed: int, known: bool = False):
    """A half whose vectors are drawn around ``truth`` from ``kv``'s covariances: calibrated by construction
    (``known``: the covariances taken as known, infinite degrees of freedom, as for a pooled ``s2``)."""
    rows = np.array([kv.covariance_row(w) for w in words])
    store = kv.covariance_store.take(rows, words=words)
    if known:
        store.per_word.dof[:] = np.inf
    noise = np.stack([store.factor(k).transform_normal(z[None])[0] for k, z in
                      enumerate(np.random.default_rng(seed).standard_normal((len(words), kv.vector_size)))])
    vectors = KeyedVectors(kv.vector_size, 0, dtype=np.float64)
    vectors.add_vectors(words, truth + noise)
    return glovev_ext.KeyedVectorsWithVariance.from_keyed_vectors(vectors, store)


@pytest.mark.parametrize("known", [False, True])
def test_halves_with_right_covariances_pass_the_check(fitted, known):
    kv = fitted.keyed_vectors
    words = [w for w in kv.index_to_key if kv.has_covariance(w) and kv.covariance_factor(w).dof > 60]
    # true vectors 20 noise lengths long, where a cosine's delta method is accurate (the trained vectors
    # of this short fit are shorter than their noise)
    truth = np.array([kv[w] / np.linalg.norm(kv[w]) * 20 * np.sqrt(np.trace(kv.covariance(w))) for w in words])
    counts = {w: kv.get_vecattr(w, "count") for w in words}
    check = compare_halves(simulated_half(kv, words, truth, 1, known), simulated_half(kv, words, truth, 2, known),
                           counts, n_pairs=300, bands=(1,), random_state=0, progress=False)
    assert (check.words["expected"] == 1.0).all() == known  # chi2(D) / D has mean 1
    (_, row), = check.summary_frame().iterrows()
    n = row["words"]
    assert n > 300 and row["pairs"] == 300
    # the mean of n F(8, >60) statistics: sd about sqrt(2 / 8 / n); the rejection rates: binomial
    assert abs(row["ratio"] - 1) < 4 * np.sqrt(2 / 8 / n), row
    assert abs(row["vector test rejects"] - 0.05) < 4 * np.sqrt(0.05 * 0.95 / n), row
    assert abs(row["sd of z"] - 1) < 0.15 and abs(row["linear z rejects"] - 0.05) < 0.04, row
    assert abs(row["equality rejects"] - 0.05) < 0.04, row


def test_bad_arguments_are_refused_by_name(fitted, documents):
    with pytest.raises(ValueError, match="n_pairs must be >= 1"):
        split_half_check(fitted, documents, n_pairs=0, progress=False)
    with pytest.raises(ValueError, match="at least two documents"):
        split_half_check(fitted, documents[:1], progress=False)
    with pytest.raises(ValueError, match="confidence_level must be in"):
        split_half_check(fitted, documents, confidence_level=95, progress=False)
