"""The report ``glovev fit`` prints after saving a model: each part a function that returns its lines.

The parts speak to a reader of the results, not of the code: how far the trained vectors are from
the optima GloVe-V centres its covariances on, how wide the interval of a cosine is for words seen
about so often, WordSim-353 with its interval, and a few nearest neighbours with theirs. A part that
cannot be computed raises ``ValueError`` (the command line turns it into a one-line note).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from gensim.test.utils import datapath

from .keyed_vectors import KeyedVectorsWithVariance
from .covariance.prior import FREQUENT_SPARE_RATIO
from .pipeline import outside_optimum_region
from .stats import read_word_pairs
from .stats.engine.intervals import quantile

PROBE_WORDS = ("man", "woman", "doctor", "river", "gold", "happy")
_PAIRS_PER_BAND = 200  # random pairs whose interval widths give a frequency band's median
_NEIGHBOURS = 5
_WORDSIM_DRAWS = 500


def report_parts(kv: KeyedVectorsWithVariance) -> list[tuple[str, Callable[[], list[str]]]]:
    """The parts of the fit report read from the embedding, in order, as ``(title, lines)`` pairs to call; the
    report opens with :func:`premise_lines` of the estimator."""
    return [("interval widths by frequency", lambda: interval_width_lines(kv)),
            ("WordSim-353", lambda: word_similarity_lines(kv)),
            ("nearest neighbours", lambda: neighbour_lines(kv))]


def premise_lines(model) -> list[str]:
    """How far the trained vectors lie from the weighted-least-squares optima the covariances are centred on."""
    distance = getattr(model, "optimum_distance_", None)
    if distance is None:
        return []
    estimate = getattr(model, "point_estimate", "trained")
    if estimate == "posterior":
        prior = model.prior_
        return [f"vectors: posterior means under an empirical-Bayes Gaussian prior (strength {prior.strength:g}, "
                f"its mean and spread from the {prior.n_rows:,} words with more than {FREQUENT_SPARE_RATIO} x D "
                "contexts); every word has a covariance, the posterior's, centred on the vector reported; for "
                f"{np.mean(model.prior_share_ > 0.5):.0%} of words the prior holds most of the precision (their "
                "intervals say more about the prior than about their contexts) (README, 'Reading the fit report')"]
    if estimate != "trained":
        return [f"vectors: point estimate {estimate!r}, the weighted-least-squares optima given the context vectors, "
                "which the covariances describe"]
    share = outside_optimum_region(model)
    return [f"trained vectors outside the 95 % region of their weighted-least-squares optimum: {share:.0%} "
            f"(median Mahalanobis distance {np.nanmedian(distance):.1f}): the optimum is the vector that best fits a "
            "word's co-occurrences given the context vectors, and the covariances describe it; the intervals are "
            "centred on the trained vectors as if the two coincided (README, 'Reading the fit report')"]


def frequency_bands(counts: np.ndarray) -> list[tuple[int, int]]:
    """Bands of word counts on a 1-3-10 scale (5-9, 10-29, 30-99, 100-299, ...) that hold words, cut to the counts."""
    if counts.size == 0:
        return []
    low, high = int(counts.min()), int(counts.max())
    edges = [step * 10**power for power in range(len(str(high)) + 1) for step in (1, 3)]
    bands = []
    for start, stop in zip(edges[:-1], edges[1:]):
        band = (max(start, low), min(stop - 1, high))
        if band[0] <= band[1] and ((counts >= band[0]) & (counts <= band[1])).any():
            bands.append(band)
    return bands


class IntervalWidth(NamedTuple):
    """The median half-width of a cosine's interval for random pairs of words from one frequency band."""

    low: int
    high: int
    n_words: int
    pairs: list
    half_width: float


def interval_widths(kv: KeyedVectorsWithVariance, confidence_level: float = 0.95) -> list[IntervalWidth]:
    """For each band of :func:`frequency_bands`: up to ``_PAIRS_PER_BAND`` random pairs of its words with a
    covariance (seeded), and the median half-width of their cosines' intervals (delta method)."""
    keys = [key for key in kv.index_to_key if kv.has_covariance(key)]
    if len(keys) < 2:
        raise ValueError("fewer than two words have a covariance")
    counts = np.array([kv.get_vecattr(key, "count") for key in keys])
    generator = np.random.default_rng(0)
    widths = []
    for low, high in frequency_bands(counts):
        members = np.flatnonzero((counts >= low) & (counts <= high))
        if members.size < 2:
            continue
        chosen = {tuple(sorted(generator.choice(members, 2, replace=False))) for _ in range(_PAIRS_PER_BAND)}
        pairs = [(keys[a], keys[b]) for a, b in sorted(chosen)]
        lower, upper = kv.similarity_tests(pairs, method="delta").conf_int(confidence_level=confidence_level).T
        widths.append(IntervalWidth(low, high, members.size, pairs, float(np.median((upper - lower) / 2))))
    return widths


