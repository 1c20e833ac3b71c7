"""GloVe training with the Stanford C tool's algorithm (AdaGrad, Hogwild threads)."""

from __future__ import annotations

import logging
import math
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from tqdm.auto import tqdm

from .._checks import DEFAULT_SEED, as_generator, check_int, check_positive_float, parse_memory, resolve_n_jobs
from .._dask import check_backend, connected
from .._temporaries import remove_dead_temporaries, temporary_prefix
from ..counting import check_cooccurrence
from ._adagrad_kernel import adagrad_pass, block_pass, entry_order, shuffle_in_place
from ._dask_schedule import DaskBlockSchedule
from ._entry_blocks import CHUNK_ENTRY_BYTES, ENTRY_FILE_BYTES, FileBlocks, MemoryBlocks
from .device import check_device, train_on_device
from .objective import glove_weights

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GloVeParameters:
    """Trained GloVe parameters, centre and context kept apart (GloVe-V needs both).

    Attributes
    ----------
    center_vectors : ndarray, shape (V, D)
        ``W``: the embedding of word i is its centre vector ``w_i``.
    context_vectors : ndarray, shape (V, D)
        ``C``: context vectors ``v_j``.
    center_biases : ndarray, shape (V,)
        ``b``.
    context_biases : ndarray, shape (V,)
        ``c``.
    costs : ndarray, shape (epochs,)
        Mean of ``0.5 f(X_ij) (w_i . v_j + b_i + c_j - log X_ij)^2`` over the nonzeros in each
        epoch, each term taken just before its update (the figure the C tool prints).
    """

    center_vectors: np.ndarray
    context_vectors: np.ndarray
    center_biases: np.ndarray
    context_biases: np.ndarray
    costs: np.ndarray


SCHEDULES = ("blocks", "hogwild")  # the first is the default
_N_WORD_GROUPS = 16  # the blocks schedule's word groups: 16 x 16 blocks, 16 strata of 16 independent blocks


def check_training_params(epochs: int, learning_rate: float, alpha: float) -> tuple[int, float]:
    """Validate the training parameters that need no data; returns ``(epochs, learning_rate)``."""
    epochs = check_int(epochs, "epochs", minimum=1)
    learning_rate = check_positive_float(learning_rate, "learning_rate")
    if not (isinstance(alpha, (int, float)) and math.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"alpha must be a finite number >= 0, got {alpha!r}")
    return epochs, learning_rate


