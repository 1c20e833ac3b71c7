"""SemEval-2012 Task 2 scored with GloVe-V: against brute-force scoring, the Random baseline, tests and the CLI."""

from __future__ import annotations

import dataclasses
import json
import shutil

import numpy as np
import pytest

import glovev_ext
from glovev_ext import UndefinedCovarianceError, evaluate_relational_similarity
from glovev_ext.cli import main
from glovev_ext.stats.statistics import relational
from glovev_ext.stats.statistics.semeval import SAMPLE_PATH, maxdiff_accuracy, read_semeval2012, spearman_with_gold

N_DRAWS = 400


@pytest.fixture(scope="module")
def relation():
    return read_semeval2012(SAMPLE_PATH, ["1a"])["1a"]


def usable_word(kv, word: str) -> bool:
    return word.lower() in kv.key_to_index and kv.has_covariance(word.lower())


def usable_pairs(kv, pairs) -> list:
    return [pair for pair in pairs if all(usable_word(kv, w) for w in pair)]


def vector(kv, word: str) -> np.ndarray:
    return np.asarray(kv.get_vector(word.lower()), dtype=np.float64)


def brute_ratings(kv, relation) -> dict:
    """``{pair: mean cosine of y - x with each usable paradigm's b - a}``, one pair at a time."""
    paradigms = [vector(kv, b) - vector(kv, a) for a, b in usable_pairs(kv, relation.paradigms)]
    ratings = {}
    for x, y in usable_pairs(kv, relation.pairs):
        offset = vector(kv, y) - vector(kv, x)
        cosines = [float(offset @ p / (np.linalg.norm(offset) * np.linalg.norm(p))) for p in paradigms]
        ratings[(x, y)] = sum(cosines) / len(cosines)
    return ratings


def answerable(relation, kept) -> list[int]:
    kept = set(kept)
    return [q for q, question in enumerate(relation.questions) if all(pair in kept for pair in question)]


def n_majority(votes: dict, question) -> int:
    """How many of a question's pairs have the most votes (0 with no vote)."""
    if not votes:
        return 0
    top = max(votes.values())
    return sum(votes.get(pair, 0) == top for pair in question)


@pytest.fixture(scope="module")
def result(stats_kv, relation):
    return evaluate_relational_similarity(stats_kv, {"1a": relation}, n_draws=N_DRAWS, random_state=0,
                                          missing="drop")


def test_the_sample_keeps_enough_to_score(stats_kv, relation, result):
    """The fixture's vocabulary drops some 1a pairs but keeps >= 3 pairs, a paradigm and questions (else vacuous)."""
    kept = usable_pairs(stats_kv, relation.pairs)
    assert 3 <= len(kept) < len(relation.pairs)
    assert usable_pairs(stats_kv, relation.paradigms)
    assert result.subcategories == ("1a",)
    assert result.labels == ("1a CLASS-INCLUSION: Taxonomic",)
    assert result.n_pairs == (len(kept),)
    assert result.n_questions == (len(answerable(relation, kept)),) and result.n_questions[0] > 0
    assert result.model.names == ("1a MaxDiff accuracy", "1a Spearman")
    dropped_pairs = [d for d in result.dropped if "paradigm" not in d]
    assert len(dropped_pairs) == len(relation.pairs) - len(kept)


def test_model_estimates_equal_the_organisers_functions_on_brute_force_ratings(stats_kv, relation, result):
    """.model estimates = maxdiff_accuracy and spearman_with_gold of loop-computed ratings (1e-12)."""
    ratings = brute_ratings(stats_kv, relation)
    expected = [maxdiff_accuracy(relation, ratings), spearman_with_gold(relation, ratings)]
    np.testing.assert_allclose(result.model.estimates, expected, rtol=0, atol=1e-12)
    assert result.model.std_errors.shape == (2,) and (result.model.std_errors > 0).all()
    assert result.model.draws.shape == (N_DRAWS, 2)


