"""Calibration on real data, with no noise model: do two random halves of a corpus differ as the covariances say?

The documents are split at random into two halves; each half's co-occurrence rows are fitted given
the pooled context vectors (:func:`~glovev_ext.fit_subcorpora`), so a word's two vectors estimate
the same point with independent errors whose covariances the halves' GloVe-V fits give. Calibrated
covariances mean, band by band of word frequency:

- per word, the Wald statistic of ``w_A = w_B`` over D (:func:`~glovev_ext.stats.vector_change_test`)
  has mean ``nu / (nu - 2)`` (``F(D, nu)``, ``nu`` the Welch-Satterthwaite degrees of freedom of the
  two covariances), and its test rejects at the nominal rate;
- for random pairs of words, the difference of a cosine between the halves over its delta-method
  standard error has standard deviation 1, and the library's own test that the cosine is equal in
  both halves (:func:`~glovev_ext.compare_models` of the two default ``similarity_test`` results,
  ``equality()``) rejects at the nominal rate.

:func:`split_half_check` computes these; ``bench/split_half.py`` runs it on real corpora. With the
default ``point_estimate="posterior"`` the halves are posteriors under the pooled prior (each
carries it as its ``prior``), whose errors share the prior's part (``Cov = Sigma_A P Sigma_B``):
the Wald statistics, the cosines' z and the library's equality test take it out of the difference's
variance (docs/method.md 6.12, 6.14).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from tqdm.auto import tqdm

from ._checks import DEFAULT_SEED, as_generator, check_int
from ._docstrings import fill_doc
from .counting import DocumentGroups
from .pipeline import FittedCorpus
from .covariance import GaussianPrior
from .stats import compare_models, vector_change_test
from .subcorpora import fit_subcorpora

logger = logging.getLogger(__name__)

BAND_EDGES = (5, 100, 300, 1_000, 3_000)
"""Lower edges of the default frequency bands (pooled counts): 5-99, 100-299, 300-999, 1,000-2,999, 3,000+."""


@dataclass(frozen=True)
class SplitHalfCheck:
    """What two random halves of a corpus say about the covariances, per word, per pair and by band.

    Attributes
    ----------
    words : pandas.DataFrame
        One row per word fitted in both halves (index: the word): ``count`` (pooled), ``band``,
        ``wald_per_dim`` (the Wald statistic of ``w_A = w_B`` over D), ``df`` (its
        Welch-Satterthwaite degrees of freedom), ``expected`` (``df / (df - 2)``, the mean of
        ``F(D, df)``; 1 for infinite ``df``, NaN for ``df <= 2``) and ``pvalue``.
    pairs : pandas.DataFrame
        One row per random pair of words of one band: ``first``, ``second``, ``band``, the two
        halves' cosines and delta-method standard errors (linear scale), ``z`` (their difference over
        the standard error of the difference, the delta method on the linear scale with normal
        references, the prior's shared part taken out for posteriors: the Wald test of
        :meth:`ModelComparison.linear <glovev_ext.stats.ModelComparison.linear>`),
        ``seed``, ``equality_pvalue`` and ``pairwise_pvalue`` (the library's default tests,
        ``equality()`` and ``pairwise(correction=None)``, of the two halves'
        ``similarity_test(first, second, random_state=seed)`` and ``seed + 1``).
    confidence_level : float
        Of the tests whose rejection rates :meth:`summary_frame` reports.
    """

    words: pd.DataFrame
    pairs: pd.DataFrame
    confidence_level: float

    def summary_frame(self) -> pd.DataFrame:
        """By band: the mean Wald statistic per dimension against its expectation, and rejection rates.

        Columns: ``words``; ``mean wald/D`` and ``expected`` (the mean of the words' ``F(D, df)``
        means, over the words with ``df > 2``) and their ``ratio`` (1 if calibrated);
        ``vector test rejects`` (share of words whose test of ``w_A = w_B`` rejects); ``pairs``;
        ``sd of z`` (1 if calibrated); ``linear z rejects``, ``equality rejects`` and ``pairwise
        rejects`` (shares of pairs whose two-sided test rejects: the plain normal z of the difference,
        and the library's default equality and pairwise tests), and ``equality KS p`` (the p-value of
        the Kolmogorov-Smirnov test that the equality test's p-values are uniform, as they are under
        the null). Each rejection rate should be ``1 - confidence_level``.
        """
        alpha = 1.0 - self.confidence_level
        critical = float(stats.norm.ppf(1.0 - alpha / 2.0))
        rows = {}
        for band in self.words["band"].cat.categories:
            words = self.words[self.words["band"] == band]
            with_mean = words[np.isfinite(words["expected"])]
            pairs = self.pairs[self.pairs["band"] == band]
            rows[band] = {
                "words": len(words),
                "mean wald/D": with_mean["wald_per_dim"].mean(),
                "expected": with_mean["expected"].mean(),
                "ratio": with_mean["wald_per_dim"].mean() / with_mean["expected"].mean(),
                "vector test rejects": (words["pvalue"] < alpha).mean(),
                "pairs": len(pairs),
                "sd of z": pairs["z"].std(ddof=1),
                "linear z rejects": (pairs["z"].abs() > critical).mean(),
                "equality rejects": (pairs["equality_pvalue"] < alpha).mean(),
                "pairwise rejects": (pairs["pairwise_pvalue"] < alpha).mean(),
                "equality KS p": (stats.kstest(pairs["equality_pvalue"], "uniform").pvalue if len(pairs)
                                  else np.nan),
            }
        return pd.DataFrame.from_dict(rows, orient="index").rename_axis("pooled count")

    def __str__(self) -> str:
        return self.summary_frame().to_string(float_format=lambda x: f"{x:.3f}")


@fill_doc
def split_half_check(fitted: FittedCorpus, documents: Sequence, *, groups=None, n_pairs: int = 300,
                     bands: Sequence[int] = BAND_EDGES, confidence_level: float = 0.95, random_state=DEFAULT_SEED,
                     progress: bool = True) -> SplitHalfCheck:
    """Split ``documents`` (or their groups) at random into two halves, fit each in the pooled basis and compare them.

    Parameters
    ----------
    fitted : FittedCorpus
        :func:`~glovev_ext.fit_corpus` of ``documents`` (the pooled fit: its context vectors and
        biases are the basis of both halves).
    documents : sequence of documents
        The corpus as ``fit_corpus`` took it (a list of strings or of token lists); each document
        goes to one half with probability 1/2.
    groups : DocumentGroups or array-like of shape (n_documents,), optional
        One label per document, as :func:`~glovev_ext.fit_corpus` takes them: split whole groups
        instead, half of them (drawn at random) to each half, to check the intervals at the unit
        the user samples (books, authors).
    n_pairs : int, default=300
        Random pairs of words drawn within each band (fewer when the band has fewer pairs).
    bands : sequence of int
        Lower edges of the frequency bands, by the pooled count (``BAND_EDGES``).
    confidence_level : float, default=0.95
        Of the tests whose rejection rates are reported.
    {random_state}
        One generator draws the split, the pairs and the tests' seeds.
    progress : bool, default=True
        Show a progress bar over the pairs' tests.

    Returns
    -------
    SplitHalfCheck
        The comparison of the two halves, per word, per pair and by band.
    """
    _checked_options(n_pairs, bands, confidence_level)  # before the halves are fitted
    generator = as_generator(random_state)
    documents = list(documents)
    if len(documents) < 2:
        raise ValueError(f"splitting a corpus in two needs at least two documents, got {len(documents)}")
    if groups is None:
        first_half = generator.random(len(documents)) < 0.5
    else:
        groups = DocumentGroups.from_labels(groups)
        groups.check(len(documents))
        first_half = groups.halves(generator)
    labels, scale = None, fitted.estimator.noise_scale_
    if groups is not None and scale is not None and scale.by_concentration:
        labels = {"A": groups.codes[first_half], "B": groups.codes[~first_half]}  # each half's own concentrations
    halves = fit_subcorpora(fitted, {"A": [d for d, a in zip(documents, first_half) if a],
                                     "B": [d for d, a in zip(documents, first_half) if not a]}, groups=labels)
    pooled = fitted.keyed_vectors
    counts = {word: pooled.get_vecattr(word, "count") for word in pooled.index_to_key}
    return compare_halves(halves["A"], halves["B"], counts, n_pairs=n_pairs, bands=bands,
                          confidence_level=confidence_level, random_state=generator, progress=progress)


def compare_halves(half_a, half_b, counts: Mapping[str, int], *, n_pairs: int = 300,
                   bands: Sequence[int] = BAND_EDGES, confidence_level: float = 0.95, random_state=DEFAULT_SEED,
                   progress: bool = True, prior: GaussianPrior | None = None) -> SplitHalfCheck:
    """The comparisons of :func:`split_half_check` for two embeddings fitted in one basis on disjoint text.

    Parameters
    ----------
    half_a, half_b : KeyedVectorsWithVariance
        The two halves (e.g. :func:`~glovev_ext.fit_subcorpora` of two random halves of a corpus).
    counts : mapping
        Each word's count in the pooled corpus, which places it in a band; words absent from it, or
        from either half, are left out.
    n_pairs, bands, confidence_level, random_state, progress
        As for :func:`split_half_check`.
    prior : GaussianPrior, optional
        The prior both halves are posteriors under, for the vector tests
        (:func:`~glovev_ext.stats.vector_change_test`); by default the ``prior`` both halves carry.
        The cosines' tests use the halves' own (:func:`~glovev_ext.compare_models`).

    Returns
    -------
    SplitHalfCheck
    """
    edges = _checked_options(n_pairs, bands, confidence_level)
    generator = as_generator(random_state)
    shared = [w for w in half_a.index_to_key if w in half_b.key_to_index and w in counts]
    position = np.searchsorted(edges, np.array([counts[w] for w in shared], dtype=np.int64), side="right") - 1
    shared = [w for w, p in zip(shared, position) if p >= 0]
    band = pd.Categorical.from_codes(position[position >= 0], categories=_band_labels(edges))
    words = _word_frame(half_a, half_b, shared, np.array([counts[w] for w in shared], dtype=np.int64), band, prior)
    pairs = _pair_frame(half_a, half_b, words, n_pairs, generator, progress)
    logger.info("split halves: %d words in both halves, %d pairs", len(words), len(pairs))
    return SplitHalfCheck(words, pairs, confidence_level)


def _checked_options(n_pairs: int, bands: Sequence[int], confidence_level: float) -> np.ndarray:
    """The bands' lower edges, sorted, once every option is valid."""
    check_int(n_pairs, "n_pairs", minimum=1)
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level}")
    edges = np.asarray(sorted(bands), dtype=np.int64)
    if edges.size == 0 or edges[0] < 1:
        raise ValueError(f"bands needs lower edges of at least 1, got {list(bands)}")
    return edges