def train_glove(cooccurrence: sp.spmatrix | np.ndarray, n_components: int = 50, *, epochs: int = 25,
                learning_rate: float = 0.05, x_max: float = 100.0, alpha: float = 0.75,
                grad_clip: float = 100.0, random_state: object = DEFAULT_SEED, n_jobs: int | None = -1,
                schedule: str = "blocks", max_memory: int | str | None = None, backend: str = "threads",
                client=None, device: str | None = None, batch_size: int | None = None,
                device_memory: int | str | None = None, progress: bool = True) -> GloVeParameters:
    """Train GloVe on a co-occurrence matrix with the Stanford C tool's algorithm.

    Every nonzero ``X_ij`` is one training entry. Parameters start at ``U(-0.5, 0.5) / D``
    (biases included) with squared-gradient accumulators at 1.0; each epoch visits every entry
    once in a fresh random order. Vector steps are ``learning_rate * clip(g, +-grad_clip) /
    sqrt(accumulator)``, with the accumulator summing the squared clipped steps; bias steps are
    ``g / sqrt(accumulator)`` with no learning rate, as in ``glove.c``. An entry whose residual is
    not finite is skipped.

    Two schedules share that update. ``"blocks"`` (the default) is deterministic at any thread
    count: the words are dealt into 16 groups of about equal nonzeros, the
    entries into the blocks (group of i, group of j), and an epoch runs the blocks stratum by
    stratum (block (r, r + s mod G) for every r in stratum s, strata in a fresh random order), each
    block's entries in a fresh random order (a shuffle of the block's entries taken by row and
    column, drawn from the block's own seed). The blocks of a stratum touch disjoint centre and
    context rows, so threads run them without locks and without races, and a seed gives the same
    parameters with 1 thread or 16. ``"hogwild"`` is the C tool's own: one random order split into
    ``n_jobs`` segments that threads update without locks (the same seed gives the same parameters
    only with one thread).

    Parameters
    ----------
    cooccurrence : sparse matrix or 2-D array, shape (V, V)
        Non-negative co-occurrence weights.
    n_components : int, default=50
        Embedding dimension D.
    epochs : int, default=25
        Passes over the nonzeros.
    learning_rate : float, default=0.05
        AdaGrad's initial step size.
    x_max, alpha : float, default=100.0, 0.75
        Weighting function cut-off and exponent.
    grad_clip : float, default=100.0
        Bound on each gradient component.
    random_state : None, int, numpy Generator or RandomState, default=0
        Seeds the initialisation and the per-epoch orders (``glovev_ext.stats.DEFAULT_SEED`` by
        default, as every function that draws). The same seed gives bit-for-bit identical
        parameters (with ``schedule="hogwild"`` only at ``n_jobs=1``); None seeds from the
        operating system's entropy.
    n_jobs : int or None, default=-1
        Threads (None or 1: one; -1: every core).
    schedule : {"blocks", "hogwild"}, default="blocks"
        The order of the updates (above).
    max_memory : int, str or None, default=None
        With a budget (bytes, or a size such as ``"600M"``), the blocks schedule writes the entries
        to a file in a temporary folder (in ``TMPDIR``) once, grouped by block, and reads each block
        when it runs: training then holds the parameters and one block per thread, nothing per
        nonzero, and gives the same bits as without a budget. None holds one 4-byte index per
        nonzero beside the matrix. A budget below what the parameters and the blocks in flight
        need is logged as a warning (training holds that least); the budget does not bound the
        matrix passed in. With ``backend="dask"`` the entries are on the workers and the budget
        has no effect on training.
    backend : {"threads", "dask"}, default="threads"
        ``"dask"`` runs the blocks schedule on a :doc:`Dask cluster <dask:deploying>`: each row of
        blocks (the entries of a group of centre words, 16 bytes each) is sent once to a worker and
        stays there (a matrix counted on the cluster is not sent: the worker reads its rows from the
        matrix's files, which the workers share), the block ``(r, c)`` runs on that worker, and the
        context vectors of group ``c`` move from worker to worker between strata; the client holds
        the parameters and nothing per nonzero. Each block computes what it computes on threads, so
        the parameters equal the threads' bit for bit. A worker that dies is survived: its entries
        are sent (or read) again and the epoch runs again from the parameters the client holds.
    client : dask.distributed.Client, str or None
        With ``backend="dask"``: a client, a scheduler address, or None for a local cluster of
        ``n_jobs`` single-threaded worker processes (closed when training ends).
    device : str or None, default=None
        None trains with the compiled kernel on the CPU (the schedules above). A PyTorch device
        (``"cuda"``, ``"cuda:1"``, or ``"cpu"`` for the same code on the processor; ``pip install
        'glovev-ext[gpu]'``) trains there instead, with the same update applied to mini-batches of
        entries: each epoch visits every nonzero once in a random order drawn on the device, and
        the entries of a batch all read the parameters as they were before it, their steps summed
        where a word recurs. The initial parameters are the compiled path's for the same seed; the
        result is reproducible on the same device and PyTorch, and close to the compiled path's, not
        equal to it. The device holds the parameters and, where they fit in ``device_memory``, the
        entries (40 bytes each, their order included); ``schedule``, ``max_memory`` and
        ``backend`` are for the compiled path.
    batch_size : int or None, default=None
        Entries per batch with ``device``. By default, as many as make the word with the most
        nonzeros recur 8 times in a batch on average, at most 65,536. Larger batches are faster on
        a GPU but sum more steps of the frequent words at once, and early in training, while the
        AdaGrad accumulators are small, they overshoot and can diverge (``bench/device_training.py``
        prints the time, cost and word-similarity scores per batch size).
    device_memory : int, str or None, default=None
        Bytes (or ``"8G"``, ``"500M"``) of device memory the entries may take with ``device``; None:
        half of what a CUDA device has free, and no limit on the CPU. Entries that do not fit stay
        in host memory, and each epoch sends them to the device in its shuffled order, as many whole
        batches at a time as fit: the same batches as on the device, drawn by the host's generator.
    progress : bool, default=True
        Show a tqdm progress bar over epochs.

    Returns
    -------
    GloVeParameters

    Raises
    ------
    ValueError
        For an invalid matrix (see :func:`glovev_ext.counting.matrix.check_cooccurrence`) or parameter.
    """
    matrix = check_cooccurrence(cooccurrence, name="cooccurrence")
    n_components = check_int(n_components, "n_components", minimum=1)
    epochs, learning_rate = check_training_params(epochs, learning_rate, alpha)
    x_max = check_positive_float(x_max, "x_max")
    grad_clip = check_positive_float(grad_clip, "grad_clip")
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    max_memory = parse_memory(max_memory)
    if max_memory is not None and schedule != "blocks":
        raise ValueError(f"max_memory needs schedule='blocks' (the hogwild schedule holds every entry), "
                         f"got schedule={schedule!r}")
    check_backend(backend, client)
    if backend == "dask" and schedule != "blocks":
        raise ValueError(f"backend='dask' runs schedule='blocks' (the hogwild schedule shares every row between "
                         f"threads of one process), got schedule={schedule!r}")
    device = check_device(device)
    if device is None and batch_size is not None:
        raise ValueError("batch_size is for training on a device (device='cuda' or 'cpu'); the compiled path "
                         "visits the entries one at a time")
    device_memory = parse_memory(device_memory, "device_memory")
    if device is None and device_memory is not None:
        raise ValueError("device_memory is for training on a device (device='cuda' or 'cpu'); the compiled path's "
                         "budget is max_memory")
    if device is not None and (schedule != "blocks" or max_memory is not None or backend != "threads"):
        raise ValueError(f"device={device!r} trains in mini-batches held on the device; schedule, max_memory and "
                         f"backend='dask' are for the compiled CPU path (device=None)")
    n_threads = resolve_n_jobs(n_jobs)
    rng = as_generator(random_state)

    n_words, nnz = matrix.shape[0], matrix.nnz
    params = (rng.random((2 * n_words, n_components + 1)) - 0.5) / n_components
    if device is not None:
        params, costs = train_on_device(matrix, params, epochs=epochs, learning_rate=learning_rate, x_max=x_max,
                                        alpha=alpha, grad_clip=grad_clip, rng=rng, device=device,
                                        batch_size=batch_size, n_threads=n_threads, progress=progress,
                                        device_memory=device_memory)
        return _parameters(params, n_words, n_components, costs)
    gradsq = np.ones_like(params)
    costs = np.empty(epochs)
    on_dask = backend == "dask"
    logger.info("training GloVe: %d words, %d nonzeros, D=%d, %d epochs, %s, %s schedule%s",
                n_words, nnz, n_components, epochs, "on Dask" if on_dask else f"{n_threads} threads", schedule,
                ", entries on disk" if max_memory is not None and not on_dask else "")
    pool = ThreadPoolExecutor(n_threads, thread_name_prefix="glovev-train") if n_threads > 1 and not on_dask else None
    folder = _temporary_folder() if max_memory is not None and not on_dask else None
    cluster = ExitStack()
    try:
        if on_dask:
            run_epoch = DaskBlockSchedule(cluster.enter_context(connected(client, n_threads)), matrix,
                                          _N_WORD_GROUPS, x_max, alpha)
        elif schedule == "hogwild":
            run_epoch = _HogwildSchedule(matrix, n_threads, x_max, alpha)
        elif max_memory is None:
            run_epoch = _BlockSchedule(MemoryBlocks(matrix, _N_WORD_GROUPS), x_max, alpha)
        else:
            # the file is written a chunk of rows at a time: an eighth of the budget, within [64Ki, 4Mi] entries
            chunk_entries = min(1 << 22, max(1 << 16, max_memory // (8 * CHUNK_ENTRY_BYTES)))
            blocks = FileBlocks(matrix, _N_WORD_GROUPS, os.path.join(folder.name, "entries.bin"), chunk_entries)
            _check_training_budget(max_memory, params, blocks.bounds, n_threads)
            run_epoch = _BlockSchedule(blocks, x_max, alpha)
        args = (params, gradsq, learning_rate, grad_clip)
        with tqdm(total=epochs, desc="training GloVe", unit="epoch", disable=not progress, leave=False) as bar:
            for epoch in range(epochs):
                costs[epoch] = run_epoch(args, rng, pool) / nnz
                logger.info("epoch %d/%d: cost %.6f", epoch + 1, epochs, costs[epoch])
                bar.set_postfix(cost=f"{costs[epoch]:.5f}")
                bar.update()
    finally:
        cluster.close()
        if pool is not None:
            pool.shutdown(wait=True)
        if folder is not None:
            folder.cleanup()
    return _parameters(params, n_words, n_components, costs)


def _parameters(params: np.ndarray, n_words: int, n_components: int, costs: np.ndarray) -> GloVeParameters:
    """The ``(2V, D + 1)`` array of centre rows, then context rows, as :class:`GloVeParameters`."""
    return GloVeParameters(
        center_vectors=np.ascontiguousarray(params[:n_words, :n_components]),
        context_vectors=np.ascontiguousarray(params[n_words:, :n_components]),
        center_biases=params[:n_words, n_components].copy(),
        context_biases=params[n_words:, n_components].copy(),
        costs=costs,
    )


# Bytes per entry of a block in flight: its rows, columns and values read (16), their log and weight (16), its order (4).
_BLOCK_ENTRY_BYTES = ENTRY_FILE_BYTES + 16 + 4


def _check_training_budget(max_memory: int, params: np.ndarray, bounds: np.ndarray, n_threads: int) -> None:
    """Warn if the parameters, their accumulators and the largest blocks in flight exceed ``max_memory``: training
    then goes on holding that least (a budget, like the C tool's ``-memory``, is a target; counting it off
    after the count would lose the count)."""
    largest = np.sort(np.diff(bounds))[::-1][:n_threads]
    needed = 2 * params.nbytes + int(largest.sum()) * _BLOCK_ENTRY_BYTES
    if needed > max_memory:
        logger.warning("max_memory=%s bytes is below what training needs: %s bytes for the parameters, their AdaGrad "
                       "accumulators and the largest %d block(s) of entries in flight (one per thread); training "
                       "goes on with that", f"{max_memory:,}", f"{needed:,}", largest.size)


class _HogwildSchedule:
    """The C tool's epoch: one shuffled order, cut into one contiguous segment per thread, updated without locks."""

    def __init__(self, matrix: sp.csr_matrix, n_threads: int, x_max: float, alpha: float):
        entries = matrix.tocoo()
        self.rows = entries.row.astype(np.int32)
        self.cols = entries.col.astype(np.int32)
        self.log_values = np.log(entries.data)
        self.weights = glove_weights(entries.data, x_max, alpha)
        self.order = entry_order(entries.nnz)
        self.bounds = np.linspace(0, entries.nnz, n_threads + 1).astype(np.int64)

    def __call__(self, args: tuple, rng: np.random.Generator, pool: ThreadPoolExecutor | None) -> float:
        shuffle_in_place(self.order, int(rng.integers(2**63 - 1)))
        segments = [self.order[a:b] for a, b in zip(self.bounds[:-1], self.bounds[1:])]
        params, gradsq, learning_rate, grad_clip = args
        rows, cols, log_values, weights = self.rows, self.cols, self.log_values, self.weights
        if pool is None:
            return adagrad_pass(params, gradsq, rows, cols, log_values, weights, segments[0], learning_rate, grad_clip)
        futures = [pool.submit(adagrad_pass, params, gradsq, rows, cols, log_values, weights, segment, learning_rate,
                               grad_clip) for segment in segments]
        return sum(future.result() for future in futures)


class _BlockSchedule:
    """The deterministic epoch: strata of blocks whose rows and columns do not overlap (see :func:`train_glove`)."""

    def __init__(self, blocks: MemoryBlocks | FileBlocks, x_max: float, alpha: float):
        self.blocks = blocks
        self.x_max, self.alpha = x_max, alpha

    def __call__(self, args: tuple, rng: np.random.Generator, pool: ThreadPoolExecutor | None) -> float:
        groups = self.blocks.n_groups
        strata = rng.permutation(groups)
        seeds = rng.integers(2**63 - 1, size=groups**2)
        params, gradsq, learning_rate, grad_clip = args
        costs = np.zeros(groups**2)

        def run_block(block: int) -> None:
            rows, cols, values = self.blocks.read(block)
            costs[block] = block_pass(params, gradsq, rows, cols, values, int(seeds[block]), learning_rate, grad_clip,
                                      self.x_max, self.alpha)

        for stratum in strata:
            blocks = [r * groups + (r + stratum) % groups for r in range(groups)]
            if pool is None:
                for block in blocks:
                    run_block(block)
            else:
                list(pool.map(run_block, blocks))
        return float(costs.sum())


def _temporary_folder() -> tempfile.TemporaryDirectory:
    """A temporary folder for the entries on disk, after removing what killed runs left."""
    remove_dead_temporaries()
    return tempfile.TemporaryDirectory(prefix=temporary_prefix("train"))
