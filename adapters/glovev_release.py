"""The GloVe-V authors' release layout (precomputed vectors and covariances, e.g. for COHA).

A release folder holds ``vocab.txt`` (``word count`` lines), ``vectors.safetensors`` (key
``center_vectors``, V x D float32), ``chunk_map.txt`` (tab-separated word, global index, chunk,
local index) and the covariances in one of two layouts (facts from the authors' loader,
reglab/glove-v):

- complete: ``completechunk_{i}.safetensors`` (their code's name; their README says
  ``complete_chunk_{i}.safetensors``), key ``variances``, n x D x D float32;
- approximate (what their loader downloads by default): ``approx_info.txt`` (``word type [rank]``,
  type ``diagonal``, ``svd`` or ``complete``) and ``approxchunk_{i}.safetensors`` (their README:
  one ``ApproximationVariances.safetensors``), tensors keyed by the word's global index:
  ``diag_{idx}`` (D variances), ``U_{idx}``, ``s_{idx}``, ``Vt_{idx}`` (covariance U diag(s) Vt, rank
  k) or ``complete_{idx}`` (D x D). Each approximation keeps at least 90 % of the word's variance.

The covariances are read chunk by chunk and kept as triangular factors (in memory or in a
covariance store file), so the dense V x D x D array never exists; a diagonal or rank-k
covariance is factored from its root without forming its D x D matrix, and every result that uses
one says it is approximate.

``safetensors`` is an optional dependency (``pip install 'glovev-ext[safetensors]'``).
"""

from __future__ import annotations

import csv
import os
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from glovev_ext import KeyedVectorsWithVariance
from glovev_ext.covariance import CovarianceStore, CovarianceStoreWriter, Factor
from glovev_ext.covariance.factor import LOW_RANK, PENDING
from glovev_ext.covariance.layout import PerWord

from .stanford import GloVeFileError, read_vocab, write_vocab

_SLICE = 256  # covariance matrices converted at a time
COMPLETE_CHUNK_NAMES = ("completechunk_{}.safetensors", "complete_chunk_{}.safetensors")  # their code's, README's
APPROXIMATE_CHUNK_NAME = "approxchunk_{}.safetensors"
APPROXIMATE_SINGLE_FILE = "ApproximationVariances.safetensors"  # their README's name: every word in one file
APPROXIMATION_TYPES = ("diagonal", "svd", "complete")
_SYMMETRY_TOLERANCE = 1e-4  # |Vt - U^T| (relative to 1) below which U diag(s) Vt is taken as U diag(s) U^T


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


def read_approx_info(path: str | os.PathLike) -> dict[str, tuple[str, int | None]]:
    """``word -> (type, rank)`` of ``approx_info.txt`` (rank None except for ``svd``)."""
    info = {}
    with open(path, encoding="utf-8") as stream:
        for number, line in enumerate(stream, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) not in (2, 3) or fields[1] not in APPROXIMATION_TYPES:
                raise GloVeFileError(f"{path}: line {number} must be 'word type [rank]' with type one of "
                                     f"{', '.join(APPROXIMATION_TYPES)}; got {line.strip()!r}")
            if fields[1] == "svd" and (len(fields) != 3 or not fields[2].isdigit() or int(fields[2]) < 1):
                raise GloVeFileError(f"{path}: line {number}: word {fields[0]!r} is 'svd' without a rank >= 1")
            info[fields[0]] = (fields[1], int(fields[2]) if len(fields) == 3 and fields[2].isdigit() else None)
    return info


