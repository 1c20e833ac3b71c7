"""similarity_tests: each row equals similarity() for its pair, and the delta rows equal a brute-force computation."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from glovev_ext import UndefinedCovarianceError
from glovev_ext.stats import similarity, similarity_tests


@pytest.fixture
def kv(stats_kv):
    """The shared D = 10 model of the whole embedded corpus (read only)."""
    return stats_kv


@pytest.fixture
def pairs(kv):
    """Random pairs of words with a covariance, rare and frequent, many sharing a word."""
    usable = [w for w in kv.index_to_key if kv.unusable_reason(w) is None]
    rng = np.random.default_rng(5)
    chosen = [tuple(map(str, rng.choice(usable[-40:], 2, replace=False))) for _ in range(6)]
    chosen += [tuple(map(str, rng.choice(usable[:60], 2, replace=False))) for _ in range(15)]
    chosen += [tuple(map(str, rng.choice(usable, 2, replace=False))) for _ in range(25)]
    return [("man", "woman"), ("man", "king"), ("woman", "man"), *chosen]


def rows_of(result):
    return np.column_stack([result.estimates, result.std_errors, result.df, result.statistics, result.pvalues,
                            result.conf_int(confidence_level=0.9)])


@pytest.mark.parametrize("options", [
    dict(),
    dict(use_t=False, scale="linear"),
    dict(null_value=0.2, alternative="larger"),
    dict(null_value=-0.1, alternative="smaller", use_t=False),
])
def test_delta_rows_equal_one_similarity_per_pair(kv, pairs, options):
    table = similarity_tests(kv, pairs, method="delta", **options)
    one_by_one = [similarity(kv, a, b, method="delta", **options) for a, b in pairs]
    expected = np.array([[r.estimate, r.std_error, r.df, r.statistic, r.pvalue, *r.conf_int(confidence_level=0.9)]
                         for r in one_by_one])
    np.testing.assert_allclose(rows_of(table), expected, rtol=1e-12, atol=1e-15)
    assert table.methods == ("delta method",) * len(pairs)


def test_delta_variances_equal_dense_covariances_and_finite_difference_gradients(kv, pairs):
    table = similarity_tests(kv, pairs, method="delta")

    def cos(u, v):
        return u @ v / np.sqrt((u @ u) * (v @ v))

    for row, (a, b) in enumerate(pairs):
        u, v = (np.asarray(kv.get_vector(w), dtype=np.float64) for w in (a, b))
        step = 1e-6
        grad_u = np.array([(cos(u + step * e, v) - cos(u - step * e, v)) / (2 * step) for e in np.eye(u.size)])
        grad_v = np.array([(cos(u, v + step * e) - cos(u, v - step * e)) / (2 * step) for e in np.eye(v.size)])
        parts = [grad_u @ kv.covariance(a) @ grad_u, grad_v @ kv.covariance(b) @ grad_v]
        np.testing.assert_allclose(table.variance_contributions[row], parts, rtol=1e-6)
        nu = [kv.covariance_factor(w).dof for w in (a, b)]
        welch = sum(parts) ** 2 / (parts[0] ** 2 / nu[0] + parts[1] ** 2 / nu[1])
        assert table.df[row] == pytest.approx(welch, rel=1e-9)
        assert table.estimates[row] == pytest.approx(cos(u, v), rel=1e-12)
    low, high = table.conf_int().T
    assert ((-1 <= low) & (low <= table.estimates) & (table.estimates <= high) & (high <= 1)).all()


def test_auto_rows_equal_one_similarity_per_pair_with_the_same_random_state(kv, pairs):
    table = similarity_tests(kv, pairs[:8], n_draws=200, random_state=4)
    one_by_one = [similarity(kv, a, b, n_draws=200, random_state=4) for a, b in pairs[:8]]
    seeded = similarity_tests(kv, pairs[:8], n_draws=200, random_state=np.random.default_rng(4))
    seed = int(np.random.default_rng(4).integers(2**63))  # a Generator gives one seed to every pair
    np.testing.assert_allclose(seeded.conf_int()[5], similarity(kv, *pairs[5], n_draws=200,
                                                                 random_state=seed).conf_int(), rtol=1e-12)
    expected = np.array([[r.estimate, r.std_error, r.df, r.statistic, r.pvalue, *r.conf_int(confidence_level=0.9)]
                         for r in one_by_one])
    np.testing.assert_allclose(rows_of(table), expected, rtol=1e-12, atol=1e-15)
    assert table.methods == tuple(r.method for r in one_by_one)
    assert table.method_reasons == tuple(r.method_reason for r in one_by_one)
    assert "Monte Carlo" in table.methods and "delta method" in table.methods, "a branch is left unchecked"


def test_monte_carlo_rows_use_their_draws(kv, pairs):
    table = similarity_tests(kv, pairs[:4], method="monte carlo", n_draws=300, random_state=1)
    for row, (a, b) in enumerate(pairs[:4]):
        one = similarity(kv, a, b, method="monte carlo", n_draws=300, random_state=1)
        np.testing.assert_allclose(table.conf_int()[row], one.conf_int(), rtol=1e-12)
        assert table.pvalues[row] == pytest.approx(one.pvalue, rel=1e-12)


def test_table_summary_and_multiple_testing(kv, pairs):
    table = kv.similarity_tests(pairs, method="delta")
    frame = table.summary_frame()
    assert list(frame.index) == [f"cos({a}, {b})" for a, b in pairs]
    assert list(frame.columns) == ["coef", "std err", "t (atanh)", "P>|t|", "Conf. Int. Low", "Conf. Int. Upp.",
                                   "df", "method"]
    text = str(table.summary())
    assert "each row its own test" in text and f"delta method for {len(pairs)} of {len(pairs)} pairs" in text
    holm = table.correct("holm")
    assert isinstance(holm, type(table)) and holm.correction == "holm"
    np.testing.assert_allclose(holm.pvalues_adjusted, multipletests(table.pvalues, method="holm")[1])
    np.testing.assert_allclose(holm.summary_frame()["P adj. (holm)"], holm.pvalues_adjusted)
    assert "P adj. (holm)" in str(holm.summary())
    with pytest.warns(DeprecationWarning, match=r"correct\(\) without a method is deprecated and will be removed in "
                                                r"glovev-ext 0\.4; use correct\('fdr_bh'\)"):
        np.testing.assert_allclose(table.correct().pvalues_adjusted, multipletests(table.pvalues, method="fdr_bh")[1])


def test_unusable_pairs_raise_or_are_dropped_and_counted(kv, pairs):
    with pytest.raises(UndefinedCovarianceError, match="zzzunknown"):
        similarity_tests(kv, [*pairs, ("man", "zzzunknown")], method="delta")
    rare = next(w for w in kv.index_to_key if not kv.has_covariance(w))
    table = similarity_tests(kv, [*pairs, ("man", "zzzunknown"), (rare, "woman")], method="delta", missing="drop")
    assert len(table) == len(pairs) and len(table.dropped) == 2
    text = str(table.summary())
    assert "2 pairs dropped (1 with a word not in the vocabulary, 1 with a word without a covariance)" in text
    assert "zzzunknown" in text and rare in text
    with pytest.raises(ValueError, match="a pair needs two different words"):
        similarity_tests(kv, [("man", "man")])
    with pytest.raises(ValueError, match="each pair must hold two words"):
        similarity_tests(kv, [("man", "woman", "king")])


def test_a_two_stage_correction_uses_the_level_it_is_given(kv, pairs):
    table = kv.similarity_tests(pairs, method="delta")
    corrected = table.correct("fdr_tsbh", significance_level=0.2)
    np.testing.assert_allclose(corrected.pvalues_adjusted,
                               multipletests(table.pvalues, alpha=0.2, method="fdr_tsbh")[1], rtol=1e-12)
    np.testing.assert_allclose(corrected.summary_frame()["P adj. (fdr_tsbh)"], corrected.pvalues_adjusted, rtol=1e-12)
    with pytest.raises(ValueError):
        table.correct("no such method")
