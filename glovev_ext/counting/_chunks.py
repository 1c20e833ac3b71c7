"""Documents -> chunks of UTF-8 bytes, and the hash table that maps their tokens to word ids.

The calling thread only lowercases and encodes; splitting, hashing and counting happen in numba
kernels that release the GIL, so worker threads do the heavy work in parallel.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate

import numpy as np

from ._token_kernel import TEXT, TOKEN, index_tokens, lookup_tokens, token_spans

_ENCODING = "utf-8"
_ERRORS = "surrogatepass"  # any Python str round-trips, lone surrogates included


@dataclass
class TextChunk:
    """A run of whole documents as bytes cut into segments (see ``_token_kernel``)."""

    buffer: np.ndarray
    segment_ends: np.ndarray
    segment_kinds: np.ndarray
    doc_segment_ends: np.ndarray

    def spans(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Token byte spans and per-document token ends."""
        return token_spans(self.buffer, self.segment_ends, self.segment_kinds, self.doc_segment_ends)


def encode_chunks(raw_documents: Iterable, *, lowercase: bool,
                  tokenizer: Callable[[str], Sequence[str]] | None, chunk_bytes: int) -> Iterator[TextChunk]:
    """Chunks of about ``chunk_bytes`` bytes of whole documents, refusing what is not text.

    A string document is lowercased (if asked) and then either kept whole for the whitespace
    split of the kernel, or passed to ``tokenizer``. A non-string document is an iterable of
    string tokens, each kept verbatim (lowercased if asked).
    """
    if isinstance(raw_documents, (str, bytes)):
        raise TypeError("raw_documents must be an iterable of documents, got a single "
                        f"{type(raw_documents).__name__}; wrap it in a list")
    builder = _ChunkBuilder()
    for position, document in enumerate(raw_documents):
        if isinstance(document, str):
            text = document.lower() if lowercase else document
            if tokenizer is None:
                builder.add_text(text.encode(_ENCODING, _ERRORS))
            else:
                tokens = tokenizer(text)
                if isinstance(tokens, str) or not isinstance(tokens, Iterable):
                    raise TypeError(f"tokenizer returned a {type(tokens).__name__} for document {position}; "
                                    "it must return a list of string tokens")
                builder.add_tokens(_encoded_tokens(tokens, lowercase=False, position=position))
        elif isinstance(document, (bytes, bytearray)) or not isinstance(document, Iterable):
            raise TypeError(f"document {position} is a {type(document).__name__}, not text: documents "
                            "must be strings or iterables of string tokens (decode bytes first)")
        else:
            builder.add_tokens(_encoded_tokens(document, lowercase=lowercase, position=position))
        if builder.n_bytes >= chunk_bytes:
            yield builder.take()
    if builder.n_documents:
        yield builder.take()


def _encoded_tokens(tokens: Iterable, *, lowercase: bool, position: int) -> list[bytes]:
    tokens = tokens if isinstance(tokens, (list, tuple)) else list(tokens)
    try:
        return [(t.lower() if lowercase else t).encode(_ENCODING, _ERRORS) for t in tokens]
    except AttributeError:
        bad = next(t for t in tokens if not isinstance(t, str))
        raise TypeError(f"document {position} holds a token of type {type(bad).__name__}: "
                        "tokens must be strings") from None