def load_glovev_release(folder: str | os.PathLike, *, variances: str | None = None, on_demand: bool = True,
                        covariance_path: str | os.PathLike | None = None,
                        factor_dtype=np.float64) -> KeyedVectorsWithVariance:
    """A release folder as a :class:`~glovev_ext.KeyedVectorsWithVariance`.

    Parameters
    ----------
    folder : path
    variances : {"complete", "approximate"} or None
        Which covariances to read; by default the complete ones when the folder has them, else the
        approximate ones.
    on_demand : bool, default=True
        Read a word's covariance from its chunk file only when a statistic first asks for it (the
        4,096 most recent are kept); False reads every word now.
    covariance_path : path, optional
        Read every word now and write the factors to this store file (memory-mapped afterwards)
        instead of holding them in memory.
    factor_dtype : numpy dtype
        dtype of the stored factors.

    Returns
    -------
    KeyedVectorsWithVariance
        Words of ``vocab.txt``; those absent from ``chunk_map.txt`` have no covariance. The
        release carries no residual variances, so each factor holds the whole covariance
        (``sigma2`` is 1). Approximate covariances are marked (``covariance_store.approximation``)
        and named in every result that uses them.
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
    layout = _layout(folder, variances)
    info = read_approx_info(folder / "approx_info.txt") if layout == "approximate" else None

    if on_demand and covariance_path is None:
        location = {global_index: (chunk, local) for chunk, entries in by_chunk.items()
                    for global_index, local in entries}
        store = CovarianceStore.on_demand(_ReleaseReader(folder, layout, words, location, dim, info),
                                          _pending(len(words), sorted(location)), dim, words=words)
    else:
        n_defined = sum(len(entries) for entries in by_chunk.values())
        with CovarianceStoreWriter(len(words), dim, n_defined, factor_dtype=factor_dtype, words=words,
                                   path=covariance_path) as writer:
            if layout == "approximate":
                _read_approximate(folder, by_chunk, words, dim, writer, safe_open, info)
            else:
                _read_factors(folder, by_chunk, dim, writer, safe_open, layout)
        store = writer.store
    kv = KeyedVectorsWithVariance(dim, 0, dtype=center.dtype)
    KeyedVectorsWithVariance.add_vectors(kv, words, center)
    kv.expandos["count"] = counts
    kv.attach_covariances(store)
    return kv


def _pending(n_words: int, defined: list[int]) -> PerWord:
    """Per-word arrays of a release read on demand: its words are ``PENDING``, whole covariances (sigma2 1)."""
    per_word = PerWord.undefined(n_words)
    per_word.kind[defined], per_word.rank[defined] = PENDING, -1
    per_word.factor_row[defined] = np.arange(len(defined))
    per_word.sigma2[defined], per_word.dof[defined] = 1.0, np.inf
    return per_word


@dataclass(frozen=True)
class _WordRead:
    """One word read from a release, as a lazy store expects its source's answer."""

    factor: Factor
    condition: float = float("nan")


class _ReleaseReader:
    """Reads one word's covariance from its chunk file when the store first asks for it."""

    def __init__(self, folder: Path, layout: str, words: list, location: dict, dim: int, info: dict | None):
        self.folder, self.layout, self.words, self.location, self.dim, self.info = (folder, layout, words, location,
                                                                                     dim, info)

    def fit_word(self, i: int) -> _WordRead:
        _, safe_open = _safetensors()
        chunk, local = self.location[i]
        if self.layout == "approximate":
            path = _approximate_file(self.folder, chunk, 1)
            kind, rank = _listed(self.folder, self.info, self.words[i], i, chunk)
            with safe_open(str(path), framework="np") as stream:
                return _WordRead(_approximate_factor(path, stream, set(stream.keys()), self.words[i], i, kind, rank,
                                                    self.dim))
        path = self.folder / self.layout.format(chunk)
        if not path.exists():
            raise GloVeFileError(f"{path} is missing: chunk_map.txt places word {self.words[i]!r} in chunk {chunk}")
        with safe_open(str(path), framework="np") as stream:
            tensor = _variances(path, stream, self.dim)
            if local >= tensor.get_shape()[0] or local < 0:
                raise GloVeFileError(f"{path}: local index {local} of word {self.words[i]!r} is beyond its "
                                     f"{tensor.get_shape()[0]} matrices")
            covariance = np.asarray(tensor[local:local + 1], dtype=np.float64)[0]
        return _WordRead(_complete_factor(path, covariance, local, i))


