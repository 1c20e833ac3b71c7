"""The covariance pass: every word's covariance, block by block, on threads or on Dask, in memory or to a file.

One pass runner for every backend and destination. Words are cut into blocks of about equal cost;
a *runner* (:func:`threaded_runner`, or the Dask one in ``._dask``) computes blocks wherever it
runs them, each block writing its factors straight into the destination's factor array (an
array in memory for threads, or the memory-mapped store file every worker opens) and returning
only a small :class:`BlockSummary`.

To a file, the pass is resumable: factors go into ``PATH.partial`` (laid out in advance), the
summaries are journalled in ``PATH.journal/`` as blocks finish, and when every block is done the
per-word arrays are written and the file is moved onto ``PATH``. An interrupted run leaves the
partial file and journal; a second run over the same inputs resumes where it stopped, over
different inputs it refuses. A store at ``PATH`` is therefore always complete.
"""

from __future__ import annotations

import hashlib
import logging
import mmap
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from .._memory import release_pages
from ..glove.device import import_torch, torch_threads
from ..atomic import atomic_path, replace_atomically
from .device import DeviceContexts, DeviceWordFitter
from .factor import packed_size
from .layout import PerWord
from .store import CovarianceStore
from .store_file import create_store_file, flush, open_store_arrays
from .wls import WordFitter

logger = logging.getLogger(__name__)


@dataclass
class BlockSummary:
    """The per-word results of one block: everything but the factors, which are written in place."""

    kind: np.ndarray
    rank: np.ndarray
    sigma2: np.ndarray
    optimum: np.ndarray
    distance: np.ndarray
    condition: np.ndarray
    understated: np.ndarray

    @classmethod
    def empty(cls, n_words: int, dim: int) -> BlockSummary:
        return cls(kind=np.zeros(n_words, np.int8), rank=np.zeros(n_words, np.int32), sigma2=np.full(n_words, np.nan),
                   optimum=np.full((n_words, dim), np.nan), distance=np.full(n_words, np.nan),
                   condition=np.full(n_words, np.nan), understated=np.zeros(n_words, np.int32))

    def as_arrays(self) -> dict[str, np.ndarray]:
        return dict(self.__dict__)


@dataclass
class PassResult:
    """What a covariance pass gives: the store and, for every word, the weighted-least-squares optimum."""

    store: CovarianceStore
    optimum: np.ndarray
    distance: np.ndarray


BlockRunner = Callable[[Iterable[tuple[int, tuple]]], Iterator[tuple[int, BlockSummary]]]




def word_costs(n_contexts: np.ndarray, dim: int) -> np.ndarray:
    """Work per word: ``|K_i| D^2 + D^3`` for a word with a covariance, 1 for the others."""
    return np.where(n_contexts > dim, n_contexts.astype(np.float64) * dim**2 + float(dim) ** 3, 1.0)


def cost_balanced_blocks(n_contexts: np.ndarray, dim: int, n_blocks: int) -> list[np.ndarray]:
    """Consecutive row blocks of about equal total cost (empty blocks dropped)."""
    cost = word_costs(n_contexts, dim)
    bounds = np.searchsorted(np.cumsum(cost), np.linspace(0, cost.sum(), n_blocks + 1)[1:-1])
    return [block for block in np.split(np.arange(n_contexts.size), bounds) if block.size]


# The most bytes of results (factors) one block of a pass returns, where n_blocks_for is told a word's: the blocks in
# flight and done but not yet used (up to 2 per thread or worker in each pass running) hold a few of these.
_BLOCK_RESULT_BYTES = 16 << 20


