"""The command line's fixtures: a small corpus file and the model ``glovev fit`` makes of it (fitted once)."""

from __future__ import annotations

from pathlib import Path

import pytest

import glovev_ext
from glovev_ext.cli import main

FIT = ["--n-components", "8", "--epochs", "3", "--quiet", "--n-jobs", "1"]


@pytest.fixture(scope="session")
def corpus_file(tmp_path_factory) -> Path:
    """The first 4,000 paragraphs of the embedded corpus as a text file (154k tokens)."""
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text("\n".join(glovev_ext.load_default_corpus(max_documents=4000)) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def model_dir(corpus_file, tmp_path_factory) -> Path:
    """``glovev fit corpus.txt --n-components 8 --epochs 3 --point-estimate trained``: a saved model never changed
    by the tests (the paper's recipe, so that some words have no covariance; the default's own fit is tested in
    tests/app/test_cli.py)."""
    directory = tmp_path_factory.mktemp("model") / "model"
    assert main(["fit", str(corpus_file), "--output", str(directory), *FIT, "--point-estimate", "trained"]) == 0
    return directory
