"""GloVe training with the Stanford C tool's algorithm (AdaGrad, Hogwild threads)."""

from __future__ import annotations

import logging
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from tqdm.auto import tqdm

from .._checks import as_generator, check_int, check_positive_float, resolve_n_jobs
from ..counting import check_cooccurrence
from ._adagrad_kernel import adagrad_pass, shuffle_in_place
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


def train_glove(cooccurrence: sp.spmatrix | np.ndarray, n_components: int = 50, *, epochs: int = 25,
                learning_rate: float = 0.05, x_max: float = 100.0, alpha: float = 0.75,
                grad_clip: float = 100.0, random_state: object = None, n_jobs: int | None = -1,
                progress: bool = True) -> GloVeParameters:
    """Train GloVe on a co-occurrence matrix with the Stanford C tool's algorithm.

    Every nonzero ``X_ij`` is one training entry. Parameters start at ``U(-0.5, 0.5) / D``
    (biases included) with squared-gradient accumulators at 1.0; each epoch visits the entries
    in a fresh random order, split into ``n_jobs`` contiguous segments that threads update without
    locks. Vector steps are ``learning_rate * clip(g, +-grad_clip) / sqrt(accumulator)``, with the
    accumulator summing the squared clipped steps; bias steps are ``g / sqrt(accumulator)`` with
    no learning rate, as in ``glove.c``. An entry whose residual is not finite is skipped.

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
    random_state : None, int, numpy Generator or RandomState
        Seeds the initialisation and the per-epoch orders. With ``n_jobs=1`` the same seed
        gives bit-for-bit identical parameters.
    n_jobs : int or None, default=-1
        Threads (None or 1: one; -1: every core).
    progress : bool, default=True
        Show a tqdm progress bar over epochs.

    Returns
    -------
    GloVeParameters

    Raises
    ------
    ValueError
        For an invalid matrix (see :func:`glovev_ext.check_cooccurrence`) or parameter.
    """
    matrix = check_cooccurrence(cooccurrence, name="cooccurrence")
    n_components = check_int(n_components, "n_components", minimum=1)
    epochs = check_int(epochs, "epochs", minimum=1)
    learning_rate = check_positive_float(learning_rate, "learning_rate")
    x_max = check_positive_float(x_max, "x_max")
    if not (isinstance(alpha, (int, float)) and math.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"alpha must be a finite number >= 0, got {alpha!r}")
    grad_clip = check_positive_float(grad_clip, "grad_clip")
    n_threads = resolve_n_jobs(n_jobs)
    rng = as_generator(random_state)

    n_words = matrix.shape[0]
    entries = matrix.tocoo()
    rows = entries.row.astype(np.int32)
    cols = entries.col.astype(np.int32)
    log_values = np.log(entries.data)
    weights = glove_weights(entries.data, x_max, alpha)
    nnz = rows.size

    params = (rng.random((2 * n_words, n_components + 1)) - 0.5) / n_components
    gradsq = np.ones_like(params)
    costs = np.empty(epochs)
    logger.info("training GloVe: %d words, %d nonzeros, D=%d, %d epochs, %d threads",
                n_words, nnz, n_components, epochs, n_threads)
    bounds = np.linspace(0, nnz, n_threads + 1).astype(np.int64)
    order = np.arange(nnz, dtype=np.int32 if nnz < 2**31 else np.int64)
    pool = ThreadPoolExecutor(n_threads, thread_name_prefix="glovev-train") if n_threads > 1 else None
    try:
        with tqdm(total=epochs, desc="training GloVe", unit="epoch", disable=not progress, leave=False) as bar:
            for epoch in range(epochs):
                shuffle_in_place(order, int(rng.integers(2**63 - 1)))
                segments = [order[bounds[t]:bounds[t + 1]] for t in range(n_threads)]
                args = (params, gradsq, rows, cols, log_values, weights)
                if pool is None:
                    total = adagrad_pass(*args, segments[0], learning_rate, grad_clip)
                else:
                    futures = [pool.submit(adagrad_pass, *args, segment, learning_rate, grad_clip)
                               for segment in segments]
                    total = sum(future.result() for future in futures)
                costs[epoch] = total / nnz
                logger.info("epoch %d/%d: cost %.6f", epoch + 1, epochs, costs[epoch])
                bar.set_postfix(cost=f"{costs[epoch]:.5f}")
                bar.update()
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    return GloVeParameters(
        center_vectors=np.ascontiguousarray(params[:n_words, :n_components]),
        context_vectors=np.ascontiguousarray(params[n_words:, :n_components]),
        center_biases=params[:n_words, n_components].copy(),
        context_biases=params[n_words:, n_components].copy(),
        costs=costs,
    )
