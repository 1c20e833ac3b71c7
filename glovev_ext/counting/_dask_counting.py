"""Counting on a Dask cluster (``CooccurrenceVectorizer(backend="dask")``): the corpus in shards on the workers.

Each worker reads the corpus file itself and keeps its shard: documents in stripes of
``_STRIPE`` lines, stripe ``s`` going to shard ``s mod n_shards``, so nothing of the corpus passes
through the client or the scheduler. The vocabulary pass counts each shard's word types and sums
them in a tree of merges on the workers. The counting pass counts each shard into a symmetric
matrix cut into row blocks; each row block is summed over the shards in a tree of additions on
the workers, so no machine ever holds more than one shard's matrix and the blocks it is summing.
The summed blocks are written by the workers into one CSR matrix in a folder the workers share
with the client (TMPDIR, for a local cluster), which the client memory-maps: the whole matrix is
never gathered in anyone's memory. The files stay there while the matrix lives (they are deleted
when it is freed), so the passes after counting send the workers where their rows are in them,
not the rows.

A worker that dies takes its results with it; Dask recomputes them from the shard descriptions
(every task is a pure function of them), and the writes go to fixed offsets, so a task that runs
twice writes the same bytes.
"""

from __future__ import annotations

import operator
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._memory import map_file
from ._chunks import TokenTable, encode_chunks, looked_up_ids
from ._counter import ContextCounter
from .corpus import LineCorpus

_STRIPE = 1000  # documents in a row go to the same shard
_SHARDS_PER_WORKER = 2
_BLOCKS_PER_WORKER = 4  # row blocks of the summed matrix per worker


@dataclass(frozen=True)
class Shard:
    """Which documents of a corpus a task reads: stripe ``s`` of ``_STRIPE`` lines goes to shard ``s mod n_shards``."""

    source: str
    max_documents: int | None
    index: int
    n_shards: int

    def documents(self, selected: np.ndarray | None = None) -> Iterator[str]:
        """The shard's documents; with ``selected`` (one bool per document of the corpus), those it marks."""
        for position, line in enumerate(LineCorpus(self.source, self.max_documents)):
            if (position // _STRIPE) % self.n_shards == self.index and (
                    selected is None or (position < selected.size and selected[position])):
                yield line


@dataclass
class ShardVocabulary:
    """Word types of one or more shards with their counts, and their tokens and documents."""

    counts: dict[str, int]
    n_tokens: int
    n_documents: int

    def __add__(self, other: ShardVocabulary) -> ShardVocabulary:
        larger, smaller = (self, other) if len(self.counts) >= len(other.counts) else (other, self)
        counts = dict(larger.counts)
        for word, count in smaller.counts.items():
            counts[word] = counts.get(word, 0) + count
        return ShardVocabulary(counts, self.n_tokens + other.n_tokens, self.n_documents + other.n_documents)


def shards_of(corpus: LineCorpus, n_shards: int) -> list[Shard]:
    return [Shard(str(corpus.source.resolve()), corpus.max_documents, s, n_shards) for s in range(n_shards)]


def shard_vocabulary(shard: Shard, lowercase: bool, tokenizer: Callable | None, chunk_bytes: int,
                     selected: np.ndarray | None) -> ShardVocabulary:
    """The word types of a shard and how often each occurs."""
    table = TokenTable()
    n_tokens = n_documents = 0
    for chunk in encode_chunks(shard.documents(selected), lowercase=lowercase, tokenizer=tokenizer,
                               chunk_bytes=chunk_bytes):
        starts, ends, doc_ends = chunk.spans()
        n_tokens += table.index(chunk.buffer, starts, ends).size
        n_documents += doc_ends.size
    return ShardVocabulary(dict(zip(table.words(), table.counts().tolist())), n_tokens, n_documents)


def shard_blocks(shard: Shard, words: Sequence[str], window: int, bounds: Sequence[int], lowercase: bool,
                 tokenizer: Callable | None, chunk_bytes: int,
                 selected: np.ndarray | None) -> tuple[sp.csr_matrix, ...]:
    """A shard's symmetric co-occurrence matrix (the threads' counter on one thread), cut into row blocks."""
    table = TokenTable.from_words(words)
    with ContextCounter(len(words), window, 1, on_counted=lambda n_tokens: None) as counter:
        for chunk in encode_chunks(shard.documents(selected), lowercase=lowercase, tokenizer=tokenizer,
                                   chunk_bytes=chunk_bytes):
            counter.submit(looked_up_ids, table, chunk)
        symmetric = counter.symmetric_result().tocsr()
    symmetric.sort_indices()
    return tuple(symmetric[start:stop] for start, stop in zip(bounds[:-1], bounds[1:]))


def add_blocks(earlier: sp.csr_matrix, later: sp.csr_matrix) -> sp.csr_matrix:
    total = (earlier + later).tocsr()
    total.sort_indices()
    return total


