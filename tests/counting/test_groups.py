"""Document groups: read from labels, from files of labels and from tables of line ranges, checked, and split."""

from __future__ import annotations

import numpy as np
import pytest

import glovev_ext
from glovev_ext.counting import DocumentGroups, default_corpus_groups, groups_by_file, read_groups
from glovev_ext.counting.groups import MIN_GROUPS


def test_labels_become_codes_in_the_order_first_met():
    groups = DocumentGroups.from_labels(["b", "a", "b", 3, "a"], unit="books")
    assert groups.codes.tolist() == [0, 1, 0, 2, 1]
    assert groups.names == ("b", "a", 3)
    assert (groups.n_documents, groups.n_groups, groups.describe()) == (5, 3, "3 books")
    assert DocumentGroups.from_labels(groups) is groups


@pytest.mark.parametrize("missing", [None, float("nan")])
def test_a_document_without_a_label_is_named(missing):
    with pytest.raises(ValueError, match=r"document 3 has no group"):
        DocumentGroups.from_labels(["a", "b", missing, "a"])


def test_halves_split_whole_groups_half_of_them_each_side():
    labels = np.repeat(np.arange(15), np.arange(1, 16))  # group g has g + 1 documents
    groups = DocumentGroups.from_labels(labels)
    seen = set()
    for seed in range(40):
        first = groups.halves(np.random.default_rng(seed))
        assert first.shape == (labels.size,)
        in_first = {int(g) for g in labels[first]}
        assert in_first.isdisjoint({int(g) for g in labels[~first]})  # no group on both sides
        assert len(in_first) == 7
        seen.add(frozenset(in_first))
    assert len(seen) == 40  # drawn at random, and by the generator given
    again = groups.halves(np.random.default_rng(3))
    assert np.array_equal(again, groups.halves(np.random.default_rng(3)))


def test_check_names_a_count_that_differs_and_too_few_groups():
    groups = DocumentGroups.from_labels(np.arange(30) % 12, unit="authors")
    groups.check(30)
    with pytest.raises(ValueError, match="groups label 30 documents, but the corpus has 31"):
        groups.check(31)
    few = DocumentGroups.from_labels(np.arange(30) % (MIN_GROUPS - 1), unit="authors")
    with pytest.raises(ValueError, match=f"{MIN_GROUPS - 1} authors cannot calibrate the error bars at that unit"):
        few.check(30)


def test_a_file_of_labels_and_a_table_of_line_ranges(tmp_path):
    labels = tmp_path / "labels.txt"
    labels.write_text("x\ny\nx\n\n", encoding="utf-8")
    groups = read_groups(labels)
    assert groups.codes.tolist() == [0, 1, 0, 2] and groups.names == ("x", "y", "") and groups.unit == "groups"
    with pytest.raises(ValueError, match="holds one label per line"):
        read_groups(labels, column="author")
    table = tmp_path / "manifest.tsv"
    # rows out of order: the ranges, not the rows, give the lines' order
    table.write_text("doc\tfirst_line\tn_lines\tauthor\n2\t3\t2\tTwain\n1\t1\t2\tAlcott\n3\t5\t1\tTwain\n",
                     encoding="utf-8")
    by_doc = read_groups(table)
    assert [by_doc.names[c] for c in by_doc.codes] == ["1", "1", "2", "2", "3"] and by_doc.unit == "docs"
    by_author = read_groups(table, column="author", unit="authors")
    assert [by_author.names[c] for c in by_author.codes] == ["Alcott"] * 2 + ["Twain"] * 3
    assert by_author.unit == "authors"
    with pytest.raises(ValueError, match="no column 'year' to group by; its columns are doc, first_line"):
        read_groups(table, column="year")


@pytest.mark.parametrize("rows, message", [
    ("a\t1\t2\nb\t2\t2\n", "line 3: the range starting at line 2 overlaps the range before it"),
    ("a\t1\t2\nb\t5\t2\n", "line 3: the range starting at line 5 leaves lines 3-4 in no group"),
    ("a\t2\t2\n", "line 2: the range starting at line 2 leaves lines 1-1 in no group"),
    ("a\tone\t2\n", "line 2: first_line and n_lines must be whole numbers"),
    ("a\t1\t0\n", "line 2: first_line must be 1 or more and n_lines positive"),
    ("", "a header but no rows"),
])
def test_a_table_that_does_not_cover_the_lines_once_is_refused(tmp_path, rows, message):
    table = tmp_path / "groups.tsv"
    table.write_text("book\tfirst_line\tn_lines\n" + rows, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_groups(table)


def test_the_embedded_corpus_is_grouped_by_the_books_of_its_manifest():
    groups = default_corpus_groups()
    corpus = glovev_ext.load_default_corpus()
    assert groups.n_documents == sum(1 for _ in corpus)
    assert (groups.n_groups, groups.unit) == (38, "books")
    # each book's lines are its manifest's range: the first line of book 2 follows book 1's last
    assert groups.codes[0] == 0 and groups.codes[1185] == 0 and groups.codes[1186] == 1
    assert np.all(np.diff(groups.codes) >= 0)
    head = default_corpus_groups(max_documents=1200)
    assert (head.n_documents, head.n_groups) == (1200, 2)


def test_a_folder_corpus_is_grouped_by_its_files(tmp_path):
    (tmp_path / "b.txt").write_text("one two\nthree four\nfive\n", encoding="utf-8")
    (tmp_path / "a.txt").write_text("six seven\n", encoding="utf-8")
    corpus = glovev_ext.LineCorpus(tmp_path)
    groups = groups_by_file(corpus)
    assert [groups.names[c] for c in groups.codes] == ["a.txt", "b.txt", "b.txt", "b.txt"]
    assert list(corpus) == ["six seven", "one two", "three four", "five"]
    assert groups.unit == "files"
    assert groups_by_file(glovev_ext.LineCorpus(tmp_path, max_documents=2)).n_documents == 2


def test_a_file_that_is_not_utf8_text_is_named(tmp_path):
    path = tmp_path / "groups.txt"
    path.write_bytes(b"a\n\xff\xfeb\n")
    with pytest.raises(ValueError, match=r"groups.txt: not UTF-8 text \(byte 0xff at 2\)"):
        read_groups(path)
