"""Groups of documents in the fit: the noise calibration splits whole groups, and the error bars then hold when two
sets of groups are compared (docs/method.md 6.16).

The simulation draws documents from groups whose use of words differs (each "book" has its own mix of topics), so a
word's contexts vary between books beyond their variation between paragraphs of one book: halves of the paragraphs
understate how two halves of the books differ. With the calibration on halves of the books, the library's equality
test of a cosine across two other halves of the books holds its size; calibrated on halves of the paragraphs (the
library before groups), it rejects several times too often. The same simulation, with the books drawn again from
its topics, is known truth for the delete-a-group jackknife's between-group errors (item 3 of issue 46).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats

import glovev_ext
from glovev_ext.counting import group_concentration
from glovev_ext.covariance.translation import remove_translation
from glovev_ext.split_half import split_half_check
from glovev_ext.stats import cosine_statistic

N_BOOKS, PARAGRAPHS, LENGTH, VOCABULARY, TOPICS = 40, 100, 30, 300, 8


@pytest.fixture(scope="module")
def books() -> tuple[list[str], list[int]]:
    return simulated_books()


def simulated_books(books_seed: int | None = None) -> tuple[list[str], list[int]]:
    """4,000 paragraphs of 30 tokens from 40 books; each paragraph's words come from one topic, drawn from its
    book's own mix of 8 topics (Dirichlet(0.3): books use topics very differently). The topics are always the same;
    ``books_seed`` draws another 40 books from them (None: the books of the topics' own stream)."""
    rng = np.random.default_rng(0)
    topics = rng.dirichlet(np.full(VOCABULARY, 0.1), size=TOPICS)
    zipf = 1.0 / np.arange(1, VOCABULARY + 1)
    topics = 0.5 * topics + 0.5 * zipf / zipf.sum()
    words = np.array([f"w{i}" for i in range(VOCABULARY)])
    documents, labels = [], []
    if books_seed is not None:
        rng = np.random.default_rng(books_seed)
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
    # 40 books say only so much about how books vary: every word's reference df is at most 39 (cluster-robust style),
    # in the pooled fit, in rows fitted later and in what the statistics read; without groups, as before
    assert grouped.estimator.noise_scale_.n_groups == N_BOOKS and paragraphs.estimator.noise_scale_.n_groups is None
    assert grouped.metadata["glove"]["noise_scale"]["n_groups"] == N_BOOKS
    assert grouped.estimator.noise_scale_.n_halvings == 3 and paragraphs.estimator.noise_scale_.n_halvings == 1
    uncapped = paragraphs.estimator.covariance_.dof  # the same contexts and pooled rows: the df do not depend on kappa
    assert (uncapped > N_BOOKS).any()
    np.testing.assert_array_equal(grouped.estimator.covariance_.dof, np.minimum(uncapped, N_BOOKS - 1))
    rows = grouped.vectorizer.transform(documents[:2000])
    later, before = grouped.estimator.conditional_fit(rows), paragraphs.estimator.conditional_fit(rows)
    np.testing.assert_array_equal(later.covariance.dof, np.minimum(before.covariance.dof, N_BOOKS - 1))
    result = grouped.keyed_vectors.similarity_test("w0", "w1", method="delta")
    assert grouped.keyed_vectors.covariance_factor("w0").dof == N_BOOKS - 1
    assert result.df <= 2 * (N_BOOKS - 1)  # two words' scales, combined by Welch-Satterthwaite
    # the frequent words' variances grow with the books' heterogeneity, beyond the paragraphs' factor
    totals = np.exp(grouped.estimator.noise_scale_.own.log_totals)
    factor = grouped.estimator.noise_scale_(totals) / paragraphs.estimator.noise_scale_(totals)
    assert np.all(factor > 1.1) and np.all(factor[totals > np.median(totals)] > 2)
    # the more often a word is seen, the more the books' variation dominates (the lowest three knots, 1.20 / 1.20 / 1.19
    # on the part across each word's vector with the halves' translation out, docs/method.md 6.22-6.23, are within
    # their noise of each other; the translation had lifted the most frequent words' factor from 3.6 to above 4.8)
    assert np.all(np.diff(factor[2:]) > 0) and factor[-1] > 2.5 * factor[:3].max()
    # (0.053 / 0.087 / 0.073 and 0.60 / 0.99 / 1.44 over the three halvings, calibrated on three others pooled; on one,
    # 0.067 / 0.093 / 0.067 and 0.58 / 0.97 / 1.41: every pair of one halving shares its books, so a rate over
    # 3 x 150 pairs is far less precise than 450 independent tests would be)
    rejects, ratio = book_halves(grouped, documents, labels)
    assert 0.02 <= rejects <= 0.10
    assert 0.6 <= ratio <= 1.6
    # the library before groups: calibrated on paragraphs, compared across books
    rejects, ratio = book_halves(paragraphs, documents, labels)  # 0.187 / 0.260 / 0.233 and 3.2 / 5.4 / 8.0
    # with the halves' translation out (docs/method.md 6.23): 0.122 and 2.23 over the three halvings
    assert rejects >= 0.10, (rejects, ratio)
    assert ratio >= 1.8, (rejects, ratio)


def test_groups_are_checked_before_the_work(books):
    documents, labels = books
    with pytest.raises(ValueError, match="groups label 3,999 documents, but the corpus has 4,000"):
        fit(documents, labels[:-1])
    with pytest.raises(ValueError, match="groups set the unit of the noise calibration's random halves"):
        glovev_ext.fit_corpus(documents, estimator=glovev_ext.GloVeVEstimator(n_components=5), groups=labels,
                              calibrate_noise=False, progress=False)
    with pytest.raises(ValueError, match="4 groups cannot calibrate the error bars"):
        fit(documents, [label % 4 for label in labels])
    for n_halvings, message in ((0, "n_halvings must be"), (1.5, "n_halvings must be")):
        with pytest.raises((TypeError, ValueError), match=message):
            glovev_ext.fit_corpus(documents, groups=labels, n_halvings=n_halvings, progress=False)


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


def test_each_halving_comes_from_its_own_child_of_the_seed_and_the_first_is_the_one_halving(books):
    from glovev_ext.pipeline import _random_halvings
    documents, labels = books
    groups = glovev_ext.DocumentGroups.from_labels(labels)
    vectorizer = glovev_ext.CooccurrenceVectorizer(min_count=5, n_jobs=1, progress=False).fit(documents)
    halvings = _random_halvings(vectorizer, documents, 0, groups, 3)
    masks = [groups.halves(child) for child in np.random.default_rng(0).spawn(3)]
    assert len(halvings) == 3 and len({mask.tobytes() for mask in masks}) == 3
    for pair, mask in zip(halvings, masks):
        for half, side in zip(pair, (True, False)):
            counted = vectorizer.transform([d for d, a in zip(documents, mask) if a == side])
            np.testing.assert_array_equal(half.toarray(), counted.toarray())
    one = _random_halvings(vectorizer, documents, 0, groups, 1)  # a pair, the first halving's
    assert isinstance(one, tuple) and all((a != b).nnz == 0 for a, b in zip(one, halvings[0]))


def test_fit_corpus_gives_the_pooled_text_and_each_half_their_own_concentrations():
    from glovev_ext.pipeline import _random_halvings
    documents, labels = simulated_books()
    groups = glovev_ext.DocumentGroups.from_labels(labels, unit="books")
    vectorizer = glovev_ext.CooccurrenceVectorizer(min_count=5, n_jobs=1, progress=False).fit(documents)
    counts = vectorizer.count_by_group(documents, groups)
    pair = _random_halvings(vectorizer, documents, 0, groups, 1, counts)
    mask = groups.halves(np.random.default_rng(0).spawn(1)[0])
    for half, side in zip(pair, (True, False)):
        chosen = [d for d, a in zip(documents, mask) if a == side]
        alone = vectorizer.count_by_group(chosen, groups.codes[mask == side])
        np.testing.assert_allclose(half.group_concentration, glovev_ext.counting.group_concentration(alone),
                                   rtol=1e-12)


def books_with_local_words(n_local: int = 60, holders: int = 3, share: float = 0.25) -> tuple[list[str], list[int]]:
    """The simulated books, with ``n_local`` local words (a character's name, a ship, a trade), each held by
    ``holders`` books drawn at random, where a ``share`` of each holding book's tokens are its local words."""
    rng = np.random.default_rng(0)
    documents, labels = simulated_books()
    local = np.array([f"l{i}" for i in range(n_local)])
    owners = [set(rng.choice(N_BOOKS, holders, replace=False).tolist()) for _ in range(n_local)]
    held = {book: [i for i in range(n_local) if book in owners[i]] for book in range(N_BOOKS)}
    out = []
    for document, book in zip(documents, labels):
        tokens = document.split()
        if held[book]:
            for k in np.flatnonzero(rng.random(len(tokens)) < share):
                tokens[k] = local[rng.choice(held[book])]
        out.append(" ".join(tokens))
    return out, labels


def test_words_that_few_books_hold_vary_as_their_scale_says_when_it_follows_their_concentration():
    """A band's factor is too narrow for words that few books hold and too wide for words spread over many
    (docs/method.md 6.20); a factor that follows each row's concentration over its text's books fits both."""
    documents, labels = books_with_local_words()
    groups = glovev_ext.DocumentGroups.from_labels(labels, unit="books")
    ratios = {}
    for by_concentration in (True, False):
        fitted = glovev_ext.fit_corpus(documents, glovev_ext.CooccurrenceVectorizer(min_count=5, n_jobs=1),
                                       glovev_ext.GloVeVEstimator(n_components=5, epochs=10, random_state=0, n_jobs=1),
                                       groups=groups, by_concentration=by_concentration, progress=False)
        scale = fitted.estimator.noise_scale_
        assert scale.by_concentration == by_concentration
        assert ("slope" in fitted.metadata["glove"]["noise_scale"]["own"]) == by_concentration
        if by_concentration:  # the knots' slopes and centres, saved as the scale has them
            np.testing.assert_allclose(fitted.metadata["glove"]["noise_scale"]["own"]["slope"], scale.own.slopes,
                                       atol=5e-5)
            np.testing.assert_allclose(fitted.metadata["glove"]["noise_scale"]["own"]["concentration"],
                                       scale.own.centres, atol=5e-6)
        local, spread = [], []
        for seed in (11, 12):  # halvings of the books the calibration did not use
            words = split_half_check(fitted, documents, groups=labels, n_pairs=1, bands=(300,), random_state=seed,
                                     progress=False).words
            is_local = words.index.str.startswith("l")
            assert is_local.sum() > 40
            local.append(words["wald_per_dim"][is_local].mean() / words["expected"][is_local].mean())
            spread.append(words["wald_per_dim"][~is_local].mean() / words["expected"][~is_local].mean())
        ratios[by_concentration] = float(np.exp(np.mean(np.log(local)))), float(np.exp(np.mean(np.log(spread))))
    # (1.16 and 0.68 by concentration; 2.16 and 0.31 by total only)
    local, spread = ratios[True]
    assert 0.7 <= local <= 1.5 and local / spread <= 2.5
    local, spread = ratios[False]
    assert local >= 1.8 and local / spread >= 4.0


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
    assert ("two random halves of its 20 groups differ beyond GloVe-V's noise model (pooled over 3 random halvings)"
            in out)
    assert metadata["glove"]["noise_scale"]["n_halvings"] == 3
    assert "sampling: intervals describe resampling groups: 20 groups" in out.splitlines()
    # the report says the factor follows the words' concentration exactly when the saved scale does
    sloped = "slope" in metadata["glove"]["noise_scale"]["own"] or "slope" in metadata["glove"]["noise_scale"]["pooled"]
    assert ("more for words that few groups hold" in out) == sloped
    status, out, err = cli(capsys, "fit", corpus_file, "--groups", labels, "--no-concentration",
                           "--output", tmp_path / "t", *FIT)
    assert status == 0 and "few groups hold" not in out
    saved = glovev_ext.load_model(tmp_path / "t")[1]["glove"]["noise_scale"]
    assert all("slope" not in curve for curve in saved.values() if isinstance(curve, dict))
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
    assert "halvings" not in out
    assert "n_halvings" not in glovev_ext.load_model(tmp_path / "d")[1]["glove"]["noise_scale"]
    status, out, err = cli(capsys, "fit", corpus_file, "--halvings", "2", "--output", tmp_path / "d2", *FIT)
    assert status == 0 and "(pooled over 2 random halvings)" in out
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
    (["--halvings", "0"], "n_halvings must be"),
    (["--halvings", "2", "--no-noise-calibration"], "n_halvings=2 sets how many random halvings"),
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


def test_the_check_splits_whole_groups_as_drawn_by_its_seed(books, grouped_books, monkeypatch):
    documents, labels = books
    fitted = fit(documents, None)
    seen = {}

    def record(fitted, subcorpora, groups=None):
        seen.update(subcorpora, groups=groups)
        raise RuntimeError("recorded")

    monkeypatch.setattr(glovev_ext.split_half, "fit_subcorpora", record)
    with pytest.raises(RuntimeError, match="recorded"):
        split_half_check(fitted, documents, groups=labels, random_state=7, progress=False)
    groups = glovev_ext.DocumentGroups.from_labels(labels)
    first = groups.halves(np.random.default_rng(7))
    assert seen["A"] == [d for d, a in zip(documents, first) if a]
    assert seen["B"] == [d for d, a in zip(documents, first) if not a]
    assert seen["groups"] is None  # a scale in total only: the halves need no concentrations
    # calibrated with a slope in the books' concentrations, each half is told its own books
    estimator = grouped_books[2].estimator
    own = estimator.noise_scale_.own
    sloped = dataclasses.replace(own, slopes=np.full(own.factors.size, 2.0), centres=np.full(own.factors.size, 0.1))
    monkeypatch.setattr(estimator, "noise_scale_", dataclasses.replace(estimator.noise_scale_, own=sloped))
    with pytest.raises(RuntimeError, match="recorded"):
        split_half_check(grouped_books[2], documents, groups=labels, random_state=7, progress=False)
    np.testing.assert_array_equal(seen["groups"]["A"], groups.codes[first])
    np.testing.assert_array_equal(seen["groups"]["B"], groups.codes[~first])
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


# The delete-a-group jackknife: between-group errors without a noise model.

FOLDS = 10


@pytest.fixture(scope="module")
def grouped_books():
    documents, labels = simulated_books()
    groups = glovev_ext.DocumentGroups.from_labels(labels, unit="books")
    return documents, groups, fit(documents, groups)


@pytest.fixture(scope="module")
def jackknife(grouped_books):
    documents, groups, fitted = grouped_books
    return glovev_ext.group_jackknife(fitted, documents, groups, n_folds=FOLDS, random_state=3, progress=False)


def without_translation(fitted, fit, rows) -> np.ndarray:
    """A conditional fit's vectors less their translation against the pooled fit's keyed vectors (docs/method.md
    6.23), as the jackknife takes each fold's out."""
    kv = fitted.keyed_vectors
    references = np.array([kv[w] if w in kv.key_to_index else np.full(kv.vector_size, np.nan)
                           for w in fitted.cooccurrence.words])
    embedding = fit.embedding.copy()
    remove_translation(embedding, fit.covariance, references, fitted.estimator.prior_.precision,
                       np.asarray(rows.sum(axis=1)).ravel())
    return embedding


def frequent_pairs(fitted, n_pairs: int, seed: int = 0) -> list[tuple[str, str]]:
    kv = fitted.keyed_vectors
    frequent = [w for w in kv.index_to_key if kv.get_vecattr(w, "count") >= 300]
    rng = np.random.default_rng(seed)
    return [tuple(rng.choice(frequent, size=2, replace=False)) for _ in range(n_pairs)]


def test_each_folds_vectors_are_the_rows_of_what_it_leaves_counted_directly(grouped_books, jackknife):
    documents, groups, fitted = grouped_books
    assert jackknife.n_folds == FOLDS and np.bincount(jackknife.fold_of_group).tolist() == [4] * FOLDS
    fold_of_document = jackknife.fold_of_group[groups.codes]
    for k in (0, 7):
        rest = [d for d, fold in zip(documents, fold_of_document) if fold != k]
        rows = fitted.vectorizer.transform(rest)
        plain = fitted.estimator.conditional_fit(rows).embedding  # the means do not depend on the concentration
        kept = fold_of_document != k
        by_book = fitted.vectorizer.count_by_group(rest, np.asarray(groups.codes)[kept])
        told = glovev_ext.CooccurrenceMatrix(rows, group_concentration=group_concentration(by_book))
        direct = without_translation(fitted, fitted.estimator.conditional_fit(told), rows)  # its covariances weigh
        np.testing.assert_allclose(jackknife.fold_vectors[k], direct, rtol=1e-7, atol=1e-9)
        assert np.isfinite(direct).any(axis=1).sum() > 100
        assert not np.allclose(plain, direct, rtol=1e-5, atol=0, equal_nan=True)  # a translation was taken out


def test_a_scale_that_follows_concentration_scales_each_fold_at_its_own(grouped_books, monkeypatch):
    """Each fold's rows at their concentration over the books it keeps, counted directly."""
    documents, groups, fitted = grouped_books
    scale = fitted.estimator.noise_scale_
    knots = scale.own.factors.size
    following = dataclasses.replace(scale.own, slopes=np.full(knots, 2.0), centres=np.full(knots, 0.05))
    monkeypatch.setattr(fitted.estimator, "noise_scale_", dataclasses.replace(scale, own=following))
    jackknife = glovev_ext.group_jackknife(fitted, documents, groups, n_folds=4, random_state=3, progress=False)
    fold_of_document = jackknife.fold_of_group[groups.codes]
    for k in (0, 3):
        kept = fold_of_document != k
        rest = [d for d, keep in zip(documents, kept) if keep]
        by_book = fitted.vectorizer.count_by_group(rest, np.asarray(groups.codes)[kept])
        rows = glovev_ext.CooccurrenceMatrix(fitted.vectorizer.transform(rest),
                                             group_concentration=group_concentration(by_book))
        direct = without_translation(fitted, fitted.estimator.conditional_fit(rows), rows)
        np.testing.assert_allclose(jackknife.fold_vectors[k], direct, rtol=1e-7, atol=1e-9)
        plain = fitted.vectorizer.transform(rest)
        at_level = without_translation(fitted, fitted.estimator.conditional_fit(plain), plain)
        assert not np.allclose(at_level, direct, rtol=1e-5, atol=0, equal_nan=True)


def test_the_covariance_the_result_and_the_table_follow_the_jackknife_formula(grouped_books, jackknife):
    _, _, fitted = grouped_books
    pairs = frequent_pairs(fitted, 3)
    statistic = cosine_statistic(pairs)
    values = np.array([[np.dot(jackknife.fold_vectors[k, jackknife.words.index(a)],
                               jackknife.fold_vectors[k, jackknife.words.index(b)])
                        / np.linalg.norm(jackknife.fold_vectors[k, jackknife.words.index(a)])
                        / np.linalg.norm(jackknife.fold_vectors[k, jackknife.words.index(b)]) for a, b in pairs]
                       for k in range(FOLDS)])
    np.testing.assert_allclose(jackknife.values(statistic), values, rtol=1e-12)
    by_hand = np.zeros((3, 3))
    for k in range(FOLDS):
        centred = values[k] - values.mean(axis=0)
        by_hand += np.outer(centred, centred)
    by_hand *= (FOLDS - 1) / FOLDS
    np.testing.assert_allclose(jackknife.covariance(statistic), by_hand, rtol=1e-12)
    result = jackknife.estimate(statistic, scale="linear")
    kv = fitted.keyed_vectors
    np.testing.assert_allclose(result.estimates, [kv.similarity(a, b) for a, b in pairs], rtol=1e-6)
    np.testing.assert_allclose(result.bse, np.sqrt(np.diag(by_hand)), rtol=1e-12)
    assert list(result.df) == [FOLDS - 1] * 3 and result.method == "group jackknife"
    assert "40 books in 10 folds" in result.uncertainty
    t = result.estimates / result.bse
    np.testing.assert_allclose(result.pvalues, 2 * stats.t.sf(np.abs(t), FOLDS - 1), rtol=1e-10)
    table = jackknife.side_by_side(statistic)
    glove_v = glovev_ext.estimate(kv, statistic, method="delta").core.std_errors
    np.testing.assert_allclose(table["GloVe-V std err"], glove_v, rtol=1e-10)
    # of the mean: each word's Sigma - S P S, by finite differences of the cosine (S the covariance before its widening
    # along the word's vector, which the prior's pull does not act through: docs/method.md 6.22)
    precision, of_mean = kv.prior.precision, []
    for a, b in pairs:
        variance = 0.0
        for word in (a, b):
            step = 1e-6 * np.eye(kv.vector_size)
            moved = [(word_cosine(kv, a, b, word, +h) - word_cosine(kv, a, b, word, -h)) / 2e-6 for h in step]
            covariance, along = kv.covariance_factor(word).dense(), kv.covariance_factor(word).along
            shared = covariance if along is None else covariance - np.outer(along, along)
            variance += np.array(moved) @ (covariance - shared @ precision @ shared) @ np.array(moved)
        of_mean.append(np.sqrt(variance))
    np.testing.assert_allclose(table["GloVe-V std err of the mean"], of_mean, rtol=1e-5)
    assert (table["GloVe-V std err of the mean"] < table["GloVe-V std err"]).all()
    np.testing.assert_allclose(table["between books std err (jackknife)"], np.sqrt(np.diag(by_hand)), rtol=1e-12)
    np.testing.assert_allclose(table["ratio"], np.sqrt(np.diag(by_hand)) / np.array(of_mean), rtol=1e-5)


def word_cosine(kv, a: str, b: str, moved: str, step: np.ndarray) -> float:
    """cos(a, b) with ``moved``'s vector shifted by ``step``."""
    u, v = (kv[w] + step if w == moved else kv[w] for w in (a, b))
    return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))


