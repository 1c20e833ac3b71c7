"""A saved GloVe-V model: one folder of data files (never a pickle), checked when read, written atomically by one writer.

The files and their checks are :mod:`glovev_ext._model_folder`'s; a folder saved by glovev-ext 0.3 or
earlier (``vectors.kv``, a pickle, which can run any code when opened) loads only on request.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import pickle
import re
import stat
from pathlib import Path

from ._model_folder import (MANIFEST_FILE, METADATA_FILE, DamagedModelError, is_model_folder, read_model_files,
                            write_model_files)
from ._writer_lock import writer_lock
from .atomic import atomic_path, check_free_space, check_writable, remove_stale_temporaries
from .keyed_vectors import KeyedVectorsWithVariance

logger = logging.getLogger(__name__)

PICKLED_VECTORS_FILE = "vectors.kv"  # the 0.1-0.3 format's pickle
_MODEL_FILE = re.compile(r"(manifest|metadata|model)\.json|(vectors|covariance_rows|prior_mean|prior_covariance)\.npy|"
                         r"expando_\w+\.npy|covariances\.store|" + re.escape(PICKLED_VECTORS_FILE) + r"(\.[\w.]+\.npy)?")
_MAX_METADATA_BYTES = 1 << 30
MIN_FREE_BYTES = 1 << 20  # free space below which no model can be saved (checked before any work)
_HASH_THREADS = max(1, min(4, os.cpu_count() or 1))


def save_model(directory: str | os.PathLike, kv: KeyedVectorsWithVariance, metadata: dict | None = None, *,
               overwrite: bool = False) -> Path:
    """Save ``kv`` and ``metadata`` into ``directory`` as data files (JSON and arrays, no pickle), with a manifest.

    The model is written to a temporary folder beside the target and moved into place only when
    complete; the manifest records every file's size and SHA-256 digests, which :func:`load_model`
    checks. What is at ``directory`` is replaced only if it is a saved model (or an empty folder),
    unless ``overwrite`` says otherwise; ``check_model_directory`` runs first. One process writes a
    given ``directory`` at a time: a second one is refused at once (a lock beside it, released when
    its holder ends, however it ends).

    Parameters
    ----------
    directory : str or path-like
        The model folder to create or replace.
    kv : KeyedVectorsWithVariance
        The embedding (keys must be str or int; per-key attributes numeric).
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
        If the model cannot be written there (the message names the path and says why; a full disk
        says "No space left on device"), or another process is writing ``directory``; a model
        already there is kept.
    """
    target = check_model_directory(directory, overwrite=overwrite)
    with writer_lock(target):
        remove_stale_temporaries(target)
        try:
            with atomic_path(target, directory=True) as staging:
                write_model_files(staging, kv, metadata or {})
        except OSError as error:
            if error.errno == errno.ENOSPC:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(target)) from None
            raise
    return Path(directory)


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
    check_free_space(target, MIN_FREE_BYTES, "a model")
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
    if _is_saved_model(target):
        if not foreign:
            return
        raise FileExistsError(errno.EEXIST, f"{given} is a saved model that also holds {_some(foreign)}, which "
                                            "replacing it would delete; move them, or pass --overwrite "
                                            "(overwrite=True) to replace the folder and everything in it")
    raise FileExistsError(errno.EEXIST, f"{given} is a folder that is not a glovev model (it holds "
                                        f"{_some(entries)}); choose another output folder, or pass --overwrite "
                                        "(overwrite=True) to replace it and everything in it")


def _is_saved_model(directory: Path) -> bool:
    """Whether ``directory`` holds a model of this format or of 0.1-0.3 (nothing in it is opened but regular files)."""
    if is_model_folder(directory):
        return True
    return _is_regular(directory / PICKLED_VECTORS_FILE) and isinstance(_read_metadata(directory), dict)


def _foreign_entries(directory: Path) -> list[str]:
    """Entries of ``directory`` that :func:`save_model` does not write."""
    return sorted(entry.name for entry in os.scandir(directory)
                  if not (entry.is_file(follow_symlinks=False) and _MODEL_FILE.fullmatch(entry.name)))


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _read_metadata(directory: str | os.PathLike) -> dict | None:
    """The ``metadata.json`` of a model folder as written, or None if it is not a regular, readable JSON file.

    Only a regular file is opened (never a pipe, device or link) and at most 1 GiB is read; the
    digests are not checked (for messages about a folder, not for answers).
    """
    path = Path(directory) / METADATA_FILE
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(handle, "rb") as stream:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return None
        raw = stream.read(_MAX_METADATA_BYTES + 1)
    try:
        metadata = json.loads(raw.decode("utf-8")) if len(raw) <= _MAX_METADATA_BYTES else None
    except (UnicodeDecodeError, ValueError):
        return None
    return metadata if isinstance(metadata, dict) else None


def _some(names: list[str], shown: int = 3) -> str:
    listed = ", ".join(repr(name) for name in names[:shown])
    return listed if len(names) <= shown else f"{listed} and {len(names) - shown:,} more"


def load_model(directory: str | os.PathLike, mmap: str | None = "r", *,
               allow_pickle: bool = False) -> tuple[KeyedVectorsWithVariance, dict]:
    """The ``KeyedVectorsWithVariance`` and metadata of a model saved with :func:`save_model`.

    Nothing is unpickled: the folder holds JSON and arrays, and every byte is checked against the
    digests of its manifest before an answer depends on it: every file at load, except the
    covariance factors, each 64 MiB of which is checked when a word in it is first read (about
    40 ms each; with ``mmap=None`` all at load, about 0.6 s per GB on one core). The folder is read
    through one handle, so a save that replaces it meanwhile gives the old model or the new one,
    never a mix.

    Parameters
    ----------
    directory : str or path-like
        The model folder.
    mmap : {'r', None}, default='r'
        Memory-map the vectors and covariance factors (read-only) instead of reading them into memory.
    allow_pickle : bool, default=False
        Also load a folder saved by glovev-ext 0.3 or earlier, whose ``vectors.kv`` is a pickle:
        opening a pickle can run any code its author put in it, so only for folders you trust
        (``glovev upgrade MODEL`` converts one, once).

    Returns
    -------
    kv : KeyedVectorsWithVariance
        The embedding, with its covariances and prior.
    metadata : dict
        The fit's metadata (``metadata.json``).

    Raises
    ------
    FileNotFoundError
        If ``directory`` is not a saved model.
    ValueError
        If a file of it is missing, not a regular file, or damaged (truncated, changed since it was
        saved): the message names the file; or if it is a folder of 0.3 or earlier and
        ``allow_pickle`` is False.
    """
    path = Path(directory)
    if is_model_folder(path):
        return read_model_files(path, mmap, threads=_HASH_THREADS)
    if not os.path.lexists(path / PICKLED_VECTORS_FILE):
        raise FileNotFoundError(f"no saved model at {path} (expected {path / MANIFEST_FILE}; create one with "
                                "'glovev fit')")
    if not allow_pickle:
        raise ValueError(f"{path} was saved by glovev-ext 0.3 or earlier: its {PICKLED_VECTORS_FILE} is a pickle, "
                         "and opening a pickle can run any code its author put in it. If you trust this folder, "
                         f"convert it once with 'glovev upgrade {path}' (load_model(path, allow_pickle=True) and "
                         "save_model in Python)")
    return _load_pickled(path, mmap)


def upgrade_model(directory: str | os.PathLike) -> Path:
    """Convert a model folder saved by glovev-ext 0.3 or earlier to the data-only format, in place.

    The folder's pickle is opened (it can run any code its author put in it: only for folders you
    trust) and the model saved again with :func:`save_model`, atomically.

    Parameters
    ----------
    directory : str or path-like
        A model folder of glovev-ext 0.1-0.3 (``vectors.kv``).

    Returns
    -------
    Path
        The model directory.

    Raises
    ------
    ValueError
        If the folder is already in the data-only format, or is damaged.
    FileNotFoundError
        If ``directory`` is not a saved model.
    """
    path = Path(directory)
    if is_model_folder(path):
        raise ValueError(f"{path} is already a data-only model folder: nothing to upgrade")
    kv, metadata = load_model(path, mmap=None, allow_pickle=True)
    logger.info("converting %s from the pickle of glovev-ext 0.3 or earlier to data files", path)
    return save_model(path, kv, metadata)


def _load_pickled(path: Path, mmap: str | None) -> tuple[KeyedVectorsWithVariance, dict]:
    metadata = _read_metadata(path)
    if metadata is None:
        if os.path.lexists(path / METADATA_FILE):
            raise DamagedModelError(f"{path / METADATA_FILE}: not a regular file of valid JSON; the model folder is "
                                    "damaged: save or fit it again")
        metadata = {}
    try:
        kv = KeyedVectorsWithVariance.load(str(path / PICKLED_VECTORS_FILE), mmap=mmap)
    except (pickle.UnpicklingError, EOFError, ValueError, OSError, AttributeError) as error:
        raise DamagedModelError(f"{path / PICKLED_VECTORS_FILE}: cannot be read ({type(error).__name__}: {error}); "
                                "the model folder is damaged: save or fit it again") from None
    return kv, metadata
