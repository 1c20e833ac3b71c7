"""SemEval-2012 Task 2 (relational similarity): the task's files and the organisers' two metrics.

The task (Jurgens, Mohammad, Turney and Holyoak, 2012) rates word pairs ``x:y`` by how
prototypical they are of a relation given by three paradigm pairs. Turkers answered MaxDiff
questions (four pairs: which is the most, which the least illustrative?). The organisers score a
system's ratings two ways (their README-scripts.txt):

- **MaxDiff accuracy**: each question is answered with the highest- and lowest-rated of its four
  pairs; a guess is right when it is the Turkers' majority choice (tied majorities are all right);
  the accuracy is the share of right guesses over both ends of every question.
- **Spearman correlation** of the ratings with the gold ratings, which are the Turkers' answers
  converted to a scale: per cent of a pair's appearances chosen most illustrative minus per cent
  chosen least illustrative (printed to one decimal in the gold files).

Nothing here uses an embedding; :mod:`.relational` rates the pairs with one and adds GloVe-V
uncertainty.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

PHASES = ("Training", "Testing")
SAMPLE_PATH = Path(__file__).resolve().parents[2] / "data" / "semeval2012_task2_1a"
"""Subcategory 1a of the release, bundled (CC BY-SA 3.0): what ``read_semeval2012()`` reads by default."""
_QUOTED = re.compile(r'"([^"]*)"')
# paradigm lines hold one pair each, but some hold two joined by "." or ","
_PARADIGM = re.compile(r"([^\s,.:]+)\s*:\s*([^\s,.:]+)")


@dataclass(frozen=True)
class SemEvalRelation:
    """One subcategory of SemEval-2012 Task 2 with its questions, answers and baselines.

    Attributes
    ----------
    subcategory : str
        Its id, e.g. ``"4b"``.
    category, name : str
        E.g. ``"CONTRAST"``, ``"Contrary"``.
    paradigms : tuple of (str, str)
        The three paradigm pairs that define the relation.
    pairs : tuple of (str, str)
        The pairs to rate (Phase 1 answers), each once, in the file's order.
    questions : tuple of 4-tuples of (str, str)
        The MaxDiff questions (Phase 2), in the file's order.
    least_votes, most_votes : tuple of dict
        Per question, how many Turkers chose each of its pairs as least / most illustrative.
    appearances : dict
        How many Turker answers showed each pair (the denominator of the gold scale).
    gold : dict or None
        ``{pair: rating}`` from the gold-ratings file (rounded as published), if present.
    random : dict or None
        ``{pair: rating}`` of the organisers' Random baseline, if present.
    """

    subcategory: str
    category: str
    name: str
    paradigms: tuple
    pairs: tuple
    questions: tuple
    least_votes: tuple
    most_votes: tuple
    appearances: dict
    gold: dict | None = None
    random: dict | None = None

    @property
    def label(self) -> str:
        """``"4b CONTRAST: Contrary"``."""
        return f"{self.subcategory} {self.category}: {self.name}"


def read_semeval2012(root: str | os.PathLike = SAMPLE_PATH, subcategories: Iterable[str] | None = None
                     ) -> dict[str, SemEvalRelation]:
    """The relations of SemEval-2012 Task 2 as released by the organisers.

    Parameters
    ----------
    root : path, default=SAMPLE_PATH
        The folder holding ``SemEval-2012-Complete-Data-Package`` (required) and, optionally,
        ``SemEval-2012-Gold-Ratings`` and ``SemEval-2012-Baselines`` (for ``gold`` and ``random``;
        without gold ratings they are computed from the Turkers' answers). By default the bundled
        sample, subcategory 1a.
    subcategories : iterable of str, optional
        Ids to read (e.g. ``["4b", "2d"]``); by default every one whose files are there (all 79 in
        the release; only 1a in the bundled ``SAMPLE_PATH``).

    Returns
    -------
    dict
        ``{subcategory: SemEvalRelation}`` in the subcategory list's order.
    """
    root = Path(root)
    package = _package(root)
    listed = _subcategory_list(package / "subcategories-list.txt")
    wanted = available_subcategories(root) if subcategories is None else list(subcategories)
    unknown = [s for s in wanted if s not in listed]
    if unknown:
        raise KeyError(f"unknown SemEval-2012 subcategories {unknown}; known: {', '.join(listed)}")
    return {s: _read_relation(root, package, s, *listed[s]) for s in wanted}


def maxdiff_to_scale(relation: SemEvalRelation) -> dict:
    """The organisers' scale from the Turkers' answers: % chosen most minus % chosen least illustrative.

    Unrounded; the gold files print it to one decimal.
    """
    most, least = Counter(), Counter()
    for votes_most, votes_least in zip(relation.most_votes, relation.least_votes):
        most.update(votes_most)
        least.update(votes_least)
    # two percentages subtracted, as the organisers' script does: printed to one decimal, the
    # result then equals the gold files digit for digit (a single quotient rounds some halves the other way)
    return {pair: 100.0 * most[pair] / shown - 100.0 * least[pair] / shown
            for pair, shown in relation.appearances.items()}


def scale_to_maxdiff(questions: Sequence[Sequence], ratings: Mapping) -> list[tuple]:
    """``(least, most)`` illustrative pair of each question: its lowest- and highest-rated pair.

    Ties go to the pair listed first in the question.
    """
    answers = []
    for question in questions:
        values = [ratings[pair] for pair in question]
        answers.append((question[int(np.argmin(values))], question[int(np.argmax(values))]))
    return answers


def maxdiff_counts(relation: SemEvalRelation, answers: Sequence[tuple],
                   questions: Sequence[int] | None = None) -> tuple[int, int]:
    """How many least and most illustrative guesses match the Turkers' majority.

    Parameters
    ----------
    relation : SemEvalRelation
    answers : sequence of (least, most)
        One per question scored.
    questions : sequence of int, optional
        Positions in ``relation.questions`` that ``answers`` answer (all, in order, by default).
    """
    positions = range(len(relation.questions)) if questions is None else questions
    if len(answers) != len(positions):
        raise ValueError(f"{len(answers)} answers for {len(positions)} questions")
    least_right = most_right = 0
    for (least, most), q in zip(answers, positions):
        least_right += _is_majority(relation.least_votes[q], least)
        most_right += _is_majority(relation.most_votes[q], most)
    return least_right, most_right


def maxdiff_accuracy(relation: SemEvalRelation, ratings: Mapping) -> float:
    """The organisers' MaxDiff accuracy of ``ratings`` over the questions whose four pairs are all rated."""
    positions = [q for q, question in enumerate(relation.questions) if all(pair in ratings for pair in question)]
    if not positions:
        raise ValueError(f"{relation.subcategory}: no MaxDiff question has all four pairs rated")
    answers = scale_to_maxdiff([relation.questions[q] for q in positions], ratings)
    least_right, most_right = maxdiff_counts(relation, answers, positions)
    return (least_right + most_right) / (2 * len(positions))


def spearman_with_gold(relation: SemEvalRelation, ratings: Mapping) -> float:
    """The organisers' Spearman correlation of ``ratings`` with the gold ratings (over the rated pairs)."""
    gold = relation.gold if relation.gold is not None else maxdiff_to_scale(relation)
    pairs = [pair for pair in relation.pairs if pair in ratings and pair in gold]
    if len(pairs) < 3:
        raise ValueError(f"{relation.subcategory}: only {len(pairs)} rated pairs have a gold rating")
    return float(spearmanr([ratings[p] for p in pairs], [gold[p] for p in pairs])[0])


def majority_masks(relation: SemEvalRelation, questions: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """``(n, 4)`` booleans: which of each question's pairs is a majority least / most illustrative choice."""
    least = np.array([[_is_majority(relation.least_votes[q], pair) for pair in relation.questions[q]]
                      for q in questions], dtype=bool).reshape(len(questions), 4)
    most = np.array([[_is_majority(relation.most_votes[q], pair) for pair in relation.questions[q]]
                     for q in questions], dtype=bool).reshape(len(questions), 4)
    return least, most


def _is_majority(votes: Mapping, pair) -> bool:
    return bool(votes) and votes.get(pair, 0) == max(votes.values())


def _pair(text: str, path: Path) -> tuple:
    parts = text.strip().strip('"').split(":")
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"{path}: {text!r} is not a word pair x:y")
    return parts[0].strip(), parts[1].strip()


def _subcategory_list(path: Path) -> dict[str, tuple[str, str]]:
    listed = {}
    for line in _lines(path):
        number, letter, category, name = (part.strip() for part in line.split(",", 3))
        listed[f"{number}{letter}"] = (category, name)
    return listed


def _paradigms(path: Path) -> tuple:
    """The paradigm pairs of a Phase 1 question file: the lines between "Consider ..." and "What relation ...".

    (subcategories-paradigms.txt lists them too, but with stray separators.)
    """
    lines = _lines(path)
    start = next((k for k, line in enumerate(lines) if line.startswith("Consider the following")), None)
    end = next((k for k, line in enumerate(lines) if line.startswith("What relation")), None)
    if start is None or end is None or end <= start + 1:
        raise ValueError(f"{path}: no paradigm pairs between 'Consider the following word pairs' and 'What relation'")
    pairs = tuple(pair for line in lines[start + 1:end] for pair in _PARADIGM.findall(line))
    if not pairs:
        raise ValueError(f"{path}: no paradigm pair x:y")
    return pairs


def _read_relation(root: Path, package: Path, subcategory: str, category: str, name: str) -> SemEvalRelation:
    phase = _phase(package, subcategory)
    if phase is None:
        raise FileNotFoundError(f"{package}: no Phase1Answers-{subcategory}.txt under Training or Testing")
    folder = package / phase
    paradigms = _paradigms(folder / "Phase1Questions" / f"Phase1Questions-{subcategory}.txt")
    pairs_path = folder / "Phase1Answers" / f"Phase1Answers-{subcategory}.txt"
    pairs = tuple(dict.fromkeys(_pair(line, pairs_path) for line in _lines(pairs_path)))
    questions_path = folder / "Phase2Questions" / f"Phase2Questions-{subcategory}.txt"
    questions = tuple(_question(line, questions_path) for line in _lines(questions_path))
    least, most, appearances = _answers(folder / "Phase2Answers" / f"Phase2Answers-{subcategory}.txt", questions)
    gold = _ratings(root / "SemEval-2012-Gold-Ratings" / phase / f"GoldRatings-{subcategory}.txt")
    random = _ratings(root / "SemEval-2012-Baselines" / "Random" / phase / f"RandomRatings-{subcategory}.txt")
    return SemEvalRelation(subcategory, category, name, paradigms, pairs, questions, least, most, appearances,
                           gold, random)


def available_subcategories(root: str | os.PathLike) -> list[str]:
    """The subcategory ids whose files a SemEval-2012 Task 2 folder holds, in the release's order.

    All 79 in the organisers' release; ``["1a"]`` in the bundled ``SAMPLE_PATH``.
    """
    package = _package(Path(root))
    return [s for s in _subcategory_list(package / "subcategories-list.txt") if _phase(package, s) is not None]


def _package(root: Path) -> Path:
    package = root / "SemEval-2012-Complete-Data-Package"
    if not package.is_dir():
        raise FileNotFoundError(f"{root}: no SemEval-2012-Complete-Data-Package folder (the organisers' release)")
    return package


def _phase(package: Path, subcategory: str) -> str | None:
    """Training or Testing: where the release keeps the subcategory (None if in neither)."""
    return next((p for p in PHASES if (package / p / "Phase1Answers" / f"Phase1Answers-{subcategory}.txt").exists()),
                None)


def _question(line: str, path: Path) -> tuple:
    question = tuple(_pair(text, path) for text in line.split(","))
    if len(question) != 4:
        raise ValueError(f"{path}: a MaxDiff question has four pairs, got {line!r}")
    return question


def _answers(path: Path, questions: tuple) -> tuple[tuple, tuple, dict]:
    position = {question: q for q, question in enumerate(questions)}
    least = [Counter() for _ in questions]
    most = [Counter() for _ in questions]
    appearances = Counter()
    for line_number, text in _lines(path, keep_numbers=True):
        fields = _QUOTED.findall(text)[:6]
        if len(fields) != 6:
            raise ValueError(f"{path}:{line_number}: expected four pairs, least and most illustrative")
        question = tuple(_pair(field, path) for field in fields[:4])
        if question not in position:
            raise ValueError(f"{path}:{line_number}: the answered question {question} is not among the questions")
        q = position[question]
        # an answer left blank (84 in the release) counts as shown but is no vote
        for votes, choice in ((least[q], fields[4]), (most[q], fields[5])):
            if choice:
                votes[_pair(choice, path)] += 1
        appearances.update(question)
    return tuple(dict(c) for c in least), tuple(dict(c) for c in most), dict(appearances)


def _ratings(path: Path) -> dict | None:
    if not path.exists():
        return None
    ratings = {}
    for line in _lines(path):
        value, text = line.split(None, 1)
        ratings[_pair(text, path)] = float(value)
    return ratings


def _lines(path: Path, keep_numbers: bool = False) -> list:
    """The file's lines that are not blank or ``#`` comments (with their numbers when asked)."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing from the SemEval-2012 release")
    with open(path, encoding="utf-8") as stream:
        kept = [(number, line.rstrip("\n")) for number, line in enumerate(stream, 1)
                if line.strip() and not line.lstrip().startswith("#")]
    return kept if keep_numbers else [line for _, line in kept]
