"""Corpora as re-iterable streams of documents, and the embedded default corpus."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import zlib
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

DEFAULT_CORPUS_NAME = "gutenberg_us_sample.txt.gz"
DEFAULT_CORPUS_MANIFEST = "gutenberg_us_sample_manifest.tsv"

_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
_COMPRESSIONS = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz"}


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
        While iterating, for a file that is not UTF-8, not the compression its name says, or
        truncated: the message names the file and the line reached.
    """

    def __init__(self, source: str | Path, max_documents: int | None = None):
        self.source = Path(source)
        self.max_documents = max_documents
        if not self.source.exists():
            raise FileNotFoundError(f"corpus not found: {self.source}")
        if self.source.is_dir() and not self._files():
            raise FileNotFoundError(f"corpus folder {self.source} holds no files")

    def __iter__(self) -> Iterator[str]:
        remaining = self.max_documents
        for path in self._files():
            opener = _OPENERS.get(path.suffix, open)
            line_number = 0
            try:
                with opener(path, "rt", encoding="utf-8") as stream:
                    for line_number, line in enumerate(stream, 1):
                        if remaining is not None:
                            if remaining == 0:
                                return
                            remaining -= 1
                        yield line.rstrip("\n")
            except UnicodeDecodeError as error:
                where = f"after line {line_number}" if line_number else "in its first line"
                raise ValueError(f"{path}: not UTF-8 text {where} (byte {error.object[error.start]:#04x}); "
                                 "re-encode the file as UTF-8, e.g. iconv -f latin1 -t utf-8") from None
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
