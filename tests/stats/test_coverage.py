"""Coverage of the intervals by simulation with known truth, through the library's own fits and estimates.

Rows of chosen words are drawn from the GloVe-V model given the fitted contexts and biases (truth:
each word's weighted-least-squares vector) and refitted by the covariance pass's own per-word fit
(``glovev_ext.stats.RowSimulator``); each refit is estimated as a user would (defaults:
``method="auto"``, t, bounded scale) and the intervals are checked against the true value.
2,000 replications with a fixed seed: a coverage of 0.95 has a binomial standard error of 0.005.
``bench/coverage.py`` prints the same table with median widths, for the paper's recipe too.
"""

from __future__ import annotations

import numpy as np
import pytest

import glovev_ext
from glovev_ext.covariance.wls import WordFitter
from glovev_ext.stats import RowSimulator, coordinate_statistic, interval_coverage
from glovev_ext.stats.engine.estimation import estimate_resolved
from glovev_ext.stats.statistics.weat import effect_size_bound
from glovev_ext.stats import weat_statistic
from glovev_ext.stats import cosine_bias_statistic

DIM = 30
REPLICATIONS = 2000
NOMINAL = (0.935, 0.965)
KNOWN_FLOOR = 0.90  # differences of similarities sharing a rare word (docs/method.md 6.5)


@pytest.fixture(scope="module")
def fit(embedded_cooccurrence):
    """D = 30 after 10 epochs: 60 words on the paper's pseudo-inverse branch, 45 with |K| - D <= 10."""
    model = glovev_ext.GloVeVEstimator(DIM, epochs=10, random_state=0, n_jobs=1, conditioning="paper",
                                       point_estimate="trained",
                                       progress=False).fit(embedded_cooccurrence)
    words = list(embedded_cooccurrence.words)
    alphabetic = np.array([w.isalpha() for w in words])
    spare = model.n_contexts_ - DIM
    groups = {"frequent": [words[i] for i in np.argsort(-model.n_contexts_) if alphabetic[i]][:4],
              "rare": [words[i] for i in np.flatnonzero((spare > 0) & (spare <= 10) & alphabetic
                                                        & ~model.pseudo_inverse_)][:4],
              "pseudo-inverse": [words[i] for i in np.flatnonzero(model.pseudo_inverse_ & alphabetic)][:4]}
    assert all(len(group) == 4 for group in groups.values())
    position = {w: i for i, w in enumerate(words)}
    rows = {w: position[w] for group in groups.values() for w in group}
    simulators = {conditioning: RowSimulator(WordFitter(embedded_cooccurrence, model.context_embedding_,
                                                        model.context_bias_, 100.0, 0.75, conditioning),
                                             model.bias_, rows)
                  for conditioning in ("exact", "paper")}
    return groups, simulators


def coverage(fit, statistic, replications=REPLICATIONS, conditioning="exact", **options):
    simulators = fit[1]
    return interval_coverage(simulators[conditioning], statistic, replications, random_state=11,
                             **{"n_draws": 500, **options})


@pytest.mark.parametrize("group", ["frequent", "rare", "pseudo-inverse"])
def test_coordinates_cover_with_t_quantiles(fit, group):
    """Every coordinate of a frequent word, a word with |K| - D <= 10 and a word the paper's rule
    sends to the pseudo-inverse, with t(|K| - D) intervals from the exact inverse."""
    word = fit[0][group][0]
    # 4,000 refits: the window is +-0.015 for each of the D coordinates, +-4.4 standard errors of the
    # simulation then (at 2,000, +-3.1: one coordinate in 30 left it by chance on some fits).
    result = coverage(fit, coordinate_statistic(word, DIM), 2 * REPLICATIONS)
    assert NOMINAL[0] <= result.coverage.min() and result.coverage.max() <= NOMINAL[1], result.summary_frame()
    assert NOMINAL[0] <= result.coverage.mean() <= NOMINAL[1]


