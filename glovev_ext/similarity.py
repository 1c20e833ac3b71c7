"""Similarity statistics: cosine tests, contrasts of similarities, nearest neighbours with ranks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from statsmodels.iolib.summary import Summary

from .inference import draw_values, estimate, point, resolve_words, wald_test
from .keyed_vectors import KeyedVectorsWithVariance
from .results import InferenceResult, ResultFamily, frame_summary
from .statistic import cosine_statistic, cosines


def similarity(kv: KeyedVectorsWithVariance, word1, word2, *, null_value: float = 0.0,
               alternative: str = "two-sided", method: str = "delta", n_draws: int = 2000,
               rng=None) -> InferenceResult:
    """Cosine similarity of two words' centre vectors, with its standard error and Wald test.

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    word1, word2 : str
    null_value : float, default=0
    alternative : {"two-sided", "larger", "smaller"}
    method : {"delta", "monte carlo"}
    n_draws : int
        Draws for Monte Carlo.
    rng : None, int or numpy Generator

    Returns
    -------
    InferenceResult
    """
    resolve_words(kv, [word1, word2], "raise")
    return wald_test(kv, cosine_statistic([(word1, word2)], name=f"cos({word1}, {word2})"), null_value=null_value,
                alternative=alternative, method=method, n_draws=n_draws, rng=rng)


def similarities(kv: KeyedVectorsWithVariance, pairs: Sequence[tuple], *, method: str = "delta",
                 missing: str = "raise", alternative: str = "two-sided", n_draws: int = 2000,
                 rng=None) -> ResultFamily:
    """Cosine similarities of several word pairs with their joint covariance.

    Pairs sharing a word are correlated; compare them with ``.difference(i, j)`` or any
    ``.contrast(weights)``, never by adding their variances. With ``missing="drop"`` a pair with
    an unusable word is left out and named in ``dropped``.

    Returns
    -------
    ResultFamily
    """
    kept, dropped = [], []
    for a, b in pairs:
        usable, unusable = resolve_words(kv, [a, b], "drop")
        if unusable:
            if missing == "raise":
                resolve_words(kv, [a, b], "raise")
            dropped.extend(unusable)
        else:
            kept.append((a, b))
    if not kept:
        raise ValueError(f"no pair is usable; dropped: {', '.join(dropped)}")
    return estimate(kv, cosine_statistic(kept, name="cosine similarities"), method=method, alternative=alternative,
                    n_draws=n_draws, rng=rng, dropped=dropped)


def similarity_difference(kv: KeyedVectorsWithVariance, pair1: tuple, pair2: tuple, *,
                          alternative: str = "two-sided", method: str = "delta", n_draws: int = 2000,
                          rng=None) -> InferenceResult:
    """Test ``cos(pair1) - cos(pair2) == 0`` with the joint covariance (e.g. doctor-surgeon vs doctor-dentist)."""
    family = similarities(kv, [pair1, pair2], method=method, n_draws=n_draws, rng=rng)
    return family.difference(0, 1, alternative=alternative)


@dataclass(frozen=True)
class NeighborsResult:
    """Nearest neighbours of a word with intervals, adjacent-rank tests and rank distributions.

    Attributes
    ----------
    word : str
    similarities : ResultFamily
        ``cos(word, neighbour)`` in descending order of the estimate, with joint covariance.
    adjacent : ResultFamily
        ``cos(rank r) - cos(rank r + 1)`` for each r, tested against 0 (alternative "larger").
    rank_probabilities : pandas.DataFrame
        Monte Carlo probability that each neighbour (row) takes each rank (column, 1-based)
        among the candidates.
    n_draws : int
        Draws behind ``rank_probabilities``.
    """

    word: str
    similarities: ResultFamily
    adjacent: ResultFamily
    rank_probabilities: pd.DataFrame
    n_draws: int

    @property
    def neighbors(self) -> list:
        return list(self.rank_probabilities.index)

    def top_k_probability(self, k: int) -> pd.Series:
        """Probability that each neighbour ranks among the first ``k``."""
        return self.rank_probabilities.iloc[:, :k].sum(axis=1).rename(f"P(top {k})")

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """Similarity, standard error, interval, rank probability and the test against the next neighbour."""
        frame = self.similarities.summary_frame(alpha)[["coef", "std err", "Conf. Int. Low", "Conf. Int. Upp."]]
        frame.index = self.neighbors
        frame.insert(0, "rank", np.arange(1, len(frame) + 1))
        frame["P(this rank)"] = np.diag(self.rank_probabilities.to_numpy())
        gaps = np.append(self.adjacent.pvalues, np.nan)
        frame["P>z (vs next)"] = gaps
        return frame

    def summary(self, alpha: float = 0.05) -> Summary:
        """Neighbour table as a statsmodels ``Summary``."""
        return frame_summary(self.summary_frame(alpha),
                             f"Nearest neighbours of {self.word!r}: {self.similarities.method}, "
                             f"{self.n_draws} Monte Carlo draws for ranks",
                             [f"Uncertainty: {self.similarities.uncertainty}",
                              f"Dropped: {len(self.similarities.dropped)}"])

    def __str__(self) -> str:
        return str(self.summary())


def nearest_neighbors(kv: KeyedVectorsWithVariance, word, candidates: Sequence | None = None, topn: int = 10, *,
                      method: str = "delta", missing: str = "drop", n_draws: int = 2000, rng=None) -> NeighborsResult:
    """The nearest neighbours of ``word`` among ``candidates`` (or the whole vocabulary), with uncertainty.

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    word : str
    candidates : sequence, optional
        Words to rank; by default the ``topn`` most similar words of the vocabulary that have a
        covariance.
    topn : int
        Neighbours kept when ``candidates`` is None.
    method : {"delta", "monte carlo"}
        For the similarities and adjacent tests; rank distributions are always Monte Carlo.
    missing : {"drop", "raise"}
        Candidates without covariance are dropped (named) or refused.
    n_draws : int
    rng : None, int or numpy Generator

    Returns
    -------
    NeighborsResult
    """
    resolve_words(kv, [word], "raise")
    dropped = []
    if candidates is None:
        order = np.argsort(-kv.cosine_similarities(kv.get_vector(word), kv.vectors))
        candidates = []
        for index in order:
            key = kv.index_to_key[index]
            if key == word:
                continue
            if kv.unusable_reason(key) is None:
                candidates.append(key)
                if len(candidates) == topn:
                    break
    else:
        candidates, dropped = resolve_words(kv, [c for c in candidates if c != word], missing)
    if len(candidates) < 2:
        raise ValueError(f"need at least two usable candidates, got {len(candidates)}")
    base = point(kv, [word, *candidates])
    order = np.argsort(-cosines(base, np.zeros(len(candidates), np.int64), np.arange(1, len(candidates) + 1)))
    candidates = [candidates[i] for i in order]
    pairs = [(word, c) for c in candidates]
    family = estimate(kv, cosine_statistic(pairs, name=f"neighbours of {word}"), method=method, n_draws=n_draws,
                      rng=rng, dropped=dropped)
    m = len(candidates)
    steps = np.zeros((m - 1, m))
    steps[np.arange(m - 1), np.arange(m - 1)] = 1.0
    steps[np.arange(m - 1), np.arange(1, m)] = -1.0
    adjacent = ResultFamily(name=f"gaps between adjacent neighbours of {word}",
                            names=tuple(f"rank {r} - rank {r + 1}" for r in range(1, m)),
                            estimates=steps @ family.estimates, covariance=steps @ family.covariance @ steps.T,
                            alternative="larger", method=family.method, words=family.words, dropped=tuple(dropped),
                            draws=None if family.draws is None else family.draws @ steps.T)
    left, right = np.zeros(m, np.int64), np.arange(1, m + 1)
    ranks = draw_values(kv, [word, *candidates],
                        lambda drawn: np.argsort(np.argsort(-cosines(drawn, left, right), axis=1), axis=1),
                        n_draws, rng=rng)
    probabilities = np.stack([(ranks == r).mean(axis=0) for r in range(m)], axis=1)
    rank_probabilities = pd.DataFrame(probabilities, index=candidates, columns=list(range(1, m + 1)))
    return NeighborsResult(word=word, similarities=family, adjacent=adjacent, rank_probabilities=rank_probabilities,
                           n_draws=n_draws)
