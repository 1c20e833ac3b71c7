"""Power and minimum detectable effect (``glovev_ext.stats.studies.power``) against closed forms and against the
rejection rate of the library's own Wald test on simulated estimates.

The simulations follow the model the module states: on the test scale ``g`` the estimate is
``g(truth) + se_g Z`` with ``se_g = se g'(at)`` whatever the truth, and with finite ``df`` the reported
standard error is ``sigma sqrt(chi2_df / df)`` (an estimated residual variance with ``df`` degrees of
freedom, which is where the library's t references come from). The test statistic is then exactly
noncentral t. (Adding ``se * t_df`` noise to the truth instead gives a shifted t, which is not the
noncentral t: at df = 5 and a shift of 2.5 the two powers differ by 0.05.) Each draw is tested by
the library's own functions (``glovev_ext.stats.engine.intervals``, the same path ``InferenceResult.wald``
takes), and the rejection rate of 20,000 seeded draws must be within 4 binomial standard errors of
``power()``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from glovev_ext.stats import InferenceResult, minimum_detectable_effect, power
from glovev_ext.stats.engine.intervals import bounds_of, pvalue, scale_derivative, scaled_errors, to_scale, wald_statistics

DRAWS = 20_000


def rejection_rate(estimates, std_errors, *, null_value, df, bounds, scale, alternative, significance_level=0.05):
    """Share of the library's Wald tests of ``value == null_value`` that reject, one per draw."""
    box = bounds_of(bounds, len(estimates))
    statistic = wald_statistics(estimates, scaled_errors(estimates, std_errors, box, scale),
                                np.full(len(estimates), null_value), box, scale)
    pvalues = pvalue(statistic, np.full(len(estimates), df), alternative)
    # the vectorised path is InferenceResult.wald's, draw by draw
    for k in range(5):
        one = InferenceResult.wald("x", estimates[k], std_errors[k], null_value=null_value, alternative=alternative,
                                   df=df, bounds=bounds if bounds is not None else (-np.inf, np.inf), scale=scale)
        assert one.pvalue == pytest.approx(pvalues[k], rel=1e-12, abs=1e-300)
    return float((pvalues < significance_level).mean())


def binomial_window(probability, n=DRAWS):
    return 4 * np.sqrt(probability * (1 - probability) / n)


# ---------------------------------------------------------------- closed forms

@pytest.mark.parametrize("effect, se, null_value", [(0.3, 0.1, 0.0), (1.0, 0.4, 2.0), (-0.25, 0.1, -1.0),
                                                    (2.8, 1.0, 0.5), (0.01, 0.1, 0.0)])
