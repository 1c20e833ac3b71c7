"""The glovev command line, checked against the library API."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import glovev_ext
from glovev_ext.cli import main

REPOSITORY = Path(__file__).resolve().parents[1]


@pytest.fixture
def small_corpus_file(tmp_path) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(glovev_ext.load_default_corpus(max_documents=3000)) + "\n", encoding="utf-8")
    return path


def test_fit_reports_the_numbers_the_library_computes(small_corpus_file, capsys):
    assert main(["fit", str(small_corpus_file), "--dim", "10", "--epochs", "3", "--quiet", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    vectorizer = glovev_ext.CooccurrenceVectorizer(progress=False)
    X = vectorizer.fit_transform(glovev_ext.LineCorpus(small_corpus_file))
    model = glovev_ext.GloVeVEstimator(10, epochs=3, random_state=0, n_jobs=1, progress=False).fit(X)
    assert f"counted: {vectorizer.n_tokens_:,} tokens in {vectorizer.n_documents_:,} documents" in out
    assert f"-> {X.shape[0]:,} words (min_count 5), {X.nnz:,} nonzero" in out
    costs = model.training_costs_
    assert f"cost {costs[0]:.4f} -> {costs[-1]:.4f}" in out
    assert (f"covariances for {int(model.covariance_defined_.sum()):,} of {X.shape[0]:,} words "
            f"({int(model.pseudo_inverse_.sum()):,} on the pseudo-inverse branch") in out
    defined = np.flatnonzero(model.covariance_defined_)
    errors = np.sqrt(model.covariance_.diagonal(defined).mean(axis=1))
    rarest = np.array_split(np.arange(defined.size), 4)[-1]
    band_lines = [line for line in out.splitlines() if line.startswith("  words seen")]
    assert len(band_lines) == 4 and band_lines[-1].endswith(f"{np.median(errors[rarest]):.4f}")
    assert "WordSim-353" in out


def test_fit_without_corpus_says_it_uses_the_embedded_corpus(monkeypatch, capsys):
    monkeypatch.setattr(glovev_ext.cli, "load_default_corpus", lambda: glovev_ext.load_default_corpus(500))
    assert main(["fit", "--dim", "5", "--epochs", "1", "--quiet", "--min-count", "3"]) == 0
    assert "embedded default corpus" in capsys.readouterr().out


def test_fit_errors_tell_what_to_fix(tmp_path, capsys):
    assert main(["fit", str(tmp_path / "missing.txt"), "--quiet"]) == 2
    assert "corpus not found" in capsys.readouterr().err
    tiny = tmp_path / "tiny.txt"
    tiny.write_text("a b c\n", encoding="utf-8")
    assert main(["fit", str(tiny), "--quiet"]) == 2
    assert "min_count=5" in capsys.readouterr().err


def test_help_is_available_for_every_subcommand():
    for args in (["--help"], ["fit", "--help"]):
        result = subprocess.run([sys.executable, "-m", "glovev_ext", *args], capture_output=True, text=True)
        assert result.returncode == 0 and "usage: glovev" in result.stdout


def test_readme_has_two_setup_commands_and_ci_runs_the_test_command():
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    setup = re.search(r"## Set-up.*?```bash\n(.*?)```", readme, re.S).group(1).strip().splitlines()
    assert len(setup) == 2
    assert "glovev fit" in setup[0] and "pytest" in setup[1]
    assert setup[1] in (REPOSITORY / ".ci" / "run").read_text(encoding="utf-8")
