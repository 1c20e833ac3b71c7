"""Similarity statistics: cosine tests, contrasts of similarities, nearest neighbours with ranks."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..._checks import DEFAULT_SEED, check_int
from ..._docstrings import fill_doc
from ...covariance import UndefinedCovarianceError
from .cosine import cosine_statistic, cosines
from ..engine.estimation import DEFAULT_METHOD, estimate, estimate_resolved, wald_test
from ..engine.monte_carlo import draw_values
from ..engine.results import InferenceResult, NeighborsResult, ResultFamily
from ..engine.words import DEFAULT_MISSING, EmbeddingWithCovariance, check_missing, resolve, usable, usable_groups


@fill_doc
def similarity(kv: EmbeddingWithCovariance, word1, word2, *, null_value: float = 0.0, alternative: str = "two-sided",
               method: str = DEFAULT_METHOD, missing: str = DEFAULT_MISSING, n_draws: int = 2000,
               random_state=DEFAULT_SEED, use_t: bool = True, scale: str = "bounded") -> InferenceResult:
    """Cosine similarity of two words' centre vectors, with its standard error and Wald test.

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    word1, word2 : str
    {null_value}
    {alternative}
    {method}
    {missing}
        A cosine needs both words, so under either policy an unusable word is an error.
    {estimate_options}

    Returns
    -------
    InferenceResult
    """
    _refuse_any_unusable(kv, [word1, word2], missing, f"cos({word1}, {word2})")
    return wald_test(kv, cosine_statistic([(word1, word2)], name=f"cos({word1}, {word2})"), null_value=null_value,
                     alternative=alternative, method=method, n_draws=n_draws, random_state=random_state,
                     use_t=use_t, scale=scale)


@fill_doc
def similarity_family(kv: EmbeddingWithCovariance, pairs: Sequence[tuple], *, method: str = DEFAULT_METHOD,
                      missing: str = DEFAULT_MISSING, alternative: str = "two-sided", n_draws: int = 2000,
                      random_state=DEFAULT_SEED, use_t: bool = True, scale: str = "bounded") -> ResultFamily:
    """Cosine similarities of several word pairs as one family, with their joint covariance.

    Pairs sharing a word are correlated; compare them with ``.difference(i, j)`` or any
    ``.contrast(weights)``, never by adding their variances. (:func:`similarity_tests` tests many
    pairs each on its own instead, without the joint covariance.)

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    pairs : sequence of (str, str)
    {method}
    {missing}
        A pair with an unusable word is refused, or left out and named.
    {alternative}
    {estimate_options}

    Returns
    -------
    ResultFamily
    """
    kept, dropped = usable_groups(kv, pairs, missing)
    if not kept:
        raise ValueError(f"no pair is usable; dropped: {', '.join(dropped)}")
    family = estimate(kv, cosine_statistic(kept, name="cosine similarities"), method=method, alternative=alternative,
                      n_draws=n_draws, random_state=random_state, dropped=dropped, use_t=use_t, scale=scale)
    return family.replace(dropped_noun="pair")


@fill_doc
def similarity_difference(kv: EmbeddingWithCovariance, pair1: tuple, pair2: tuple, *, alternative: str = "two-sided",
                          method: str = DEFAULT_METHOD, missing: str = DEFAULT_MISSING, n_draws: int = 2000,
                          random_state=DEFAULT_SEED, use_t: bool = True, scale: str = "bounded") -> InferenceResult:
    """Test ``cos(pair1) - cos(pair2) == 0`` with the joint covariance (e.g. doctor-surgeon vs doctor-dentist).

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    pair1, pair2 : (str, str)
    {alternative}
    {method}
    {missing}
        The difference needs every word, so under either policy an unusable word is an error.
    {estimate_options}

    Returns
    -------
    InferenceResult
    """
    _refuse_any_unusable(kv, [*pair1, *pair2], missing, "a difference of two similarities")
    family = similarity_family(kv, [pair1, pair2], method=method, n_draws=n_draws, random_state=random_state,
                               use_t=use_t, scale=scale)
    return family.difference(0, 1, alternative=alternative)


@fill_doc
def nearest_neighbors(kv: EmbeddingWithCovariance, word, candidates: Sequence | None = None, topn: int = 10, *,
                      method: str = DEFAULT_METHOD, missing: str = DEFAULT_MISSING, n_draws: int = 2000,
                      random_state=DEFAULT_SEED, use_t: bool = True, scale: str = "bounded",
                      progress: bool = False) -> NeighborsResult:
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
    {method}
        For the similarities and adjacent tests; rank distributions are always Monte Carlo.
    {missing}
        The policy for the candidates: ``word`` itself must be usable.
    {n_draws}
        Also the draws of the ranks.
    {random_state}
        Each word draws from its own stream of it, so a neighbour's row reads the same among 5 or among
        10 neighbours, and as :func:`similarity` gives it; the ranks' draws take a seed of their own.
    {use_t}
    {scale}
    {progress}

    Returns
    -------
    NeighborsResult
    """
    _refuse_any_unusable(kv, [word], missing, f"the neighbours of {word!r}")
    generator = np.random.default_rng(random_state)
    dropped = []
    if candidates is None:
        candidates = _most_similar_usable(kv, word, check_int(topn, "topn", minimum=2))
    else:
        candidates, dropped = usable(kv, [c for c in candidates if c != word], missing)
    if len(candidates) < 2:
        raise ValueError(f"need at least two usable candidates, got {len(candidates)}")
    words = resolve(kv, [word, *candidates])
    left, right = np.zeros(len(candidates), np.int64), np.arange(1, len(candidates) + 1)
    words = words.take([0, *(np.argsort(-cosines(words.vectors, left, right)) + 1)])
    candidates = list(words.keys[1:])
    family = estimate_resolved(words, cosine_statistic([(word, c) for c in candidates], name=f"neighbours of {word}"),
                               method=method, n_draws=n_draws, random_state=generator, dropped=dropped, use_t=use_t,
                               scale=scale)
    m = len(candidates)
    steps = np.zeros((m - 1, m))
    steps[np.arange(m - 1), np.arange(m - 1)] = 1.0
    steps[np.arange(m - 1), np.arange(1, m)] = -1.0
    adjacent = family.linear(steps, [f"rank {r} - rank {r + 1}" for r in range(1, m)],
                             f"gaps between adjacent neighbours of {word}", alternative="larger")
    ranks = draw_values(words, lambda drawn: np.argsort(np.argsort(-cosines(drawn, left, right), axis=1), axis=1),
                        n_draws, random_state=generator, progress=progress)
    probabilities = np.stack([(ranks == r).mean(axis=0) for r in range(m)], axis=1)
    rank_probabilities = pd.DataFrame(probabilities, index=candidates, columns=list(range(1, m + 1)))
    return NeighborsResult(word=word, similarities=family, adjacent=adjacent, rank_probabilities=rank_probabilities,
                           n_draws=n_draws)


def _most_similar_usable(kv, word, topn: int) -> list:
    """The ``topn`` words most similar to ``word`` by cosine that have a covariance."""
    order = np.argsort(-kv.cosine_similarities(kv.get_vector(word), kv.vectors))
    found = []
    for index in order:
        key = kv.index_to_key[index]
        if key != word and kv.unusable_reason(key) is None:
            found.append(key)
            if len(found) == topn:
                break
    return found


def _refuse_any_unusable(kv: EmbeddingWithCovariance, words: Sequence, missing: str, statistic: str) -> None:
    """Words a statistic cannot do without: under either policy an unusable one is an error naming it."""
    check_missing(missing)
    _, lost = usable(kv, words, "drop")
    if lost:
        raise UndefinedCovarianceError(f"{statistic} cannot be computed without {', '.join(lost)}: it needs every "
                                       f"one of {', '.join(map(repr, dict.fromkeys(words)))}")
