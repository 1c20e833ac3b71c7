"""check_cooccurrence: canonical matrices pass through without a copy; others are fixed in a copy."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import glovev_ext


def test_a_canonical_matrix_is_not_copied(small_cooccurrence):
    checked = glovev_ext.counting.matrix.check_cooccurrence(small_cooccurrence)
    assert np.shares_memory(checked.data, small_cooccurrence.data)
    assert (checked != small_cooccurrence).nnz == 0


def test_duplicates_and_zeros_are_fixed_in_a_copy():
    rows, cols = np.array([0, 0, 1, 2]), np.array([1, 1, 2, 0])
    raw = sp.csr_matrix((np.array([1.0, 2.0, 0.0, 4.0]), (rows, cols)), shape=(3, 3))
    raw.has_canonical_format = False
    raw.indices, raw.data = np.array([1, 1, 2, 0], np.int32), np.array([1.0, 2.0, 0.0, 4.0])
    raw.indptr = np.array([0, 2, 3, 4], np.int32)
    before = (raw.indptr.copy(), raw.indices.copy(), raw.data.copy())
    checked = glovev_ext.counting.matrix.check_cooccurrence(raw)
    np.testing.assert_array_equal(checked.toarray(), [[0, 3, 0], [0, 0, 0], [4, 0, 0]])
    assert checked.nnz == 2 and checked.has_canonical_format
    for array, saved in zip((raw.indptr, raw.indices, raw.data), before):
        np.testing.assert_array_equal(array, saved)


def random_rows(rng, n_rows: int) -> sp.csr_matrix:
    """A CSR matrix of ``n_rows`` rows, some empty, whose columns strictly increase in each row (canonical)."""
    lengths = rng.integers(0, 6, n_rows) * (rng.random(n_rows) < 0.8)
    indices = np.concatenate([np.sort(rng.choice(n_rows, k, replace=False)) for k in lengths]).astype(np.int32)
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    return sp.csr_matrix((rng.uniform(0.5, 2.0, indices.size), indices, indptr), shape=(n_rows, n_rows))


def test_the_scan_in_chunks_finds_what_numpy_and_scipy_find_in_the_whole_matrix(monkeypatch):
    """The check reads a few entries at a time (rows whole, so a chunk boundary is never inside a row): each
    chunk's pages are let go of, and the counts, first positions and canonical format are the whole arrays'."""
    from glovev_ext.counting import matrix as module
    monkeypatch.setattr(module, "_SCAN_ENTRIES", 7)
    releases = []
    monkeypatch.setattr(module, "release_pages", lambda *holders: releases.append(len(holders)))
    rng, outcomes = np.random.default_rng(3), set()
    for trial in range(200):
        matrix = random_rows(rng, 40)
        data, indices = matrix.data, matrix.indices
        spoil = rng.integers(0, 5)
        k = rng.integers(0, max(1, data.size), size=2)
        if data.size and spoil == 1:
            data[k] = [np.nan, -np.inf][: k.size]
        elif data.size and spoil == 2:
            data[k] = -1.0
        elif data.size and spoil == 3:
            data[k[0]] = 0.0
        elif data.size > 1 and spoil == 4:  # a repeated or falling column somewhere (maybe across rows: allowed)
            position = int(rng.integers(1, data.size))
            indices[position] = indices[position - 1] - int(rng.integers(0, 2))
        releases.clear()
        non_finite, negative, zero, canonical = module._scan_entries(matrix)
        for tally, found in ((non_finite, ~np.isfinite(data)), (negative, data < 0), (zero, data == 0)):
            assert tally.count == found.sum()
            assert tally.first == (int(np.flatnonzero(found)[0]) if found.any() else -1)
        fresh = sp.csr_matrix((data, indices, matrix.indptr), shape=matrix.shape)
        assert canonical == fresh.has_canonical_format  # scipy's own reading of the whole arrays
        outcomes.add(canonical)
        chunks, start = 0, 0  # whole rows, as many as hold at most 7 entries (at least one row)
        while start < matrix.shape[0]:
            stop = start + 1
            while stop < matrix.shape[0] and matrix.indptr[stop + 1] - matrix.indptr[start] <= 7:
                stop += 1
            chunks, start = chunks + 1, stop
        assert len(releases) == chunks > 5
    assert outcomes == {True, False}
