"""The GloVe trainer against a plain-Python transcription of the C tool's update rule."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from gensim.models import KeyedVectors
from gensim.test.utils import datapath

from glovev_ext.glove import glove_cost, glove_weights, train_glove
from glovev_ext.glove._adagrad_kernel import shuffle_in_place


def reference_update(params, gradsq, value, l1, l2, dim, learning_rate, x_max, alpha, grad_clip):
    """The C tool's update of one entry, in plain loops; returns its cost term."""
    diff = sum(params[l1, d] * params[l2, d] for d in range(dim)) + params[l1, dim] + params[l2, dim]
    diff -= math.log(value)
    fdiff = diff if value > x_max else (value / x_max) ** alpha * diff
    updates1, updates2 = [], []
    for d in range(dim):
        temp1 = min(max(fdiff * params[l2, d], -grad_clip), grad_clip) * learning_rate
        temp2 = min(max(fdiff * params[l1, d], -grad_clip), grad_clip) * learning_rate
        updates1.append(temp1 / math.sqrt(gradsq[l1, d]))
        updates2.append(temp2 / math.sqrt(gradsq[l2, d]))
        gradsq[l1, d] += temp1 * temp1
        gradsq[l2, d] += temp2 * temp2
    for d in range(dim):
        params[l1, d] -= updates1[d]
        params[l2, d] -= updates2[d]
    params[l1, dim] -= fdiff / math.sqrt(gradsq[l1, dim])
    params[l2, dim] -= fdiff / math.sqrt(gradsq[l2, dim])
    gradsq[l1, dim] += fdiff * fdiff
    gradsq[l2, dim] += fdiff * fdiff
    return 0.5 * fdiff * diff


def reference_glove(X, dim, epochs, seed, learning_rate=0.05, x_max=100.0, alpha=0.75, grad_clip=100.0):
    """The C tool's schedule: one thread, plain loops, same random stream as train_glove(schedule="hogwild", n_jobs=1)."""
    rng = np.random.default_rng(seed)
    entries = X.tocoo()
    n_words = X.shape[0]
    params = (rng.random((2 * n_words, dim + 1)) - 0.5) / dim
    gradsq = np.ones_like(params)
    costs = []
    order = np.arange(entries.nnz, dtype=np.int32)
    for _ in range(epochs):
        shuffle_in_place(order, int(rng.integers(2**63 - 1)))
        cost = sum(reference_update(params, gradsq, entries.data[e], entries.row[e], n_words + entries.col[e], dim,
                                    learning_rate, x_max, alpha, grad_clip) for e in order)
        costs.append(cost / entries.nnz)
    return params, np.array(costs)


def reference_blocks(X, dim, epochs, seed, groups=16, learning_rate=0.05, x_max=100.0, alpha=0.75, grad_clip=100.0):
    """The blocks schedule written out: words dealt by entries in a snake order, strata of blocks
    (r, r + s mod G), each block's entries (by row, then column) shuffled afresh every epoch."""
    rng = np.random.default_rng(seed)
    entries = X.tocoo()
    n_words = X.shape[0]
    params = (rng.random((2 * n_words, dim + 1)) - 0.5) / dim
    gradsq = np.ones_like(params)
    counts = np.bincount(entries.row, minlength=n_words)
    group = {}
    for rank, word in enumerate(sorted(range(n_words), key=lambda w: (-counts[w], w))):
        position = rank % (2 * groups)
        group[word] = position if position < groups else 2 * groups - 1 - position
    members = {b: np.array([e for e in range(entries.nnz)
                            if group[entries.row[e]] * groups + group[entries.col[e]] == b], dtype=np.int32)
               for b in range(groups * groups)}
    costs = []
    for _ in range(epochs):
        strata = rng.permutation(groups)
        seeds = rng.integers(2**63 - 1, size=groups * groups)
        cost = np.zeros(groups * groups)
        for s in strata:
            for r in range(groups):
                b = r * groups + (r + s) % groups
                order = members[b].copy()
                shuffle_in_place(order, int(seeds[b]))
                cost[b] = sum(reference_update(params, gradsq, entries.data[e], entries.row[e],
                                               n_words + entries.col[e], dim, learning_rate, x_max, alpha, grad_clip)
                              for e in order)
        costs.append(cost.sum() / entries.nnz)
    return params, np.array(costs)


