"""CooccurrenceVectorizer: documents -> vocabulary -> distance-weighted co-occurrence matrix."""

from __future__ import annotations

import logging
import sys
import tempfile
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import BinaryIO

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted
from tqdm.auto import tqdm

from .._checks import check_int, parse_memory, resolve_n_jobs
from .._memory import trim_heap
from ._chunks import TextChunk, TokenTable, encode_chunks, looked_up_ids
from .._dask import check_backend, clone_sharing_client, connected
from ._counter import ContextCounter
from ._dask_counting import matrix_on_dask, vocabulary_on_dask
from .corpus import DocumentSubset, LineCorpus
from .groups import DocumentGroups
from .matrix import CooccurrenceMatrix

logger = logging.getLogger(__name__)


class CooccurrenceVectorizer(TransformerMixin, BaseEstimator):
    """Count a corpus into the GloVe co-occurrence matrix, as the Stanford C tool does.

    ``fit`` builds the vocabulary, ``transform`` counts co-occurrences: for every pair of
    in-vocabulary words ``d <= window`` positions apart in the same document, ``1/d`` is added to
    both ``X[i, j]`` and ``X[j, i]`` (a word paired with itself adds ``2/d`` to ``X[i, i]``).
    Out-of-vocabulary words are removed before windows are formed, and windows never cross a
    document boundary, as in the C tool's ``cooccur`` with one document per line.

    The corpus is streamed: documents are read once per pass and only a bounded chunk of them is
    held at a time. The calling thread only lowercases and encodes documents; splitting, hashing
    and counting run in compiled kernels on ``n_jobs`` worker threads. A string document is split
    exactly as ``str.split()`` would (or by ``tokenizer``); a token-list document is taken as is.

    Parameters
    ----------
    window : int, default=8
        Context words on each side of a centre word.
    min_count : int, default=5
        Words occurring fewer times in the corpus passed to ``fit`` are left out of the vocabulary.
    max_vocab_size : int or None, default=None
        Keep at most this many of the most frequent words (ties broken alphabetically).
    lowercase : bool, default=True
        Lowercase text (or each token of pre-tokenised documents) before counting.
    tokenizer : callable or None, default=None
        Maps a (lowercased) document string to its list of tokens; ``str.split`` when None.
        Unused for documents given as token lists.
    n_jobs : int or None, default=-1
        Worker threads: None or 1 works on the calling thread only, -1 uses every core.
    chunk_size : int, default=4_000_000
        Bytes of UTF-8 text per chunk. A chunk in flight takes about 25 times its size with the
        default window, and at most ``2 * n_jobs`` chunks are in flight (fewer with ``max_memory``).
    progress : bool, default=True
        Show tqdm progress bars.
    max_memory : int, str or None, default=None
        Memory budget for counting co-occurrences, in bytes or as a string such as ``"600M"`` or
        ``"2G"`` (powers of 1024): the vocabulary (its words and their ids, measured once it is
        known), the partial co-occurrence matrices and the chunks being counted. Partials that
        would exceed it are written to a temporary folder as sorted runs and merged at the end, as
        the C tool's ``cooccur -memory`` does; the result is the same, bit for bit. A vocabulary
        that leaves less than a quarter of the budget is logged as a warning (counting then holds
        that quarter besides). Of what the vocabulary leaves, a quarter goes to the chunks in
        flight, whose number it limits (down to one, however large ``chunk_size`` is); the rest to
        the partials and the blocks of the merges. A final matrix larger than about an eighth of
        the budget is kept on disk: its values and column indices are memory-mapped from files in
        that folder (deleted at once; their space is freed with the matrix), read-only, and the
        passes of a fit let go of the pages they have read. None holds every partial and the
        matrix in memory. Not used with ``backend="dask"`` (the cluster's workers have their own
        limits).
    backend : {"threads", "dask"}, default="threads"
        Where counting runs. ``"dask"`` counts a :class:`~glovev_ext.LineCorpus` on the workers of
        a Dask cluster (``pip install 'glovev-ext[dask]'``): each worker reads the corpus file
        itself; the word counts are summed over shards of the documents, and each counting task
        takes a run of the threads' chunks and sums their counts as the threads do, row block by
        row block, in the threads' tree of merges, on the workers. The workers write the summed
        blocks into files in TMPDIR that the client memory-maps, so neither the client nor any
        worker holds the whole matrix. The files stay while the matrix lives (the workers of the
        passes and of training read their rows from them) and are deleted when it is freed. The
        corpus file and TMPDIR must be where the workers see them (a local cluster, or a shared
        file system). The result is the threaded count's, bit for bit.
    client : dask.distributed.Client, str or None, default=None
        With ``backend="dask"``: a client, a scheduler address, or None for a local cluster of
        ``n_jobs`` single-threaded worker processes for the call.

    Attributes
    ----------
    vocabulary_ : dict of str to int
        Word -> row index, in the order of ``get_feature_names_out()``.
    word_counts_ : ndarray of int64, shape (n_words,)
        Corpus frequency of each vocabulary word, descending.
    n_documents_ : int
        Documents seen by ``fit``.
    n_tokens_ : int
        Tokens seen by ``fit``, including words left out of the vocabulary.

    Examples
    --------
    >>> from glovev_ext import CooccurrenceVectorizer
    >>> docs = ["the cat sat on the mat", "the dog sat"]
    >>> X = CooccurrenceVectorizer(window=2, min_count=1, progress=False).fit_transform(docs)
    >>> X.shape
    (6, 6)
    >>> X.words[:2].tolist()
    ['the', 'sat']
    """

    def __init__(self, *, window: int = 8, min_count: int = 5, max_vocab_size: int | None = None,
                 lowercase: bool = True, tokenizer: Callable[[str], Sequence[str]] | None = None,
                 n_jobs: int | None = -1, chunk_size: int = 4_000_000, progress: bool = True,
                 max_memory: int | str | None = None, backend: str = "threads", client=None):
        self.window = window
        self.min_count = min_count
        self.max_vocab_size = max_vocab_size
        self.lowercase = lowercase
        self.tokenizer = tokenizer
        self.n_jobs = n_jobs
        self.chunk_size = chunk_size
        self.progress = progress
        self.max_memory = max_memory
        self.backend = backend
        self.client = client

    def fit(self, raw_documents: Iterable, y: None = None) -> CooccurrenceVectorizer:
        """Build the vocabulary of a corpus.

        Parameters
        ----------
        raw_documents : iterable
            Documents, each a string or an iterable of string tokens (any gensim corpus of token
            lists works).
        y : None
            Ignored.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            If the corpus holds no token, or fewer than two words pass ``min_count`` and
            ``max_vocab_size`` (GloVe needs at least two).
        """
        self._validate_params()
        if self.backend == "dask":
            with connected(self.client, resolve_n_jobs(self.n_jobs)) as client:
                self._vocabulary_on_dask(client, *_line_corpus(raw_documents))
            return self
        self._fit_vocabulary(raw_documents, spill=None)
        return self

    def fit_transform(self, raw_documents: Iterable, y: None = None) -> CooccurrenceMatrix:
        """Build the vocabulary and count co-occurrences, reading the corpus once.

        Word ids of the single pass wait in a temporary file until the vocabulary is known, so a
        one-shot generator of documents works here.

        Parameters
        ----------
        raw_documents : iterable
            As for :meth:`fit`.
        y : None
            Ignored.

        Returns
        -------
        CooccurrenceMatrix
            Symmetric ``(n_words, n_words)`` float64 CSR matrix with ``words`` set.

        Raises
        ------
        ValueError
            If the corpus holds no token, or fewer than two words pass ``min_count`` and
            ``max_vocab_size`` (GloVe needs at least two).
        """
        self._validate_params()
        if self.backend == "dask":
            corpus, selected = _line_corpus(raw_documents)
            with connected(self.client, resolve_n_jobs(self.n_jobs)) as client:
                self._vocabulary_on_dask(client, corpus, selected)
                return self._matrix_on_dask(client, corpus, selected)
        with tempfile.TemporaryFile(prefix="glovev-ids-") as spill:
            chunk_sizes, provisional_to_final = self._fit_vocabulary(raw_documents, spill=spill)
            spill.seek(0)
            held = _vocabulary_bytes(self.vocabulary_, provisional_to_final, self.word_counts_)
            with self._progress_bar("counting co-occurrences", total=self.n_tokens_) as bar, \
                    self._counter(bar, held) as counter:
                for n_ids, n_docs in chunk_sizes:
                    ids = np.fromfile(spill, dtype=np.int32, count=n_ids)
                    doc_ends = np.fromfile(spill, dtype=np.int64, count=n_docs)
                    counter.submit(_final_ids, provisional_to_final, ids, doc_ends)
                matrix = self._matrix(counter.symmetric_result(), counter)
        return self._after_counting(matrix)

    def transform(self, raw_documents: Iterable) -> CooccurrenceMatrix:
        """Count the co-occurrences of the fitted vocabulary in a corpus.

        Parameters
        ----------
        raw_documents : iterable
            As for :meth:`fit`; words outside the vocabulary are skipped.

        Returns
        -------
        CooccurrenceMatrix
            Symmetric ``(n_words, n_words)`` float64 CSR matrix with ``words`` set.
        """
        check_is_fitted(self, "vocabulary_")
        self._validate_params()
        if self.backend == "dask":
            with connected(self.client, resolve_n_jobs(self.n_jobs)) as client:
                return self._matrix_on_dask(client, *_line_corpus(raw_documents))
        table = TokenTable.from_words(list(self.vocabulary_))
        held = _vocabulary_bytes(self.vocabulary_, self.word_counts_) + table.nbytes
        with self._progress_bar("counting co-occurrences") as bar, self._counter(bar, held) as counter:
            for chunk in self._chunks(raw_documents):
                counter.submit(looked_up_ids, table, chunk)
            matrix = self._matrix(counter.symmetric_result(), counter)
        return self._after_counting(matrix)

    def count_by_group(self, raw_documents: Iterable, groups) -> sp.csr_matrix:
        """Count each word of the fitted vocabulary in each group of documents, reading the corpus once.

        From these counts :func:`~glovev_ext.counting.group_concentration` gives each word's
        concentration over any union of the groups (docs/method.md 6.21).

        Parameters
        ----------
        raw_documents : iterable
            As for :meth:`fit`.
        groups : DocumentGroups or array-like of shape (n_documents,)
            One label per document.

        Returns
        -------
        scipy.sparse.csr_matrix of int64, shape (n_words, n_groups)
            Each word's occurrences in each group, the groups in the order of ``groups.names``.

        Raises
        ------
        ValueError
            If ``groups`` has a number of labels other than the corpus's documents.
        """
        check_is_fitted(self, "vocabulary_")
        self._validate_params()
        groups = groups if isinstance(groups, DocumentGroups) else DocumentGroups.from_labels(groups)
        table = TokenTable.from_words(list(self.vocabulary_))
        n_words, n_groups = len(self.vocabulary_), groups.n_groups
        keys, counts, first_document = [], [], 0
        n_jobs = resolve_n_jobs(self.n_jobs)
        waiting: deque[Future] = deque()

        def take(result: tuple[np.ndarray, np.ndarray, int]) -> None:
            keys.append(result[0])
            counts.append(result[1])
            bar.update(result[2])

        # the calling thread encodes the chunks; the lookups and counts, which release the GIL, run on threads
        with self._progress_bar("counting words by group") as bar, ThreadPoolExecutor(n_jobs) as pool:
            for chunk in self._chunks(raw_documents):
                n_documents = chunk.doc_segment_ends.size
                if first_document + n_documents > groups.n_documents:
                    raise ValueError(f"groups label {groups.n_documents:,} documents, but the corpus has more: give "
                                     "one label per document, in the corpus's order")
                waiting.append(pool.submit(_group_keys, table, chunk,
                                           groups.codes[first_document:first_document + n_documents], n_groups))
                first_document += n_documents
                if len(waiting) >= 2 * n_jobs:
                    take(waiting.popleft().result())
            while waiting:
                take(waiting.popleft().result())
        if first_document != groups.n_documents:
            raise ValueError(f"groups label {groups.n_documents:,} documents, but the corpus has {first_document:,}: "
                             "give one label per document, in the corpus's order")
        keys = np.concatenate([np.empty(0, dtype=np.int64), *keys])
        counts = np.concatenate([np.empty(0, dtype=np.int64), *counts])
        return sp.csr_matrix((counts, (keys // n_groups, keys % n_groups)), shape=(n_words, n_groups),
                             dtype=np.int64)

    def _after_counting(self, matrix: CooccurrenceMatrix) -> CooccurrenceMatrix:
        """Under a budget, the heap that counting freed goes back to the operating system (glibc keeps it)."""
        if self.max_memory is not None:
            trim_heap()
        return matrix

    def get_feature_names_out(self, input_features: None = None) -> np.ndarray:
        """Vocabulary words in row order.

        Parameters
        ----------
        input_features : None
            Ignored; present for scikit-learn compatibility.

        Returns
        -------
        ndarray of str objects, shape (n_words,)
        """
        check_is_fitted(self, "vocabulary_")
        return np.asarray(list(self.vocabulary_), dtype=object)

    def __sklearn_clone__(self):
        # scikit-learn deep-copies parameters; a Dask client must be shared instead.
        return clone_sharing_client(self)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.two_d_array = False
        return tags

    def _validate_params(self) -> None:
        check_int(self.window, "window", minimum=1)
        if self.window > 255:
            raise ValueError(f"window must be <= 255, got {self.window}")
        check_int(self.min_count, "min_count", minimum=1)
        if self.max_vocab_size is not None:
            check_int(self.max_vocab_size, "max_vocab_size", minimum=1)
        check_int(self.chunk_size, "chunk_size", minimum=1)
        if self.tokenizer is not None and not callable(self.tokenizer):
            raise TypeError(f"tokenizer must be callable or None, got {type(self.tokenizer).__name__}")
        resolve_n_jobs(self.n_jobs)
        parse_memory(self.max_memory)
        check_backend(self.backend, self.client)

    def _counter(self, bar: tqdm, held: int) -> ContextCounter:
        """The counter of the co-occurrence pass, given the ``held`` bytes of the vocabulary in memory."""
        n_jobs, max_memory = resolve_n_jobs(self.n_jobs), parse_memory(self.max_memory)
        max_in_flight = None
        if max_memory is not None:
            if held > max_memory - max_memory // 4:
                logger.warning("max_memory=%s: the vocabulary of %d words takes %s bytes of it, and counting holds a "
                               "quarter of the budget besides; raise max_memory, or min_count or max_vocab_size for a "
                               "smaller vocabulary", self.max_memory, len(self.vocabulary_), f"{held:,}")
            max_memory = max(max_memory - held, max_memory // 4)
            # A quarter of the budget for the chunks being counted: fewer in flight, never smaller
            # chunks, since the chunk boundaries fix the merge tree and so the result's bits.
            max_in_flight = max(1, min(2 * n_jobs, max_memory // (4 * _CHUNK_MEMORY_FACTOR * self.chunk_size)))
        return ContextCounter(len(self.vocabulary_), self.window, n_jobs, bar.update, max_memory=max_memory,
                              max_in_flight=max_in_flight)

    def _chunks(self, raw_documents: Iterable):
        return encode_chunks(raw_documents, lowercase=self.lowercase, tokenizer=self.tokenizer,
                             chunk_bytes=self.chunk_size)

    def _fit_vocabulary(self, raw_documents: Iterable, spill: BinaryIO | None
                        ) -> tuple[list[tuple[int, int]], np.ndarray]:
        """One pass: a provisional id for every token type, their counts, then the vocabulary.

        With ``spill``, each chunk's provisional ids and document ends are appended to it.
        Returns the (ids, documents) sizes of the chunks written and the provisional -> final
        id map (-1 for types left out).
        """
        table = TokenTable()
        chunk_sizes: list[tuple[int, int]] = []

        def index(chunk: TextChunk) -> tuple[int, int]:
            starts, ends, doc_ends = chunk.spans()
            ids = table.index(chunk.buffer, starts, ends)
            if spill is not None:
                ids.tofile(spill)
                doc_ends.tofile(spill)
            return ids.size, doc_ends.size

        # One ordered worker: the table is extended chunk after chunk while this thread encodes.
        indexer = ThreadPoolExecutor(1, thread_name_prefix="glovev-index") if resolve_n_jobs(self.n_jobs) > 1 else None
        pending: deque[Future] = deque()
        with self._progress_bar("counting words") as bar:
            def collect(sizes: tuple[int, int]) -> None:
                chunk_sizes.append(sizes)
                bar.update(sizes[0])

            try:
                for chunk in self._chunks(raw_documents):
                    if indexer is None:
                        collect(index(chunk))
                        continue
                    pending.append(indexer.submit(index, chunk))
                    while len(pending) > 2:
                        collect(pending.popleft().result())
                while pending:
                    collect(pending.popleft().result())
            finally:
                if indexer is not None:
                    indexer.shutdown(wait=True, cancel_futures=True)

        n_tokens = sum(n for n, _ in chunk_sizes)
        n_documents = sum(d for _, d in chunk_sizes)
        words, counts = table.words(), table.counts()
        kept = self._keep_vocabulary(words, counts, n_tokens, n_documents)
        provisional_to_final = np.full(len(words), -1, np.int32)
        provisional_to_final[kept] = np.arange(len(kept), dtype=np.int32)
        return chunk_sizes, provisional_to_final

    def _keep_vocabulary(self, words: list[str], counts: np.ndarray, n_tokens: int, n_documents: int) -> list[int]:
        """The vocabulary of a corpus's word types and their counts (``min_count``, then the ``max_vocab_size``
        most frequent, ties alphabetical): sets the fitted attributes and returns the kept types' positions in
        row order."""
        if n_documents == 0:
            raise ValueError("the corpus is empty: it holds no documents")
        if n_tokens == 0:
            raise ValueError(f"the corpus is empty: its {n_documents} documents hold no tokens")
        kept = np.flatnonzero(counts >= self.min_count)
        if kept.size == 0:
            top = int(np.argmax(counts))
            raise ValueError(f"no word occurs min_count={self.min_count} times or more: the most frequent, "
                             f"{words[top]!r}, occurs {counts[top]} times in {n_tokens} tokens")
        ranked = sorted(kept.tolist(), key=lambda i: (-counts[i], words[i]))
        kept = ranked[:self.max_vocab_size]
        if len(kept) < 2:
            # One word cannot be fitted (n_components must be below the number of words); refused here,
            # where the message can speak of the corpus rather than of a 1 x 1 matrix.
            only = f"({words[kept[0]]!r}, {counts[kept[0]]:,} times in {n_tokens:,} tokens): GloVe needs at least two"
            if len(ranked) > 1:
                raise ValueError(f"max_vocab_size={self.max_vocab_size} keeps only 1 word {only}; "
                                 "raise max_vocab_size")
            if len(words) == 1:
                raise ValueError(f"the corpus holds only 1 distinct word {only}; give a larger corpus")
            raise ValueError(f"only 1 distinct word occurs min_count={self.min_count} times or more {only}; "
                             "give a larger corpus or a lower min_count")
        self.vocabulary_ = {words[i]: rank for rank, i in enumerate(kept)}
        self.word_counts_ = counts[kept]
        self.n_documents_ = n_documents
        self.n_tokens_ = n_tokens
        logger.info("vocabulary: %d of %d word types kept (min_count=%d, max_vocab_size=%s) from %d tokens "
                    "in %d documents", len(kept), len(words), self.min_count, self.max_vocab_size,
                    n_tokens, n_documents)
        return kept

    def _vocabulary_on_dask(self, client, corpus: LineCorpus, selected: np.ndarray | None) -> None:
        summed = vocabulary_on_dask(client, corpus, lowercase=self.lowercase, tokenizer=self.tokenizer,
                                    chunk_bytes=self.chunk_size, selected=selected)
        words = list(summed.counts)
        self._keep_vocabulary(words, np.fromiter(summed.counts.values(), np.int64, len(words)), summed.n_tokens,
                              summed.n_documents)

    def _matrix_on_dask(self, client, corpus: LineCorpus, selected: np.ndarray | None) -> CooccurrenceMatrix:
        words = list(self.vocabulary_)
        logger.info("counting co-occurrences of %d words on %d Dask workers", len(words),
                    len(client.scheduler_info().get("workers", {})))
        counted = matrix_on_dask(client, corpus, words, window=self.window, lowercase=self.lowercase,
                                 tokenizer=self.tokenizer, chunk_bytes=self.chunk_size, selected=selected)
        return CooccurrenceMatrix(counted, words=words, counts=self.word_counts_)

    def _matrix(self, symmetric: sp.csr_matrix, counter: ContextCounter) -> CooccurrenceMatrix:
        if counter.n_runs_written:
            logger.info("max_memory=%s: %d sorted runs of partial counts written to disk and merged",
                        self.max_memory, counter.n_runs_written)
        return CooccurrenceMatrix(symmetric, words=list(self.vocabulary_), counts=self.word_counts_)

    def _progress_bar(self, description: str, total: int | None = None) -> tqdm:
        return tqdm(desc=description, total=total, unit="tok", unit_scale=True, disable=not self.progress,
                    leave=False)


def _group_keys(table: TokenTable, chunk: TextChunk, codes: np.ndarray,
                n_groups: int) -> tuple[np.ndarray, np.ndarray, int]:
    """A chunk's distinct ``word * n_groups + group`` keys and their counts, given its documents' group ``codes``,
    and its number of tokens."""
    ids, doc_ends = looked_up_ids(table, chunk)
    documents = np.repeat(np.arange(doc_ends.size), np.diff(doc_ends, prepend=0))
    known = ids >= 0
    unique, unique_counts = np.unique(ids[known].astype(np.int64) * n_groups + codes[documents[known]],
                                      return_counts=True)
    return unique, unique_counts, ids.size


# A chunk being counted takes about this many times its bytes of text (with the default window).
_CHUNK_MEMORY_FACTOR = 25


def _vocabulary_bytes(vocabulary: dict[str, int], *arrays: np.ndarray) -> int:
    """The memory of a vocabulary (the dict, its words and their ids) and of ``arrays``."""
    objects = sum(map(sys.getsizeof, vocabulary)) + sum(map(sys.getsizeof, vocabulary.values()))
    return sys.getsizeof(vocabulary) + objects + sum(array.nbytes for array in arrays)


def _line_corpus(raw_documents: Iterable) -> tuple[LineCorpus, np.ndarray | None]:
    """The corpus of ``backend="dask"``, which the workers read themselves: a LineCorpus (a file or a folder), or a
    DocumentSubset of one (the corpus, and the mask of its documents)."""
    if isinstance(raw_documents, DocumentSubset):
        return raw_documents.corpus, raw_documents.keep
    if not isinstance(raw_documents, LineCorpus):
        raise TypeError(f"backend='dask' counts a corpus the workers read themselves: give a LineCorpus (a file, or a "
                        f"folder of files, where the workers see it), got a {type(raw_documents).__name__}")
    return raw_documents, None


def _final_ids(provisional_to_final: np.ndarray, ids: np.ndarray, doc_ends: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    return provisional_to_final[ids], doc_ends
