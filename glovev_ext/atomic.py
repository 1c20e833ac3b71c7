"""Atomic writing: a file or folder appears complete at its path, or the previous one stays.

Every writer of the package (covariance stores, saved models, the adapters' files) goes through
:func:`atomic_path`, or through :func:`replace_atomically` when the temporary file must outlive one
call (the resumable covariance pass).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | os.PathLike, *, directory: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; when the block succeeds it replaces ``path`` in one step.

    Parameters
    ----------
    path : str or path-like
        The file (or, with ``directory``, the folder) to write.
    directory : bool, default=False
        Yield an empty temporary folder instead of an empty temporary file.

    Notes
    -----
    The caller writes the temporary path completely; its contents are flushed to disk before the
    rename. If the block raises, the temporary path is removed and ``path`` is left untouched.
    """
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    if directory:
        temporary = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=parent))
    else:
        handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=parent)
        os.close(handle)
        temporary = Path(name)
    try:
        yield temporary
        replace_atomically(temporary, target)
    except BaseException:
        _remove(temporary)
        raise


def replace_atomically(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """Flush ``source`` (a file, or every file of a folder) to disk and move it onto ``target``.

    A folder replacing an existing folder moves the old one aside first (a rename cannot replace a
    non-empty folder); the old one is removed only once the new one is in place.
    """
    source, target = Path(source), Path(target)
    for file in ([source] if source.is_file() else sorted(p for p in source.rglob("*") if p.is_file())):
        with open(file, "rb+") as stream:
            os.fsync(stream.fileno())
    if not (source.is_dir() and target.is_dir()):
        os.replace(source, target)
        return
    previous = target.with_name(f".{target.name}.previous")
    _remove(previous)
    os.replace(target, previous)
    os.replace(source, target)
    _remove(previous)


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
