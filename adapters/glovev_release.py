"""The GloVe-V authors' release layout (precomputed vectors and covariances, e.g. for COHA).

A release folder holds ``vocab.txt`` (``word count`` lines), ``vectors.safetensors`` (key
``center_vectors``, V x D float32), ``chunk_map.txt`` (tab-separated word, global index, chunk,
local index) and ``completechunk_{i}.safetensors`` (key ``variances``, n x D x D float32). The
covariances are read chunk by chunk, a slice at a time, and kept as triangular factors (in memory
or in a covariance store file), so the dense V x D x D array never exists.

``safetensors`` is an optional dependency (``pip install 'glovev-ext[safetensors]'``).
"""

from __future__ import annotations

import csv
import os
from collections import defaultdict
from pathlib import Path

import numpy as np

from glovev_ext import CovarianceStoreWriter, KeyedVectorsWithVariance
from glovev_ext.covariance import Factor

from .stanford import GloVeFileError, read_vocab, write_vocab

_SLICE = 256  # covariance matrices converted at a time


def _safetensors():
    try:
        import safetensors.numpy as numpy_io
        from safetensors import safe_open
    except ImportError:
        raise ImportError("reading the GloVe-V release needs safetensors: pip install 'glovev-ext[safetensors]'") \
            from None
    return numpy_io, safe_open


def read_chunk_map(path: str | os.PathLike) -> list[tuple[str, int, int, int]]:
    """Rows ``(word, global index, chunk, local index)`` of ``chunk_map.txt``."""
    rows = []
    with open(path, encoding="utf-8", newline="") as stream:
        for number, row in enumerate(csv.reader(stream, delimiter="\t", quoting=csv.QUOTE_NONE), 1):
            if len(row) != 4:
                raise GloVeFileError(f"{path}: line {number} has {len(row)} fields, expected word, global index, "
                                     "chunk, local index")
            try:
                rows.append((row[0], int(row[1]), int(row[2]), int(row[3])))
            except ValueError:
                raise GloVeFileError(f"{path}: line {number}: indices must be integers: {row[1:]}") from None
    return rows


def load_glovev_release(folder: str | os.PathLike, *, covariance_path: str | os.PathLike | None = None,
                        factor_dtype=np.float64) -> KeyedVectorsWithVariance:
    """A release folder as a :class:`~glovev_ext.KeyedVectorsWithVariance`.

    Parameters
    ----------
    folder : path
    covariance_path : path, optional
        Write the covariance factors to this store file (memory-mapped afterwards) instead of
        holding them in memory.
    factor_dtype : numpy dtype
        dtype of the stored factors.

    Returns
    -------
    KeyedVectorsWithVariance
        Words of ``vocab.txt``; those absent from ``chunk_map.txt`` have no covariance. The
        release carries no residual variances, so each factor holds the whole covariance
        (``sigma2`` is 1).
    """
    numpy_io, safe_open = _safetensors()
    folder = Path(folder)
    words, counts = read_vocab(folder / "vocab.txt")
    vectors = numpy_io.load_file(str(folder / "vectors.safetensors"))
    if "center_vectors" not in vectors:
        raise GloVeFileError(f"{folder / 'vectors.safetensors'} has no 'center_vectors' tensor "
                             f"(it has {sorted(vectors)})")
    center = vectors["center_vectors"]
    if center.ndim != 2 or center.shape[0] != len(words):
        raise GloVeFileError(f"{folder / 'vectors.safetensors'}: center_vectors has shape {center.shape}, "
                             f"vocab.txt lists {len(words)} words")
    dim = center.shape[1]
    index = {word: i for i, word in enumerate(words)}
    by_chunk: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for word, global_index, chunk, local in read_chunk_map(folder / "chunk_map.txt"):
        if index.get(word) != global_index:
            raise GloVeFileError(f"{folder / 'chunk_map.txt'}: word {word!r} has global index {global_index}, but "
                                 f"vocab.txt puts it at {index.get(word)}")
        by_chunk[chunk].append((global_index, local))

    n_defined = sum(len(entries) for entries in by_chunk.values())
    with CovarianceStoreWriter(len(words), dim, n_defined, factor_dtype=factor_dtype, words=words,
                               path=covariance_path) as writer:
        _read_factors(folder, by_chunk, dim, writer, safe_open)
    kv = KeyedVectorsWithVariance(dim, 0, dtype=center.dtype)
    KeyedVectorsWithVariance.add_vectors(kv, words, center)
    kv.expandos["count"] = counts
    kv.attach_covariances(writer.store)
    return kv


def _read_factors(folder: Path, by_chunk: dict, dim: int, writer: CovarianceStoreWriter, safe_open) -> None:
    """Each release covariance, a slice of a chunk at a time, into the writer as a factor (``sigma2`` 1)."""
    for chunk, entries in sorted(by_chunk.items()):
        path = folder / f"completechunk_{chunk}.safetensors"
        if not path.exists():
            raise GloVeFileError(f"{path} is missing: chunk_map.txt places {len(entries)} words in chunk {chunk}")
        with safe_open(str(path), framework="np") as stream:
            if "variances" not in stream.keys():
                raise GloVeFileError(f"{path} has no 'variances' tensor")
            tensor = stream.get_slice("variances")
            shape = tensor.get_shape()
            if len(shape) != 3 or shape[1:] != [dim, dim]:
                raise GloVeFileError(f"{path}: variances have shape {shape}, expected (n, {dim}, {dim})")
            entries.sort(key=lambda entry: entry[1])
            for part in _slices(entries):
                low, high = part[0][1], part[-1][1] + 1
                if high > shape[0] or low < 0:
                    raise GloVeFileError(f"{path}: local index {part[-1][1]} is beyond its {shape[0]} matrices")
                block = np.asarray(tensor[low:high], dtype=np.float64)
                for global_index, local in part:
                    covariance = block[local - low]
                    if not np.isfinite(covariance).all():
                        raise GloVeFileError(f"{path}: matrix {local} (word index {global_index}) holds NaN or "
                                             "infinite values")
                    writer.add(global_index, Factor.of_covariance(covariance))


def _slices(entries: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """Consecutive runs of (global, local) entries whose local indices span fewer than _SLICE matrices."""
    runs: list[list[tuple[int, int]]] = []
    for entry in entries:
        if runs and entry[1] - runs[-1][0][1] < _SLICE:
            runs[-1].append(entry)
        else:
            runs.append([entry])
    return runs


def write_glovev_release(folder: str | os.PathLike, kv: KeyedVectorsWithVariance, chunk_size: int = 1000) -> None:
    """Write a release folder in the authors' layout (float32, as they publish), for words with a covariance."""
    numpy_io, _ = _safetensors()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    counts = kv.expandos.get("count", np.zeros(len(kv), np.int64))
    write_vocab(folder / "vocab.txt", kv.index_to_key, counts)
    numpy_io.save_file({"center_vectors": np.ascontiguousarray(kv.vectors, dtype=np.float32)},
                       str(folder / "vectors.safetensors"))
    with_covariance = [word for word in kv.index_to_key if kv.has_covariance(word)]
    with open(folder / "chunk_map.txt", "w", encoding="utf-8", newline="\n") as stream:
        for start in range(0, len(with_covariance), chunk_size):
            chunk_words = with_covariance[start:start + chunk_size]
            chunk = start // chunk_size
            for local, word in enumerate(chunk_words):
                stream.write(f"{word}\t{kv.get_index(word)}\t{chunk}\t{local}\n")
            numpy_io.save_file({"variances": kv.covariance(chunk_words).astype(np.float32)},
                               str(folder / f"completechunk_{chunk}.safetensors"))
