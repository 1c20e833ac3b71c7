"""Relational similarity (SemEval-2012 Task 2, the paper's Fig. 6) scored with GloVe-V uncertainty.

A pair ``x:y`` is rated by how close its offset ``y - x`` is to the paradigm pairs' offsets: the
mean cosine of ``y - x`` with each ``b - a`` (the vector-offset method of Mikolov, Yih and Zweig,
2013). The ratings are scored by the organisers' two metrics (:mod:`.semeval`). Both are
non-smooth (argmax, ranks), so the uncertainty is Monte Carlo: every draw of the embedding rates
every pair of every relation again, so the draws are joint across relations and a difference
between relations is tested with its correlation. The Random baseline is the organisers' random
rating, with the spread of random ratings as its uncertainty (it is independent of the embedding).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.linalg import block_diag
from scipy.stats import rankdata
from statsmodels.iolib.summary import Summary

from ..._checks import DEFAULT_SEED
from ..._docstrings import fill_doc
from ...covariance import UndefinedCovarianceError
from ..engine.rendering import notes, render
from ..engine.estimation import word_caveats
from .evaluation import rank_correlation
from ..engine.monte_carlo import draw_values
from ..engine.results import MONTE_CARLO, InferenceResult, ResultFamily
from .semeval import SemEvalRelation, majority_masks, maxdiff_to_scale
from ..engine.words import DEFAULT_MISSING, EmbeddingWithCovariance, check_missing, resolve, usable_groups

# the relations of the paper's Fig. 6: Contrast: Contrary, Part-Whole: Event:Feature,
# Attribute: Object:Typical Action, Cause-Purpose: Agent:Goal
PAPER_RELATIONS = ("4b", "2d", "5e", "8e")
MAXDIFF = "MaxDiff accuracy"
SPEARMAN = "Spearman"
METRICS = {"maxdiff": MAXDIFF, "spearman": SPEARMAN}
_BOUNDS = {MAXDIFF: (0.0, 1.0), SPEARMAN: (-1.0, 1.0)}
_NOT_SMOOTH = "Monte Carlo: MaxDiff answers and ranks are not smooth functions of the vectors"
RANDOM_BASELINE = "random rating of the pairs (the organisers' Random baseline; independent of the embedding)"


@dataclass(frozen=True)
class _ScoredRelation:
    """What one relation is scored on, as positions into the joint word list."""

    relation: SemEvalRelation
    pairs: np.ndarray          # (P, 2) word positions of the rated pairs
    paradigms: np.ndarray      # (G, 2) word positions of the usable paradigm pairs
    questions: np.ndarray      # (Q, 4) pair positions of the questions whose pairs are all rated
    least: np.ndarray          # (Q, 4) majority least-illustrative choices
    most: np.ndarray           # (Q, 4) majority most-illustrative choices
    gold_pairs: np.ndarray     # pair positions that have a gold rating
    gold_ranks: np.ndarray     # ranks of their gold ratings (average ranks for ties)
    random: np.ndarray | None  # the organisers' Random ratings of the rated pairs

    def ratings(self, vectors: np.ndarray) -> np.ndarray:
        """``(..., P)`` mean cosine of each pair's offset with the paradigm offsets."""
        offsets = _unit(vectors[..., self.pairs[:, 1], :] - vectors[..., self.pairs[:, 0], :])
        paradigms = _unit(vectors[..., self.paradigms[:, 1], :] - vectors[..., self.paradigms[:, 0], :])
        return (offsets @ np.swapaxes(paradigms, -1, -2)).mean(axis=-1)

    def scores(self, ratings: np.ndarray) -> np.ndarray:
        """``(..., 2)``: MaxDiff accuracy and Spearman correlation of ratings (``(..., P)``)."""
        asked = ratings[..., self.questions]
        least = np.take_along_axis(np.broadcast_to(self.least, asked.shape), asked.argmin(axis=-1)[..., None], -1)
        most = np.take_along_axis(np.broadcast_to(self.most, asked.shape), asked.argmax(axis=-1)[..., None], -1)
        accuracy = (least[..., 0].sum(axis=-1) + most[..., 0].sum(axis=-1)) / (2 * len(self.questions))
        return np.stack([accuracy, rank_correlation(ratings[..., self.gold_pairs], self.gold_ranks)], axis=-1)