def n_blocks_for(n_words: int, result_bytes_per_word: int = 0) -> int:
    """Blocks of a pass: enough to balance workers and to lose little work when one dies, and enough that a block's
    results stay within 16 MiB where each word's are ``result_bytes_per_word`` (a D = 300 factor: 361 KB)."""
    by_count = max(16, min(512, n_words // 200))
    if result_bytes_per_word <= 0:
        return by_count
    rows_per_block = max(1, _BLOCK_RESULT_BYTES // result_bytes_per_word)
    return max(by_count, -(-n_words // rows_per_block))


def fit_block(factors_target: np.ndarray | str, block_matrix: sp.csr_matrix, context_vectors: np.ndarray,
              context_biases: np.ndarray, center_vectors: np.ndarray, center_biases: np.ndarray,
              block_factor_rows: np.ndarray, x_max: float, alpha: float, conditioning: str = "exact",
              at_optimum: bool = False, device: DeviceContexts | None = None) -> BlockSummary:
    """Fit the words of one block, writing each defined word's packed factor to its row of the factor array.

    Parameters
    ----------
    factors_target : ndarray or str
        The factor array itself (threads), or the path of the store file whose factor array is
        memory-mapped here (any worker that sees the file).
    block_matrix : scipy.sparse.csr_matrix
        The block's co-occurrence rows, in order.
    context_vectors, context_biases : ndarray
        All words' context parameters.
    center_vectors, center_biases : ndarray
        The block's centre parameters, in order.
    block_factor_rows : ndarray of int
        Each word's row in the factor array (-1 for none).
    x_max, alpha : float
    conditioning : {"exact", "paper"}
    at_optimum : bool
        Take the residuals at each word's weighted-least-squares optimum instead of its centre vector.
    device : DeviceContexts or None
        The context vectors on a PyTorch device, which then computes the Gram matrices of the words' designs
        and the Cholesky factors of their ``H``, :data:`~glovev_ext.covariance.device.DEVICE_WORDS` words at a time
        (:class:`~glovev_ext.covariance.device.DeviceWordFitter`
        with :func:`~glovev_ext.covariance.device.design_grams`); the rest of each fit (LAPACK's condition estimate
        from the factor, the conditioning rule, ``s2``) is the CPU's.

    Returns
    -------
    BlockSummary
    """
    if device is None:
        fitter = WordFitter(block_matrix, context_vectors, context_biases, x_max, alpha, conditioning)
    else:
        fitter = DeviceWordFitter(block_matrix, context_vectors, context_biases, x_max, alpha, conditioning,
                                  contexts=device, center_biases=center_biases)
    factors = factors_target if isinstance(factors_target, np.ndarray) else open_store_arrays(factors_target)["factors"]
    n_contexts = fitter.n_contexts()
    summary = BlockSummary.empty(n_contexts.size, fitter.dim)
    workspace = fitter.workspace()
    for k in range(n_contexts.size):
        fit = fitter.fit_word(k, float(center_biases[k]), None if at_optimum else center_vectors[k], workspace)
        summary.kind[k], summary.rank[k], summary.sigma2[k] = fit.kind, fit.rank, fit.sigma2
        summary.optimum[k], summary.distance[k] = fit.optimum, fit.distance
        summary.condition[k] = fit.condition
        if fit.factor is not None:
            summary.understated[k] = fit.factor.understated
            factors[block_factor_rows[k]] = fit.factor.packed
    if isinstance(factors, np.memmap):
        factors.flush()
        release_pages(factors)  # written to the file: the pages need not stay in this process
    return summary


def threaded_runner(n_jobs: int) -> BlockRunner:
    """Run blocks on local threads, yielding ``(block, summary)`` as they finish.

    BLAS is limited to one thread around the whole pool (the limit is process-wide, so a limit
    per block would be lifted by the first block to finish), and at most ``2 * n_jobs`` blocks
    are queued, so only their co-occurrence rows are copied at any time.
    """
    n_threads = max(1, n_jobs)

    def run(tasks: Iterable[tuple[int, tuple]]) -> Iterator[tuple[int, BlockSummary]]:
        pending = iter(tasks)
        in_flight = {}
        with threadpool_limits(limits=1, user_api="blas"), \
                ThreadPoolExecutor(n_threads, thread_name_prefix="glovev-cov") as pool:
            def submit_next() -> None:
                step = next(pending, None)
                if step is not None:
                    in_flight[pool.submit(fit_block, *step[1])] = step[0]

            for _ in range(2 * n_threads):
                submit_next()
            while in_flight:
                finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in finished:
                    block = in_flight.pop(future)
                    yield block, future.result()
                    submit_next()

    return run


def covariance_pass(fitter: WordFitter, center_vectors: np.ndarray, center_biases: np.ndarray, *,
                    runner: BlockRunner, path: str | os.PathLike | None = None, factor_dtype=np.float64,
                    words=None, progress: bool = True, at_optimum: bool = False,
                    device: str | None = None) -> PassResult:
    """Every word's covariance, in memory or (with ``path``) into a resumable store file.

    Parameters
    ----------
    fitter : WordFitter
        The co-occurrences and context parameters.
    center_vectors : ndarray, shape (V, D)
    center_biases : ndarray, shape (V,)
    runner : callable
        Runs ``(block, arguments of fit_block)`` tasks, yielding ``(block, summary)`` as they finish.
    path : path, optional
        The store file to write (resumed if an earlier run over the same inputs was interrupted).
    factor_dtype : numpy dtype
    words : sequence of str or None
    progress : bool
        Show a tqdm bar weighted by cost.
    at_optimum : bool
        Residual variances at each word's weighted-least-squares optimum, not at ``center_vectors``
        (for a point estimate that is the optimum; the distances are then 0).
    device : str or None
        Compute the words' Gram matrices and Cholesky factors on this PyTorch device, the context vectors copied
        there once for the pass (see :func:`fit_block`).

    Returns
    -------
    PassResult
    """
    matrix = fitter.cooccurrence
    n_words, dim = center_vectors.shape
    n_contexts = fitter.n_contexts()
    per_word = PerWord.pending(n_contexts, dim)
    blocks = cost_balanced_blocks(n_contexts, dim, n_blocks_for(n_words))
    if path is None:
        destination = _MemoryDestination(per_word.n_factors, dim, factor_dtype)
    else:
        fingerprint = _fingerprint(matrix, fitter, center_vectors, center_biases, factor_dtype, len(blocks), at_optimum)
        destination = _ResumableFile(path, n_words, dim, per_word.n_factors, factor_dtype, words, fingerprint)
    optimum, distance = np.full((n_words, dim), np.nan), np.full(n_words, np.nan)
    contexts = None if device is None else DeviceContexts.of(fitter.context_vectors, device)

    def absorb(k: int, summary: BlockSummary) -> None:
        rows = blocks[k]
        per_word.kind[rows], per_word.rank[rows], per_word.sigma2[rows] = summary.kind, summary.rank, summary.sigma2
        per_word.condition[rows], per_word.understated[rows] = summary.condition, summary.understated
        optimum[rows], distance[rows] = summary.optimum, summary.distance

    done = destination.done()
    for k in done:
        absorb(k, destination.recorded(k))
    cost = word_costs(n_contexts, dim)
    tasks = ((k, (destination.target, matrix[rows[0]:rows[-1] + 1], fitter.context_vectors, fitter.context_biases,
                  center_vectors[rows], center_biases[rows], per_word.factor_row[rows], fitter.x_max, fitter.alpha,
                  fitter.conditioning, at_optimum) + (() if contexts is None else (contexts,)))
             for k, rows in enumerate(blocks) if k not in done)
    # On a device, PyTorch's own threads are held to one, as BLAS's are: the pass's threads are the parallelism
    # (PyTorch's threads in every pass thread would spin against each other on the CPU)
    one_torch_thread = nullcontext() if contexts is None else torch_threads(import_torch(), 1)
    with one_torch_thread, tqdm(total=float(cost.sum()), initial=float(sum(cost[blocks[k]].sum() for k in done)),
                                desc="GloVe-V covariances", unit="flop", unit_scale=True, disable=not progress,
                                leave=False) as bar:
        for k, summary in runner(tasks):
            release_pages(matrix)
            destination.record(k, summary)
            absorb(k, summary)
            done.add(k)
            bar.update(float(cost[blocks[k]].sum()))
    missing = sorted(set(range(len(blocks))) - done)
    if missing:
        raise RuntimeError(f"blocks {missing[:10]} of the covariance pass never finished; run the fit again to resume")
    return PassResult(destination.finish(per_word, dim, words), optimum, distance)


class _MemoryDestination:
    """Factors in an array shared by the threads; nothing to journal."""

    def __init__(self, n_factors: int, dim: int, factor_dtype):
        self.target = _prefaulted_empty((n_factors, packed_size(dim)), np.dtype(factor_dtype))

    def done(self) -> set[int]:
        return set()

    def recorded(self, block: int) -> BlockSummary:
        raise KeyError(block)

    def record(self, block: int, summary: BlockSummary) -> None:
        """Nothing outlives the pass in memory."""

    def finish(self, per_word: PerWord, dim: int, words) -> CovarianceStore:
        return CovarianceStore(per_word, self.target, dim, words=words)


class _ResumableFile:
    """The partial file and journal of a store being built at ``path`` (see the module docstring)."""

    def __init__(self, path: str | os.PathLike, n_words: int, dim: int, n_factors: int, factor_dtype, words,
                 fingerprint: str):
        self.path = Path(path)
        self.partial = Path(f"{self.path}.partial")
        self.journal = Path(f"{self.path}.journal")
        self.target = str(self.partial)
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

    def recorded(self, block: int) -> BlockSummary:
        with np.load(self.journal / f"block_{block}.npz") as saved:
            return BlockSummary(**{name: saved[name] for name in saved.files})

    def record(self, block: int, summary: BlockSummary) -> None:
        """Journal a finished block (atomically, so a half-written entry never counts)."""
        with atomic_path(self.journal / f"block_{block}.npz") as temporary, open(temporary, "wb") as stream:
            np.savez(stream, **summary.as_arrays())

    def finish(self, per_word: PerWord, dim: int, words) -> CovarianceStore:
        """Write the per-word arrays, move the file into place, drop the journal."""
        stored = open_store_arrays(self.partial)
        per_word.copy_into(PerWord.of(stored, dim))
        flush(stored)
        del stored
        replace_atomically(self.partial, self.path)
        shutil.rmtree(self.journal)
        return CovarianceStore.load(self.path, mmap=True)


def _prefaulted_empty(shape: tuple[int, int], dtype: np.dtype) -> np.ndarray:
    """An uninitialised array whose pages the kernel maps in one call (Linux's ``MAP_POPULATE``).

    Every word writes a fresh part of the factor array (4 GB for 11,000 words at D = 300), and
    first writes page by page cost more than all the LAPACK work of the rarer words on a virtual
    machine; populating the mapping up front is one system call and, measured there, 2.6x faster
    (``bench/covariance.py`` reports the time of first writes to an array of the store's size).
    Elsewhere a plain ``np.empty``.
    """
    size = int(np.prod(shape)) * dtype.itemsize
    if size == 0 or not hasattr(mmap, "MAP_POPULATE"):
        return np.empty(shape, dtype=dtype)
    mapping = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE)
    return np.frombuffer(mapping, dtype=dtype).reshape(shape)


def _fingerprint(matrix: sp.csr_matrix, fitter: WordFitter, center_vectors: np.ndarray, center_biases: np.ndarray,
                 factor_dtype, n_blocks: int, at_optimum: bool) -> str:
    """A digest of everything the store's contents depend on."""
    digest = hashlib.sha256()
    for array in (matrix.indptr, matrix.indices, matrix.data, fitter.context_vectors, fitter.context_biases,
                  center_vectors, center_biases):
        digest.update(memoryview(np.ascontiguousarray(array)).cast("B"))  # read in place, not copied
    release_pages(matrix)
    digest.update(repr((fitter.x_max, fitter.alpha, fitter.conditioning, np.dtype(factor_dtype).str,
                        n_blocks, at_optimum)).encode())
    return digest.hexdigest()
