"""Every rendered column is what its head says, for every statistic, method, scale and alternative (issue 24).

Each table is checked against the formulas its heads name, computed here from the table's own
numbers and the result's null values and bounds, not from the library's rule:

- ``std err`` is the standard error the test and interval are built from (``bse``); ``draws sd``,
  where present, the spread of the Monte Carlo draws (``draws_std_error``); ``std_error`` is ``bse`` (issue 47);
- ``t``/``z``: (coef - null) / std err; ``t (atanh)``/``z (atanh)``: the same on atanh of the value
  mapped to (-1, 1), the standard error carried there by atanh's slope at coef; ``t (from p)``: the
  statistic whose tail probability is the p-value;
- the p-value column is the tail its head names (``P>|t|``, ``P>t``, ``P<t``) of that statistic, with
  the ``df`` column's t (a normal for ``z`` heads or infinite df);
- the interval and the test agree: a null value at an end of the 90 % interval gets a two-sided p of
  0.10 (the test inverts the interval, whatever the method);
- changing ``method`` changes what the method determines together: where Monte Carlo moves the
  interval, it moves the statistic and the p-value with it.
"""

from __future__ import annotations

import numpy as np
import pytest
from gensim.test.utils import datapath
from scipy import stats

import glovev_ext
from glovev_ext.stats import coordinate_statistic, cosine_statistic

SPEECH = (["he", "him", "his", "man"], ["she", "her", "woman", "mother"], ["said", "asked", "told"],
          ["thought", "felt", "knew"])
PAIRS = [("man", "woman"), ("he", "she"), ("boy", "girl")]
METHODS = ("delta", "monte carlo", "auto")
SCALES = ("bounded", "linear")


@pytest.fixture
def kv(stats_kv):
    return stats_kv


def tail(statistic: np.ndarray, df: np.ndarray, head: str) -> np.ndarray:
    """The p-value a head names: ``P>|t|`` two-sided, ``P>t`` the upper tail, ``P<t`` the lower one."""
    finite = np.isfinite(df)
    safe = np.where(finite, df, 1.0)
    upper = np.where(finite, stats.t.sf(statistic, safe), stats.norm.sf(statistic))
    lower = np.where(finite, stats.t.cdf(statistic, safe), stats.norm.cdf(statistic))
    if "|" in head:
        return 2 * np.minimum(upper, lower)
    return upper if head.startswith("P>") else lower


def atanh_statistic(coef, std_err, null, bounds) -> np.ndarray:
    """(atanh(u(coef)) - atanh(u(null))) / (std err u'(coef) / (1 - u(coef)^2)), u mapping bounds to (-1, 1)."""
    low, high = bounds[:, 0], bounds[:, 1]
    unit = (2 * coef - low - high) / (high - low)
    unit_null = (2 * null - low - high) / (high - low)
    slope = 2 / (high - low) / (1 - unit**2)
    return (np.arctanh(unit) - np.arctanh(unit_null)) / (std_err * slope)


def check_columns(frame, nulls, bounds, df_values, spreads, tested) -> None:
    """Every column of ``frame`` against the formula its head names."""
    coef, std_err = frame["coef"].to_numpy(), frame["std err"].to_numpy()
    np.testing.assert_allclose(std_err, tested, rtol=1e-12)
    if "draws sd" in frame:
        np.testing.assert_allclose(frame["draws sd"], spreads, rtol=1e-12)
        assert not np.allclose(frame["draws sd"], std_err)
    else:
        np.testing.assert_allclose(std_err, spreads, rtol=1e-12)
    letter = "t" if "df" in frame else "z"
    df = frame["df"].to_numpy() if "df" in frame else np.full(len(frame), np.inf)
    np.testing.assert_allclose(df, df_values, rtol=1e-12)
    heads = [c for c in frame.columns if c == letter or c.startswith(letter + " (")]
    assert heads, f"no statistic column in {list(frame.columns)}"
    statistic = np.nansum([frame[h].fillna(0).to_numpy() for h in heads], axis=0)
    assert (frame[heads].notna().sum(axis=1) == 1).all(), "each row has exactly one statistic"
    for head in heads:
        rows = frame[head].notna().to_numpy()
        value = frame[head].to_numpy()[rows]
        if head == letter:
            np.testing.assert_allclose(value, (coef[rows] - nulls[rows]) / std_err[rows], rtol=1e-10)
        elif head == f"{letter} (atanh)":
            np.testing.assert_allclose(value, atanh_statistic(coef[rows], std_err[rows], nulls[rows], bounds[rows]),
                                       rtol=1e-9, atol=1e-12)
        else:
            assert head == f"{letter} (from p)", head
    p_heads = [c for c in frame.columns if c in (f"P>|{letter}|", f"P>{letter}", f"P<{letter}")]
    assert len(p_heads) == 1, list(frame.columns)
    np.testing.assert_allclose(frame[p_heads[0]], tail(statistic, df, p_heads[0]), rtol=1e-7, atol=1e-12)


