"""A saved GloVe-V model: one folder holding a KeyedVectorsWithVariance and its metadata, written atomically."""

from __future__ import annotations

import errno
import json
import os
import pickle
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .atomic import atomic_path, check_writable, remove_stale_temporaries
from .keyed_vectors import KeyedVectorsWithVariance

VECTORS_FILE = "vectors.kv"
METADATA_FILE = "metadata.json"
_MODEL_FILE = re.compile(rf"{re.escape(VECTORS_FILE)}(\.[\w.]+\.npy)?|{re.escape(METADATA_FILE)}")


def save_model(directory: str | os.PathLike, kv: KeyedVectorsWithVariance, metadata: dict | None = None, *,
               overwrite: bool = False) -> Path:
    """Save ``kv`` (large arrays as separate memory-mappable files) and ``metadata`` into ``directory``.

    The model is written to a temporary folder beside the target and moved into place only when
    complete. What is at ``directory`` is replaced only if it is a saved model (or an empty folder),
    unless ``overwrite`` says otherwise; ``check_model_directory`` runs first.

    Parameters
    ----------
    directory : str or path-like
    kv : KeyedVectorsWithVariance
    metadata : dict, optional
        JSON-serialisable; :func:`glovev_ext.fit_corpus` gives the package's schema.
    overwrite : bool, default=False
        Replace whatever is at ``directory`` (a folder with other files, a file) and everything in it.

    Returns
    -------
    Path
        The model directory.

    Raises
    ------
    FileExistsError
        If ``directory`` holds something that is not a saved model and ``overwrite`` is False.
    OSError
        If the model cannot be written there (the message says why); a model already there is kept.
    """
    target = check_model_directory(directory, overwrite=overwrite)
    remove_stale_temporaries(target)
    with atomic_path(target, directory=True) as staging, _attributes_kept(kv):
        kv.save(str(staging / VECTORS_FILE), sep_limit=1 << 16)
        (staging / METADATA_FILE).write_text(json.dumps(metadata or {}, indent=1, default=str), encoding="utf-8")
    return Path(directory)


@contextmanager
def _attributes_kept(kv: KeyedVectorsWithVariance) -> Iterator[None]:
    """Put back the attributes gensim's save sets aside, if the save is interrupted.

    gensim removes the large arrays from the object (and from every object of it it saves the same
    way) while it pickles the rest, and puts them back after ``Exception`` only: after Ctrl-C the
    embedding in memory would have lost its vectors.
    """
    objects, pending, seen = [], [kv], set()
    while pending:
        obj = pending.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        objects.append((obj, dict(obj.__dict__)))
        pending.extend(value for value in obj.__dict__.values() if hasattr(value, "_save_specials"))
    try:
        yield
    except BaseException:
        for obj, attributes in objects:
            obj.__dict__.update(attributes)
        raise


def check_model_directory(directory: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Check, before any work, that a model can be saved at ``directory``; return the path it will be written to.

    A model may replace nothing, an empty folder, or a saved model (a folder holding only the files
    :func:`save_model` writes); anything else only with ``overwrite``. The folder that will receive
    the model must be writable: a temporary folder is created there and removed again.

    Parameters
    ----------
    directory : str or path-like
    overwrite : bool, default=False

    Returns
    -------
    Path
        ``directory`` made absolute, with symbolic links followed.

    Raises
    ------
    FileExistsError
        ``directory`` holds something else and ``overwrite`` is False.
    NotADirectoryError
        A folder on the way to ``directory`` is a file.
    OSError
        The location cannot be written (permissions, a read-only or full file system, a name too long).
    """
    target = Path(directory).expanduser().resolve()
    if target == target.parent:
        raise ValueError(f"cannot save a model as {target}: give a folder to create or replace")
    if not overwrite:
        _refuse_what_is_not_a_model(target, Path(directory))
    check_writable(target, "a model")
    return target


def _refuse_what_is_not_a_model(target: Path, given: Path) -> None:
    if not os.path.lexists(target):
        return
    if not target.is_dir():
        raise FileExistsError(errno.EEXIST, f"{given} is a file, not a model folder; choose another output, or "
                                            "pass --overwrite (overwrite=True) to replace it")
    entries = sorted(entry.name for entry in os.scandir(target))
    if not entries:
        return
    foreign = _foreign_entries(target)
    if (target / VECTORS_FILE).is_file() and _readable_metadata(target):
        if not foreign:
            return
        raise FileExistsError(errno.EEXIST, f"{given} is a saved model that also holds {_some(foreign)}, which "
                                            "replacing it would delete; move them, or pass --overwrite "
                                            "(overwrite=True) to replace the folder and everything in it")
    raise FileExistsError(errno.EEXIST, f"{given} is a folder that is not a glovev model (it holds "
                                        f"{_some(entries)}); choose another output folder, or pass --overwrite "
                                        "(overwrite=True) to replace it and everything in it")


def _foreign_entries(directory: Path) -> list[str]:
    """Entries of ``directory`` that :func:`save_model` does not write."""
    return sorted(entry.name for entry in os.scandir(directory)
                  if not (entry.is_file(follow_symlinks=False) and _MODEL_FILE.fullmatch(entry.name)))


def _readable_metadata(directory: Path) -> bool:
    try:
        return isinstance(json.loads((directory / METADATA_FILE).read_text(encoding="utf-8")), dict)
    except (OSError, ValueError):
        return False


def _some(names: list[str], shown: int = 3) -> str:
    listed = ", ".join(repr(name) for name in names[:shown])
    return listed if len(names) <= shown else f"{listed} and {len(names) - shown:,} more"


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
