"""The model folder's files: data only (JSON, ``.npy``, the covariance store), each checked by its digest.

A folder holds ``manifest.json`` (compact JSON: the format, its version, and for every other file its
size and the SHA-256 of each 64 MiB chunk), ``metadata.json`` (the fit's), ``model.json`` (the keys,
the vector size, the prior's scalars, which arrays exist), ``vectors.npy``, ``covariance_rows.npy``,
``expando_NAME.npy`` for each of gensim's per-key attributes (``count``), ``prior_mean.npy`` and
``prior_covariance.npy`` under a prior, and ``covariances.store`` (the store's own format, which
memory-maps). Nothing is ever unpickled.

The covariance store is checked as it is read, 64 MiB at a time: at load, its header and per-word
arrays; each chunk of factors when a row in it is first read (a query of a few words reads a few
chunks; the first check of a chunk costs about 40 ms). Everything else is checked at load.

A folder is read through one handle on it (every file opened relative to that handle), so a save
that replaces the folder meanwhile cannot give half of each model: the reader sees the folder it
opened, or, when that folder's files are removed under it, starts again on the new one. Only
regular files are opened (no links, pipes or devices), every read is bounded by the size the
manifest records, and every byte is checked against its digest before anything is built from it or
any answer depends on it.
"""

from __future__ import annotations

import hashlib
import io
import json
import mmap as mmap_module
import os
import stat
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .covariance import CovarianceStore, GaussianPrior
from .covariance.store_file import read_header
from .keyed_vectors import KeyedVectorsWithVariance

FORMAT = "glovev-ext model"
FORMAT_VERSION = 1
MANIFEST_FILE = "manifest.json"
METADATA_FILE = "metadata.json"
MODEL_FILE = "model.json"
VECTORS_FILE = "vectors.npy"
ROWS_FILE = "covariance_rows.npy"
STORE_FILE = "covariances.store"
PRIOR_FILES = ("prior_mean.npy", "prior_covariance.npy")
_EXPANDO = "expando_{}.npy"
CHUNK_BYTES = 1 << 26
_MAX_MANIFEST_BYTES = 1 << 20
_MAX_JSON_BYTES = 1 << 30
_ATTEMPTS = 10  # reads of a folder replaced while it was read, before giving up


class DamagedModelError(ValueError):
    """A file of a model folder is missing, not a regular file, or not what its manifest says."""


class _FolderReplaced(Exception):
    """The folder being read was replaced (its files removed) by a save: read the new one."""


def model_bytes(n_words: int, dim: int, factor_dtype="float64", exact_factors: bool = True) -> int:
    """About how many bytes a model folder of ``n_words`` words in ``dim`` dimensions takes (its vectors, per-word
    arrays, widenings, keys and, with ``exact_factors``, its triangular covariance factors; compact factors are
    smaller)."""
    # vector, widening, count, covariance row, the store's per-word arrays, the key
    per_word = 2 * 8 * dim + 8 + 8 + 64 + 24
    factors = np.dtype(factor_dtype).itemsize * dim * (dim + 1) // 2 if exact_factors else 0
    return n_words * (per_word + factors) + 8 * dim * (dim + 1) + (1 << 16)


def write_model_files(folder: Path, kv: KeyedVectorsWithVariance, metadata: dict) -> None:
    """Write ``kv`` and ``metadata`` into the empty ``folder``, the manifest last."""
    keys = list(kv.index_to_key)
    if not all(type(key) in (str, int) for key in keys):
        odd = next(key for key in keys if type(key) not in (str, int))
        raise TypeError(f"a model folder holds str or int keys; key {odd!r} is a {type(odd).__name__}")
    expandos = {}
    for name, values in kv.expandos.items():
        values = np.asarray(values)
        if not name.isidentifier() or values.dtype.hasobject:
            raise TypeError(f"a model folder holds numeric per-key attributes with plain names; {name!r} is "
                            f"{values.dtype}")
        expandos[name] = values
    prior = kv.prior
    description = {"keys": keys, "vector_size": int(kv.vector_size), "expandos": sorted(expandos),
                   "covariances": kv.covariance_store is not None,
                   "prior": None if prior is None else {"strength": float(prior.strength), "n_rows": int(prior.n_rows)}}
    _write_bytes(folder / METADATA_FILE, json.dumps(metadata, indent=1, default=str).encode("utf-8"))
    _write_bytes(folder / MODEL_FILE, json.dumps(description, ensure_ascii=False).encode("utf-8"))
    _write_array(folder / VECTORS_FILE, kv.vectors)
    _write_array(folder / ROWS_FILE, np.asarray(kv.covariance_rows, np.int64))
    for name, values in expandos.items():
        _write_array(folder / _EXPANDO.format(name), values)
    if prior is not None:
        for file, values in zip(PRIOR_FILES, (prior.mean, prior.covariance)):
            _write_array(folder / file, np.asarray(values, np.float64))
    if kv.covariance_store is not None:
        kv.covariance_store.save(folder / STORE_FILE)
    names = sorted(entry.name for entry in os.scandir(folder))
    manifest = {"format": FORMAT, "version": FORMAT_VERSION,
                "files": {name: _digests(folder / name) for name in names}}
    _write_bytes(folder / MANIFEST_FILE, json.dumps(manifest, separators=(",", ":")).encode("utf-8"))