def release_variances(folder: str | os.PathLike) -> str:
    """Which variances :func:`load_glovev_release` reads from ``folder`` by default: "complete" when it
    has complete chunk files (either naming), else "approximate"."""
    return "complete" if _complete_naming(Path(folder)) else "approximate"


def _complete_naming(folder: Path) -> str | None:
    """The file naming of the folder's complete chunks (the code's or the README's), or None."""
    return next((name for name in COMPLETE_CHUNK_NAMES if any(folder.glob(name.format("*")))), None)


def _layout(folder: Path, variances: str | None) -> str:
    """The complete chunk naming to read, or "approximate"."""
    if variances not in (None, "complete", "approximate"):
        raise ValueError(f"variances must be 'complete', 'approximate' or None, got {variances!r}")
    variances = variances or release_variances(folder)
    if variances == "approximate":
        if not (folder / "approx_info.txt").exists():
            raise GloVeFileError(f"{folder} has no approx_info.txt: it holds no approximate variances"
                                 + ("" if _complete_naming(folder) else ", and no complete ones "
                                    f"({' or '.join(name.format('*') for name in COMPLETE_CHUNK_NAMES)})"))
        return "approximate"
    naming = _complete_naming(folder)
    if naming is None:
        raise GloVeFileError(f"{folder} has no complete variances "
                             f"({' or '.join(name.format('*') for name in COMPLETE_CHUNK_NAMES)})")
    return naming


def _read_factors(folder: Path, by_chunk: dict, dim: int, writer: CovarianceStoreWriter, safe_open,
                  naming: str) -> None:
    """Each release covariance, a slice of a chunk at a time, into the writer as a factor (``sigma2`` 1)."""
    for chunk, entries in sorted(by_chunk.items()):
        path = folder / naming.format(chunk)
        if not path.exists():
            raise GloVeFileError(f"{path} is missing: chunk_map.txt places {len(entries)} words in chunk {chunk}")
        with safe_open(str(path), framework="np") as stream:
            tensor = _variances(path, stream, dim)
            n_matrices = tensor.get_shape()[0]
            entries.sort(key=lambda entry: entry[1])
            for part in _slices(entries):
                low, high = part[0][1], part[-1][1] + 1
                if high > n_matrices or low < 0:
                    raise GloVeFileError(f"{path}: local index {part[-1][1]} is beyond its {n_matrices} matrices")
                block = np.asarray(tensor[low:high], dtype=np.float64)
                for global_index, local in part:
                    writer.add(global_index, _complete_factor(path, block[local - low], local, global_index))


def _variances(path: Path, stream, dim: int):
    """The ``variances`` tensor of a complete chunk file, its shape checked."""
    if "variances" not in stream.keys():
        raise GloVeFileError(f"{path} has no 'variances' tensor")
    tensor = stream.get_slice("variances")
    shape = tensor.get_shape()
    if len(shape) != 3 or shape[1:] != [dim, dim]:
        raise GloVeFileError(f"{path}: variances have shape {shape}, expected (n, {dim}, {dim})")
    return tensor


def _complete_factor(path: Path, covariance: np.ndarray, local: int, global_index: int) -> Factor:
    if not np.isfinite(covariance).all():
        raise GloVeFileError(f"{path}: matrix {local} (word index {global_index}) holds NaN or infinite values")
    return Factor.of_covariance(covariance)


def _approximate_file(folder: Path, chunk: int, n_words: int) -> Path:
    """The file holding a chunk's approximate covariances: its ``approxchunk_{i}``, else the single file."""
    path = folder / APPROXIMATE_CHUNK_NAME.format(chunk)
    if path.exists():
        return path
    single = folder / APPROXIMATE_SINGLE_FILE
    if not single.exists():
        raise GloVeFileError(f"{path} is missing (and there is no {single.name}): chunk_map.txt places "
                             f"{n_words} words in chunk {chunk}")
    return single


