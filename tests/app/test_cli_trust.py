"""The command line with files and the terminal: it touches only what it was asked to write, checks
before working, and ends every failure, interruption and closed pipe in one line and a conventional
exit status."""

from __future__ import annotations

import argparse
import errno
import gc
import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import glovev_ext
from glovev_ext import _model_folder, cli
from glovev_ext.cli import main

FIT = ["--n-components", "8", "--epochs", "3", "--quiet", "--n-jobs", "1"]


def run(capsys, *args) -> tuple[int, str, str]:
    status = main(list(map(str, args)))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None, p.stat().st_mode)
            for p in sorted(folder.rglob("*"))}


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def corpus_never_read(monkeypatch):
    """Fails the test if the corpus is read (to prove that a check came before the work)."""
    def read(self):
        raise AssertionError("the corpus was read")

    monkeypatch.setattr(glovev_ext.LineCorpus, "__iter__", read)


def test_fit_refuses_a_folder_that_is_not_a_model_and_leaves_it_byte_for_byte(corpus_file, capsys, tmp_path,
                                                                               corpus_never_read):
    sandbox = tmp_path / "sandbox"
    (sandbox / "data").mkdir(parents=True)
    (sandbox / "precious.txt").write_text("precious\n")
    (sandbox / "data" / "notes.md").write_text("# notes\n")
    before = snapshot(tmp_path)
    status, out, err = run(capsys, "fit", corpus_file, "--output", sandbox, *FIT)
    assert status == 2 and out == ""
    assert re.fullmatch(r"glovev: error: .*sandbox is a folder that is not a glovev model \(it holds 'data', "
                        r"'precious.txt'\); .*--overwrite.*", one_error_line(err))
    assert snapshot(tmp_path) == before


def test_fit_refuses_the_working_folder(corpus_file, capsys, tmp_path, monkeypatch, corpus_never_read):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.csv").write_text("1\n")
    (tmp_path / "keep.txt").write_text("keep\n")
    before = snapshot(tmp_path)
    for output in (".", str(tmp_path)):
        status, _, err = run(capsys, "fit", corpus_file, "--output", output, *FIT)
        assert status == 2 and "is a folder that is not a glovev model" in one_error_line(err)
    assert snapshot(tmp_path) == before


