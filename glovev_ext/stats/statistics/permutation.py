"""The classic WEAT permutation test: uncertainty over which target words make up X and Y, not over the embedding."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from statsmodels.iolib.summary import Summary

from ..._checks import DEFAULT_SEED
from ..._docstrings import fill_doc
from ..engine.rendering import notes, render
from ..engine.intervals import check_alternative
from ..engine.results import PERMUTATION, WORD_LISTS, Provenance
from .weat import positions, target_associations
from ..engine.words import DEFAULT_MISSING, EmbeddingWithCovariance, usable_lists, vectors_of



@dataclass(frozen=True, eq=False)
class PermutationResult:
    """A permutation test: the observed statistic, its p-value and the permutation distribution.

    Unpacks as ``statistic, pvalue = result`` (as scipy's ``PermutationTestResult``). It has no
    standard error and no interval: the test asks how the statistic would fall were the labels
    exchangeable, not how precisely it is estimated.

    Attributes
    ----------
    name : str
    statistic : float
        The statistic at the observed partition.
    pvalue : float
    alternative : {"larger", "smaller", "two-sided"}
    null_distribution : ndarray
        The statistic at each partition the test used.
    exact : bool
        Whether every partition was enumerated (else a sample of distinct partitions).
    provenance : Provenance
        Method, uncertainty, words used and dropped.
    """

    name: str
    statistic: float
    pvalue: float
    alternative: str
    null_distribution: np.ndarray = field(repr=False)
    exact: bool
    provenance: Provenance

    estimate = property(lambda self: self.statistic)
    draws = property(lambda self: self.null_distribution)
    method = property(lambda self: self.provenance.method)
    uncertainty = property(lambda self: self.provenance.uncertainty)
    words = property(lambda self: self.provenance.words)
    dropped = property(lambda self: self.provenance.dropped)

    def __iter__(self):
        return iter((self.statistic, self.pvalue))

    def summary_frame(self) -> pd.DataFrame:
        """One row: the statistic, its p-value and how many partitions the test used."""
        tail = {"larger": "P(S' >= S)", "smaller": "P(S' <= S)", "two-sided": "P (two-sided)"}[self.alternative]
        return pd.DataFrame({"statistic": [self.statistic], tail: [self.pvalue],
                             "partitions": [self.null_distribution.size]}, index=[self.name])

    def summary(self) -> Summary:
        """A statsmodels ``Summary`` of the test, through the one rendering path of results."""
        first = [f"H0: no association (target labels exchangeable), alternative: {self.alternative}",
                 f"Partitions: {'every one' if self.exact else 'a sample of distinct ones, the observed excluded'}; "
                 "S' is the statistic at a partition"]
        provenance = self.provenance
        return render(self.summary_frame(), f"{self.name}: {self.method}",
                      notes(first, provenance.uncertainty, provenance.words, provenance.dropped))

    def __str__(self) -> str:
        return str(self.summary())


@fill_doc
def weat_permutation_test(kv: EmbeddingWithCovariance, X: Sequence, Y: Sequence, A: Sequence, B: Sequence, *,
                          alternative: str = "larger", n_permutations: int | None = None, max_exact: int = 100_000,
                          missing: str = DEFAULT_MISSING, random_state=DEFAULT_SEED) -> PermutationResult:
    """The classic WEAT permutation test over equal-size re-partitions of X u Y.

    Exact (every partition, the observed one included, ``p = #{S_i >= S} / N``) when there are
    at most ``max_exact`` partitions and ``n_permutations`` is None; otherwise ``n_permutations``
    distinct partitions other than the observed one are sampled without replacement and
    ``p = (1 + #{S_i >= S}) / (1 + n)``. Two-sided p-values double the smaller tail (at most 1).
    The uncertainty is over word-list assignment, not over the embedding.

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    X, Y, A, B : sequence of str
    alternative : {"larger", "smaller", "two-sided"}, default="larger"
    n_permutations : int, optional
    max_exact : int, default=100000
    {missing}
    {random_state}
        They pick the sampled partitions.

    Returns
    -------
    PermutationResult
        ``statistic`` is S, ``null_distribution`` the statistic at each partition used.
    """
    check_alternative(alternative)
    (X, Y, A, B), dropped = usable_lists(kv, (X, Y, A, B), missing)
    keys = tuple(dict.fromkeys([*X, *Y, *A, *B]))
    vectors = vectors_of(kv, keys)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    s = target_associations(unit, positions(keys, [*X, *Y]), positions(keys, A), positions(keys, B))
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
        distribution = 2 * _distinct_partition_sums(s, n_x, wanted, np.random.default_rng(random_state)) - total
        counted, denominator = 1, distribution.size + 1
    tolerance = 1e-12 * max(1.0, np.abs(distribution).max())
    p_larger = (counted + np.sum(distribution >= observed - tolerance)) / denominator
    p_smaller = (counted + np.sum(distribution <= observed + tolerance)) / denominator
    pvalue = {"larger": p_larger, "smaller": p_smaller,
              "two-sided": min(1.0, 2 * min(p_larger, p_smaller))}[alternative]
    return PermutationResult("WEAT test statistic (permutation)", float(observed), float(pvalue), alternative,
                             distribution, counted == 0,
                             Provenance(method=PERMUTATION, uncertainty=WORD_LISTS, words=keys, dropped=tuple(dropped)))


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
