"""Every p-value of a result agrees with its intervals and with its siblings (issue 47, rule 1).

Seeded random cases over words, pairs, alternatives, methods, nulls and confidence levels, on the default recipe's
golden model (a posterior) and on the paper's (trained vectors): the one-sided p-values sum to 1, the two-sided one is
twice the smaller, a p-value is at most alpha exactly when the null lies outside the (1 - alpha) interval (one-sided:
beyond the matching end), the intervals are nested in the confidence level, and no statistic has the opposite sign
of the estimate minus the null.
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


@pytest.mark.parametrize("model", ["posterior", "trained"])
def test_p_values_intervals_and_statistics_of_one_result_fit_together(model):
    kv = glovev_ext.load_model(MODELS / model)[0]
    rng = np.random.default_rng(11)
    checked = 0
    for name, make in cases(kv, 24, seed=5):
        base = make(0.0, "two-sided")
        nulls = nulls_around(base, rng) if "-" not in name.split(")")[1] else [0.0]
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
            checked += 1
    assert checked > 60
