"""The two propagation engines: the delta method and Monte Carlo draws, for any Statistic.

Both read covariances only through the store's factors: the delta method forms
``Cov(t_k, t_l) = sum_i g_ki^T Sigma_i g_li`` from ``S_i^T G_i`` (``Sigma_i = S_i S_i^T``), and Monte
Carlo draws ``w_i + S_i z`` for the words a statistic touches, independently across words.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np

from .covariance_store import UndefinedCovarianceError
from .keyed_vectors import KeyedVectorsWithVariance
from .results import DELTA, MONTE_CARLO, RECONSTRUCTION, InferenceResult, ResultFamily, check_alternative
from .statistic import Statistic

_MISSING = ("raise", "drop")
_DRAW_ELEMENTS = 20_000_000  # doubles of drawn vectors held at once


def resolve_words(kv: KeyedVectorsWithVariance, words: Sequence, missing: str = "raise") -> tuple[list, list]:
    """Split words into those usable (in the vocabulary, with a covariance) and the others.

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    words : sequence
        Words in their roles (repeats are kept).
    missing : {"raise", "drop"}
        Refuse any unusable word, or drop it (returned, with the reason, by name).

    Returns
    -------
    kept : list
    dropped : list of str
        ``"word (reason)"`` for each unusable word.
    """
    if missing not in _MISSING:
        raise ValueError(f"missing must be 'raise' or 'drop', got {missing!r}")
    kept, dropped = [], []
    for word in words:
        reason = kv.unusable_reason(word)
        if reason is None:
            kept.append(word)
        else:
            dropped.append(f"{word} ({reason})")
    if dropped and missing == "raise":
        raise UndefinedCovarianceError(f"{len(dropped)} words cannot be used: {', '.join(dropped[:10])}"
                                       f"{' ...' if len(dropped) > 10 else ''}; pass missing='drop' (--missing drop on the "
                                       "command line) to leave them out")
    return kept, dropped


def point(kv: KeyedVectorsWithVariance, keys: Sequence) -> np.ndarray:
    """The trained vectors of ``keys`` as a float64 ``(k, D)`` array."""
    return np.asarray(np.vstack([kv.get_vector(key) for key in keys]), dtype=np.float64)


def delta_covariance(kv: KeyedVectorsWithVariance, statistic: Statistic
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Values at the trained vectors, their delta-method covariance, and each word's share of it.

    Returns
    -------
    values : ndarray, shape (m,)
    covariance : ndarray, shape (m, m)
    contributions : ndarray, shape (k, m)
        ``g_i^T Sigma_i g_i`` for each word i and value: the variances are their column sums.
    """
    vectors = point(kv, statistic.keys)
    jacobian = statistic.jacobian(vectors)
    covariance = np.zeros((jacobian.shape[0], jacobian.shape[0]))
    contributions = np.zeros((len(statistic.keys), jacobian.shape[0]))
    for i, key in enumerate(statistic.keys):
        gradients = jacobian[:, i, :].T
        if not gradients.any():
            continue
        whitened = kv.covariance_store.whiten(kv.covariance_row(key), gradients)
        covariance += whitened.T @ whitened
        contributions[i] = np.einsum("rm,rm->m", whitened, whitened)
    return statistic.value(vectors), covariance, contributions


def draw_values(kv: KeyedVectorsWithVariance, keys: Sequence, function: Callable[[np.ndarray], np.ndarray],
                n_draws: int, rng=None, vectorized: bool = True) -> np.ndarray:
    """Values of ``function`` at ``n_draws`` joint draws of the vectors of ``keys``.

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    keys : sequence
        Words to draw; each ``w_i ~ N(w_i, Sigma_i)`` independently.
    function : callable
        ``(n, k, D) -> (n, ...)`` when ``vectorized``, else ``(k, D) -> (...)`` called per draw.
    n_draws : int
    rng : None, int or numpy Generator
    vectorized : bool

    Returns
    -------
    ndarray, shape (n_draws, ...)
    """
    generator = np.random.default_rng(rng)
    base = point(kv, keys)
    rows = [kv.covariance_row(key) for key in keys]
    batch = max(1, min(n_draws, _DRAW_ELEMENTS // max(1, base.size)))
    outputs = []
    for start in range(0, n_draws, batch):
        size = min(batch, n_draws - start)
        drawn = np.repeat(base[None], size, axis=0)
        for i, row in enumerate(rows):
            drawn[:, i] += kv.covariance_store.transform_normal(row, generator.standard_normal((size, base.shape[1])))
        values = function(drawn) if vectorized else np.array([function(one) for one in drawn])
        outputs.append(np.asarray(values, dtype=np.float64))
    return np.concatenate(outputs, axis=0)


def estimate(kv: KeyedVectorsWithVariance, statistic: Statistic, *, method: str = "delta",
             null_values: Sequence[float] | float | None = None, alternative: str = "two-sided",
             n_draws: int = 2000, rng=None, dropped: Sequence[str] = ()) -> ResultFamily:
    """All values of a statistic with their joint covariance, by the delta method or Monte Carlo.

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    statistic : Statistic
    method : {"delta", "monte carlo"}
        The delta method (smooth statistics) or draws (covariance and percentile intervals from
        ``n_draws`` draws; the estimate stays the value at the trained vectors).
    null_values : float or sequence, optional
        Null values of the rows (0 by default).
    alternative : {"two-sided", "larger", "smaller"}
    n_draws : int
    rng : None, int or numpy Generator
    dropped : sequence of str
        Words the caller left out, reported in the result.

    Returns
    -------
    ResultFamily
    """
    check_alternative(alternative)
    m = len(statistic.names)
    nulls = np.zeros(m) if null_values is None else np.broadcast_to(np.asarray(null_values, float), (m,)).copy()
    contributions = None
    if method == "delta":
        values, covariance, contributions = delta_covariance(kv, statistic)
        draws, label = None, DELTA
    elif method in ("monte carlo", "monte-carlo", "mc"):
        values = statistic.value(point(kv, statistic.keys))
        draws = draw_values(kv, statistic.keys, statistic.function, n_draws, rng).reshape(n_draws, m)
        covariance = np.atleast_2d(np.cov(draws, rowvar=False))
        label = MONTE_CARLO
    else:
        raise ValueError(f"method must be 'delta' or 'monte carlo', got {method!r}")
    return ResultFamily(name=statistic.name, names=tuple(statistic.names), estimates=values, covariance=covariance,
                        null_values=nulls, alternative=alternative, method=label, uncertainty=RECONSTRUCTION,
                        words=tuple(statistic.keys), dropped=tuple(dropped), draws=draws,
                        variance_contributions=contributions)


def wald_test(kv: KeyedVectorsWithVariance, statistic: Statistic, *, null_value: float = 0.0,
              alternative: str = "two-sided", method: str = "delta", n_draws: int = 2000, rng=None,
              dropped: Sequence[str] = ()) -> InferenceResult:
    """Wald test of a single-valued statistic (see :func:`estimate`)."""
    if len(statistic.names) != 1:
        raise ValueError(f"{statistic.name} has {len(statistic.names)} values; use estimate() for several")
    family = estimate(kv, statistic, method=method, null_values=null_value, alternative=alternative,
                      n_draws=n_draws, rng=rng, dropped=dropped)
    return dataclasses.replace(family[0], name=statistic.name)