def check_family(family) -> None:
    frame = family.summary_frame()
    np.testing.assert_array_equal(family.std_errors, family.bse)  # one standard error per row (issue 47)
    drawn = family.draws_std_errors  # NaN for rows that kept the delta method (method="auto" judges rows apart)
    spreads = family.bse if np.isnan(drawn).all() else drawn
    check_columns(frame, family.null_values, family.bounds, family.df, spreads, family.bse)
    statistic = frame.filter(regex=r"^[tz]( \(.*\))?$").fillna(0).sum(axis=1)
    np.testing.assert_allclose(statistic, family.tvalues, rtol=1e-12)
    np.testing.assert_allclose(frame.filter(regex=r"^P[<>]").iloc[:, 0], family.pvalues, rtol=1e-12)
    if family.correction is not None:
        np.testing.assert_allclose(frame[f"P adj. ({family.correction})"], family.pvalues_adjusted, rtol=1e-12)
    np.testing.assert_allclose(frame[["Conf. Int. Low", "Conf. Int. Upp."]], family.conf_int(), rtol=1e-12)


def check_result(result) -> None:
    frame = result.summary_frame()
    check_columns(frame, np.array([result.null_value]), np.array([result.bounds]), np.array([result.df]),
                  np.array([result.bse if np.isnan(result.draws_std_error) else result.draws_std_error]),
                  np.array([result.bse]))
    assert result.std_error == result.bse  # one standard error per result (issue 47)
    assert frame.filter(regex=r"^[tz]( \(.*\))?$").stack().item() == result.tvalues == result.statistic
    assert frame.filter(regex=r"^P[<>]").iloc[0, 0] == result.pvalues == result.pvalue
    assert result.params == result.estimate


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("alternative", ["two-sided", "larger", "smaller"])
def test_a_similarity_table_says_what_it_shows(kv, method, scale, alternative):
    for a, b in PAIRS:
        check_result(kv.similarity_test(a, b, null_value=0.5, alternative=alternative, method=method, scale=scale,
                                        n_draws=400, random_state=4))
    check_result(kv.similarity_test("man", "woman", method=method, scale=scale, use_t=False, n_draws=400,
                                    random_state=4, alternative=alternative))


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("method", METHODS)
def test_families_and_what_they_make_say_what_they_show(kv, method, scale):
    options = dict(method=method, scale=scale, n_draws=400, random_state=4)
    family = kv.similarity_family(PAIRS, **options)
    weat = kv.weat_test(*SPEECH, **options)
    for one in (family, weat, family.correct("holm"), family.linear(np.eye(3)[:2] - np.eye(3)[1:], ["d1", "d2"], "d"),
                kv.statistic_test(coordinate_statistic("man", kv.vector_size), **options)):
        check_family(one)
    for one in (family.difference(0, 1), family.contrast([1, 1, -2], null_value=0.1, alternative="larger"),
                weat["effect size"], kv.cosine_bias_test(["he", "man"], ["she", "woman"], ["said", "told"],
                                                           **options)):
        check_result(one)


@pytest.mark.parametrize("method", METHODS)
def test_many_pair_tests_and_neighbours_say_what_they_show(kv, method):
    table = kv.similarity_tests(PAIRS, method=method, n_draws=400, random_state=4, null_value=0.3)
    frame = table.summary_frame()
    check_columns(frame, np.full(len(table), 0.3), np.tile([-1.0, 1.0], (len(table), 1)), table.df,
                  np.array([table._drawn[k].draws_std_error if k in table._drawn else table.std_errors[k]
                            for k in range(len(table))]), table.bse)
    neighbours = kv.nearest_neighbors_test("man", topn=4, n_draws=300, random_state=0, method=method)
    check_family(neighbours.similarities)
    check_family(neighbours.adjacent)


def test_monte_carlo_results_of_other_statistics_say_what_they_show(kv):
    """A correlation with human ratings (its draws extend its interval) and a cosine as a plain statistic."""
    check_result(kv.evaluate_word_pairs_with_uncertainty(datapath("wordsim353.tsv"), n_draws=100, random_state=0,
                                                         missing="drop"))
    check_result(kv.statistic_test(cosine_statistic([("man", "woman")]), method="monte carlo", scale="linear",
                                   n_draws=300, random_state=0))


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("method", METHODS)
def test_the_interval_and_the_test_agree(kv, method, scale):
    """A null value at either end of the 90 % interval gets a two-sided p-value of 0.10, whatever the method."""
    for a, b in PAIRS:
        result = kv.similarity_test(a, b, method=method, scale=scale, n_draws=400, random_state=4)
        for end in result.conf_int(confidence_level=0.9):
            at_end = kv.similarity_test(a, b, method=method, scale=scale, n_draws=400, random_state=4,
                                        null_value=end)
            assert at_end.method == result.method
            assert at_end.pvalue == pytest.approx(0.10, rel=1e-6)


