"""The variance along each word's own vector (docs/method.md 6.22): the widening, the split of a Wald statistic,
the factor that calibrates it, and a store and a comparison that keep it apart from the prior's shared part."""

import numpy as np
import pytest

from glovev_ext.covariance import CovarianceStore, CovarianceStoreWriter, Factor, NoiseScale
from glovev_ext.covariance.along import along_direction, along_factor_of, redirected, split_wald, widening
from glovev_ext.covariance.noise_scale import HalfComparison, ScaleCurve, along_curve
from glovev_ext.covariance.prior import posterior_difference, shared_prior_difference

DIM = 5


def posterior_factor(seed: int, s2: float = 0.7) -> tuple[Factor, np.ndarray, np.ndarray]:
    """A posterior's factor ``s2 (H + s2 P)^-1``, its dense covariance and the prior's precision."""
    rng = np.random.default_rng(seed)
    design = rng.normal(size=(12, DIM))
    precision = np.diag(rng.uniform(0.5, 2.0, DIM))
    covariance = s2 * np.linalg.inv(design.T @ design + s2 * precision)
    return Factor.of_covariance(covariance), covariance, precision


def test_the_widening_multiplies_the_variance_along_the_direction_noise_in_strength_moves_the_mean():
    factor, covariance, precision = posterior_factor(0)
    mean = np.array([1.0, -2.0, 0.5, 0.3, 1.5])
    unit = mean / np.linalg.norm(mean)
    by_hand = unit - covariance @ precision @ unit  # the posterior mean's weight on its data, times u
    by_hand /= np.linalg.norm(by_hand)
    np.testing.assert_allclose(along_direction(factor, mean, precision), by_hand, rtol=1e-10)
    along = widening(factor, mean, precision, 3.5)
    np.testing.assert_allclose(along, np.sqrt(2.5 * by_hand @ covariance @ by_hand) * by_hand, rtol=1e-10)
    widened = factor.widened(along)
    assert widened.unwidened is factor and widened.along is not None
    assert widened.before_widening is factor and factor.before_widening is factor
    np.testing.assert_allclose(by_hand @ widened.dense() @ by_hand, 3.5 * by_hand @ covariance @ by_hand, rtol=1e-10)
    np.testing.assert_allclose(widened.dense(), covariance + np.outer(along, along), atol=1e-14)
    gradients = np.random.default_rng(1).normal(size=(DIM, 3))  # the factor's products agree with its dense form
    whitened = widened.whiten(gradients)
    np.testing.assert_allclose(whitened.T @ whitened, gradients.T @ widened.dense() @ gradients, rtol=1e-10)
    assert not widening(factor, mean, precision, 1.0).any() and factor.widened(np.zeros(DIM)) is factor
    with pytest.raises(ValueError, match="cannot take another sigma2"):
        widened.with_sigma2(2.0)
    assert along_direction(factor, np.zeros(DIM), precision) is None


def test_a_redirected_widening_keeps_its_length_and_takes_the_direction_of_another_vector():
    factor, covariance, precision = posterior_factor(5)
    along = np.array([0.3, -0.1, 0.2, 0.0, 0.4])
    other = np.array([2.0, 1.0, -1.0, 0.5, 0.2])
    moved = redirected(along, factor, other, precision)
    assert np.linalg.norm(moved) == pytest.approx(np.linalg.norm(along), rel=1e-12)
    np.testing.assert_allclose(moved / np.linalg.norm(moved), along_direction(covariance, other, precision), rtol=1e-10)
    np.testing.assert_allclose(along_direction(covariance, other, precision),
                               along_direction(factor, other, precision), rtol=1e-10)  # dense or factor: the same
    assert redirected(None, factor, other, precision) is None
    assert redirected(along, factor, np.zeros(DIM), precision) is along