@pytest.mark.parametrize("significance_level", [0.05, 0.01])
def test_two_sided_normal_power_is_the_closed_form(effect, se, null_value, significance_level):
    d = effect / se
    q = stats.norm.ppf(1 - significance_level / 2)
    expected = stats.norm.cdf(d - q) + stats.norm.cdf(-d - q)
    assert power(effect, se, null_value=null_value, significance_level=significance_level) == pytest.approx(
        expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("effect, se", [(0.3, 0.1), (-0.3, 0.1), (0.05, 0.2), (-2.0, 1.5)])
def test_one_sided_normal_power_is_the_closed_form(effect, se):
    d = effect / se
    q = stats.norm.ppf(0.95)
    assert power(effect, se, alternative="larger") == pytest.approx(stats.norm.cdf(d - q), rel=1e-12, abs=1e-15)
    assert power(effect, se, alternative="smaller") == pytest.approx(stats.norm.cdf(-d - q), rel=1e-12, abs=1e-15)


def test_bounded_normal_power_is_the_closed_form_on_the_atanh_scale():
    """bounds (0, 4): g(x) = atanh((2x - 4) / 4); se_g = se g'(at) with g'(x) = 2 / (4 (1 - u^2))."""
    null_value, effect, se, at = 1.0, 1.5, 0.3, 2.5

    def g(x):
        return np.arctanh((2 * x - 0 - 4) / 4)

    u = (2 * at - 4) / 4
    se_g = se * 2 / (4 * (1 - u**2))
    d = (g(null_value + effect) - g(null_value)) / se_g
    q = stats.norm.ppf(0.975)
    got = power(effect, se, null_value=null_value, at=at, bounds=(0, 4), scale="bounded")
    assert got == pytest.approx(stats.norm.cdf(d - q) + stats.norm.cdf(-d - q), rel=1e-12)
    # the same bounds on the linear scale are only a range check: the plain closed form
    linear = power(effect, se, null_value=null_value, at=at, bounds=(0, 4), scale="linear")
    assert linear == pytest.approx(stats.norm.cdf(effect / se - q) + stats.norm.cdf(-effect / se - q), rel=1e-12)


# ---------------------------------------------------------------- against the library's test, simulated

@pytest.mark.parametrize("df", [5.0, 12.0, np.inf])
@pytest.mark.parametrize("alternative", ["two-sided", "larger"])
def test_power_is_the_rejection_rate_of_the_linear_wald_test(df, alternative):
    generator = np.random.default_rng(int(7 + (df if np.isfinite(df) else 0)) + len(alternative))
    sigma, null_value, effect = 0.2, 0.5, 0.45  # shift 2.25: power well inside (0, 1)
    estimates = null_value + effect + sigma * generator.standard_normal(DRAWS)
    std_errors = (sigma * np.sqrt(generator.chisquare(df, DRAWS) / df) if np.isfinite(df)
                  else np.full(DRAWS, sigma))
    rate = rejection_rate(estimates, std_errors, null_value=null_value, df=df, bounds=None, scale="linear",
                          alternative=alternative)
    stated = power(effect, sigma, null_value=null_value, df=df, alternative=alternative)
    assert 0.3 < stated < 0.9
    assert abs(rate - stated) < binomial_window(stated), (rate, stated)


@pytest.mark.parametrize("df", [6.0, np.inf])
@pytest.mark.parametrize("null_value, truth, at", [(0.1, 0.5, 0.5), (0.1, 0.5, 0.1), (-0.2, -0.55, 0.3)])
def test_power_is_the_rejection_rate_of_the_bounded_wald_test(df, null_value, truth, at):
    """Bounds (-1, 1). As the module assumes, se_g = se g'(at) holds whatever the true value: atanh(estimate)
    is atanh(truth) + se_g Z, and each draw reports the raw-scale standard error whose atanh-scale error
    (at its own estimate) is se_g, times sqrt(chi2_df / df) for finite df. The library's test of each
    draw then rejects at the rate power() states; ``at`` != null shows that ``at`` is where se_g is taken."""
    generator = np.random.default_rng(31 + int(100 * (truth + at)) + (0 if np.isfinite(df) else 1))
    box = bounds_of((-1, 1), 1)
    se = 0.12
    se_g = se * float(scale_derivative([at], box, "bounded")[0])
    assert se_g == pytest.approx(se / (1 - at**2))
    centre = np.arctanh(truth) + se_g * generator.standard_normal(DRAWS)
    estimates = np.tanh(centre)
    noise = np.sqrt(generator.chisquare(df, DRAWS) / df) if np.isfinite(df) else 1.0
    std_errors = se_g * noise / scale_derivative(estimates, bounds_of((-1, 1), DRAWS), "bounded")
    np.testing.assert_allclose(to_scale(estimates, bounds_of((-1, 1), DRAWS), "bounded"), centre, rtol=1e-9)
    rate = rejection_rate(estimates, std_errors, null_value=null_value, df=df, bounds=(-1, 1), scale="bounded",
                          alternative="two-sided")
    stated = power(truth - null_value, se, null_value=null_value, at=at, df=df, bounds=(-1, 1), scale="bounded")
    assert 0.25 < stated < 0.99, stated
    assert abs(rate - stated) < binomial_window(stated), (rate, stated)


# ---------------------------------------------------------------- at the null

@pytest.mark.parametrize("alternative", ["two-sided", "larger", "smaller"])
@pytest.mark.parametrize("df", [4.0, 30.0, np.inf])
@pytest.mark.parametrize("significance_level", [0.05, 0.1])
def test_power_at_no_effect_is_the_significance_level(alternative, df, significance_level):
    options = {"alternative": alternative, "df": df, "significance_level": significance_level}
    assert power(0.0, 0.3, null_value=1.0, **options) == pytest.approx(significance_level, rel=1e-10)
    assert power(0.0, 0.05, null_value=0.4, at=-0.3, bounds=(-1, 1), scale="bounded", **options) == pytest.approx(
        significance_level, rel=1e-10)


# ---------------------------------------------------------------- minimum detectable effect

@pytest.mark.parametrize("options", [
    {},
    {"power_goal": 0.9, "significance_level": 0.01},
    {"df": 8.0},
    {"alternative": "larger", "df": 20.0},
    {"alternative": "smaller"},
    {"null_value": 0.2, "at": 0.4, "bounds": (-1, 1), "scale": "bounded"},
    {"null_value": 0.0, "bounds": (-2, 2), "scale": "bounded", "df": 15.0, "alternative": "smaller"},
    {"null_value": 0.3, "bounds": (-1, 1), "scale": "linear"},
])
def test_the_minimum_detectable_effect_has_the_asked_power(options):
    se = 0.07
    goal = options.get("power_goal", 0.8)
    effect = minimum_detectable_effect(se, **options)
    assert np.isfinite(effect)
    assert (effect < 0) == (options.get("alternative") == "smaller")
    test_options = {k: v for k, v in options.items() if k != "power_goal"}
    assert power(effect, se, **test_options) == pytest.approx(goal, abs=1e-8)
    # the smallest such effect: a little less falls short
    assert power(effect * (1 - 1e-4), se, **test_options) < goal


@pytest.mark.parametrize("goal", [0.8, 0.9])
@pytest.mark.parametrize("significance_level", [0.05, 0.01])
def test_the_normal_two_sided_minimum_detectable_effect_is_z_plus_z(goal, significance_level):
    se = 0.05
    effect = minimum_detectable_effect(se, power_goal=goal, significance_level=significance_level)
    closed = (stats.norm.ppf(1 - significance_level / 2) + stats.norm.ppf(goal)) * se
    # the other tail, Phi(-d - q) (below 1e-6), makes the exact root smaller by at most about 1.2e-6
    # relative (at 0.8 and 0.05); ignoring it is the textbook formula
    assert effect == pytest.approx(closed, rel=2e-6)
    assert effect <= closed


def test_smaller_mirrors_larger_on_the_linear_scale():
    larger = minimum_detectable_effect(0.2, alternative="larger", df=10.0)
    smaller = minimum_detectable_effect(0.2, alternative="smaller", df=10.0)
    assert larger > 0 and smaller < 0
    assert smaller == pytest.approx(-larger, rel=1e-9)


def test_an_unreachable_power_inside_the_bounds_is_nan():
    assert np.isnan(minimum_detectable_effect(1.0, bounds=(-1, 1), scale="linear"))
    assert np.isnan(minimum_detectable_effect(20.0, bounds=(-1, 1), scale="bounded"))


# ---------------------------------------------------------------- bad inputs

@pytest.mark.parametrize("goal", [0.0, 1.0, 1.5, -0.2])
def test_a_power_goal_outside_the_unit_interval_is_refused(goal):
    with pytest.raises(ValueError, match="power_goal"):
        minimum_detectable_effect(0.1, power_goal=goal)


@pytest.mark.parametrize("se", [0.0, -0.1, np.nan, np.inf])
def test_a_non_positive_standard_error_is_refused(se):
    with pytest.raises(ValueError, match="standard error"):
        minimum_detectable_effect(se)


def test_a_true_value_outside_the_bounds_is_refused():
    with pytest.raises(ValueError, match="outside"):
        power(0.6, 0.1, null_value=0.5, bounds=(-1, 1), scale="bounded")
    with pytest.raises(ValueError, match="outside"):
        power(-2.5, 0.1, bounds=(-2, 2), scale="linear")


def test_an_unknown_alternative_is_refused():
    with pytest.raises(ValueError, match="alternative"):
        power(0.1, 0.1, alternative="greater")
