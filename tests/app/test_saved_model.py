"""A saved model is one folder, replaced whole or not at all."""

from __future__ import annotations

import errno
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import glovev_ext
from glovev_ext import _model_folder


@pytest.fixture
def kv(small_model):
    return glovev_ext.KeyedVectorsWithVariance.from_estimator(small_model)


def test_round_trip_memory_maps_the_large_arrays(kv, tmp_path):
    directory = glovev_ext.save_model(tmp_path / "model", kv, {"source": "test"})
    loaded, metadata = glovev_ext.load_model(directory)
    assert metadata == {"source": "test"}
    assert kv.covariance_store._factors.size >= 1 << 16 and isinstance(loaded.covariance_store._factors, np.memmap)
    np.testing.assert_array_equal(loaded.vectors, kv.vectors)
    np.testing.assert_array_equal(loaded.covariance("man"), kv.covariance("man"))


def test_an_interrupted_save_keeps_the_previous_model(kv, tmp_path, monkeypatch):
    glovev_ext.save_model(tmp_path / "model", kv, {"version": 1})

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(_model_folder, "_write_array", interrupted)
    with pytest.raises(KeyboardInterrupt):
        glovev_ext.save_model(tmp_path / "model", kv, {"version": 2})
    assert glovev_ext.load_model(tmp_path / "model")[1] == {"version": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["model"]


def test_a_new_save_replaces_the_old_one_whole(kv, tmp_path):
    glovev_ext.save_model(tmp_path / "model", kv, {"version": 1})
    (tmp_path / "model" / "stale.txt").write_text("from the old model")
    glovev_ext.save_model(tmp_path / "model", kv, {"version": 2}, overwrite=True)
    assert not (tmp_path / "model" / "stale.txt").exists()
    assert glovev_ext.load_model(tmp_path / "model")[1] == {"version": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_loading_a_folder_that_is_not_a_model_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="no saved model at .*create one with 'glovev fit'"):
        glovev_ext.load_model(tmp_path)


def _snapshot(folder) -> dict:
    """Every file under ``folder`` with its bytes and mode, and every folder with its mode."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None, p.stat().st_mode)
            for p in sorted(folder.rglob("*"))}


def test_a_folder_that_is_not_a_model_survives_byte_for_byte(kv, tmp_path):
    sandbox = tmp_path / "sandbox"
    (sandbox / "data").mkdir(parents=True)
    (sandbox / "precious.txt").write_text("precious")
    (sandbox / "data" / "table.csv").write_text("a,b\n1,2\n")
    before = _snapshot(tmp_path)
    with pytest.raises(FileExistsError, match="sandbox is a folder that is not a glovev model .*'data', "
                                              "'precious.txt'.*--overwrite \\(overwrite=True\\)"):
        glovev_ext.save_model(sandbox, kv)
    assert _snapshot(tmp_path) == before


def test_a_model_holding_other_files_is_refused_and_kept(kv, tmp_path):
    glovev_ext.save_model(tmp_path / "model", kv, {"version": 1})
    (tmp_path / "model" / "notes.txt").write_text("mine")
    before = _snapshot(tmp_path)
    with pytest.raises(FileExistsError, match="a saved model that also holds 'notes.txt'"):
        glovev_ext.save_model(tmp_path / "model", kv, {"version": 2})
    assert _snapshot(tmp_path) == before


def test_overwrite_replaces_a_folder_or_a_file_and_nothing_beside_it(kv, tmp_path):
    (tmp_path / "sandbox").mkdir()
    (tmp_path / "sandbox" / "precious.txt").write_text("precious")
    (tmp_path / "file").write_text("a file")
    (tmp_path / "neighbour.txt").write_text("beside")
    for name in ("sandbox", "file"):
        glovev_ext.save_model(tmp_path / name, kv, {"name": name}, overwrite=True)
        assert glovev_ext.load_model(tmp_path / name)[1] == {"name": name}
    assert not (tmp_path / "sandbox" / "precious.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "neighbour.txt", "sandbox"]
    assert (tmp_path / "neighbour.txt").read_text() == "beside"


def test_an_empty_folder_or_a_model_of_0_1_is_replaced_without_asking(kv, tmp_path):
    import shutil
    (tmp_path / "empty").mkdir()
    glovev_ext.save_model(tmp_path / "empty", kv, {"version": 2})
    shutil.copytree(Path(__file__).parents[1] / "data" / "model_v0_1", tmp_path / "old")
    glovev_ext.save_model(tmp_path / "old", kv, {"version": 2})
    assert glovev_ext.load_model(tmp_path / "empty")[1] == glovev_ext.load_model(tmp_path / "old")[1] == {"version": 2}


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_a_saved_model_has_the_permissions_the_umask_gives(kv, tmp_path, mask):
    previous = os.umask(mask)
    try:
        glovev_ext.save_model(tmp_path / "model", kv)
        glovev_ext.save_model(tmp_path / "model", kv)  # replacing, too
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "model").stat().st_mode) == 0o777 & ~mask
    for file in (tmp_path / "model").iterdir():
        assert stat.S_IMODE(file.stat().st_mode) == 0o666 & ~mask, file


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES, errno.ENOSPC])
def test_a_location_that_cannot_be_written_is_refused_before_any_work(tmp_path, monkeypatch, code):
    real_mkdir = os.mkdir

    def refused(path, *args, **kwargs):
        if Path(path).parent == tmp_path:
            raise OSError(code, os.strerror(code), str(path))
        return real_mkdir(path, *args, **kwargs)

    class Unread:
        def __iter__(self):
            raise AssertionError("the corpus was read before the output was checked")

    monkeypatch.setattr(os, "mkdir", refused)
    with pytest.raises(OSError, match=f"cannot write a model in {re.escape(str(tmp_path))}: "
                                      f"{re.escape(os.strerror(code))}") as raised:
        glovev_ext.fit_corpus(Unread(), output=tmp_path / "model", progress=False)
    assert raised.value.errno == code
    assert list(tmp_path.iterdir()) == []


def test_a_disk_full_during_the_save_keeps_the_previous_model(kv, tmp_path, monkeypatch):
    glovev_ext.save_model(tmp_path / "model", kv, {"version": 1})
    before = _snapshot(tmp_path)
    real_write = _model_folder._write_array

    def half_then_full(path, values):
        real_write(path, values)  # a file is written, then the disk fills
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(_model_folder, "_write_array", half_then_full)
    with pytest.raises(OSError) as raised:
        glovev_ext.save_model(tmp_path / "model", kv, {"version": 2})
    assert raised.value.errno == errno.ENOSPC and raised.value.filename == str((tmp_path / "model").resolve())
    assert "No space left on device" in str(raised.value)
    assert _snapshot(tmp_path) == before


def test_names_that_cannot_hold_a_model_are_refused(kv, tmp_path):
    (tmp_path / "small.txt").write_text("a file")
    with pytest.raises(NotADirectoryError, match="small.txt is a file, so it cannot hold a model"):
        glovev_ext.save_model(tmp_path / "small.txt" / "model", kv)
    with pytest.raises(OSError, match="a name in it is 300 bytes long") as raised:
        glovev_ext.save_model(tmp_path / ("x" * 300), kv)
    assert raised.value.errno == errno.ENAMETOOLONG
    with pytest.raises(ValueError, match="cannot save a model as /"):
        glovev_ext.save_model("/", kv)
    assert [p.name for p in tmp_path.iterdir()] == ["small.txt"]


def test_a_write_killed_midway_leaves_a_temporary_that_the_next_save_removes(kv, tmp_path):
    from glovev_ext.atomic import temporary_path

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    left = temporary_path(tmp_path / "model").with_name(f".model.glovev-{dead}-0123abcd.partial")
    left.mkdir()
    running = temporary_path(tmp_path / "model")  # this process's: a write in progress, kept
    running.mkdir()
    other = tmp_path / ".other.glovev-1-0123abcd.partial"  # another target's: not ours to judge
    other.mkdir()
    glovev_ext.save_model(tmp_path / "model", kv)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["model", running.name, other.name])


def test_a_folder_replaces_a_folder_in_one_exchange(tmp_path, monkeypatch):
    from glovev_ext import atomic

    if atomic._renameat2() is None:
        pytest.skip("renameat2 is Linux's")
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    (old / "a").write_text("old")
    new.mkdir()
    (new / "a").write_text("new")

    def no_plain_rename(*args):
        raise AssertionError("a plain rename leaves a moment without the folder")

    monkeypatch.setattr(os, "replace", no_plain_rename)
    atomic.replace_atomically(new, old)
    assert (old / "a").read_text() == "new" and not new.exists()


def test_an_interrupted_save_leaves_the_embedding_in_memory_whole(kv, tmp_path, monkeypatch):
    """An interruption between two files of the save changes nothing of the embedding in memory."""
    vectors, factors = kv.vectors.copy(), kv.covariance_store._factors.copy()
    real_save = np.save
    calls = []

    def interrupted_on_the_last_array(*args, **kwargs):
        calls.append(args[0])
        if len(calls) == arrays:
            raise KeyboardInterrupt
        return real_save(*args, **kwargs)

    glovev_ext.save_model(tmp_path / "first", kv)
    arrays = len(list((tmp_path / "first").glob("*.npy")))
    assert arrays >= 2, "the model's arrays are files of their own"
    monkeypatch.setattr(np, "save", interrupted_on_the_last_array)
    with pytest.raises(KeyboardInterrupt):
        glovev_ext.save_model(tmp_path / "model", kv)
    assert len(calls) == arrays and [p.name for p in tmp_path.iterdir()] == ["first"]
    np.testing.assert_array_equal(kv.vectors, vectors)
    np.testing.assert_array_equal(kv.covariance_store._factors, factors)
    monkeypatch.undo()
    glovev_ext.save_model(tmp_path / "model", kv)
    np.testing.assert_array_equal(glovev_ext.load_model(tmp_path / "model")[0].vectors, vectors)
