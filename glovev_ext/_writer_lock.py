"""One writer per output: a lock beside the target, held from the start of the work to the end of the save.

The lock is a file ``.NAME.glovev-lock`` beside the target, locked with ``flock``: the kernel lets go
of it when its process ends, however it ends (``kill -9`` included), so a lock left by a dead process
never blocks anyone. The file holds who took it (process id, host, command, time) for the message a
second writer gets. Folders on the way to the target that the lock had to create are removed again
if the work leaves them empty. A thread that holds the lock for a target takes it again freely (a fit takes it
at its start, the save inside it takes it again); another thread, like another process, is refused.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_held: dict[tuple[int, Path], int] = {}  # (thread, target) -> how many times that thread holds the target's lock


class ModelLockedError(OSError):
    """Another process is writing the same output; the message names it."""


def lock_path(target: Path) -> Path:
    """The lock file of ``target``: hidden, beside it."""
    return target.with_name(f".{target.name}.glovev-lock")


@contextmanager
def writer_lock(target: str | os.PathLike) -> Iterator[None]:
    """Hold the lock of ``target`` (an absolute path) for the block; refuse at once if another process holds it.

    Raises
    ------
    ModelLockedError
        Another running process holds the lock (the message names it and the lock file).
    """
    target = Path(target)
    key = (threading.get_ident(), target)
    if _held.get(key):
        _held[key] += 1
        try:
            yield
        finally:
            _held[key] -= 1
        return
    created = [folder for folder in reversed(target.parents) if not os.path.lexists(folder)]
    handle = _take(target)
    _held[key] = 1
    try:
        yield
    finally:
        del _held[key]
        _release(target, handle)
        for folder in reversed(created):  # folders made for the lock and left empty (the work failed): not left behind
            try:
                folder.rmdir()
            except OSError:
                break


def _take(target: Path) -> int:
    path = lock_path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        handle = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o666)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(handle)
            os.close(handle)
            raise ModelLockedError(f"{target} is being written by another process ({holder}); wait for it to "
                                   f"finish, or write elsewhere (its lock is {path})") from None
        except BaseException:
            os.close(handle)
            raise
        # The previous holder may have removed the file between our open and our lock: lock the file at the path.
        try:
            same = os.path.samestat(os.fstat(handle), os.stat(path, follow_symlinks=False))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(handle)
    holder = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.strftime("%Y-%m-%d %H:%M:%S"),
              "command": " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))[:200]}
    os.ftruncate(handle, 0)
    os.pwrite(handle, json.dumps(holder).encode("utf-8"), 0)
    return handle


def _release(target: Path, handle: int) -> None:
    try:
        os.unlink(lock_path(target))  # while still locked: no one else can hold this file now
    except OSError:
        pass
    finally:
        os.close(handle)


def _holder(handle: int) -> str:
    """Who holds a lock, from what its holder wrote in the file (bounded read)."""
    try:
        holder = json.loads(os.pread(handle, 4096, 0).decode("utf-8"))
        return f"process {holder['pid']} on {holder['host']}, '{holder['command']}', since {holder['started']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "its details are not readable"