def test_overwrite_replaces_the_folder_it_names_and_nothing_else(corpus_file, capsys, tmp_path):
    (tmp_path / "sandbox").mkdir()
    (tmp_path / "sandbox" / "precious.txt").write_text("precious\n")
    (tmp_path / "beside.txt").write_text("beside\n")
    status, _, _ = run(capsys, "fit", corpus_file, "--output", tmp_path / "sandbox", "--overwrite", *FIT)
    assert status == 0
    assert sorted(p.name for p in (tmp_path / "sandbox").iterdir()) == [
        "covariance_rows.npy", "covariances.store", "expando_count.npy", "manifest.json", "metadata.json", "model.json",
        "prior_covariance.npy", "prior_mean.npy", "vectors.npy"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["beside.txt", "sandbox"]


def test_fit_replaces_its_own_model_and_says_so_in_the_help(corpus_file, model_dir, capsys, tmp_path):
    import shutil
    shutil.copytree(model_dir, tmp_path / "model")
    status, out, _ = run(capsys, "fit", corpus_file, "--output", tmp_path / "model", *FIT)
    assert status == 0 and f"saved: {tmp_path / 'model'}" in out
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "replaced only if it is a saved model or empty" in help_text and "--overwrite" in help_text


@pytest.mark.parametrize("output, message", [
    ("corpus.txt/model", r"corpus\.txt is a file, so it cannot hold a model"),
    ("corpus.txt", r"corpus\.txt is a file, not a model folder"),
    ("x" * 300, r"a name in it is 300 bytes long"),
])
def test_outputs_that_cannot_be_a_model_folder_are_refused_before_the_work(corpus_file, capsys, monkeypatch,
                                                                           corpus_never_read, output, message):
    monkeypatch.chdir(corpus_file.parent)
    before = snapshot(corpus_file.parent)
    status, out, err = run(capsys, "fit", corpus_file, "--output", output, *FIT)
    assert status == 2 and out == "" and re.search(message, one_error_line(err))
    assert snapshot(corpus_file.parent) == before


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES, errno.ENOSPC])
def test_an_unwritable_location_is_refused_in_a_second_before_any_counting(corpus_file, capsys, tmp_path,
                                                                           monkeypatch, corpus_never_read, code):
    real_mkdir = os.mkdir

    def refused(path, *args, **kwargs):
        if Path(path).parent == tmp_path:
            raise OSError(code, os.strerror(code), str(path))
        return real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", refused)
    started = time.perf_counter()
    status, out, err = run(capsys, "fit", corpus_file, "--output", tmp_path / "model", *FIT)
    assert time.perf_counter() - started < 1.0
    assert status == 1 and out == ""
    assert one_error_line(err).startswith(f"glovev: error: cannot write a model in {tmp_path}: {os.strerror(code)}")
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_during_the_save_keeps_the_previous_model(corpus_file, model_dir, capsys, tmp_path, monkeypatch):
    import shutil
    shutil.copytree(model_dir, tmp_path / "model")
    before = snapshot(tmp_path)

    def full(path, values):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(_model_folder, "_write_array", full)
    status, _, err = run(capsys, "fit", corpus_file, "--output", tmp_path / "model", *FIT)
    line = one_error_line(err)
    assert status == 1 and "No space left on device" in line and "free space there, or write elsewhere" in line
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("error, status, message", [
    (PermissionError(errno.EACCES, "Permission denied", "/data/corpus.txt"), 1,
     "glovev: error: /data/corpus.txt: Permission denied"),
    (OSError(errno.EIO, "Input/output error"), 1, "glovev: error: Input/output error"),
    (IsADirectoryError(errno.EISDIR, "Is a directory", "/data"), 2, "glovev: error: /data: Is a directory"),
    (ImportError("safetensors is needed: pip install 'glovev-ext[safetensors]'"), 1,
     "glovev: error: safetensors is needed: pip install 'glovev-ext[safetensors]'"),
    (RuntimeError("an assumption broke"), 1, "glovev: internal error (RuntimeError: an assumption broke); this is a "
                                             "bug: run the command again with GLOVEV_TRACEBACK=1 and report the "
                                             "traceback"),
    (KeyboardInterrupt(), 130, "glovev: interrupted"),
])
def test_every_failure_is_one_line_with_a_conventional_status(model_dir, capsys, monkeypatch, error, status, message):
    def fails(*args, **kwargs):
        raise error

    monkeypatch.setattr(cli, "_open_model", fails)
    monkeypatch.delenv(cli.TRACEBACK_VARIABLE, raising=False)
    got, out, err = run(capsys, "info", model_dir)
    assert got == status and one_error_line(err) == message and out == ""


def test_the_traceback_is_shown_on_request(model_dir, capsys, monkeypatch):
    def fails(*args, **kwargs):
        raise RuntimeError("an assumption broke")

    monkeypatch.setattr(cli, "_open_model", fails)
    monkeypatch.setenv(cli.TRACEBACK_VARIABLE, "1")
    status, _, err = run(capsys, "info", model_dir)
    assert status == 1 and "Traceback (most recent call last)" in err and "RuntimeError: an assumption broke" in err
    assert err.strip().splitlines()[-1].startswith("glovev: internal error")


def _environment() -> dict:
    return {**os.environ, "PYTHONUNBUFFERED": "1", "OPENBLAS_NUM_THREADS": "1"}


def _start_fit(corpus: Path, output: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "glovev_ext", "fit", str(corpus), "--output", str(output),
                             "--n-components", "8", "--epochs", "40", "--n-jobs", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_environment())


