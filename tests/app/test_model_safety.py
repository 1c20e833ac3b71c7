"""A model folder anyone can open safely: data only, checked, read whole, written by one writer (issue 51)."""

from __future__ import annotations

import json
import os
import pathlib
import pickle
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import glovev_ext
from glovev_ext import _model_folder, _temporaries, _writer_lock
from glovev_ext.cli import main

FIT = ["--n-components", "8", "--epochs", "3", "--quiet", "--n-jobs", "1"]
COMMANDS = [["similarity", "{m}", "man", "woman"], ["neighbors", "{m}", "man", "--topn", "3"], ["info", "{m}"],
            ["info", "{m}", "--format", "json"], ["bias", "{m}", "--attributes", "doctor", "--group-a", "he",
                                                   "--group-b", "she"],
            ["weat", "{m}", "--x", "man", "--y", "woman", "--a", "good", "--b", "bad"],
            ["evaluate", "{m}"], ["plot", "{m}", "variance", "--output", "{m}.png"]]


def run(capsys, *args) -> tuple[int, str, str]:
    status = main(list(map(str, args)))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture(scope="module")
def default_model(corpus_file, tmp_path_factory) -> Path:
    """``glovev fit`` with the default recipe (posterior, prior, calibrated noise), small."""
    directory = tmp_path_factory.mktemp("safety") / "model"
    assert main(["fit", str(corpus_file), "--output", str(directory), *FIT]) == 0
    return directory


class _Marker:
    """Unpickling it creates a file: what a hostile pickle could do instead."""

    def __init__(self, path: Path):
        self.path = path

    def __reduce__(self):
        return pathlib.Path.touch, (pathlib.Path(self.path),)


def _hostile(folder: Path, marker: Path, names) -> None:
    folder.mkdir()
    payload = pickle.dumps(_Marker(marker))
    for name in names:
        (folder / name).write_bytes(payload)


ALL_NAMES = ["manifest.json", "metadata.json", "model.json", "vectors.npy", "covariance_rows.npy", "expando_count.npy",
             "prior_mean.npy", "prior_covariance.npy", "covariances.store", "vectors.kv",
             "vectors.kv.covariance_store._factors.npy", "vectors.kv.vectors.npy"]


def test_the_hostile_pickle_of_this_test_does_run_code_when_unpickled(tmp_path):
    """The control: the payload below is live, so the tests that follow would see it run."""
    pickle.loads(pickle.dumps(_Marker(tmp_path / "marker")))
    assert (tmp_path / "marker").exists()


@pytest.mark.parametrize("names", [ALL_NAMES, ["vectors.kv", "metadata.json"]], ids=["every-file", "format-0.3"])
def test_a_folder_of_hostile_pickles_runs_nothing_and_is_refused_in_one_line(tmp_path, capsys, names):
    marker = tmp_path / "marker"
    model = tmp_path / "model"
    _hostile(model, marker, names)
    if names != ALL_NAMES:
        (model / "metadata.json").write_text("{}")  # a folder of 0.3 in every way but its pickle
    with pytest.raises(ValueError):
        glovev_ext.load_model(model)
    for command in COMMANDS:
        status, out, err = run(capsys, *[part.format(m=model) for part in command])
        line = one_line(err)
        assert status == 2 and out == "" and str(model) in line, (command, err)
        if names != ALL_NAMES:
            assert f"glovev upgrade {model}" in line and "can run any code" in line
    assert not marker.exists()


def test_a_folder_of_0_3_is_upgraded_on_request_and_then_answers_as_before(default_model, tmp_path, capsys):
    kv, metadata = glovev_ext.load_model(default_model)
    old = tmp_path / "old"
    old.mkdir()
    kv.save(str(old / "vectors.kv"), sep_limit=1 << 16)  # what save_model wrote before the data-only format
    (old / "metadata.json").write_text(json.dumps(metadata, indent=1), encoding="utf-8")
    status, _, err = run(capsys, "similarity", old, "man", "woman")
    assert status == 2 and "glovev upgrade" in one_line(err)
    status, out, _ = run(capsys, "upgrade", old)
    assert status == 0 and "data files only" in out
    assert not (old / "vectors.kv").exists() and (old / "manifest.json").exists()
    status, upgraded, _ = run(capsys, "similarity", old, "man", "woman", "--format", "csv")
    assert status == 0
    assert upgraded == run(capsys, "similarity", default_model, "man", "woman", "--format", "csv")[1]
    status, _, err = run(capsys, "upgrade", old)
    assert status == 2 and "already a data-only model folder" in one_line(err)