@dataclass(frozen=True)
class RelationalSimilarity:
    """SemEval-2012 Task 2 scores of an embedding with GloVe-V intervals, beside the Random baseline.

    Attributes
    ----------
    model : ResultFamily
        Rows ``"<id> MaxDiff accuracy"`` and ``"<id> Spearman"`` per relation, Monte Carlo over joint
        draws of the embedding (contrasts between relations use their correlation).
    random : ResultFamily
        The same rows for the Random baseline: the organisers' random ratings, with the spread of
        ``n_draws`` fresh random ratings.
    subcategories : tuple of str
        The relations scored, in order.
    labels : tuple of str
        ``"4b CONTRAST: Contrary"`` for each.
    n_pairs, n_questions : tuple of int
        Pairs rated and MaxDiff questions answered in each (those whose words are all usable).
    """

    model: ResultFamily
    random: ResultFamily
    subcategories: tuple
    labels: tuple
    n_pairs: tuple
    n_questions: tuple

    @property
    def dropped(self) -> tuple:
        """Pairs, paradigm pairs and relations left out, with their relation and reasons."""
        return self.model.dropped

    @property
    def method(self) -> str:
        """How the uncertainty was propagated (Monte Carlo)."""
        return self.model.method

    def row(self, subcategory: str, metric: str = "maxdiff") -> str:
        """The row name of a relation's metric (``metric``: ``"maxdiff"`` or ``"spearman"``)."""
        if subcategory not in self.subcategories:
            raise KeyError(f"{subcategory!r} was not scored; scored: {', '.join(self.subcategories)}")
        return f"{subcategory} {_metric(metric)}"

    def versus_random(self, metric: str | None = None, alternative: str = "larger") -> ResultFamily:
        """Each relation's score minus the Random baseline's, tested (draws of both are independent).

        Parameters
        ----------
        metric : {"maxdiff", "spearman"} or None
            One metric, or both (None).
        alternative : {"larger", "two-sided", "smaller"}, default="larger"
            The embedding does better than random (the paper's question).
        """
        joint = _independent(self.model, self.random)
        rows = [k for k, name in enumerate(self.model.names) if metric is None or name.endswith(_metric(metric))]
        weights = np.zeros((len(rows), len(joint)))
        for r, k in enumerate(rows):
            weights[r, k], weights[r, len(self.model) + k] = 1.0, -1.0
        names = [f"{self.model.names[k]} - random" for k in rows]
        return joint.linear(weights, names, "score minus the Random baseline", alternative=alternative)

    def difference(self, first: str, second: str, metric: str = "maxdiff",
                   alternative: str = "two-sided") -> InferenceResult:
        """Test that two relations have the same score (joint draws, so their correlation counts)."""
        return self.model.difference(self.row(first, metric), self.row(second, metric), alternative=alternative)

    def summary_frame(self, *, confidence_level: float = 0.95) -> pd.DataFrame:
        """One row per relation and metric: score, interval, Random baseline and its interval, p-value."""
        model = self.model.conf_int(confidence_level=confidence_level).to_numpy()
        random = self.random.conf_int(confidence_level=confidence_level).to_numpy()
        versus = self.versus_random()
        low, high = f"[{(1 - confidence_level) / 2:g}", f"{1 - (1 - confidence_level) / 2:g}]"
        rows = []
        for k, name in enumerate(self.model.names):
            relation = k // 2
            rows.append({"relation": self.labels[relation], "metric": name.split(" ", 1)[1],
                         "pairs": self.n_pairs[relation], "questions": self.n_questions[relation],
                         "score": self.model.estimates[k], "std err": self.model.std_errors[k],
                         low: model[k, 0], high: model[k, 1], "random": self.random.estimates[k],
                         f"random {low}": random[k, 0], f"random {high}": random[k, 1],
                         "P (> random)": versus.pvalues[k]})
        return pd.DataFrame(rows, index=list(self.model.names))

    def summary(self, *, confidence_level: float = 0.95) -> Summary:
        """A statsmodels ``Summary``: the table and what it rests on."""
        lines = [f"Method: {self.model.method_reason}",
                 f"Random baseline: {RANDOM_BASELINE}, {len(self.random.draws)} random ratings",
                 "P (> random): one-sided test that the score exceeds the Random baseline's (versus_random())",
                 *self.model.caveats]
        return render(self.summary_frame(confidence_level=confidence_level),
                      "SemEval-2012 Task 2 (relational similarity): Monte Carlo",
                      notes(lines, self.model.uncertainty, self.model.words, self.dropped, "pair"))

    def __str__(self) -> str:
        return str(self.summary())