def _wait_for(process: subprocess.Popen, marker: str, timeout: float = 120.0) -> str:
    """Read the process's log (stderr) until a line holds ``marker``; return what was read."""
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        seen.append(line)
        if marker in line:
            return "".join(seen)
    raise AssertionError(f"{marker!r} never appeared: {''.join(seen)}")


@pytest.mark.parametrize("sent, raised", [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, cli._Terminated)])
def test_a_signal_that_lands_in_a_finaliser_still_stops_the_command(sent, raised):
    """Python ignores an exception raised inside a ``__del__`` (e.g. a progress bar's): the signal is sent again."""
    received = []

    class Finalised:
        def __del__(self):
            os.kill(os.getpid(), sent)
            for _ in range(100_000):  # the handler runs here, inside the finaliser, and its exception is lost
                pass

    hook, handler = sys.unraisablehook, signal.getsignal(sent)
    started = time.time()
    with pytest.raises(raised):
        with cli._signals_raised(received):
            Finalised()  # collected at once
            assert received == [sent], "the signal did not land inside the finaliser"
            while time.time() - started < 10:
                time.sleep(0.001)
    assert received == [sent, sent] and time.time() - started < 5
    assert sys.unraisablehook is hook and signal.getsignal(sent) is handler  # put back as they were


@pytest.mark.parametrize("in_a_cycle", [False, True])
@pytest.mark.parametrize("sent, raised", [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, cli._Terminated)])
def test_an_object_torn_by_the_signal_fails_in_its_finaliser_quietly(sent, raised, in_a_cycle, monkeypatch, caplog,
                                                                     request):
    """The signal's exception can leave an object half-built (llvmlite's, while numba compiled): its finaliser's
    error is logged for debugging, not printed as a traceback, also when only the garbage collector finds the
    object; before any signal such errors still print."""

    class Torn:
        def __init__(self):
            self.cycle = [self] if in_a_cycle else None
            os.kill(os.getpid(), sent)
            for _ in range(100_000):  # the handler raises here, before the attribute is set
                pass
            self.pointer = None

        def __del__(self):
            self.pointer = self.pointer or None  # AttributeError when the constructor was torn

    class Broken:
        def __del__(self):
            raise RuntimeError("a finaliser's own bug")

    received, printed = [], []
    gc.disable()  # a collection of its own would finalise the object in a cycle before the command's end does
    request.addfinalizer(gc.enable)
    monkeypatch.setattr(sys, "unraisablehook", printed.append)  # the hook that prints, as Python's default does
    caplog.set_level(logging.DEBUG, logger="glovev_ext.cli")
    with cli._signals_raised(received):
        Broken()
        assert [type(unraisable.exc_value) for unraisable in printed] == [RuntimeError]  # no signal yet
        try:
            Torn()
        except raised:
            pass  # as the command's own handler does; the torn object goes with the exception's traceback
        else:
            raise AssertionError("the signal did not stop the constructor")
    assert received == [sent] and [type(unraisable.exc_value) for unraisable in printed] == [RuntimeError]
    assert [record.exc_info[0] for record in caplog.records] == [AttributeError]


@pytest.mark.parametrize("stage, marker", [("counting", "vocabulary:"), ("training", "epoch 1/40")])
@pytest.mark.parametrize("sent, status, word", [(signal.SIGINT, 130, "interrupted"),
                                                (signal.SIGTERM, 143, "terminated")])
