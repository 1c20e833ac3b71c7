"""How statistics move between groups of documents: a delete-a-group jackknife, the context vectors fixed.

GloVe-V's covariances describe a word's vector under a noise model, calibrated at the unit the user
samples (docs/method.md 6.13, 6.16). The paper names a second kind of uncertainty, how a statistic
would change with other documents (its Section 6 and Fig. 4, where a document bootstrap measures it).
This module measures that kind at the unit of groups (books, authors) and without a noise model: the
groups are dealt at random into ``K`` folds, each fold is left out in turn, and every word's row of the
remaining text is fitted given the pooled fit's context vectors and biases (its posterior under the
pooled prior, as :func:`~glovev_ext.fit_subcorpora` fits a sub-corpus). A statistic's ``K`` values
``t_k`` give its jackknife covariance ``(K - 1) / K * sum_k (t_k - t_bar)(t_k - t_bar)^T`` on
``K - 1`` degrees of freedom. The cost is one counting pass over the corpus (each fold is counted
once, and what a fold leaves is the total less the fold) and one pass over the rows per fold, not a
refit of GloVe per replicate.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp
from tqdm.auto import tqdm

from ._checks import DEFAULT_SEED, as_generator, check_int
from ._memory import row_sums
from .counting import CooccurrenceMatrix, group_concentration
from .counting.corpus import DocumentSubset, LineCorpus
from .counting.groups import DocumentGroups
from .covariance.translation import remove_translation
from .keyed_vectors import KeyedVectorsWithVariance
from .pipeline import FittedCorpus
from .stats.engine.intervals import check_alternative
from .stats.engine.results import ResultFamily
from .stats.engine.statistic import Statistic
from .stats.engine.words import resolve

logger = logging.getLogger(__name__)

DEFAULT_FOLDS = 20
"""Folds when there are more groups than this (else one fold per group: the delete-one-group jackknife)."""
JACKKNIFE = "group jackknife"


@dataclass(frozen=True, eq=False)
class GroupJackknife:
    """Every word's vector with each fold of groups left out, for the between-group errors of any statistic.

    Build one with :func:`group_jackknife`.

    Parameters
    ----------
    keyed_vectors : KeyedVectorsWithVariance
        The pooled fit's embedding: the statistics' estimates and GloVe-V's errors.
    words : tuple of str
        The word of each row of ``fold_vectors``.
    fold_vectors : ndarray, shape (K, n_words, D)
        Each word's vector fitted without fold ``k`` (NaN where it has fewer than two contexts
        without that fold).
    groups : DocumentGroups
        The groups of the corpus's documents.
    fold_of_group : ndarray of int, shape (n_groups,)
        The fold each group was dealt to.

    See Also
    --------
    group_jackknife : Builds one.
    glovev_ext.fit_subcorpora : Fits sub-corpora in the pooled basis the same way.
    """

    keyed_vectors: KeyedVectorsWithVariance
    words: tuple
    fold_vectors: np.ndarray
    groups: DocumentGroups
    fold_of_group: np.ndarray

    @property
    def n_folds(self) -> int:
        """How many folds the groups were dealt into (``K``)."""
        return int(self.fold_vectors.shape[0])

    @property
    def uncertainty(self) -> str:
        """What the jackknife's errors describe, in words."""
        return (f"between {self.groups.unit}: delete-a-group jackknife over {self.groups.describe()} in "
                f"{self.n_folds} folds (context vectors fixed)")

    def values(self, statistic: Statistic) -> np.ndarray:
        """The statistic with each fold left out.

        Parameters
        ----------
        statistic : Statistic
            A statistic of words of the pooled vocabulary.

        Returns
        -------
        ndarray, shape (K, m)
            Row ``k``: the ``m`` values with fold ``k`` left out.

        Raises
        ------
        ValueError
            Naming the words that some fold's remainder does not fit (fewer than two contexts
            without it: their contexts come from few groups) or that are not in the vocabulary.
        """
        positions = {word: i for i, word in enumerate(self.words)}
        unknown = [key for key in statistic.keys if key not in positions]
        if unknown:
            raise ValueError(f"not in the jackknife's vocabulary: {', '.join(map(str, unknown[:10]))}")
        rows = np.array([positions[key] for key in statistic.keys], dtype=np.int64)
        vectors = self.fold_vectors[:, rows]
        missing = ~np.isfinite(vectors).all(axis=2)
        if missing.any():
            lost = [f"{statistic.keys[j]} (without fold {k + 1})" for j in np.flatnonzero(missing.any(axis=0))
                    for k in np.flatnonzero(missing[:, j])[:1]]
            raise ValueError(f"the jackknife needs every word in every fold's remainder; these have fewer than two "
                             f"contexts once a fold of {self.groups.unit} is left out: {', '.join(lost[:10])}")
        return np.asarray(statistic.function(vectors), dtype=np.float64).reshape(self.n_folds, len(statistic.names))

    def covariance(self, statistic: Statistic) -> np.ndarray:
        """The jackknife covariance of the statistic's values.

        Parameters
        ----------
        statistic : Statistic
            A statistic of words fitted without every fold (:meth:`values`).

        Returns
        -------
        ndarray, shape (m, m)
            ``(K - 1) / K * sum_k (t_k - t_bar)(t_k - t_bar)^T`` over the folds' values ``t_k``.
        """
        values = self.values(statistic)
        centred = values - values.mean(axis=0)
        return (self.n_folds - 1) / self.n_folds * centred.T @ centred

    def estimate(self, statistic: Statistic, *, null_values: Sequence[float] | float | None = None,
                 alternative: str = "two-sided", scale: str = "bounded") -> ResultFamily:
        """The statistic with its between-group errors, tests and intervals.

        Parameters
        ----------
        statistic : Statistic
            A statistic of words fitted without every fold (:meth:`values`).
        null_values : float or sequence, optional
            Null values of the rows (0 by default).
        alternative : {"two-sided", "larger", "smaller"}, default="two-sided"
        scale : {"bounded", "linear"}, default="bounded"
            Where intervals and tests are formed, as for :func:`~glovev_ext.stats.estimate`.

        Returns
        -------
        ResultFamily
            The estimates at the pooled vectors, the jackknife covariance, t references on ``K - 1``
            degrees of freedom; its ``uncertainty`` names the groups and folds.
        """
        check_alternative(alternative)
        m = len(statistic.names)
        nulls = np.zeros(m) if null_values is None else np.broadcast_to(np.asarray(null_values, float), (m,)).copy()
        words = resolve(self.keyed_vectors, statistic.keys)
        return ResultFamily.of(statistic.name, statistic.names, statistic.value(words.vectors),
                               self.covariance(statistic), null_values=nulls, alternative=alternative,
                               method=JACKKNIFE, uncertainty=self.uncertainty, words=tuple(statistic.keys),
                               df=np.full(m, self.n_folds - 1.0), bounds=statistic.bounds, scale=scale)

    def side_by_side(self, statistic: Statistic) -> pd.DataFrame:
        """Both kinds of uncertainty of each value: GloVe-V's and the jackknife's between groups.

        Parameters
        ----------
        statistic : Statistic
            A statistic of words fitted without every fold (:meth:`values`).

        Returns
        -------
        DataFrame
            One row per value: ``estimate`` (at the pooled vectors); ``GloVe-V std err`` (the
            delta method's under the posterior covariances ``Sigma``, as the library's intervals
            use them); ``GloVe-V std err of the mean`` (the delta method's under ``Sigma - Sigma P
            Sigma``, how the posterior mean varies with the text under the model, ``P`` the
            prior's precision; the same without a prior); ``between UNIT std err (jackknife)``; and
            ``ratio``, the jackknife's over GloVe-V's of the mean.

        Notes
        -----
        GloVe-V's posterior error includes what the prior leaves open about a word, which no
        resampling of the text shows: for a word the prior holds (a rare one, or one whose text
        varies much between groups) it exceeds the spread of the posterior mean. That spread, under
        the model, is ``Sigma - Sigma P Sigma`` (the posterior mean's weight on its data times the
        data's noise), and the jackknife measures it without the model, so the ratio compares the two.
        """
        words = resolve(self.keyed_vectors, statistic.keys)
        jacobian = statistic.jacobian(words.vectors)
        posterior, of_mean = np.zeros(len(statistic.names)), np.zeros(len(statistic.names))
        precision = None if words.prior is None else words.prior.precision
        for k, factor in enumerate(words.factors):
            covariance = factor.dense()
            posterior += np.einsum("md,de,me->m", jacobian[:, k], covariance, jacobian[:, k])
            shared = factor.before_widening.dense()  # the prior's part: unwidened
            sampling = covariance if precision is None else covariance - shared @ precision @ shared
            of_mean += np.einsum("md,de,me->m", jacobian[:, k], sampling, jacobian[:, k])
        between = np.sqrt(np.diag(self.covariance(statistic)))
        of_mean = np.maximum(of_mean, 0.0)  # a word the prior holds: Sigma - Sigma P Sigma is 0 up to rounding
        return pd.DataFrame({"estimate": statistic.value(words.vectors), "GloVe-V std err": np.sqrt(posterior),
                             "GloVe-V std err of the mean": np.sqrt(of_mean),
                             f"between {self.groups.unit} std err (jackknife)": between,
                             "ratio": between / np.sqrt(of_mean)}, index=pd.Index(statistic.names, name=statistic.name))


