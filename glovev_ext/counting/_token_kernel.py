"""Numba kernels that turn UTF-8 text into word ids without the GIL.

A chunk of documents arrives as one byte buffer cut into segments: a segment of kind
``TEXT`` is a whole document split on whitespace exactly as ``str.split()`` does; a segment of
kind ``TOKEN`` is one token taken verbatim (pre-tokenised documents). Tokens are looked up in an
open-addressing hash table keyed by their bytes, which either grows (the provisional index of
``fit``) or is fixed (the fitted vocabulary of ``transform``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._kernel_arrays import grown

TEXT = 0
TOKEN = 1

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@njit(nogil=True, cache=True, inline="always")
def whitespace_length(buf, p, end):
    """Byte length of the character at ``buf[p]`` if ``str.isspace()`` holds for it, else 0.

    The set is every code point Python's ``str.split()`` splits on: ASCII 9-13 and 28-32,
    U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F and U+3000.
    """
    c = buf[p]
    if c < 0x80:
        return 1 if (9 <= c <= 13 or 28 <= c <= 32) else 0
    if c < 0xC2:
        return 0
    if c == 0xC2 and p + 1 < end:
        return 2 if buf[p + 1] == 0x85 or buf[p + 1] == 0xA0 else 0
    if p + 2 >= end:
        return 0
    c1 = buf[p + 1]
    c2 = buf[p + 2]
    if c == 0xE1:
        return 3 if c1 == 0x9A and c2 == 0x80 else 0
    if c == 0xE2:
        if c1 == 0x80 and (c2 <= 0x8A or c2 == 0xA8 or c2 == 0xA9 or c2 == 0xAF):
            return 3
        return 3 if c1 == 0x81 and c2 == 0x9F else 0
    if c == 0xE3:
        return 3 if c1 == 0x80 and c2 == 0x80 else 0
    return 0


@njit(nogil=True, cache=True)
def token_spans(buf, segment_ends, segment_kinds, doc_segment_ends):
    """Byte spans of every token of a chunk, and each document's end in the token list.

    Parameters
    ----------
    buf : ndarray of uint8
        Concatenated segments.
    segment_ends : ndarray of int64
        Exclusive byte end of each segment.
    segment_kinds : ndarray of int8
        ``TEXT`` or ``TOKEN`` for each segment.
    doc_segment_ends : ndarray of int64
        Exclusive end of each document in the segment list.

    Returns
    -------
    starts, ends : ndarray of int64
        Byte span of each token.
    doc_ends : ndarray of int64
        Exclusive end of each document in the token list.
    """
    # A text segment of L bytes holds at most (L + 1) // 2 tokens, a token segment exactly one.
    capacity = buf.size // 2 + 2 * segment_ends.size + 16
    starts = np.empty(capacity, np.int64)
    ends = np.empty(capacity, np.int64)
    doc_ends = np.empty(doc_segment_ends.size, np.int64)
    n_tokens = 0
    segment = 0
    segment_start = 0
    for d in range(doc_segment_ends.size):
        while segment < doc_segment_ends[d]:
            stop = segment_ends[segment]
            if segment_kinds[segment] == TOKEN:
                starts[n_tokens] = segment_start
                ends[n_tokens] = stop
                n_tokens += 1
            else:
                n_tokens = _split_on_whitespace(buf, segment_start, stop, starts, ends, n_tokens)
            segment_start = stop
            segment += 1
        doc_ends[d] = n_tokens
    return starts[:n_tokens], ends[:n_tokens], doc_ends


@njit(nogil=True, cache=True, inline="always")
def _split_on_whitespace(buf, start, stop, starts, ends, n_tokens):
    """Append the spans of the tokens of ``buf[start:stop]`` as ``str.split()`` cuts them."""
    in_token = False
    p = start
    while p < stop:
        c = buf[p]
        if c <= 32:
            skip = 1 if (c == 32 or 9 <= c <= 13 or c >= 28) else 0
        elif 0xC2 <= c <= 0xE3:
            skip = whitespace_length(buf, p, stop)
        else:
            skip = 0
        if skip:
            if in_token:
                ends[n_tokens] = p
                n_tokens += 1
                in_token = False
            p += skip
        else:
            if not in_token:
                starts[n_tokens] = p
                in_token = True
            p += 1
    if in_token:
        ends[n_tokens] = stop
        n_tokens += 1
    return n_tokens


@njit(nogil=True, cache=True, inline="always")
def _hash(buf, start, end):
    h = _FNV_OFFSET
    for p in range(start, end):
        h = (h ^ np.uint64(buf[p])) * _FNV_PRIME
    return h


@njit(nogil=True, cache=True, inline="always")
def _same_bytes(buf, start, end, key_bytes, key_start, key_end):
    if end - start != key_end - key_start:
        return False
    for k in range(end - start):
        if buf[start + k] != key_bytes[key_start + k]:
            return False
    return True


@njit(nogil=True, cache=True, inline="always")
def _probe(buf, start, end, h, table, key_hashes, key_offsets, key_bytes):
    """(slot, key id) of a token span: the key's slot, or the empty slot where it belongs and -1."""
    mask = table.size - 1
    slot = np.int64(h & np.uint64(mask))
    while table[slot] >= 0:
        k = table[slot]
        if key_hashes[k] == h and _same_bytes(buf, start, end, key_bytes, key_offsets[k], key_offsets[k + 1]):
            return slot, k
        slot = (slot + 1) & mask
    return slot, -1


