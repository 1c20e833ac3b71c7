"""Interrupt ``glovev fit`` at random moments and check what it leaves on disk (a check, not a timing).

Usage: python bench/fault_injection.py [--trials 200] [--seed 0] [--jobs 2]

Each trial prepares a folder holding a file of the user's and, in half the trials, a complete
model from an earlier fit (another seed); then it runs ``glovev fit`` on a small corpus (the first
3,000 paragraphs of the embedded corpus, D = 50) with ``--output`` in that folder and sends it
SIGINT, SIGTERM or SIGKILL, either at a random moment of the whole run (start-up, counting,
training, covariances, save, report) or during the save (a random moment after the save's staging
folder appears beside the model, within 1.5 times the save's measured length). It then checks:

- the model folder is the previous model (every file byte for byte), or a new complete model equal
  to an uninterrupted fit with the same seed (vectors, covariances, metadata but its timings), or
  absent when there was none: nothing else;
- the user's file is unchanged and the folder holds nothing new but, after SIGKILL only, the
  temporaries of the killed process (hidden ``.model.glovev-PID-*.partial``) and its lock file
  (``.model.glovev-lock``, whose lock ended with the process), which the next save to that folder
  removes (checked by saving again);
- for SIGINT and SIGTERM, once the command has started: no traceback on stderr and the exit status
  130 or 143 (0 if it had finished). A signal that arrives while Python is still importing numpy
  and gensim, before ``glovev`` runs, or after ``glovev`` has returned, while Python exits, meets
  Python's own handling (for SIGINT during the imports, a ``KeyboardInterrupt`` traceback, or an
  exit status of 1 where an import turned it into another error); those trials are counted apart.

Prints one row per signal and moment with the outcomes, and exits non-zero if any check failed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import glovev_ext

FIT = ["--n-components", "50", "--epochs", "3", "--n-jobs", "1"]
SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGKILL": signal.SIGKILL}
# the command's statuses: its own on SIGINT and SIGTERM, 0 if it had finished; -N: killed by signal N
_EXPECTED_STATUS = {"SIGINT": {130, 0}, "SIGTERM": {143, 0}, "SIGKILL": {-9, 0}}
STAGING = ".partial"  # the save writes a hidden folder beside the model whose name ends so, then swaps it in
SAVED = "saved:"


def fit_command(corpus: Path, output: Path, seed: int) -> list[str]:
    return [sys.executable, "-m", "glovev_ext", "fit", str(corpus), "--output", str(output), *FIT,
            "--random-state", str(seed)]


def environment() -> dict:
    return {**os.environ, "PYTHONUNBUFFERED": "1", "OPENBLAS_NUM_THREADS": "1"}


def files(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())} if folder.is_dir() else {}


def model_state(folder: Path) -> dict | None:
    """What identifies a model's content: its arrays and its metadata without timings (None if it does not load)."""
    try:
        kv, metadata = glovev_ext.load_model(folder, mmap=None)
    except (FileNotFoundError, ValueError, OSError):
        return None
    metadata = {k: v for k, v in metadata.items() if k != "seconds"}
    rows = [kv.covariance_row(key) for key in kv.index_to_key if kv.has_covariance(key)]
    factors = kv.covariance_store.factor(rows[0]).lower() if rows else None
    return {"metadata": json.dumps(metadata, sort_keys=True), "vectors": kv.vectors.tobytes(),
            "words": tuple(kv.index_to_key), "first factor": None if factors is None else factors.tobytes(),
            "n factors": len(rows)}


def _save_started(folder: Path, process: subprocess.Popen) -> float:
    """When the save's staging folder appears beside the model (or the process ends)."""
    folder.mkdir(parents=True, exist_ok=True)
    while process.poll() is None and not any(p.name.endswith(STAGING) for p in folder.iterdir()):
        time.sleep(0.001)
    return time.monotonic()


def timeline(corpus: Path, work: Path) -> dict:
    """Seconds from the start to the save's start, to its end, and to the exit, of one full run."""
    output = work / "timeline" / "model"
    start = time.monotonic()
    process = subprocess.Popen(fit_command(corpus, output, 0), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, env=environment())
    marks = {"before save": _save_started(output.parent, process) - start}
    for line in process.stdout:
        if line.startswith(SAVED):
            marks["saved"] = time.monotonic() - start
    process.wait()
    marks["exit"] = time.monotonic() - start
    return marks


@dataclass
class Setup:
    """What every trial shares: the corpus, the earlier model, what an uninterrupted fit writes, and its timeline."""

    corpus: Path
    work: Path
    previous: Path
    expected_state: dict
    expected_files: set
    reference_kv: glovev_ext.KeyedVectorsWithVariance
    marks: dict


