"""Training with a memory budget: the entries in a file, one block in memory at a time, the same bits."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from glovev_ext.glove import train_glove
from glovev_ext.glove import trainer
from glovev_ext.glove._entry_blocks import FileBlocks, MemoryBlocks, word_groups

FIELDS = ("center_vectors", "context_vectors", "center_biases", "context_biases", "costs")


def brute_force_blocks(X, groups):
    """Each block's (row, col, value) triples by plain loops over the matrix, in row-then-column order."""
    group = word_groups(np.diff(X.indptr), groups)
    blocks = {b: [] for b in range(groups * groups)}
    for i in range(X.shape[0]):
        for k in range(X.indptr[i], X.indptr[i + 1]):
            j = X.indices[k]
            blocks[group[i] * groups + group[j]].append((i, j, X.data[k]))
    return blocks


@pytest.mark.parametrize("chunk_entries", [1, 97, 1 << 22])
def test_both_sources_give_every_block_in_row_then_column_order(embedded_cooccurrence, tmp_path, chunk_entries):
    X = embedded_cooccurrence[:300, :300].tocsr()
    expected = brute_force_blocks(X, 4)
    for source in (MemoryBlocks(X, 4), FileBlocks(X, 4, tmp_path / "entries.bin", chunk_entries)):
        for block, triples in expected.items():
            rows, cols, values = source.read(block)
            assert rows.dtype == cols.dtype == np.int32 and values.dtype == np.float64
            assert list(zip(rows.tolist(), cols.tolist(), values.tolist())) == triples, (type(source), block)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_the_budget_gives_the_same_bits_as_memory(embedded_cooccurrence, private_tmpdir, n_jobs):
    in_memory = train_glove(embedded_cooccurrence, 10, epochs=3, random_state=3, n_jobs=n_jobs, progress=False)
    on_disk = train_glove(embedded_cooccurrence, 10, epochs=3, random_state=3, n_jobs=n_jobs, max_memory="64M",
                          progress=False)
    for name in FIELDS:
        assert np.array_equal(getattr(on_disk, name), getattr(in_memory, name)), name
    assert os.listdir(private_tmpdir) == []


def test_an_interrupted_training_leaves_no_file(embedded_cooccurrence, private_tmpdir, monkeypatch):
    calls = []

    def failing_pass(*args):
        calls.append(1)
        if len(calls) == 20:
            raise KeyboardInterrupt
        return 0.0

    monkeypatch.setattr(trainer, "block_pass", failing_pass)
    with pytest.raises(KeyboardInterrupt):
        train_glove(embedded_cooccurrence, 5, epochs=2, n_jobs=1, max_memory="64M", progress=False)
    assert len(calls) == 20
    assert os.listdir(private_tmpdir) == []


def test_a_budget_below_the_parameters_is_named_and_training_goes_on(embedded_cooccurrence, private_tmpdir, caplog):
    V = embedded_cooccurrence.shape[0]
    assert 2 * 2 * V * 51 * 8 > 1_000_000  # the parameters alone exceed it
    with caplog.at_level("WARNING", logger="glovev_ext.glove.trainer"):
        tight = train_glove(embedded_cooccurrence, 50, epochs=1, n_jobs=2, max_memory=1_000_000, progress=False)
    assert len(caplog.records) == 1
    assert re.fullmatch(r"max_memory=1,000,000 bytes is below what training needs: [\d,]+ bytes for the parameters, "
                        r"their AdaGrad accumulators and the largest 2 block\(s\) of entries in flight \(one per "
                        r"thread\); training goes on with that", caplog.records[0].getMessage())
    untight = train_glove(embedded_cooccurrence, 50, epochs=1, n_jobs=2, progress=False)
    assert np.array_equal(tight.center_vectors, untight.center_vectors)
    assert os.listdir(private_tmpdir) == []


def test_a_budget_needs_the_blocks_schedule(embedded_cooccurrence):
    with pytest.raises(ValueError, match="max_memory needs schedule='blocks'"):
        train_glove(embedded_cooccurrence, 5, epochs=1, schedule="hogwild", max_memory="1G", progress=False)
    with pytest.raises(ValueError, match="max_memory must be bytes or a size"):
        train_glove(embedded_cooccurrence, 5, epochs=1, max_memory="lots", progress=False)


def test_a_truncated_entries_file_is_named(embedded_cooccurrence, tmp_path):
    X = embedded_cooccurrence[:200, :200].tocsr()
    blocks = FileBlocks(X, 4, tmp_path / "entries.bin")
    with open(blocks.path, "r+b") as handle:
        handle.truncate(os.path.getsize(blocks.path) - 16)
    last = int(np.flatnonzero(np.diff(blocks.bounds))[-1])
    with pytest.raises(OSError, match=f"entries.bin is truncated \\(block {last}\\)"):
        blocks.read(last)
