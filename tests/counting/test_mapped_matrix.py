"""A matrix counted under a budget lives in files mapped into memory: the same values, no file left behind,
its pages let go by the passes, and every stage of a fit takes it as it takes a matrix in memory."""

from __future__ import annotations

import gc
import mmap
import os

import numpy as np
import pytest
import scipy.sparse as sp

import glovev_ext
from glovev_ext import CooccurrenceVectorizer
from glovev_ext import _memory
from glovev_ext._file_rows import FileRows
from glovev_ext._memory import count_read, file_span, mapping_of, map_file, release_pages, row_sums

PARAMS = dict(window=6, min_count=2, chunk_size=10_000, progress=False)


@pytest.fixture(scope="module")
def paragraphs() -> list[str]:
    return list(glovev_ext.load_default_corpus(max_documents=2000))


def test_a_spilled_matrix_is_mapped_from_deleted_files_with_the_same_values(paragraphs, private_tmpdir):
    expected = CooccurrenceVectorizer(**PARAMS).fit_transform(paragraphs)
    mapped = CooccurrenceVectorizer(max_memory="100K", **PARAMS).fit_transform(paragraphs)
    assert mapping_of(expected.data) is None and mapping_of(expected.indices) is None
    assert mapping_of(mapped.data) is not None and mapping_of(mapped.indices) is not None
    assert not mapped.data.flags.writeable  # an attempt to change it fails instead of writing to a file
    assert mapped.data.tobytes() == expected.data.tobytes()
    np.testing.assert_array_equal(mapped.indices, expected.indices)
    np.testing.assert_array_equal(mapped.indptr, expected.indptr)
    assert list(os.walk(private_tmpdir)) == [(str(private_tmpdir), [], [])]


def test_releasing_drops_the_resident_pages_and_keeps_the_values(paragraphs, resident_pages_of):
    mapped = CooccurrenceVectorizer(max_memory="100K", **PARAMS).fit_transform(paragraphs)
    before = mapped.data.tobytes()  # reads every page
    assert resident_pages_of(mapped.data) >= mapped.data.nbytes // 4096
    release_pages(mapped)
    assert resident_pages_of(mapped.data) == 0
    assert mapped.data.tobytes() == before
    in_memory = CooccurrenceVectorizer(**PARAMS).fit_transform(paragraphs)
    release_pages(in_memory, None)  # nothing to let go: left as it is
    assert in_memory.data.tobytes() == before