def trial(number: int, setup: Setup, rng: random.Random) -> dict:
    name = rng.choice(list(SIGNALS))
    during_save = rng.random() < 0.5
    with_previous = rng.random() < 0.5
    folder = setup.work / f"trial_{number}"
    folder.mkdir()
    (folder / "notes.txt").write_text("the user's own file\n")
    output = folder / "model"
    if with_previous:
        shutil.copytree(setup.previous, output)
    before = {"model": files(output), "notes": (folder / "notes.txt").read_bytes()}
    marks = setup.marks
    save_length = marks["saved"] - marks["before save"]
    delay = rng.uniform(0, 1.5 * save_length) if during_save else rng.uniform(0, marks["exit"])
    process = subprocess.Popen(fit_command(setup.corpus, output, 0), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=environment())
    errors: list[str] = []
    reader = threading.Thread(target=lambda: errors.append(process.stderr.read()), daemon=True)
    reader.start()
    start = time.monotonic()
    printed = []
    if during_save:
        _save_started(folder, process)
    time.sleep(delay)
    moment = time.monotonic() - start
    if process.poll() is None:
        process.send_signal(SIGNALS[name])
    printed.append(process.stdout.read())
    status = process.wait(timeout=300)
    reader.join(timeout=60)
    err = errors[0] if errors else ""
    # its first line printed: glovev was running, not Python still importing
    started = "".join(printed).startswith("corpus:")

    after = files(output)
    state = model_state(output) if output.exists() else None
    if with_previous and after == before["model"]:
        outcome = "previous"
    elif not with_previous and not output.exists():
        outcome = "absent"
    elif state is not None and state == setup.expected_state and set(after) == setup.expected_files:
        outcome = "new"
    else:
        outcome = "BROKEN"
    others = sorted(p.name for p in folder.iterdir() if p.name not in ("notes.txt", "model"))
    # after SIGKILL: the staging folder, and the lock file (its lock went with the process)
    temporaries = [n for n in others if n.startswith(".model.glovev-") and (n.endswith(".partial")
                                                                              or n == ".model.glovev-lock")]
    problems = []
    if outcome == "BROKEN":
        problems.append(f"model folder is neither previous, new nor absent: {sorted(after)}")
    if (folder / "notes.txt").read_bytes() != before["notes"]:
        problems.append("the user's file changed")
    if set(others) != set(temporaries) or (temporaries and name != "SIGKILL"):
        problems.append(f"left beside the model: {others}")
    if temporaries:
        glovev_ext.save_model(folder / "model", setup.reference_kv, overwrite=True)
        if any(p.name in temporaries for p in folder.iterdir()):
            problems.append("the next save did not remove the temporaries")
    traceback = "Traceback" in err
    if name != "SIGKILL" and traceback and started:
        problems.append(f"traceback after start-up: {err[-500:]}")
    # before glovev runs (Python importing) and after it returned (Python exiting) the signal meets Python's defaults
    finished = "\nnext: " in "".join(printed)
    if started and status not in _EXPECTED_STATUS[name] and not (finished and status == -SIGNALS[name]):
        problems.append(f"exit status {status} after {name}: {err[-500:]}")
    shutil.rmtree(folder)
    return {"signal": name, "moment": "during the save" if during_save else "any time", "outcome": outcome,
            "status": status, "temporaries": len(temporaries), "before start": not started,
            "after the end": finished and status != 0,
            "seconds": moment, "problems": problems}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2, help="trials run at once")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        corpus = work / "small.txt"
        corpus.write_text("\n".join(glovev_ext.load_default_corpus(max_documents=3000)) + "\n", encoding="utf-8")
        previous = work / "previous" / "model"
        subprocess.run(fit_command(corpus, previous, 1), check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env=environment())
        reference = work / "reference" / "model"
        subprocess.run(fit_command(corpus, reference, 0), check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env=environment())
        setup = Setup(corpus, work, previous, model_state(reference), set(files(reference)),
                      glovev_ext.load_model(reference)[0], timeline(corpus, work))
        marks = setup.marks
        size = sum(map(len, files(reference).values())) / 1e6
        print(f"an uninterrupted run: the save starts at {marks['before save']:.2f} s, saved at "
              f"{marks['saved']:.2f} s, exit at {marks['exit']:.2f} s; the model is {size:.1f} MB")
        rngs = [random.Random(options.seed * 100_003 + k) for k in range(options.trials)]
        with ThreadPoolExecutor(options.jobs) as pool:
            results = list(pool.map(lambda k: trial(k, setup, rngs[k]), range(options.trials)))
    table = Counter((r["signal"], r["moment"], r["outcome"]) for r in results)
    print(f"{options.trials} interrupted fits: outcome of the model folder by signal and moment")
    print(f"{'signal':8} {'moment':16} {'previous':>9} {'new':>5} {'absent':>7} {'BROKEN':>7} {'temporaries left':>17}")
    for name in SIGNALS:
        for moment in ("any time", "during the save"):
            rows = [r for r in results if r["signal"] == name and r["moment"] == moment]
            counts = [table[(name, moment, outcome)] for outcome in ("previous", "new", "absent", "BROKEN")]
            left = sum(r["temporaries"] > 0 for r in rows)
            print(f"{name:8} {moment:16} {counts[0]:9} {counts[1]:5} {counts[2]:7} {counts[3]:7} {left:17}")
    print(f"signals that met Python's own handling: {sum(r['before start'] for r in results)} while it was still "
          f"importing, before glovev ran (a KeyboardInterrupt traceback for SIGINT), and "
          f"{sum(r['after the end'] for r in results)} after glovev had finished, while Python was exiting")
    statuses = Counter((r["signal"], r["status"]) for r in results)
    print("exit statuses: " + ", ".join(f"{name} {status}: {n}" for (name, status), n in sorted(statuses.items())))
    problems = [(k, p) for k, r in enumerate(results) for p in r["problems"]]
    for k, problem in problems:
        print(f"trial {k}: {problem}")
    print(f"checks failed: {len(problems)}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
