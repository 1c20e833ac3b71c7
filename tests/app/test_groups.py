"""Groups of documents in the fit: the noise calibration splits whole groups, and the error bars then hold when two
sets of groups are compared (docs/method.md 6.16).

The simulation draws documents from groups whose use of words differs (each "book" has its own mix of topics), so a
word's contexts vary between books beyond their variation between paragraphs of one book: halves of the paragraphs
understate how two halves of the books differ. With the calibration on halves of the books, the library's equality
test of a cosine across two other halves of the books holds its size; calibrated on halves of the paragraphs (the
library before groups), it rejects several times too often.
"""

from __future__ import annotations

import numpy as np
import pytest

import glovev_ext
from glovev_ext.split_half import split_half_check

N_BOOKS, PARAGRAPHS, LENGTH, VOCABULARY, TOPICS = 40, 100, 30, 300, 8


@pytest.fixture(scope="module")
def books() -> tuple[list[str], list[int]]:
    return simulated_books()


def simulated_books() -> tuple[list[str], list[int]]:
    """4,000 paragraphs of 30 tokens from 40 books; each paragraph's words come from one topic, drawn from its
    book's own mix of 8 topics (Dirichlet(0.3): books use topics very differently)."""
    rng = np.random.default_rng(0)
    topics = rng.dirichlet(np.full(VOCABULARY, 0.1), size=TOPICS)
    zipf = 1.0 / np.arange(1, VOCABULARY + 1)
    topics = 0.5 * topics + 0.5 * zipf / zipf.sum()
    words = np.array([f"w{i}" for i in range(VOCABULARY)])
    documents, labels = [], []
    for book in range(N_BOOKS):
        mix = rng.dirichlet(np.full(TOPICS, 0.3))
        for topic in rng.choice(TOPICS, size=PARAGRAPHS, p=mix):
            documents.append(" ".join(words[rng.choice(VOCABULARY, size=LENGTH, p=topics[topic])]))
            labels.append(book)
    return documents, labels


def fit(documents, groups):
    return glovev_ext.fit_corpus(documents, glovev_ext.CooccurrenceVectorizer(min_count=5, n_jobs=1),
                                 glovev_ext.GloVeVEstimator(n_components=5, epochs=10, random_state=0, n_jobs=1),
                                 groups=groups, progress=False)


def book_halves(fitted, documents, labels) -> tuple[float, float]:
    """Over three halvings of the books (seeds the calibration did not use), for 150 random pairs of the words seen
    300 times or more: the mean rejection rate at 5 % of the library's equality test of their cosine, and the
    geometric mean of the words' vectors' mean Wald statistic over its expectation."""
    rejections, ratios = [], []
    for seed in (11, 12, 13):
        check = split_half_check(fitted, documents, groups=labels, n_pairs=150, bands=(300,), random_state=seed,
                                 progress=False)
        table = check.summary_frame()
        rejections.append(float(table["equality rejects"].iloc[0]))
        ratios.append(float(table["ratio"].iloc[0]))
    return float(np.mean(rejections)), float(np.exp(np.mean(np.log(ratios))))


def test_calibrated_on_halves_of_the_books_the_equality_test_holds_its_size_across_books(books):
    documents, labels = books
    grouped = fit(documents, glovev_ext.DocumentGroups.from_labels(labels, unit="books"))
    paragraphs = fit(documents, None)
    assert grouped.metadata["sampling"] == {"unit": "books", "n_groups": N_BOOKS}
    assert paragraphs.metadata["sampling"] == {"unit": "documents", "n_groups": N_BOOKS * PARAGRAPHS}
    # the frequent words' variances grow with the books' heterogeneity, beyond the paragraphs' factor
    totals = np.exp(grouped.estimator.noise_scale_.own.log_totals)
    factor = grouped.estimator.noise_scale_(totals) / paragraphs.estimator.noise_scale_(totals)
    assert np.all(factor > 1.2) and np.exp(np.log(factor).mean()) > 2
    # (0.067 / 0.093 / 0.067 and 0.58 / 0.97 / 1.41 over the three halvings: every pair of one halving shares its
    # books, so a rate over 3 x 150 pairs is far less precise than 450 independent tests would be)
    rejects, ratio = book_halves(grouped, documents, labels)
    assert 0.02 <= rejects <= 0.10
    assert 0.6 <= ratio <= 1.6
    # the library before groups: calibrated on paragraphs, compared across books
    rejects, ratio = book_halves(paragraphs, documents, labels)  # 0.187 / 0.260 / 0.233 and 3.2 / 5.4 / 8.0
    assert rejects >= 0.15
    assert ratio >= 3.0


