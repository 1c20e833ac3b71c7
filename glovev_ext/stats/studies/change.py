"""A word across two embeddings in one basis (sub-corpora, :func:`glovev_ext.fit_subcorpora`).

Two embeddings fitted given the same contexts place a word's vectors in the same space, with
independent errors when the texts are disjoint. Then:

- :func:`self_similarity`: ``cos(w in A, w in B)`` with its standard error, through the same
  estimation as every statistic (the two vectors are two "words" with their own covariances);
- :func:`vector_change_test`: the Wald test that the word's vector is the same in both,
  ``W = (w_A - w_B)^T (Sigma_A + Sigma_B)^{-1} (w_A - w_B)`` (less the prior's shared part for
  posteriors under one prior), ``chi2(D)`` under the null with known
  covariances; with t references ``W / D`` is ``F(D, nu)``, ``nu`` the Welch-Satterthwaite degrees of
  freedom of the two covariances' traces: each covariance is ``s2_i`` times a known matrix and only
  the scalar ``s2_i`` is estimated, so for one covariance this is exact (docs/method.md 7.3).
  A self-similarity below 1 does not by itself mean change (noise alone lowers it); this test asks
  whether the difference exceeds the noise.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..._checks import DEFAULT_SEED
from ..._docstrings import fill_doc
from ...covariance import GaussianPrior, UndefinedCovarianceError
from ...covariance.prior import posterior_difference
from ..statistics.cosine import cosine_statistic
from ..engine.estimation import DEFAULT_METHOD, estimate_resolved
from ..engine.intervals import welch_satterthwaite
from ..engine.results import ResultFamily
from ..engine.words import DEFAULT_MISSING, EmbeddingWithCovariance, ResolvedWords, check_missing, usable, vectors_of


# docs/method.md 7.3: measured by simulation with known truth (tests/stats/test_comparison.py)
SELF_SIMILARITY_CAVEAT = ("Self-similarity intervals do not hold their coverage near 1: noise in both vectors "
                          "lowers the cosine more than its standard error says (true value 0.9: 43-74 % coverage; "
                          "1: none); vector_change_test is the calibrated test of change")


@fill_doc
def self_similarity(kv_a: EmbeddingWithCovariance, kv_b: EmbeddingWithCovariance, words: Sequence[str], *,
                    labels: tuple[str, str] = ("A", "B"), method: str = DEFAULT_METHOD, missing: str = DEFAULT_MISSING,
                    n_draws: int = 2000, random_state=DEFAULT_SEED, use_t: bool = True, scale: str = "bounded",
                    null_value: float = 0.0) -> ResultFamily:
    """Cosine of each word's vector in one embedding with its vector in the other, with standard errors.

    Parameters
    ----------
    kv_a, kv_b : KeyedVectorsWithVariance
        In one basis (e.g. two values of :func:`~glovev_ext.fit_subcorpora`) and independent.
    words : sequence of str
    labels : (str, str)
        Names of the two embeddings in the rows (``cos(w [A], w [B])``).
    {method}
    {missing}
        A word must be usable in both embeddings.
    {estimate_options}
    {null_value}

    Returns
    -------
    ResultFamily
        One row per word (rows are independent: each uses only its own word's two vectors).

    Notes
    -----
    The cosine of two noisy vectors is biased below the cosine of the true ones, and near 1 the
    cosine is flat, so its delta-method error is small while the bias is not: by simulation with
    known truth the 95 % intervals covered a true self-similarity of 0.6 in 87-93 % of refits, of
    0.9 in 43-74 %, of 0.99 in 1-5 % and of 1 never (docs/method.md 7.3). The results carry this
    caveat; ask :func:`vector_change_test` whether a word changed.
    """
    kept, dropped, resolved = _paired(kv_a, kv_b, words, labels, missing)
    statistic = cosine_statistic([(f"{w} [{labels[0]}]", f"{w} [{labels[1]}]") for w in kept],
                                 name=f"self-similarity, {labels[0]} vs {labels[1]}")
    family = estimate_resolved(resolved, statistic, method=method, null_values=null_value, n_draws=n_draws,
                               random_state=random_state, dropped=dropped, use_t=use_t, scale=scale)
    return family.replace(caveats=(*family.caveats, SELF_SIMILARITY_CAVEAT))


def vector_change_test(kv_a: EmbeddingWithCovariance, kv_b: EmbeddingWithCovariance, words: Sequence[str], *,
                       labels: tuple[str, str] = ("A", "B"), missing: str = DEFAULT_MISSING,
                       use_t: bool = True, prior: GaussianPrior | None = None) -> pd.DataFrame:
    """Wald test, per word, that its vector is the same in two independent embeddings of one basis.

    Parameters
    ----------
    kv_a, kv_b : KeyedVectorsWithVariance
    words : sequence of str
    labels : (str, str)
    missing : {"raise", "drop"}
    use_t : bool, default=True
        ``F(D, nu)`` of the statistic over D, with Welch-Satterthwaite ``nu``; False: ``chi2(D)`` (covariances
        taken as known).
    prior : GaussianPrior, optional
        The prior both embeddings' vectors are posteriors under; by default the ``prior`` both
        embeddings carry, when it is the same (:func:`~glovev_ext.fit_subcorpora` of a default fit:
        the pooled fit's). Their errors then share ``Sigma_A P Sigma_B``, which is taken out of the
        difference's covariance, ``Sigma_A + Sigma_B - Sigma_A P Sigma_B - Sigma_B P Sigma_A``
        (docs/method.md 6.12); without a common prior the plain sum is used.

    Returns
    -------
    DataFrame
        Per word: ``distance`` (``|w_A - w_B|``), ``chi2`` (the Wald statistic), ``df`` (the
        denominator degrees of freedom, inf for chi2) and ``P>chi2``. ``attrs["dropped"]`` lists the
        words left out.
    """
    kept, dropped, resolved = _paired(kv_a, kv_b, words, labels, missing)
    dim = resolved.vectors.shape[1]
    prior = _common_prior(kv_a, kv_b) if prior is None else prior
    precision = None if prior is None else prior.precision
    rows = []
    for k, word in enumerate(kept):
        first, second = resolved.factors[2 * k], resolved.factors[2 * k + 1]
        difference = resolved.vectors[2 * k] - resolved.vectors[2 * k + 1]
        dense_a, dense_b = first.dense(), second.dense()
        joint = (dense_a + dense_b if precision is None else
                 posterior_difference(first, second, precision, resolved.vectors[2 * k], resolved.vectors[2 * k + 1]))
        wald = float(difference @ np.linalg.solve(joint, difference))
        nu = float(welch_satterthwaite(np.array([np.trace(dense_a), np.trace(dense_b)]),
                                       np.array([first.dof, second.dof]))) if use_t else np.inf
        if np.isfinite(nu):
            p = float(stats.f.sf(wald / dim, dim, nu))
        else:
            p = float(stats.chi2.sf(wald, dim))
        rows.append({"distance": float(np.linalg.norm(difference)), "chi2": wald, "df": nu, "P>chi2": p})
    frame = pd.DataFrame(rows, index=pd.Index(kept, name=f"{labels[0]} vs {labels[1]}"))
    frame.attrs["dropped"] = tuple(dropped)
    return frame


def _paired(kv_a: EmbeddingWithCovariance, kv_b: EmbeddingWithCovariance, words: Sequence[str],
            labels: tuple[str, str], missing: str) -> tuple[list, list, ResolvedWords]:
    """The words usable in both, what was dropped, and their vectors in both (A then B, per word)."""
    check_missing(missing)
    if len(labels) != 2 or labels[0] == labels[1]:
        raise ValueError(f"labels must be two distinct names, got {labels!r}")
    kept_a, dropped_a = _usable_in(kv_a, list(words), labels[0], missing)
    kept, dropped_b = _usable_in(kv_b, kept_a, labels[1], missing)
    dropped = dropped_a + dropped_b
    if not kept:
        raise ValueError(f"no word is usable in both embeddings: {', '.join(dropped[:10])}")
    keys = tuple(f"{w} [{label}]" for w in kept for label in labels)
    vectors = np.empty((2 * len(kept), vectors_of(kv_a, kept[:1]).shape[1]))
    vectors[0::2], vectors[1::2] = vectors_of(kv_a, kept), vectors_of(kv_b, kept)
    factors = tuple(kv.covariance_factor(w) for w in kept for kv in (kv_a, kv_b))
    return kept, dropped, ResolvedWords(keys, vectors, factors)


def _usable_in(kv: EmbeddingWithCovariance, words: list, label: str, missing: str) -> tuple[list, list]:
    """:func:`usable` in one of the two embeddings, naming it in what is dropped or refused."""
    try:
        kept, dropped = usable(kv, words, missing)
    except UndefinedCovarianceError as error:
        raise UndefinedCovarianceError(f"in {label}: {error}") from None
    return kept, [f"{text} in {label}" for text in dropped]


def _common_prior(kv_a: EmbeddingWithCovariance, kv_b: EmbeddingWithCovariance) -> GaussianPrior | None:
    """The prior both embeddings' covariances are posteriors under, if they carry the same one."""
    first, second = getattr(kv_a, "prior", None), getattr(kv_b, "prior", None)
    if first is None or second is None or first.fingerprint != second.fingerprint:
        return None
    return first