def test_vectorised_ratings_and_scores_equal_the_loops(stats_kv, relation, rng):
    """_ScoredRelation.ratings = brute-force ratings; .scores on (n, P) ratings (ties too) = organisers' per row."""
    positions: dict = {}
    scored, _ = relational._scored(stats_kv, relation, str.lower, "drop", positions)
    kept = usable_pairs(stats_kv, relation.pairs)
    words = list(positions)
    assert [(words[i], words[j]) for i, j in scored.pairs] == [(x.lower(), y.lower()) for x, y in kept]

    vectors = np.vstack([vector(stats_kv, w) for w in words])
    brute = brute_ratings(stats_kv, relation)
    np.testing.assert_allclose(scored.ratings(vectors), [brute[p] for p in kept], rtol=0, atol=1e-12)
    # a batch of vectors rates each one alike
    batch = vectors[None] + 0.01 * rng.standard_normal((3, *vectors.shape))
    np.testing.assert_allclose(scored.ratings(batch)[1], scored.ratings(batch[1]), rtol=0, atol=1e-12)

    continuous = rng.normal(size=(60, len(kept)))
    tied = rng.integers(0, 4, size=(60, len(kept))).astype(float)  # many ties: tie-breaks and average ranks
    for ratings in (continuous, tied):
        got = scored.scores(ratings)
        assert got.shape == (len(ratings), 2)
        for row, values in zip(ratings, got):
            as_dict = dict(zip(kept, row))
            expected = [maxdiff_accuracy(relation, as_dict), spearman_with_gold(relation, as_dict)]
            np.testing.assert_allclose(values, expected, rtol=0, atol=1e-12)


def test_random_estimates_are_the_official_random_ratings_scored(stats_kv, relation, result):
    """.random estimates = the organisers' functions on relation.random restricted to the kept pairs."""
    kept = usable_pairs(stats_kv, relation.pairs)
    official = {pair: relation.random[pair] for pair in kept}
    expected = [maxdiff_accuracy(relation, official), spearman_with_gold(relation, official)]
    np.testing.assert_allclose(result.random.estimates, expected, rtol=0, atol=1e-12)
    assert result.random.names == result.model.names
    assert result.random.draws.shape == (N_DRAWS, 2)


def test_random_draws_average_to_their_exact_expectations(stats_kv, relation, result):
    """Random MaxDiff draws: mean within 4 SE of sum_q (majority least + majority most) / 4 / 2Q; Spearman: of 0."""
    questions = answerable(relation, usable_pairs(stats_kv, relation.pairs))
    expected = sum(n_majority(relation.least_votes[q], relation.questions[q])
                   + n_majority(relation.most_votes[q], relation.questions[q]) for q in questions) / 4 \
        / (2 * len(questions))
    maxdiff, spearman = result.random.draws[:, 0], result.random.draws[:, 1]
    standard_error = maxdiff.std(ddof=1) / np.sqrt(len(maxdiff))
    assert abs(maxdiff.mean() - expected) < 4 * standard_error
    assert abs(spearman.mean()) < 4 * spearman.std(ddof=1) / np.sqrt(len(spearman))
    # the draws are spread (fresh random ratings, not the official ones repeated)
    assert len(np.unique(spearman)) > N_DRAWS // 2
    np.testing.assert_allclose(result.random.std_errors, result.random.draws.std(axis=0, ddof=1), rtol=1e-12)


