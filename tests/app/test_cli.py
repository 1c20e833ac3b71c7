"""The glovev command line: every subcommand against the library API, and every error path."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
from scipy import stats
import pandas as pd
import pytest
from gensim.test.utils import datapath
from scipy.stats import spearmanr

import glovev_ext
from glovev_ext._fit_report import frequency_bands, interval_widths
from glovev_ext.cli import main
from glovev_ext.covariance.factor import LOW_RANK_PLUS_DIAGONAL

REPOSITORY = Path(__file__).resolve().parents[2]
FIT = ["--n-components", "8", "--epochs", "3", "--quiet", "--n-jobs", "1"]


@pytest.fixture(scope="module")
def kv(model_dir):
    return glovev_ext.load_model(model_dir)[0]


def run(capsys, *args) -> tuple[int, str, str]:
    status = main(list(map(str, args)))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_fit_reports_and_saves_what_the_library_computes(corpus_file, model_dir, kv, capsys, tmp_path):
    status, out, _ = run(capsys, "fit", corpus_file, "--output", tmp_path / "again", *FIT, "--point-estimate",
                         "trained")
    assert status == 0
    vectorizer = glovev_ext.CooccurrenceVectorizer(progress=False)
    X = vectorizer.fit_transform(glovev_ext.LineCorpus(corpus_file))
    model = glovev_ext.GloVeVEstimator(8, epochs=3, random_state=0, n_jobs=1, point_estimate="trained",
                                       progress=False).fit(X)
    assert f"counted: {vectorizer.n_tokens_:,} tokens in {vectorizer.n_documents_:,} documents" in out
    assert f"cost {model.training_costs_[0]:.4f} -> {model.training_costs_[-1]:.4f}" in out
    singular = int(((model.n_contexts_ > 8) & ~model.covariance_defined_).sum())
    few = int((model.n_contexts_ <= 8).sum())
    assert (f"covariances for {int(model.covariance_defined_.sum()):,} of {X.shape[0]:,} words "
            f"({singular:,} with a numerically singular H_i; {few:,} have 8 or fewer contexts; a word without a "
            "covariance gets no interval)") in out
    outside = np.mean(model.optimum_distance_[model.covariance_defined_] ** 2
                      > 8 * stats.f.ppf(0.95, 8, model.n_contexts_[model.covariance_defined_] - 8))
    assert f"outside the 95 % region of their weighted-least-squares optimum: {outside:.0%}" in out
    np.testing.assert_array_equal(kv.vectors, model.embedding_)
    word = X.words[int(np.flatnonzero(model.covariance_defined_)[0])]
    np.testing.assert_array_equal(kv.covariance(word), model.covariance_[word])
    assert kv.get_vecattr(word, "count") == vectorizer.word_counts_[list(X.words).index(word)]
    # interval widths by frequency band: the pairs' intervals one by one, the bands by brute force
    keys = [k for k in kv.index_to_key if kv.has_covariance(k)]
    counts = {k: kv.get_vecattr(k, "count") for k in keys}
    widths = interval_widths(kv)
    assert widths and [(w.low, w.high) for w in widths] == [band for band in frequency_bands(np.array(
        list(counts.values()))) if sum(band[0] <= c <= band[1] for c in counts.values()) >= 2]
    for width in widths:
        assert width.n_words == sum(width.low <= c <= width.high for c in counts.values())
        assert len(set(width.pairs)) == len(width.pairs) and all(a != b for a, b in width.pairs)
        assert all(width.low <= counts[w] <= width.high for pair in width.pairs for w in pair)
        halves = [np.diff(kv.similarity_test(a, b, method="delta").conf_int())[0] / 2 for a, b in width.pairs]
        assert width.half_width == pytest.approx(np.median(halves), rel=1e-12)
        assert f"  words seen {width.low:,}-{width.high:,} times ({width.n_words:,} words): " \
               f"+-{np.median(halves):.2f}" in out
    # WordSim-353 from the raw file and scipy, over pairs whose words have covariances
    pairs = [line.split("\t") for line in Path(datapath("wordsim353.tsv")).read_text().splitlines()
             if line and not line.startswith("#")]
    usable = [(a.lower(), b.lower(), float(score)) for a, b, score in pairs
              if kv.unusable_reason(a.lower()) is None and kv.unusable_reason(b.lower()) is None]
    unit = kv.vectors / np.linalg.norm(kv.vectors, axis=1, keepdims=True)
    cosines = [unit[kv.key_to_index[a]] @ unit[kv.key_to_index[b]] for a, b, _ in usable]
    rho = spearmanr(cosines, [score for *_, score in usable])[0]
    evaluation = kv.evaluate_word_pairs_with_uncertainty(datapath("wordsim353.tsv"), n_draws=500, random_state=0,
                                                         missing="drop")
    low, high = evaluation.conf_int()
    assert f"WordSim-353: Spearman rho = {rho:.3f}, 95 % interval [{low:.3f}, {high:.3f}] over 500" in out
    # the printed interval is one piece holding rho, inside [-1, 1], and the next line says what it means
    assert -1 <= low < rho < high <= 1
    assert f"their median is {rho - evaluation.attenuation:.3f}" in out
    assert f"{len(pairs) - len(usable)} of its {len(pairs)} pairs dropped" in out
    # neighbours with intervals: every neighbour of a probe word, each as `glovev similarity` gives it (tested alone
    # with the same seed, whatever its place in the list)
    shown = [w for w, _ in kv.most_similar("man", topn=20) if kv.has_covariance(w)][:5]
    printed = []
    for other in shown:
        alone = kv.similarity_test("man", other, random_state=0)
        low, high = alone.conf_int()
        printed.append(f"{other} {alone.estimate:.2f} [{low:.2f}, {high:.2f}]")
    assert f"  man: {', '.join(printed)}\n" in out
    saved = glovev_ext.load_model(tmp_path / "again")[1]
    assert saved["source"] == str(corpus_file) and saved["glove"]["n_components"] == 8
    assert saved["glovev_ext_version"] == glovev_ext.__version__ and saved["counting"]["window"] == 8
    assert saved["counts"]["n_tokens"] == vectorizer.n_tokens_ and saved["glove"]["random_state"] == 0


def test_fit_without_corpus_says_it_uses_the_embedded_corpus(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(glovev_ext.cli, "load_default_corpus", lambda: glovev_ext.load_default_corpus(600))
    status, out, _ = run(capsys, "fit", "--output", tmp_path / "m", "--n-components", "5", "--epochs", "1",
                         "--quiet", "--min-count", "3")
    assert status == 0 and "the embedded default corpus" in out and "no corpus given" in out


def test_fit_from_a_folder_of_stanford_output(capsys, tmp_path):
    from glovev_ext.adapters import write_cooccurrence, write_vectors_bin, write_vectors_text, write_vocab
    X = glovev_ext.CooccurrenceVectorizer(progress=False).fit_transform(
        glovev_ext.load_default_corpus(max_documents=500))
    model = glovev_ext.GloVeVEstimator(4, epochs=2, random_state=0, n_jobs=1, point_estimate="trained",
                                       progress=False).fit(X)
    folder = tmp_path / "glove"
    folder.mkdir()
    write_vocab(folder / "vocab.txt", X.words, np.arange(len(X.words), 0, -1))
    write_cooccurrence(folder / "cooccurrence.bin", X)
    write_vectors_bin(folder / "vectors.bin", glovev_ext.glove.GloVeParameters(
        model.embedding_, model.context_embedding_, model.bias_, model.context_bias_, np.empty(0)))
    status, out, _ = run(capsys, "fit", "--glove-folder", folder, "--output", tmp_path / "from_glove", "--quiet",
                         "--point-estimate", "trained")
    assert status == 0 and f"read: {len(X.words):,} words, D=4" in out
    loaded, metadata = glovev_ext.load_model(tmp_path / "from_glove")
    assert set(metadata["seconds"]) == {"read", "train", "covariances"} and min(metadata["seconds"].values()) >= 0
    assert metadata["counts"]["n_nonzeros"] == X.nnz and metadata["counting"] is None
    word = X.words[int(np.flatnonzero(model.covariance_defined_)[0])]
    np.testing.assert_array_equal(loaded.covariance(word), model.covariance_[word])
    # the text output of -model 0 instead: its D comes from --n-components
    (folder / "vectors.bin").unlink()
    write_vectors_text(folder / "vectors.txt", X.words, glovev_ext.glove.GloVeParameters(
        model.embedding_, model.context_embedding_, model.bias_, model.context_bias_, np.empty(0)))
    status, out, _ = run(capsys, "fit", "--glove-folder", folder, "--n-components", "4", "--output",
                         tmp_path / "from_text", "--quiet", "--point-estimate", "trained")
    assert status == 0 and f"read: {len(X.words):,} words, D=4" in out
    from_text = glovev_ext.load_model(tmp_path / "from_text")[0]
    np.testing.assert_allclose(from_text.covariance(word), model.covariance_[word], rtol=1e-6)


def test_fit_with_the_papers_conditioning_says_so(corpus_file, capsys, tmp_path):
    status, out, _ = run(capsys, "fit", corpus_file, "--output", tmp_path / "paper", "--n-components", "40",
                         "--epochs", "3", "--quiet", "--n-jobs", "1", "--conditioning", "paper",
                         "--point-estimate", "trained")
    kv, metadata = glovev_ext.load_model(tmp_path / "paper")
    assert status == 0 and metadata["glove"]["conditioning"] == "paper"
    n_pseudo = metadata["counts"]["n_pseudo_inverse"]
    assert n_pseudo > 0 and f"({n_pseudo:,} on the paper's pseudo-inverse branch, variances understated;" in out
    word = next(w for w in kv.index_to_key if kv.has_covariance(w) and kv.covariance_factor(w).understated)
    status, out, _ = run(capsys, "fit", corpus_file, "--output", tmp_path / "swept", *FIT, "--point-estimate",
                         "alternating", "--sweeps", "1")
    metadata = glovev_ext.load_model(tmp_path / "swept")[1]
    assert status == 0 and metadata["glove"]["point_estimate"] == "alternating" and metadata["glove"]["n_sweeps"] == 1
    assert "point estimate 'alternating', the weighted-least-squares optima" in out
    status, out, _ = run(capsys, "similarity", tmp_path / "paper", word, "the")
    assert status == 0 and "Variance understated" in out and f"{word!r} along" in out
    status, _, err = run(capsys, "fit", corpus_file, "--output", tmp_path / "mixed", *FIT, "--conditioning", "paper")
    assert status == 2 and "use point_estimate='trained' with conditioning='paper'" in err


def test_fit_with_the_posterior_gives_every_word_a_covariance(corpus_file, capsys, tmp_path):
    status, out, _ = run(capsys, "fit", corpus_file, "--output", tmp_path / "posterior", *FIT, "--point-estimate",
                         "posterior", "--sweeps", "0", "--prior-strength", "2", "--no-noise-calibration")
    kv, metadata = glovev_ext.load_model(tmp_path / "posterior")
    assert metadata["glove"]["noise_scale"] is None and "noise: GloVe-V's own model" in out
    assert status == 0 and metadata["glove"]["point_estimate"] == "posterior"
    assert metadata["glove"]["n_sweeps"] == 0 and metadata["glove"]["prior_strength"] == 2.0
    assert metadata["counts"]["n_with_covariance"] == metadata["counts"]["n_words"] == len(kv)
    assert "posterior means under an empirical-Bayes Gaussian prior (strength 2," in out
    vectorizer = glovev_ext.CooccurrenceVectorizer(progress=False)
    X = vectorizer.fit_transform(glovev_ext.LineCorpus(corpus_file))
    model = glovev_ext.GloVeVEstimator(8, epochs=3, random_state=0, n_jobs=1, n_sweeps=0, prior_strength=2.0,
                                       progress=False).fit(X)
    np.testing.assert_array_equal(kv.vectors, model.embedding_)
    few = int((model.n_contexts_ <= 8).sum())
    assert (f"GloVe-V posterior covariances for {X.shape[0]:,} of {X.shape[0]:,} words ({few:,} have 8 or fewer "
            "contexts: their residual variance is pooled") in out
    assert (f"for {np.mean(model.prior_share_ > 0.5):.0%} of words the prior holds most of the precision" in out
            and f"from the {model.prior_.n_rows:,} words with more than 10 x D contexts" in out)
    rare = kv.index_to_key[-1]
    status, out, _ = run(capsys, "similarity", tmp_path / "posterior", rare, "the")
    assert status == 0 and f"cos({rare}, the)" in out
    status, _, err = run(capsys, "fit", corpus_file, "--output", tmp_path / "no", *FIT, "--point-estimate",
                         "alternating", "--sweeps", "0")
    assert status == 2 and err == "glovev: error: n_sweeps must be >= 1, got 0\n"


def test_fit_on_a_dask_cluster_gives_the_fit_on_threads(corpus_file, capsys, tmp_path, dask_client):
    """``--dask SCHEDULER``: counting, training and the posterior's passes on the cluster; the counts agree to rounding
    (the shards are summed in another order), and all that follows from them to the same degree."""
    options = [*FIT, "--no-noise-calibration"]
    assert run(capsys, "fit", corpus_file, "--output", tmp_path / "threads", *options)[0] == 0
    status, out, _ = run(capsys, "fit", corpus_file, "--output", tmp_path / "dask", *options, "--dask",
                         dask_client.scheduler.address)
    assert status == 0 and f"dask: 2 worker(s) of the scheduler at {dask_client.scheduler.address}" in out
    on_threads, on_dask = (glovev_ext.load_model(tmp_path / name)[0] for name in ("threads", "dask"))
    assert on_dask.index_to_key == on_threads.index_to_key
    np.testing.assert_allclose(on_dask.vectors, on_threads.vectors, rtol=1e-7, atol=1e-9)
    word = on_threads.index_to_key[100]
    np.testing.assert_allclose(on_dask.covariance(word), on_threads.covariance(word), rtol=1e-6)
    status, _, err = run(capsys, "fit", corpus_file, "--output", tmp_path / "no", *FIT, "--dask",
                         "--point-estimate", "trained")
    assert status == 2 and "--dask runs --point-estimate posterior (the default), not trained" in err
    with pytest.raises(SystemExit) as exit_status:  # argparse's own error: the corpus taken for an address
        main(["fit", "--dask", str(corpus_file), "--output", str(tmp_path / "no"), *FIT])
    err = capsys.readouterr().err
    assert exit_status.value.code == 2 and "expected a scheduler address such as tcp://" in err
    assert "give it before --dask" in err


def table(out: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(out), index_col=0)


def test_similarity_and_difference(model_dir, kv, capsys):
    status, out, _ = run(capsys, "similarity", model_dir, "man", "woman", "--format", "csv")
    expected = kv.similarity_test("man", "woman", random_state=0)
    row = table(out).iloc[0]
    assert row["method"] == expected.method
    assert status == 0 and row["coef"] == pytest.approx(expected.estimate) and row["P>|t|"] == pytest.approx(
        expected.pvalue) and row["df"] == pytest.approx(expected.df)
    status, out, _ = run(capsys, "similarity", model_dir, "man", "woman", "--versus", "man", "boy", "--format", "json")
    difference = kv.similarity_difference_test(("man", "woman"), ("man", "boy"), random_state=0)
    printed = json.loads(out)
    values = next(iter(printed["rows"].values()))
    assert values["std err"] == pytest.approx(difference.bse)
    assert printed["method"] == difference.method
    assert f"Method: {difference.method_reason}" in printed["notes"]
    status, out, _ = run(capsys, "similarity", model_dir, "man", "woman")
    assert expected.method in out and "Conf. Int. Low" in out and max(map(len, out.splitlines())) <= 100
    assert f"Method: {expected.method_reason}" in " ".join(out.split()) and "Reference: t with" in out
    status, out, _ = run(capsys, "similarity", model_dir, "man", "woman", "--method", "delta", "--reference", "normal",
                         "--scale", "linear", "--format", "csv")
    paper = kv.similarity_test("man", "woman", method="delta", use_t=False, scale="linear")
    row = table(out).iloc[0]
    assert row["P>|z|"] == pytest.approx(paper.pvalue) and row["Conf. Int. Low"] == pytest.approx(paper.conf_int()[0])


def test_neighbors(model_dir, kv, capsys, tmp_path):
    status, out, _ = run(capsys, "neighbors", model_dir, "man", "--topn", "4", "--draws", "300", "--format", "csv",
                         "--plot", tmp_path / "n.png")
    frame = pd.read_csv(io.StringIO(out.split("figure written")[0]), index_col=0)
    expected = kv.nearest_neighbors_test("man", topn=4, n_draws=300, random_state=0)
    np.testing.assert_allclose(frame["Conf. Int. Low"], expected.similarities.conf_int()["lower"])
    assert status == 0 and list(frame.index) == expected.neighbors
    np.testing.assert_allclose(frame["coef"], expected.similarities.estimates)
    np.testing.assert_allclose(frame["P(this rank)"], np.diag(expected.rank_probabilities.to_numpy()))
    assert (tmp_path / "n.png").stat().st_size > 1000
    status, out, _ = run(capsys, "neighbors", model_dir, "man", "--topn", "4", "--draws", "300", "--format", "json")
    printed = json.loads(out)
    assert status == 0 and list(printed["rows"]) == expected.neighbors
    assert printed["method"] == expected.similarities.method and any("P(this rank)" in n for n in printed["notes"])


def test_weat_with_list_files_and_inline_lists(model_dir, kv, capsys, tmp_path):
    (tmp_path / "x.txt").write_text("# male\nhe\nman\nhis\n")
    status, out, _ = run(capsys, "weat", model_dir, "--x", tmp_path / "x.txt", "--y", "she,woman,her",
                         "--a", "said,told", "--b", "thought,knew", "--format", "csv")
    frame = table(out)
    family = kv.weat_test(["he", "man", "his"], ["she", "woman", "her"], ["said", "told"], ["thought", "knew"],
                          random_state=0)
    permutation = kv.weat_permutation_test(["he", "man", "his"], ["she", "woman", "her"], ["said", "told"],
                                           ["thought", "knew"])
    assert status == 0
    np.testing.assert_allclose(frame["coef"], family.estimates)
    np.testing.assert_allclose(frame["std err"], family.bse)
    np.testing.assert_allclose(frame["Conf. Int. Upp."], family.conf_int()["upper"])
    assert frame["permutation p"].iloc[0] == pytest.approx(permutation.pvalue)


def test_bias_and_evaluate(model_dir, kv, capsys):
    status, out, _ = run(capsys, "bias", model_dir, "--group-a", "he,man", "--group-b", "she,woman", "--attributes",
                         "strong,good,kind", "--format", "csv")
    expected = kv.cosine_bias_test(["he", "man"], ["she", "woman"], ["strong", "good", "kind"], random_state=0)
    assert status == 0 and table(out)["coef"].iloc[0] == pytest.approx(expected.estimate)
    assert table(out)["P>|t|"].iloc[0] == pytest.approx(expected.pvalue)
    status, out, err = run(capsys, "evaluate", model_dir, "--draws", "100")  # the one default: raise
    assert status == 2 and "pass missing='drop' (--missing drop on the command line)" in err
    status, out, _ = run(capsys, "evaluate", model_dir, "--draws", "100", "--format", "csv", "--missing", "drop",
                         "--confidence-level", "0.8")
    expected = kv.evaluate_word_pairs_with_uncertainty(datapath("wordsim353.tsv"), n_draws=100, random_state=0,
                                                       missing="drop")
    assert status == 0 and table(out)["coef"].iloc[0] == pytest.approx(expected.estimate)
    assert table(out)["std err"].iloc[0] == pytest.approx(expected.std_error)
    low, high = expected.conf_int(confidence_level=0.8)
    assert table(out)["Conf. Int. Low"].iloc[0] == pytest.approx(low) and low > expected.conf_int()[0]
    assert table(out)["Conf. Int. Upp."].iloc[0] == pytest.approx(high)


@pytest.mark.parametrize("figure, extra", [("variance", []), ("ellipses", ["--words", "man,woman,house"])])
def test_plots_are_written(model_dir, capsys, tmp_path, figure, extra):
    status, out, _ = run(capsys, "plot", model_dir, figure, "--output", tmp_path / f"{figure}.png", *extra)
    assert status == 0 and (tmp_path / f"{figure}.png").stat().st_size > 1000


@pytest.mark.parametrize("args, message", [
    (["fit", "missing-corpus.txt", "--quiet"], "corpus not found"),
    (["similarity", "no-such-model", "a", "b"], "no saved model at no-such-model"),
    (["similarity", "{model}", "man", "zzzz-unknown"], "cannot be computed without zzzz-unknown \\(not in the "
                                                       "vocabulary\\): it needs every one of 'man', 'zzzz-unknown'$"),
    (["weat", "{model}", "--x", "he,{rare}", "--y", "she", "--a", "said", "--b", "knew"], "no covariance"),
    (["weat", "{model}", "--x", "he", "--y", "she", "--a", "said", "--b", "no-file.txt has spaces"],
     "neither a file nor a comma-separated list"),
    (["plot", "{model}", "ellipses", "--output", "x.png"], "needs --words"),
])
def test_errors_tell_what_to_fix(model_dir, kv, capsys, args, message):
    rare = next(key for key in kv.index_to_key if not kv.has_covariance(key))
    args = [a.replace("{model}", str(model_dir)).replace("{rare}", rare) for a in args]
    status, _, err = run(capsys, *args)
    assert status == 2 and re.search(message, err), err


def test_fit_refuses_a_corpus_without_frequent_words(capsys, tmp_path):
    (tmp_path / "tiny.txt").write_text("a b c\n", encoding="utf-8")
    status, _, err = run(capsys, "fit", tmp_path / "tiny.txt", "--quiet", "--output", tmp_path / "m")
    assert status == 2 and "min_count=5" in err and not (tmp_path / "m").exists()


@pytest.mark.parametrize("command", ["fit", "similarity", "neighbors", "weat", "bias", "evaluate", "plot", "info"])
def test_help_is_available_for_every_subcommand(capsys, command):
    with pytest.raises(SystemExit) as exit_status:
        main([command, "--help"])
    assert exit_status.value.code == 0 and f"usage: glovev {command}" in capsys.readouterr().out


def test_python_dash_m_runs_the_command():
    result = subprocess.run([sys.executable, "-m", "glovev_ext", "--help"], capture_output=True, text=True)
    assert result.returncode == 0 and "usage: glovev" in result.stdout


def test_readme_has_two_setup_commands_and_ci_runs_the_test_command():
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    setup = re.search(r"## Set-up.*?```bash\n(.*?)```", readme, re.S).group(1).strip().splitlines()
    assert len(setup) == 2
    assert "glovev fit" in setup[0] and "pytest" in setup[1]
    assert setup[1] in (REPOSITORY / ".ci" / "run").read_text(encoding="utf-8")


def test_fit_on_made_up_words_saves_the_model_and_says_what_it_could_not_evaluate(capsys, tmp_path):
    rng = np.random.default_rng(0)
    lines = [" ".join(f"zq{k}" for k in rng.integers(0, 120, size=12)) for _ in range(1500)]
    (tmp_path / "madeup.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    status, out, _ = run(capsys, "fit", tmp_path / "madeup.txt", "--output", tmp_path / "m", *FIT)
    assert status == 0, out
    kv, metadata = glovev_ext.load_model(tmp_path / "m")
    assert len(kv) == metadata["counts"]["n_words"] > 0
    assert "WordSim-353: not evaluated (none of its word pairs is in the vocabulary)" in out
    size = sum(path.stat().st_size for path in (tmp_path / "m").iterdir())
    assert out.index(f"saved: {tmp_path / 'm'} ({size / 1e6:,.0f} MB)") < out.index("WordSim-353")
    assert f"next: glovev similarity {tmp_path / 'm'} " in out


def _damage(path: Path, keep: int) -> None:
    path.write_bytes(path.read_bytes()[:keep])


@pytest.mark.parametrize("name, content, message", [
    ("plain.gz", b"hello world\n", r"plain\.gz: not valid gzip data at its start .*must be gzip-compressed"),
    ("fake.bz2", b"hello world\n", r"fake\.bz2: not valid bzip2 data at its start"),
    ("fake.xz", b"hello world\n", r"fake\.xz: not valid xz data at its start"),
    ("truncated.gz", None, r"truncated\.gz: the gzip stream ends early after line \d+: the file is truncated"),
    ("latin1.txt", "the café is open\n".encode("latin-1"), r"latin1\.txt: not UTF-8 text in its first line \(byte 0xe9\)"),
])
def test_unreadable_corpus_files_end_in_one_line_naming_the_file(capsys, tmp_path, name, content, message):
    path = tmp_path / name
    if content is None:
        import gzip
        words = np.random.default_rng(0).integers(0, 10**6, size=(5000, 8))
        text = "\n".join(" ".join(map(str, line)) for line in words).encode()
        path.write_bytes(gzip.compress(text)[:20000])
    else:
        path.write_bytes(content)
    status, _, err = run(capsys, "fit", path, "--output", tmp_path / "m", *FIT)
    lines = [line for line in err.splitlines() if line.startswith("glovev:")]
    assert status == 2 and len(lines) == 1 and re.search(message, lines[0]), err
    assert "Traceback" not in err and not (tmp_path / "m").exists()


@pytest.mark.parametrize("name, keep, message", [
    ("metadata.json", 10, r"metadata\.json is truncated: 10 bytes, its manifest\.json says"),
    ("vectors.npy", 100, r"vectors\.npy is truncated: 100 bytes"),
    ("manifest.json", 100, r"manifest\.json: not a glovev-ext manifest"),
])
def test_a_damaged_model_folder_ends_in_one_line_naming_the_file(model_dir, capsys, tmp_path, name, keep, message):
    import shutil
    copy = tmp_path / "copy"
    shutil.copytree(model_dir, copy)
    _damage(copy / name, keep)
    status, _, err = run(capsys, "similarity", copy, "man", "woman")
    assert status == 2 and re.search(message, err) and str(copy) in err and len(err.strip().splitlines()) == 1, err


def test_a_truncated_array_of_a_saved_model_is_named(tmp_path):
    kv = glovev_ext.KeyedVectorsWithVariance.from_estimator(
        glovev_ext.GloVeVEstimator(40, epochs=1, random_state=0, n_jobs=1, progress=False).fit(
            glovev_ext.CooccurrenceVectorizer(min_count=2, progress=False).fit_transform(
                glovev_ext.load_default_corpus(max_documents=300))))
    glovev_ext.save_model(tmp_path / "m", kv)
    arrays = sorted((tmp_path / "m").glob("*.npy")) + [tmp_path / "m" / "covariances.store"]
    for array in arrays:
        kept = array.read_bytes()
        _damage(array, 300)
        with pytest.raises(ValueError, match=re.escape(str(array)) + " is truncated: 300 bytes"):
            glovev_ext.load_model(tmp_path / "m")
        array.write_bytes(kept)
    glovev_ext.load_model(tmp_path / "m")


@pytest.mark.parametrize("flag, value, library", [
    ("--n-components", "0", glovev_ext.GloVeVEstimator(n_components=0)),
    ("--n-jobs", "0", glovev_ext.GloVeVEstimator(n_jobs=0)),
    ("--x-max", "-1", glovev_ext.GloVeVEstimator(x_max=-1.0)),
    ("--prior-strength", "0", glovev_ext.GloVeVEstimator(prior_strength=0.0)),
    ("--sweeps", "-1", glovev_ext.GloVeVEstimator(n_sweeps=-1)),
    ("--window", "300", glovev_ext.CooccurrenceVectorizer(window=300)),
    ("--max-vocab", "0", glovev_ext.CooccurrenceVectorizer(max_vocab_size=0)),
    ("--max-memory", "lots", glovev_ext.CooccurrenceVectorizer(max_memory="lots")),
    ("--covariance-approximation", "0", glovev_ext.GloVeVEstimator(covariance_approximation=0)),
    ("--covariance-approximation", "1.5", glovev_ext.GloVeVEstimator(covariance_approximation=1.5)),
], ids=lambda value: value if isinstance(value, str) else "")
def test_fit_options_are_checked_by_the_library_before_any_work(capsys, tmp_path, flag, value, library):
    """The command line builds the vectorizer and the estimator; their own error is its one line."""
    with pytest.raises(ValueError) as raised:
        library.fit(["two words"] if isinstance(library, glovev_ext.CooccurrenceVectorizer) else np.eye(3))
    for source in ([], ["--glove-folder", tmp_path / "absent"]):
        status, out, err = run(capsys, "fit", *source, "--output", tmp_path / "m", "--quiet", flag, value)
        assert status == 2 and err == f"glovev: error: {raised.value}\n" and "corpus:" not in out


def test_a_memory_budget_spills_counts_and_gives_the_same_vectors(corpus_file, capsys, tmp_path):
    for name, budget in (("in_memory", []), ("budget", ["--max-memory", "64K"])):
        status, _, _ = run(capsys, "fit", corpus_file, "--output", tmp_path / name, "--n-components", "8",
                           "--epochs", "3", "--quiet", "--n-jobs", "2", *budget)
        assert status == 0
    in_memory, budget = (glovev_ext.load_model(tmp_path / name)[0] for name in ("in_memory", "budget"))
    assert budget.vectors.tobytes() == in_memory.vectors.tobytes()


def test_compact_covariances_are_said_and_saved(corpus_file, capsys, tmp_path):
    status, out, _ = run(capsys, "fit", corpus_file, "--output", tmp_path / "compact", *FIT,
                         "--covariance-approximation", "0.5", "--covariance-dtype", "float32")
    assert status == 0
    kv, metadata = glovev_ext.load_model(tmp_path / "compact")
    store = kv.covariance_store
    assert metadata["glove"]["covariance_approximation"] == 0.5 and metadata["glove"]["covariance_dtype"] == "float32"
    assert store.factor_dtype == np.float32
    compact = store.approximation == LOW_RANK_PLUS_DIAGONAL
    ranks = store.rank[compact]
    assert compact.any() and store.factor_row_width == 8 * (ranks.max() + 1)
    assert (f"covariances kept compact: {int(compact.sum()):,} words as their k leading eigenpairs plus a diagonal of "
            f"the other variances (k median {int(np.median(ranks))}, {ranks.min()} to {ranks.max()} of D=8), "
            f"{int((store.defined & ~compact).sum()):,} exact (their k would save nothing); "
            f"{store.factor_row_width:,} numbers per word instead of a triangle's 36\n") in out
    word, other = [w for w in (kv.index_to_key[int(i)] for i in np.flatnonzero(compact)) if w.isalpha()][:2]
    status, out, _ = run(capsys, "similarity", tmp_path / "compact", word, other)
    assert status == 0 and f"{word!r} (rank " in out and "plus diagonal, of 8)" in out, out


def test_queries_are_normalised_as_the_model_was_built(model_dir, kv, capsys):
    status, out, _ = run(capsys, "similarity", model_dir, "MAN", "Woman", "--format", "json")
    assert status == 0
    assert "cos(man, woman)" in out


def test_the_same_fit_twice_gives_byte_identical_vectors_with_several_threads(corpus_file, capsys, tmp_path):
    for name in ("first", "second"):
        status, _, _ = run(capsys, "fit", corpus_file, "--output", tmp_path / name, "--n-components", "8",
                           "--epochs", "3", "--quiet", "--n-jobs", "2")
        assert status == 0
    first, second = (glovev_ext.load_model(tmp_path / name)[0] for name in ("first", "second"))
    assert first.vectors.tobytes() == second.vectors.tobytes()
    word = next(key for key in first.index_to_key if first.has_covariance(key))
    assert first.covariance(word).tobytes() == second.covariance(word).tobytes()


def test_info_prints_every_setting_and_the_corpus_checksum(model_dir, corpus_file, kv, capsys):
    import hashlib
    checksum = hashlib.sha256(corpus_file.read_bytes()).hexdigest()
    status, out, _ = run(capsys, "info", model_dir)
    assert status == 0
    size = sum(path.stat().st_size for path in model_dir.iterdir())
    n_with_covariance = glovev_ext.load_model(model_dir)[1]["counts"]["n_with_covariance"]
    assert (f"model: {model_dir} ({size / 1e6:,.1f} MB): {len(kv):,} words, D=8, {n_with_covariance:,} with a "
            "covariance") in out
    assert f"corpus_sha256: {checksum}" in out
    for line in ("  window: 8", "  min_count: 5", "  epochs: 3", "  random_state: 0", "  schedule: blocks",
                 f"glovev_ext_version: {glovev_ext.__version__}"):
        assert line in out, line
    status, out, _ = run(capsys, "info", model_dir, "--format", "json")
    assert json.loads(out) == glovev_ext.load_model(model_dir)[1]


def test_the_neighbour_table_explains_its_columns(model_dir, capsys):
    status, out, _ = run(capsys, "neighbors", model_dir, "man", "--topn", "3", "--draws", "200")
    table = out.splitlines()
    assert status == 0 and "P(this rank), the share of Monte Carlo draws" in out
    text = " ".join(out.split())
    assert "df column" not in text and "P>t (vs next)" in table[1] and "among the 3 listed words" in table[0]
    assert "exactly this rank among the listed words (not among the whole vocabulary)" in text
    last_row = next(line for line in table if line.split()[1:2] == ["3"])
    assert last_row.rstrip().endswith("-") and "NaN" not in out
    with pytest.raises(SystemExit):
        main(["neighbors", "--help"])
    out = capsys.readouterr().out
    assert ("P>t (vs next), the one-sided p-value of the test that the word is more similar than the next one (P>z "
            "with a normal reference") in " ".join(out.split())
    status, out, _ = run(capsys, "neighbors", model_dir, "man", "--topn", "3", "--draws", "200", "--reference", "normal")
    assert status == 0 and "P>z (vs next)" in out.splitlines()[1]


def test_frequency_bands_follow_a_1_3_10_scale_cut_to_the_counts():
    counts = np.random.default_rng(2).integers(5, 200_000, size=300)
    edges = sorted({m * 10**k for k in range(7) for m in (1, 3)})
    expected = []
    for c in sorted(counts):
        start = max(e for e in edges if e <= c)
        stop = min(e for e in edges if e > c) - 1
        band = (max(start, int(counts.min())), min(stop, int(counts.max())))
        if band not in expected:
            expected.append(band)
    assert frequency_bands(counts) == expected
    assert frequency_bands(np.array([7])) == [(7, 7)] and frequency_bands(np.array([], dtype=int)) == []


@pytest.mark.parametrize("variances", ["complete", "approximate"])
def test_a_release_folder_works_wherever_a_model_does(kv, capsys, tmp_path, variances):
    from glovev_ext.adapters import load_glovev_release, write_glovev_release

    forms = {word: ("svd", 3) for word in ("man", "woman")}
    folder = tmp_path / "release"
    write_glovev_release(folder, kv, chunk_size=500, variances=variances, naming="readme", approximations=forms)
    status, out, err = run(capsys, "similarity", folder, "Man", "woman", "--format", "json")
    assert status == 0, err
    expected = load_glovev_release(folder).similarity_test("man", "woman", random_state=0)
    printed = json.loads(out)
    assert status == 0 and printed["rows"]["cos(man, woman)"]["std err"] == pytest.approx(expected.bse)
    assert any("Approximate covariance" in note for note in printed["notes"]) == (variances == "approximate")
    status, out, _ = run(capsys, "info", folder)
    assert status == 0 and f"variances: {variances}" in out
    status, out, _ = run(capsys, "neighbors", folder, "man", "--topn", "3", "--draws", "100")
    assert status == 0 and "nearest neighbours of 'man'" in out


def test_the_default_output_is_ignored_by_git_and_every_line_of_the_fit_report_is_explained(model_dir, capsys,
                                                                                             corpus_file, tmp_path):
    assert "glovev_model/" in (REPOSITORY / ".gitignore").read_text(encoding="utf-8").splitlines()
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    section = re.search(r"### Reading the fit report\n(.*?)\n## ", readme, re.S).group(1)
    status, out, _ = run(capsys, "fit", corpus_file, "--output", tmp_path / "m", *FIT)
    assert status == 0 and "first -> last epoch), then 1 regularised sweep  [" in out
    factors = [f for kind in ("own", "pooled")
               for f in glovev_ext.load_model(tmp_path / "m")[1]["glove"]["noise_scale"][kind]["factor"]]
    assert f"noise: residual variances scaled by {min(factors):.2f} to {max(factors):.2f} by word frequency" in out
    along = glovev_ext.load_model(tmp_path / "m")[1]["glove"]["noise_scale"]["along"]["factor"]
    assert f"the variance along each word's own vector {min(along):.2f} to {max(along):.2f} times more" in out
    for start in ("counted", "trained", "GloVe-V posterior covariances for", "noise: residual variances scaled by",
                  "sampling: intervals describe resampling", "vectors: posterior means",
                  "a cosine between two words seen about as often", "WordSim-353", "nearest neighbours"):
        assert any(line.startswith(start) for line in out.splitlines()), start
        assert f"`{start}" in section, start
    assert "(README, 'Reading the fit report')" in out
