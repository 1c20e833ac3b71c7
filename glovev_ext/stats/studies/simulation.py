"""Interval coverage by simulation with known truth, through the library's own fits and estimates.

The GloVe-V model of a word's row, given the fitted context vectors ``v_j``, context biases ``c_j``
and the word's bias ``b_i``: ``log X_ij = b_i + c_j + w_i . v_j + e_ij`` with independent
``e_ij ~ N(0, s2_i / f(X_ij))`` and the weights ``f(X_ij)`` fixed. :class:`RowSimulator` takes as
truth each word's weighted-least-squares vector ``w_i*`` and residual variance at it, draws rows
from the model and refits them by the same per-word fit the covariance pass runs
(:meth:`WordFitter.fit_row <glovev_ext.covariance.WordFitter.fit_row>`); :func:`interval_coverage`
then estimates a statistic on each refit, as a user would, and counts how often its interval holds
the statistic's true value. With a prior (``point_estimate="posterior"``) the truth is each word's
fitted posterior mean, held fixed, and each refit is the posterior a user would get: its residual
variance re-estimated at the row's optimum (the pooled one held where the row has ``D`` or fewer
contexts) and the same prior. docs/method.md section 6 reports these coverages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..._checks import DEFAULT_SEED
from ..._docstrings import fill_doc
from ...covariance import UndefinedCovarianceError
from ...covariance.prior import GaussianPrior, posterior
from ...covariance.wls import WordFit, WordFitter, Workspace
from ...glove import glove_weights
from ..engine.estimation import estimate_resolved
from ..engine.statistic import Statistic
from ..engine.words import ResolvedWords


class RowSimulator:
    """Co-occurrence rows of chosen words drawn from the GloVe-V model, and their refits.

    Parameters
    ----------
    fitter : WordFitter
        The observed co-occurrences, fitted contexts and context biases; refits use its
        ``conditioning``.
    center_biases : ndarray, shape (V,)
        The fitted centre biases (held fixed, as the model does).
    rows : dict
        ``{key: row index}`` of the words to simulate.
    prior : GaussianPrior, optional
        Refit each row as its posterior under this prior (``GloVeVEstimator.prior_``); then
        ``center_vectors`` and ``sigma2`` are required.
    center_vectors : ndarray, shape (V, D), optional
        With a prior: the fitted posterior means, taken as the truth.
    sigma2 : ndarray, shape (V,), optional
        With a prior: the fitted residual variances (pooled where a row has ``D`` or fewer contexts),
        which the rows are drawn with.

    Attributes
    ----------
    truth : dict
        ``{key: w_i*}``, the weighted-least-squares vector of each word's observed row (an exact
        solve, whatever the refits' conditioning); with a prior, the fitted posterior mean.
    sigma2 : dict
        ``{key: s2_i}`` at ``w_i*`` (with a prior, the fitted one): the residual variance the rows are
        drawn with.
    """

    def __init__(self, fitter: WordFitter, center_biases: np.ndarray, rows: dict, prior: GaussianPrior | None = None,
                 center_vectors: np.ndarray | None = None, sigma2: np.ndarray | None = None):
        if prior is not None and (center_vectors is None or sigma2 is None):
            raise ValueError("a RowSimulator with a prior needs the fitted center_vectors and sigma2")
        exact = WordFitter(fitter.cooccurrence, fitter.context_vectors, fitter.context_biases, fitter.x_max,
                           fitter.alpha, "exact")
        self._fitter = fitter
        # the prior's precision and P mu, once: every refit of every draw uses them
        self._prior = None if prior is None else (prior.precision, prior.precision @ prior.mean)
        self._rows, self.truth, self.sigma2 = {}, {}, {}
        matrix = fitter.cooccurrence
        for key, i in rows.items():
            cols = matrix.indices[matrix.indptr[i]:matrix.indptr[i + 1]]
            values = matrix.data[matrix.indptr[i]:matrix.indptr[i + 1]]
            weights = glove_weights(values, fitter.x_max, fitter.alpha)
            if prior is None:
                fit = exact.fit_word(i, float(center_biases[i]), None)
                if fit.factor is None:
                    raise UndefinedCovarianceError(f"{key!r} (row {i}) has no covariance to simulate from")
                self.truth[key], self.sigma2[key] = fit.optimum, fit.sigma2
            else:
                self.truth[key], self.sigma2[key] = np.asarray(center_vectors[i], np.float64), float(sigma2[i])
            mean = center_biases[i] + fitter.context_biases[cols] + fitter.context_vectors[cols] @ self.truth[key]
            self._rows[key] = (cols, weights, float(center_biases[i]), mean)

    def draw(self, keys: Sequence, generator: np.random.Generator,
             shifts: Mapping | None = None) -> ResolvedWords:
        """One draw of the rows of ``keys``, each refitted: the vectors and covariances a user would get.

        ``shifts`` (``{key: vector}``) moves a word's true vector to ``truth[key] + shift`` for this
        draw: a planted change, as between two corpora that differ in that word.
        """
        shifts = {} if shifts is None else shifts
        vectors, factors = [], []
        for key in keys:
            cols, weights, bias, mean = self._rows[key]
            if key in shifts:
                mean = mean + self._fitter.context_vectors[cols] @ np.asarray(shifts[key], dtype=np.float64)
            log_values = mean + generator.standard_normal(cols.size) * np.sqrt(self.sigma2[key] / weights)
            fit = self._fitter.fit_row(cols, np.exp(log_values), bias, None, weights=weights)
            if self._prior is not None:
                fit = self._posterior(key, cols, np.exp(log_values), bias, weights, fit)
            vectors.append(fit.optimum)
            factors.append(fit.factor)
        return ResolvedWords(tuple(keys), np.vstack(vectors), tuple(factors))

    def _posterior(self, key, cols: np.ndarray, values: np.ndarray, bias: float, weights: np.ndarray,
                   fit: WordFit) -> WordFit:
        """The refit as the posterior a user would get: ``s2`` re-estimated where the row has one of its own."""
        dim = self._fitter.dim
        sigma2, dof = (fit.sigma2, cols.size - dim) if fit.factor is not None else (self.sigma2[key], np.inf)
        workspace = Workspace(dim, cols.size)
        hessian, rhs = self._fitter.row_normal_equations(cols, values, bias, workspace, weights)
        factor, mean, _ = posterior(hessian, rhs, sigma2, dof, *self._prior, workspace, with_share=False)
        return WordFit(cols.size, factor, mean, 0.0, bias)


@dataclass(frozen=True)
class Coverage:
    """How often intervals held the true value, over simulated refits.

    Attributes
    ----------
    names : tuple of str
        The statistic's values.
    truth : ndarray, shape (m,)
        Their true values.
    coverage : ndarray, shape (m,)
        Share of replications whose interval held the truth.
    median_width : ndarray, shape (m,)
    n_replications : int
    methods : dict
        How many replications each propagation method served (``method="auto"`` chooses per refit).
    confidence_level : float
    """

    names: tuple
    truth: np.ndarray
    coverage: np.ndarray
    median_width: np.ndarray
    n_replications: int
    methods: dict
    confidence_level: float

    def summary_frame(self) -> pd.DataFrame:
        """One row per value: truth, coverage, its Monte Carlo standard error and the median width."""
        error = np.sqrt(self.coverage * (1 - self.coverage) / self.n_replications)
        return pd.DataFrame({"truth": self.truth, "coverage": self.coverage, "coverage s.e.": error,
                             "median width": self.median_width}, index=list(self.names))


@fill_doc
def interval_coverage(simulator: RowSimulator, statistic: Statistic, n_replications: int = 2000, *,
                      confidence_level: float = 0.95, random_state=DEFAULT_SEED, **options) -> Coverage:
    """Coverage of a statistic's intervals over ``n_replications`` simulated refits of its words.

    Parameters
    ----------
    simulator : RowSimulator
        Knows every word of ``statistic.keys``.
    statistic : Statistic
    n_replications : int, default=2000
    {confidence_level}
    {random_state}
        One generator draws the rows and any Monte Carlo draws of every replication.
    **options
        Passed to :func:`~glovev_ext.stats.estimate` (``method``, ``use_t``, ``scale``, ``n_draws``).

    Returns
    -------
    Coverage
    """
    generator = np.random.default_rng(random_state)
    truth = statistic.value(np.vstack([simulator.truth[key] for key in statistic.keys]))
    covered = np.zeros((n_replications, truth.size), dtype=bool)
    widths = np.zeros((n_replications, truth.size))
    methods: dict[str, int] = {}
    for r in range(n_replications):
        words = simulator.draw(statistic.keys, generator)
        family = estimate_resolved(words, statistic, random_state=generator, **options)
        interval = family.conf_int(confidence_level=confidence_level).to_numpy()
        covered[r] = (interval[:, 0] <= truth) & (truth <= interval[:, 1])
        widths[r] = interval[:, 1] - interval[:, 0]
        methods[family.method] = methods.get(family.method, 0) + 1
    return Coverage(tuple(statistic.names), truth, covered.mean(axis=0), np.median(widths, axis=0), n_replications,
                    methods, confidence_level)
