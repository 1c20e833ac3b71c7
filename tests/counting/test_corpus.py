"""The embedded default corpus and the LineCorpus reader."""

from __future__ import annotations

import bz2
import csv
import gzip
import hashlib
import lzma
import re

import pytest

import glovev_ext
from glovev_ext import LineCorpus


def test_embedded_corpus_is_small_and_matches_its_manifest_book_by_book():
    path = glovev_ext.counting.corpus.default_corpus_path()
    assert path.stat().st_size <= 5 * 1024 * 1024
    with gzip.open(path, "rt", encoding="utf-8") as stream:
        lines = stream.read().split("\n")[:-1]
    with open(glovev_ext.counting.corpus.default_corpus_manifest_path(), encoding="utf-8") as stream:
        books = list(csv.DictReader(stream, delimiter="\t"))
    assert len(books) == 38
    covered = 0
    for book in books:
        first, n_lines = int(book["first_line"]) - 1, int(book["n_lines"])
        assert first == covered
        text = "\n".join(lines[first:first + n_lines]) + "\n"
        assert hashlib.sha1(text.encode("utf-8")).hexdigest() == book["sha1_of_text"], book["title"]
        assert sum(len(line.split()) for line in lines[first:first + n_lines]) == int(book["n_tokens"])
        assert book["source_path"].endswith(".txt")
        covered += n_lines
    assert covered == len(lines) == 45198


def test_default_corpus_streams_paragraphs():
    corpus = glovev_ext.load_default_corpus(max_documents=3)
    first = list(corpus)
    assert first == list(corpus)  # re-iterable
    assert first[0] == "A GARLAND FOR GIRLS" and len(first) == 3


@pytest.mark.parametrize("suffix, opener", [("", open), (".gz", gzip.open), (".bz2", bz2.open), (".xz", lzma.open)])
def test_line_corpus_reads_compressed_files(tmp_path, suffix, opener):
    path = tmp_path / f"corpus.txt{suffix}"
    with opener(path, "wt", encoding="utf-8") as stream:
        stream.write("one two\nthree\n\nfour five\n")
    assert list(LineCorpus(path)) == ["one two", "three", "", "four five"]
    assert list(LineCorpus(path, max_documents=2)) == ["one two", "three"]


def test_line_corpus_reads_a_folder_in_name_order(tmp_path):
    (tmp_path / "b.txt").write_text("second\n", encoding="utf-8")
    (tmp_path / "a.txt").write_text("first\n", encoding="utf-8")
    (tmp_path / ".hidden").write_text("skipped\n", encoding="utf-8")
    assert list(LineCorpus(tmp_path)) == ["first", "second"]


def test_line_corpus_refuses_missing_sources(tmp_path):
    with pytest.raises(FileNotFoundError, match="corpus not found"):
        LineCorpus(tmp_path / "absent.txt")
    with pytest.raises(FileNotFoundError, match="holds no files"):
        LineCorpus(tmp_path)


BINARY_FILES = [
    ("ls", b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 40, r"a program \(an ELF executable\), not text"),
    ("picture.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(17), "a PNG image, not text"),
    ("nul.txt", b"hello\x00world\n", r"a binary file, not text \(NUL bytes in its first line\)"),
    ("late_nul.txt", b"one two\nthree\nfour\x00five\n", r"a binary file, not text \(NUL bytes in line 3\)"),
    ("garbage.txt", b"\xff\x00\x01\x02" * 100, r"a binary file, not text \(NUL bytes in its first line\)"),
    ("archive.txt.gz", gzip.compress(b"name\x00\x00\x00mode\n"), r"a binary file, not text \(NUL bytes in its first"),
    ("corpus.txt", gzip.compress(b"one two\n"), "the file is gzip-compressed: name it corpus.txt.gz so it is read"),
    ("corpus.bz", bz2.compress(b"one two\n"), "the file is bzip2-compressed: name it corpus.bz.bz2 so it is read"),
    ("corpus.dat", lzma.compress(b"one two\n"), "the file is xz-compressed: name it corpus.dat.xz so it is read"),
    ("windows.txt", "one two\n".encode("utf-16"), "UTF-16 text, not UTF-8: re-encode the file as UTF-8, e.g. iconv -f "
                                                  "utf-16 -t utf-8$"),
]


@pytest.mark.parametrize("name, content, message", BINARY_FILES, ids=[case[0] for case in BINARY_FILES])
def test_what_is_not_text_is_named_for_what_it_is(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError) as error:
        list(LineCorpus(path))
    assert str(error.value).startswith(f"{path}: ")
    assert re.search(message, str(error.value)) and "iconv -f latin1" not in str(error.value)
    if "not text" in message:
        assert str(error.value).endswith(": a corpus is UTF-8 text, one document per line")


def test_only_text_in_another_encoding_is_told_to_re_encode(tmp_path):
    (tmp_path / "latin1.txt").write_bytes("the café is open\n".encode("latin-1"))
    (tmp_path / "binary.txt").write_bytes(b"MZ\x90\x00\x03\x00\x00\x00\x04\x00")
    with pytest.raises(ValueError, match=r"not UTF-8 text in its first line \(byte 0xe9\); re-encode the file as "
                                         "UTF-8, e.g. iconv -f latin1 -t utf-8"):
        list(LineCorpus(tmp_path / "latin1.txt"))
    with pytest.raises(ValueError, match=r"binary.txt: a binary file, not text \(NUL bytes in its first line\)"):
        list(LineCorpus(tmp_path / "binary.txt"))


def test_a_line_longer_than_the_limit_is_refused(tmp_path, monkeypatch):
    import glovev_ext.counting.corpus as corpus_module

    monkeypatch.setattr(corpus_module, "MAX_LINE_CHARACTERS", 10)
    at_the_limit = tmp_path / "fits.txt"
    at_the_limit.write_text("0123456789\nshort\n0123456789", encoding="utf-8")
    assert list(LineCorpus(at_the_limit)) == ["0123456789", "short", "0123456789"]
    for text in ("short\n0123456789a\nnever read\n", "short\n0123456789a"):
        path = tmp_path / "long.txt"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError) as error:
            list(LineCorpus(path))
        assert str(error.value) == (f"{path}: line 2 is longer than 10 characters: a corpus holds one document per "
                                    "line (a paragraph or an article); split the text into lines")
