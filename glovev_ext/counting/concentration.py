"""How concentrated each word is in few groups: the measure the noise calibration scales by (docs/method.md 6.21).

A word that a few books use heavily (a character's name, a ship, a trade) moves with those books:
between two halves of the books it differs far more than a word of the same count spread over
many. Its concentration over the groups of a text, from its count ``c_g`` in each group ``g``,

    x = sum_g c_g^2 / (sum_g c_g)^2,

is ``1 / n_eff``, the inverse of its effective number of groups: 1 when one group holds every
occurrence, ``1 / G`` when ``G`` groups hold equal shares. Under resampling of groups the variance
of a word's count grows as ``sum_g c_g^2``, so its noise factor is a level plus a multiple of ``x``
(:class:`~glovev_ext.covariance.NoiseScale`). The counts of every word in every group, read once,
give ``x`` for any union of groups (the pooled corpus, a half, a sub-corpus).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def group_concentration(counts_by_group: sp.spmatrix | np.ndarray, groups: np.ndarray | None = None) -> np.ndarray:
    """Each word's concentration over groups, ``sum_g c_g^2 / (sum_g c_g)^2``.

    Parameters
    ----------
    counts_by_group : sparse matrix or ndarray, shape (V, G)
        Each word's count in each group (:meth:`CooccurrenceVectorizer.count_by_group
        <glovev_ext.CooccurrenceVectorizer.count_by_group>`).
    groups : ndarray of int or of bool, optional
        The groups of the text the concentration describes (their columns, or a mask over the
        columns); all of them by default.

    Returns
    -------
    ndarray of float64, shape (V,)
        In ``[1 / G, 1]``; NaN for a word none of the groups holds.

    Examples
    --------
    >>> import numpy as np
    >>> from glovev_ext.counting import group_concentration
    >>> group_concentration(np.array([[5, 5], [10, 0], [0, 0]]))
    array([0.5, 1. , nan])
    """
    counts = sp.csc_matrix(counts_by_group, dtype=np.float64)
    if groups is not None:
        counts = counts[:, np.asarray(groups)]
    totals = np.asarray(counts.sum(axis=1)).ravel()
    squares = np.asarray(counts.multiply(counts).sum(axis=1)).ravel()
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(totals > 0, squares / totals**2, np.nan)


def check_group_concentration(values: object, n_rows: int, name: str) -> np.ndarray | None:
    """``values`` as a float64 array of ``n_rows`` concentrations (each in [0, 1], or NaN for unknown), or None.

    Parameters
    ----------
    values : array-like or None
        The concentrations to check.
    n_rows : int
        Rows of the matrix they describe.
    name : str
        What they are, for the error message.

    Returns
    -------
    ndarray or None

    Raises
    ------
    ValueError
        For a shape other than ``(n_rows,)`` or a value outside [0, 1].
    """
    if values is None:
        return None
    values = np.asarray(values, dtype=np.float64)
    if values.shape != (n_rows,):
        raise ValueError(f"{name} has shape {values.shape}; it needs one concentration per row, shape ({n_rows},)")
    known = values[np.isfinite(values)]
    if ((known < 0) | (known > 1 + 1e-9)).any() or np.isinf(values).any():
        raise ValueError(f"{name} holds values outside [0, 1] (a concentration over groups is sum c_g^2 / "
                         f"(sum c_g)^2; NaN for a word no group holds)")
    return values