def test_groups_are_checked_before_the_work(books):
    documents, labels = books
    with pytest.raises(ValueError, match="groups label 3,999 documents, but the corpus has 4,000"):
        fit(documents, labels[:-1])
    with pytest.raises(ValueError, match="groups set the unit of the noise calibration's random halves"):
        glovev_ext.fit_corpus(documents, estimator=glovev_ext.GloVeVEstimator(n_components=5), groups=labels,
                              calibrate_noise=False, progress=False)
    with pytest.raises(ValueError, match="4 groups cannot calibrate the error bars"):
        fit(documents, [label % 4 for label in labels])


def test_a_line_corpus_is_checked_once_counted(books, tmp_path):
    documents, labels = books
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(documents[:2000]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="groups label 4,000 documents, but the corpus has 2,000"):
        fit(glovev_ext.LineCorpus(path), labels)


def test_the_grouped_split_is_reproducible_and_differs_from_the_checks(books):
    documents, labels = books
    groups = glovev_ext.DocumentGroups.from_labels(labels)
    first, second = fit(documents, groups), fit(documents, groups)
    assert np.array_equal(first.keyed_vectors.vectors, second.keyed_vectors.vectors)
    # the calibration draws its halves from a child of the estimator's seed: a check with that seed splits otherwise
    calibration = groups.halves(np.random.default_rng(0).spawn(1)[0])
    check = groups.halves(np.random.default_rng(0))
    assert not np.array_equal(calibration, check) and not np.array_equal(calibration, ~check)


# The command line: --groups, --group-column, the corpora's own groups, and what the report and info say.

def cli(capsys, *args) -> tuple[int, str, str]:
    from glovev_ext.cli import main

    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


FIT = ["--n-components", "8", "--epochs", "3", "--quiet", "--n-jobs", "1"]


def test_fit_with_a_file_of_labels_and_with_a_table_says_what_the_intervals_describe(corpus_file, capsys, tmp_path):
    labels = tmp_path / "labels.txt"
    labels.write_text("".join(f"{line // 200}\n" for line in range(4000)), encoding="utf-8")
    status, out, err = cli(capsys, "fit", corpus_file, "--groups", labels, "--output", tmp_path / "m", *FIT)
    assert status == 0, err
    metadata = glovev_ext.load_model(tmp_path / "m")[1]
    assert metadata["sampling"] == {"unit": "groups", "n_groups": 20}
    assert "two random halves of its 20 groups differ beyond GloVe-V's noise model" in out
    assert "sampling: intervals describe resampling groups: 20 groups" in out.splitlines()
    status, out, _ = cli(capsys, "info", tmp_path / "m")
    assert status == 0 and "with a covariance; intervals describe resampling groups: 20 groups" in out.splitlines()[0]
    table = tmp_path / "authors.tsv"
    table.write_text("part\tfirst_line\tn_lines\tauthor\n"
                     + "".join(f"{k}\t{1 + 250 * k}\t250\tauthor {k % 12}\n" for k in range(16)), encoding="utf-8")
    status, out, err = cli(capsys, "fit", corpus_file, "--groups", table, "--group-column", "author",
                           "--output", tmp_path / "a", *FIT)
    assert status == 0, err
    assert glovev_ext.load_model(tmp_path / "a")[1]["sampling"] == {"unit": "authors", "n_groups": 12}
    status, out, err = cli(capsys, "fit", corpus_file, "--groups", "documents", "--output", tmp_path / "d", *FIT)
    assert status == 0 and "sampling: intervals describe resampling documents: 4,000 groups" in out
    status, out, err = cli(capsys, "fit", corpus_file, "--no-noise-calibration", "--output", tmp_path / "n", *FIT)
    assert glovev_ext.load_model(tmp_path / "n")[1]["sampling"] is None
    assert "sampling: intervals carry GloVe-V's model noise only" in out