def test_versus_random_is_model_minus_random_with_independent_errors(result):
    """versus_random(): model - random estimates, SE sqrt(var_model + var_random); one metric on request."""
    versus = result.versus_random()
    assert versus.names == ("1a MaxDiff accuracy - random", "1a Spearman - random")
    np.testing.assert_allclose(versus.estimates, result.model.estimates - result.random.estimates, rtol=0, atol=1e-15)
    np.testing.assert_allclose(versus.std_errors,
                               np.sqrt(result.model.std_errors ** 2 + result.random.std_errors ** 2), rtol=1e-12)
    spearman = result.versus_random("spearman")
    assert spearman.names == ("1a Spearman - random",)
    assert spearman.estimates[0] == pytest.approx(versus.estimates[1], abs=1e-15)
    assert spearman.std_errors[0] == pytest.approx(versus.std_errors[1], rel=1e-12)
    with pytest.raises(ValueError, match="metric"):
        result.versus_random("accuracy")


def test_difference_between_relations_uses_the_joint_draws(stats_kv, relation):
    """1a beside a copy "1z" with shuffled gold: the difference's SE is the SD of the joint draws' differences."""
    gold_pairs = list(relation.gold)
    shuffled = np.random.default_rng(5).permutation([relation.gold[p] for p in gold_pairs])
    copy = dataclasses.replace(relation, subcategory="1z", gold=dict(zip(gold_pairs, shuffled.tolist())))
    both = evaluate_relational_similarity(stats_kv, [relation, copy], n_draws=300, random_state=1, missing="drop")
    assert both.model.names == ("1a MaxDiff accuracy", "1a Spearman", "1z MaxDiff accuracy", "1z Spearman")
    draws = both.model.draws

    ratings = brute_ratings(stats_kv, relation)
    assert both.model.estimates[3] == pytest.approx(spearman_with_gold(copy, ratings), abs=1e-12)

    spearman = both.difference("1a", "1z", "spearman")
    assert spearman.estimate == pytest.approx(both.model.estimates[1] - both.model.estimates[3], abs=1e-15)
    assert spearman.std_error == pytest.approx(np.std(draws[:, 1] - draws[:, 3], ddof=1), rel=1e-10)
    independent = np.sqrt(draws[:, 1].var(ddof=1) + draws[:, 3].var(ddof=1))
    assert spearman.std_error != pytest.approx(independent, rel=1e-3)
    # the same votes and the same words: the MaxDiff draws coincide, so their difference has no spread
    np.testing.assert_array_equal(draws[:, 0], draws[:, 2])
    maxdiff = both.difference("1a", "1z")
    assert maxdiff.estimate == 0 and maxdiff.std_error == pytest.approx(0, abs=1e-12)
    with pytest.raises(KeyError, match="4b"):
        both.difference("1a", "4b")


def test_missing_raise_names_an_unusable_word(stats_kv, relation):
    """missing="raise" refuses the sample with UndefinedCovarianceError naming the first unusable pair's word."""
    first = next(pair for pair in relation.pairs if not all(usable_word(stats_kv, w) for w in pair))
    word = next(w for w in first if not usable_word(stats_kv, w)).lower()
    with pytest.raises(UndefinedCovarianceError, match=word):
        evaluate_relational_similarity(stats_kv, [relation], n_draws=10, random_state=0, missing="raise")


def test_a_relation_without_usable_paradigms_is_named(stats_kv, relation):
    """No usable paradigm pair: ValueError naming the relation; beside a scorable one it is dropped and named."""
    bad = dataclasses.replace(relation, subcategory="1z", paradigms=(("zzqxv", "tree"), ("oak", "qqzyw")))
    with pytest.raises(ValueError, match=r"1z CLASS-INCLUSION: Taxonomic \(none of its paradigm pairs is usable"):
        evaluate_relational_similarity(stats_kv, [bad], n_draws=10, random_state=0, missing="drop")
    kept = evaluate_relational_similarity(stats_kv, [relation, bad], n_draws=10, random_state=0, missing="drop")
    assert kept.subcategories == ("1a",)
    assert any(d.startswith("relation 1z CLASS-INCLUSION: Taxonomic") for d in kept.dropped)
    with pytest.raises(ValueError, match="no relation to score"):
        evaluate_relational_similarity(stats_kv, [], n_draws=10, missing="drop")


