"""Point estimates of the centre vectors other than the trained ones (docs/method.md section 6.6).

GloVe-V takes each centre vector to be the weighted-least-squares optimum given the context
vectors and both biases; AdaGrad stops short of it. :data:`POINT_ESTIMATES`:

- ``"trained"``: the trained vectors (the paper's);
- ``"optimum"``: each vector replaced by its optimum given the trained C, b, c (the covariance
  pass computes it anyway, and then takes the residual variance there);
- ``"alternating"``: exact alternating sweeps after training, each solving every centre vector
  given C, b, c and then every context vector given W, b, c (rows of the transposed matrix),
  ending with the centre vectors (the covariance pass's optimum);
- ``"posterior"``: the posterior mean under an empirical-Bayes Gaussian prior, after regularised
  sweeps (:mod:`.prior`).

Biases stay as trained. A row without an exact solution (``|K| <= D``, or a numerically singular
block) keeps its vector.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..glove import GloVeParameters
from ._row_blocks import RowBlockMap
from ._symmetry import transposed_rows
from .device import DeviceWordFitter
from .wls import WordFitter

POINT_ESTIMATES = ("trained", "optimum", "alternating", "posterior")


def check_point_estimate(point_estimate: str) -> str:
    """Validate a point estimate."""
    if point_estimate not in POINT_ESTIMATES:
        raise ValueError(f"point_estimate must be one of {POINT_ESTIMATES}, got {point_estimate!r}")
    return point_estimate


def optimum_vectors(fitter: WordFitter, biases: np.ndarray, vectors: np.ndarray, n_jobs: int, *,
                    client=None) -> np.ndarray:
    """Every row's weighted-least-squares vector given ``fitter``'s fixed side and the row's bias.

    Rows without an exact solution keep their row of ``vectors``. Blocks of rows run on ``n_jobs``
    threads with one BLAS thread each, or on the Dask cluster of ``client`` (the same numbers).
    """
    n_contexts = fitter.n_contexts()
    rows = np.flatnonzero(n_contexts > fitter.dim)
    out = np.array(vectors, dtype=np.float64, copy=True)
    blocks = np.array_split(rows, max(1, 8 * n_jobs))
    with RowBlockMap(n_jobs, client) as blocks_map:
        for block, (optima, solved) in zip(blocks, blocks_map.map(_optimum_block, fitter, blocks,
                                                                  lambda block: (biases[block],))):
            out[block[solved]] = optima[solved]
    return out


def _optimum_block(fitter: WordFitter, biases: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A block's optima and which of its rows have one."""
    workspace = fitter.workspace()
    optima, solved = np.full((biases.size, fitter.dim), np.nan), np.zeros(biases.size, dtype=bool)
    for k in range(biases.size):
        fit = fitter.fit_word(k, float(biases[k]), None, workspace)
        if fit.factor is not None:
            optima[k], solved[k] = fit.optimum, True
    return optima, solved


def alternating_sweeps(cooccurrence: sp.csr_matrix, parameters: GloVeParameters, n_sweeps: int, x_max: float,
                       alpha: float, conditioning: str, n_jobs: int, *, client=None,
                       device: str | None = None) -> GloVeParameters:
    """``n_sweeps`` sweeps of W given C, b, c then C given W, b, c; the last W step is left to the covariance pass.

    Parameters
    ----------
    cooccurrence : scipy.sparse.csr_matrix, shape (V, V)
        Canonical co-occurrence matrix (rows are centre words).
    parameters : GloVeParameters
        The trained parameters to start from.
    n_sweeps : int
    x_max, alpha : float
    conditioning : {"exact", "paper"}
    n_jobs : int
        Threads (one BLAS thread each).
    client : dask.distributed.Client or str, optional
        Solve the rows on this Dask cluster instead (the same numbers).
    device : str or None
        Compute the rows' Gram matrices on this PyTorch device
        (:class:`~glovev_ext.covariance.device.DeviceWordFitter`).

    Returns
    -------
    GloVeParameters
        New centre and context vectors; biases and training costs as given.
    """
    transposed = transposed_rows(cooccurrence)
    center, context = parameters.center_vectors, parameters.context_vectors
    center_biases, context_biases = parameters.center_biases, parameters.context_biases
    for _ in range(n_sweeps):
        rows = DeviceWordFitter.of(WordFitter(cooccurrence, context, context_biases, x_max, alpha, conditioning),
                                   device, center_biases)
        center = optimum_vectors(rows, center_biases, center, n_jobs, client=client)
        rows = DeviceWordFitter.of(WordFitter(transposed, center, center_biases, x_max, alpha, conditioning),
                                   device, context_biases)
        context = optimum_vectors(rows, context_biases, context, n_jobs, client=client)
    return GloVeParameters(center, context, parameters.center_biases, parameters.context_biases,
                           costs=parameters.costs)