@njit(nogil=True, cache=True)
def lookup_tokens(buf, starts, ends, table, key_hashes, key_offsets, key_bytes):
    """Id of each token span in a fixed table; -1 for tokens not in it."""
    ids = np.empty(starts.size, np.int32)
    for t in range(starts.size):
        h = _hash(buf, starts[t], ends[t])
        ids[t] = _probe(buf, starts[t], ends[t], h, table, key_hashes, key_offsets, key_bytes)[1]
    return ids


@njit(nogil=True, cache=True)
def index_tokens(buf, starts, ends, table, key_hashes, key_offsets, key_bytes, counts, n_keys):
    """Ids of token spans in a growing table: unseen tokens get the next id; counts are updated.

    Returns the ids and the table's arrays (new arrays when they had to grow) with ``n_keys``.
    """
    ids = np.empty(starts.size, np.int32)
    for t in range(starts.size):
        h = _hash(buf, starts[t], ends[t])
        slot, found = _probe(buf, starts[t], ends[t], h, table, key_hashes, key_offsets, key_bytes)
        if found < 0:
            found = n_keys
            length = ends[t] - starts[t]
            if n_keys + 1 >= key_hashes.size:
                key_hashes = grown(key_hashes, 2 * key_hashes.size)
                key_offsets = grown(key_offsets, 2 * key_offsets.size)
                counts = grown(counts, 2 * counts.size)
            used = key_offsets[n_keys]
            if used + length > key_bytes.size:
                key_bytes = grown(key_bytes, max(2 * key_bytes.size, used + length))
            for k in range(length):
                key_bytes[used + k] = buf[starts[t] + k]
            key_offsets[n_keys + 1] = used + length
            key_hashes[n_keys] = h
            counts[n_keys] = 0
            table[slot] = n_keys
            n_keys += 1
            if 2 * n_keys > table.size:
                table = _rehashed(key_hashes, n_keys, 2 * table.size)
        counts[found] += 1
        ids[t] = found
    return ids, table, key_hashes, key_offsets, key_bytes, counts, n_keys


@njit(nogil=True, cache=True)
def _rehashed(key_hashes, n_keys, size):
    table = np.full(size, -1, np.int32)
    mask = size - 1
    for k in range(n_keys):
        slot = np.int64(key_hashes[k] & np.uint64(mask))
        while table[slot] >= 0:
            slot = (slot + 1) & mask
        table[slot] = k
    return table
