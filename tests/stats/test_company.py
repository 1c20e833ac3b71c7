"""A statistic reads the same whatever company it keeps (issue 47, item 3).

Each word draws from its own stream (seeded by ``random_state`` and the word), and ``method="auto"`` judges each
value on its own, so a row of a family, a neighbour listed among 5 or among 10, and the same statistic computed
alone give the same numbers from the same ``random_state``; on the golden posterior model (the default recipe) and
the paper's trained one, over seeded random words.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import glovev_ext
from glovev_ext.cli import main
from glovev_ext.stats import draw_values
from glovev_ext.stats.engine import monte_carlo
from glovev_ext.stats.engine.rule import MIXED_INTERVALS
from glovev_ext.stats.engine.words import resolve

MODELS = Path(__file__).resolve().parents[1] / "data" / "golden" / "models"


@pytest.fixture(scope="module", params=["posterior", "trained"])
def kv(request) -> glovev_ext.KeyedVectorsWithVariance:
    return glovev_ext.load_model(MODELS / request.param)[0]


def usable(kv) -> list:
    return [w for w in kv.index_to_key if kv.has_covariance(w)]


@pytest.mark.parametrize("use_t", [False, True])
def test_a_words_draws_do_not_depend_on_the_words_drawn_with_it_or_on_the_batches(kv, use_t, monkeypatch):
    a, b, c, d = np.random.default_rng(3).choice(usable(kv), size=4, replace=False)
    alone = draw_values(resolve(kv, [a, b]), lambda drawn: drawn.copy(), 50, random_state=9, use_t=use_t)
    monkeypatch.setattr(monte_carlo, "_DRAW_ELEMENTS", 4 * kv.vector_size * 7)  # batches of 7 draws
    among = draw_values(resolve(kv, [c, a, d, b]), lambda drawn: drawn.copy(), 50, random_state=9, use_t=use_t)
    np.testing.assert_allclose(alone[:, 0], among[:, 1], rtol=1e-12)  # BLAS may round batches apart
    np.testing.assert_allclose(alone[:, 1], among[:, 3], rtol=1e-12)
    other = draw_values(resolve(kv, [a, b]), lambda drawn: drawn.copy(), 50, random_state=10, use_t=use_t)
    assert not np.array_equal(alone, other)  # another seed, other draws
    # the words' draws are independent: a's and b's deviations are uncorrelated over many draws
    many = draw_values(resolve(kv, [a, b]), lambda drawn: drawn[:, :, 0].copy(), 4000, random_state=9)
    deviations = many - kv.get_vector(a)[0], many - kv.get_vector(b)[0]
    assert abs(np.corrcoef(deviations[0][:, 0], deviations[1][:, 1])[0, 1]) < 0.08


def test_a_generator_hands_each_call_its_own_draws(kv):
    words = resolve(kv, usable(kv)[:2])
    generator = np.random.default_rng(4)
    first, second = (draw_values(words, lambda drawn: drawn.copy(), 20, random_state=generator) for _ in range(2))
    assert not np.array_equal(first, second)


def frame_of(result) -> np.ndarray:
    """The numbers of a result's row: estimate, std err, statistic, p-value and interval at two levels."""
    return np.array([result.estimate, result.bse, result.statistic, result.pvalue, *result.conf_int(),
                     *result.conf_int(confidence_level=0.8), result.df])


@pytest.mark.parametrize("method", ["auto", "monte carlo"])
def test_each_row_of_a_family_is_the_statistic_computed_alone(kv, method, request):
    rng = np.random.default_rng(17)
    words = usable(kv)
    pairs = [tuple(rng.choice(pool, size=2, replace=False)) for pool in (words, words[:30]) for _ in range(5)]
    family = kv.similarity_family(pairs, method=method, n_draws=300, random_state=5)
    for k, pair in enumerate(pairs):
        alone = kv.similarity_test(*pair, method=method, n_draws=300, random_state=5)
        row = family[k]
        assert (row.method, row.method_reason, row.draws_interval) == (alone.method, alone.method_reason,
                                                                        alone.draws_interval), pair
        np.testing.assert_allclose(frame_of(row), frame_of(alone), rtol=1e-12, err_msg=str(pair))
        np.testing.assert_allclose(row.draws_std_error, alone.draws_std_error, rtol=1e-12)  # NaN for delta rows
    if method == "auto" and request.node.callspec.params["kv"] == "posterior":  # the paper's D = 8 model: all drawn
        assert len({family[k].method for k in range(len(pairs))}) == 2, "the cases should mix both methods"
        # the family's table heads each row's statistic by its kind, and its summary says the intervals are mixed
        frame, kept = family.summary_frame(), np.array([family[k].method == "delta method" for k in range(len(pairs))])
        assert frame["t (atanh)"].notna().to_numpy().tolist() == kept.tolist()
        assert frame["t (from p)"].notna().to_numpy().tolist() == (~kept).tolist()
        assert frame["draws sd"].isna().to_numpy().tolist() == kept.tolist()
        assert MIXED_INTERVALS in str(family.summary()) and family.method == "Monte Carlo"


def test_neighbours_listed_among_5_or_among_10_read_the_same(kv):
    word = usable(kv)[3]
    five, ten = (kv.nearest_neighbors_test(word, topn=n, n_draws=300) for n in (5, 10))
    assert ten.neighbors[:5] == five.neighbors
    shared = [c for c in five.summary_frame().columns if c != "P(this rank)"]  # ranks are among the listed words
    np.testing.assert_allclose(five.summary_frame()[shared].to_numpy(float)[:4],
                               ten.summary_frame()[shared].to_numpy(float)[:4], rtol=1e-12)
    np.testing.assert_allclose(five.summary_frame()[shared[:-1]].to_numpy(float),  # the 5th's next differs
                               ten.summary_frame()[shared[:-1]].to_numpy(float)[:5], rtol=1e-12)
    for k, neighbour in enumerate(five.neighbors):
        np.testing.assert_allclose(frame_of(five.similarities[k]),
                                   frame_of(kv.similarity_test(word, neighbour, n_draws=300)), rtol=1e-12)


def test_the_command_line_prints_the_same_neighbours_for_topn_5_and_10(capsys):
    model = MODELS / "posterior"
    kv = glovev_ext.load_model(model)[0]
    word = usable(kv)[3]
    tables = []
    for topn in (5, 10):
        assert main(["neighbors", str(model), word, "--topn", str(topn), "--format", "csv"]) == 0
        tables.append(pd.read_csv(io.StringIO(capsys.readouterr().out), index_col=0, keep_default_na=False))
    five, ten = tables
    assert list(five.columns) == list(ten.columns) and list(ten.index[:5]) == list(five.index)
    shared = [c for c in five.columns if c != "P(this rank)"]
    pd.testing.assert_frame_equal(five[shared].iloc[:4], ten[shared].iloc[:4])
