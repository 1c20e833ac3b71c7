"""The covariance store file: a JSON header, then the per-word arrays and the packed factors, aligned.

Layout: 8 magic bytes ``GLOVEVCV``, the header's length (8 bytes, little-endian), the header (JSON,
padded) holding the format version, ``n_words``, ``dim``, the words, the total size and each
array's offset, dtype and shape; then the arrays of :data:`~.layout.PER_WORD_DTYPES`, for a store whose
covariances are widened along one direction each (docs/method.md 6.22) ``along`` (n_words x D, float64), and
``factors`` (n_factors x D(D+1)/2, or narrower for compact factors), each starting on a 64-byte
boundary so it can be memory-mapped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..atomic import atomic_path
from .factor import packed_size
from .layout import PER_WORD_DTYPES, PerWord

_MAGIC = b"GLOVEVCV"
_FORMAT_VERSION = 1
_ALIGN = 64
ALONG = "along"  # the array of each word's widening, when the store has one


def create_store_file(path: str | os.PathLike, n_words: int, dim: int, n_factors: int, factor_dtype,
                      words: Sequence[str] | None, row_width: int | None = None, along: bool = False) -> None:
    """Write an empty store file of the given layout: the header, then zeroed, aligned arrays.

    Factor rows hold ``row_width`` numbers (default a packed triangle's, ``D (D + 1) / 2``; a store
    of compact factors only needs its largest). With ``along``, the file also has each word's widening
    (``along``, zero: none).
    """
    layout = [(name, np.dtype(dtype), (n_words,)) for name, dtype in PER_WORD_DTYPES.items()]
    if along:  # before the factors: a model folder checks all that precedes them at load, the factors when read
        layout.append((ALONG, np.dtype(np.float64), (n_words, dim)))
    layout.append(("factors", np.dtype(factor_dtype), (n_factors, packed_size(dim) if row_width is None
                                                       else row_width)))
    header = {"format": "glovev-ext covariance store", "version": _FORMAT_VERSION, "n_words": n_words, "dim": dim,
              "words": None if words is None else [str(w) for w in words]}
    region = 4096
    while True:
        # The header records the array offsets, which start after the header's own region.
        offsets = {}
        position = region
        for name, dtype, shape in layout:
            offsets[name] = [position, dtype.str, list(shape)]
            position = _aligned(position + dtype.itemsize * int(np.prod(shape)))
        header_bytes = json.dumps({**header, "arrays": offsets, "size": position}).encode("utf-8")
        if len(_MAGIC) + 8 + len(header_bytes) <= region:
            break
        region = _aligned(len(_MAGIC) + 8 + len(header_bytes) + 4096)
    header_bytes = header_bytes.ljust(region - len(_MAGIC) - 8)
    with open(path, "wb") as stream:
        stream.write(_MAGIC + len(header_bytes).to_bytes(8, "little") + header_bytes)
        stream.truncate(position)


def open_store_arrays(path: str | os.PathLike, mode: str = "r+") -> dict[str, np.ndarray]:
    """The arrays of a store file as memory maps (empty arrays stay in memory)."""
    _, offsets = read_header(path)
    arrays = {}
    for name, (offset, dtype, shape) in offsets.items():
        if int(np.prod(shape)) == 0:
            arrays[name] = np.empty(shape, dtype)
        else:
            arrays[name] = np.memmap(path, dtype=dtype, mode=mode, offset=offset, shape=shape)
    return arrays


def flush(arrays: dict[str, np.ndarray]) -> None:
    """Write the memory-mapped arrays of a store file back to it."""
    for array in arrays.values():
        if isinstance(array, np.memmap):
            array.flush()


@contextmanager
def written_store_file(path: str | os.PathLike, n_words: int, dim: int, n_factors: int, factor_dtype,
                       words: Sequence[str] | None, row_width: int | None = None,
                       along: bool = False) -> Iterator[tuple[PerWord, np.ndarray, np.ndarray | None]]:
    """A new store file at ``path``, filled in place: yields its per-word arrays, its factor array and its
    widenings (None without ``along``).

    The layout is :func:`create_store_file`'s.

    The file is built under a temporary name and moved onto ``path`` only when the block ends
    without error, so an interrupted write leaves any previous file intact.
    """
    with atomic_path(path) as temporary:
        create_store_file(temporary, n_words, dim, n_factors, factor_dtype, words, row_width, along)
        arrays = open_store_arrays(temporary)
        try:
            yield PerWord.of(arrays, dim), arrays["factors"], arrays.get(ALONG)
            flush(arrays)
        finally:
            arrays.clear()


def read_header(source) -> tuple[dict, dict]:
    """The header of a store file and each array's ``(offset, dtype, shape)``.

    ``source`` is a path, or a binary file open for reading (read from its start; its ``name`` is
    the one messages give).

    Raises
    ------
    FileNotFoundError
        If there is no file at ``source``.
    ValueError
        If the file is not a covariance store, or is truncated or inconsistent (the message names
        the file and what is wrong).
    """
    if hasattr(source, "read"):
        return _read_header(source, Path(str(getattr(source, "name", "the covariance store"))))
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"covariance store not found: {path}")
    with open(path, "rb") as stream:
        return _read_header(stream, path)


def _read_header(stream, path: Path) -> tuple[dict, dict]:
    size = os.fstat(stream.fileno()).st_size
    stream.seek(0)
    magic = stream.read(len(_MAGIC))
    if magic != _MAGIC:
        raise ValueError(f"{path} is not a glovev-ext covariance store (bad magic bytes {magic!r})")
    length_bytes = stream.read(8)
    if len(length_bytes) < 8:
        raise ValueError(f"{path} is truncated: the header length is missing")
    length = int.from_bytes(length_bytes, "little")
    if length > size:
        raise ValueError(f"{path} is truncated: header of {length} bytes, the file has {size}")
    raw = stream.read(length)
    if len(raw) < length:
        raise ValueError(f"{path} is truncated: header of {length} bytes, {len(raw)} present")
    try:
        header = json.loads(raw.decode("utf-8"))
        offsets = {name: (int(o), np.dtype(d), tuple(int(n) for n in s)) for name, (o, d, s) in header["arrays"].items()}
        version, dim, words = int(header.get("version", 0)), int(header["dim"]), header["words"]
    except (UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError) as error:
        raise ValueError(f"{path}: unreadable header ({type(error).__name__}: {error})") from None
    if version > _FORMAT_VERSION:
        raise ValueError(f"{path} was written by a newer glovev-ext (format {version})")
    if "size" in header and header["size"] != size:
        state = "truncated" if size < header["size"] else "longer than written"
        raise ValueError(f"{path} is {state}: {size} bytes, the header says {header['size']}")
    if dim < 0 or (words is not None and not isinstance(words, list)):
        raise ValueError(f"{path}: unreadable header (dimension {dim}, words of type {type(words).__name__})")
    for name, (offset, dtype, shape) in offsets.items():
        end = offset + dtype.itemsize * int(np.prod(shape))
        if dtype.hasobject or offset < 0 or min(shape, default=0) < 0:
            raise ValueError(f"{path}: array {name!r} is not a plain array ({dtype}, offset {offset}, shape {shape})")
        if end > size:
            raise ValueError(f"{path} is truncated: array {name!r} ends at byte {end}, the file has {size}")
    return header, offsets


def _aligned(position: int) -> int:
    return -(-position // _ALIGN) * _ALIGN