def test_a_signal_mid_fit_ends_in_one_line_and_leaves_no_model(corpus_file, tmp_path, stage, marker, sent, status,
                                                               word):
    (tmp_path / "beside.txt").write_text("beside\n")
    process = _start_fit(corpus_file, tmp_path / "model")
    _wait_for(process, marker)
    process.send_signal(sent)
    out, err = process.communicate(timeout=120)
    lines = [line for line in err.splitlines() if line.startswith("glovev:")]
    assert process.returncode == status, err
    assert "Traceback" not in err and lines == [f"glovev: {word}; no model was saved, {tmp_path / 'model'} is as "
                                                f"it was"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["beside.txt"]


def test_a_closed_pipe_ends_quietly(model_dir):
    command = [sys.executable, "-m", "glovev_ext", "neighbors", str(model_dir), "man", "--topn", "300",
               "--draws", "50"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_environment())
    first = process.stdout.readline()
    process.stdout.close()  # as `| head -1` does
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 0
    assert first.startswith(b"nearest neighbours of 'man'") and "Traceback" not in err and "Broken" not in err, err


def test_a_fit_whose_reader_went_away_still_saves(corpus_file, tmp_path):
    command = [sys.executable, "-m", "glovev_ext", "fit", str(corpus_file), "--output", str(tmp_path / "model"), *FIT]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_environment())
    process.stdout.readline()
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 0 and "Traceback" not in err, err
    assert glovev_ext.load_model(tmp_path / "model")[0].vector_size == 8


@pytest.mark.parametrize("command", [["plot", "{model}", "variance", "--output", "{out}"],
                                     ["neighbors", "{model}", "man", "--plot", "{out}"],
                                     ["semeval", "{model}", "--plot", "{out}"]])