def group_jackknife(fitted: FittedCorpus, documents: Iterable, groups, *, n_folds: int | None = None,
                    keyed_vectors: KeyedVectorsWithVariance | None = None, random_state=DEFAULT_SEED,
                    progress: bool = True) -> GroupJackknife:
    """Fit every word's row with each fold of groups left out, in the pooled fit's basis.

    Each fold's rows lose the translation the pooled context biases leave free, estimated against
    ``keyed_vectors`` (docs/method.md 6.23), as :func:`~glovev_ext.fit_subcorpora` does by default.

    Parameters
    ----------
    fitted : FittedCorpus
        :func:`~glovev_ext.fit_corpus` of the pooled corpus: its context vectors and biases, prior
        and noise scale fit every fold (a scale that follows each word's concentration over the
        groups, docs/method.md 6.21, at the concentration over the groups each fit keeps).
    documents : LineCorpus or sequence of documents
        The corpus as ``fit_corpus`` took it (read once per fold), or, as a sequence, a
        sub-corpus of it (one decade's books) with that sub-corpus's ``keyed_vectors``.
    groups : DocumentGroups or array-like of shape (n_documents,)
        One label per document of ``documents`` (books, authors), as ``fit_corpus`` takes them;
        at least 10 groups.
    n_folds : int, optional
        Folds the groups are dealt into at random (as evenly as they go), from 2 to the number of
        groups. Default: one per group up to 20 groups, else 20. Each fold costs one pass over the
        rows, and the errors have ``n_folds - 1`` degrees of freedom.
    keyed_vectors : KeyedVectorsWithVariance, optional
        The embedding of ``documents`` whose statistics the jackknife's errors go with: by default
        ``fitted.keyed_vectors``; for a sub-corpus, its :func:`~glovev_ext.fit_subcorpora` embedding.
    random_state : int, Generator or None, default=0
        Deals the groups into folds.
    progress : bool, default=True
        Show a progress bar over the folds.

    Returns
    -------
    GroupJackknife

    Raises
    ------
    ValueError
        If the groups do not label every document, are fewer than 10, or ``n_folds`` is out of range.

    See Also
    --------
    GroupJackknife.side_by_side : GloVe-V's errors next to the jackknife's.

    Examples
    --------
    >>> import glovev_ext
    >>> docs = list(glovev_ext.load_default_corpus(max_documents=2000))
    >>> chapters = [i // 200 for i in range(len(docs))]  # ten runs of 200 paragraphs
    >>> fitted = glovev_ext.fit_corpus(docs, glovev_ext.CooccurrenceVectorizer(min_count=3, progress=False),
    ...                                glovev_ext.GloVeVEstimator(n_components=10, epochs=5, progress=False),
    ...                                groups=chapters, progress=False)
    >>> jackknife = glovev_ext.group_jackknife(fitted, docs, chapters, progress=False)
    >>> jackknife.n_folds
    10
    >>> table = jackknife.side_by_side(glovev_ext.cosine_statistic([("he", "she")]))
    >>> list(table.columns)  # doctest: +NORMALIZE_WHITESPACE
    ['estimate', 'GloVe-V std err', 'GloVe-V std err of the mean', 'between groups std err (jackknife)', 'ratio']
    """
    vectorizer, estimator = fitted.vectorizer, fitted.estimator
    groups = DocumentGroups.from_labels(groups)
    if isinstance(documents, LineCorpus):
        groups.check(vectorizer.n_documents_)  # the fitted corpus: as many documents as were counted
    else:
        documents = documents if isinstance(documents, Sequence) else list(documents)
        groups.check(len(documents))
    n_folds = min(groups.n_groups, DEFAULT_FOLDS) if n_folds is None else check_int(n_folds, "n_folds", minimum=2)
    if n_folds > groups.n_groups:
        raise ValueError(f"n_folds={n_folds} is more than the {groups.describe()}: each fold needs a group")
    fold_of_group = np.empty(groups.n_groups, dtype=np.int64)
    fold_of_group[as_generator(random_state).permutation(groups.n_groups)] = np.arange(groups.n_groups) % n_folds
    fold_of_document = fold_of_group[groups.codes]
    folds = [sp.csr_matrix(vectorizer.transform(_subset(documents, fold_of_document == k)), dtype=np.float64)
             for k in tqdm(range(n_folds), desc="counting the folds", disable=not progress)]
    total = sum(folds[1:], folds[0])
    smallest = min(float(fold.data.min()) for fold in folds if fold.nnz)
    words = tuple(fitted.cooccurrence.words)
    scale = estimator.noise_scale_
    # a scale that follows concentration scales each remainder's rows at their concentration over its groups
    by_group = vectorizer.count_by_group(documents, groups) if scale is not None and scale.by_concentration else None
    reference = fitted.keyed_vectors if keyed_vectors is None else keyed_vectors
    references = np.full((len(words), estimator.n_components), np.nan)
    for i, word in enumerate(words):
        if word in reference.key_to_index:
            references[i] = reference[word]
    precision = None if estimator.prior_ is None else estimator.prior_.precision
    fold_vectors = np.empty((n_folds, len(words), estimator.n_components))
    for k in tqdm(range(n_folds), desc="fitting without each fold", disable=not progress):
        rows = _remainder(total, folds[k], smallest)
        if by_group is not None:
            rows = CooccurrenceMatrix(rows, group_concentration=group_concentration(by_group, fold_of_group != k))
        fold = estimator.conditional_fit(rows)
        # the fold's translation against the reference, which its context biases leave free (docs/method.md 6.23)
        remove_translation(fold.embedding, fold.covariance, references, precision, row_sums(rows))
        fold_vectors[k] = fold.embedding
        logger.info("group jackknife: fold %d of %d left out", k + 1, n_folds)
    return GroupJackknife(reference, words, fold_vectors, groups, fold_of_group)


def _subset(documents: Iterable, keep: np.ndarray) -> Iterable:
    """The documents ``keep`` marks, re-iterable for a :class:`LineCorpus`."""
    if isinstance(documents, LineCorpus):
        return DocumentSubset(documents, keep)
    return [document for document, kept in zip(documents, keep) if kept]


def _remainder(total: sp.csr_matrix, fold: sp.csr_matrix, smallest: float) -> sp.csr_matrix:
    """``total - fold`` without the cells only ``fold`` held: what is left of them is rounding, far below half of the
    smallest count any cell of any fold holds."""
    remainder = (total - fold).tocsr()
    remainder.data[remainder.data < smallest / 2] = 0.0
    remainder.eliminate_zeros()
    return remainder
