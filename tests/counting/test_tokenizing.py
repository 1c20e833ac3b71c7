"""The numba tokeniser splits exactly as str.split() does; the token table maps bytes to ids."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glovev_ext.counting._chunks import TokenTable, encode_chunks
from glovev_ext.counting._token_kernel import whitespace_length


def split_like_kernel(documents):
    chunk = next(encode_chunks(documents, lowercase=False, tokenizer=None, chunk_bytes=1 << 40))
    starts, ends, doc_ends = chunk.spans()
    data = chunk.buffer.tobytes()
    tokens = [data[a:b].decode("utf-8", "surrogatepass") for a, b in zip(starts, ends)]
    bounds = [0, *doc_ends.tolist()]
    return [tokens[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def test_whitespace_set_is_exactly_python_isspace():
    for code_point in range(0x110000):
        if 0xD800 <= code_point <= 0xDFFF:
            continue
        encoded = np.frombuffer(chr(code_point).encode("utf-8"), dtype=np.uint8)
        expected = len(encoded) if chr(code_point).isspace() else 0
        assert whitespace_length(encoded, 0, encoded.size) == expected, hex(code_point)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab é\t\n\x1c\x85\xa0\u1680\u2003\u2028\u202f\u205f\u3000\u00e9\u4e2d"),
                        max_size=30), min_size=1, max_size=5))
def test_split_matches_str_split(documents):
    assert split_like_kernel(documents) == [d.split() for d in documents]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(), min_size=1, max_size=4))
def test_split_matches_str_split_on_any_text(documents):
    assert split_like_kernel(documents) == [d.split() for d in documents]


def test_token_documents_keep_tokens_verbatim():
    assert split_like_kernel([["new york", "", "é"], "a b"]) == [["new york", "", "é"], ["a", "b"]]


def test_token_table_grows_and_keeps_ids():
    words = [f"w{i}" for i in range(5000)] + ["é", "\ud800"]
    table = TokenTable(capacity=16)
    chunk = next(encode_chunks([words, words[::-1]], lowercase=False, tokenizer=None, chunk_bytes=1 << 40))
    starts, ends, _ = chunk.spans()
    ids = table.index(chunk.buffer, starts, ends)
    assert table.words() == words
    np.testing.assert_array_equal(ids, list(range(len(words))) + list(range(len(words)))[::-1])
    np.testing.assert_array_equal(table.counts(), 2)
    fixed = TokenTable.from_words(words)
    np.testing.assert_array_equal(fixed.lookup(chunk.buffer, starts, ends), ids)
    unknown = next(encode_chunks(["w1 nope w5000"], lowercase=False, tokenizer=None, chunk_bytes=1 << 40))
    assert fixed.lookup(unknown.buffer, *unknown.spans()[:2]).tolist() == [1, -1, -1]


def test_duplicate_vocabulary_is_refused():
    with pytest.raises(ValueError, match="duplicate"):
        TokenTable.from_words(["a", "b", "a"])


def test_chunks_hold_whole_documents():
    chunks = list(encode_chunks(["a b", "c d e", "f"], lowercase=False, tokenizer=None, chunk_bytes=4))
    assert [c.doc_segment_ends.size for c in chunks] == [2, 1]