def _damage(source: Path, target: Path, generator: np.random.Generator) -> tuple[str, str]:
    """A copy of ``source`` with one file truncated, one byte changed, or one file deleted."""
    shutil.copytree(source, target)
    files = sorted(p.name for p in target.iterdir())
    name = files[generator.integers(len(files))]
    path = target / name
    data = path.read_bytes()
    kind = ["truncate", "flip", "delete"][generator.integers(3)]
    if kind == "delete":
        path.unlink()
    elif kind == "truncate":
        path.write_bytes(data[:generator.integers(len(data))])
    else:
        position = generator.integers(len(data))
        changed = bytearray(data)
        changed[position] ^= int(generator.integers(1, 256))
        path.write_bytes(bytes(changed))
    return name, kind


def test_a_hundred_random_damages_give_no_answer_and_each_error_names_its_file(default_model, tmp_path, capsys):
    generator = np.random.default_rng(51)
    seen = set()
    for trial in range(100):
        damaged = tmp_path / f"damaged{trial}"
        name, kind = _damage(default_model, damaged, generator)
        seen.add(kind)
        status, out, err = run(capsys, "similarity", damaged, "man", "woman")
        line = one_line(err)
        assert status == 2 and out == "", (name, kind, err)
        assert str(damaged / name) in line or (name == "manifest.json" and "manifest.json" in line), (name, kind, line)
        shutil.rmtree(damaged)
    assert seen == {"truncate", "flip", "delete"}


def test_odd_files_in_a_model_folder_are_refused_without_blocking(default_model, tmp_path, capsys):
    for name, make in [("metadata.json", os.mkfifo), ("manifest.json", os.mkfifo),
                       ("vectors.npy", lambda p: os.symlink("/dev/zero", p)),
                       ("metadata.json", lambda p: os.symlink(default_model / "metadata.json", p))]:
        model = tmp_path / f"odd_{name}_{len(list(tmp_path.iterdir()))}"
        shutil.copytree(default_model, model)
        (model / name).unlink()
        make(model / name)
        started = time.perf_counter()
        status, out, err = run(capsys, "info", model)
        assert status == 2 and out == "" and str(model / name) in one_line(err)
        status, out, err = run(capsys, "fit", "--output", model, *FIT)
        assert status == 2 and str(model) in one_line(err)
        assert time.perf_counter() - started < 5


_WRITER = textwrap.dedent("""
    import sys, time, glovev_ext
    from glovev_ext._writer_lock import ModelLockedError
    kv, _ = glovev_ext.load_model(sys.argv[1], mmap=None)
    kv.vectors *= float(sys.argv[3])
    until = time.time() + float(sys.argv[4])
    saves = 0
    while time.time() < until:
        try:
            glovev_ext.save_model(sys.argv[2], kv, {"tag": sys.argv[3]})
            saves += 1
        except ModelLockedError:
            time.sleep(0.001)
    print(saves)
""")


