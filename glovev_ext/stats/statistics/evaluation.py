"""Model evaluation with uncertainty: word-similarity benchmarks and analogies, by Monte Carlo.

Both metrics are non-smooth (ranks, argmax), so each draw of the embedding recomputes them; the
estimate stays the metric at the trained vectors, the draws give its standard error and interval.
Noise added to the vectors attenuates both metrics, so the draws usually lie nearer 0 than the
estimate (their median's gap to it is the result's ``attenuation``), as the estimate lies nearer 0
than the metric of noise-free vectors: the interval is the estimate's, extended by that gap away
from the draws (``draws_interval="extended"``, docs/method.md section 6.9), and the result's notes
say what the draws measure.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

import numpy as np
from scipy.stats import rankdata, spearmanr

from ..._checks import DEFAULT_SEED
from ..._docstrings import fill_doc
from .cosine import cosines
from ..engine.estimation import word_caveats
from ..engine.intervals import EXTENDED
from ..engine.monte_carlo import draw_values
from ..engine.results import MONTE_CARLO, InferenceResult
from ..engine.words import DEFAULT_MISSING, EmbeddingWithCovariance, resolve, usable, usable_groups


_NOT_SMOOTH = "Monte Carlo: ranks are not smooth functions of the vectors, so the delta method does not apply"


def draws_caveat(metric: str, effect: str, items: str, estimate: float, draws: np.ndarray) -> str:
    """What the Monte Carlo draws of an evaluation measure, and where they lie against the estimate.

    ``effect`` says how noise in the vectors changes the metric (e.g. "attenuates correlations"),
    ``items`` what the benchmark samples that the draws do not (e.g. "word pairs or raters").
    """
    median = float(np.median(draws))
    gap = estimate - median
    line = (f"What the draws measure: {metric} at {len(draws)} draws of the embedding, GloVe-V's noise added to "
            f"the trained vectors. Their median, {median:.3f}, is {abs(gap):.3f} ")
    if abs(median) < abs(estimate):
        line += (f"nearer 0 than the estimate (attenuation): noise in the vectors {effect}, and the noise in the "
                 "trained vectors does the same to the estimate itself.")
    else:
        line += f"{'below' if gap > 0 else 'above'} the estimate (attenuation {gap:.3f})."
    return line + f" The interval carries that noise only, not the choice of {items}."


def rank_correlation(values: np.ndarray, reference_ranks: np.ndarray) -> np.ndarray:
    """Spearman correlation of each row of ``values`` (``(..., n)``, ranked along the last axis) with fixed ranks.

    The Pearson correlation of average ranks, as scipy's ``spearmanr`` computes it; vectorised over draws.
    """
    ranks = rankdata(values, axis=-1)
    centred = ranks - ranks.mean(axis=-1, keepdims=True)
    reference = np.asarray(reference_ranks, dtype=np.float64) - np.mean(reference_ranks)
    return (centred @ reference) / (np.linalg.norm(centred, axis=-1) * np.linalg.norm(reference))


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


@fill_doc
def evaluate_word_pairs(kv: EmbeddingWithCovariance, pairs: str | os.PathLike | Iterable[tuple], *,
                        n_draws: int = 1000, random_state=DEFAULT_SEED, missing: str = DEFAULT_MISSING,
                        progress: bool = False) -> InferenceResult:
    """Spearman correlation of cosine similarities with human ratings, with a Monte Carlo interval.

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    pairs : path or iterable of (word1, word2, score)
        A benchmark file (e.g. ``gensim.test.utils.datapath('wordsim353.tsv')``) or its rows.
    n_draws : int, default=1000
        Draws of the embedding.
    {random_state}
    {missing}
        A pair with an unusable word is refused, or left out and named. A benchmark usually holds
        words a corpus lacks: pass ``"drop"``.
    {progress}

    Returns
    -------
    InferenceResult
        Against the random-embedding baseline of 0 correlation. Its interval is the estimate's
        (``estimate -+ q`` standard deviations of the draws on atanh) extended by the draws'
        ``attenuation`` away from them, and its notes say what the draws measure.
    """
    rows = read_word_pairs(pairs) if isinstance(pairs, (str, os.PathLike)) else list(pairs)
    kept, dropped = usable_groups(kv, rows, missing, words=lambda row: row[:2])
    if len(kept) < 3:
        raise ValueError(f"only {len(kept)} usable pairs")
    keys = tuple(dict.fromkeys(word for first, second, _ in kept for word in (first, second)))
    position = {key: i for i, key in enumerate(keys)}
    left = np.array([position[a] for a, _, _ in kept])
    right = np.array([position[b] for _, b, _ in kept])
    human = [score for _, _, score in kept]
    human_ranks = rankdata(human)

    def spearman(vectors):
        return rank_correlation(cosines(vectors, left, right), human_ranks)

    words = resolve(kv, keys)
    estimate = float(spearmanr(cosines(words.vectors, left, right), human)[0])
    draws = draw_values(words, spearman, n_draws, random_state, progress=progress)
    caveats = [draws_caveat("Spearman's rho", "attenuates correlations", "word pairs or raters", estimate, draws),
               *word_caveats(words)]
    return InferenceResult.wald("Spearman correlation with human ratings", estimate, float(draws.std(ddof=1)),
                                method=MONTE_CARLO, words=keys, dropped=dropped, draws=draws, bounds=(-1.0, 1.0),
                                scale="bounded", method_reason=_NOT_SMOOTH, dropped_noun="pair", caveats=caveats,
                                draws_interval=EXTENDED)


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


@fill_doc
def evaluate_analogies(kv: EmbeddingWithCovariance, questions: str | os.PathLike | Iterable[Sequence], *,
                       candidates: Sequence | None = None, restrict_vocab: int = 10_000, n_draws: int = 200,
                       random_state=DEFAULT_SEED, missing: str = DEFAULT_MISSING) -> InferenceResult:
    """3CosAdd analogy accuracy with a Monte Carlo interval, tested against random guessing.

    The answer to "a is to b as c is to ?" is the candidate closest in cosine to
    ``unit(b) - unit(a) + unit(c)``, excluding a, b and c (gensim's ``most_similar``). Candidates are
    the first ``restrict_vocab`` words with a covariance (or the usable ``candidates``). Questions
    with a word out of the vocabulary or without covariance follow ``missing``; questions whose
    words are usable but not candidates are left out, as gensim's ``restrict_vocab`` does. Both are
    named in ``dropped``. The null value is the accuracy of guessing at random among the
    candidates, ``1 / (n_candidates - 3)``, with the alternative "larger". The interval is the
    estimate's extended by the draws' ``attenuation``, as for :func:`evaluate_word_pairs`.

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    questions : path or iterable of (a, b, c, d)
        An analogy file (e.g. ``gensim.test.utils.datapath('questions-words.txt')``) or its rows.
    candidates : sequence of str, optional
        The words an answer is chosen from.
    restrict_vocab : int, default=10000
        Without ``candidates``: how many of the vocabulary's first words to search.
    n_draws : int, default=200
        Draws of the embedding.
    {random_state}
    {missing}
        A question with an unusable word is refused, or left out and named.

    Returns
    -------
    InferenceResult
    """
    rows = read_analogies(questions) if isinstance(questions, (str, os.PathLike)) else [tuple(q) for q in questions]
    rows, dropped = usable_groups(kv, rows, missing, noun="question")
    if candidates is None:
        candidates = [key for key in kv.index_to_key[:restrict_vocab] if kv.unusable_reason(key) is None]
    else:
        candidates = usable(kv, candidates, "drop")[0]
    position = {key: i for i, key in enumerate(candidates)}
    kept = [q for q in rows if all(word in position for word in q)]
    dropped += [f"{'-'.join(q)} [not all among the candidates]" for q in rows if not all(w in position for w in q)]
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

    words = resolve(kv, candidates)
    estimate = float(accuracy(words.vectors))
    draws = draw_values(words, accuracy, n_draws, random_state)
    baseline = 1.0 / (len(candidates) - 3)
    caveats = [draws_caveat("the accuracy", "lowers accuracy", "questions", estimate, draws), *word_caveats(words)]
    return InferenceResult.wald(f"analogy accuracy ({len(kept)} questions, {len(candidates)} candidates)", estimate,
                                float(draws.std(ddof=1)), null_value=baseline, alternative="larger",
                                method=MONTE_CARLO, words=tuple(candidates), dropped=dropped, draws=draws,
                                bounds=(0.0, 1.0), scale="bounded", method_reason=_NOT_SMOOTH,
                                dropped_noun="question", caveats=caveats, draws_interval=EXTENDED)