def test_summary_shows_scores_and_the_random_baseline(result):
    """summary() renders the relation, both metrics and the Random baseline; the frame holds the estimates."""
    text = str(result.summary())
    assert "1a CLASS-INCLUSION: Taxonomic" in text and "Spearman" in text and "MaxDiff accuracy" in text
    assert "Random baseline" in text and "P (> random)" in text
    frame = result.summary_frame()
    assert list(frame.index) == list(result.model.names)
    np.testing.assert_allclose(frame["score"], result.model.estimates)
    np.testing.assert_allclose(frame["random"], result.random.estimates)
    np.testing.assert_allclose(frame["P (> random)"], result.versus_random().pvalues)
    np.testing.assert_allclose(frame[["[0.025", "0.975]"]], result.model.conf_int())
    np.testing.assert_allclose(frame[["random [0.025", "random 0.975]"]], result.random.conf_int())
    np.testing.assert_allclose(frame["std err"], np.std(result.model.draws, axis=0, ddof=1))
    assert (frame["pairs"] == result.n_pairs[0]).all() and (frame["questions"] == result.n_questions[0]).all()
    assert result.row("1a", "spearman") == "1a Spearman"
    with pytest.raises(KeyError, match="4b"):
        result.row("4b")


def test_the_same_random_state_gives_the_same_result(stats_kv, relation):
    """Same random_state: identical draws of the model and the baseline; another seed: other draws."""
    def run(seed):
        return evaluate_relational_similarity(stats_kv, [relation], n_draws=200, random_state=seed, missing="drop")

    first, again, other = run(7), run(7), run(8)
    np.testing.assert_array_equal(first.model.draws, again.model.draws)
    np.testing.assert_array_equal(first.random.draws, again.random.draws)
    assert first.summary_frame().equals(again.summary_frame())
    assert not np.array_equal(first.model.draws, other.model.draws)
    assert not np.array_equal(first.random.draws, other.random.draws)


# ---------------------------------------------------------------------------------------------------------------
# the command line


@pytest.fixture(scope="module")
def model_dir(stats_kv, tmp_path_factory):
    return glovev_ext.save_model(tmp_path_factory.mktemp("semeval") / "model", stats_kv,
                                 {"counting": {"lowercase": True}})


