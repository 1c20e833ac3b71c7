"""A saved GloVe-V model: one directory holding a KeyedVectorsWithVariance, written atomically."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from .keyed_vectors import KeyedVectorsWithVariance

_VECTORS = "vectors.kv"
_METADATA = "metadata.json"


def save_model(kv: KeyedVectorsWithVariance, directory: str | os.PathLike, metadata: dict | None = None) -> Path:
    """Save ``kv`` (large arrays as separate memory-mappable files) and ``metadata`` into ``directory``.

    The model is written to a temporary directory beside the target and moved into place only
    when complete; an existing model at ``directory`` is replaced only then.

    Returns
    -------
    Path
        The model directory.
    """
    target = Path(directory)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent))
    try:
        kv.save(str(staging / _VECTORS), sep_limit=1 << 16)
        (staging / _METADATA).write_text(json.dumps(metadata or {}, indent=1, default=str), encoding="utf-8")
        if target.exists():
            previous = target.with_name(f".{target.name}.previous")
            shutil.rmtree(previous, ignore_errors=True)
            os.replace(target, previous)
            os.replace(staging, target)
            shutil.rmtree(previous, ignore_errors=True)
        else:
            os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def load_model(directory: str | os.PathLike, mmap: str | None = "r") -> tuple[KeyedVectorsWithVariance, dict]:
    """The ``KeyedVectorsWithVariance`` and metadata of a model saved with :func:`save_model`.

    Raises
    ------
    FileNotFoundError
        If ``directory`` is not a saved model.
    """
    path = Path(directory)
    if not (path / _VECTORS).exists():
        raise FileNotFoundError(f"no saved model at {path} (expected {path / _VECTORS}; create one with 'glovev fit')")
    metadata_path = path / _METADATA
    metadata = json.loads(metadata_path.read_text(encoding="utf-8")) if metadata_path.exists() else {}
    return KeyedVectorsWithVariance.load(str(path / _VECTORS), mmap=mmap), metadata
