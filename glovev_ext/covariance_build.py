"""Writing every word's covariance into a store file, block by block: resumable, threaded or on Dask.

The factors go straight from the worker computing a block into ``PATH.partial`` (a store file
laid out in advance, memory-mapped by each worker); only small per-word summaries come back and
are journalled in ``PATH.journal/`` as blocks finish. When every block is journalled, the
per-word arrays are written, the file is flushed and renamed onto ``PATH``. An interrupted run
leaves the partial file and journal: a second run over the same inputs resumes where it stopped;
over different inputs it refuses. A store at ``PATH`` is therefore always complete.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from ._atomic import atomic_path
from ._covariance_kernel import (BlockSummary, CovarianceArrays, WordFitter, cost_balanced_blocks, factor_rows,
                                 fit_block, word_costs)
from .covariance_store import create_store_file, open_store_arrays

logger = logging.getLogger(__name__)

_SUMMARY_FIELDS = ("kind", "rank", "sigma2", "optimum", "distance")


def n_blocks_for(n_words: int) -> int:
    """Blocks of a pass: enough to balance workers and to lose little work when one dies."""
    return max(16, min(512, n_words // 200))


def fit_block_into_file(path: str, block_matrix: sp.csr_matrix, context_vectors: np.ndarray,
                        context_biases: np.ndarray, center_vectors: np.ndarray, center_biases: np.ndarray,
                        block_factor_rows: np.ndarray, x_max: float, alpha: float) -> BlockSummary:
    """One block's words: factors written into the store file at ``path``, the summary returned.

    Runs wherever the block is sent (a thread here or a Dask worker), with one BLAS thread.
    ``block_matrix`` holds just the block's co-occurrence rows, in order.
    """
    fitter = WordFitter(block_matrix, context_vectors, context_biases, x_max, alpha)
    factors = open_store_arrays(path)["factors"]
    with threadpool_limits(limits=1, user_api="blas"):
        summary = fit_block(fitter, np.arange(block_matrix.shape[0]), center_vectors, center_biases, factors,
                            block_factor_rows)
    if isinstance(factors, np.memmap):
        factors.flush()
    return summary


class StoreBuild:
    """The partial file and journal of a store being built at ``path`` (see the module docstring)."""

    def __init__(self, path: str | os.PathLike, n_words: int, dim: int, n_factors: int, factor_dtype,
                 words, fingerprint: str):
        self.path = Path(path)
        self.partial = Path(f"{self.path}.partial")
        self.journal = Path(f"{self.path}.journal")
        stamp = self.journal / "fingerprint"
        if self.journal.exists():
            if not stamp.exists() or stamp.read_text() != fingerprint or not self.partial.exists():
                raise FileExistsError(f"an unfinished covariance store for other inputs is at {self.partial} (journal "
                                      f"{self.journal}); delete both to start afresh, or refit with the inputs "
                                      "that began it to resume")
            logger.info("resuming the covariance store %s: %d blocks already done", self.path, len(self.done()))
        else:
            create_store_file(self.partial, n_words, dim, n_factors, factor_dtype, words)
            self.journal.mkdir(parents=True)
            stamp.write_text(fingerprint)

    def done(self) -> set[int]:
        """Blocks already journalled."""
        return {int(p.stem.split("_")[1]) for p in self.journal.glob("block_*.npz")}

    def record(self, block: int, summary: BlockSummary) -> None:
        """Journal a finished block (atomically, so a half-written entry never counts)."""
        with atomic_path(self.journal / f"block_{block}.npz") as temporary:
            with open(temporary, "wb") as stream:
                np.savez(stream, **{name: getattr(summary, name) for name in _SUMMARY_FIELDS})

    def finish(self, blocks: list[np.ndarray], n_contexts: np.ndarray, rows_of_factors: np.ndarray,
               dim: int) -> CovarianceArrays:
        """Assemble the journal into the per-word arrays, write them, and move the file into place."""
        n_words = n_contexts.size
        arrays = CovarianceArrays(kind=np.zeros(n_words, np.int8), rank=np.zeros(n_words, np.int32),
                                  n_contexts=n_contexts, sigma2=np.full(n_words, np.nan),
                                  factor_row=rows_of_factors, factors=np.empty((0, 0)),
                                  optimum=np.full((n_words, dim), np.nan), distance=np.full(n_words, np.nan))
        missing = sorted(set(range(len(blocks))) - self.done())
        if missing:
            raise RuntimeError(f"blocks {missing[:10]} of {self.path} were never finished; run the fit again to "
                               "resume")
        for k, rows in enumerate(blocks):
            with np.load(self.journal / f"block_{k}.npz") as saved:
                arrays.absorb(rows, BlockSummary(**{name: saved[name] for name in _SUMMARY_FIELDS}))
        stored = open_store_arrays(self.partial)
        for name in ("kind", "rank", "n_contexts", "sigma2", "factor_row"):
            stored[name][:] = getattr(arrays, name)
        for array in stored.values():
            if isinstance(array, np.memmap):
                array.flush()
        del stored
        with open(self.partial, "rb+") as stream:
            os.fsync(stream.fileno())
        os.replace(self.partial, self.path)
        shutil.rmtree(self.journal)
        return arrays


BlockRunner = Callable[[Iterable[tuple[int, tuple]]], Iterator[tuple[int, BlockSummary]]]


def threaded_runner(n_jobs: int) -> BlockRunner:
    """Run blocks on local threads, yielding ``(block, summary)`` as they finish.

    BLAS is limited to one thread around the whole pool (the limit is process-wide, so a limit
    per block would be lifted by the first block to finish), and at most ``2 * n_jobs`` blocks
    are queued, so only their co-occurrence rows are copied at any time.
    """
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    n_threads = max(1, n_jobs)

    def run(tasks):
        pending = iter(tasks)
        in_flight = {}
        with threadpool_limits(limits=1, user_api="blas"), \
                ThreadPoolExecutor(n_threads, thread_name_prefix="glovev-cov") as pool:
            def submit_next() -> None:
                step = next(pending, None)
                if step is not None:
                    in_flight[pool.submit(fit_block_into_file, *step[1])] = step[0]

            for _ in range(2 * n_threads):
                submit_next()
            while in_flight:
                finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in finished:
                    block = in_flight.pop(future)
                    yield block, future.result()
                    submit_next()

    return run


def build_store_file(path: str | os.PathLike, fitter: WordFitter, center_vectors: np.ndarray,
                     center_biases: np.ndarray, *, factor_dtype, words, runner: BlockRunner,
                     progress: bool = True) -> CovarianceArrays:
    """Compute every word's covariance into a store file at ``path`` (resumable; see the module docstring).

    Parameters
    ----------
    path : path
    fitter : WordFitter
        The co-occurrences and context parameters.
    center_vectors, center_biases : ndarray
    factor_dtype : numpy dtype
    words : sequence of str or None
    runner : callable
        Runs ``(block, arguments of fit_block_into_file)`` tasks, yielding ``(block, summary)``.
    progress : bool

    Returns
    -------
    CovarianceArrays
        Everything but the factors, which are in the file.
    """
    matrix = fitter.cooccurrence
    n_words, dim = center_vectors.shape
    n_contexts = fitter.n_contexts()
    rows_of_factors = factor_rows(n_contexts, dim)
    blocks = cost_balanced_blocks(n_contexts, dim, n_blocks_for(n_words))
    fingerprint = _fingerprint(matrix, fitter, center_vectors, center_biases, factor_dtype, len(blocks))
    build = StoreBuild(path, n_words, dim, int((rows_of_factors >= 0).sum()), factor_dtype, words, fingerprint)
    done = build.done()
    cost = word_costs(n_contexts, dim)
    tasks = ((k, (str(build.partial), matrix[rows[0]:rows[-1] + 1], fitter.context_vectors, fitter.context_biases,
                  center_vectors[rows], center_biases[rows], rows_of_factors[rows], fitter.x_max, fitter.alpha))
             for k, rows in enumerate(blocks) if k not in done)
    with tqdm(total=float(cost.sum()), initial=float(sum(cost[blocks[k]].sum() for k in done)),
              desc="GloVe-V covariances", unit="flop", unit_scale=True, disable=not progress, leave=False) as bar:
        for k, summary in runner(tasks):
            build.record(k, summary)
            bar.update(float(cost[blocks[k]].sum()))
    return build.finish(blocks, n_contexts, rows_of_factors, dim)


def _fingerprint(matrix: sp.csr_matrix, fitter: WordFitter, center_vectors: np.ndarray, center_biases: np.ndarray,
                 factor_dtype, n_blocks: int) -> str:
    """A digest of everything the store's contents depend on."""
    digest = hashlib.sha256()
    for array in (matrix.indptr, matrix.indices, matrix.data, fitter.context_vectors, fitter.context_biases,
                  center_vectors, center_biases):
        digest.update(np.ascontiguousarray(array).tobytes())
    digest.update(repr((fitter.x_max, fitter.alpha, np.dtype(factor_dtype).str, n_blocks)).encode())
    return digest.hexdigest()
