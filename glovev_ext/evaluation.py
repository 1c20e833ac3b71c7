"""Model evaluation with uncertainty: word-similarity benchmarks and analogies, by Monte Carlo.

Both metrics are non-smooth (ranks, argmax), so each draw of the embedding recomputes them; the
estimate stays the metric at the trained vectors, the draws give its standard error and interval.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

import numpy as np
from scipy.stats import rankdata, spearmanr

from .inference import draw_values, point, resolve_words
from .keyed_vectors import KeyedVectorsWithVariance
from .results import MONTE_CARLO, InferenceResult
from .statistic import cosines


def read_word_pairs(path: str | os.PathLike, delimiter: str = "\t", lowercase: bool = True) -> list[tuple]:
    """``(word1, word2, score)`` rows of a similarity benchmark file (gensim's format; ``#`` lines skipped)."""
    rows = []
    with open(path, encoding="utf-8") as stream:
        for number, line in enumerate(stream, 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.rstrip("\n").split(delimiter)
            if len(parts) < 3:
                raise ValueError(f"{path}:{number}: expected word1{delimiter!r}word2{delimiter!r}score")
            first, second = (parts[0].lower(), parts[1].lower()) if lowercase else (parts[0], parts[1])
            try:
                rows.append((first, second, float(parts[2])))
            except ValueError:
                raise ValueError(f"{path}:{number}: score {parts[2]!r} is not a number") from None
    return rows


def evaluate_word_pairs(kv: KeyedVectorsWithVariance, pairs: str | os.PathLike | Iterable[tuple], *,
                        n_draws: int = 1000, rng=None, missing: str = "drop") -> InferenceResult:
    """Spearman correlation of cosine similarities with human ratings, with a Monte Carlo interval.

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    pairs : path or iterable of (word1, word2, score)
        A benchmark file (e.g. ``gensim.test.utils.datapath('wordsim353.tsv')``) or its rows.
    n_draws : int
    rng : None, int or numpy Generator
    missing : {"drop", "raise"}
        Pairs with a word out of the vocabulary or without covariance are dropped (named in the
        result) or refused.

    Returns
    -------
    InferenceResult
        Against the random-embedding baseline of 0 correlation.
    """
    rows = read_word_pairs(pairs) if isinstance(pairs, (str, os.PathLike)) else list(pairs)
    kept, dropped = [], []
    for first, second, score in rows:
        usable, unusable = resolve_words(kv, [first, second], "drop")
        if unusable:
            dropped.append(f"{first}-{second}: " + "; ".join(unusable))
        else:
            kept.append((first, second, score))
    if dropped and missing == "raise":
        raise ValueError(f"{len(dropped)} pairs cannot be used: {'; '.join(dropped[:5])}; pass missing='drop'")
    if len(kept) < 3:
        raise ValueError(f"only {len(kept)} usable pairs")
    keys = tuple(dict.fromkeys(word for first, second, _ in kept for word in (first, second)))
    position = {key: i for i, key in enumerate(keys)}
    left = np.array([position[a] for a, _, _ in kept])
    right = np.array([position[b] for _, b, _ in kept])
    human_ranks = rankdata([score for _, _, score in kept])

    def spearman(vectors):
        model_ranks = rankdata(cosines(vectors, left, right), axis=-1)
        centred_model = model_ranks - model_ranks.mean(axis=-1, keepdims=True)
        centred_human = human_ranks - human_ranks.mean()
        return (centred_model @ centred_human) / (np.linalg.norm(centred_model, axis=-1)
                                                  * np.linalg.norm(centred_human))

    estimate = float(spearmanr(cosines(point(kv, keys), left, right), [s for _, _, s in kept])[0])
    draws = draw_values(kv, keys, spearman, n_draws, rng)
    return InferenceResult.wald("Spearman correlation with human ratings", estimate, float(draws.std(ddof=1)),
                                method=MONTE_CARLO, words=keys, dropped=dropped, draws=draws)


def read_analogies(path: str | os.PathLike, lowercase: bool = True) -> list[tuple]:
    """``(a, b, c, d)`` questions of an analogy file (``:`` section lines skipped), "a is to b as c is to d"."""
    questions = []
    with open(path, encoding="utf-8") as stream:
        for number, line in enumerate(stream, 1):
            if not line.strip() or line.startswith(":"):
                continue
            words = line.lower().split() if lowercase else line.split()
            if len(words) != 4:
                raise ValueError(f"{path}:{number}: expected 4 words, got {len(words)}")
            questions.append(tuple(words))
    return questions


def evaluate_analogies(kv: KeyedVectorsWithVariance, questions: str | os.PathLike | Iterable[Sequence], *,
                       candidates: Sequence | None = None, restrict_vocab: int = 10_000, n_draws: int = 200,
                       rng=None) -> InferenceResult:
    """3CosAdd analogy accuracy with a Monte Carlo interval, tested against random guessing.

    The answer to "a is to b as c is to ?" is the candidate closest in cosine to
    ``unit(b) - unit(a) + unit(c)``, excluding a, b and c (gensim's ``most_similar``). Candidates are
    the first ``restrict_vocab`` words with a covariance (or ``candidates``); questions whose words
    are not all candidates are dropped and counted. The null value is the accuracy of guessing at
    random among the candidates, ``1 / (n_candidates - 3)``, with the alternative "larger".

    Returns
    -------
    InferenceResult
    """
    rows = read_analogies(questions) if isinstance(questions, (str, os.PathLike)) else [tuple(q) for q in questions]
    if candidates is None:
        candidates = [key for key in kv.index_to_key[:restrict_vocab] if kv.unusable_reason(key) is None]
    else:
        candidates, _ = resolve_words(kv, candidates, "drop")
    position = {key: i for i, key in enumerate(candidates)}
    kept = [q for q in rows if all(word in position for word in q)]
    dropped = [" ".join(q) for q in rows if not all(word in position for word in q)]
    if not kept:
        raise ValueError("no analogy question has all four words among the candidates")
    index = np.array([[position[word] for word in q] for q in kept])

    def accuracy(vectors):
        unit = vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)
        scores = []
        for draw in unit.reshape(-1, *unit.shape[-2:]):
            query = draw[index[:, 1]] - draw[index[:, 0]] + draw[index[:, 2]]
            similarity = query @ draw.T
            np.put_along_axis(similarity, index[:, :3], -np.inf, axis=1)
            scores.append(np.mean(similarity.argmax(axis=1) == index[:, 3]))
        return np.array(scores).reshape(unit.shape[:-2])

    estimate = float(accuracy(point(kv, candidates)))
    draws = draw_values(kv, candidates, accuracy, n_draws, rng)
    baseline = 1.0 / (len(candidates) - 3)
    return InferenceResult.wald(f"analogy accuracy ({len(kept)} questions, {len(candidates)} candidates)", estimate,
                                float(draws.std(ddof=1)), null_value=baseline, alternative="larger",
                                method=MONTE_CARLO, words=tuple(candidates), dropped=dropped, draws=draws)