class _ChunkBuilder:
    """Accumulates documents' segments until a chunk is taken."""

    def __init__(self):
        self._reset()

    def _reset(self) -> None:
        self._parts: list[bytes] = []
        self._segment_ends = array("q")
        self._segment_kinds = bytearray()
        self._doc_segment_ends = array("q")
        self.n_bytes = 0

    @property
    def n_documents(self) -> int:
        return len(self._doc_segment_ends)

    def add_text(self, data: bytes) -> None:
        """One document to be split on whitespace."""
        self._parts.append(data)
        self.n_bytes += len(data)
        self._segment_ends.append(self.n_bytes)
        self._segment_kinds.append(TEXT)
        self._doc_segment_ends.append(len(self._segment_ends))

    def add_tokens(self, tokens: list[bytes]) -> None:
        """One document given as its tokens."""
        self._parts.extend(tokens)
        ends = list(accumulate(map(len, tokens), initial=self.n_bytes))
        self._segment_ends.extend(ends[1:])
        self.n_bytes = ends[-1]
        self._segment_kinds.extend(bytes([TOKEN]) * len(tokens))
        self._doc_segment_ends.append(len(self._segment_ends))

    def take(self) -> TextChunk:
        """The chunk built so far; the builder starts afresh."""
        chunk = TextChunk(buffer=np.frombuffer(b"".join(self._parts), dtype=np.uint8),
                          segment_ends=np.frombuffer(self._segment_ends, dtype=np.int64),
                          segment_kinds=np.frombuffer(bytes(self._segment_kinds), dtype=np.int8),
                          doc_segment_ends=np.frombuffer(self._doc_segment_ends, dtype=np.int64))
        self._reset()
        return chunk


class TokenTable:
    """Token bytes -> id, in an open-addressing hash table that numba kernels read and extend."""

    def __init__(self, capacity: int = 1 << 16):
        self._table = np.full(capacity, -1, np.int32)
        self._key_hashes = np.zeros(capacity, np.uint64)
        self._key_offsets = np.zeros(capacity + 1, np.int64)
        self._key_bytes = np.zeros(16 * capacity, np.uint8)
        self._counts = np.zeros(capacity, np.int64)
        self._n_keys = 0

    @classmethod
    def from_words(cls, words: Sequence[str]) -> TokenTable:
        """A table whose ids are the positions of ``words``."""
        capacity = 1 << max(4, (2 * len(words)).bit_length())
        table = cls(capacity)
        chunk = next(encode_chunks([list(words)], lowercase=False, tokenizer=None, chunk_bytes=1 << 62))
        table.index(chunk.buffer, *chunk.spans()[:2])
        if len(table) != len(words):
            raise ValueError("the vocabulary holds duplicate words")
        return table

    def __len__(self) -> int:
        return self._n_keys

    @property
    def nbytes(self) -> int:
        """The table's memory: its hash slots, keys and counts."""
        return sum(array.nbytes for array in (self._table, self._key_hashes, self._key_offsets, self._key_bytes,
                                              self._counts))

    def index(self, buffer: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Ids of the token spans, adding unseen tokens and counting every occurrence."""
        ids, *state = index_tokens(buffer, starts, ends, self._table, self._key_hashes, self._key_offsets,
                                   self._key_bytes, self._counts, self._n_keys)
        (self._table, self._key_hashes, self._key_offsets, self._key_bytes, self._counts, self._n_keys) = state
        return ids

    def lookup(self, buffer: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Ids of the token spans; -1 for tokens not in the table."""
        return lookup_tokens(buffer, starts, ends, self._table, self._key_hashes, self._key_offsets, self._key_bytes)

    def words(self) -> list[str]:
        """The tokens in id order."""
        data = self._key_bytes.tobytes()
        offsets = self._key_offsets[:self._n_keys + 1].tolist()
        return [data[offsets[i]:offsets[i + 1]].decode(_ENCODING, _ERRORS) for i in range(self._n_keys)]

    def counts(self) -> np.ndarray:
        """Occurrences of each token counted by :meth:`index`, in id order."""
        return self._counts[:self._n_keys].copy()


def looked_up_ids(table: TokenTable, chunk: TextChunk) -> tuple[np.ndarray, np.ndarray]:
    """A chunk's word ids in ``table`` (-1 for tokens not in it) and its documents' token ends."""
    starts, ends, doc_ends = chunk.spans()
    return table.lookup(chunk.buffer, starts, ends), doc_ends
