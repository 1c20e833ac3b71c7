"""A saved GloVe-V model: one folder holding a KeyedVectorsWithVariance and its metadata, written atomically."""

from __future__ import annotations

import json
import os
from pathlib import Path

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
    """
    path = Path(directory)
    if not (path / VECTORS_FILE).exists():
        raise FileNotFoundError(f"no saved model at {path} (expected {path / VECTORS_FILE}; create one with "
                                "'glovev fit')")
    metadata_path = path / METADATA_FILE
    metadata = json.loads(metadata_path.read_text(encoding="utf-8")) if metadata_path.exists() else {}
    return KeyedVectorsWithVariance.load(str(path / VECTORS_FILE), mmap=mmap), metadata
