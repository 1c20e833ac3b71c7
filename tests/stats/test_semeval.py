"""SemEval-2012 Task 2: the reader, and the scoring against the organisers' worked examples on subcategory 1a."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from scipy.stats import spearmanr

from glovev_ext.stats.statistics.semeval import (SAMPLE_PATH, SemEvalRelation, maxdiff_accuracy, maxdiff_counts, maxdiff_to_scale,
                                      read_semeval2012, scale_to_maxdiff, spearman_with_gold)

PACKAGE = SAMPLE_PATH / "SemEval-2012-Complete-Data-Package"
EXAMPLES = PACKAGE / "Examples"
GOLD_FILE = SAMPLE_PATH / "SemEval-2012-Gold-Ratings" / "Training" / "GoldRatings-1a.txt"
QUOTED = re.compile(r'"([^"]*)"')


# ---------------------------------------------------------------------------------------------------------------
# independent parsers of the organisers' output files


def pair_of(text: str) -> tuple:
    x, y = text.strip().strip('"').split(":")
    return x, y


def data_lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def scaled_file(path: Path) -> list[tuple[str, tuple]]:
    """``[(printed value, pair)]`` of a ``%.1f "x:y"`` ratings file, in the file's order."""
    rows = []
    for line in data_lines(path):
        value, text = line.split(None, 1)
        rows.append((value, pair_of(text)))
    return rows


def header_number(path: Path, label: str) -> str:
    """The value after ``label:`` in a file's header or report (first occurrence)."""
    match = re.search(rf"{re.escape(label)}:\s*(\S+)", path.read_text(encoding="utf-8"))
    assert match, f"{label!r} not in {path}"
    return match.group(1)


@pytest.fixture(scope="module")
def relation():
    return read_semeval2012(SAMPLE_PATH, ["1a"])["1a"]


@pytest.fixture(scope="module")
def random_scaled() -> dict:
    """The organisers' random ratings of the worked example (Examples/RandomScaled-1a.txt)."""
    return {pair: float(value) for value, pair in scaled_file(EXAMPLES / "RandomScaled-1a.txt")}


@pytest.fixture(scope="module")
def random_maxdiff() -> list[tuple]:
    """``(question, least, most)`` per line of Examples/RandomMaxDiff-1a.txt."""
    rows = []
    for line in data_lines(EXAMPLES / "RandomMaxDiff-1a.txt"):
        fields = [pair_of(text) for text in QUOTED.findall(line)]
        assert len(fields) == 6, line
        rows.append((tuple(fields[:4]), fields[4], fields[5]))
    return rows


# ---------------------------------------------------------------------------------------------------------------
# the bundled 1a against the Examples/ outputs of the organisers' Perl scripts


def test_the_sample_reads_as_one_relation_with_its_paradigms():
    """SAMPLE_PATH holds 1a only; its label, paradigms and optional files are read."""
    relations = read_semeval2012(SAMPLE_PATH)
    assert list(relations) == ["1a"]
    one = relations["1a"]
    assert one.label == "1a CLASS-INCLUSION: Taxonomic"
    assert one.paradigms == (("flower", "tulip"), ("emotion", "rage"), ("poem", "sonnet"))
    assert one.gold is not None and one.random is not None


def test_header_counts_answers_and_unique_pairs(relation):
    """506 MaxDiff answers and 41 unique pairs, as TurkerScaled-1a's header says."""
    path = EXAMPLES / "TurkerScaled-1a.txt"
    answers = int(header_number(path, "Number of MaxDiff Answers"))
    unique = int(header_number(path, "Number of Unique Pairs"))
    assert (answers, unique) == (506, 41)
    assert sum(relation.appearances.values()) == 4 * answers
    assert len(relation.pairs) == unique == len(relation.appearances)
    assert set(relation.appearances) == set(relation.pairs)
    # every answer line is one vote per end, except the blank choices
    votes = sum(sum(v.values()) for v in relation.least_votes) + sum(sum(v.values()) for v in relation.most_votes)
    blanks = sum(line.count('""') for line in data_lines(PACKAGE / "Training" / "Phase2Answers"
                                                         / "Phase2Answers-1a.txt"))
    assert votes == 2 * answers - blanks


