"""The paper's figures: what they draw against brute force, what their legends and titles say, where legends sit."""

from __future__ import annotations

import dataclasses

import matplotlib
import numpy as np
import pytest
from gensim.models import KeyedVectors

import glovev_ext
from glovev_ext import KeyedVectorsWithVariance, plots
from glovev_ext.covariance import CovarianceStoreWriter
from glovev_ext.covariance import Factor
from glovev_ext.stats.statistics.semeval import SAMPLE_PATH

matplotlib.use("Agg")

DIM = 6


@pytest.fixture(autouse=True)
def close_figures():
    yield
    import matplotlib.pyplot as plt
    plt.close("all")


def synthetic_kv(words, rng, pseudo_inverse=(), undefined=()) -> KeyedVectorsWithVariance:
    """Random vectors with random covariances: the Cholesky branch, the pseudo-inverse one, or none."""
    counts = rng.integers(5, 5000, size=len(words))
    with CovarianceStoreWriter(len(words), DIM, len(words), words=words) as writer:
        for i in range(len(words)):
            if i in undefined:
                continue
            root = rng.normal(size=(DIM, DIM)) * rng.uniform(0.1, 3.0)
            hessian = root @ root.T + 0.1 * np.eye(DIM)
            if i in pseudo_inverse:
                hessian = root @ np.diag(np.geomspace(1.0, 1e-7, DIM)) @ root.T
                factor = Factor.of_hessian(hessian, None, pseudo_inverse=True)
            else:
                factor = Factor.of_hessian(hessian, np.linalg.cholesky(hessian), pseudo_inverse=False)
            writer.add(i, factor.with_sigma2(rng.uniform(0.5, 2.0)))
    plain = KeyedVectors(DIM, 0)
    plain.add_vectors(list(words), rng.normal(size=(len(words), DIM)))
    plain.expandos["count"] = counts
    return KeyedVectorsWithVariance.from_keyed_vectors(plain, writer.store)


def legend_labels(ax) -> list[str]:
    legend = ax.get_legend()
    return [] if legend is None else [text.get_text() for text in legend.get_texts()]


def plotted_points(ax) -> np.ndarray:
    return np.vstack([collection.get_offsets() for collection in ax.collections])


def brute_force_points(kv) -> dict:
    """``{word: (log10 L2 norm of its covariance's diagonal, log10 count)}``, one word at a time."""
    return {word: (np.log10(np.linalg.norm(np.diag(kv.covariance(word)))),
                   np.log10(kv.get_vecattr(word, "count")))
            for word in kv.index_to_key if kv.has_covariance(word)}


def test_the_variance_legend_names_only_groups_with_points(small_model):
    kv = KeyedVectorsWithVariance.from_estimator(small_model)
    assert not kv.covariance_store.pseudo_inverse.any()  # else the test is vacuous
    ax = plots.plot_variance_by_frequency(kv, max_points=300, random_state=0)
    assert legend_labels(ax) == ["inverse"]


def test_the_variance_legend_names_the_pseudo_inverse_when_it_has_points(rng):
    words = [f"w{i}" for i in range(40)]
    kv = synthetic_kv(words, rng, pseudo_inverse=range(0, 40, 2), undefined=(1,))
    ax = plots.plot_variance_by_frequency(kv, random_state=0)
    assert legend_labels(ax) == ["inverse", "pseudo-inverse"]
    only_pseudo = synthetic_kv(words, rng, pseudo_inverse=range(40))
    assert legend_labels(plots.plot_variance_by_frequency(only_pseudo, random_state=0)) == ["pseudo-inverse"]


def test_the_variance_title_says_the_points_are_a_frequency_weighted_sample(small_model):
    kv = KeyedVectorsWithVariance.from_estimator(small_model)
    n_defined = int(kv.covariance_store.defined.sum())
    title = plots.plot_variance_by_frequency(kv, max_points=300, random_state=0).get_title()
    assert f"300 of {n_defined:,} words with a covariance" in title
    assert "sampled in proportion to frequency" in title


def test_the_variance_points_are_each_words_norm_and_frequency(small_model):
    """Every point is one sampled word's (log10 |diag Sigma|, log10 count), computed word by word here."""
    kv = KeyedVectorsWithVariance.from_estimator(small_model)
    points = plotted_points(plots.plot_variance_by_frequency(kv, max_points=300, random_state=1))
    expected = brute_force_points(kv)
    words = list(expected)
    candidates = np.array([expected[word] for word in words])
    assert points.shape == (300, 2)
    matched = []
    for x, y in points:
        same = np.flatnonzero(np.isclose(candidates[:, 0], x, rtol=0, atol=1e-9)
                              & np.isclose(candidates[:, 1], y, rtol=0, atol=1e-12))
        assert same.size >= 1, (x, y)
        matched.append(words[same[0]])
    assert len(set(matched)) == 300  # a sample without replacement


