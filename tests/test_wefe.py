"""WEFE (the word-embedding fairness framework) takes our KeyedVectors unchanged.

WEFE pins numpy <= 1.26.4 and scipy < 1.13, so it cannot share the main test environment;
``.ci/run`` runs this file in a second environment with ``pip install '.[wefe]'``.
"""

from __future__ import annotations

import numpy as np
import pytest

import glovev_ext

wefe = pytest.importorskip("wefe")
from wefe.metrics import WEAT  # noqa: E402
from wefe.query import Query  # noqa: E402
from wefe.word_embedding_model import WordEmbeddingModel  # noqa: E402


def test_wefe_runs_a_weat_query_on_our_object(small_model):
    kv = glovev_ext.KeyedVectorsWithVariance.from_estimator(small_model)
    query = Query([["he", "man", "boy", "father"], ["she", "woman", "girl", "mother"]],
                  [["work", "money", "business"], ["home", "house", "family"]],
                  ["Male", "Female"], ["Career", "Family"])
    result = WEAT().run_query(query, WordEmbeddingModel(kv, "glovev"))

    def association(word, first, second):
        return np.mean([kv.similarity(word, a) for a in first]) - np.mean([kv.similarity(word, b) for b in second])

    targets, attributes = query.target_sets, query.attribute_sets
    expected = (sum(association(w, *attributes) for w in targets[0])
                - sum(association(w, *attributes) for w in targets[1]))
    assert result["weat"] == pytest.approx(expected, rel=1e-6)