def test_maxdiff_to_scale_prints_as_turker_scaled(relation):
    """Every line of TurkerScaled-1a is f"{x:.1f}" of maxdiff_to_scale for its pair."""
    scale = maxdiff_to_scale(relation)
    printed = scaled_file(EXAMPLES / "TurkerScaled-1a.txt")
    assert len(printed) == len(scale) == 41
    assert {pair for _, pair in printed} == set(scale)
    for value, pair in printed:
        assert f"{scale[pair]:.1f}" == value, pair


def test_maxdiff_to_scale_prints_as_the_gold_ratings(relation):
    """The gold file too: each printed value equals the scale to one decimal, and relation.gold holds it."""
    scale = maxdiff_to_scale(relation)
    printed = scaled_file(GOLD_FILE)
    assert {pair for _, pair in printed} == set(scale)
    for value, pair in printed:
        assert f"{scale[pair]:.1f}" == value, pair
    assert relation.gold == {pair: float(value) for value, pair in printed}


def test_spearman_of_random_scaled_equals_the_organisers(relation, random_scaled):
    """spearman_with_gold on RandomScaled-1a equals SpearmanRandomScaled-1a's correlation (to 1e-15)."""
    path = EXAMPLES / "SpearmanRandomScaled-1a.txt"
    expected = float(header_number(path, "Spearman Correlation"))
    assert int(header_number(path, "Number of Pairs")) == len(random_scaled)
    assert spearman_with_gold(relation, random_scaled) == pytest.approx(expected, abs=1e-15, rel=0)
    # the release's Random baseline is the same rating
    assert relation.random == random_scaled


def test_scale_to_maxdiff_answers_as_random_maxdiff(relation, random_scaled, random_maxdiff):
    """scale_to_maxdiff(questions, RandomScaled) gives RandomMaxDiff-1a's least and most, row by row."""
    assert int(header_number(EXAMPLES / "RandomMaxDiff-1a.txt", "Number of MaxDiff Questions")) == len(random_maxdiff)
    assert [question for question, _, _ in random_maxdiff] == list(relation.questions)
    answers = scale_to_maxdiff(relation.questions, random_scaled)
    assert len(answers) == len(random_maxdiff) == 103
    for k, (got, (_, least, most)) in enumerate(zip(answers, random_maxdiff)):
        assert got == (least, most), k


def test_maxdiff_counts_equal_the_organisers_report(relation, random_scaled, random_maxdiff):
    """maxdiff_counts of RandomMaxDiff's answers gives MaxDiffRandom-1a's counts; accuracies round to its %."""
    report = EXAMPLES / "MaxDiffRandom-1a.txt"
    n = int(header_number(report, "Number of MaxDiff Questions"))
    least_right = int(header_number(report, "Number of Least Illustrative Guessed Correctly"))
    least_wrong = int(header_number(report, "Number of Least Illustrative Guessed Incorrectly"))
    most_right = int(header_number(report, "Number of Most Illustrative Guessed Correctly"))
    most_wrong = int(header_number(report, "Number of Most Illustrative Guessed Incorrectly"))
    least_percent = header_number(report, "Accuracy of Least Illustrative Guesses")
    most_percent = header_number(report, "Accuracy of Most Illustrative Guesses")
    overall_percent = header_number(report, "Overall Accuracy")

    answers = [(least, most) for _, least, most in random_maxdiff]
    got_least, got_most = maxdiff_counts(relation, answers)
    assert (got_least, got_most) == (least_right, most_right)
    assert (n - got_least, n - got_most) == (least_wrong, most_wrong)
    assert f"{100 * got_least / n:.1f}%" == least_percent
    assert f"{100 * got_most / n:.1f}%" == most_percent
    accuracy = maxdiff_accuracy(relation, random_scaled)
    assert accuracy == (least_right + most_right) / (2 * n)
    assert f"{100 * accuracy:.1f}%" == overall_percent