def test_the_variance_plot_skips_words_without_covariance_and_matches_brute_force(rng):
    words = [f"w{i}" for i in range(30)]
    kv = synthetic_kv(words, rng, pseudo_inverse=(3, 4, 9), undefined=(0, 5, 17))
    ax = plots.plot_variance_by_frequency(kv, random_state=0)
    points = plotted_points(ax)
    expected = np.array(list(brute_force_points(kv).values()))
    assert points.shape == expected.shape == (27, 2)
    np.testing.assert_allclose(np.array(sorted(map(tuple, points))), np.array(sorted(map(tuple, expected))),
                               rtol=0, atol=1e-9)
    assert "27 of 27 words with a covariance" in ax.get_title()


def test_the_variance_plot_forms_no_covariance_and_asks_nothing_word_by_word(small_model, monkeypatch):
    """Dense covariances and per-key lookups cost seconds on a full vocabulary: the figure uses neither."""
    kv = KeyedVectorsWithVariance.from_estimator(small_model)

    def refuse(*args, **kwargs):
        raise AssertionError("called once per word")

    monkeypatch.setattr(Factor, "dense", refuse)
    monkeypatch.setattr(KeyedVectorsWithVariance, "has_covariance", refuse)
    monkeypatch.setattr(KeyedVectorsWithVariance, "covariance_row", refuse)
    n_defined = int(kv.covariance_store.defined.sum())
    assert len(plotted_points(plots.plot_variance_by_frequency(kv, max_points=n_defined, random_state=0))) == n_defined


@pytest.fixture(scope="module")
def semeval_result():
    """1a scored on random vectors of its words, beside a copy of it that keeps one MaxDiff question."""
    relation = glovev_ext.read_semeval2012(SAMPLE_PATH)["1a"]
    one_question = dataclasses.replace(relation, subcategory="1z", name="One question",
                                       questions=relation.questions[:1], least_votes=relation.least_votes[:1],
                                       most_votes=relation.most_votes[:1])
    words = sorted({word.lower() for pair in (*relation.pairs, *relation.paradigms) for word in pair})
    kv = synthetic_kv(words, np.random.default_rng(3))
    relations = {"1a": relation, "1z": one_question,
                 **{f"1{k}": dataclasses.replace(relation, subcategory=f"1{k}", name=f"copy {k}") for k in "bcdef"}}
    return glovev_ext.evaluate_relational_similarity(kv, relations, n_draws=50, random_state=0)


def errorbar_points(ax) -> np.ndarray:
    """Display coordinates of every marker and interval end drawn on ``ax``."""
    points = []
    for container in ax.containers:
        line, caps, _ = container
        x, y = line.get_data()
        points.append(np.column_stack([x, y]))
        points += [np.column_stack(cap.get_data()) for cap in caps]
    return ax.transData.transform(np.vstack(points))


@pytest.mark.parametrize("tight", [False, True], ids=["as drawn", "tight layout"])
def test_the_semeval_legend_covers_no_data(semeval_result, tight):
    axes = plots.plot_relational_similarity(semeval_result)
    figure = axes[0].figure
    if tight:  # as the command line and the tutorials save it
        figure.tight_layout()
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    legend = axes[0].get_legend()
    assert legend_labels(axes[0]) == ["GloVe", "Random baseline"]
    box = legend.get_window_extent(renderer)
    for ax in axes:
        assert not box.overlaps(ax.get_window_extent(renderer))
        points = errorbar_points(ax)
        assert len(points) > 0
        inside = (points[:, 0] >= box.x0) & (points[:, 0] <= box.x1) & (points[:, 1] >= box.y0) \
            & (points[:, 1] <= box.y1)
        assert not inside.any()


def test_a_relation_with_one_question_is_left_out_and_named(semeval_result):
    assert semeval_result.n_questions[semeval_result.subcategories.index("1z")] == 1
    assert all(n > 1 for s, n in zip(semeval_result.subcategories, semeval_result.n_questions) if s != "1z")
    axes = plots.plot_relational_similarity(semeval_result)
    shown = [label for label in semeval_result.labels if not label.startswith("1z")]
    assert [tick.get_text() for tick in axes[0].get_yticklabels()] == shown
    for ax in axes:
        assert [len(container[0].get_xdata()) for container in ax.containers] == [len(shown)] * 2
    title = axes[0].figure.get_suptitle()
    assert "1z (1 question)" in title and "fewer than 2 MaxDiff questions" in title


def test_min_questions_one_plots_every_relation(semeval_result):
    axes = plots.plot_relational_similarity(semeval_result, min_questions=1)
    assert len(axes[0].get_yticklabels()) == len(semeval_result.subcategories)
    assert "not plotted" not in axes[0].figure.get_suptitle()