def test_reads_counted_let_the_pages_go_every_so_many_and_a_release_starts_the_count_again(
        paragraphs, resident_pages_of, monkeypatch):
    monkeypatch.setattr(_memory, "_RELEASE_EVERY_READS", 3)
    values = CooccurrenceVectorizer(max_memory="100K", **PARAMS).fit_transform(paragraphs).data
    release_pages(values)
    pages = values.nbytes // 4096
    assert pages >= 8
    resident_after = []
    for k in range(7):  # each read touches a page of its own
        float(values[k * (pages // 8) * 512])
        count_read(mapping_of(values))
        resident_after.append(resident_pages_of(values))
    assert [count == 0 for count in resident_after] == [False, False, True, False, False, True, False]
    release_pages(values)  # the seventh read's count starts over: two more reads keep their pages
    for k in range(2):
        float(values[k * 512])
        count_read(mapping_of(values))
        assert resident_pages_of(values) > 0
    counted = len(_memory._READS)
    for _ in range(5):
        count_read(mapping_of(np.arange(10.0)))  # an array in memory: nothing to count or let go
    assert len(_memory._READS) == counted


def test_row_sums_read_a_span_of_rows_at_a_time_and_let_each_go(paragraphs, monkeypatch, resident_pages_of):
    """The same bits as ``sum(axis=1)``, and no more than a span's pages resident when each span is let go."""
    mapped = CooccurrenceVectorizer(max_memory="100K", **PARAMS).fit_transform(paragraphs)
    expected = np.asarray(mapped.sum(axis=1)).ravel()
    release_pages(mapped)
    monkeypatch.setattr(_memory, "_SUMMED_ENTRIES", 4096)
    resident_at_release = []

    def release(*holders):
        resident_at_release.append(resident_pages_of(mapped.data) + resident_pages_of(mapped.indices))
        release_pages(*holders)

    monkeypatch.setattr(_memory, "release_pages", release)
    sums = row_sums(mapped)
    assert sums.dtype == expected.dtype and sums.tobytes() == expected.tobytes()
    # A span's 12 pages of values and indices, and what the kernel reads around each page touched (16 pages).
    whole_pages = (mapped.data.nbytes + mapped.indices.nbytes) // 4096
    assert len(resident_at_release) >= mapped.nnz // 4096 > 20
    assert 0 < max(resident_at_release) < whole_pages / 8
    assert resident_pages_of(mapped.data) == 0
    for rows in (mapped[:0], mapped[:1], mapped[:, :0]):  # no rows, one row, no columns: what sum gives
        assert row_sums(rows).tobytes() == np.asarray(rows.sum(axis=1)).ravel().tobytes()


def test_a_fit_of_a_mapped_matrix_is_the_fit_of_the_matrix_in_memory(paragraphs):
    options = dict(n_components=6, epochs=3, n_jobs=2, progress=False)
    vectorizer = CooccurrenceVectorizer(min_count=5, progress=False)
    fits = [glovev_ext.fit_corpus(paragraphs, vectorizer.set_params(max_memory=budget),
                                  glovev_ext.GloVeVEstimator(max_memory=budget, **options), progress=False)
            for budget in (None, "100K")]
    assert mapping_of(fits[1].cooccurrence.data) is not None
    in_memory, mapped = (fit.keyed_vectors for fit in fits)
    assert mapped.vectors.tobytes() == in_memory.vectors.tobytes()
    rows = np.flatnonzero(in_memory.covariance_rows >= 0)
    np.testing.assert_array_equal(mapped.covariance_rows, in_memory.covariance_rows)
    for i in rows[::50]:
        assert mapped.covariance(mapped.index_to_key[i]).tobytes() == \
            in_memory.covariance(in_memory.index_to_key[i]).tobytes()
    assert fits[1].estimator.noise_scale_.to_dict() == fits[0].estimator.noise_scale_.to_dict()


def test_a_truncated_file_is_named(tmp_path):
    path = tmp_path / "values.bin"
    np.arange(10, dtype=np.float64).tofile(path)
    np.testing.assert_array_equal(map_file(path, np.float64, 10), np.arange(10.0))
    with pytest.raises(OSError, match=r"values.bin holds 80 bytes, fewer than the 88 of 11 float64 items: it is "
                                      r"truncated"):
        map_file(path, np.float64, 11)
    assert map_file(path, np.int32, 0).size == 0


def test_a_loaded_store_lets_go_of_the_pages_of_the_factors_it_reads(tmp_path, paragraphs, resident_pages_of,
                                                                     monkeypatch):
    monkeypatch.setattr(_memory, "_RELEASE_EVERY_READS", 4)
    fitted = glovev_ext.fit_corpus(paragraphs, CooccurrenceVectorizer(min_count=5, progress=False),
                                   glovev_ext.GloVeVEstimator(n_components=20, epochs=2, progress=False),
                                   calibrate_noise=False, progress=False, output=tmp_path / "model")
    kv, _ = glovev_ext.load_model(tmp_path / "model")
    store, in_memory = kv.covariance_store, fitted.keyed_vectors.covariance_store
    assert mapping_of(store._factors) is not None  # saved beside the pickle (large enough), and mapped
    assert mapping_of(in_memory._factors) is None
    words = [word for word in kv.index_to_key if kv.has_covariance(word)]
    for k, word in enumerate(words, 1):  # the in-memory store's factor; every fourth read lets the pages go
        assert kv.covariance(word).tobytes() == fitted.keyed_vectors.covariance(word).tobytes()
        if k <= 48:  # twelve rounds of four reads (reading smaps takes milliseconds)
            assert (resident_pages_of(store._factors) == 0) == (k % 4 == 0), k
    store.release_pages()
    factor = kv.covariance_factor(words[0])
    assert mapping_of(factor.packed) is None  # its own copy, not a view the next read would let go
    np.testing.assert_array_equal(kv.covariance_store.diagonal(), in_memory.diagonal())
    assert resident_pages_of(store._factors) == 0
    np.sum(store._factors[: len(words) // 2])  # read without the store: its pages stay until let go
    assert resident_pages_of(store._factors) > 0
    store.release_pages()
    assert resident_pages_of(store._factors) == 0
    in_memory.release_pages()  # a store in memory: left as it is
    assert fitted.keyed_vectors.covariance(words[0]).tobytes() == kv.covariance(words[0]).tobytes()


def test_trimming_the_heap_works_with_or_without_glibc(monkeypatch, caplog):
    _memory.trim_heap()
    monkeypatch.setattr(_memory.ctypes.util, "find_library", lambda name: None)
    with caplog.at_level("DEBUG", logger="glovev_ext._memory"):
        _memory.trim_heap()
    assert caplog.messages == ["no malloc_trim in this C library: the heap is left as it is"]


def test_under_a_budget_the_covariances_are_written_to_a_file_and_mapped(paragraphs, private_tmpdir, tmp_path):
    """Covariances that would take more than a quarter of the budget go to a file as they are computed; the
    store is memory-mapped from it, the same values; no file is left; saving writes what np.save writes."""
    options = dict(n_components=20, epochs=2, n_jobs=2, progress=False)
    vectorizer = CooccurrenceVectorizer(min_count=5, progress=False)
    fits = {budget: glovev_ext.fit_corpus(paragraphs, vectorizer.set_params(max_memory=budget),
                                          glovev_ext.GloVeVEstimator(max_memory=budget, **options), progress=False)
            for budget in (None, "2M")}
    in_memory, mapped = fits[None].keyed_vectors, fits["2M"].keyed_vectors
    assert mapping_of(in_memory.covariance_store._factors) is None
    assert mapping_of(mapped.covariance_store._factors) is not None
    assert list(os.walk(private_tmpdir)) == [(str(private_tmpdir), [], [])]
    assert mapped.vectors.tobytes() == in_memory.vectors.tobytes()
    assert mapped.covariance_store._factors.tobytes() == in_memory.covariance_store._factors.tobytes()
    for name, kv in (("memory", in_memory), ("mapped", mapped)):
        glovev_ext.save_model(tmp_path / name, kv)
    saved = {name: sorted(p.name for p in (tmp_path / name).iterdir()) for name in ("memory", "mapped")}
    assert saved["memory"] == saved["mapped"]
    factors_file = "covariances.store"
    assert factors_file in saved["mapped"]
    assert (tmp_path / "mapped" / factors_file).read_bytes() == (tmp_path / "memory" / factors_file).read_bytes()
    loaded, _ = glovev_ext.load_model(tmp_path / "mapped")
    word = next(w for w in loaded.index_to_key if loaded.has_covariance(w))
    assert loaded.covariance(word).tobytes() == in_memory.covariance(word).tobytes()
    assert mapping_of(mapped.covariance_store._factors) is not None  # the fitted store kept its factors


def test_memory_and_copy_on_write_mappings_are_never_let_go_of(tmp_path):
    """Letting go of an anonymous or a copy-on-write mapping's pages would lose what they hold: such arrays are
    left alone (an in-memory covariance pass keeps its factors in an anonymous mapping)."""
    anonymous = np.frombuffer(mmap.mmap(-1, 8 * 1000), dtype=np.float64)
    anonymous[:] = np.arange(1000.0)
    path = tmp_path / "values.npy"
    np.save(path, np.zeros(1000))
    private = np.load(path, mmap_mode="c")
    private[:] = np.arange(1000.0)
    shared = np.load(path, mmap_mode="r+")
    assert mapping_of(anonymous) is None and mapping_of(private) is None and mapping_of(shared) is not None
    release_pages(anonymous, private)
    np.testing.assert_array_equal(anonymous, np.arange(1000.0))
    np.testing.assert_array_equal(private, np.arange(1000.0))
    shared[:] = 7.0
    release_pages(shared)  # a shared mapping's changes live in the file: nothing is lost
    np.testing.assert_array_equal(shared, np.full(1000, 7.0))
    np.testing.assert_array_equal(np.load(path), np.full(1000, 7.0))


def test_a_kept_file_is_mapped_from_any_offset_found_again_and_deleted_with_its_last_mapping(tmp_path):
    folder = tmp_path / "matrix"
    folder.mkdir()
    values = np.arange(5000, dtype=np.float64) * 1.5
    path = folder / "values"
    values.tofile(path)
    for offset in (0, 1, 511, 512, 1234):  # within a page, on a page boundary, past one
        np.testing.assert_array_equal(map_file(path, np.float64, 100, offset=offset), values[offset:offset + 100])
    assert file_span(map_file(path, np.float64, 100, offset=7)) is None  # not kept: the caller owns the file
    kept = map_file(path, np.float64, 3000, offset=1234, keep=True)
    assert file_span(kept) == (str(path), 1234 * 8)
    assert file_span(kept[10:20]) == (str(path), (1234 + 10) * 8)
    assert file_span(kept[::2]) is None  # not one run of the file
    with pytest.raises(OSError, match="truncated"):
        map_file(path, np.float64, 100, offset=4950)
    (folder / "other").write_bytes(b"x" * 16)
    other = map_file(folder / "other", np.uint8, 16, keep=True)
    part = kept[5:6]
    del kept
    gc.collect()
    assert path.exists()  # a view of the mapping still lives
    del part
    gc.collect()
    assert not path.exists() and folder.exists()  # the other kept file still holds the folder
    del other
    gc.collect()
    assert not folder.exists()


def test_rows_read_from_the_files_are_the_matrixs_rows_in_the_order_asked(tmp_path, monkeypatch):
    """What a Dask worker reads of a matrix in kept files: any rows, in any order, repeated or empty, equal the
    matrix's own; consecutive rows stay mapped (nothing read), others are gathered into memory a few entries at a
    time, the files' pages let go after each."""
    from glovev_ext import _file_rows
    releases = []
    monkeypatch.setattr(_file_rows, "_GATHERED_ENTRIES", 7)
    monkeypatch.setattr(_file_rows, "release_pages", lambda *arrays: releases.append(len(arrays)))
    rng = np.random.default_rng(3)
    dense = rng.random((40, 30)) * (rng.random((40, 30)) < 0.3)
    dense[[0, 7, 8, 39]] = 0  # empty rows, first and last among them
    made = sp.csr_matrix(dense)
    (tmp_path / "values").write_bytes(b"\0" * 24 + made.data.tobytes())  # the matrix starts past the files' start
    (tmp_path / "columns").write_bytes(b"\0" * 12 + made.indices.astype(np.int32).tobytes())
    matrix = sp.csr_matrix((map_file(tmp_path / "values", np.float64, made.nnz, offset=3, keep=True),
                            map_file(tmp_path / "columns", np.int32, made.nnz, offset=3, keep=True), made.indptr),
                           shape=made.shape, copy=False)
    spans = FileRows.spans_of(matrix)
    assert spans == ((str(tmp_path / "values"), 24), (str(tmp_path / "columns"), 12))
    assert FileRows.spans_of(made) is None  # in memory: its rows travel
    cases = {"all": np.arange(40), "consecutive": np.arange(5, 20), "from an empty row": np.arange(7, 12),
             "scattered": np.arange(1, 40, 3), "reversed": np.arange(39, -1, -1), "repeated": np.array([4, 4, 2, 4]),
             "empty rows only": np.array([0, 8]), "none": np.array([], dtype=np.int64)}
    for name, rows in cases.items():
        releases.clear()
        read = FileRows.of(matrix, spans, rows).read()
        expected = made[rows]
        assert read.shape == expected.shape, name
        np.testing.assert_array_equal(read.indptr, expected.indptr, err_msg=name)
        assert read.indices.tobytes() == expected.indices.astype(np.int32).tobytes(), name
        assert read.data.tobytes() == expected.data.tobytes(), name
        consecutive = rows.size > 0 and np.array_equal(rows, np.arange(rows[0], rows[0] + rows.size))
        assert (mapping_of(read.data) is not None) == consecutive, name
        gathered = 0 if consecutive or rows.size == 0 else expected.nnz
        assert releases == [2] * -(-gathered // 7), name  # values and columns, after every 7 entries gathered