def test_scale_to_maxdiff_breaks_ties_by_the_question_order():
    """Tied lowest or highest ratings: the pair listed first in the question is the answer."""
    a, b, c, d = ("a", "b"), ("c", "d"), ("e", "f"), ("g", "h")
    assert scale_to_maxdiff([(a, b, c, d)], {a: 1.0, b: 1.0, c: 1.0, d: 1.0}) == [(a, a)]
    assert scale_to_maxdiff([(a, b, c, d)], {a: 2.0, b: 0.0, c: 3.0, d: 0.0}) == [(b, c)]
    assert scale_to_maxdiff([(d, c, b, a)], {a: 2.0, b: 0.0, c: 3.0, d: 3.0}) == [(b, d)]


def test_maxdiff_counts_refuses_a_wrong_number_of_answers(relation, random_maxdiff):
    """One answer per question scored, or a ValueError."""
    answers = [(least, most) for _, least, most in random_maxdiff]
    with pytest.raises(ValueError, match="102 answers for 103 questions"):
        maxdiff_counts(relation, answers[:-1])


# ---------------------------------------------------------------------------------------------------------------
# a small synthetic release


LIST = "1, a, CLASS-INCLUSION, Taxonomic\n1, b, CLASS-INCLUSION, Functional\n9, z, MADE-UP, Never released\n"
PAIRS = ["ab:cd", "ef:gh", "ij:kl", "mn:op", "qr:st"]
Q1 = ("ab:cd", "ef:gh", "ij:kl", "mn:op")
Q2 = ("ef:gh", "ij:kl", "mn:op", "qr:st")
# Q1: least ab:cd 1, ef:gh 1, one blank (a tie); most ij:kl 2, mn:op 1
# Q2: least qr:st 2; most ef:gh 1, mn:op 1 (a tie)
ANSWERS = [(Q1, "ab:cd", "ij:kl"), (Q1, "ef:gh", "ij:kl"), (Q1, "", "mn:op"),
           (Q2, "qr:st", "ef:gh"), (Q2, "qr:st", "mn:op")]
# appearances: ab:cd 3, ef:gh 5, ij:kl 5, mn:op 5, qr:st 2 (the blank answer's line counts as shown)
SCALE = {("ab", "cd"): 0 - 100 / 3, ("ef", "gh"): 100 / 5 - 100 / 5, ("ij", "kl"): 200 / 5,
         ("mn", "op"): 200 / 5, ("qr", "st"): -100.0}


def answer_line(question, least, most) -> str:
    return "\t".join(f'"{text}"' for text in (*question, least, most, "Y is a kind/type/instance of X"))


def write_release(root: Path, subcategory: str = "1a", answers=ANSWERS, phase: str = "Training",
                  extra_answer_lines=()) -> Path:
    package = root / "SemEval-2012-Complete-Data-Package"
    package.mkdir(parents=True, exist_ok=True)
    (package / "subcategories-list.txt").write_text(LIST, encoding="utf-8")
    folder = package / phase
    for name in ("Phase1Questions", "Phase1Answers", "Phase2Questions", "Phase2Answers"):
        (folder / name).mkdir(parents=True, exist_ok=True)
    (folder / "Phase1Questions" / f"Phase1Questions-{subcategory}.txt").write_text(
        f"Question {subcategory}\n\nConsider the following word pairs:\n\nuv:wx\nyz:ab. cd:ef\n\n"
        "What relation best describes these X:Y word pairs?\n", encoding="utf-8")
    (folder / "Phase1Answers" / f"Phase1Answers-{subcategory}.txt").write_text(
        "".join(f'"{p}"\n' for p in PAIRS), encoding="utf-8")
    (folder / "Phase2Questions" / f"Phase2Questions-{subcategory}.txt").write_text(
        "".join(",".join(f'"{p}"' for p in q) + "\n" for q in (Q1, Q2)), encoding="utf-8")
    lines = ["# pair1\tpair2\tpair3\tpair4\tleast_illustrative\tmost_illustrative\tuser_selected_relation",
             *(answer_line(*a) for a in answers), *extra_answer_lines]
    path = folder / "Phase2Answers" / f"Phase2Answers-{subcategory}.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def as_pair(text: str) -> tuple:
    return tuple(text.split(":"))