@pytest.mark.parametrize("read_only", [False, True])
def test_a_figure_path_that_cannot_be_written_is_refused_before_the_work(model_dir, capsys, tmp_path, monkeypatch,
                                                                         command, read_only):
    def never(*args, **kwargs):
        raise AssertionError("the model was opened before the figure's path was checked")

    def read_only_mkdir(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(cli, "_open_model", never)
    (tmp_path / "folder").mkdir()
    if read_only:
        out, status, message = tmp_path / "folder" / "figure.png", 1, f"cannot write the figure in {tmp_path}"
        monkeypatch.setattr(os, "mkdir", read_only_mkdir)
    else:
        out, status, message = tmp_path / "folder", 2, "is a folder: give the figure a file name"
    args = [a.replace("{model}", str(model_dir)).replace("{out}", str(out)) for a in command]
    got, _, err = run(capsys, *args)
    assert got == status and message in one_error_line(err)


STATISTIC_COMMANDS = ("similarity", "neighbors", "weat", "bias", "evaluate", "semeval")
TEST_COMMANDS = ("similarity", "neighbors", "weat", "bias")
SHARED = ("--format", "--confidence-level", "--missing", "--draws", "--random-state", "--quiet")
SHARED_BY_TESTS = ("--method", "--reference", "--scale")


def _options(command: str) -> dict:
    """``{flag: (default, choices, help)}`` of a subcommand, read from the parser behind ``--help``."""
    parser = cli._build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {flag: (action.default, action.choices, action.help) for action in subparsers.choices[command]._actions
            for flag in action.option_strings if action.help != argparse.SUPPRESS}


def _help(capsys, command: str) -> str:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    return " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("shared, commands", [(SHARED, STATISTIC_COMMANDS), (SHARED_BY_TESTS, TEST_COMMANDS)])
def test_every_query_command_lists_the_same_shared_options_with_the_same_defaults(capsys, shared, commands):
    options = {command: _options(command) for command in commands}
    for flag in shared:
        described = {command: options[command].get(flag) for command in commands}
        assert None not in described.values(), f"{flag} missing: {described}"
        assert len({repr(value) for value in described.values()}) == 1, f"{flag} differs: {described}"
        default = described[commands[0]][0]
        for command in commands:
            help_text = _help(capsys, command)
            assert flag in help_text and (default is False or f"default {default}" in help_text), (command, flag)
    assert options["similarity"]["--missing"][0] == "raise" and options["neighbors"]["--draws"][0] == 2000


def test_options_that_would_do_nothing_are_not_offered():
    assert "--format" not in _options("plot")
    assert _options("info")["--format"][1] == ("table", "json")
    for command in ("evaluate", "semeval"):  # rank statistics: Monte Carlo only
        assert not set(SHARED_BY_TESTS) & set(_options(command))
    assert "--alternative" not in _options("neighbors")  # its tests are one-sided by construction


@pytest.mark.parametrize("args", [
    ["similarity", "{model}", "man", "woman"],
    ["similarity", "{model}", "man", "woman", "--versus", "man", "boy"],
    ["neighbors", "{model}", "man", "--topn", "5", "--draws", "100"],
    ["weat", "{model}", "--x", "he,man", "--y", "she,woman", "--a", "said,told", "--b", "thought,knew"],
    ["bias", "{model}", "--group-a", "he,man", "--group-b", "she,woman", "--attributes", "strong,good,kind"],
    ["evaluate", "{model}", "--missing", "drop", "--draws", "50"],
])
def test_tables_fit_100_columns(model_dir, capsys, args):
    status, out, err = run(capsys, *[a.replace("{model}", str(model_dir)) for a in args])
    assert status == 0 and max(map(len, out.splitlines())) <= 100, out


@pytest.mark.parametrize("args, message", [
    (["similarity", "{model}", "man", "woman", "--draws", "0"], "--draws must be at least 2, got 0"),
    (["neighbors", "{model}", "man", "--topn", "0"], "--topn must be at least 2, got 0"),
    (["weat", "{model}", "--x", "he", "--y", "she", "--a", "a", "--b", "b", "--permutations", "0"],
     "--permutations must be at least 1, got 0"),
    (["evaluate", "{model}", "--confidence-level", "95"], "--confidence-level must be between 0 and 1 (e.g. 0.95)"),
])
def test_query_counts_are_checked_in_the_command_lines_words_before_the_model_is_opened(model_dir, capsys,
                                                                                       monkeypatch, args, message):
    def never(*args, **kwargs):
        raise AssertionError("the model was opened before the options were checked")

    monkeypatch.setattr(cli, "_open_model", never)
    status, out, err = run(capsys, *[a.replace("{model}", str(model_dir)) for a in args])
    assert status == 2 and out == "" and message in one_error_line(err)


def test_an_interruption_just_after_the_new_model_is_in_place_says_it_was_saved(corpus_file, model_dir, capsys,
                                                                                tmp_path, monkeypatch):
    import shutil
    from glovev_ext import atomic

    shutil.copytree(model_dir, tmp_path / "model")

    real_sync = atomic._sync_folder

    def interrupted(folder):
        if folder == tmp_path:  # right after the exchange (the folder's own files are synced before)
            raise KeyboardInterrupt
        real_sync(folder)

    monkeypatch.setattr(atomic, "_sync_folder", interrupted)
    status, _, err = run(capsys, "fit", corpus_file, "--output", tmp_path / "model", *FIT, "--random-state", "1")
    line = one_error_line(err)
    assert status == 130 and line == f"glovev: interrupted; the model had been saved to {tmp_path / 'model'}"
    metadata = glovev_ext.load_model(tmp_path / "model")[1]
    assert metadata["glove"]["random_state"] == 1 and sorted(p.name for p in tmp_path.iterdir()) == ["model"]


@pytest.mark.parametrize("sent, status, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_that_library_code_turned_into_another_error_still_reads_as_the_signal(model_dir, capsys, monkeypatch,
                                                                                      sent, status, word):
    """numpy's tofile turns an exception raised in its isinstance check into a TypeError about the file."""
    def converts(*args, **kwargs):
        try:
            os.kill(os.getpid(), sent)
            time.sleep(5)
        except (KeyboardInterrupt, SystemExit):
            raise TypeError("expected str, bytes or os.PathLike object, not BufferedWriter") from None

    monkeypatch.setattr(cli, "_open_model", converts)
    got, _, err = run(capsys, "info", model_dir)
    assert got == status and one_error_line(err) == f"glovev: {word}"