def test_a_thousand_loads_racing_two_writers_never_see_a_mixed_model(default_model, tmp_path):
    kv, _ = glovev_ext.load_model(default_model, mmap=None)
    target = tmp_path / "raced"
    glovev_ext.save_model(target, kv, {"tag": "1"})
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, str(default_model), str(target), tag, "60"],
                                stdout=subprocess.PIPE, text=True) for tag in ("1", "2")]
    try:
        deadline = time.time() + 30
        while time.time() < deadline and sum(1 for p in tmp_path.iterdir() if p.name.startswith(".raced.glovev-")) == 0:
            time.sleep(0.01)  # the writers are saving
        word = kv.index_to_key[0]
        tags = []
        for _ in range(1000):
            loaded, metadata = glovev_ext.load_model(target)
            tag = float(metadata["tag"])
            np.testing.assert_array_equal(loaded.vectors, kv.vectors * tag)
            np.testing.assert_array_equal(loaded.covariance(word), kv.covariance(word))
            tags.append(metadata["tag"])
    finally:
        for writer in writers:
            writer.kill()
            writer.wait()
    assert {"1", "2"} <= set(tags)


def test_a_second_writer_is_refused_at_its_start_naming_the_first(corpus_file, tmp_path, capsys, monkeypatch):
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from glovev_ext._writer_lock import writer_lock
        with writer_lock({str((tmp_path / 'model').resolve())!r}):
            print("held", flush=True)
            time.sleep(60)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"

        def never(self):
            raise AssertionError("the corpus was read")

        monkeypatch.setattr(glovev_ext.LineCorpus, "__iter__", never)
        started = time.perf_counter()
        status, out, err = run(capsys, "fit", corpus_file, "--output", tmp_path / "model", *FIT)
        assert time.perf_counter() - started < 1.0
        line = one_line(err)
        assert status == 1 and f"process {holder.pid}" in line and "being written by another process" in line
    finally:
        holder.kill()
        holder.wait()
    monkeypatch.undo()
    # the holder died without letting go: its lock file stays, and stops no one
    assert _writer_lock.lock_path((tmp_path / "model").resolve()).exists()
    status, _, _ = run(capsys, "fit", corpus_file, "--output", tmp_path / "model", *FIT)
    assert status == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_two_threads_writing_one_output_are_refused_as_two_processes_are(tmp_path):
    target = tmp_path / "model"
    refused = []
    with _writer_lock.writer_lock(target), _writer_lock.writer_lock(target):  # the same thread again: allowed

        def second():
            try:
                with _writer_lock.writer_lock(target):
                    pass
            except _writer_lock.ModelLockedError as error:
                refused.append(str(error))

        thread = threading.Thread(target=second)
        thread.start()
        thread.join()
    assert len(refused) == 1 and f"process {os.getpid()}" in refused[0]
    assert list(tmp_path.iterdir()) == []


def test_a_full_file_system_is_refused_before_counting_naming_the_path(corpus_file, tmp_path, capsys, monkeypatch):
    real = shutil.disk_usage

    def full(path):
        return real(path)._replace(free=4096)

    def never(self):
        raise AssertionError("the corpus was read")

    monkeypatch.setattr(shutil, "disk_usage", full)
    monkeypatch.setattr(glovev_ext.LineCorpus, "__iter__", never)
    status, out, err = run(capsys, "fit", corpus_file, "--output", tmp_path / "model", *FIT)
    line = one_line(err)
    assert status == 1 and out == "" and f"{tmp_path}: No space left on device for a model" in line
    assert list(tmp_path.iterdir()) == []


def test_a_model_larger_than_the_free_space_is_refused_before_training(corpus_file, tmp_path, capsys, monkeypatch):
    real = shutil.disk_usage
    estimated = []

    def little(path):
        return real(path)._replace(free=glovev_ext.saved_model.MIN_FREE_BYTES + 1)

    def never(*args, **kwargs):
        raise AssertionError("training started")

    real_estimate = _model_folder.model_bytes
    monkeypatch.setattr(shutil, "disk_usage", little)
    monkeypatch.setattr(glovev_ext.GloVeVEstimator, "fit", never)
    monkeypatch.setattr("glovev_ext.pipeline.model_bytes", lambda *a: estimated.append(real_estimate(*a)) or
                        estimated[-1])
    status, out, err = run(capsys, "fit", corpus_file, "--output", tmp_path / "model", "--n-components", "50",
                           "--epochs", "3", "--quiet", "--n-jobs", "1")
    line = one_line(err)
    assert status == 1 and "No space left on device for the model: it needs about" in line, line
    assert estimated[0] > glovev_ext.saved_model.MIN_FREE_BYTES and list(tmp_path.iterdir()) == []