def test_synthetic_release_is_read_field_by_field(tmp_path):
    """Pairs, paradigms (two on one line), questions, votes and appearances of a hand-made release."""
    write_release(tmp_path)
    one = read_semeval2012(tmp_path, ["1a"])["1a"]
    assert one.label == "1a CLASS-INCLUSION: Taxonomic"
    assert one.paradigms == (("uv", "wx"), ("yz", "ab"), ("cd", "ef"))
    assert one.pairs == tuple(map(as_pair, PAIRS))
    assert one.questions == (tuple(map(as_pair, Q1)), tuple(map(as_pair, Q2)))
    assert one.gold is None and one.random is None


def test_a_blank_choice_is_shown_but_no_vote(tmp_path):
    """The blank least choice of Q1 adds appearances to its four pairs and no vote (and no "" key)."""
    write_release(tmp_path)
    one = read_semeval2012(tmp_path, ["1a"])["1a"]
    assert one.least_votes == ({("ab", "cd"): 1, ("ef", "gh"): 1}, {("qr", "st"): 2})
    assert one.most_votes == ({("ij", "kl"): 2, ("mn", "op"): 1}, {("ef", "gh"): 1, ("mn", "op"): 1})
    assert one.appearances == {("ab", "cd"): 3, ("ef", "gh"): 5, ("ij", "kl"): 5, ("mn", "op"): 5, ("qr", "st"): 2}
    scale = maxdiff_to_scale(one)
    assert scale.keys() == SCALE.keys()
    for pair, value in SCALE.items():
        assert scale[pair] == pytest.approx(value, abs=1e-12), pair


def test_tied_majorities_are_all_counted_correct(tmp_path):
    """Q1's least and Q2's most are ties: either tied pair counts; a pair with fewer votes does not."""
    write_release(tmp_path)
    one = read_semeval2012(tmp_path, ["1a"])["1a"]
    ab, ef, ij, mn, qr = map(as_pair, PAIRS)
    assert maxdiff_counts(one, [(ab, ij), (qr, ef)]) == (2, 2)
    assert maxdiff_counts(one, [(ef, ij), (qr, mn)]) == (2, 2)
    assert maxdiff_counts(one, [(ij, mn), (ef, ij)]) == (0, 0)  # mn:op is 1 of 2 on Q1's most: not the majority
    assert maxdiff_counts(one, [(qr, ef)], questions=[1]) == (1, 1)
    # no ratings answer both most ends right (ij:kl is Q1's majority, and not Q2's): 3 of 4 at best
    assert maxdiff_accuracy(one, {ab: 0.0, ef: 0.5, ij: 3.0, mn: 2.0, qr: -1.0}) == 0.75
    assert maxdiff_accuracy(one, {ab: 1.0, ef: 0.0, ij: 3.0, mn: 2.0, qr: -1.0}) == 0.75  # ef:gh tied least, Q1
    assert maxdiff_accuracy(one, {ab: 0.0, ef: 0.5, ij: 2.0, mn: 3.0, qr: -1.0}) == 0.75  # mn:op tied most, Q2
    assert maxdiff_accuracy(one, {ab: 0.0, ef: 3.0, ij: 2.0, mn: 1.0, qr: -1.0}) == 0.75  # ef:gh tied most, Q2
    assert maxdiff_accuracy(one, {ab: 2.0, ef: 3.0, ij: 0.5, mn: 1.0, qr: 4.0}) == 0.0
    # only Q1 has all four pairs rated
    assert maxdiff_accuracy(one, {ab: 0.0, ef: 1.0, ij: 3.0, mn: 2.0}) == 1.0


