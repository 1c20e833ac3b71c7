"""Bias statistics: WEAT (effect size, test statistic, permutation test) and the Garg et al. cosine bias.

The WEAT gradient is derived here from the definition (the GloVe-V paper's appendix formula is
wrong, method.md section 4): with ``s_t = mean_a cos(t, a) - mean_b cos(t, b)`` for the targets
``t`` of X then Y, ``N = mean_X s - mean_Y s`` and ``sd`` the standard deviation of all ``s_t``,

    d = N / sd,   dd/ds_t = e_t / sd - N (s_t - mean s) / ((n - ddof) sd^3),

with ``e_t = 1/|X|`` for t in X and ``-1/|Y|`` for t in Y, and ``ds_t / dcos(t, a) = 1/|A|``,
``ds_t / dcos(t, b) = -1/|B|``; the cosine gradients then carry it to the vectors.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from .inference import estimate, point, resolve_words
from .keyed_vectors import KeyedVectorsWithVariance
from .results import PERMUTATION, WORD_LISTS, InferenceResult, ResultFamily, check_alternative
from .statistic import Statistic, cosine_product_gradient, scatter_rows, stack


def _positions(keys: tuple, words: Sequence) -> np.ndarray:
    index = {key: i for i, key in enumerate(keys)}
    return np.array([index[w] for w in words], dtype=np.int64)


def _target_associations(unit: np.ndarray, targets: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
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
    targets = _positions(keys, [*X, *Y])
    first, second = _positions(keys, A), _positions(keys, B)
    n_x, n_targets = len(X), len(X) + len(Y)
    signs = np.where(np.arange(n_targets) < n_x, 1.0 / n_x, -1.0 / len(Y))

    def parts(vectors):
        unit = vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)
        s = _target_associations(unit, targets, first, second)
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
        for row, by_target in enumerate((by_effect, by_statistic)):
            jacobian[row] = (
                cosine_product_gradient(vectors, targets, first, np.outer(by_target, np.full(first.size, 1 / first.size)))
                + cosine_product_gradient(vectors, targets, second,
                                          np.outer(by_target, np.full(second.size, -1 / second.size))))
        return jacobian

    return Statistic("WEAT", keys, ("effect size", "test statistic"), function, gradient)


def weat(kv: KeyedVectorsWithVariance, X: Sequence, Y: Sequence, A: Sequence, B: Sequence, *, ddof: int = 1,
         missing: str = "raise", method: str = "delta", alternative: str = "two-sided", n_draws: int = 2000,
         rng=None) -> ResultFamily:
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
    missing : {"raise", "drop"}
        Words out of the vocabulary or without covariance: refused, or dropped and named.
    method : {"delta", "monte carlo"}
    alternative : {"two-sided", "larger", "smaller"}
    n_draws : int
    rng : None, int or numpy Generator

    Returns
    -------
    ResultFamily
        The uncertainty is the embedding's (GloVe-V); see :func:`weat_permutation_test` for the
        classic test over word-list assignments.
    """
    lists, dropped = _usable_lists(kv, (X, Y, A, B), missing)
    return estimate(kv, weat_statistic(*lists, ddof=ddof), method=method, alternative=alternative,
                    n_draws=n_draws, rng=rng, dropped=dropped)


def weat_permutation_test(kv: KeyedVectorsWithVariance, X: Sequence, Y: Sequence, A: Sequence, B: Sequence, *,
                          alternative: str = "larger", n_permutations: int | None = None, max_exact: int = 100_000,
                          missing: str = "raise", rng=None) -> InferenceResult:
    """The classic WEAT permutation test over equal-size re-partitions of X u Y.

    Exact (every partition, the observed one included, ``p = #{S_i >= S} / N``) when there are
    at most ``max_exact`` partitions and ``n_permutations`` is None; otherwise ``n_permutations``
    distinct partitions other than the observed one are sampled without replacement and
    ``p = (1 + #{S_i >= S}) / (1 + n)``. Two-sided p-values double the smaller tail (at most 1).
    The uncertainty is over word-list assignment, not over the embedding.

    Returns
    -------
    InferenceResult
        ``statistic`` is S, ``draws`` the permutation distribution.
    """
    check_alternative(alternative)
    (X, Y, A, B), dropped = _usable_lists(kv, (X, Y, A, B), missing)
    keys = tuple(dict.fromkeys([*X, *Y, *A, *B]))
    vectors = point(kv, keys)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    s = _target_associations(unit, _positions(keys, [*X, *Y]), _positions(keys, A), _positions(keys, B))
    n, n_x = s.size, len(X)
    total = s.sum()
    observed = 2 * s[:n_x].sum() - total
    n_partitions = math.comb(n, n_x)
    if n_permutations is None and n_partitions <= max_exact:
        sums = np.array([s[list(chosen)].sum() for chosen in itertools.combinations(range(n), n_x)])
        distribution = 2 * sums - total
        counted, denominator = 0, distribution.size
    else:
        wanted = n_permutations or 10_000
        if wanted > n_partitions - 1:
            raise ValueError(f"only {n_partitions - 1} other partitions exist; ask for fewer permutations")
        distribution = 2 * _distinct_partition_sums(s, n_x, wanted, np.random.default_rng(rng)) - total
        counted, denominator = 1, distribution.size + 1
    tolerance = 1e-12 * max(1.0, np.abs(distribution).max())
    p_larger = (counted + np.sum(distribution >= observed - tolerance)) / denominator
    p_smaller = (counted + np.sum(distribution <= observed + tolerance)) / denominator
    pvalue = {"larger": p_larger, "smaller": p_smaller,
              "two-sided": min(1.0, 2 * min(p_larger, p_smaller))}[alternative]
    return InferenceResult(name="WEAT test statistic (permutation)", estimate=float(observed),
                           std_error=float(distribution.std(ddof=1)), null_value=float(distribution.mean()),
                           alternative=alternative, statistic=float(observed), pvalue=float(pvalue),
                           method=PERMUTATION, uncertainty=WORD_LISTS, words=keys, dropped=tuple(dropped),
                           draws=distribution)