def test_normal_quantiles_under_cover_for_rare_words(fit):
    word = fit[0]["rare"][0]
    t = coverage(fit, coordinate_statistic(word, DIM), 1000)
    normal = coverage(fit, coordinate_statistic(word, DIM), 1000, use_t=False)
    assert normal.coverage.mean() < 0.93 < t.coverage.mean()


def test_the_papers_pseudo_inverse_zeroes_the_largest_variances(fit):
    word = fit[0]["pseudo-inverse"][0]
    paper = coverage(fit, coordinate_statistic(word, DIM), 300, conditioning="paper", method="delta", use_t=False,
                     scale="linear")
    assert paper.coverage.mean() < 0.3


def test_cosines_of_frequent_words_cover_at_the_nominal_rate(fit):
    frequent = fit[0]["frequent"]
    result = coverage(fit, glovev_ext.cosine_statistic([(frequent[0], frequent[1]), (frequent[2], frequent[3])]))
    assert (NOMINAL[0] <= result.coverage).all() and (result.coverage <= NOMINAL[1]).all(), result.summary_frame()


@pytest.mark.parametrize("group", ["rare", "pseudo-inverse"])
def test_cosines_of_hard_words_do_not_under_cover(fit, group):
    words, frequent = fit[0][group], fit[0]["frequent"]
    result = coverage(fit, glovev_ext.cosine_statistic([(words[0], frequent[0]), (words[1], words[2])]))
    assert (result.coverage >= NOMINAL[0]).all(), result.summary_frame()
    assert set(result.methods) <= {"delta method", "Monte Carlo"}


def test_weat_and_cosine_bias_of_mixed_words_do_not_under_cover(fit):
    frequent, rare, pseudo = (fit[0][g] for g in ("frequent", "rare", "pseudo-inverse"))
    weat = coverage(fit, weat_statistic([frequent[0], rare[0], pseudo[0]], [frequent[1], rare[1], pseudo[1]],
                                                   [frequent[2], rare[2]], [frequent[3], pseudo[2]]))
    bias = coverage(fit, cosine_bias_statistic([frequent[0], rare[0]], [frequent[1], pseudo[0]],
                                                          [frequent[2], rare[1], pseudo[1]]))
    assert weat.coverage[0] >= NOMINAL[0] and bias.coverage[0] >= NOMINAL[0], (weat.summary_frame(),
                                                                               bias.summary_frame())
    assert -effect_size_bound(3, 3, 1) <= weat.truth[0] <= effect_size_bound(3, 3, 1)


def test_differences_of_similarities_stay_above_the_known_floor(fit):
    """The contrast path (Welch-Satterthwaite from each word's share, bounds [-2, 2], the union with the
    percentile interval): cos(rare, frequent) - cos(rare, other frequent), a shared rare word.

    A known gap (docs/method.md 6.5): the nominal 0.935 is not guaranteed for such differences; it
    covered 0.923 at 2,000 refits on a fit with the C tool's training order (cos(king, the) -
    cos(king, and)) and 0.953 on this one (cos(mercy, the) - cos(mercy, and)). The test keeps the floor measured so far."""
    frequent, rare = fit[0]["frequent"], fit[0]["rare"]
    statistic = glovev_ext.cosine_statistic([(rare[0], frequent[0]), (rare[0], frequent[1])])
    simulator, generator = fit[1]["exact"], np.random.default_rng(12)
    truth = np.diff(statistic.value(np.vstack([simulator.truth[key] for key in statistic.keys])))[0] * -1
    covered = []
    for _ in range(REPLICATIONS):
        words = simulator.draw(statistic.keys, generator)
        difference = estimate_resolved(words, statistic, random_state=generator, n_draws=500).difference(0, 1)
        low, high = difference.conf_int()
        assert -2 <= low <= high <= 2
        covered.append(low <= truth <= high)
    assert np.mean(covered) >= KNOWN_FLOOR, np.mean(covered)
