"""Groups of documents: the unit a user samples (books, authors, outlets, periods), one label per document.

GloVe-V's noise model describes how a word's contexts vary within the text it was fitted on. Users
compare sets of documents (two decades, two outlets), whose words' contexts also vary between the
groups the documents come in: a word a few books use heavily moves with those books. The noise
calibration (docs/method.md 6.13, 6.16) measures the variation at the unit it splits: split whole
groups and the intervals describe resampling groups. A :class:`DocumentGroups` holds that unit, as
scikit-learn's ``groups`` does for :class:`~sklearn.model_selection.GroupKFold`; without one, each
document is its own group.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .corpus import default_corpus_manifest_path

MIN_GROUPS = 10
"""Fewest groups a corpus can be calibrated on: each random half holds half of them, and with fewer than
five a side the halves' difference says little about how the groups vary."""


@dataclass(frozen=True, eq=False)
class DocumentGroups:
    """Which group each document of a corpus belongs to, and what a group is.

    Build one with :meth:`from_labels`, :func:`~glovev_ext.read_groups`,
    :func:`~glovev_ext.counting.groups_by_file` or :func:`~glovev_ext.default_corpus_groups`.

    Parameters
    ----------
    codes : ndarray of int, shape (n_documents,)
        The group of each document, an index into ``names``.
    names : tuple
        Each group's label, in the order first met.
    unit : str, default="groups"
        What a group is, in the plural ("books", "authors", "files"), for reports.

    See Also
    --------
    glovev_ext.fit_corpus : Its ``groups`` set the unit of the noise calibration.
    glovev_ext.split_half.split_half_check : Its ``groups`` check the intervals at that unit.

    Examples
    --------
    >>> from glovev_ext import DocumentGroups
    >>> groups = DocumentGroups.from_labels(["Twain", "Twain", "Alcott"], unit="authors")
    >>> groups.describe()
    '2 authors'
    >>> groups.codes
    array([0, 0, 1])
    """

    codes: np.ndarray
    names: tuple
    unit: str = "groups"

    @classmethod
    def from_labels(cls, labels: Iterable, unit: str = "groups") -> DocumentGroups:
        """Groups from one label per document (any hashable labels: strings, numbers).

        Parameters
        ----------
        labels : iterable
            One label per document, in the corpus's order; documents with equal labels form a group.
        unit : str, default="groups"
            What a group is, in the plural.

        Returns
        -------
        DocumentGroups

        Raises
        ------
        ValueError
            If a label is missing (None or NaN).
        """
        if isinstance(labels, DocumentGroups):
            return labels
        labels = list(labels)
        codes, names = pd.factorize(pd.Series(labels, dtype=object), use_na_sentinel=True)
        if (codes < 0).any():
            first = int(np.flatnonzero(codes < 0)[0])
            raise ValueError(f"groups: document {first + 1:,} has no group (its label is {labels[first]!r}); give "
                             "every document a label")
        return cls(codes.astype(np.int64), tuple(names.tolist()), str(unit))

    @property
    def n_documents(self) -> int:
        """Documents labelled."""
        return int(self.codes.size)

    @property
    def n_groups(self) -> int:
        """Distinct groups among the documents labelled."""
        return len(self.names)

    def describe(self) -> str:
        """The number of groups and their unit, as reports give it.

        Returns
        -------
        str
            E.g. ``"38 books"``.
        """
        return f"{self.n_groups:,} {self.unit}"

    def check(self, n_documents: int) -> None:
        """Raise unless these groups label exactly ``n_documents`` documents and are enough to calibrate.

        Parameters
        ----------
        n_documents : int
            Documents in the corpus.

        Raises
        ------
        ValueError
            If the number of labels is not ``n_documents``, or there are fewer than ``MIN_GROUPS`` (10) groups.
        """
        if self.n_documents != n_documents:
            raise ValueError(f"groups label {self.n_documents:,} documents, but the corpus has {n_documents:,}: give "
                             "one label per document, in the corpus's order")
        if self.n_groups < MIN_GROUPS:
            raise ValueError(f"{self.n_groups} {self.unit} cannot calibrate the error bars at that unit: two random "
                             f"halves of them need at least {MIN_GROUPS} groups to say how the groups vary; give "
                             "finer groups, or none (each document its own group), or keep GloVe-V's own noise "
                             "model (calibrate_noise=False, glovev fit --no-noise-calibration)")

    def halves(self, generator: np.random.Generator) -> np.ndarray:
        """A random half of the groups, as a mask over the documents: ``n_groups // 2`` groups drawn without
        replacement (one permutation of the groups from ``generator``) are the first half.

        Parameters
        ----------
        generator : numpy.random.Generator
            Draws the permutation.

        Returns
        -------
        ndarray of bool, shape (n_documents,)
            True for the documents of the first half.
        """
        first = generator.permutation(self.n_groups)[: self.n_groups // 2]
        in_first = np.zeros(self.n_groups, dtype=bool)
        in_first[first] = True
        return in_first[self.codes]

    def head(self, n_documents: int | None) -> DocumentGroups:
        """The groups of the first documents, as a corpus read with ``max_documents`` has them.

        Parameters
        ----------
        n_documents : int or None
            How many documents (all of them when None).

        Returns
        -------
        DocumentGroups
            Only the groups those documents are in.
        """
        if n_documents is None or n_documents >= self.n_documents:
            return self
        return DocumentGroups.from_labels([self.names[c] for c in self.codes[:n_documents]], self.unit)

    def __repr__(self) -> str:
        return f"DocumentGroups({self.n_documents:,} documents in {self.describe()})"


def read_groups(path: str | Path, *, column: str | None = None, unit: str | None = None) -> DocumentGroups:
    """Read document groups from a file: one label per line, or a table of line ranges.

    A file whose first line is a tab-separated header with the columns ``first_line`` and
    ``n_lines`` is a table (as the manifests of the embedded and shared corpora): each row
    labels the lines ``first_line`` to ``first_line + n_lines - 1`` (numbered from 1) with its
    ``column``. Any other file holds one label per line, the group of the corpus's document on
    the same line.

    Parameters
    ----------
    path : str or Path
        The file.
    column : str, optional
        The table's column that names the groups (default: its first column). Not for a file of
        labels.
    unit : str, optional
        What a group is, in the plural (default: ``column`` + "s" for a table, e.g. "books" for a
        ``book`` column, else "groups").

    Returns
    -------
    DocumentGroups
        One label per line of the corpus the file describes.

    Raises
    ------
    ValueError
        If a table lacks ``column``, its ranges overlap, leave a line out or are not numbers; if
        ``column`` is given for a file of labels; if the file is empty.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text (byte {error.object[error.start]:#04x} at {error.start:,}): group "
                         "labels are UTF-8 text, one per line or a tab-separated table") from None
    header = text.split("\n", 1)[0].split("\t")
    if {"first_line", "n_lines"} <= set(header):
        return _read_table(path, text, header, column, unit)
    if column is not None:
        raise ValueError(f"{path}: a group column ({column!r}) names a column of a table of line ranges (a header "
                         "with first_line and n_lines), but this file holds one label per line")
    labels = text.split("\n")  # lines as a LineCorpus reads them (universal newlines), the last one ended
    if labels[-1] == "":
        labels.pop()
    if not labels:
        raise ValueError(f"{path}: no group labels (one per document line)")
    return DocumentGroups.from_labels(labels, unit or "groups")


def _read_table(path: Path, text: str, header: list[str], column: str | None, unit: str | None) -> DocumentGroups:
    """The groups of a tab-separated table of line ranges (``first_line``, ``n_lines``, a label column), ``text``
    the file's contents."""
    column = header[0] if column is None else column
    if column not in header:
        raise ValueError(f"{path}: no column {column!r} to group by; its columns are {', '.join(header)}")
    rows = list(csv.DictReader(io.StringIO(text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows:
        raise ValueError(f"{path}: a header but no rows")
    ranges = []
    for number, row in enumerate(rows, 2):
        try:
            first, count = int(row["first_line"]), int(row["n_lines"])
        except (TypeError, ValueError):
            raise ValueError(f"{path}, line {number}: first_line and n_lines must be whole numbers, got "
                             f"{row['first_line']!r} and {row['n_lines']!r}") from None
        if first < 1 or count < 1:
            raise ValueError(f"{path}, line {number}: first_line must be 1 or more and n_lines positive")
        ranges.append((first, count, row[column], number))
    ranges.sort()
    labels: list = []
    for first, count, label, number in ranges:
        if first != len(labels) + 1:
            problem = "overlaps the range before it" if first <= len(labels) else (
                f"leaves lines {len(labels) + 1:,}-{first - 1:,} in no group")
            raise ValueError(f"{path}, line {number}: the range starting at line {first:,} {problem}")
        labels += [label] * count
    return DocumentGroups.from_labels(labels, unit or f"{column}s")


def groups_by_file(corpus) -> DocumentGroups:
    """One group per file of a :class:`~glovev_ext.LineCorpus` (a folder's files; a single file is one group).

    Reads the corpus once to count each file's documents.

    Parameters
    ----------
    corpus : LineCorpus
        A folder of files, or one file.

    Returns
    -------
    DocumentGroups
        Labelled by file name, unit "files".
    """
    return DocumentGroups.from_labels((path.name for path, _ in corpus.documents_with_files()), "files")


def default_corpus_groups(max_documents: int | None = None) -> DocumentGroups:
    """The books of the embedded corpus (its manifest), one label per paragraph.

    Parameters
    ----------
    max_documents : int or None, default=None
        As :func:`~glovev_ext.load_default_corpus`: the groups of its first this many paragraphs.

    Returns
    -------
    DocumentGroups
        Labelled by book number, unit "books".
    """
    return read_groups(default_corpus_manifest_path(), column="book").head(max_documents)
