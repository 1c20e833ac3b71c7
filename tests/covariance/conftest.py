"""Fixtures of the covariance tests: the co-occurrences of two random halves of the embedded corpus's documents."""

from __future__ import annotations

import numpy as np
import pytest

import glovev_ext


@pytest.fixture(scope="module")
def halves(embedded_vectorizer) -> tuple:
    """Two random halves of the first 6,000 paragraphs, counted in the embedded vocabulary."""
    documents = list(glovev_ext.load_default_corpus(max_documents=6000))
    first = np.random.default_rng(5).random(len(documents)) < 0.5
    return tuple(embedded_vectorizer.transform([d for d, a in zip(documents, first) if a == side])
                 for side in (True, False))