@fill_doc
def evaluate_relational_similarity(kv: EmbeddingWithCovariance, relations: Mapping[str, SemEvalRelation]
                                   | Sequence[SemEvalRelation], *, n_draws: int = 1000, random_state=DEFAULT_SEED,
                                   missing: str = DEFAULT_MISSING, lowercase: bool = True,
                                   progress: bool = False) -> RelationalSimilarity:
    """Score SemEval-2012 Task 2 relations with Monte Carlo intervals, the Random baseline and tests.

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    relations : dict or sequence of SemEvalRelation
        From :func:`~glovev_ext.stats.read_semeval2012`.
    n_draws : int, default=1000
        Draws of the embedding, and random ratings for the baseline.
    {random_state}
        One generator serves the embedding's draws and the random ratings.
    {missing}
        A pair with an unusable word is refused, or left out and named; a question is answered
        only when its four pairs are rated. A relation with no usable paradigm pair, fewer than
        three rated pairs or no answerable question is an error under ``"raise"`` and is dropped
        (and named) under ``"drop"``.
    lowercase : bool, default=True
        Look words up in lower case (as a lower-cased model was built).
    {progress}

    Returns
    -------
    RelationalSimilarity
    """
    check_missing(missing)
    relations = list(relations.values()) if isinstance(relations, Mapping) else list(relations)
    if not relations:
        raise ValueError("no relation to score")
    generator = np.random.default_rng(random_state)
    fold = str.lower if lowercase else str
    positions: dict = {}
    scored, dropped = [], []
    for relation in relations:
        try:
            one, lost = _scored(kv, relation, fold, missing, positions)
        except _Unscorable as error:
            if missing == "raise":
                raise ValueError(str(error)) from None
            dropped.append(f"relation {error}")
            continue
        scored.append(one)
        dropped += lost
    if not scored:
        raise ValueError(f"no relation can be scored: {'; '.join(dropped[-5:])}")
    words = resolve(kv, tuple(positions))

    def all_scores(vectors):
        return np.concatenate([one.scores(one.ratings(vectors)) for one in scored], axis=-1)

    names = tuple(f"{one.relation.subcategory} {metric}" for one in scored for metric in (MAXDIFF, SPEARMAN))
    bounds = np.array([_BOUNDS[name.split(" ", 1)[1]] for name in names])
    estimates = all_scores(words.vectors)
    draws = draw_values(words, all_scores, n_draws, generator, progress=progress)
    model = ResultFamily.of("SemEval-2012 Task 2 scores", names, estimates, np.atleast_2d(np.cov(draws, rowvar=False)),
                            method=MONTE_CARLO,
                         words=words.keys, dropped=tuple(dropped), draws=draws, bounds=bounds, scale="bounded",
                         method_reason=f"{_NOT_SMOOTH} ({n_draws} draws)", caveats=tuple(word_caveats(words)),
                         dropped_noun="pair")
    random = _random_baseline(scored, names, bounds, n_draws, generator)
    return RelationalSimilarity(model, random, tuple(one.relation.subcategory for one in scored),
                                tuple(one.relation.label for one in scored),
                                tuple(len(one.pairs) for one in scored),
                                tuple(len(one.questions) for one in scored))


