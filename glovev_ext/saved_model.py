"""A saved GloVe-V model: one folder holding a KeyedVectorsWithVariance and its metadata, written atomically."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import numpy as np

from ._deprecation import warn_renamed
from .atomic import atomic_path
from .keyed_vectors import KeyedVectorsWithVariance

VECTORS_FILE = "vectors.kv"
METADATA_FILE = "metadata.json"


def save_model(directory: str | os.PathLike, kv: KeyedVectorsWithVariance, metadata: dict | None = None) -> Path:
    """Save ``kv`` (large arrays as separate memory-mappable files) and ``metadata`` into ``directory``.

    The model is written to a temporary folder beside the target and moved into place only when
    complete; an existing model at ``directory`` is replaced only then.

    Parameters
    ----------
    directory : str or path-like
    kv : KeyedVectorsWithVariance
    metadata : dict, optional
        JSON-serialisable; :func:`glovev_ext.fit_corpus` gives the package's schema.

    Returns
    -------
    Path
        The model directory.
    """
    if isinstance(directory, KeyedVectorsWithVariance):
        warn_renamed("save_model(kv, directory)", "save_model(directory, kv): the path comes first, as in every "
                     "save and write function")
        directory, kv = kv, directory
    target = Path(directory)
    with atomic_path(target, directory=True) as staging:
        kv.save(str(staging / VECTORS_FILE), sep_limit=1 << 16)
        (staging / METADATA_FILE).write_text(json.dumps(metadata or {}, indent=1, default=str), encoding="utf-8")
    return target


def load_model(directory: str | os.PathLike, mmap: str | None = "r") -> tuple[KeyedVectorsWithVariance, dict]:
    """The ``KeyedVectorsWithVariance`` and metadata of a model saved with :func:`save_model`.

    Raises
    ------
    FileNotFoundError
        If ``directory`` is not a saved model.
    ValueError
        If a file of it is damaged (truncated, not what it should be): the message names the file.
    """
    path = Path(directory)
    if not (path / VECTORS_FILE).exists():
        raise FileNotFoundError(f"no saved model at {path} (expected {path / VECTORS_FILE}; create one with "
                                "'glovev fit')")
    metadata_path = path / METADATA_FILE
    try:
        metadata = json.loads(metadata_path.read_text(encoding="utf-8")) if metadata_path.exists() else {}
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{metadata_path}: not valid JSON ({error}); the model folder is damaged: save or fit "
                         "it again") from None
    try:
        kv = KeyedVectorsWithVariance.load(str(path / VECTORS_FILE), mmap=mmap)
    except (pickle.UnpicklingError, EOFError, ValueError, OSError, AttributeError) as error:
        raise ValueError(f"{_damaged_file(path)}: cannot be read ({type(error).__name__}: {error}); the model folder "
                         "is damaged (an interrupted copy?): save or fit it again") from None
    return kv, metadata


def _damaged_file(path: Path) -> Path:
    """The first file of a saved model that does not load on its own (the pickle, else an array beside it)."""
    vectors = path / VECTORS_FILE
    try:
        with open(vectors, "rb") as stream:
            pickle.load(stream)
    except Exception:  # noqa: BLE001 - any failure names this file
        return vectors
    for array in sorted(path.glob(f"{VECTORS_FILE}.*.npy")):
        try:
            np.load(array, mmap_mode="r")
        except Exception:  # noqa: BLE001 - any failure names this file
            return array
    return vectors
