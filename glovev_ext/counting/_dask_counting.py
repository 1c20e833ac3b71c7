"""Counting on a Dask cluster (``CooccurrenceVectorizer(backend="dask")``): the corpus in shards on the workers.

Each worker reads the corpus file itself, so nothing of the corpus passes through the client or
the scheduler. The vocabulary pass keeps documents in stripes of ``_STRIPE`` lines, stripe ``s``
going to shard ``s mod n_shards``, counts each shard's word types and sums them in a tree of merges
on the workers (integer counts: any order gives the same).

The counting pass sums the same numbers in the same order as the threads' counter, so its matrix
is theirs bit for bit: one task finds where the threads' chunks of the corpus start (the same
``encode_chunks``); each counting task takes a run of consecutive chunks, a power of two of them
aligned on a multiple of itself, counts each chunk's right-context matrix with the threads' kernel
and sums them in the threads' binary-counter tree (:class:`~glovev_ext.counting.partial_sums.PartialSums`),
cut into row blocks. The runs' sums are merged by that tree too, row block by row block, on the
workers; the sum ``Y`` then gives the symmetric ``Y + Y.T`` one row block at a time from the
column pieces of every block of ``Y``. No machine ever holds more than a run's matrix and the
blocks it is summing. The summed blocks are written by the workers into one CSR matrix in a folder
the workers share with the client (TMPDIR, for a local cluster), which the client memory-maps:
the whole matrix is never gathered in anyone's memory. The files stay there while the matrix lives
(they are deleted when it is freed), so the passes after counting send the workers where their rows
are in them, not the rows.

A worker that dies takes its results with it; Dask recomputes them from the task descriptions
(every task is a pure function of them), and the writes go to fixed offsets, so a task that runs
twice writes the same bytes.
"""

from __future__ import annotations

import itertools
import operator
import os
import shutil
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._memory import map_file
from .._temporaries import make_temporary_folder
from ._chunks import TokenTable, encode_chunks, looked_up_ids
from ._counter import right_contexts
from .corpus import LineCorpus
from .partial_sums import PartialSums

_STRIPE = 1000  # documents in a row go to the same shard
_SHARDS_PER_WORKER = 2
_MAX_RUN_CHUNKS = 16  # chunks a counting task sums (a power of two): 64 MB of text at the default chunk size
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


@dataclass(frozen=True)
class CorpusDocuments:
    """The documents of a corpus that the counting pass reads, in order: those ``selected`` marks (all by default)."""

    source: str
    max_documents: int | None

    def documents(self, selected: np.ndarray | None, first: int = 0, stop: int | None = None) -> Iterator[str]:
        """The ``first`` to ``stop - 1``-th of the documents ``selected`` marks (the others are read, not kept)."""
        kept = (line for position, line in enumerate(LineCorpus(self.source, self.max_documents))
                if selected is None or (position < selected.size and selected[position]))
        return itertools.islice(kept, first, stop)


def chunk_starts(corpus: CorpusDocuments, lowercase: bool, tokenizer: Callable | None, chunk_bytes: int,
                 selected: np.ndarray | None) -> np.ndarray:
    """Where each of the threads' chunks starts among the documents read, and the end: ``n_chunks + 1`` numbers."""
    starts = [0]
    for chunk in encode_chunks(corpus.documents(selected), lowercase=lowercase, tokenizer=tokenizer,
                               chunk_bytes=chunk_bytes):
        starts.append(starts[-1] + chunk.doc_segment_ends.size)
    return np.asarray(starts, dtype=np.int64)


def run_sums(corpus: CorpusDocuments, words: Sequence[str], window: int, bounds: Sequence[int], lowercase: bool,
             tokenizer: Callable | None, chunk_bytes: int, selected: np.ndarray | None, first: int,
             stop: int) -> list[tuple[sp.csr_matrix, ...]]:
    """A run of consecutive chunks (documents ``first`` to ``stop - 1`` of those read): each chunk's right-context
    matrix summed as the threads' counter sums them, the partial sums it holds at the end (oldest first), each cut
    into row blocks at ``bounds``."""
    table = TokenTable.from_words(words)
    sums = PartialSums()
    for chunk in encode_chunks(corpus.documents(selected, first, stop), lowercase=lowercase, tokenizer=tokenizer,
                               chunk_bytes=chunk_bytes):
        sums.add(right_contexts(*looked_up_ids(table, chunk), window, len(words)))
    return [tuple(partial[start:end] for start, end in zip(bounds[:-1], bounds[1:])) for partial in sums.drain()]


def run_part(sums: list, partial: int, block: int) -> sp.csr_matrix:
    return sums[partial][block]


