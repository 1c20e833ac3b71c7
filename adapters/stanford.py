"""The Stanford GloVe C tool's files: vocab.txt, cooccurrence(.shuf).bin, vectors.bin and -model 0 text.

Formats (``stanfordnlp/GloVe``):

- ``vocab.txt``: one ``word count`` line per word, most frequent first; word ids are 1-based line
  numbers.
- ``cooccurrence.bin`` / ``cooccurrence.shuf.bin``: little-endian records of int32 word1, int32
  word2, float64 value (16 bytes, 1-based ids), in any order, possibly repeated (repeats add up).
- ``vectors.bin``: ``2 V`` rows of ``D + 1`` float64, the centre rows ``[w_i, b_i]`` then the context
  rows ``[v_j, c_j]``.
- ``vectors.txt`` written with ``-model 0``: ``word w_1..w_D b v_1..v_D c`` per line, possibly followed
  by an ``<unk>`` row. ``-model 1`` (W only) and ``-model 2`` (W + C) text files cannot give GloVe-V
  its four parameter blocks and are refused.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from glovev_ext import CooccurrenceMatrix, GloVeVEstimator, KeyedVectorsWithVariance
from glovev_ext.atomic import atomic_path
from glovev_ext.counting.partial_sums import PartialSums
from glovev_ext.glove import GloVeParameters

logger = logging.getLogger(__name__)

RECORD = np.dtype([("word1", "<i4"), ("word2", "<i4"), ("value", "<f8")])
UNKNOWN = "<unk>"
_CHUNK_RECORDS = 1 << 22  # 64 MB of records read at a time


class GloVeFileError(ValueError):
    """A C-tool file that cannot be read as what it claims to be; the message names file and offset."""


def read_vocab(path: str | os.PathLike) -> tuple[list[str], np.ndarray]:
    """Words and counts of a ``vocab.txt``.

    Returns
    -------
    words : list of str
    counts : ndarray of int64
    """
    words, counts = [], []
    offset = 0
    with open(path, "rb") as stream:
        for number, raw in enumerate(stream, 1):
            line = raw.decode("utf-8").rstrip("\n")
            parts = line.split(" ")
            if len(parts) != 2 or not parts[0]:
                raise GloVeFileError(f"{path}: line {number} (byte {offset}) is not 'word count': {line[:60]!r}")
            try:
                count = int(parts[1])
            except ValueError:
                raise GloVeFileError(f"{path}: line {number} (byte {offset}): count {parts[1]!r} is not an integer") \
                    from None
            if count < 0:
                raise GloVeFileError(f"{path}: line {number} (byte {offset}): negative count {count}")
            words.append(parts[0])
            counts.append(count)
            offset += len(raw)
    if not words:
        raise GloVeFileError(f"{path} is empty: a vocabulary needs at least one word")
    if len(set(words)) != len(words):
        raise GloVeFileError(f"{path} lists a word twice")
    return words, np.array(counts, dtype=np.int64)


def write_vocab(path: str | os.PathLike, words, counts) -> None:
    """Write ``vocab.txt`` (atomically)."""
    with atomic_path(path) as temporary, open(temporary, "w", encoding="utf-8", newline="\n") as stream:
        for word, count in zip(words, counts):
            if " " in word or "\n" in word:
                raise ValueError(f"the C tool's vocab.txt cannot hold the word {word!r} (it contains whitespace)")
            stream.write(f"{word} {int(count)}\n")


def read_cooccurrence(path: str | os.PathLike, n_words: int, words=None) -> CooccurrenceMatrix:
    """A ``cooccurrence.bin`` as a ``(V, V)`` CSR matrix, repeated records summed, read in chunks.

    Each chunk of records becomes a CSR matrix and the partial matrices are summed by
    ``PartialSums``, so the file is never held whole in memory beside the
    result.

    Parameters
    ----------
    path : path
    n_words : int
        Vocabulary size V (ids must be in 1..V).
    words : sequence of str, optional
        Attached to the matrix.

    Raises
    ------
    GloVeFileError
        Empty or truncated file, an id of 0 or above V, a NaN, infinite or negative value; the
        message gives the file and the byte offset of the first bad record.
    """
    size = Path(path).stat().st_size
    if size == 0:
        raise GloVeFileError(f"{path} is empty: no co-occurrence records")
    if size % RECORD.itemsize:
        raise GloVeFileError(f"{path} is truncated or not a cooccurrence file: {size} bytes is not a multiple of "
                             f"the {RECORD.itemsize}-byte record; the last record starts at byte "
                             f"{size - size % RECORD.itemsize}")
    sums = PartialSums()
    with open(path, "rb") as stream:
        first_record = 0
        while True:
            records = np.fromfile(stream, dtype=RECORD, count=_CHUNK_RECORDS)
            if records.size == 0:
                break
            _check_records(path, records, first_record, n_words)
            sums.add(sp.csr_matrix((records["value"], (records["word1"] - 1, records["word2"] - 1)),
                                   shape=(n_words, n_words)))
            first_record += records.size
    total = sums.total()
    total.sum_duplicates()
    total.sort_indices()
    return CooccurrenceMatrix(total, words=words)


def _check_records(path, records: np.ndarray, first_record: int, n_words: int) -> None:
    problems = [
        ((records["word1"] < 1) | (records["word2"] < 1), "a word id below 1 (ids are 1-based)"),
        ((records["word1"] > n_words) | (records["word2"] > n_words), f"a word id above the vocabulary size {n_words}"),
        (~np.isfinite(records["value"]), "a NaN or infinite value"),
        (records["value"] < 0, "a negative value"),
    ]
    for mask, description in problems:
        if mask.any():
            k = int(np.flatnonzero(mask)[0])
            record = records[k]
            raise GloVeFileError(f"{path}: record {first_record + k} (byte {(first_record + k) * RECORD.itemsize}) "
                                 f"has {description}: ({record['word1']}, {record['word2']}, {record['value']})")


def write_cooccurrence(path: str | os.PathLike, matrix, *, shuffle: bool = False, random_state=None) -> None:
    """Write the positive entries of a matrix as C-tool records (1-based ids), atomically.

    With ``shuffle`` the records are in random order (seeded by ``random_state``), like
    ``cooccurrence.shuf.bin``.
    """
    entries = sp.coo_matrix(matrix)
    positive = entries.data > 0
    records = np.empty(int(positive.sum()), dtype=RECORD)
    records["word1"] = entries.row[positive] + 1
    records["word2"] = entries.col[positive] + 1
    records["value"] = entries.data[positive]
    if shuffle:
        np.random.default_rng(random_state).shuffle(records)
    with atomic_path(path) as temporary:
        records.tofile(temporary)


def read_vectors_bin(path: str | os.PathLike, n_words: int) -> GloVeParameters:
    """``vectors.bin`` (2V rows of D + 1 float64) as separate W, C, b, c."""
    size = Path(path).stat().st_size
    row_count = 2 * n_words
    if size == 0 or size % (8 * row_count):
        raise GloVeFileError(f"{path} has {size} bytes, which is not 2 x {n_words} rows of float64 (the vocabulary "
                             f"has {n_words} words): truncated, or written for another vocabulary")
    width = size // (8 * row_count)
    if width < 2:
        raise GloVeFileError(f"{path}: rows of {width} numbers leave no vector besides the bias")
    values = np.fromfile(path, dtype="<f8").reshape(row_count, width)
    bad = ~np.isfinite(values)
    if bad.any():
        k = int(np.flatnonzero(bad.ravel())[0])
        raise GloVeFileError(f"{path}: NaN or infinite value at byte {8 * k}")
    dim = width - 1
    return GloVeParameters(center_vectors=np.ascontiguousarray(values[:n_words, :dim]),
                           context_vectors=np.ascontiguousarray(values[n_words:, :dim]),
                           center_biases=values[:n_words, dim].copy(), context_biases=values[n_words:, dim].copy(),
                           costs=np.empty(0))


def write_vectors_bin(path: str | os.PathLike, parameters: GloVeParameters) -> None:
    """Write ``vectors.bin`` from separate parameters (atomically)."""
    rows = np.vstack([np.column_stack([parameters.center_vectors, parameters.center_biases]),
                      np.column_stack([parameters.context_vectors, parameters.context_biases])])
    with atomic_path(path) as temporary:
        rows.astype("<f8").tofile(temporary)


def read_vectors_text(path: str | os.PathLike, dim: int) -> tuple[list[str], GloVeParameters]:
    """A ``-model 0`` text file (``word w b v c`` per line; a trailing ``<unk>`` row is skipped).

    Parameters
    ----------
    path : path
    dim : int
        The vector size D. It is needed because the text alone cannot tell a ``-model 0`` file
        from a ``-model 1`` or ``-model 2`` one.

    Raises
    ------
    GloVeFileError
        If a line does not hold ``2 (D + 1)`` numbers (a ``-model 1`` or ``-model 2`` file holds D: W
        only, or W + C, which GloVe-V cannot use), or holds something that is not a number.
    """
    words, rows = [], []
    offset = 0
    with open(path, "rb") as stream:
        for number, raw in enumerate(stream, 1):
            parts = raw.decode("utf-8").rstrip("\n").split(" ")
            if len(parts) - 1 != 2 * (dim + 1):
                hint = (" -- this is -model 1 or -model 2 output (W only, or W + C); GloVe-V needs W, C, b and c "
                        "separately: rerun glove with -model 0, or use vectors.bin") if len(parts) - 1 == dim else ""
                raise GloVeFileError(f"{path}: line {number} (byte {offset}) holds {len(parts) - 1} numbers; a -model 0 "
                                     f"file of D = {dim} holds {2 * (dim + 1)}{hint}")
            try:
                values = np.array(parts[1:], dtype=np.float64)
            except ValueError:
                raise GloVeFileError(f"{path}: line {number} (byte {offset}) holds something that is not a number") \
                    from None
            offset += len(raw)
            if parts[0] == UNKNOWN:
                continue
            words.append(parts[0])
            rows.append(values)
    if not rows:
        raise GloVeFileError(f"{path} holds no vectors")
    table = np.vstack(rows)
    return words, GloVeParameters(center_vectors=table[:, :dim].copy(), center_biases=table[:, dim].copy(),
                                  context_vectors=table[:, dim + 1:2 * dim + 1].copy(),
                                  context_biases=table[:, 2 * dim + 1].copy(), costs=np.empty(0))


def write_vectors_text(path: str | os.PathLike, words, parameters: GloVeParameters) -> None:
    """Write a ``-model 0`` text file with every digit (``repr``), atomically."""
    with atomic_path(path) as temporary, open(temporary, "w", encoding="utf-8", newline="\n") as stream:
        for k, word in enumerate(words):
            numbers = [*parameters.center_vectors[k], parameters.center_biases[k], *parameters.context_vectors[k],
                       parameters.context_biases[k]]
            stream.write(word + " " + " ".join(repr(float(x)) for x in numbers) + "\n")


def load_glove_folder(folder: str | os.PathLike, *, dim: int | None = None, x_max: float = 100.0,
                      alpha: float = 0.75, **estimator_params) -> tuple[GloVeVEstimator, KeyedVectorsWithVariance]:
    """GloVe-V from a folder of C-tool output, without retraining.

    Reads ``vocab.txt``, ``cooccurrence.bin`` (or ``cooccurrence.shuf.bin``) and ``vectors.bin``
    (or a ``-model 0`` ``vectors.txt`` with ``dim``), then computes the covariances.

    Parameters
    ----------
    folder : path
    dim : int, optional
        Needed only when the parameters come from ``vectors.txt``.
    x_max, alpha : float
        The weighting the vectors were trained with.
    **estimator_params
        Passed to :class:`~glovev_ext.GloVeVEstimator` (``n_jobs``, ``covariance_storage``, ...).

    Returns
    -------
    (GloVeVEstimator, KeyedVectorsWithVariance)
    """
    folder = Path(folder)
    words, counts = read_vocab(folder / "vocab.txt")
    for name in ("cooccurrence.bin", "cooccurrence.shuf.bin"):
        if (folder / name).exists():
            matrix = read_cooccurrence(folder / name, len(words), words=words)
            break
    else:
        raise FileNotFoundError(f"{folder} has neither cooccurrence.bin nor cooccurrence.shuf.bin")
    if (folder / "vectors.bin").exists():
        parameters = read_vectors_bin(folder / "vectors.bin", len(words))
    elif (folder / "vectors.txt").exists():
        if dim is None:
            raise ValueError(f"{folder}/vectors.txt: pass dim= (the text alone does not tell -model 0 from 1 or 2)")
        text_words, parameters = read_vectors_text(folder / "vectors.txt", dim)
        if text_words != words:
            raise GloVeFileError(f"{folder}/vectors.txt lists {len(text_words)} words that differ from vocab.txt's "
                                 f"{len(words)}")
    else:
        raise FileNotFoundError(f"{folder} has neither vectors.bin nor vectors.txt")
    logger.info("read %d words, %d co-occurrences, D=%d from %s", len(words), matrix.nnz,
                parameters.center_vectors.shape[1], folder)
    estimator = GloVeVEstimator(parameters.center_vectors.shape[1], x_max=x_max, alpha=alpha, pretrained=parameters,
                                **estimator_params).fit(matrix)
    return estimator, KeyedVectorsWithVariance.from_estimator(estimator, counts=counts)