@pytest.mark.parametrize("options, message", [
    (["--groups", "{few}"], "5 groups cannot calibrate the error bars at that unit"),
    (["--groups", "{short}"], "groups label 3,999 documents, but the corpus has 4,000"),
    (["--groups", "{few}", "--group-column", "author"], "holds one label per line"),
    (["--group-column", "author"], "--group-column names a column of a --groups table: give --groups too"),
    (["--groups", "documents", "--group-column", "author"], "not of --groups documents"),
    (["--groups", "{few}", "--no-noise-calibration"], "--groups sets the unit of the noise calibration"),
    (["--groups", "{few}", "--point-estimate", "trained"], "--groups sets the unit of the noise calibration"),
])
def test_groups_that_cannot_work_end_in_one_line_before_the_fit(corpus_file, capsys, tmp_path, options, message):
    few, short = tmp_path / "few.txt", tmp_path / "short.txt"
    few.write_text("".join(f"{line % 5}\n" for line in range(4000)), encoding="utf-8")
    short.write_text("".join(f"{line % 20}\n" for line in range(3999)), encoding="utf-8")
    options = [o.format(few=few, short=short) for o in options]
    status, out, err = cli(capsys, "fit", corpus_file, *options, "--output", tmp_path / "m", *FIT)
    assert status == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m").exists()


def test_a_folder_is_grouped_by_its_files_when_it_has_enough_of_them(corpus_file, capsys, tmp_path):
    lines = corpus_file.read_text(encoding="utf-8").splitlines()
    for n_files in (12, 3):
        folder = tmp_path / f"folder{n_files}"
        folder.mkdir()
        for k, part in enumerate(np.array_split(np.arange(len(lines)), n_files)):
            (folder / f"part{k:02d}.txt").write_text("".join(lines[i] + "\n" for i in part), encoding="utf-8")
        status, out, err = cli(capsys, "fit", folder, "--output", tmp_path / f"m{n_files}", *FIT)
        assert status == 0, err
        sampling = glovev_ext.load_model(tmp_path / f"m{n_files}")[1]["sampling"]
        if n_files == 12:
            assert sampling == {"unit": "files", "n_groups": 12}
        else:
            assert sampling == {"unit": "documents", "n_groups": 4000}
            assert "groups: the corpus's 3 files are too few to calibrate on (at least 10)" in out


def test_the_check_splits_whole_groups_as_drawn_by_its_seed(books, monkeypatch):
    documents, labels = books
    fitted = fit(documents, None)
    seen = {}

    def record(fitted, subcorpora):
        seen.update(subcorpora)
        raise RuntimeError("recorded")

    monkeypatch.setattr(glovev_ext.split_half, "fit_subcorpora", record)
    with pytest.raises(RuntimeError, match="recorded"):
        split_half_check(fitted, documents, groups=labels, random_state=7, progress=False)
    first = glovev_ext.DocumentGroups.from_labels(labels).halves(np.random.default_rng(7))
    assert seen["A"] == [d for d, a in zip(documents, first) if a]
    assert seen["B"] == [d for d, a in zip(documents, first) if not a]
    with pytest.raises(ValueError, match="groups label 10 documents, but the corpus has 4,000"):
        split_half_check(fitted, documents, groups=labels[:10], progress=False)


def test_a_model_saved_before_groups_says_what_its_intervals_describe():
    from glovev_ext.pipeline import sampling_description

    calibrated = {"glove": {"noise_scale": {"own": {}, "pooled": {}}}, "counts": {"n_documents": 45198}}
    assert sampling_description(calibrated) == "intervals describe resampling documents: 45,198 groups"
    assert sampling_description({"glove": {"noise_scale": None}}).startswith(
        "intervals carry GloVe-V's model noise only")
    assert sampling_description({"sampling": None, **calibrated}).startswith("intervals carry GloVe-V's model noise")
    assert sampling_description({"sampling": {"unit": "books", "n_groups": 38}}) == (
        "intervals describe resampling books: 38 groups")


def test_a_noise_scale_carried_from_another_fit_does_not_claim_a_unit(books):
    documents, labels = books
    grouped = fit(documents, labels)
    carried = glovev_ext.fit_corpus(
        documents[:2000], glovev_ext.CooccurrenceVectorizer(min_count=5, n_jobs=1),
        glovev_ext.GloVeVEstimator(n_components=5, epochs=2, n_jobs=1, noise_scale=grouped.estimator.noise_scale_),
        progress=False)
    from glovev_ext.pipeline import sampling_description

    assert carried.metadata["sampling"] == {"unit": None, "n_groups": None}
    assert sampling_description(carried.metadata) == (
        "intervals describe resampling the unit of the fit the estimator's noise_scale was calibrated on")