def _distinct_partition_sums(s: np.ndarray, n_x: int, wanted: int, generator: np.random.Generator) -> np.ndarray:
    """Sums of s over ``wanted`` distinct random n_x-subsets, the observed first n_x excluded."""
    seen = {tuple(range(n_x))}
    sums = []
    while len(sums) < wanted:
        chosen = tuple(sorted(generator.choice(s.size, n_x, replace=False).tolist()))
        if chosen not in seen:
            seen.add(chosen)
            sums.append(s[list(chosen)].sum())
    return np.array(sums)


def cosine_bias_statistic(group_a: Sequence, group_b: Sequence, attributes: Sequence) -> Statistic:
    """Garg et al. (2018): ``mean_k cos(v_k, M_A) - mean_k cos(v_k, M_B)``, M the mean unit vector of a group."""
    if min(len(group_a), len(group_b), len(attributes)) == 0:
        raise ValueError("the cosine bias needs non-empty groups and attributes")
    keys = tuple(dict.fromkeys([*group_a, *group_b, *attributes]))
    ia, ib, iv = _positions(keys, group_a), _positions(keys, group_b), _positions(keys, attributes)

    def function(vectors):
        unit = vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)
        values = []
        for members in (ia, ib):
            centre = unit[..., members, :].mean(axis=-2)
            centre = centre / np.linalg.norm(centre, axis=-1, keepdims=True)
            values.append(np.einsum("...kd,...d->...k", unit[..., iv, :], centre).mean(axis=-1))
        return (values[0] - values[1])[..., None]

    def gradient(vectors):
        jacobian = np.zeros_like(vectors, dtype=np.float64)
        attribute_vectors = vectors[iv]
        norms_v = np.linalg.norm(attribute_vectors, axis=1)
        for sign, members in ((1.0, ia), (-1.0, ib)):
            unit = vectors[members] / np.linalg.norm(vectors[members], axis=1, keepdims=True)
            centre = unit.mean(axis=0)
            norm_c = np.linalg.norm(centre)
            cos = attribute_vectors @ centre / (norms_v * norm_c)
            by_attribute = centre / (norms_v[:, None] * norm_c) - (cos / norms_v**2)[:, None] * attribute_vectors
            jacobian += scatter_rows(iv, sign * by_attribute / iv.size, vectors.shape[0])
            by_centre = (attribute_vectors / (norms_v[:, None] * norm_c)
                         - (cos / norm_c**2)[:, None] * centre).sum(axis=0) / iv.size
            # d centre / d w_j = (I - u_j u_j^T) / |w_j| / |group| for the group's unit vectors u_j.
            norms_m = np.linalg.norm(vectors[members], axis=1)
            by_member = (by_centre[None] - unit * (unit @ by_centre)[:, None]) / norms_m[:, None] / members.size
            jacobian += scatter_rows(members, sign * by_member, vectors.shape[0])
        return jacobian[None]

    return Statistic("cosine bias", keys, ("cosine bias",), function, gradient)


def cosine_bias(kv: KeyedVectorsWithVariance, group_a: Sequence, group_b: Sequence, attributes: Sequence, *,
                missing: str = "raise", method: str = "delta", null_value: float = 0.0,
                alternative: str = "two-sided", n_draws: int = 2000, rng=None) -> InferenceResult:
    """Garg et al. cosine bias of attributes between two groups, with a GloVe-V standard error.

    Positive means the attributes are closer to group A (e.g. Asian surnames vs White surnames
    with otherization adjectives).
    """
    (group_a, group_b, attributes), dropped = _usable_lists(kv, (group_a, group_b, attributes), missing)
    family = estimate(kv, cosine_bias_statistic(group_a, group_b, attributes), method=method,
                      null_values=null_value, alternative=alternative, n_draws=n_draws, rng=rng, dropped=dropped)
    return family[0]


def compare_biases(kv: KeyedVectorsWithVariance, statistics: Mapping[str, Statistic] | Sequence[Statistic], *,
                   method: str = "delta", n_draws: int = 2000, rng=None) -> ResultFamily:
    """Several bias statistics with their joint covariance (word lists may overlap).

    Compare two with ``.difference(i, j)``; never by adding their variances.
    """
    if isinstance(statistics, Mapping):
        statistics = [Statistic(name, s.keys, s.names, s.function, s.gradient) for name, s in statistics.items()]
    for statistic in statistics:
        resolve_words(kv, statistic.keys, "raise")
    return estimate(kv, stack(list(statistics), name="bias comparison"), method=method, n_draws=n_draws, rng=rng)


def _usable_lists(kv: KeyedVectorsWithVariance, lists: Sequence[Sequence], missing: str) -> tuple[list, list]:
    usable, dropped = [], []
    for words in lists:
        kept, lost = resolve_words(kv, words, missing)
        if not kept:
            raise ValueError(f"no usable word left in {list(words)[:10]}: {', '.join(lost[:10])}")
        usable.append(kept)
        dropped.extend(lost)
    return usable, dropped
