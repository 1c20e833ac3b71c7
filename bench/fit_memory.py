"""Peak resident memory of `glovev fit`, stage by stage and for the whole process.

Usage: python bench/fit_memory.py [--corpus embedded|gutenberg_us_10m|gutenberg_us_31m] [--max-memory 600M]
[-- more glovev fit options, e.g. -- --n-components 50 --epochs 1]

The command runs in a fresh child process (``glovev_ext.cli.main``, as ``glovev fit`` runs it,
with INFO logging). Every log line and every line the command prints closes a stage: the child
reads its peak resident set since the stage began (``VmHWM`` in /proc/self/status) and resets it
(``5`` written to /proc/self/clear_refs), so each stage's peak is exact, not sampled. The whole
process's peak is the largest of them (the reset resets ``ru_maxrss`` too). The peaks include the interpreter and the libraries,
and the pages of files mapped into memory while they are resident (a matrix counted under a budget
is read through such a mapping).

For issue 26's check: ``python bench/fit_memory.py --corpus gutenberg_us_10m --max-memory 600M --
--n-components 50 --epochs 1`` (the criterion: a whole-process peak below 900 MB).
"""

from __future__ import annotations

import argparse
import io
import logging
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path

from _data import SHARED_DATA
from _peaks import peak_since_last_call

CORPORA = {"embedded": None, "gutenberg_us_10m": SHARED_DATA / "gutenberg_us_10m" / "gutenberg_us_10m.txt.gz",
           "gutenberg_us_31m": SHARED_DATA / "gutenberg_us_31m" / "gutenberg_us.txt.gz"}


class _StageMarks:
    """Each stage's peak, closed by a log record or a printed line."""

    def __init__(self):
        self.started = time.perf_counter()
        self.stages: list[tuple[float, int, str]] = []

    def close(self, text: str) -> None:
        text = text.strip()
        if text:
            self.stages.append((time.perf_counter() - self.started, peak_since_last_call(), text))


class _MarkingHandler(logging.Handler):
    def __init__(self, marks: _StageMarks):
        super().__init__(level=logging.INFO)
        self.marks = marks

    def emit(self, record: logging.LogRecord) -> None:
        self.marks.close(f"[log] {record.name.removeprefix('glovev_ext.')}: {record.getMessage()}")


class _MarkingOutput(io.TextIOBase):
    def __init__(self, marks: _StageMarks):
        self.marks = marks

    def write(self, text: str) -> int:
        for line in text.splitlines():
            self.marks.close(line)
        return len(text)


def run_fit(argv: list[str]) -> tuple[list[tuple[float, int, str]], int]:
    """Run ``glovev fit argv`` in this process; each stage's (seconds at its end, peak bytes, closing line)."""
    from glovev_ext import cli
    marks = _StageMarks()
    peak_since_last_call()
    logging.getLogger("glovev_ext").addHandler(_MarkingHandler(marks))
    sys.stdout = _MarkingOutput(marks)
    try:
        status = cli.main(["fit", *argv])
    finally:
        sys.stdout = sys.__stdout__
    return marks.stages, status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="embedded", choices=tuple(CORPORA))
    parser.add_argument("--max-memory", default="600M", help="--max-memory of the fit (default %(default)s; "
                                                             "'none' for no budget)")
    parser.add_argument("fit_options", nargs="*", help="more options of glovev fit, after --")
    args = parser.parse_args()
    path = CORPORA[args.corpus]
    if path is not None and not path.exists():
        sys.exit(f"{path} is absent: this check needs ../shared/data")
    with tempfile.TemporaryDirectory() as folder:
        argv = [*([str(path)] if path else []), "--output", str(Path(folder) / "model")]
        argv += [] if args.max_memory == "none" else ["--max-memory", args.max_memory]
        argv += args.fit_options
        context = multiprocessing.get_context("spawn")
        with context.Pool(1) as pool:
            stages, status = pool.apply(run_fit, (argv,))
            pool.close()
            pool.join()
    shown = [a for k, a in enumerate(argv) if a != "--output" and (k == 0 or argv[k - 1] != "--output")]
    print(f"glovev fit {' '.join(shown)}: exit status {status}")
    print(f"{'ends at s':>9} {'stage peak MiB':>15}  stage (closed by)")
    for seconds, peak, text in stages:
        print(f"{seconds:9.1f} {peak / 2**20:15.0f}  {text[:110]}")
    whole = max(peak for _, peak, _ in stages)
    print(f"whole process: peak resident memory {whole / 2**20:.0f} MiB ({whole / 1e6:.0f} MB)")


if __name__ == "__main__":
    main()
