"""The Gram matrices of many words' weighted designs at once, on a PyTorch device (the optional GPU path).

A word's GloVe-V quantities all come from the Gram matrix of its weighted design ``[A | s | t]``
(:meth:`WordFitter.fit_gram <glovev_ext.covariance.wls.WordFitter.fit_gram>`): ``|K| (D + 2)^2``
operations, then ``D^3 / 3`` for the Cholesky factor of ``H`` and ``O(D^2)`` for the rest.
Here the designs of a block's words are gathered on the device, words with a similar number of
contexts padded with zero rows to a common length (which adds nothing to a Gram matrix), and
multiplied in one batched product per group, and each ``H`` (the Gram matrix's leading ``D x D``
block) is factorised there by a batched Cholesky. The design's entries are computed on the CPU as
:class:`~glovev_ext.covariance.wls.WordFitter` computes them, so the Gram matrices and factors differ
from the CPU path's only by the order of the sums; the condition number is LAPACK's estimate from
the factor, on the CPU, as the CPU path gives it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..glove import glove_weights
from ..glove.device import import_torch

_PADDED_ELEMENTS = 1 << 24  # doubles of padded designs on the device at once (128 MB)


@dataclass(frozen=True)
class DeviceContexts:
    """The context vectors of a pass, copied to a PyTorch device once for all its blocks.

    Attributes
    ----------
    device : str
        The PyTorch device.
    vectors : torch.Tensor, shape (V, D)
        The context vectors there (on the CPU, a view of the array itself).
    """

    device: str
    vectors: object

    @classmethod
    def of(cls, context_vectors: np.ndarray, device: str) -> DeviceContexts:
        """``context_vectors`` copied to ``device``."""
        torch = import_torch()
        return cls(device, torch.as_tensor(np.ascontiguousarray(context_vectors, dtype=np.float64),
                                           device=torch.device(device)))


def design_grams(fitter, words: np.ndarray, center_biases: np.ndarray,
                 contexts: DeviceContexts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Gram matrix of each word's weighted design, with its bias fixed, and the Cholesky factor of its ``H``.

    Parameters
    ----------
    fitter : WordFitter
        The rows and the context parameters.
    words : ndarray of int
        Rows of ``fitter``'s matrix.
    center_biases : ndarray, shape (len(words),)
        Each word's bias ``b_i`` (held fixed: ``t = sqrt(f) (log X - c - b)``).
    contexts : DeviceContexts
        ``fitter``'s context vectors on the device that computes.

    Returns
    -------
    grams : ndarray of float64, shape (len(words), D + 2, D + 2)
    factors : ndarray of float64, shape (len(words), D, D)
        The lower Cholesky factor of each ``H`` (``grams[k, :D, :D]``), factorised on the device.
    failed : ndarray of int, shape (len(words),)
        0 where the factorisation succeeded, else the order of the leading minor that is not positive.
    """
    torch = import_torch()
    matrix, dim = fitter.cooccurrence, fitter.dim
    target = torch.device(contexts.device)
    grams, factors = np.empty((words.size, dim + 2, dim + 2)), np.empty((words.size, dim, dim))
    failed = np.zeros(words.size, dtype=np.int64)
    if words.size == 0:
        return grams, factors, failed
    n_contexts = np.diff(matrix.indptr)[words]
    # groups of words whose context counts share a power of two: padding at most doubles a design
    groups = np.ceil(np.log2(np.maximum(n_contexts, 1))).astype(np.int64)
    for group in np.unique(groups):
        members = np.flatnonzero(groups == group)
        length = int(n_contexts[members].max())
        per_chunk = max(1, _PADDED_ELEMENTS // (length * (dim + 2)))
        for start in range(0, members.size, per_chunk):
            chosen = members[start:start + per_chunk]
            design = _padded_designs(torch, fitter, words[chosen], n_contexts[chosen], center_biases[chosen], length,
                                     contexts.vectors, target)
            gram = torch.bmm(design.transpose(1, 2), design)
            factor, info = torch.linalg.cholesky_ex(gram[:, :dim, :dim])
            grams[chosen], factors[chosen] = gram.cpu().numpy(), factor.cpu().numpy()
            failed[chosen] = info.cpu().numpy()
    return grams, factors, failed


def _padded_designs(torch, fitter, rows: np.ndarray, n_contexts: np.ndarray, center_biases: np.ndarray, length: int,
                    context_vectors, target):
    """``(len(rows), length, D + 2)`` designs ``[s v_j | s | t]`` on the device, zero past each row's contexts."""
    matrix = fitter.cooccurrence
    offsets = np.arange(length)
    present = offsets[None, :] < n_contexts[:, None]
    positions = np.where(present, matrix.indptr[rows][:, None] + offsets[None, :], 0)
    cols, values = matrix.indices[positions], np.where(present, matrix.data[positions], 1.0)
    root_weights = np.where(present, np.sqrt(glove_weights(values, fitter.x_max, fitter.alpha)), 0.0)
    targets = root_weights * (np.log(values) - fitter.context_biases[cols] - center_biases[:, None])
    scales = torch.as_tensor(root_weights, device=target)
    gathered = context_vectors[torch.as_tensor(cols, device=target)] * scales[..., None]
    return torch.cat([gathered, scales[..., None], torch.as_tensor(targets, device=target)[..., None]], dim=2)