def test_the_wald_statistic_splits_exactly_and_a_widening_changes_only_the_part_along():
    rng = np.random.default_rng(2)
    root = rng.normal(size=(DIM, DIM))
    joint = root @ root.T + np.eye(DIM)
    difference, direction = rng.normal(size=DIM), rng.normal(size=DIM)
    direction /= np.linalg.norm(direction)
    along, across, precision_along = split_wald(difference, np.linalg.solve(joint, difference), direction,
                                                np.linalg.solve(joint, direction))
    whole = difference @ np.linalg.solve(joint, difference)
    assert along + across == pytest.approx(whole, rel=1e-12) and along >= 0 and across >= 0
    # across is the statistic of the difference's part that no variance along m can explain: the minimum over t of
    # (d - t m)^T V^-1 (d - t m)
    steps = np.linspace(-20, 20, 400_001)
    residual = difference[None] - steps[:, None] * direction[None]
    assert np.einsum("nd,de,ne->n", residual, np.linalg.inv(joint), residual).min() == pytest.approx(across,
                                                                                                       rel=1e-6)
    added = 0.8  # Sherman-Morrison: a variance c along m divides the part along by 1 + c m^T V^-1 m
    widened = joint + added * np.outer(direction, direction)
    along_2, across_2, _ = split_wald(difference, np.linalg.solve(widened, difference), direction,
                                      np.linalg.solve(widened, direction))
    assert along_2 == pytest.approx(along / (1 + added * precision_along), rel=1e-10)
    assert across_2 == pytest.approx(across, rel=1e-10)


def test_the_along_factor_solves_its_equation_and_recovers_a_known_excess_by_simulation():
    rng = np.random.default_rng(3)
    n, true_factor = 4000, 6.0
    gain = rng.uniform(0.2, 1.5, n)  # each word's g: both fits' variance along m, times m^T V^-1 m
    # the part along is chi2(1) times (1 + (r - 1) g) when each fit's variance along m is r times its covariance's
    along = rng.chisquare(1, n) * (1 + (true_factor - 1) * gain)
    expected = np.ones(n)
    factor = along_factor_of(along, gain, expected)
    assert np.sum(along / (1 + (factor - 1) * gain)) == pytest.approx(n, rel=1e-6)
    assert factor == pytest.approx(true_factor, rel=0.1)
    assert along_factor_of(rng.chisquare(1, n) * 0.9, gain, expected) == 1.0  # at or below expectation: no widening
    assert along_factor_of(along, np.zeros(n), expected) == 1.0  # nothing a widening could change


def test_a_comparison_shows_its_part_along_as_the_scales_along_curve():
    n = 300
    total = np.repeat([50.0, 5000.0], n)
    gain = np.full(2 * n, 0.5)
    along = np.concatenate([np.full(n, 1.0), np.full(n, 1.0 + 0.5 * 3.0)])  # excess r = 4 in the second bin
    comparison = HalfComparison(total, np.ones(2 * n), np.ones(2 * n), np.zeros(2 * n, bool), np.ones(2 * n, bool),
                                np.full(2 * n, np.nan), along, gain)
    curve = along_curve(comparison, min_words=50)
    np.testing.assert_allclose(curve.factors, [1.0, 4.0], rtol=1e-6)
    np.testing.assert_allclose(np.exp(curve.log_totals), [50.0, 5000.0])
    scale = NoiseScale(ScaleCurve(np.log([50.0]), np.array([2.0]), np.array([n])), ScaleCurve.empty(), along=curve)
    np.testing.assert_allclose(scale.along_factor(np.array([50.0, 500.0, 5000.0, 1e6])),
                               [1.0, 2.5, 4.0, 4.0], rtol=1e-6)
    assert scale.to_dict()["along"]["factor"] == [1.0, 4.0]
    assert "along each word's vector: 1.00 at 50, 4.00 at 5,000" in str(scale)
    assert "along" not in NoiseScale.identity().to_dict() and NoiseScale.identity().along_factor(10.0) == 1.0
    # the residual of a second comparison: its r, measured with the first scale, kept for the refined one
    refined = NoiseScale(ScaleCurve(np.log([50.0]), np.array([2.0]), np.array([n])), ScaleCurve.empty()).refined(
        comparison)
    np.testing.assert_allclose(refined.along.factors, np.maximum(curve.factors * 2.0 / refined(total[[0, -1]]), 1.0))


