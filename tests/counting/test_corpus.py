"""The embedded default corpus and the LineCorpus reader."""

from __future__ import annotations

import bz2
import csv
import gzip
import hashlib
import lzma

import pytest

import glovev_ext
from glovev_ext import LineCorpus


def test_embedded_corpus_is_small_and_matches_its_manifest_book_by_book():
    path = glovev_ext.default_corpus_path()
    assert path.stat().st_size <= 5 * 1024 * 1024
    with gzip.open(path, "rt", encoding="utf-8") as stream:
        lines = stream.read().split("\n")[:-1]
    with open(glovev_ext.default_corpus_manifest_path(), encoding="utf-8") as stream:
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
