"""The Word Embedding Association Test (Caliskan et al. 2017): effect size and test statistic with GloVe-V errors.

The WEAT gradient is derived here from the definition (the GloVe-V paper's appendix formula is
wrong, method.md section 4): with ``s_t = mean_a cos(t, a) - mean_b cos(t, b)`` for the targets
``t`` of X then Y, ``N = mean_X s - mean_Y s`` and ``sd`` the standard deviation of all ``s_t``,

    d = N / sd,   dd/ds_t = e_t / sd - N (s_t - mean s) / ((n - ddof) sd^3),

with ``e_t = 1/|X|`` for t in X and ``-1/|Y|`` for t in Y, and ``ds_t / dcos(t, a) = 1/|A|``,
``ds_t / dcos(t, b) = -1/|B|``; the cosine gradients (``.cosine``) then carry it to the vectors.
The classic permutation test over word lists is in ``.permutation``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..._checks import DEFAULT_SEED
from ..._docstrings import fill_doc
from .cosine import cosine_product_gradient
from ..engine.estimation import DEFAULT_METHOD, estimate
from ..engine.results import ResultFamily
from ..engine.statistic import Statistic
from ..engine.words import DEFAULT_MISSING, EmbeddingWithCovariance, usable_lists


def positions(keys: tuple, words: Sequence) -> np.ndarray:
    """Position in ``keys`` of each word."""
    index = {key: i for i, key in enumerate(keys)}
    return np.array([index[w] for w in words], dtype=np.int64)


def target_associations(unit: np.ndarray, targets: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``s_t = mean_a cos(t, a) - mean_b cos(t, b)`` from unit vectors, vectorised: ``(..., n_targets)``."""
    t = unit[..., targets, :]
    return (np.einsum("...td,...ad->...t", t, unit[..., first, :]) / first.size
            - np.einsum("...td,...bd->...t", t, unit[..., second, :]) / second.size)


def weat_statistic(X: Sequence, Y: Sequence, A: Sequence, B: Sequence, ddof: int = 1) -> Statistic:
    """WEAT effect size ``d`` and test statistic ``S`` (Caliskan et al. 2017) as one statistic.

    ``S = sum_X s(x) - sum_Y s(y)`` and ``d = (mean_X s - mean_Y s) / std_{X u Y} s`` with
    ``ddof`` (1, the sample standard deviation, as the GloVe-V paper's appendix; WEFE uses 0).
    """
    if min(len(X), len(Y), len(A), len(B)) == 0:
        raise ValueError("WEAT needs non-empty target lists X, Y and attribute lists A, B")
    if len(X) + len(Y) - ddof <= 0:
        raise ValueError(f"ddof={ddof} leaves no degrees of freedom for {len(X) + len(Y)} targets")
    keys = tuple(dict.fromkeys([*X, *Y, *A, *B]))
    targets = positions(keys, [*X, *Y])
    first, second = positions(keys, A), positions(keys, B)
    n_x, n_targets = len(X), len(X) + len(Y)
    signs = np.where(np.arange(n_targets) < n_x, 1.0 / n_x, -1.0 / len(Y))

    def parts(vectors):
        unit = vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)
        s = target_associations(unit, targets, first, second)
        numerator = s[..., :n_x].mean(axis=-1) - s[..., n_x:].mean(axis=-1)
        return s, numerator, s.std(axis=-1, ddof=ddof)

    def function(vectors):
        s, numerator, sd = parts(vectors)
        return np.stack([numerator / sd, s[..., :n_x].sum(axis=-1) - s[..., n_x:].sum(axis=-1)], axis=-1)

    def gradient(vectors):
        s, numerator, sd = parts(vectors)
        by_effect = signs / sd - numerator * (s - s.mean()) / ((n_targets - ddof) * sd**3)
        by_statistic = np.where(np.arange(n_targets) < n_x, 1.0, -1.0)
        jacobian = np.empty((2, *vectors.shape))
        by_first, by_second = np.full(first.size, 1 / first.size), np.full(second.size, -1 / second.size)
        for row, by_target in enumerate((by_effect, by_statistic)):
            jacobian[row] = (cosine_product_gradient(vectors, targets, first, np.outer(by_target, by_first))
                             + cosine_product_gradient(vectors, targets, second, np.outer(by_target, by_second)))
        return jacobian

    return Statistic("WEAT", keys, ("effect size", "test statistic"), function, gradient,
                     [(-bound, bound) for bound in (effect_size_bound(n_x, len(Y), ddof), 2.0 * n_targets)])


def effect_size_bound(n_x: int, n_y: int, ddof: int) -> float:
    """The largest ``|d|`` a WEAT effect size can attain: ``sqrt((n - ddof) / n) / sqrt(p (1 - p))``, ``p = |X| / n``.

    ``d`` is a difference of group means over the standard deviation of all ``n`` values; the
    within-group spread only lowers it, so the bound is reached when each group is constant
    (2 for equal groups with ``ddof=0``; ``2 sqrt((n - 1) / n)`` with ``ddof=1``).
    """
    n = n_x + n_y
    share = n_x / n
    return float(np.sqrt((n - ddof) / n) / np.sqrt(share * (1 - share)))


@fill_doc
def weat(kv: EmbeddingWithCovariance, X: Sequence, Y: Sequence, A: Sequence, B: Sequence, *, ddof: int = 1,
         missing: str = DEFAULT_MISSING, method: str = DEFAULT_METHOD, alternative: str = "two-sided",
         n_draws: int = 2000, random_state=DEFAULT_SEED, use_t: bool = True, scale: str = "bounded") -> ResultFamily:
    """WEAT effect size and test statistic with GloVe-V standard errors (rows "effect size", "test statistic").

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    X, Y : sequence of str
        Target words (e.g. male and female names).
    A, B : sequence of str
        Attribute words (e.g. career and family words).
    ddof : int, default=1
        Delta degrees of freedom of the standard deviation in the effect size.
    {missing}
    {method}
    {alternative}
    {estimate_options}

    Returns
    -------
    ResultFamily
        The uncertainty is the embedding's (GloVe-V); see
        :func:`~glovev_ext.stats.weat_permutation_test` for the classic test over word-list
        assignments.
    """
    lists, dropped = usable_lists(kv, (X, Y, A, B), missing)
    return estimate(kv, weat_statistic(*lists, ddof=ddof), method=method, alternative=alternative,
                    n_draws=n_draws, random_state=random_state, dropped=dropped, use_t=use_t, scale=scale)
