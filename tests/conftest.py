"""Shared fixtures: small slices of real text that ship with the package or with gensim."""

from __future__ import annotations

import numpy as np
import pytest
from gensim.test.utils import datapath

import glovev_ext


@pytest.fixture(scope="session")
def embedded_paragraphs() -> list[str]:
    """The first 400 paragraphs of the embedded corpus (about 30k tokens)."""
    return list(glovev_ext.load_default_corpus(max_documents=400))


@pytest.fixture(scope="session")
def lee_documents() -> list[str]:
    """gensim's bundled Lee background news corpus, one raw document per line."""
    with open(datapath("lee_background.cor"), encoding="utf-8") as stream:
        return [line.rstrip("\n") for line in stream]


@pytest.fixture(scope="session")
def embedded_cooccurrence() -> glovev_ext.CooccurrenceMatrix:
    """Co-occurrences of the first 6,000 paragraphs of the embedded corpus (min_count 5)."""
    vectorizer = glovev_ext.CooccurrenceVectorizer(min_count=5, progress=False)
    return vectorizer.fit_transform(glovev_ext.load_default_corpus(max_documents=6000))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261125)