def test_two_widened_posteriors_differ_as_their_difference_covariance_says_by_monte_carlo():
    """Two fits of one word under one prior, each with noise in the word's strength along its own direction."""
    rng = np.random.default_rng(4)
    n, s2 = 200_000, 0.5
    prior_covariance = np.diag([2.0, 1.0, 0.5, 0.25, 0.4])
    precision, mean = np.linalg.inv(prior_covariance), np.array([1.0, -1.0, 0.5, 0.0, 0.3])
    hessians = [a.T @ a for a in (rng.normal(size=(9, DIM)), rng.normal(size=(14, DIM)))]
    covariances = [s2 * np.linalg.inv(h + s2 * precision) for h in hessians]
    truth = rng.multivariate_normal(mean, prior_covariance, n)
    strength = np.array([1.0, 2.0, -1.0, 0.5, 1.0])  # the direction the word's strength moves its data along
    unit = strength / np.linalg.norm(strength)
    factors, means = [], []
    for hessian, covariance, tau in zip(hessians, covariances, (0.6, 0.9)):
        noise = rng.multivariate_normal(np.zeros(DIM), s2 * hessian, n)  # A^T W e of the row's own noise
        data = truth @ hessian + noise + rng.normal(0.0, tau, (n, 1)) * (unit @ hessian)  # + b u in the data
        means.append((data + s2 * precision @ mean) @ covariance.T / s2)
        direction = unit - covariance @ precision @ unit  # where b u moves the posterior mean, (I - Sigma P) u
        base = Factor.of_covariance(covariance)
        factors.append(base.widened(tau * direction))
    empirical = np.cov(means[0] - means[1], rowvar=False)
    # any vector along the word's direction gives the widenings theirs (the sum of two fits' means, in the library)
    np.testing.assert_allclose(empirical, posterior_difference(*factors, precision, strength, 2.0 * strength),
                               atol=0.012)
    # the widened covariances in the shared part instead would not describe the difference
    wrong = shared_prior_difference(factors[0].dense(), factors[1].dense(), precision)
    assert np.abs(empirical - wrong).max() > 0.05


def test_a_store_keeps_each_words_widening_apart_from_its_factor_through_save_take_and_load(tmp_path):
    factors = [posterior_factor(seed)[0] for seed in range(4)]
    alongs = [np.zeros(DIM), np.full(DIM, 0.3), np.arange(DIM) / 10.0, np.zeros(DIM)]
    words = [f"w{i}" for i in range(4)]
    with CovarianceStoreWriter(4, DIM, 4, words=words, along=True) as writer:
        for k, (factor, along) in enumerate(zip(factors, alongs)):
            writer.add(k, factor.widened(along))
    store = writer.store
    for k, (factor, along) in enumerate(zip(factors, alongs)):
        np.testing.assert_allclose(store[k], factor.dense() + np.outer(along, along), atol=1e-14)
        np.testing.assert_allclose(store.diagonal(k)[0], np.diag(factor.dense()) + along**2, rtol=1e-12)
        assert (store.factor(k).unwidened is None) == (not along.any())
    store.save(tmp_path / "store.cov")
    for other in (CovarianceStore.load(tmp_path / "store.cov"), store.take(np.array([2, 1]))):
        rows = range(4) if len(other) == 4 else (2, 1)
        for position, k in enumerate(rows):
            np.testing.assert_array_equal(other[position], store[k])
        np.testing.assert_array_equal(other.along, store.along[list(rows)])
    with pytest.raises(ValueError, match="laid out without widenings"):
        with CovarianceStoreWriter(1, DIM, 1) as plain:
            plain.add(0, factors[1].widened(alongs[1]))


def test_a_store_file_with_a_damaged_widening_is_refused(tmp_path):
    factor = posterior_factor(0)[0]
    with CovarianceStoreWriter(1, DIM, 1, words=["w"], along=True, path=tmp_path / "store.cov") as writer:
        writer.add(0, factor.widened(np.full(DIM, 0.2)))
    from glovev_ext.covariance.store_file import open_store_arrays
    arrays = open_store_arrays(tmp_path / "store.cov")
    arrays["along"][0, 1] = np.nan
    arrays["along"].flush()
    del arrays
    with pytest.raises(ValueError, match="widenings are not 5 finite float64 numbers per word"):
        CovarianceStore.load(tmp_path / "store.cov")