def test_the_model_size_estimate_is_near_a_saved_model(default_model):
    kv, _ = glovev_ext.load_model(default_model)
    size = sum(p.stat().st_size for p in default_model.iterdir())
    estimate = _model_folder.model_bytes(len(kv), kv.vector_size)
    assert 0.8 * size < estimate < 1.5 * size


def test_a_corpus_from_a_pipe_gives_the_model_and_checksum_of_its_file(corpus_file, tmp_path):
    glovev = [sys.executable, "-m", "glovev_ext", "fit", "--no-noise-calibration", *FIT]
    subprocess.run([*glovev, str(corpus_file), "--output", str(tmp_path / "from_file")], check=True)
    with open(corpus_file, "rb") as stream:
        subprocess.run([*glovev, "/dev/stdin", "--output", str(tmp_path / "from_pipe")], stdin=stream, check=True)
    from_file, from_pipe = (json.loads((tmp_path / name / "metadata.json").read_text())
                            for name in ("from_file", "from_pipe"))
    assert from_pipe["corpus_sha256"] == from_file["corpus_sha256"] is not None
    for name in ("vectors.npy", "covariances.store", "model.json"):
        assert (tmp_path / "from_file" / name).read_bytes() == (tmp_path / "from_pipe" / name).read_bytes()


def test_the_library_refuses_a_pipe_as_a_corpus(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ValueError, match="fifo is a pipe or a device, which can be read only once"):
        glovev_ext.LineCorpus(tmp_path / "fifo")


