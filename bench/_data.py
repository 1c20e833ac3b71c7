"""Where the benchmarks find their corpora: ../shared/data when present, else the embedded corpus."""

from __future__ import annotations

import argparse
from pathlib import Path

import glovev_ext

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def corpus(name: str) -> tuple[str, glovev_ext.LineCorpus]:
    """A named shared corpus ('brown', 'gutenberg_us_10m', 'gutenberg_us_31m'), or the embedded one ('embedded', and
    when the shared one is absent)."""
    if name == "embedded":
        return "embedded corpus", glovev_ext.load_default_corpus()
    files = {
        "brown": SHARED_DATA / "brown" / "brown_sents.txt",
        "gutenberg_us_10m": SHARED_DATA / "gutenberg_us_10m" / "gutenberg_us_10m.txt.gz",
        "gutenberg_us_31m": SHARED_DATA / "gutenberg_us_31m" / "gutenberg_us.txt.gz",
    }
    path = files[name]
    if path.exists():
        return name, glovev_ext.LineCorpus(path)
    return f"embedded corpus (no {path})", glovev_ext.load_default_corpus()


def corpus_groups(name: str, unit: str) -> glovev_ext.DocumentGroups | None:
    """The groups of a corpus of :func:`corpus` by ``unit``: 'documents' (None: each its own group), 'books' or
    'authors' (the manifest's ``doc``/``book`` and ``author`` columns); the embedded corpus's when the shared one is
    absent, as :func:`corpus` falls back."""
    if unit == "documents":
        return None
    manifests = {"gutenberg_us_10m": SHARED_DATA / "gutenberg_us_10m" / "manifest.tsv",
                 "gutenberg_us_31m": SHARED_DATA / "gutenberg_us_31m" / "manifest.tsv"}
    manifest = manifests.get(name)
    if manifest is None or not manifest.exists():
        manifest = glovev_ext.counting.default_corpus_manifest_path()
    column = "author" if unit == "authors" else ("doc" if manifest.name == "manifest.tsv" else "book")
    return glovev_ext.read_groups(manifest, column=column, unit=unit)


CORPORA = ("embedded", "gutenberg_us_10m", "gutenberg_us_31m")


def add_fit_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a benchmark that fits a corpus with its groups: ``--corpus``, ``--n-components``,
    ``--epochs`` and ``--groups`` (books or authors)."""
    parser.add_argument("--corpus", default="embedded", choices=CORPORA)
    parser.add_argument("--n-components", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=25)
    parser.add_argument("--groups", default="books", choices=("books", "authors"))


def fit_with_groups(options: argparse.Namespace) -> tuple[str, list, glovev_ext.DocumentGroups,
                                                          glovev_ext.FittedCorpus]:
    """The corpus of :func:`add_fit_arguments`' options (its name and documents, read into a list), its groups, and
    its default fit with them, printing what was fitted."""
    name, documents = corpus(options.corpus)
    documents = list(documents)
    groups = corpus_groups(options.corpus, options.groups)
    estimator = glovev_ext.GloVeVEstimator(n_components=options.n_components, epochs=options.epochs)
    fitted = glovev_ext.fit_corpus(documents, estimator=estimator, groups=groups, progress=False)
    print(f"{name}, D = {options.n_components}, {options.epochs} epochs, calibrated on halves of its "
          f"{groups.describe()}")
    return name, documents, groups, fitted
