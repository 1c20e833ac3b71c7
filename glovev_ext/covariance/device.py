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

from contextlib import AbstractContextManager
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..glove import glove_weights
from ..glove.device import import_torch, torch_threads
from .wls import WordFit, WordFitter, Workspace, gram_normal_equations

DEVICE_WORDS = 64  # words whose Gram matrices a device computes at once (a (64, D + 2, D + 2) array: 47 MB at D = 300)
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


def design_grams(fitter, words: np.ndarray, center_biases: np.ndarray, contexts: DeviceContexts, *,
                 factorise: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    factorise : bool, default=True
        Also factorise each ``H``; without, ``factors`` is empty and ``failed`` all 0.

    Returns
    -------
    grams : ndarray of float64, shape (len(words), D + 2, D + 2)
    factors : ndarray of float64, shape (len(words), D, D), or (0, D, D) without ``factorise``
        The lower Cholesky factor of each ``H`` (``grams[k, :D, :D]``), factorised on the device.
    failed : ndarray of int, shape (len(words),)
        0 where the factorisation succeeded, else the order of the leading minor that is not positive.
    """
    torch = import_torch()
    matrix, dim = fitter.cooccurrence, fitter.dim
    target = torch.device(contexts.device)
    grams, factors = np.empty((words.size, dim + 2, dim + 2)), np.empty((words.size if factorise else 0, dim, dim))
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
            grams[chosen] = gram.cpu().numpy()
            if factorise:
                factor, info = torch.linalg.cholesky_ex(gram[:, :dim, :dim])
                factors[chosen], failed[chosen] = factor.cpu().numpy(), info.cpu().numpy()
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


class DeviceWordFitter(WordFitter):
    """A :class:`~glovev_ext.covariance.wls.WordFitter` whose rows' Gram matrices come from a PyTorch device.

    Each row's bias is fixed when the fitter is made (or left free for every row), so that the
    Gram matrices of :data:`DEVICE_WORDS` consecutive rows can be computed at once
    (:func:`design_grams`) the first time one of them is asked for; with fixed biases the device
    also factorises their ``H``. :meth:`fit_word` and :meth:`normal_equations` then take the rest
    from the Gram matrix as the CPU fitter does (:meth:`~glovev_ext.covariance.wls.WordFitter.fit_gram`),
    so every pass that fits rows one at a time runs on a device unchanged. One fitter serves one
    thread (it keeps the last Gram matrices it computed).

    Parameters
    ----------
    cooccurrence, context_vectors, context_biases, x_max, alpha, conditioning
        As for :class:`~glovev_ext.covariance.wls.WordFitter`.
    contexts : DeviceContexts
        ``context_vectors`` on the device.
    center_biases : ndarray, shape (n_rows,), or None
        Every row's bias, held fixed; None: every row's bias is free (estimated with its vector).
    """

    def __init__(self, cooccurrence: sp.csr_matrix, context_vectors: np.ndarray, context_biases: np.ndarray,
                 x_max: float, alpha: float, conditioning: str = "exact", *, contexts: DeviceContexts,
                 center_biases: np.ndarray | None):
        super().__init__(cooccurrence, context_vectors, context_biases, x_max, alpha, conditioning)
        self.contexts = contexts
        self.center_biases = None if center_biases is None else np.asarray(center_biases, dtype=np.float64)
        self._n_contexts = self.n_contexts()  # read per chunk of rows: computed once, not per chunk
        self._chunk: tuple | None = None

    @classmethod
    def of(cls, fitter: WordFitter, device: str | None, center_biases: np.ndarray | None) -> WordFitter:
        """``fitter`` on ``device`` with its rows' biases fixed at ``center_biases`` (None: free); ``fitter`` itself
        where ``device`` is None."""
        if device is None:
            return fitter
        return cls(fitter.cooccurrence, fitter.context_vectors, fitter.context_biases, fitter.x_max, fitter.alpha,
                   fitter.conditioning, contexts=DeviceContexts.of(fitter.context_vectors, device),
                   center_biases=center_biases)

    def for_rows(self, rows: sp.csr_matrix, block: np.ndarray) -> DeviceWordFitter:
        """A fitter of ``rows``, the rows ``block`` of this one's matrix, on the same device with their biases."""
        return DeviceWordFitter(rows, self.context_vectors, self.context_biases, self.x_max, self.alpha,
                                self.conditioning, contexts=self.contexts,
                                center_biases=None if self.center_biases is None else self.center_biases[block])

    def compute_threads(self) -> AbstractContextManager:
        """PyTorch's threads held to one while threads fit rows in parallel, as BLAS's are (PyTorch's threads in
        every fitting thread would spin against each other)."""
        return torch_threads(import_torch(), 1)

    def fit_word(self, i: int, center_bias: float | None, center_vector: np.ndarray | None,
                 workspace: Workspace | None = None) -> WordFit:
        """:meth:`WordFitter.fit_word <glovev_ext.covariance.wls.WordFitter.fit_word>`, from the device's Gram
        matrix (``center_bias`` must be the row's bias this fitter was made with, or None if it was made free)."""
        free_bias = self._check_bias(i, center_bias)
        n_contexts = int(self._n_contexts[i])
        if n_contexts - self.dim - (1 if free_bias else 0) <= 0:
            return super().fit_word(i, center_bias, center_vector, workspace)
        if workspace is None:
            workspace = self.workspace()
        gram, factored = self._gram(i)
        design_bias = 0.0 if free_bias else center_bias
        return self.fit_gram(gram, n_contexts, center_bias, center_vector, workspace,
                             lambda: self.weighted_design(i, design_bias, workspace), factored)

    def normal_equations(self, i: int, center_bias: float | None, workspace: Workspace) -> tuple:
        """:meth:`WordFitter.normal_equations <glovev_ext.covariance.wls.WordFitter.normal_equations>`, from the
        device's Gram matrix (``center_bias`` as for :meth:`fit_word`)."""
        free_bias = self._check_bias(i, center_bias)
        return gram_normal_equations(self._gram(i)[0], self.dim, free_bias)

    def _check_bias(self, i: int, center_bias: float | None) -> bool:
        """Whether row ``i``'s bias is free; an error where ``center_bias`` is not the one the Gram matrix is for."""
        expected = None if self.center_biases is None else float(self.center_biases[i])
        if (center_bias is None) != (expected is None) or (expected is not None and center_bias != expected):
            raise ValueError(f"row {i} asked for with bias {center_bias!r}; this device fitter's Gram matrices are "
                             f"for bias {expected!r}")
        return expected is None

    def _gram(self, i: int) -> tuple[np.ndarray, tuple | None]:
        """Row ``i``'s Gram matrix, and with fixed biases the device's ``(factor of H or None, status)``; the
        Gram matrices of its :data:`DEVICE_WORDS` rows are computed together the first time one is asked for."""
        start = i - i % DEVICE_WORDS
        if self._chunk is None or self._chunk[0] != start:
            n_rows = self.cooccurrence.shape[0]
            rows = np.arange(start, min(n_rows, start + DEVICE_WORDS))
            rows = rows[self._n_contexts[rows] > 0]
            biases = np.zeros(rows.size) if self.center_biases is None else self.center_biases[rows]
            grams, factors, failed = design_grams(self, rows, biases, self.contexts,
                                                  factorise=self.center_biases is not None)
            self._chunk = (start, {int(k): p for p, k in enumerate(rows)}, grams, factors, failed)
        _, position, grams, factors, failed = self._chunk
        p = position.get(i)
        if p is None:  # no contexts: an empty design
            return np.zeros((self.dim + 2, self.dim + 2)), (None, 1)
        if self.center_biases is None:
            return grams[p], None
        return grams[p], (None if failed[p] else factors[p], int(failed[p]))