def _listed(folder: Path, info: dict, word: str, global_index: int, chunk: int) -> tuple[str, int | None]:
    """A word's ``(type, rank)`` line of ``approx_info.txt``."""
    if word not in info:
        raise GloVeFileError(f"{folder / 'approx_info.txt'} does not list word {word!r} (index {global_index}), "
                             f"which chunk_map.txt places in chunk {chunk}")
    return info[word]


def _read_approximate(folder: Path, by_chunk: dict, words: list, dim: int, writer: CovarianceStoreWriter,
                      safe_open, info: dict) -> None:
    """Each word's approximate covariance (``approx_info.txt`` says which form) into the writer."""
    for chunk, entries in sorted(by_chunk.items()):
        path = _approximate_file(folder, chunk, len(entries))
        with safe_open(str(path), framework="np") as stream:
            keys = set(stream.keys())
            for global_index, _ in entries:
                word = words[global_index]
                kind, rank = _listed(folder, info, word, global_index, chunk)
                writer.add(global_index, _approximate_factor(path, stream, keys, word, global_index, kind, rank, dim))


def _approximate_factor(path: Path, stream, keys: set, word: str, idx: int, kind: str, rank: int | None,
                        dim: int) -> Factor:
    """One word's covariance from its tensors, checked against its ``approx_info.txt`` line."""
    names = {"diagonal": [f"diag_{idx}"], "svd": [f"U_{idx}", f"s_{idx}", f"Vt_{idx}"],
             "complete": [f"complete_{idx}"]}[kind]
    missing = [name for name in names if name not in keys]
    if missing:
        raise GloVeFileError(f"{path}: word {word!r} (index {idx}) is '{kind}' in approx_info.txt but the file has no "
                             f"{', '.join(missing)}")
    tensors = [np.asarray(stream.get_tensor(name), dtype=np.float64) for name in names]
    if not all(np.isfinite(t).all() for t in tensors):
        raise GloVeFileError(f"{path}: word {word!r} (index {idx}): its tensors hold NaN or infinite values")
    if kind == "diagonal":
        (variances,) = tensors
        if variances.shape != (dim,) or (variances < 0).any():
            raise GloVeFileError(f"{path}: word {word!r} (index {idx}): diag_{idx} must hold {dim} non-negative "
                                 f"variances, got shape {variances.shape}")
        return Factor.of_diagonal(variances)
    if kind == "complete":
        (covariance,) = tensors
        if covariance.shape != (dim, dim):
            raise GloVeFileError(f"{path}: word {word!r} (index {idx}): complete_{idx} has shape {covariance.shape}, "
                                 f"expected ({dim}, {dim})")
        return Factor.of_covariance(covariance)
    u, s, vt = tensors
    if u.shape != (dim, rank) or s.shape != (rank,) or vt.shape != (rank, dim):
        raise GloVeFileError(f"{path}: word {word!r} (index {idx}) has rank {rank} in approx_info.txt but U, s, Vt "
                             f"have shapes {u.shape}, {s.shape}, {vt.shape} (expected ({dim}, {rank}), ({rank},), "
                             f"({rank}, {dim}))")
    if (s < 0).any():
        raise GloVeFileError(f"{path}: word {word!r} (index {idx}): s_{idx} holds negative values")
    if np.abs(vt - u.T).max() <= _SYMMETRY_TOLERANCE:
        return Factor.of_low_rank(u, s)
    return replace(Factor.of_covariance((u * s) @ vt), approximation=LOW_RANK)