def test_the_jackknife_errors_describe_how_statistics_move_when_other_books_are_drawn(grouped_books):
    """Known truth: the books are drawn again from the same topics (30 times), each set's rows fitted given the same
    context vectors. The cosines' spread over the sets is what the jackknife of each set estimates from its own 40
    books (12 pairs of frequent words)."""
    documents, groups, fitted = grouped_books
    pairs = frequent_pairs(fitted, 12, seed=1)
    statistic = cosine_statistic(pairs)
    positions = [fitted.cooccurrence.words.tolist().index(key) for key in statistic.keys]
    estimates, variances = [], []
    for seed in range(100, 130):
        drawn, labels = simulated_books(books_seed=seed)
        rows = fitted.vectorizer.transform(drawn)
        full = without_translation(fitted, fitted.estimator.conditional_fit(rows), rows)  # as the folds are
        estimates.append(statistic.function(full[positions]))
        jackknife = glovev_ext.group_jackknife(fitted, drawn, labels, n_folds=FOLDS, random_state=seed,
                                               progress=False)
        variances.append(np.diag(jackknife.covariance(statistic)))
    estimates, variances = np.array(estimates), np.array(variances)
    ratio = variances.mean(axis=0) / estimates.var(axis=0, ddof=1)
    # each pair's mean jackknife variance over its true variance (30 sets: about +-0.3 from the sets alone)
    assert 0.7 <= np.exp(np.log(ratio).mean()) <= 1.4, ratio
    assert np.all((ratio > 0.35) & (ratio < 2.8)), ratio
    half_width = stats.t.ppf(0.975, FOLDS - 1) * np.sqrt(variances)
    covered = np.abs(estimates - estimates.mean(axis=0)) <= half_width
    assert 0.88 <= covered.mean() <= 0.995, covered.mean()


