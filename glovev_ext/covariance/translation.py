"""The translation of every word vector that fixed context vectors leave free (docs/method.md 6.23).

GloVe predicts ``log X_ij`` by ``w_i . c_j + b_i + b~_j``. With the context vectors ``c_j`` held fixed, moving every
word vector by ``v`` and every context bias by ``-c_j . v`` changes no prediction. Rows fitted again on part of a
corpus with the pooled context biases (a sub-corpus, a half of the calibration, a jackknife fold) therefore carry,
on top of their independent errors, one vector common to all of them: the part of that text's different use of its
contexts that lies along the context vectors. This module estimates it by generalised least squares over the rows
that carry most of its precision, so that it can be taken out of every row.

A move ``v`` of a row's data moves its posterior mean by ``(I - S P) v`` (``S`` the row's posterior covariance
before any widening along its vector, ``P`` the prior's precision): the prior holds back what the data do not
determine.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from .along import along_direction, widening
from .factor import Factor
from .prior import posterior_difference

TRANSLATION_ROWS = 1000
"""Rows, those of largest total co-occurrence, whose fits estimate a translation."""


def move_design(factor: Factor, precision: np.ndarray) -> np.ndarray:
    """How a move of a row's data moves its posterior mean: ``I - S P``.

    Parameters
    ----------
    factor : Factor
        The row's posterior covariance (its :attr:`Factor.unwidened` part where widened).
    precision : ndarray, shape (D, D)
        The prior's precision ``P``.

    Returns
    -------
    ndarray, shape (D, D)
        ``I - S P``.
    """
    base = factor.before_widening
    return np.eye(precision.shape[0]) - base.dense() @ precision


def posterior_move(factor: Factor, move: np.ndarray, precision: np.ndarray) -> np.ndarray:
    """How far a row's posterior mean moves when its data move by ``move``: ``(I - S P) move``, without forming ``S``.

    Parameters
    ----------
    factor : Factor
        The row's posterior covariance (its :attr:`Factor.unwidened` part where widened).
    move : ndarray, shape (D,)
        The move of the data, ``v``.
    precision : ndarray, shape (D, D)
        The prior's precision ``P``.

    Returns
    -------
    ndarray, shape (D,)
        ``v - S (P v)``.
    """
    base = factor.before_widening
    move = np.asarray(move, dtype=np.float64)
    return move - base.sigma2 * base.solve(precision @ move)


def remove_translation(embedding: np.ndarray, store, references: np.ndarray, precision: np.ndarray | None,
                       totals: np.ndarray, n_rows: int = TRANSLATION_ROWS) -> np.ndarray:
    """Take out of fitted rows their translation against reference estimates of the same rows.

    The translation is :func:`translation_against` over the :func:`translation_rows` (of largest total) that have
    a covariance and a reference, weighted by their covariances before widening (which no translation changes);
    every row with a covariance then moves by :func:`posterior_move` of it, and a widening along its vector
    (docs/method.md 6.22) turns to the moved vector, as large a factor along it as before.

    Parameters
    ----------
    embedding : ndarray, shape (n, D)
        The rows' posterior means (NaN where not fitted), changed in place.
    store : CovarianceStore
        Their covariances.
    references : ndarray, shape (n, D)
        Each row's reference estimate (e.g. the pooled fit's posterior mean; NaN where none).
    precision : ndarray, shape (D, D), or None
        The prior's precision ``P``; None without a prior (``P = 0``).
    totals : ndarray, shape (n,)
        Each row's total co-occurrence, which chooses the rows that estimate the translation.
    n_rows : int, default=TRANSLATION_ROWS
        How many rows estimate it.

    Returns
    -------
    ndarray, shape (D,)
        The translation taken out, ``v``.
    """
    if precision is None:
        precision = np.zeros((embedding.shape[1],) * 2)
    usable = (np.isfinite(embedding).all(axis=1) & np.isfinite(references).all(axis=1)
              & np.asarray(store.defined, dtype=bool))
    candidates = np.flatnonzero(usable)
    rows = candidates[translation_rows(np.asarray(totals, dtype=np.float64)[candidates], n_rows)]
    move = translation_against(embedding[rows], [store.factor(int(i)).before_widening for i in rows],
                               references[rows], precision)
    alongs = store.along
    for i in np.flatnonzero(np.isfinite(embedding).all(axis=1) & np.asarray(store.defined, dtype=bool)):
        base = store.factor(int(i)).before_widening
        moved = embedding[i] - posterior_move(base, move, precision)
        if alongs is not None and alongs[i].any():
            alongs[i] = _turned(alongs[i], base, embedding[i], moved, precision)
        embedding[i] = moved
    return move


def _turned(along: np.ndarray, base: Factor, mean: np.ndarray, moved: np.ndarray, precision: np.ndarray) -> np.ndarray:
    """The widening of a posterior at ``mean`` for the same posterior at ``moved``: the same factor ``r`` on the
    variance along its (new) direction."""
    direction = along_direction(base, mean, precision)
    if direction is None:  # no direction to widen along at the old mean: the widening as it was
        return along
    along_factor = 1.0 + float(along @ along) / base.quad_form(direction)
    return widening(base, moved, precision, along_factor)


def translation_rows(totals: np.ndarray, n_rows: int = TRANSLATION_ROWS) -> np.ndarray:
    """The rows whose fits estimate a translation: the ``n_rows`` of largest total, in row order.

    Parameters
    ----------
    totals : ndarray, shape (n,)
        Each row's total co-occurrence.
    n_rows : int, default=TRANSLATION_ROWS
        How many rows (all of them where there are fewer).

    Returns
    -------
    ndarray of int
        Their positions, ascending.
    """
    totals = np.asarray(totals, dtype=np.float64)
    return np.sort(np.argsort(-totals, kind="stable")[:n_rows])


def translation_against(vectors: Sequence[np.ndarray], factors: Sequence[Factor], references: Sequence[np.ndarray],
                        precision: np.ndarray) -> np.ndarray:
    """The translation ``v`` of rows' posterior means against other estimates of the same rows.

    Generalised least squares of ``w_i - r_i = (I - S_i P) v + e_i`` with ``Cov(e_i)`` the row's covariance (as
    given: widened or not).

    Parameters
    ----------
    vectors : sequence of ndarray, shape (D,)
        The rows' posterior means ``w_i`` (e.g. a sub-corpus's).
    factors : sequence of Factor
        Their covariances.
    references : sequence of ndarray, shape (D,)
        The same rows' reference estimates ``r_i`` (e.g. the pooled fit's).
    precision : ndarray, shape (D, D)
        The prior's precision ``P``.

    Returns
    -------
    ndarray, shape (D,)
        ``v``.
    """
    return _least_squares(((move_design(factor, precision), factor.dense(),
                            np.asarray(vector, dtype=np.float64) - reference)
                           for vector, factor, reference in zip(vectors, factors, references)), precision.shape[0])


def difference_translation(means_a: Sequence[np.ndarray], means_b: Sequence[np.ndarray],
                           factors_a: Sequence[Factor], factors_b: Sequence[Factor],
                           precision: np.ndarray) -> np.ndarray:
    """The translation ``t = v_A - v_B`` between two fits of the same rows on disjoint text under one prior.

    Generalised least squares of ``w_A - w_B = M t + e`` with ``M`` the mean of the two fits' :func:`move_design`
    and ``Cov(e)`` the difference's covariance before the fits' widenings, the prior's shared part out
    (:func:`.prior.posterior_difference`).

    Parameters
    ----------
    means_a, means_b : sequence of ndarray, shape (D,)
        The rows' posterior means in each fit.
    factors_a, factors_b : sequence of Factor
        Their covariances.
    precision : ndarray, shape (D, D)
        The prior's precision ``P``.

    Returns
    -------
    ndarray, shape (D,)
        ``t``.
    """
    return _least_squares(((0.5 * (move_design(factor_a, precision) + move_design(factor_b, precision)),
                            posterior_difference(factor_a.before_widening, factor_b.before_widening, precision,
                                                 mean_a, mean_b),
                            np.asarray(mean_a, dtype=np.float64) - mean_b)
                           for mean_a, mean_b, factor_a, factor_b in zip(means_a, means_b, factors_a, factors_b)),
                          precision.shape[0])


def _least_squares(terms: Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]], dim: int) -> np.ndarray:
    """The generalised least squares of ``y_i = X_i v + e_i``, ``Cov(e_i) = C_i``, from ``(X_i, C_i, y_i)``, refused
    by name where there is no row or the rows do not determine ``v``."""
    normal, right, n_rows = np.zeros((dim, dim)), np.zeros(dim), 0
    for design, covariance, target in terms:
        weighted = np.linalg.solve(covariance, design)
        normal += design.T @ weighted
        right += weighted.T @ target
        n_rows += 1
    if n_rows == 0:
        raise ValueError("no row to estimate the translation from (none with a covariance and a vector to compare)")
    try:
        return np.linalg.solve(normal, right)
    except np.linalg.LinAlgError:
        raise ValueError(f"the {n_rows} rows given do not determine a translation (their normal equations are "
                         "singular)") from None