def _slices(entries: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """Consecutive runs of (global, local) entries whose local indices span fewer than _SLICE matrices."""
    runs: list[list[tuple[int, int]]] = []
    for entry in entries:
        if runs and entry[1] - runs[-1][0][1] < _SLICE:
            runs[-1].append(entry)
        else:
            runs.append([entry])
    return runs


def write_glovev_release(folder: str | os.PathLike, kv: KeyedVectorsWithVariance, chunk_size: int = 1000, *,
                         variances: str = "complete", naming: str = "code",
                         approximations: dict | None = None) -> None:
    """Write a release folder in the authors' layout (float32, as they publish), for words with a covariance.

    Parameters
    ----------
    folder : path
    kv : KeyedVectorsWithVariance
    chunk_size : int
        Words per chunk file.
    variances : {"complete", "approximate"}
    naming : {"code", "readme"}
        The file names of the authors' code (``completechunk_{i}``, ``approxchunk_{i}``) or of their
        README (``complete_chunk_{i}``, one ``ApproximationVariances.safetensors``).
    approximations : dict, optional
        For ``variances="approximate"``: ``word -> "diagonal" | ("svd", k) | "complete"``; words not
        in it are written ``"complete"``. The svd form keeps the k leading eigenpairs.
    """
    numpy_io, _ = _safetensors()
    if variances not in ("complete", "approximate") or naming not in ("code", "readme"):
        raise ValueError(f"variances must be 'complete' or 'approximate' and naming 'code' or 'readme', got "
                         f"{variances!r}, {naming!r}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    counts = kv.expandos.get("count", np.zeros(len(kv), np.int64))
    write_vocab(folder / "vocab.txt", kv.index_to_key, counts)
    numpy_io.save_file({"center_vectors": np.ascontiguousarray(kv.vectors, dtype=np.float32)},
                       str(folder / "vectors.safetensors"))
    with_covariance = [word for word in kv.index_to_key if kv.has_covariance(word)]
    chunks = [with_covariance[start:start + chunk_size] for start in range(0, len(with_covariance), chunk_size)]
    with open(folder / "chunk_map.txt", "w", encoding="utf-8", newline="\n") as stream:
        for chunk, chunk_words in enumerate(chunks):
            for local, word in enumerate(chunk_words):
                stream.write(f"{word}\t{kv.get_index(word)}\t{chunk}\t{local}\n")
    if variances == "complete":
        name = COMPLETE_CHUNK_NAMES[0 if naming == "code" else 1]
        for chunk, chunk_words in enumerate(chunks):
            numpy_io.save_file({"variances": kv.covariance(chunk_words).astype(np.float32)},
                               str(folder / name.format(chunk)))
        return
    approximations = approximations or {}
    tensors_by_file: dict[str, dict] = defaultdict(dict)
    with open(folder / "approx_info.txt", "w", encoding="utf-8", newline="\n") as info:
        for chunk, chunk_words in enumerate(chunks):
            target = APPROXIMATE_CHUNK_NAME.format(chunk) if naming == "code" else APPROXIMATE_SINGLE_FILE
            for word in chunk_words:
                form = approximations.get(word, "complete")
                kind, rank = (form, None) if isinstance(form, str) else form
                info.write(f"{word} {kind}" + (f" {rank}" if kind == "svd" else "") + "\n")
                tensors_by_file[target].update(_approximate_tensors(kv.get_index(word), kv.covariance(word), kind,
                                                                    rank))
    for target, tensors in tensors_by_file.items():
        numpy_io.save_file(tensors, str(folder / target))


def _approximate_tensors(idx: int, covariance: np.ndarray, kind: str, rank: int | None) -> dict[str, np.ndarray]:
    """The tensors of one word in the approximate layout (float32)."""
    if kind == "diagonal":
        return {f"diag_{idx}": np.diag(covariance).astype(np.float32)}
    if kind == "complete":
        return {f"complete_{idx}": covariance.astype(np.float32)}
    values, vectors = np.linalg.eigh((covariance + covariance.T) / 2)
    leading = np.argsort(values)[::-1][:rank]
    u = np.ascontiguousarray(vectors[:, leading], dtype=np.float32)
    return {f"U_{idx}": u, f"s_{idx}": np.maximum(values[leading], 0).astype(np.float32),
            f"Vt_{idx}": np.ascontiguousarray(u.T)}