def test_temporaries_of_killed_runs_are_removed_by_the_next_run_and_others_kept(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    left = [tmp_path / f"glovev-{kind}-{dead_pid}-abc" for kind in ("spill", "covariances", "train", "spool")]
    for path in left:
        path.mkdir()
        (path / "part").write_bytes(b"x" * 100)
    (tmp_path / f"glovev-spool-{dead_pid}-file").write_bytes(b"x")
    running = tmp_path / f"glovev-spill-{os.getpid()}-mine"
    running.mkdir()
    other = tmp_path / "glovev-notes"
    other.mkdir()
    folder = _temporaries.make_temporary_folder("spill")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([running.name, other.name, Path(folder).name])


def test_a_killed_fit_leaves_no_temporary_after_the_next_run(corpus_file, tmp_path):
    environment = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    big = tmp_path / "big.txt"
    big.write_text(corpus_file.read_text() * 4)
    fit = [sys.executable, "-m", "glovev_ext", "fit", "--max-memory", "2M", *FIT]
    process = subprocess.Popen([*fit, str(big), "--output", str(tmp_path / "m1")], env=environment)
    deadline = time.time() + 120
    # killed while its covariances' temporary is there: it lasts seconds, where the counting's spills come and go
    while time.time() < deadline and process.poll() is None and not any(
            p.name.startswith("glovev-covariances-") for p in (tmp_path / "tmp").iterdir()):
        time.sleep(0.005)
    assert process.poll() is None, "the fit ended before it wrote a temporary: give it more work"
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert any(p.name.startswith("glovev-") for p in (tmp_path / "tmp").iterdir())
    subprocess.run([*fit, str(corpus_file), "--output", str(tmp_path / "m2")], env=environment, check=True)
    assert list((tmp_path / "tmp").iterdir()) == []


def test_loading_checks_every_file_and_reads_it_through_one_folder_handle(default_model, monkeypatch):
    opened = []
    real_open = os.open

    def recording(path, flags, *args, dir_fd=None, **kwargs):
        if dir_fd is not None:
            opened.append(path)
        return real_open(path, flags, *args, dir_fd=dir_fd, **kwargs)

    monkeypatch.setattr(os, "open", recording)
    glovev_ext.load_model(default_model)
    manifest = json.loads((default_model / "manifest.json").read_text())
    assert sorted(opened) == sorted(["manifest.json", *manifest["files"]])


def test_a_large_store_is_checked_a_chunk_at_a_time_before_any_row_of_the_chunk_is_used(default_model, tmp_path,
                                                                                        monkeypatch):
    kv, metadata = glovev_ext.load_model(default_model, mmap=None)
    monkeypatch.setattr(_model_folder, "CHUNK_BYTES", 1 << 14)  # many chunks in a small store
    glovev_ext.save_model(tmp_path / "model", kv, metadata)
    store = tmp_path / "model" / "covariances.store"
    assert store.stat().st_size > 8 * _model_folder.CHUNK_BYTES
    data = bytearray(store.read_bytes())
    data[-10] ^= 0x40  # in the last word's factor
    store.write_bytes(bytes(data))
    loaded, _ = glovev_ext.load_model(tmp_path / "model")
    last = int(np.argmax(np.where(loaded.covariance_rows >= 0,
                                  loaded.covariance_store._factor_row[loaded.covariance_rows], -1)))
    first = next(w for w in loaded.index_to_key if loaded.has_covariance(w))
    np.testing.assert_array_equal(loaded.covariance(first), kv.covariance(first))  # its chunk is whole
    message = f"{store} does not match its digest in manifest.json"
    with pytest.raises(ValueError, match=message):
        loaded.covariance(loaded.index_to_key[last])
    with pytest.raises(ValueError, match=message):
        loaded.covariance_store.diagonal()
    with pytest.raises(ValueError, match=message):
        loaded.save(str(tmp_path / "pickled.kv"), sep_limit=1 << 10)  # gensim's save reads every row
    with pytest.raises(ValueError, match=message):
        glovev_ext.load_model(tmp_path / "model", mmap=None)  # read whole: checked whole


def test_two_fits_to_one_output_the_second_refuses_at_its_start(corpus_file, tmp_path, capsys):
    first = subprocess.Popen([sys.executable, "-m", "glovev_ext", "fit", str(corpus_file), "--output",
                              str(tmp_path / "model"), *FIT], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
    lock = _writer_lock.lock_path((tmp_path / "model").resolve())
    deadline = time.time() + 60
    while time.time() < deadline and not lock.exists() and first.poll() is None:
        time.sleep(0.01)
    try:
        assert lock.exists(), "the first fit ended before it took its lock"
        time.sleep(0.2)  # the lock file is created before it is locked and its holder written
        started = time.perf_counter()
        status, out, err = run(capsys, "fit", corpus_file, "--output", tmp_path / "model", *FIT)
        assert time.perf_counter() - started < 2.0
        line = one_line(err)
        assert status == 1 and out == "" and f"process {first.pid}" in line
        assert "is being written by another process" in line
    finally:
        assert first.wait(timeout=300) == 0, first.stderr.read()
    assert glovev_ext.load_model(tmp_path / "model")[1]["glove"]["n_components"] == 8
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_a_failed_fit_into_new_folders_leaves_none_of_them(tmp_path, capsys):
    (tmp_path / "empty.txt").write_text("")
    status, _, err = run(capsys, "fit", tmp_path / "empty.txt", "--output", tmp_path / "a" / "b" / "model", *FIT)
    assert status == 2 and one_line(err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.txt"]


def test_a_full_tmpdir_while_a_pipe_is_copied_names_the_copy(tmp_path, capsys, monkeypatch):
    from glovev_ext import cli
    fifo = tmp_path / "corpus.fifo"
    os.mkfifo(fifo)

    def write():
        with open(fifo, "w") as stream:
            stream.write("a b c\n")

    writer = threading.Thread(target=write)
    writer.start()

    def full(source, target, length):
        source.read()
        raise OSError(28, os.strerror(28))

    monkeypatch.setattr(cli.shutil, "copyfileobj", full)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    status, out, err = run(capsys, "fit", fifo, "--output", tmp_path / "model", *FIT)
    writer.join()
    line = one_line(err)
    assert status == 1 and "No space left on device" in line and f"glovev-spool-{os.getpid()}-" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.fifo"]