def block_nnz(block: sp.csr_matrix) -> int:
    return int(block.nnz)


def write_block(block: sp.csr_matrix, indices_path: str, data_path: str, offset: int) -> np.ndarray:
    """Write a summed block's column indices and values at ``offset`` entries into the shared files; its row counts."""
    if block.nnz:
        for path, values, dtype in ((indices_path, block.indices, np.int32), (data_path, block.data, np.float64)):
            target = np.memmap(path, dtype=dtype, mode="r+", offset=offset * np.dtype(dtype).itemsize,
                               shape=(block.nnz,))
            target[:] = values
            target.flush()
            del target
    return np.diff(block.indptr)


def tree_sum(client, futures: list, add: Callable = operator.add):
    """One future of the sum of ``futures``, added pairwise on the workers (a tree of depth log2 n)."""
    level = list(futures)
    while len(level) > 1:
        paired = [client.submit(add, level[k], level[k + 1], pure=False) for k in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def vocabulary_on_dask(client, corpus: LineCorpus, *, lowercase: bool, tokenizer: Callable | None,
                       chunk_bytes: int, selected: np.ndarray | None = None) -> ShardVocabulary:
    """Every word type of ``corpus`` (of the documents ``selected`` marks) with its count, its tokens and documents:
    the shards counted on the workers and summed in a tree of merges there; only the sum comes back."""
    [shared_selection] = client.scatter([selected], broadcast=True, hash=False)
    parts = [client.submit(shard_vocabulary, shard, lowercase, tokenizer, chunk_bytes, shared_selection, pure=False)
             for shard in shards_of(corpus, _SHARDS_PER_WORKER * _n_workers(client))]
    return tree_sum(client, parts).result()


def matrix_on_dask(client, corpus: LineCorpus, words: Sequence[str], *, window: int, lowercase: bool,
                   tokenizer: Callable | None, chunk_bytes: int, selected: np.ndarray | None = None) -> sp.csr_matrix:
    """The co-occurrence matrix of ``corpus`` over ``words``, counted on the workers.

    Parameters
    ----------
    client : dask.distributed.Client
    corpus : LineCorpus
        Read by every worker: its file or folder must be where the workers see it.
    words : sequence of str
        The vocabulary, in row order.
    window, lowercase, tokenizer, chunk_bytes
        As the vectorizer's.
    selected : ndarray of bool, optional
        Count only the documents it marks (one entry per document of the corpus).

    Returns
    -------
    scipy.sparse.csr_matrix
        Its column indices and values memory-mapped from the files the workers wrote in a folder of
        TMPDIR (deleted once mapped, so nothing is left behind), its row pointers in memory.
    """
    n_workers = _n_workers(client)
    n_words = len(words)
    n_blocks = max(1, min(n_words, _BLOCKS_PER_WORKER * n_workers))
    bounds = np.linspace(0, n_words, n_blocks + 1).astype(np.int64).tolist()
    # One object array, not a list: Dask sends a list item by item, and copying 50,000 words to each worker that way
    # took minutes.
    shared_words, shared_selection = client.scatter([np.asarray(list(words), dtype=object), selected],
                                                    broadcast=True, hash=False)
    per_shard = [client.submit(shard_blocks, shard, shared_words, window, bounds, lowercase, tokenizer, chunk_bytes,
                               shared_selection, pure=False)
                 for shard in shards_of(corpus, _SHARDS_PER_WORKER * n_workers)]
    blocks = [tree_sum(client, [client.submit(operator.getitem, part, b, pure=False) for part in per_shard],
                       add_blocks) for b in range(n_blocks)]
    del per_shard
    sizes = client.gather([client.submit(block_nnz, block, pure=False) for block in blocks])
    nnz = int(sum(sizes))
    folder = tempfile.mkdtemp(prefix="glovev-dask-matrix-")
    try:
        indices_path, data_path = os.path.join(folder, "indices"), os.path.join(folder, "data")
        for path, itemsize in ((indices_path, 4), (data_path, 8)):
            with open(path, "wb") as stream:
                stream.truncate(nnz * itemsize)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64).tolist()
        row_counts = client.gather([client.submit(write_block, block, indices_path, data_path, offset, pure=False)
                                    for block, offset in zip(blocks, offsets)])
        del blocks
        indptr = np.zeros(n_words + 1, np.int64)
        np.cumsum(np.concatenate(row_counts), out=indptr[1:])
        # The files stay while the matrix lives: the workers map its rows from them in the passes after counting.
        matrix = sp.csr_matrix((map_file(data_path, np.float64, nnz, keep=nnz > 0),
                                map_file(indices_path, np.int32, nnz, keep=nnz > 0), indptr), shape=(n_words, n_words))
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    if nnz == 0:
        shutil.rmtree(folder, ignore_errors=True)
    return matrix


def _n_workers(client) -> int:
    return max(1, len(client.scheduler_info().get("workers", {})))
