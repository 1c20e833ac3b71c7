"""GloVe training on a PyTorch device (``device="cuda"``, or ``"cpu"`` for the same code on the processor).

The optional GPU path (``pip install 'glovev-ext[gpu]'``). It applies the Stanford C tool's AdaGrad
update (the one :func:`~glovev_ext.glove.train_glove` applies by default with its compiled kernel) to
mini-batches of entries: every entry of a batch reads the parameters and the squared-gradient
accumulators as they were before the batch, and the batch's steps are added with scatter-adds, so a
word that occurs in several entries of a batch takes the sum of their steps. With batches of one
entry this is the C tool's update exactly (``tests/glove/test_device_training.py`` checks it against
the compiled kernel); larger batches trade that for speed.

How large a batch may be depends on how often a word recurs in one: the steps of its entries add up, and
early in training, when the accumulators are small, too many of them overshoot and training diverges. By
default a batch holds as many entries as make the word with the most nonzeros recur :data:`RECURRENCES`
times in it on average, at most :data:`DEFAULT_BATCH_SIZE`. ``bench/device_training.py`` prints the
cost and word-similarity scores per batch size.

The entries (:data:`ENTRY_BYTES` each) live on the device when they fit in the device memory
allowed them (by default half of what a CUDA device has free; on the CPU, always). A larger
matrix stays in host memory, and each epoch's shuffled order is sent to the device a chunk of
whole batches at a time: the same batches in the same order, so the same result on the CPU.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp
from tqdm.auto import tqdm

from .._checks import check_int
from .objective import glove_weights

logger = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 65_536
RECURRENCES = 8
ENTRY_BYTES = 40  # per nonzero on the device: its row, column, log count and weight, and its place in the order
GATHERED_ENTRIES = 1 << 18  # entries gathered into batch order at once where they live on the device (8 MB)


def import_torch():
    """PyTorch, or an ImportError that says how to install it."""
    try:
        return importlib.import_module("torch")
    except ImportError as error:
        raise ImportError("device= needs PyTorch, the optional GPU path: pip install 'glovev-ext[gpu]' "
                          "(or leave device=None for the default compiled CPU path)") from error


def check_device(device: object) -> str | None:
    """Validate ``device``: None (the compiled CPU path), or a PyTorch device that exists here ("cpu", "cuda",
    "cuda:1").

    Returns the device's name, or None. Raises ImportError without PyTorch and ValueError for a device
    PyTorch does not know or cannot reach.
    """
    if device is None:
        return None
    if not isinstance(device, str):
        raise ValueError(f"device must be None or a PyTorch device name such as 'cuda' or 'cpu', got {device!r}")
    torch = import_torch()
    try:
        parsed = torch.device(device)
    except RuntimeError as error:
        raise ValueError(f"device={device!r} is not a PyTorch device name ('cpu', 'cuda', 'cuda:1', ...)") from error
    if parsed.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device={device!r}: PyTorch sees no CUDA device here (torch {torch.__version__}, "
                             f"built for CUDA {torch.version.cuda})")
        if parsed.index is not None and parsed.index >= torch.cuda.device_count():
            raise ValueError(f"device={device!r}: only {torch.cuda.device_count()} CUDA device(s) here")
    elif parsed.type != "cpu":
        raise ValueError(f"device={device!r}: only 'cpu' and 'cuda' devices are supported")
    return device


def resolve_batch_size(batch_size: int | None, matrix: sp.csr_matrix) -> int:
    """The entries per batch: ``batch_size``, or by default the size at which the word with the most nonzeros recurs
    :data:`RECURRENCES` times per batch on average (``RECURRENCES * nnz / its nonzeros``), at most
    :data:`DEFAULT_BATCH_SIZE`."""
    if batch_size is not None:
        return check_int(batch_size, "batch_size", minimum=1)
    busiest = max(int(np.diff(matrix.indptr).max(initial=1)), int(np.bincount(matrix.indices).max(initial=1)))
    return max(1, min(DEFAULT_BATCH_SIZE, RECURRENCES * matrix.nnz // busiest))


@contextmanager
def torch_threads(torch, n_threads: int):
    """PyTorch's intra-op threads set to ``n_threads`` for the duration (a process-wide setting, restored after)."""
    before = torch.get_num_threads()
    torch.set_num_threads(n_threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def entry_chunk(nnz: int, batch: int, device: str, device_memory: int | None) -> int | None:
    """Entries sent to the device at a time, a whole number of batches; None where all ``nnz`` entries fit in
    ``device_memory`` bytes (by default half the CUDA device's free memory; on the CPU, without a budget, all
    fit)."""
    torch = import_torch()
    if device_memory is None:
        if torch.device(device).type != "cuda":
            return None
        device_memory = torch.cuda.mem_get_info(torch.device(device))[0] // 2
    if ENTRY_BYTES * nnz <= device_memory:
        return None
    return batch * max(1, device_memory // (ENTRY_BYTES * batch))


def train_on_device(matrix: sp.csr_matrix, params: np.ndarray, *, epochs: int, learning_rate: float, x_max: float,
                    alpha: float, grad_clip: float, rng: np.random.Generator, device: str, batch_size: int | None,
                    n_threads: int, progress: bool, device_memory: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Train the ``(2V, D + 1)`` parameters (centre rows, then context rows) on ``device``; return them and the costs.

    Each epoch visits every nonzero once in an order drawn by a PyTorch generator seeded from
    ``rng``: the device's where the entries live there, else the host's (:func:`entry_chunk`); the
    same seed gives the same result on the same device, PyTorch and budget.
    """
    torch = import_torch()
    n_words, nnz = matrix.shape[0], matrix.nnz
    batch = resolve_batch_size(batch_size, matrix)
    chunk = entry_chunk(nnz, batch, device, device_memory)
    entries = matrix.tocoo()
    target = torch.device(device)
    home = target if chunk is None else torch.device("cpu")  # where the entries live
    with torch_threads(torch, n_threads):
        arrays = (entries.row.astype(np.int64), entries.col.astype(np.int64) + n_words,
                  np.log(entries.data.astype(np.float64)), glove_weights(entries.data, x_max, alpha))
        del entries
        columns = [torch.as_tensor(array, device=home) for array in arrays]
        del arrays
        parameters = torch.as_tensor(params, device=target)
        gradsq = torch.ones_like(parameters)
        generator = torch.Generator(device=home)
        costs = np.empty(epochs)
        logger.info("training GloVe on %s: %d words, %d nonzeros, D=%d, %d epochs, batches of %d entries%s",
                    device, n_words, nnz, params.shape[1] - 1, epochs, batch,
                    "" if chunk is None else f", streamed from host memory {chunk} at a time")
        with tqdm(total=epochs, desc="training GloVe", unit="epoch", disable=not progress, leave=False) as bar:
            for epoch in range(epochs):
                generator.manual_seed(int(rng.integers(2**63 - 1)))
                order = torch.randperm(nnz, generator=generator, device=home)
                cost = torch.zeros((), dtype=torch.float64, device=target)
                for rows, cols, log_values, weights in _batches(columns, order, batch, chunk, target):
                    cost += _batch_update(torch, parameters, gradsq, rows, cols, log_values, weights, learning_rate,
                                          grad_clip)
                costs[epoch] = float(cost) / nnz
                logger.info("epoch %d/%d: cost %.6f", epoch + 1, epochs, costs[epoch])
                bar.set_postfix(cost=f"{costs[epoch]:.5f}")
                bar.update()
        return parameters.cpu().numpy(), costs


def _batches(columns: list, order, batch: int, chunk: int | None, target) -> Iterator[list]:
    """The entries' ``columns`` (rows, columns, log counts, weights) batch by batch in ``order``, on ``target``.

    They are gathered in order a span of whole batches at a time into contiguous arrays, which the
    batches then slice (a few large gathers instead of four per batch): where the entries live on
    ``target`` (``chunk`` None), spans of about :data:`GATHERED_ENTRIES`; else ``chunk`` entries
    gathered in host memory and copied over. The batches are the same either way.
    """
    nnz = order.shape[0]
    span = chunk or batch * max(1, GATHERED_ENTRIES // batch)
    for first in range(0, nnz, span):
        part = order[first:first + span]
        gathered = [column.index_select(0, part).to(target) for column in columns]
        for start in range(0, part.shape[0], batch):
            yield [column[start:start + batch] for column in gathered]


def _batch_update(torch, params, gradsq, rows, cols, log_values, weights, learning_rate: float, grad_clip: float):
    """One batch of the C tool's update (see the module's docstring); returns the batch's summed cost.

    For entry ``(i, j)``: ``diff = w_i . v_j + b_i + c_j - log X_ij`` and ``g = f(X_ij) diff``; vector
    steps ``s = learning_rate * clip(g v_j, +-grad_clip)`` (and ``g w_i`` for ``v_j``) move the vectors by
    ``s / sqrt(accumulator)``, the accumulator then adds ``s^2``; bias steps are ``g / sqrt(accumulator)``,
    which then adds ``g^2``. An entry whose ``diff`` or ``g`` is not finite changes nothing; a vector
    update whose sum is not finite is dropped (its accumulators still grow), and so is a bias step
    that is not finite, as in the kernel. Both sides go as one ``(2B, D + 1)`` array: centre rows,
    then context rows.
    """
    dim, size = params.shape[1] - 1, rows.shape[0]
    # index_select: on the CPU about twice as fast as indexing with a tensor
    center, context = torch.index_select(params, 0, rows), torch.index_select(params, 0, cols)
    diff = torch.linalg.vecdot(center[:, :dim], context[:, :dim]) + center[:, dim] + context[:, dim] - log_values
    fdiff = weights * diff
    # the weights are finite and positive: g is finite where diff is, unless it overflows
    usable = torch.isfinite(fdiff)
    fdiff = torch.where(usable, fdiff, 0.0)
    cost = (0.5 * fdiff * torch.where(usable, diff, 0.0)).sum()
    both = torch.cat([fdiff, fdiff])[:, None]
    steps = torch.clamp(both * torch.cat([context, center]), -grad_clip, grad_clip) * learning_rate
    steps[:, dim] = both[:, 0]  # the bias steps: neither clipped nor scaled
    targets = torch.cat([rows, cols])
    # the steps, negated, over the accumulators' square roots (rsqrt: on the CPU about three times as fast as sqrt)
    updates = steps * -torch.rsqrt(torch.index_select(gradsq, 0, targets))
    vector_sums = updates[:, :dim].sum(dim=1)
    moved = torch.isfinite(vector_sums[:size]) & torch.isfinite(vector_sums[size:])
    updates[:, :dim] = torch.where(torch.cat([moved, moved])[:, None], updates[:, :dim], 0.0)
    updates[:, dim] = torch.where(torch.isfinite(updates[:, dim]), updates[:, dim], 0.0)
    # scatter_add_ sums the steps of a word that recurs in the batch (on the CPU several times faster than index_add_)
    spread = targets[:, None].expand(-1, dim + 1)
    params.scatter_add_(0, spread, updates)
    gradsq.scatter_add_(0, spread, steps * steps)
    return cost