def test_bad_input_is_named(grouped_books, jackknife):
    documents, groups, fitted = grouped_books
    with pytest.raises(ValueError, match="n_folds=41 is more than the 40 books"):
        glovev_ext.group_jackknife(fitted, documents, groups, n_folds=41, progress=False)
    with pytest.raises(ValueError, match="n_folds"):
        glovev_ext.group_jackknife(fitted, documents, groups, n_folds=1, progress=False)
    with pytest.raises(ValueError, match="4 groups cannot calibrate"):
        glovev_ext.group_jackknife(fitted, documents, groups.codes % 4, progress=False)
    with pytest.raises(ValueError, match="groups label 3,999 documents"):
        glovev_ext.group_jackknife(fitted, documents, groups.codes[:-1], progress=False)
    with pytest.raises(ValueError, match="not in the jackknife's vocabulary: nosuchword"):
        jackknife.values(cosine_statistic([("w0", "nosuchword")]))
    # a word that some fold's remainder cannot fit (its contexts all in that fold's books) is named, with the fold
    vectors = jackknife.fold_vectors.copy()
    vectors[6, jackknife.words.index("w7")] = np.nan
    with pytest.raises(ValueError, match=r"once a fold of books is left out: w7 \(without fold 7\)"):
        dataclasses.replace(jackknife, fold_vectors=vectors).values(cosine_statistic([("w0", "w7")]))