def test_single_thread_matches_plain_python_transcription_of_the_c_tool(embedded_cooccurrence):
    X = embedded_cooccurrence[:40, :40].tocsr()
    params, costs = reference_glove(X, dim=6, epochs=3, seed=7)
    trained = train_glove(X, 6, epochs=3, random_state=7, n_jobs=1, schedule="hogwild", progress=False)
    n = X.shape[0]
    np.testing.assert_allclose(trained.center_vectors, params[:n, :6], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(trained.context_vectors, params[n:, :6], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(trained.center_biases, params[:n, 6], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(trained.context_biases, params[n:, 6], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(trained.costs, costs, rtol=1e-9)


@pytest.mark.parametrize("n_jobs", [1, 2, 3])
def test_the_block_schedule_matches_its_transcription_at_every_thread_count(embedded_cooccurrence, n_jobs):
    X = embedded_cooccurrence[:60, :60].tocsr()
    params, costs = reference_blocks(X, dim=5, epochs=2, seed=11)
    trained = train_glove(X, 5, epochs=2, random_state=11, n_jobs=n_jobs, progress=False)
    n = X.shape[0]
    np.testing.assert_allclose(trained.center_vectors, params[:n, :5], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(trained.context_vectors, params[n:, :5], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(trained.center_biases, params[:n, 5], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(trained.costs, costs, rtol=1e-9)


def test_the_default_schedule_gives_the_same_bits_at_every_thread_count(embedded_cooccurrence):
    runs = [train_glove(embedded_cooccurrence, 10, epochs=3, random_state=5, n_jobs=n_jobs, progress=False)
            for n_jobs in (1, 2, 4, 1)]
    for run in runs[1:]:
        for name in ("center_vectors", "context_vectors", "center_biases", "context_biases", "costs"):
            assert np.array_equal(getattr(run, name), getattr(runs[0], name)), name


def test_the_schedules_reach_the_same_cost(embedded_cooccurrence):
    blocks = train_glove(embedded_cooccurrence, 20, epochs=8, random_state=0, n_jobs=2, progress=False)
    hogwild = train_glove(embedded_cooccurrence, 20, epochs=8, random_state=0, n_jobs=2, schedule="hogwild",
                          progress=False)
    assert abs(blocks.costs[-1] - hogwild.costs[-1]) < 0.02 * hogwild.costs[-1]


def test_gradient_clipping_is_applied():
    X = sp.csr_matrix(np.array([[1e30, 2.0], [2.0, 5.0]]))
    params, costs = reference_glove(X, dim=3, epochs=2, seed=1)
    trained = train_glove(X, 3, epochs=2, random_state=1, n_jobs=1, schedule="hogwild", progress=False)
    np.testing.assert_allclose(trained.center_vectors, params[:2, :3], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(trained.costs, costs, rtol=1e-9)


def test_shuffle_is_a_seeded_permutation():
    a = np.arange(1000, dtype=np.int32)
    b = a.copy()
    shuffle_in_place(a, 5)
    shuffle_in_place(b, 5)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.sort(a), np.arange(1000))
    assert not np.array_equal(a, np.arange(1000))
    # Each value lands in each of 4 position bands about equally often over many shuffles.
    counts = np.zeros((4, 4))
    for seed in range(2000):
        c = np.arange(4, dtype=np.int64)
        shuffle_in_place(c, seed)
        counts[np.arange(4), c] += 1
    assert np.abs(counts - 500).max() < 5 * math.sqrt(2000 * 0.25 * 0.75)


def test_cost_falls_every_epoch_on_real_cooccurrences(embedded_cooccurrence):
    trained = train_glove(embedded_cooccurrence, 20, epochs=8, random_state=0, n_jobs=2, progress=False)
    assert np.all(np.diff(trained.costs) < 0)
    final = glove_cost(embedded_cooccurrence, trained.center_vectors, trained.context_vectors,
                       trained.center_biases, trained.context_biases) / embedded_cooccurrence.nnz / 2
    assert final < trained.costs[0]


def test_same_seed_single_thread_is_bit_for_bit_reproducible(embedded_cooccurrence):
    X = embedded_cooccurrence[:300, :300]
    first = train_glove(X, 10, epochs=3, random_state=42, n_jobs=1, progress=False)
    second = train_glove(X, 10, epochs=3, random_state=42, n_jobs=1, progress=False)
    other = train_glove(X, 10, epochs=3, random_state=43, n_jobs=1, progress=False)
    for name in ("center_vectors", "context_vectors", "center_biases", "context_biases", "costs"):
        assert np.array_equal(getattr(first, name), getattr(second, name)), name
    assert not np.array_equal(first.center_vectors, other.center_vectors)


def test_recovers_a_known_low_rank_model(rng):
    n_words, dim, noise = 150, 4, 0.05
    W, C = rng.normal(0, 0.6, (n_words, dim)), rng.normal(0, 0.6, (n_words, dim))
    b, c = rng.normal(2.0, 0.5, n_words), rng.normal(2.0, 0.5, n_words)
    mask = rng.random((n_words, n_words)) < 0.5
    log_x = W @ C.T + b[:, None] + c[None, :] + rng.normal(0, noise, (n_words, n_words))
    X = sp.csr_matrix(np.where(mask, np.exp(log_x), 0.0))
    trained = train_glove(X, dim, epochs=300, random_state=3, n_jobs=1, progress=False)
    entries = X.tocoo()
    weights = glove_weights(entries.data)
    noise_floor = 0.5 * np.sum(weights * noise**2) / entries.nnz
    final = glove_cost(X, trained.center_vectors, trained.context_vectors, trained.center_biases,
                       trained.context_biases) / 2 / entries.nnz
    assert final < 1.5 * noise_floor
    fitted = (trained.center_vectors @ trained.context_vectors.T + trained.center_biases[:, None]
              + trained.context_biases[None, :])
    truth = W @ C.T + b[:, None] + c[None, :]
    assert np.corrcoef(fitted[mask], truth[mask])[0, 1] > 0.99


def test_trained_vectors_correlate_with_wordsim353(corpus_cooccurrence):
    # x_max=10 as in the C tool's demo script for small corpora (2.6M tokens here).
    X = corpus_cooccurrence
    trained = train_glove(X, 50, epochs=10, x_max=10.0, random_state=0, progress=False)
    vectors = KeyedVectors(50)
    vectors.add_vectors(list(X.words), trained.center_vectors)
    _, (rho, p_value), _ = vectors.evaluate_word_pairs(datapath("wordsim353.tsv"))
    assert rho > 0 and p_value < 0.01


def test_returns_centre_and_context_parameters_separately(embedded_cooccurrence):
    trained = train_glove(embedded_cooccurrence[:50, :50], 7, epochs=1, random_state=0, progress=False)
    assert trained.center_vectors.shape == trained.context_vectors.shape == (50, 7)
    assert trained.center_biases.shape == trained.context_biases.shape == (50,)
    assert trained.center_vectors.flags.c_contiguous
    assert not np.shares_memory(trained.center_vectors, trained.context_vectors)


@pytest.mark.parametrize("X, message", [
    (np.ones((2, 3)), "square"),
    (sp.csr_matrix((0, 0)), "empty"),
    (np.array([[1.0, -1.0], [1.0, 1.0]]), "negative entries, the first at \\(0, 1\\)"),
    (np.array([[1.0, np.nan], [1.0, 1.0]]), "NaN or infinite"),
    (np.array([[1.0, 1.0], [np.inf, 1.0]]), "NaN or infinite entries, the first at \\(1, 0\\)"),
    (np.zeros((3, 3)), "no positive entry"),
    (np.ones(3), "2-D"),
])
def test_bad_matrices_are_refused(X, message):
    with pytest.raises(ValueError, match=message):
        train_glove(X, 2, progress=False)


@pytest.mark.parametrize("params, message", [
    ({"n_components": 0}, "n_components must be >= 1"),
    ({"learning_rate": float("nan")}, "learning_rate must be a finite number > 0"),
    ({"learning_rate": float("inf")}, "learning_rate must be a finite number > 0"),
    ({"learning_rate": -0.1}, "learning_rate must be a finite number > 0"),
    ({"epochs": 0}, "epochs must be >= 1"),
    ({"x_max": 0.0}, "x_max"),
    ({"alpha": float("nan")}, "alpha"),
    ({"random_state": "seed"}, "random_state"),
    ({"schedule": "random"}, "schedule must be one of"),
])
def test_bad_parameters_are_refused(params, message):
    params.setdefault("n_components", 2)
    with pytest.raises((ValueError, TypeError), match=message):
        train_glove(np.ones((3, 3)), progress=False, **params)