def column_pieces(block: sp.csr_matrix, bounds: Sequence[int]) -> tuple[sp.csr_matrix, ...]:
    """A row block of ``Y`` cut at ``bounds`` along its columns, each piece transposed: piece ``t`` is this block's
    part of the rows ``t`` of ``Y.T``."""
    columns = block.tocsc()
    return tuple(columns[:, start:end].T.tocsr() for start, end in zip(bounds[:-1], bounds[1:]))


def symmetric_block(block: sp.csr_matrix, *pieces: sp.csr_matrix) -> sp.csr_matrix:
    """Rows of ``Y + Y.T`` from the same rows of ``Y`` and every row block's piece of them in ``Y.T``, in order."""
    total = (block + sp.hstack(pieces, format="csr")).tocsr()
    total.sort_indices()
    return total


def _levels(n_partials: int) -> list[int]:
    """The levels of the partial sums a binary counter holds after ``n_partials`` additions, oldest first."""
    return [level for level in range(n_partials.bit_length() - 1, -1, -1) if n_partials >> level & 1]


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
    shared_selection = _recoverable(client, selected)
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
        The threads' matrix, bit for bit: its column indices and values memory-mapped from the files
        the workers wrote in a folder of TMPDIR (kept while the matrix lives, deleted when it is
        freed), its row pointers in memory.
    """
    n_workers = _n_workers(client)
    n_words = len(words)
    n_blocks = max(1, min(n_words, _BLOCKS_PER_WORKER * n_workers))
    bounds = np.linspace(0, n_words, n_blocks + 1).astype(np.int64).tolist()
    documents = CorpusDocuments(str(corpus.source.resolve()), corpus.max_documents)
    # One object array, not a list: Dask sends a list item by item, and copying 50,000 words to each worker that way
    # took minutes.
    shared_words = _recoverable(client, np.asarray(list(words), dtype=object))
    shared_selection = _recoverable(client, selected)
    starts = client.submit(chunk_starts, documents, lowercase, tokenizer, chunk_bytes, shared_selection,
                           pure=False).result()
    n_chunks = starts.size - 1
    # Runs of a power of two of chunks, aligned on multiples of it: each run's sum is a node of the threads' tree.
    # About two runs per worker, and none longer than _MAX_RUN_CHUNKS: a run's sum is held whole by its worker.
    run = min(1 << max(0, (-(-n_chunks // (_SHARDS_PER_WORKER * n_workers)) - 1).bit_length()), _MAX_RUN_CHUNKS)
    sums = PartialSums(lambda earlier, later: tuple(client.submit(add_blocks, e, l, pure=False)
                                                    for e, l in zip(earlier, later)))
    for first in range(0, n_chunks, run):
        stop = min(first + run, n_chunks)
        partials = client.submit(run_sums, documents, shared_words, window, bounds, lowercase, tokenizer, chunk_bytes,
                                 shared_selection, int(starts[first]), int(starts[stop]), pure=False)
        for k, level in enumerate(_levels(stop - first)):
            sums.add(tuple(client.submit(run_part, partials, k, b, pure=False) for b in range(n_blocks)), level=level)
    held = sums.drain()
    if not held:
        empty = sp.csr_matrix((n_words, n_words))
        held = [tuple(_recoverable(client, empty[start:end]) for start, end in zip(bounds[:-1], bounds[1:]))]
    right = held[0]
    for partial in held[1:]:  # the threads' total: oldest first
        right = tuple(client.submit(add_blocks, e, l, pure=False) for e, l in zip(right, partial))
    pieces = [client.submit(column_pieces, block, bounds, pure=False) for block in right]
    blocks = [client.submit(symmetric_block, right[t], *[client.submit(operator.getitem, piece, t, pure=False)
                                                          for piece in pieces], pure=False) for t in range(n_blocks)]
    del right, pieces, held
    sizes = client.gather([client.submit(block_nnz, block, pure=False) for block in blocks])
    nnz = int(sum(sizes))
    folder = make_temporary_folder("dask-matrix")
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


def _same(value):
    return value


def _recoverable(client, value):
    """A future of ``value`` that the cluster computes again if the worker holding it dies.

    Not scattered: Dask's active memory manager keeps one replica of scattered data even when it was
    broadcast, and scattered data lost with its worker cannot be recovered; a task's argument stays in
    the scheduler's graph (a vocabulary of a million words makes it large, as meant).
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
        return client.submit(_same, value, pure=False)


def _n_workers(client) -> int:
    return max(1, len(client.scheduler_info().get("workers", {})))