def _write_bytes(path: Path, data: bytes) -> None:
    with open(path, "xb") as stream:
        stream.write(data)


def _write_array(path: Path, values: np.ndarray) -> None:
    with open(path, "xb") as stream:
        np.save(stream, np.asarray(values), allow_pickle=False)


def _digests(path: Path) -> dict:
    with open(path, "rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        return {"bytes": size, "sha256": _chunk_digests(stream.fileno(), size)}


def _chunk_digests(handle: int, size: int, threads: int = 1, chunks=None) -> list[str]:
    """The SHA-256 of each ``CHUNK_BYTES`` of an open file (one digest for an empty file), or of the given chunks."""
    if size == 0:
        return [hashlib.sha256(b"").hexdigest()]
    chunks = list(range(-(-size // CHUNK_BYTES)) if chunks is None else chunks)
    if not chunks:
        return []
    with mmap_module.mmap(handle, size, access=mmap_module.ACCESS_READ) as mapped:
        view = memoryview(mapped)
        try:
            def digest(chunk: int) -> str:
                return hashlib.sha256(view[chunk * CHUNK_BYTES:(chunk + 1) * CHUNK_BYTES]).hexdigest()

            if threads > 1 and len(chunks) > 1:
                with ThreadPoolExecutor(min(threads, len(chunks))) as pool:
                    return list(pool.map(digest, chunks))
            return [digest(chunk) for chunk in chunks]
        finally:
            view.release()


def is_model_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a manifest (a model folder of this format, damaged or not)."""
    return os.path.lexists(folder / MANIFEST_FILE)


def read_model_files(folder: Path, mmap: str | None, threads: int = 1) -> tuple[KeyedVectorsWithVariance, dict]:
    """The embedding and metadata of a model folder, every file checked (see the module's description).

    Raises
    ------
    DamagedModelError
        A file is missing, not a regular file, or not what the manifest says; the message names it.
    """
    for _ in range(_ATTEMPTS):
        try:
            with _opened_folder(folder) as handle:
                return _read(folder, handle, mmap, threads)
        except _FolderReplaced:
            continue
    raise DamagedModelError(f"{folder} was replaced {_ATTEMPTS} times while it was read (a save in progress?); "
                            "try again")


@contextmanager
def _opened_folder(folder: Path) -> Iterator[int]:
    try:
        handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except NotADirectoryError:
        raise NotADirectoryError(f"{folder} is a file, not a model folder") from None
    try:
        yield handle
    finally:
        os.close(handle)


def _read(folder: Path, handle: int, mmap: str | None, threads: int) -> tuple[KeyedVectorsWithVariance, dict]:
    manifest = _manifest(folder, handle)
    files, later, factors_at = {}, None, []

    def factors_offset(stream) -> int:  # read once, kept for the later chunks' rows
        factors_at.append(_factors_offset(stream))
        return factors_at[-1]

    try:
        for name, entry in manifest["files"].items():
            lazy = name == STORE_FILE and mmap is not None
            files[name] = _verified(folder, handle, name, entry, threads, factors_offset if lazy else None)
            if lazy:
                later = _LaterChunks(folder / name, files[name], entry["sha256"], threads)
        metadata = _json(folder, files[METADATA_FILE], METADATA_FILE)
        description = _json(folder, files[MODEL_FILE], MODEL_FILE)
        kv = _embedding(folder, files, description, mmap)
        if later is not None and kv.covariance_store is not None:
            store = kv.covariance_store
            later.rows_at(factors_at[0], store.factor_row_width * store.factor_dtype.itemsize)
            kv.covariance_store.check_reads(later)
        return kv, metadata
    finally:
        for stream in files.values():
            stream.close()


def _manifest(folder: Path, handle: int) -> dict:
    path = folder / MANIFEST_FILE
    with _regular_file(folder, handle, MANIFEST_FILE) as stream:
        size = os.fstat(stream.fileno()).st_size
        if size > _MAX_MANIFEST_BYTES:
            raise DamagedModelError(f"{path}: {size:,} bytes, more than a manifest holds; the model folder is "
                                    "damaged: save or fit it again")
        raw = stream.read(size)
    try:
        manifest = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates)
        if manifest.get("format") != FORMAT:
            raise ValueError(f"format {manifest.get('format')!r}")
        version = manifest["version"]
        if type(version) is not int or version > FORMAT_VERSION or version < 1:
            raise ValueError(f"format version {version!r} (this glovev-ext reads version {FORMAT_VERSION})")
        files = manifest["files"]
        for name in (METADATA_FILE, MODEL_FILE, VECTORS_FILE, ROWS_FILE):
            if name not in files:
                raise ValueError(f"no entry for {name}")
        for name, entry in files.items():
            if (name in (MANIFEST_FILE, ".", "..") or "/" in name or "\0" in name or set(entry) != {"bytes", "sha256"}
                    or type(entry["bytes"]) is not int or entry["bytes"] < 0
                    or not isinstance(entry["sha256"], list)
                    or len(entry["sha256"]) != max(1, -(-entry["bytes"] // CHUNK_BYTES))
                    or not all(isinstance(d, str) and len(d) == 64 for d in entry["sha256"])):
                raise ValueError(f"entry {name!r} is not a file's size and digests")
        if raw != json.dumps(manifest, separators=(",", ":")).encode("utf-8"):
            raise ValueError("not as glovev-ext writes it")
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise DamagedModelError(f"{path}: not a glovev-ext manifest ({error}); the model folder is damaged: save or "
                                "fit it again") from None
    return manifest


def _no_duplicates(pairs: list) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise ValueError("a key appears twice")
    return result


def _verified(folder: Path, handle: int, name: str, entry: dict, threads: int,
              checked_up_to=None) -> io.BufferedReader:
    """``name`` open for reading, once its size and every chunk's digest are the manifest's.

    With ``checked_up_to`` (a function of the open file, called once its first chunk is checked),
    only the chunks before the byte it returns are checked now; the others are :class:`_LaterChunks`'.
    """
    stream = _open_regular(folder, handle, name)
    try:
        size = os.fstat(stream.fileno()).st_size
        if size != entry["bytes"]:
            state = "truncated" if size < entry["bytes"] else "longer than written"
            raise DamagedModelError(f"{folder / name} is {state}: {size:,} bytes, its {MANIFEST_FILE} says "
                                    f"{entry['bytes']:,}; the model folder is damaged: save or fit it again")
        if checked_up_to is None:
            if _chunk_digests(stream.fileno(), size, threads) != entry["sha256"]:
                raise _mismatch(folder / name)
        else:
            _check_chunks(folder / name, stream, entry["sha256"], [0], threads)
            end = min(size, max(1, checked_up_to(stream)))
            _check_chunks(folder / name, stream, entry["sha256"], range(1, -(-end // CHUNK_BYTES)), threads)
    except BaseException:
        stream.close()
        raise
    return stream


def _mismatch(path: Path) -> DamagedModelError:
    return DamagedModelError(f"{path} does not match its digest in {MANIFEST_FILE} (changed since it was saved); "
                             "the model folder is damaged: save or fit it again")


def _check_chunks(path: Path, stream, digests: list[str], chunks, threads: int) -> None:
    """Check the given chunks of an open file against their digests (raise naming the file on a mismatch)."""
    chunks = list(chunks)
    size = os.fstat(stream.fileno()).st_size
    if _chunk_digests(stream.fileno(), size, threads, chunks) != [digests[chunk] for chunk in chunks]:
        raise _mismatch(path)


def _factors_offset(stream) -> int:
    """Where a store file's factors begin (all of the file when its header cannot say: then all is checked now)."""
    try:
        return read_header(stream)[1]["factors"][0]
    except (ValueError, KeyError, IndexError):
        return os.fstat(stream.fileno()).st_size


class _LaterChunks:
    """The chunks of a covariance store's file not checked at load, checked when a factor row in them is first read."""

    def __init__(self, path: Path, stream, digests: list[str], threads: int):
        self._path, self._digests, self._threads = path, digests, threads
        self._stream = os.fdopen(os.dup(stream.fileno()), "rb")
        self._checked = np.zeros(len(digests), dtype=bool)
        self._offset, self._row_bytes = 0, 1
        self._lock = threading.Lock()

    def rows_at(self, offset: int, row_bytes: int) -> None:
        """Where factor row 0 starts in the file and how long a row is; the chunks before ``offset`` count as checked
        (the load checked them)."""
        self._offset, self._row_bytes = int(offset), max(1, int(row_bytes))
        self._checked[:-(-max(1, self._offset) // CHUNK_BYTES)] = True

    def __call__(self, rows: np.ndarray) -> None:
        rows = np.asarray(rows, dtype=np.int64).ravel()
        if rows.size == 0 or self._checked.all():
            return
        first = (self._offset + rows * self._row_bytes) // CHUNK_BYTES
        last = (self._offset + (rows + 1) * self._row_bytes - 1) // CHUNK_BYTES
        spans = [np.unique(np.concatenate([first, last]))]
        spans += [np.arange(a, b + 1) for a, b in zip(first, last) if b - a > 1]
        chunks = np.unique(np.concatenate(spans))
        chunks = chunks[(chunks >= 0) & (chunks < self._checked.size)]
        with self._lock:
            todo = chunks[~self._checked[chunks]]
            _check_chunks(self._path, self._stream, self._digests, todo.tolist(), self._threads)
            self._checked[todo] = True


@contextmanager
def _regular_file(folder: Path, handle: int, name: str) -> Iterator[io.BufferedReader]:
    stream = _open_regular(folder, handle, name)
    try:
        yield stream
    finally:
        stream.close()


def _open_regular(folder: Path, handle: int, name: str) -> io.BufferedReader:
    """``name`` in the folder open for reading, refused unless it is a regular file; never blocks on a pipe."""
    try:
        descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=handle)
    except FileNotFoundError:
        if _replaced(folder, handle):
            raise _FolderReplaced from None
        raise DamagedModelError(f"{folder / name} is missing; the model folder is damaged: save or fit it "
                                "again") from None
    except OSError as error:  # a link (ELOOP), or unreadable
        raise DamagedModelError(f"{folder / name}: cannot be opened as a regular file ({error.strerror}); the "
                                "model folder is damaged: save or fit it again") from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise DamagedModelError(f"{folder / name} is not a regular file (a pipe, device or folder); a model folder "
                                "holds only files it wrote")
    os.set_blocking(descriptor, True)
    return os.fdopen(descriptor, "rb")


def _replaced(folder: Path, handle: int) -> bool:
    """Whether ``folder``'s path now names another folder than the one ``handle`` holds."""
    try:
        return not os.path.samestat(os.stat(folder), os.fstat(handle))
    except OSError:
        return True


def _json(folder: Path, stream: io.BufferedReader, name: str):
    size = os.fstat(stream.fileno()).st_size
    if size > _MAX_JSON_BYTES:
        raise DamagedModelError(f"{folder / name}: {size:,} bytes, more than glovev-ext reads as JSON")
    stream.seek(0)
    try:
        return json.loads(stream.read(size).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise DamagedModelError(f"{folder / name}: not valid JSON ({error}); the model folder is damaged: save or "
                                "fit it again") from None


def _embedding(folder: Path, files: dict, description: dict, mmap: str | None) -> KeyedVectorsWithVariance:
    try:
        keys, size, expandos = description["keys"], description["vector_size"], description["expandos"]
        prior, with_store = description["prior"], description["covariances"]
        if not (isinstance(keys, list) and type(size) is int and isinstance(expandos, list)
                and all(type(key) in (str, int) for key in keys) and all(isinstance(e, str) for e in expandos)):
            raise TypeError("fields of the wrong type")
    except (KeyError, TypeError) as error:
        raise DamagedModelError(f"{folder / MODEL_FILE}: not a model description ({error})") from None
    needed = {VECTORS_FILE, ROWS_FILE, *(_EXPANDO.format(e) for e in expandos),
              *(PRIOR_FILES if prior is not None else ()), *((STORE_FILE,) if with_store else ())}
    missing = sorted(needed - set(files))
    if missing:
        raise DamagedModelError(f"{folder / MANIFEST_FILE}: lists no {missing[0]}, which {MODEL_FILE} needs")
    n_keys = len(keys)
    vectors = _array(folder, files, VECTORS_FILE, mmap, (n_keys, size), "f")
    kv = KeyedVectorsWithVariance(size, 0, dtype=vectors.dtype)
    kv.vectors = vectors
    kv.index_to_key = keys
    kv.key_to_index = {key: index for index, key in enumerate(keys)}
    if len(kv.key_to_index) != n_keys:
        raise DamagedModelError(f"{folder / MODEL_FILE}: a key appears twice")
    kv.next_index = n_keys
    for name in expandos:
        kv.expandos[name] = np.array(_array(folder, files, _EXPANDO.format(name), None, (n_keys,), "iufb"))
    rows = np.array(_array(folder, files, ROWS_FILE, None, (n_keys,), "i"), dtype=np.int64)
    if with_store:
        stream = files[STORE_FILE]
        stream.seek(0)
        try:
            kv.covariance_store = CovarianceStore.load(stream, mmap=mmap is not None)
        except ValueError as error:
            raise DamagedModelError(f"{error}; the model folder is damaged: save or fit it again") from None
        if kv.covariance_store.shape[1] != size or (rows >= len(kv.covariance_store)).any() or (rows < -1).any():
            raise DamagedModelError(f"{folder / ROWS_FILE}: rows outside {folder / STORE_FILE}'s "
                                    f"{len(kv.covariance_store):,} words of dimension {kv.covariance_store.shape[1]}")
    elif (rows != -1).any():
        raise DamagedModelError(f"{folder / ROWS_FILE}: rows of covariances the model does not have")
    kv.covariance_rows = rows
    if prior is not None:
        mean = np.array(_array(folder, files, PRIOR_FILES[0], None, (size,), "f"), np.float64)
        covariance = np.array(_array(folder, files, PRIOR_FILES[1], None, (size, size), "f"), np.float64)
        try:
            kv.prior = GaussianPrior(mean, covariance, float(prior["strength"]), int(prior["n_rows"]))
        except (KeyError, TypeError, ValueError) as error:
            raise DamagedModelError(f"{folder / MODEL_FILE}: not a prior's strength and rows ({error})") from None
    return kv


def _array(folder: Path, files: dict, name: str, mmap: str | None, shape: tuple, kinds: str) -> np.ndarray:
    """A ``.npy`` file of the folder, of the given shape and dtype kind, memory-mapped when ``mmap``."""
    stream = files[name]
    stream.seek(0)
    try:
        version = np.lib.format.read_magic(stream)
        shape_read, fortran, dtype = (np.lib.format.read_array_header_1_0(stream) if version == (1, 0)
                                      else np.lib.format.read_array_header_2_0(stream))
    except (ValueError, OSError, SyntaxError, TypeError) as error:
        raise DamagedModelError(f"{folder / name}: not a .npy array ({error})") from None
    if dtype.hasobject or dtype.kind not in kinds or tuple(shape_read) != shape:
        raise DamagedModelError(f"{folder / name}: a {dtype} array of shape {shape_read}, where the model needs "
                                f"shape {shape}")
    offset = stream.tell()
    size = os.fstat(stream.fileno()).st_size
    if offset + dtype.itemsize * int(np.prod(shape)) != size:
        raise DamagedModelError(f"{folder / name}: {size:,} bytes for a {dtype} array of shape {shape}")
    order = "F" if fortran else "C"
    if mmap is not None and int(np.prod(shape)) > 0:
        return np.memmap(stream, dtype=dtype, mode="r", offset=offset, shape=shape, order=order)
    values = np.fromfile(stream, dtype=dtype, count=int(np.prod(shape)))
    return values.reshape(shape, order=order)
