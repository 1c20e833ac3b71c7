"""What the tutorials share: where the data is, the fitted model (fitted once, then reused), figures.

Environment variables:
- ``GLOVEV_TUTORIAL_QUICK=1``: a tiny model on a slice of the embedded corpus, for a smoke run
  (the test suite runs every tutorial this way); figures then go to the output folder only.
- ``GLOVEV_TUTORIAL_OUTPUT``: where the fitted model and the figures go
  (default ``tutorials/output``, ignored by git).
- ``GLOVEV_TUTORIAL_UPDATE_FIGURES=1``: a full run writes its figures over the checked-in ones in
  ``tutorials/figures`` (for maintainers; a user's run leaves the clone as it was).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import glovev_ext

HERE = Path(__file__).resolve().parent
SHARED_DATA = HERE.parents[1] / "shared" / "data"
QUICK = os.environ.get("GLOVEV_TUTORIAL_QUICK") == "1"
OUTPUT = Path(os.environ.get("GLOVEV_TUTORIAL_OUTPUT", HERE / "output"))
UPDATE_FIGURES = os.environ.get("GLOVEV_TUTORIAL_UPDATE_FIGURES") == "1" and not QUICK

def fit_objects() -> tuple[glovev_ext.CooccurrenceVectorizer, glovev_ext.GloVeVEstimator]:
    """The tutorials' vectorizer and estimator, as ``glovev_ext.fit_corpus`` takes them (new objects each call).

    The full runs (gutenberg_us_10m, 10M tokens, when ../shared/data has it, else the embedded
    corpus) fit D = 50 in 25 epochs; the quick runs D = 10 in 5 epochs.
    """
    vectorizer = glovev_ext.CooccurrenceVectorizer(window=8, min_count=5)
    estimator = glovev_ext.GloVeVEstimator(n_components=10 if QUICK else 50, epochs=5 if QUICK else 25, x_max=100.0,
                                           random_state=0)
    return vectorizer, estimator


# The shared corpora a full run can use: 10m for most tutorials, 31m (its superset) where the
# analysis needs more text (SemEval-2012) or checks a projection to a larger corpus.
SHARED_CORPORA = {"10m": "gutenberg_us_10m/gutenberg_us_10m.txt.gz", "31m": "gutenberg_us_31m/gutenberg_us.txt.gz"}


def corpus(size: str = "10m") -> tuple[str, glovev_ext.LineCorpus]:
    """The tutorials' corpus (``size``: "10m" or "31m" of ../shared/data) and its name."""
    if QUICK:
        return "embedded corpus, first 8,000 paragraphs", glovev_ext.load_default_corpus(max_documents=8000)
    path = SHARED_DATA / SHARED_CORPORA[size]
    if path.exists():
        return f"gutenberg_us_{size} (../shared/data)", glovev_ext.LineCorpus(path)
    return "the embedded corpus (../shared/data not found)", glovev_ext.load_default_corpus()


def fitted_model(size: str = "10m") -> glovev_ext.KeyedVectorsWithVariance:
    """The tutorials' model of ``corpus(size)``: loaded from the output folder, or fitted and saved there first."""
    directory = OUTPUT / ("model_quick" if QUICK else "model" if size == "10m" else f"model_{size}")
    if (directory / "manifest.json").exists():
        kv, metadata = glovev_ext.load_model(directory)
        print(f"model: {directory} ({metadata['source']}, D={metadata['glove']['n_components']}, fitted in "
              f"{sum(metadata['seconds'].values()):.0f} s)")
        return kv
    name, documents = corpus(size)
    vectorizer, estimator = fit_objects()
    print(f"fitting {name} with {vectorizer} and {estimator} ...")
    fitted = glovev_ext.fit_corpus(documents, vectorizer, estimator, source=name)
    glovev_ext.save_model(directory, fitted.keyed_vectors, fitted.metadata)
    counts = fitted.metadata["counts"]
    print(f"fitted in {sum(fitted.seconds.values()):.0f} s: {counts['n_tokens']:,} tokens, {counts['n_words']:,} "
          f"words, {counts['n_nonzeros']:,} nonzeros; {counts['n_with_covariance']:,} words with a covariance "
          f"({counts['n_singular']:,} with a numerically singular H_i)")
    return fitted.keyed_vectors


def save_figure(ax, name: str) -> Path:
    """Write a figure to the output folder (over the checked-in tutorials/figures/NAME with UPDATE_FIGURES)."""
    folder = HERE / "figures" if UPDATE_FIGURES else OUTPUT / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    ax.figure.tight_layout()
    ax.figure.savefig(path, dpi=110)
    checked_in = HERE / "figures" / name
    print(f"figure: {path}" + ("" if UPDATE_FIGURES or not checked_in.exists() else f" (compare: {checked_in})"))
    return path


def shared_json(relative: str):
    """A JSON file of ../shared/data, or None when it is absent."""
    path = SHARED_DATA / relative
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def shared_words(relative: str) -> list[str] | None:
    """A one-word-per-line list of ../shared/data (duplicates dropped), or None when it is absent."""
    path = SHARED_DATA / relative
    if not path.exists():
        return None
    return list(dict.fromkeys(w.strip().lower() for w in path.read_text(encoding="utf-8").splitlines() if w.strip()))


def shared_path(relative: str) -> Path | None:
    path = SHARED_DATA / relative
    return path if path.exists() else None