def test_without_gold_files_spearman_uses_the_turkers_scale(tmp_path):
    """No gold folder: spearman_with_gold correlates with maxdiff_to_scale (hand-computed here)."""
    write_release(tmp_path)
    one = read_semeval2012(tmp_path, ["1a"])["1a"]
    ratings = dict(zip(one.pairs, [0.3, 0.1, 0.5, 0.2, 0.4]))
    expected = spearmanr([ratings[p] for p in SCALE], list(SCALE.values()))[0]
    assert spearman_with_gold(one, ratings) == pytest.approx(expected, abs=1e-15)
    assert expected != pytest.approx(spearmanr([0.3, 0.1, 0.5, 0.2, 0.4], [1, 2, 3, 4, 5])[0])
    with pytest.raises(ValueError, match="only 2 rated pairs"):
        spearman_with_gold(one, dict(list(ratings.items())[:2]))


def test_by_default_only_the_subcategories_present_are_read(tmp_path):
    """subcategories=None reads those with files (1a in Training, 1b in Testing), in the list's order."""
    write_release(tmp_path, "1b", phase="Testing")
    write_release(tmp_path, "1a")
    relations = read_semeval2012(tmp_path)
    assert list(relations) == ["1a", "1b"]
    assert relations["1b"].label == "1b CLASS-INCLUSION: Functional"
    assert list(read_semeval2012(tmp_path, ["1b"])) == ["1b"]


def test_a_missing_package_folder_is_named(tmp_path):
    """A folder without SemEval-2012-Complete-Data-Package: FileNotFoundError naming it."""
    with pytest.raises(FileNotFoundError, match="SemEval-2012-Complete-Data-Package"):
        read_semeval2012(tmp_path)


def test_an_unknown_subcategory_is_named(tmp_path):
    """An id not in subcategories-list.txt: KeyError naming it; a listed one without files: FileNotFoundError."""
    write_release(tmp_path)
    with pytest.raises(KeyError, match="7q"):
        read_semeval2012(tmp_path, ["1a", "7q"])
    with pytest.raises(FileNotFoundError, match="Phase1Answers-9z"):
        read_semeval2012(tmp_path, ["9z"])


def test_a_short_answer_line_is_named_with_file_and_line(tmp_path):
    """A Phase2Answers line with five quoted fields: ValueError naming file:line."""
    short = "\t".join(f'"{text}"' for text in (*Q1, "ab:cd"))
    path = write_release(tmp_path, extra_answer_lines=[short])
    line = 1 + len(ANSWERS) + 1  # the header comment, the answers, then the short line
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))}:{line}: expected four pairs"):
        read_semeval2012(tmp_path, ["1a"])


def test_an_answer_to_an_unknown_question_is_named(tmp_path):
    """An answered question not among the Phase 2 questions: ValueError naming file:line."""
    unknown = ("ab:cd", "ij:kl", "ef:gh", "mn:op")  # Q1 in another order
    path = write_release(tmp_path, answers=[*ANSWERS[:2], (unknown, "ab:cd", "ij:kl"), *ANSWERS[2:]])
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))}:4: the answered question .* is not among"):
        read_semeval2012(tmp_path, ["1a"])


def test_the_scale_subtracts_two_percentages_as_the_organisers_script_does():
    """handshake:agreement of 10a: 48 showings, 17 most and 8 least. 35.41...% - 16.66...% is 18.749999999999996 in
    floating point and prints 18.7, as the release's gold file has it; a single quotient 100 * 9 / 48 = 18.75 would
    print 18.8."""
    pair = ("handshake", "agreement")
    others = [("a", "b"), ("c", "d"), ("e", "f")]
    relation = SemEvalRelation("10z", "SIGN", "Test", paradigms=(pair,), pairs=(pair, *others),
                               questions=((pair, *others),), least_votes=({pair: 8},), most_votes=({pair: 17},),
                               appearances={pair: 48, **{p: 48 for p in others}})
    assert f"{maxdiff_to_scale(relation)[pair]:.1f}" == "18.7"
    assert f"{100 * 9 / 48:.1f}" == "18.8"