def _scored(kv: EmbeddingWithCovariance, relation: SemEvalRelation, fold, missing: str,
            positions: dict) -> tuple[_ScoredRelation, list]:
    """What of ``relation`` can be scored, its words added to ``positions``, and what was dropped."""
    def words(pair):
        return fold(pair[0]), fold(pair[1])

    label = relation.subcategory
    try:
        pairs, lost = usable_groups(kv, relation.pairs, missing, words=words)
        paradigms, lost_paradigms = usable_groups(kv, relation.paradigms, missing, words=words, noun="paradigm pair")
    except UndefinedCovarianceError as error:
        raise UndefinedCovarianceError(f"{relation.label}: {error}") from None
    dropped = [f"{label} {text}" for text in lost] + [f"{label} paradigm {text}" for text in lost_paradigms]
    if not paradigms:
        raise _Unscorable(f"{relation.label} (none of its paradigm pairs is usable: {'; '.join(lost_paradigms)})")
    if len(pairs) < 3:
        raise _Unscorable(f"{relation.label} (only {len(pairs)} of its {len(relation.pairs)} pairs are usable)")
    pair_position = {pair: k for k, pair in enumerate(pairs)}
    question_rows = tuple(q for q, question in enumerate(relation.questions)
                          if all(pair in pair_position for pair in question))
    if not question_rows:
        raise _Unscorable(f"{relation.label} (no MaxDiff question has all four pairs usable)")
    gold = relation.gold if relation.gold is not None else maxdiff_to_scale(relation)
    gold_pairs = [k for k, pair in enumerate(pairs) if pair in gold]
    if len(gold_pairs) < 3:
        raise _Unscorable(f"{relation.label} (only {len(gold_pairs)} usable pairs have a gold rating)")
    for word in (w for pair in (*pairs, *paradigms) for w in words(pair)):
        positions.setdefault(word, len(positions))
    least, most = majority_masks(relation, question_rows)
    random = None if relation.random is None or not all(p in relation.random for p in pairs) else \
        np.array([relation.random[p] for p in pairs])
    return _ScoredRelation(
        relation=relation,
        pairs=np.array([[positions[w] for w in words(pair)] for pair in pairs]),
        paradigms=np.array([[positions[w] for w in words(pair)] for pair in paradigms]),
        questions=np.array([[pair_position[p] for p in relation.questions[q]] for q in question_rows]),
        least=least, most=most, gold_pairs=np.array(gold_pairs),
        gold_ranks=rankdata([gold[pairs[k]] for k in gold_pairs]), random=random), dropped


class _Unscorable(Exception):
    """A relation left with too little to score: dropped under ``missing="drop"``, an error otherwise."""


def _random_baseline(scored: Sequence[_ScoredRelation], names: tuple, bounds: np.ndarray, n_draws: int,
                     generator: np.random.Generator) -> ResultFamily:
    """The organisers' Random ratings scored like the embedding's, with the spread of fresh random ratings."""
    draws = np.concatenate([one.scores(generator.random((n_draws, len(one.pairs)))) for one in scored], axis=-1)
    estimates = np.concatenate([one.scores(one.random) if one.random is not None else draws[:, 2 * k:2 * k + 2].mean(0)
                                for k, one in enumerate(scored)])
    return ResultFamily.of("Random baseline", names, estimates, np.atleast_2d(np.cov(draws, rowvar=False)),
                           method=MONTE_CARLO,
                        uncertainty=RANDOM_BASELINE, draws=draws, bounds=bounds, scale="bounded",
                        method_reason=f"{n_draws} random ratings of the same pairs")


def _independent(first: ResultFamily, second: ResultFamily) -> ResultFamily:
    """Two independent Monte Carlo families as one (block-diagonal covariance, draws side by side)."""
    return ResultFamily.of(f"{first.name} & {second.name}", (*first.names, *second.names),
                           np.concatenate([first.estimates, second.estimates]),
                           block_diag(first.covariance, second.covariance), method=MONTE_CARLO,
                        words=first.words, dropped=first.dropped, draws=np.hstack([first.draws, second.draws]),
                        bounds=np.vstack([first.bounds, second.bounds]), scale="bounded",
                        method_reason=first.method_reason, caveats=first.caveats, dropped_noun="pair")


def _metric(metric: str) -> str:
    if metric not in METRICS:
        raise ValueError(f"metric must be 'maxdiff' or 'spearman', got {metric!r}")
    return METRICS[metric]


def _unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)