def semeval(capsys, model_dir, *extra) -> tuple[int, str, str]:
    status = main(["semeval", str(model_dir), str(SAMPLE_PATH), "--relations", "1a", "--missing", "drop",
                   *map(str, extra)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cli_semeval_prints_what_the_library_computes(stats_kv, relation, model_dir, capsys):
    """glovev semeval --format json: its rows equal the library's summary_frame (random_state 0, the default)."""
    status, out, _ = semeval(capsys, model_dir, "--draws", "200", "--format", "json")
    assert status == 0
    printed = json.loads(out)
    assert set(printed) == {"method", "rows", "notes"}
    expected = evaluate_relational_similarity(stats_kv, [relation], n_draws=200, random_state=0, missing="drop",
                                              lowercase=True)
    frame = expected.summary_frame().drop(columns=["relation", "metric"])  # the row names say them
    assert printed["method"] == expected.method
    assert list(printed["rows"]) == list(frame.index)
    for name, row in frame.iterrows():
        assert set(printed["rows"][name]) == set(frame.columns)
        for column, value in row.items():
            if isinstance(value, str):
                assert printed["rows"][name][column] == value
            else:
                assert printed["rows"][name][column] == pytest.approx(float(value), rel=1e-9, abs=1e-12), column
    assert any("Random baseline" in note for note in printed["notes"])


def test_cli_semeval_writes_the_plot(model_dir, capsys, tmp_path, monkeypatch):
    """--plot writes a PNG figure."""
    monkeypatch.setenv("MPLBACKEND", "Agg")
    path = tmp_path / "semeval.png"
    status, out, _ = semeval(capsys, model_dir, "--draws", "200", "--plot", path)
    assert status == 0 and f"figure written: {path}" in out
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 1000


@pytest.mark.parametrize("compare, message", [("1a", "--compare takes two relation ids as ID1:ID2, got '1a'"),
                                              ("1a:4b", "'4b' was not scored")])
def test_cli_semeval_refuses_a_bad_compare_in_one_line(model_dir, capsys, compare, message):
    """A bad --compare: exit status 2 and one 'glovev: error:' line saying what is wrong."""
    status, out, err = semeval(capsys, model_dir, "--draws", "20", "--compare", compare)
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("glovev: error:") and message in lines[0], err
    assert "Traceback" not in err


def test_cli_semeval_compares_relations_as_the_library_does(stats_kv, model_dir, capsys, tmp_path):
    """--compare 1a:1b prints each metric's difference as RelationalSimilarity.difference computes it (a copy of
    the bundled release whose "1b" is 1a with its gold ratings reversed, so the Spearman scores differ)."""
    release = tmp_path / "release"
    shutil.copytree(SAMPLE_PATH, release)
    for path in list(release.rglob("*-1a.txt")):
        text = path.read_text(encoding="utf-8")
        if path.name.startswith("GoldRatings"):
            lines = text.splitlines()
            rated = [line for line in lines if line.strip() and not line.startswith("#")]
            scores = [line.split(None, 1)[0] for line in rated][::-1]
            text = "\n".join(f"{score} {line.split(None, 1)[1]}" for score, line in zip(scores, rated)) + "\n"
        path.with_name(path.name.replace("-1a", "-1b")).write_text(text, encoding="utf-8")
    status = main(["semeval", str(model_dir), str(release), "--relations", "1a,1b", "--missing", "drop",
                   "--draws", "200", "--compare", "1a:1b", "--format", "json"])
    printed = json.loads(capsys.readouterr().out)["rows"]
    assert status == 0
    expected = evaluate_relational_similarity(stats_kv, read_semeval2012(release, ["1a", "1b"]), n_draws=200,
                                              random_state=0, missing="drop")
    for metric in ("maxdiff", "spearman"):
        difference = expected.difference("1a", "1b", metric)
        row = printed[difference.name]
        assert row["score"] == pytest.approx(difference.estimate, rel=1e-9, abs=1e-12)
        assert row["std err"] == pytest.approx(difference.std_error, rel=1e-9, abs=1e-12)
        low, high = difference.conf_int()
        assert row["[0.025"] == pytest.approx(low, rel=1e-9) and row["0.975]"] == pytest.approx(high, rel=1e-9)
        assert row["P (> random)"] is None
        if np.isfinite(difference.pvalue):
            assert row["P (same)"] == pytest.approx(difference.pvalue, rel=1e-9)
    assert printed["[1a Spearman] - [1b Spearman]"]["std err"] > 0


def test_cli_semeval_without_a_folder_uses_the_bundled_sample_and_says_so(model_dir, capsys):
    """No folder: the bundled subcategory 1a, said on the first line; a folder without the paper's four relations:
    all it holds. The table fits 100 columns; a relation compared with itself is refused, not a difference of 0."""
    for folder in ([], [str(SAMPLE_PATH)]):
        status = main(["semeval", str(model_dir), *folder, "--missing", "drop", "--draws", "50"])
        out, err = capsys.readouterr()
        assert status == 0, err
        assert out.startswith("SemEval-2012 data: the bundled sample (subcategory 1a only) in") == (not folder)
        assert "1a MaxDiff accuracy" in out and "relations: 1a CLASS-INCLUSION: Taxonomic" in " ".join(out.split())
        assert max(map(len, out.splitlines())) <= 100, out
    status, out, err = semeval(capsys, model_dir, "--draws", "20", "--compare", "1a:1a")
    assert status == 2 and "'1a MaxDiff accuracy' compared with itself: name two different rows" in err