def interval_width_lines(kv: KeyedVectorsWithVariance, confidence_level: float = 0.95) -> list[str]:
    """:func:`interval_widths` in words: how sure a cosine is, by how often its two words were seen."""
    lines = [f"a cosine between two words seen about as often has a {confidence_level:.0%} interval about this wide "
             f"(median half-width over up to {_PAIRS_PER_BAND} random pairs; GloVe-V, delta method):"]
    for width in interval_widths(kv, confidence_level):
        lines.append(f"  words seen {width.low:,}-{width.high:,} times ({width.n_words:,} words): "
                     f"+-{width.half_width:.2f}")
    return lines


def word_similarity_lines(kv: KeyedVectorsWithVariance) -> list[str]:
    """Spearman's rho with WordSim-353's human ratings, with its Monte Carlo interval over GloVe-V draws and what
    that interval means (the estimate's, extended by the draws' attenuation; docs/method.md 6.9)."""
    rows = read_word_pairs(datapath("wordsim353.tsv"))
    if not any(a in kv.key_to_index and b in kv.key_to_index for a, b, _ in rows):
        raise ValueError("none of its word pairs is in the vocabulary")
    try:
        result = kv.evaluate_word_pairs_with_uncertainty(rows, n_draws=_WORDSIM_DRAWS, random_state=0,
                                                         missing="drop")
    except ValueError as error:
        raise ValueError(f"too few of its word pairs have both words with a covariance: {error}") from None
    low, high = result.conf_int()
    median = result.estimate - result.attenuation
    on_atanh = result.tested_std_error / (1.0 - result.estimate**2)
    why = (", nearer 0 because noise in the vectors attenuates correlations, as the noise in the trained vectors "
           "attenuates rho itself" if abs(median) < abs(result.estimate) else "")
    return [f"WordSim-353: Spearman rho = {result.estimate:.3f}, 95 % interval [{low:.3f}, {high:.3f}] over "
            f"{_WORDSIM_DRAWS} GloVe-V draws; {len(result.dropped)} of its {len(rows)} pairs dropped (a word out of "
            f"the vocabulary or without a covariance)",
            f"  the interval is atanh(rho) -+ {float(quantile(0.975, result.df)):.2f} x {on_atanh:.4f} mapped back by "
            f"tanh ({on_atanh:.4f}: the draws' standard deviation, {result.tested_std_error:.4f}, times atanh's slope "
            f"at rho, 1 / (1 - rho^2)), extended {'up' if result.attenuation > 0 else 'down'} on atanh by the draws' "
            f"shift from rho, to 2 atanh(rho) - atanh(median): their median is {median:.3f}, "
            f"{abs(result.attenuation):.3f} "
            f"{'lower' if result.attenuation > 0 else 'higher'}{why}; it carries GloVe-V's noise only, not the choice "
            "of word pairs or raters (docs/method.md 6.9)"]


def neighbour_lines(kv: KeyedVectorsWithVariance, confidence_level: float = 0.95) -> list[str]:
    """A few probe words' nearest neighbours with the cosine's interval (method auto, as ``glovev similarity``)."""
    words = [w for w in PROBE_WORDS if w in kv.key_to_index] or list(kv.index_to_key[:3])
    lines = [f"nearest neighbours (cosine of centre vectors, {confidence_level:.0%} interval; words with a "
             "covariance):"]
    for word in words:
        if not kv.has_covariance(word):
            plain = ", ".join(f"{other} {value:.2f}" for other, value in kv.most_similar(word, topn=_NEIGHBOURS))
            lines.append(f"  {word}: {plain} (no interval: {word} has {kv.unusable_reason(word)})")
            continue
        others = [other for other, _ in kv.most_similar(word, topn=4 * _NEIGHBOURS) if kv.has_covariance(other)]
        tests = kv.similarity_tests([(word, other) for other in others[:_NEIGHBOURS]], random_state=0)
        intervals = tests.conf_int(confidence_level=confidence_level)
        shown = ", ".join(f"{other} {value:.2f} [{low:.2f}, {high:.2f}]"
                          for (_, other), value, (low, high) in zip(tests.pairs, tests.estimates, intervals))
        lines.append(f"  {word}: {shown}")
    return lines