def _word_frame(half_a, half_b, words: list, counts: np.ndarray, band: pd.Categorical,
                prior: GaussianPrior | None) -> pd.DataFrame:
    change = vector_change_test(half_a, half_b, words, prior=prior)
    dim = half_a.vector_size
    df = change["df"].to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.where(np.isinf(df), 1.0, np.where(df > 2, df / (df - 2), np.nan))
    return pd.DataFrame({"count": counts, "band": band, "wald_per_dim": change["chi2"].to_numpy() / dim, "df": df,
                         "expected": expected, "pvalue": change["P>chi2"].to_numpy()}, index=pd.Index(words))


_DIFFERENCE = np.array([[1.0, -1.0]])  # the first half's value less the second's


def _pair_frame(half_a, half_b, words: pd.DataFrame, n_pairs: int, generator: np.random.Generator,
                progress: bool) -> pd.DataFrame:
    chosen = []
    for band in words["band"].cat.categories:
        members = list(words.index[words["band"] == band])
        chosen += [(a, b, band) for a, b in _random_pairs(members, n_pairs, generator)]
    if not chosen:
        return pd.DataFrame(columns=["first", "second", "band", "cos_a", "cos_b", "se_a", "se_b", "z", "seed",
                                     "equality_pvalue", "pairwise_pvalue"])
    pairs = [(a, b) for a, b, _ in chosen]
    linear = {name: half.similarity_tests(pairs, method="delta", scale="linear", use_t=False)
              for name, half in (("a", half_a), ("b", half_b))}
    seeds = generator.integers(0, 2**62, size=len(pairs))
    pvalues, pairwise, z = [], [], []
    for (a, b), seed in tqdm(list(zip(pairs, seeds)), desc="equality tests", unit="pair", disable=not progress,
                             leave=False):
        comparison = compare_models([half_a.similarity_test(a, b, random_state=int(seed)),
                                     half_b.similarity_test(a, b, random_state=int(seed) + 1)])
        pvalues.append(float(np.asarray(comparison.equality().pvalue)))
        pairwise.append(float(comparison.pairwise(correction=None).pvalues[0]))
        plain = compare_models([half.similarity_test(a, b, method="delta", scale="linear", use_t=False)
                                for half in (half_a, half_b)])
        z.append(float(plain.linear(_DIFFERENCE, ["difference"], "difference").statistics[0]))
    return pd.DataFrame({"first": [a for a, _, _ in chosen], "second": [b for _, b, _ in chosen],
                         "band": pd.Categorical([band for _, _, band in chosen],
                                                categories=words["band"].cat.categories),
                         "cos_a": linear["a"].estimates, "cos_b": linear["b"].estimates,
                         "se_a": linear["a"].std_errors, "se_b": linear["b"].std_errors,
                         "z": z, "seed": seeds,
                         "equality_pvalue": pvalues, "pairwise_pvalue": pairwise})


def _random_pairs(members: list, n_pairs: int, generator: np.random.Generator) -> list[tuple]:
    """Up to ``n_pairs`` distinct unordered pairs of distinct members, drawn uniformly."""
    n = len(members)
    total = n * (n - 1) // 2
    if total == 0:
        return []
    if total <= n_pairs:
        return [(members[i], members[j]) for i in range(n) for j in range(i + 1, n)]
    found: set = set()
    while len(found) < n_pairs:
        i, j = generator.choice(n, 2, replace=False)
        found.add((min(i, j), max(i, j)))
    return [(members[i], members[j]) for i, j in sorted(found)]


def _band_labels(edges: np.ndarray) -> list[str]:
    uppers = [f"{edge - 1:,}" for edge in edges[1:]] + [""]
    return [f"{low:,}-{high}" if high else f"{low:,}+" for low, high in zip(edges, uppers)]
