"""Temporary files and folders in TMPDIR, named so that the next run removes what a killed one left.

A name is ``glovev-KIND-PID-RANDOM``: a later call that makes one first removes those whose process
is no longer running (``kill -9`` runs no clean-up), and never those of a running process.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from pathlib import Path

from .atomic import process_running

logger = logging.getLogger(__name__)

_NAME = re.compile(r"glovev-(spill|covariances|train|dask-matrix|spool)-(\d+)-.+")


def temporary_prefix(kind: str) -> str:
    """The prefix of this process's temporaries of ``kind`` (``spill``, ``covariances``, ``train``...)."""
    return f"glovev-{kind}-{os.getpid()}-"


def make_temporary_folder(kind: str) -> str:
    """A new folder in TMPDIR for this process's temporaries of ``kind``, after removing those of dead processes."""
    remove_dead_temporaries()
    return tempfile.mkdtemp(prefix=temporary_prefix(kind))


def remove_dead_temporaries(folder: str | os.PathLike | None = None) -> list[Path]:
    """Remove the temporaries in ``folder`` (TMPDIR by default) of glovev processes no longer running; return them."""
    folder = Path(tempfile.gettempdir() if folder is None else folder)
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = _NAME.fullmatch(entry.name)
        if match is None or process_running(int(match.group(2))):
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            Path(entry.path).unlink(missing_ok=True)
        removed.append(Path(entry.path))
    if removed:
        logger.info("removed %d temporaries in %s left by glovev processes that were killed", len(removed), folder)
    return removed
