"""Atomic writing: a file or folder appears complete at its path, or the previous one stays.

Every writer of the package (covariance stores, saved models, the adapters' files) goes through
:func:`atomic_path`, or through :func:`replace_atomically` when the temporary file must outlive one
call (the resumable covariance pass).

A temporary sits beside its target (a rename within one folder is atomic) under a name that
starts with ``.`` and carries the writing process's id, so a later write to the same folder can
remove what a killed process left (:func:`remove_stale_temporaries`) and never what a running one
is writing. On Linux a folder replaces a folder by exchanging the two names in one system call
(``renameat2`` with ``RENAME_EXCHANGE``): at every instant the target is the old folder or the new
one, even if the process is killed.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import re
import secrets
import shutil
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

logger = logging.getLogger(__name__)

_SUFFIX = ".partial"
_PREFIX_CHARS = 64  # of the target's name kept in a temporary's name, so the temporary's name stays short enough
_PROCESS_AND_TOKEN = re.compile(r"(\d+)-[0-9a-f]{8}\.partial")  # what follows ".NAME.glovev-" in a temporary's name


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
    rename. If the block raises (or is interrupted), the temporary path is removed and ``path`` is
    left untouched. The new file or folder gets the permissions the user's umask gives, as a file
    written with ``cp`` or ``open`` would.
    """
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    temporary = temporary_path(target)
    try:
        if directory:
            temporary.mkdir(mode=0o777)
        else:
            os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        yield temporary
        replace_atomically(temporary, target)
    except BaseException:
        _remove(temporary)
        raise


def temporary_path(target: str | os.PathLike) -> Path:
    """A fresh name for a temporary beside ``target``: hidden, marked with this process's id, ending ``.partial``."""
    target = Path(target)
    name = f".{target.name[:_PREFIX_CHARS]}.glovev-{os.getpid()}-{secrets.token_hex(4)}{_SUFFIX}"
    return target.with_name(name)


def replace_atomically(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """Flush ``source`` (a file, or every file of a folder) to disk and move it onto ``target``.

    A folder replacing an existing folder (or file) exchanges names with it in one step where the
    system allows (Linux), then the old one, now under the temporary name, is removed. Elsewhere the
    old one is moved aside first and moved back if the second rename fails.
    """
    source, target = Path(source), Path(target)
    for file in ([source] if source.is_file() else sorted(p for p in source.rglob("*") if p.is_file())):
        with open(file, "rb+") as stream:
            os.fsync(stream.fileno())
    if not source.is_dir() or not os.path.lexists(target):
        os.replace(source, target)
        _sync_folder(target.parent)
        return
    with _signals_held():
        if not _exchange(source, target):
            aside = temporary_path(target)
            os.replace(target, aside)
            try:
                os.replace(source, target)
            except BaseException:
                os.replace(aside, target)
                raise
            source = aside
    _sync_folder(target.parent)
    _remove(source)


def check_writable(target: str | os.PathLike, what: str = "it") -> None:
    """Prove, before any work, that ``target`` can be created where it is: raise the reason if not.

    The nearest existing folder on the way to ``target`` must be a folder, every missing name on
    the way must fit the file system, and a temporary folder is created there and removed again
    (so permissions, a read-only or a full file system show now, not after the work).

    Parameters
    ----------
    target : str or path-like
        The file or folder that will be written (absolute, or relative to the working folder).
    what : str
        What will be written, for the messages ("a model", "the figure").

    Raises
    ------
    NotADirectoryError
        A name on the way to ``target`` is a file.
    OSError
        The location cannot be written; the message names it and says why.
    """
    target = Path(os.path.abspath(target))
    existing = next(folder for folder in target.parents if os.path.lexists(folder))
    if not existing.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, f"{existing} is a file, so it cannot hold {what} ({target})")
    missing = [target, *[folder for folder in target.parents if not os.path.lexists(folder)]]
    longest = max(len(os.fsencode(folder.name)) for folder in missing)
    limit = os.pathconf(existing, "PC_NAME_MAX") if hasattr(os, "pathconf") else 255
    if longest > limit:
        raise OSError(errno.ENAMETOOLONG, f"cannot write {what} as {target}: a name in it is {longest} bytes long, "
                                          f"more than the {limit} this file system allows")
    probe = temporary_path(existing / target.relative_to(existing).parts[0])
    with _signals_held():  # an interruption between the two calls would leave the probe behind
        try:
            probe.mkdir()
        except OSError as error:
            raise OSError(error.errno, f"cannot write {what} in {existing}: {error.strerror}") from None
        probe.rmdir()


def check_free_space(target: str | os.PathLike, needed: int, what: str = "it") -> None:
    """Refuse, before the work, to write ``needed`` bytes at ``target`` on a file system with less free space.

    Parameters
    ----------
    target : str or path-like
        The file or folder that will be written; its nearest existing folder's file system is asked.
    needed : int
        Bytes the write needs (an estimate).
    what : str
        What will be written, for the message.

    Raises
    ------
    OSError
        ``ENOSPC``: the message names the folder, the bytes needed and the bytes free.
    """
    target = Path(os.path.abspath(target))
    existing = next(folder for folder in (target, *target.parents) if os.path.lexists(folder))
    free = shutil.disk_usage(existing).free
    if free < needed:
        raise OSError(errno.ENOSPC, f"{existing}: {os.strerror(errno.ENOSPC)} for {what}: it needs about "
                                    f"{_megabytes(needed)}, the file system has {_megabytes(free)} free")


def _megabytes(n_bytes: int) -> str:
    return f"{n_bytes / 1e6:,.1f} MB" if n_bytes < 1e8 else f"{n_bytes / 1e6:,.0f} MB"


def remove_stale_temporaries(target: str | os.PathLike) -> list[Path]:
    """Remove the temporaries of ``target`` that a process no longer running left beside it; return them.

    Only names :func:`temporary_path` makes for ``target`` are considered, and only those whose
    process id is not alive, so a write in progress in another process is never disturbed.
    """
    target = Path(target)
    prefix = f".{target.name[:_PREFIX_CHARS]}.glovev-"
    removed = []
    try:
        entries = [entry for entry in os.scandir(target.parent) if entry.name.startswith(prefix)]
    except OSError:
        return removed
    for entry in entries:
        match = _PROCESS_AND_TOKEN.fullmatch(entry.name[len(prefix):])
        if match and not process_running(int(match.group(1))):
            _remove(Path(entry.path))
            removed.append(Path(entry.path))
    if removed:
        logger.info("removed %d temporaries of %s left by interrupted writes", len(removed), target)
    return removed


def process_running(pid: int) -> bool:
    """Whether a process with id ``pid`` is running (this one is; another user's counts as running)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def _exchange(source: Path, target: Path) -> bool:
    """Swap two names in one system call (Linux ``renameat2(RENAME_EXCHANGE)``); False where unsupported."""
    rename = _renameat2()
    if rename is None:
        return False
    at_current_folder, exchange = -100, 2
    if rename(at_current_folder, os.fsencode(source), at_current_folder, os.fsencode(target), exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):  # this file system or kernel cannot exchange
        return False
    raise OSError(code, os.strerror(code), str(target))


def _renameat2():
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


@contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM for the few system calls that swap a folder in (main thread, POSIX only)."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _sync_folder(folder: Path) -> None:
    """Flush a folder's entries, so a rename survives a crash (a no-op where folders cannot be opened)."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