def test_changing_the_method_changes_what_it_determines_together(kv):
    """Where Monte Carlo's draws move the interval (cos(man, woman): shifted draws, linear scale: the draws' spread),
    the std err, statistic, p-value and interval all follow, each consistent with the others."""
    for scale in SCALES:
        # the draws lie below the estimate, so the interval extends above it: test a null value there
        delta = kv.similarity_test("man", "woman", method="delta", scale=scale, null_value=0.94)
        drawn = kv.similarity_test("man", "woman", method="monte carlo", scale=scale, null_value=0.94, n_draws=2000,
                                   random_state=4)
        assert drawn.conf_int() != pytest.approx(delta.conf_int(), rel=1e-6)
        assert drawn.statistic != pytest.approx(delta.statistic, rel=1e-6)
        assert drawn.pvalue != pytest.approx(delta.pvalue, rel=1e-6)
        check_result(delta)
        check_result(drawn)
    # cos(he, she): unshifted draws, so on the linear scale a Wald test on the draws' spread; every column moves
    spread = kv.similarity_test("he", "she", method="monte carlo", scale="linear", n_draws=2000, random_state=0)
    delta = kv.similarity_test("he", "she", method="delta", scale="linear")
    assert spread.draws_interval == "union" and spread.bse == spread.draws_std_error != pytest.approx(delta.bse,
                                                                                                     rel=1e-3)
    assert spread.statistic == pytest.approx(spread.estimate / spread.bse, rel=1e-12)
    assert spread.statistic != pytest.approx(delta.statistic, rel=1e-3)
    assert spread.conf_int() != pytest.approx(delta.conf_int(), rel=1e-6)
    check_result(spread)


def test_studies_and_benchmarks_say_what_they_show(kv):
    """Models compared (equal values, pairwise differences, a trend), an analogy accuracy, SemEval-2012 scores."""
    halves = {name: kv.similarity_test("man", "woman", method=method, n_draws=300, random_state=k)
              for k, (name, method) in enumerate([("a", "delta"), ("b", "monte carlo"), ("c", "delta")])}
    comparison = glovev_ext.compare_models(halves, covariate=[0.0, 1.0, 2.0])
    for family in (comparison.family, comparison.pairwise(), comparison.pairwise(correction=None,
                                                                                  alternative="larger")):
        check_family(family)
    check_result(comparison.trend())
    questions = [("man", "woman", "he", "she"), ("boy", "girl", "man", "woman"), ("he", "she", "his", "her"),
                 ("him", "her", "he", "she")]
    check_result(kv.evaluate_word_analogies_with_uncertainty(questions, n_draws=50, random_state=0,
                                                             missing="drop"))
    relational = kv.evaluate_relational_similarity_with_uncertainty(glovev_ext.read_semeval2012(), n_draws=100,
                                                                    random_state=0, missing="drop")
    for family in (relational.model, relational.random, relational.versus_random()):
        check_family(family)


def test_the_check_fails_on_a_column_that_is_not_what_its_head_says(kv):
    """The check itself: the atanh statistic under a plain head, or a two-sided p under a one-sided head, fails it."""
    result = kv.similarity_test("man", "woman", null_value=0.9, method="delta")
    frame = result.summary_frame()
    assert 0.01 < result.pvalue < 0.99
    arguments = (np.array([0.9]), np.array([result.bounds]), np.array([result.df]), np.array([result.std_error]),
                 np.array([result.bse]))
    check_columns(frame, *arguments)
    with pytest.raises(AssertionError):
        check_columns(frame.rename(columns={"t (atanh)": "t"}), *arguments)
    with pytest.raises(AssertionError):
        check_columns(frame.rename(columns={"P>|t|": "P>t"}), *arguments)


def test_draws_sd_is_the_spread_of_normal_draws(kv):
    """``draws sd`` against numpy's standard deviation of the draws, where the kept draws are the normal ones
    (``use_t=False``; with t reference draws the column is still the normal draws' spread, as its note says)."""
    result = kv.similarity_test("man", "woman", method="monte carlo", use_t=False, n_draws=2000, random_state=4)
    frame = result.summary_frame()
    assert "draws sd" in frame and frame["draws sd"].iloc[0] == pytest.approx(np.std(result.draws, ddof=1), rel=1e-12)
    assert "normal draws" in str(result.summary())
    # with use_t the same seed draws the same normal draws first (then the t draws the interval uses)
    with_t = kv.similarity_test("man", "woman", method="monte carlo", n_draws=2000, random_state=4)
    assert with_t.summary_frame()["draws sd"].iloc[0] == pytest.approx(np.std(result.draws, ddof=1), rel=1e-12)
    assert np.std(with_t.draws, ddof=1) != pytest.approx(np.std(result.draws, ddof=1), rel=1e-6)
    spearman = kv.evaluate_word_pairs_with_uncertainty(datapath("wordsim353.tsv"), n_draws=100, random_state=0,
                                                       missing="drop")
    assert spearman.bse == pytest.approx(np.std(spearman.draws, ddof=1), rel=1e-12)
