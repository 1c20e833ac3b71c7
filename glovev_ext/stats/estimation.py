"""Any Statistic of an embedding with its uncertainty: :func:`estimate` (all values) and :func:`wald_test` (one)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from .._deprecation import RNG, renamed_keywords
from .delta import delta_covariance
from .monte_carlo import draw_values
from .results import DELTA, MONTE_CARLO, RECONSTRUCTION, InferenceResult, ResultFamily, check_alternative
from .statistic import Statistic
from .words import EmbeddingWithCovariance, ResolvedWords, resolve

METHODS = ("delta", "monte carlo")


def check_method(method: str) -> str:
    """Validate a propagation method (``"monte-carlo"`` and ``"mc"`` also name Monte Carlo)."""
    if method in ("monte-carlo", "mc"):
        return "monte carlo"
    if method not in METHODS:
        raise ValueError(f"method must be 'delta' or 'monte carlo', got {method!r}")
    return method


@renamed_keywords(rng=RNG)
def estimate(kv: EmbeddingWithCovariance, statistic: Statistic, *, method: str = "delta",
             null_values: Sequence[float] | float | None = None, alternative: str = "two-sided",
             n_draws: int = 2000, random_state=None, dropped: Sequence[str] = ()) -> ResultFamily:
    """All values of a statistic with their joint covariance, by the delta method or Monte Carlo.

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
        Every word of ``statistic.keys`` must be in it with a covariance.
    statistic : Statistic
    method : {"delta", "monte carlo"}
        The delta method (smooth statistics) or draws (covariance from ``n_draws`` draws; the
        estimate stays the value at the trained vectors).
    null_values : float or sequence, optional
        Null values of the rows (0 by default).
    alternative : {"two-sided", "larger", "smaller"}
    n_draws : int
    random_state : None, int or numpy Generator
    dropped : sequence of str
        Words the caller left out, reported in the result.

    Returns
    -------
    ResultFamily
    """
    return estimate_resolved(resolve(kv, statistic.keys), statistic, method=method, null_values=null_values,
                             alternative=alternative, n_draws=n_draws, random_state=random_state, dropped=dropped)


def estimate_resolved(words: ResolvedWords, statistic: Statistic, *, method: str = "delta",
                      null_values: Sequence[float] | float | None = None, alternative: str = "two-sided",
                      n_draws: int = 2000, random_state=None, dropped: Sequence[str] = ()) -> ResultFamily:
    """:func:`estimate` on words already resolved (``words.keys`` are ``statistic.keys``, in order)."""
    check_alternative(alternative)
    method = check_method(method)
    words.check_keys(statistic.keys)
    m = len(statistic.names)
    nulls = np.zeros(m) if null_values is None else np.broadcast_to(np.asarray(null_values, float), (m,)).copy()
    contributions = draws = None
    if method == "delta":
        values, covariance, contributions = delta_covariance(words, statistic)
        label = DELTA
    else:
        values = statistic.value(words.vectors)
        draws = draw_values(words, statistic.function, n_draws, random_state).reshape(n_draws, m)
        covariance = np.atleast_2d(np.cov(draws, rowvar=False))
        label = MONTE_CARLO
    return ResultFamily(name=statistic.name, names=tuple(statistic.names), estimates=values, covariance=covariance,
                        null_values=nulls, alternative=alternative, method=label, uncertainty=RECONSTRUCTION,
                        words=tuple(statistic.keys), dropped=tuple(dropped), draws=draws,
                        variance_contributions=contributions)


@renamed_keywords(rng=RNG)
def wald_test(kv: EmbeddingWithCovariance, statistic: Statistic, *, null_value: float = 0.0,
              alternative: str = "two-sided", method: str = "delta", n_draws: int = 2000, random_state=None,
              dropped: Sequence[str] = ()) -> InferenceResult:
    """Wald test of a single-valued statistic (see :func:`estimate`)."""
    if len(statistic.names) != 1:
        raise ValueError(f"{statistic.name} has {len(statistic.names)} values; use estimate() for several")
    family = estimate(kv, statistic, method=method, null_values=null_value, alternative=alternative,
                      n_draws=n_draws, random_state=random_state, dropped=dropped)
    return dataclasses.replace(family[0], name=statistic.name)
