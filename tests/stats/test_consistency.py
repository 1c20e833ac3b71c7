"""Every p-value of a result agrees with its intervals and with its siblings (issue 47, rule 1).

Seeded random cases over words, pairs, alternatives, methods, nulls and confidence levels, on the default recipe's
golden model (a posterior) and on the paper's (trained vectors): the one-sided p-values sum to 1, the two-sided one is
twice the smaller, a p-value is at most alpha exactly when the null lies outside the (1 - alpha) interval (one-sided:
beyond the matching end), the intervals are nested in the confidence level, no statistic has the opposite sign
of the estimate minus the null, and ``std_error`` is ``bse``. The same for the pairwise differences and the trend of
three golden fits under one prior, tested against the equality test's null draws.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import glovev_ext

MODELS = Path(__file__).resolve().parents[1] / "data" / "golden" / "models"
LEVELS = (0.5, 0.8, 0.9, 0.95, 0.99)
ALTERNATIVES = ("two-sided", "larger", "smaller")


def cases(kv, n_cases: int, seed: int):
    """(name, function of null and alternative giving a result, its estimate) for random similarities and
    differences, by method; the words drawn from every frequency."""
    rng = np.random.default_rng(seed)
    usable = [w for w in kv.index_to_key if kv.has_covariance(w)]
    for k in range(n_cases):
        method = ("auto", "monte carlo", "delta")[k % 3]
        a, b, c = rng.choice(usable, size=3, replace=False)
        if k % 2:
            def result(null, alternative, a=a, b=b, method=method):
                return kv.similarity_test(a, b, null_value=null, alternative=alternative, method=method, n_draws=400)
            yield f"cos({a}, {b}) {method}", result
        else:
            def result(null, alternative, a=a, b=b, c=c, method=method):
                assert null == 0.0  # a difference is tested against 0; its nulls move by shifting nothing
                return kv.similarity_difference_test((a, b), (a, c), alternative=alternative, method=method,
                                                     n_draws=400)
            yield f"cos({a}, {b}) - cos({a}, {c}) {method}", result


def nulls_around(result, rng) -> list[float]:
    """Nulls at the estimate, inside and outside its intervals, and between the estimate and its draws."""
    low, high = result.conf_int(confidence_level=0.99)
    estimate = result.estimate
    spread = max(high - low, 1e-6)
    picked = [estimate, low - 0.1 * spread, high + 0.1 * spread, *(rng.uniform(low - 0.2 * spread, high + 0.2 * spread,
                                                                               4))]
    if result.draws is not None:
        picked.append(float(np.median(result.draws)))
    bounds = result.bounds
    return [float(np.clip(x, bounds[0] + 1e-9, bounds[1] - 1e-9)) for x in picked]


def assert_rules(name: str, make, nulls: list[float]) -> int:
    """Rules 1 and 2 of issue 47 for one result (``make(null, alternative)``) at each null; the nulls checked."""
    base = make(0.0, "two-sided")
    assert base.std_error == base.bse, name
    intervals = {level: base.conf_int(confidence_level=level) for level in LEVELS}
    for smaller, larger in zip(LEVELS, LEVELS[1:]):  # nested in the level
        assert intervals[larger][0] <= intervals[smaller][0] <= base.estimate <= intervals[smaller][1] \
            <= intervals[larger][1], (name, smaller, larger)
    for null in nulls:
        results = {alternative: make(null, alternative) for alternative in ALTERNATIVES}
        p = {alternative: r.pvalue for alternative, r in results.items()}
        assert p["larger"] + p["smaller"] == pytest.approx(1.0, abs=1e-12), (name, null, p)
        assert p["two-sided"] == pytest.approx(min(1.0, 2 * min(p["larger"], p["smaller"])), abs=1e-12), (name, p)
        for alternative, result in results.items():
            assert result.statistic * (result.estimate - null) >= 0, (name, null, alternative, result.statistic)
        for level in LEVELS:
            alpha = 1 - level
            low, high = intervals[level]
            if min(abs(null - low), abs(null - high)) < 1e-9:
                continue
            assert (p["two-sided"] <= alpha) == (not low <= null <= high), (name, null, level, p, (low, high))
            one_sided = intervals.get(round(1 - 2 * alpha, 10))
            if one_sided is not None and min(abs(null - one_sided[0]), abs(null - one_sided[1])) > 1e-9:
                assert (p["larger"] <= alpha) == (null < one_sided[0]), (name, null, level)
                assert (p["smaller"] <= alpha) == (null > one_sided[1]), (name, null, level)
    return len(nulls)


@pytest.mark.parametrize("model", ["posterior", "trained"])
def test_p_values_intervals_and_statistics_of_one_result_fit_together(model):
    kv = glovev_ext.load_model(MODELS / model)[0]
    rng = np.random.default_rng(11)
    checked = 0
    for name, make in cases(kv, 24, seed=5):
        base = make(0.0, "two-sided")
        checked += assert_rules(name, make, nulls_around(base, rng) if "-" not in name.split(")")[1] else [0.0])
    assert checked > 60


def test_comparisons_under_one_prior_fit_together_too():
    """The pairwise differences and the trend of fits under one prior, tested against the null draws (a pivot)."""
    parts = [glovev_ext.load_model(MODELS / part)[0] for part in ("first", "second", "third")]
    shared = [w for w in parts[0].index_to_key
              if all(w in kv.key_to_index and kv.has_covariance(w) for kv in parts)]
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(4):
        a, b = rng.choice(shared, size=2, replace=False)
        comparison = glovev_ext.compare_models([kv.similarity_test(a, b, n_draws=300) for kv in parts],
                                               covariate=[1.0, 2.0, 3.0], n_draws=500)
        assert comparison.null_draws is not None
        for row in range(3):
            def make(null, alternative, row=row):
                family = comparison.pairwise(correction=None, alternative=alternative)
                return family.replace(null_values=np.full(len(family), null))[row]
            checked += assert_rules(f"pairwise {row} of cos({a}, {b})", make, nulls_around(make(0.0, "two-sided"), rng))

        def trend(null, alternative):
            result = comparison.trend(alternative=alternative)
            return result.family.replace(null_values=[null])[0]
        checked += assert_rules(f"trend of cos({a}, {b})", trend, nulls_around(trend(0.0, "two-sided"), rng))
    assert checked > 60
