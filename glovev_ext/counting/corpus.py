"""Corpora as re-iterable streams of documents, and the embedded default corpus."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import zlib
from collections.abc import Iterator
from functools import partial
from importlib import resources
from pathlib import Path

import numpy as np

DEFAULT_CORPUS_NAME = "gutenberg_us_sample.txt.gz"
DEFAULT_CORPUS_MANIFEST = "gutenberg_us_sample_manifest.tsv"

MAX_LINE_CHARACTERS = 1_000_000_000
"""Longest line :class:`LineCorpus` reads, in characters.

A document is held and counted whole, at several bytes of memory per character (2.0 GB for a
289 MB line of 50M tokens), so a longer line is refused before it is read whole instead of
running out of memory. It still admits one-line corpora such as text8 (100 MB) and fil9 (713 MB).
"""

_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
_COMPRESSIONS = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz"}

# Leading bytes of what is given as a corpus by mistake; looked at only once a file fails to read
# as text, so a text file is never refused for how it begins. UTF-32 comes before UTF-16, whose
# little-endian mark begins UTF-32's.
_SIGNATURES = (
    (b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed data"), (b"PK\x03\x04", "a zip archive"),
    (b"%PDF-", "a PDF document"), (b"\x89PNG\r\n\x1a\n", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"), (b"\x7fELF", "a program (an ELF executable)"),
    (b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"),
)
_NOT_A_CORPUS = "a corpus is UTF-8 text, one document per line"


class LineCorpus:
    """A text corpus read lazily, one document per line, every time it is iterated.

    Lines are yielded as strings without their newline, so a vectorizer tokenises them; the
    file is never held in memory.

    Parameters
    ----------
    source : str or Path
        A text file (plain, ``.gz``, ``.bz2`` or ``.xz``; UTF-8) or a folder, whose such files
        are read in sorted name order.
    max_documents : int or None, default=None
        Stop after this many lines (all of them when None).

    Raises
    ------
    FileNotFoundError
        If ``source`` does not exist or a folder holds no readable file.
    ValueError
        If ``source`` is a pipe or a device (it could be read only once); while iterating, for a file that is not UTF-8 text (binary, compressed under a name that
        does not say so, or in another encoding), not the compression its name says, truncated,
        or with a line longer than ``MAX_LINE_CHARACTERS``: the message names the file and
        the line reached.
    """

    def __init__(self, source: str | Path, max_documents: int | None = None):
        self.source = Path(source)
        self.max_documents = max_documents
        if not self.source.exists():
            raise FileNotFoundError(f"corpus not found: {self.source}")
        if not (self.source.is_dir() or self.source.is_file()):
            raise ValueError(f"{self.source} is a pipe or a device, which can be read only once, and a corpus is read "
                             "more than once: save it to a file first ('glovev fit' copies it to a temporary file)")
        if self.source.is_dir() and not self._files():
            raise FileNotFoundError(f"corpus folder {self.source} holds no files")

    def __iter__(self) -> Iterator[str]:
        return (document for _, document in self.documents_with_files())

    def documents_with_files(self) -> Iterator[tuple[Path, str]]:
        """The documents as iterating the corpus yields them, each with the file it is read from.

        Yields
        ------
        (Path, str)
            The file, and one document (a line without its newline).
        """
        remaining = self.max_documents
        limit = MAX_LINE_CHARACTERS
        for path in self._files():
            opener = _OPENERS.get(path.suffix, open)
            line_number = 0
            try:
                with opener(path, "rt", encoding="utf-8") as stream:
                    # One character more than the limit tells a line that is too long from one that fits.
                    for line_number, line in enumerate(iter(partial(stream.readline, limit + 1), ""), 1):
                        if remaining is not None:
                            if remaining == 0:
                                return
                            remaining -= 1
                        if len(line) > limit and line[-1] != "\n":
                            raise ValueError(f"{path}: line {line_number:,} is longer than {limit:,} characters: "
                                             "a corpus holds one document per line (a paragraph or an article); "
                                             "split the text into lines")
                        if "\x00" in line:
                            where = f"in line {line_number:,}" if line_number > 1 else "in its first line"
                            raise ValueError(_not_text(path, where))
                        yield path, line.rstrip("\n")
            except UnicodeDecodeError as error:
                raise ValueError(_not_utf8(path, line_number, error)) from None
            except (OSError, EOFError, lzma.LZMAError, zlib.error) as error:
                raise ValueError(_unreadable(path, line_number, error)) from None

    def __repr__(self) -> str:
        return f"LineCorpus({str(self.source)!r}, max_documents={self.max_documents})"

    def sha256(self) -> str:
        """SHA-256 of the corpus's bytes as stored (its files' in the order read), to tell corpora apart."""
        digest = hashlib.sha256()
        for path in self._files():
            with open(path, "rb") as stream:
                for chunk in iter(lambda: stream.read(1 << 20), b""):
                    digest.update(chunk)
        return digest.hexdigest()

    def _files(self) -> list[Path]:
        if self.source.is_dir():
            return sorted(p for p in self.source.iterdir() if p.is_file() and not p.name.startswith("."))
        return [self.source]


class DocumentSubset:
    """The documents of a :class:`LineCorpus` that a mask keeps, re-iterable (e.g. one random half of a corpus).

    Parameters
    ----------
    corpus : LineCorpus
    keep : ndarray of bool
        One entry per document of ``corpus``; documents beyond its end are left out.
    """

    def __init__(self, corpus: LineCorpus, keep):
        self.corpus = corpus
        self.keep = np.asarray(keep, dtype=bool)

    def __iter__(self) -> Iterator[str]:
        return (document for document, kept in zip(self.corpus, self.keep) if kept)

    def __repr__(self) -> str:
        return f"DocumentSubset({self.corpus!r}, {int(self.keep.sum())} of {self.keep.size} documents)"


def _not_utf8(path: Path, line_number: int, error: UnicodeDecodeError) -> str:
    """Why a corpus file does not decode as UTF-8 after ``line_number`` lines: binary data, or another encoding."""
    where = f"after line {line_number:,}" if line_number else "in its first line"
    return (_not_text(path, where if b"\x00" in error.object else None) or
            f"{path}: not UTF-8 text {where} (byte {error.object[error.start]:#04x}); "
            "re-encode the file as UTF-8, e.g. iconv -f latin1 -t utf-8")


def _not_text(path: Path, nul_bytes: str | None) -> str | None:
    """What a corpus file that is not text is, from its leading bytes (decompressed) or its NUL bytes.

    ``nul_bytes`` says where NUL bytes were met ("in its first line", "in line 12"), or is None
    when none were; the result is None when neither the leading bytes nor NUL bytes tell.
    """
    with _OPENERS.get(path.suffix, open)(path, "rb") as stream:
        head = stream.read(8)
    kind = next((kind for signature, kind in _SIGNATURES if head.startswith(signature)), None)
    suffixes = {name: suffix for suffix, name in _COMPRESSIONS.items()}
    if kind in suffixes:
        # Inside a file read decompressed, compressed data again is told by its NUL bytes alone.
        if path.suffix not in _OPENERS:
            return (f"{path}: the file is {kind}-compressed: name it {path.name}{suffixes[kind]} "
                    "so it is read decompressed")
    elif kind in ("UTF-16", "UTF-32"):
        return f"{path}: {kind} text, not UTF-8: re-encode the file as UTF-8, e.g. iconv -f {kind.lower()} -t utf-8"
    elif kind is not None:
        return f"{path}: {kind}, not text: {_NOT_A_CORPUS}"
    if nul_bytes is None:
        return None
    # Binary as grep and git judge it: NUL bytes anywhere, which no text holds.
    return f"{path}: a binary file, not text (NUL bytes {nul_bytes}): {_NOT_A_CORPUS}"


def _unreadable(path: Path, line_number: int, error: Exception) -> str:
    """Why a corpus file could not be read, in words, with the file and the line reached."""
    where = f"after line {line_number}" if line_number else "at its start"
    compression = _COMPRESSIONS.get(path.suffix)
    if isinstance(error, EOFError):
        return f"{path}: the {compression} stream ends early {where}: the file is truncated"
    if compression is not None and not isinstance(error, FileNotFoundError | PermissionError | IsADirectoryError):
        return (f"{path}: not valid {compression} data {where} ({error}); a file named {path.suffix} must be "
                f"{compression}-compressed, or rename it")
    return f"{path}: cannot be read {where}: {error.strerror or error}" if isinstance(error, OSError) else f"{path}: {error}"


def default_corpus_path() -> Path:
    """Path of the embedded corpus: 38 public-domain books by 16 American authors, 2.64M tokens.

    A sample of ``gutenberg_us_10m`` (Project Gutenberg, public domain in the U.S.): one
    paragraph per line, tokens separated by spaces, case kept. Its books, their sources and
    checksums are listed in the manifest (:func:`default_corpus_manifest_path`).
    """
    return Path(str(resources.files("glovev_ext") / "data" / DEFAULT_CORPUS_NAME))


def default_corpus_manifest_path() -> Path:
    """Path of the tab-separated manifest of the embedded corpus (one row per book)."""
    return Path(str(resources.files("glovev_ext") / "data" / DEFAULT_CORPUS_MANIFEST))


def load_default_corpus(max_documents: int | None = None) -> LineCorpus:
    """The embedded corpus as a :class:`LineCorpus` (one paragraph per document).

    Parameters
    ----------
    max_documents : int or None, default=None
        Read only the first this many paragraphs.

    Returns
    -------
    LineCorpus
    """
    return LineCorpus(default_corpus_path(), max_documents=max_documents)
