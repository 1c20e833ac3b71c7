"""Sub-corpora in one basis: each sub-corpus's word vectors fitted given the pooled contexts.

Fitting each period or genre on its own gives embeddings in unrelated bases (rotations, and more
than rotations), which is why aligned-embedding studies need Procrustes and then have no error
bars. Here the context vectors and context biases come from the pooled fit, and each sub-corpus's
co-occurrence rows are fitted by the conditional weighted least squares that already gives
GloVe-V its covariances (:meth:`GloVeVEstimator.conditional_fit
<glovev_ext.GloVeVEstimator.conditional_fit>`; each row gets its own bias, which absorbs the
sub-corpus's size). A word's vectors from two sub-corpora are then estimates of points in the same
space, with independent errors (disjoint text), and every statistic of the library applies to each
sub-corpus's :class:`KeyedVectorsWithVariance`; :func:`glovev_ext.stats.self_similarity` and
:func:`glovev_ext.stats.vector_change_test` compare a word across two of them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping

import numpy as np
from gensim.models import KeyedVectors

from ._memory import row_sums
from .counting import group_concentration
from .covariance.translation import remove_translation

from .keyed_vectors import KeyedVectorsWithVariance
from .pipeline import FittedCorpus

logger = logging.getLogger(__name__)


TRANSLATION_CHOICES = ("remove", "keep")
"""What :func:`fit_subcorpora` does with the translation the pooled context biases leave free."""


def fit_subcorpora(fitted: FittedCorpus, subcorpora: Mapping[str, Iterable], *,
                   groups: Mapping[str, Iterable] | None = None,
                   translation: str = "remove") -> dict[str, KeyedVectorsWithVariance]:
    """Each sub-corpus's centre vectors and covariances in the basis of the pooled fit.

    Parameters
    ----------
    fitted : FittedCorpus
        :func:`~glovev_ext.fit_corpus` of the pooled corpus (all sub-corpora together).
    subcorpora : dict
        ``{name: documents}``, each an iterable of documents as ``fit_corpus`` takes them.
    groups : dict, optional
        ``{name: labels}``, one label per document of that sub-corpus (the book or author it comes
        from), for a pooled fit calibrated with groups (``fit_corpus(..., groups=...)``): each
        row's noise then follows its concentration over the sub-corpus's own groups, as the
        calibration's halves did (docs/method.md 6.21); the documents are read twice. A sub-corpus
        without labels, or of a pooled fit whose scale follows the totals only, is scaled at its
        rows' totals only (its labels are then not read).
    translation : {"remove", "keep"}, default="remove"
        With the pooled context vectors and biases, a sub-corpus's rows are determined only up to one
        vector common to all of them (moving every word by ``v`` and every context bias by ``-c_j . v``
        changes no prediction), and fitting them at the pooled context biases moves all its words by
        the part of its own use of the contexts that lies along the context vectors (docs/method.md
        6.23). "remove" estimates that vector against the pooled vectors over the sub-corpus's rows of
        largest total (``glovev_ext.covariance.translation.remove_translation``) and takes it out
        of every word, so that two sub-corpora's vectors differ by their words' own changes, as the
        noise scale's calibration compares its halves. "keep" gives the rows as fitted.

    Returns
    -------
    dict
        ``{name: KeyedVectorsWithVariance}``: the words of the pooled vocabulary that the
        sub-corpus fits (with the default ``point_estimate="posterior"``, two contexts or more in it,
        each row's posterior under the pooled prior, its residual variance scaled by the pooled fit's
        ``noise_scale_`` at the row's own total co-occurrence; otherwise more than D + 1 contexts and a
        block that is not numerically singular; the others are left out), in the pooled order.
        Posteriors of two sub-corpora share the prior's part of their errors: each embedding's
        ``prior`` is the pooled fit's, and :func:`~glovev_ext.compare_models` and
        :func:`~glovev_ext.stats.vector_change_test` take that part out (docs/method.md 6.14).
    """
    if not subcorpora:
        raise ValueError("no sub-corpus given")
    groups = {} if groups is None else dict(groups)
    unknown = sorted(set(groups) - set(subcorpora), key=str)
    if unknown:
        raise ValueError(f"groups names {unknown[0]!r}, which is not a sub-corpus (they are "
                         f"{', '.join(map(repr, subcorpora))})")
    if translation not in TRANSLATION_CHOICES:
        raise ValueError(f"translation must be one of {TRANSLATION_CHOICES}, got {translation!r}")
    scale = fitted.estimator.noise_scale_
    counted = set(groups) if scale is not None and scale.by_concentration else set()  # else x changes no factor
    out = {}
    for name, documents in subcorpora.items():
        if name in counted and isinstance(documents, Iterator):
            documents = list(documents)  # read once to count, once for each group's words
        rows = fitted.vectorizer.transform(documents)
        if name in counted:
            rows.group_concentration = group_concentration(fitted.vectorizer.count_by_group(documents, groups[name]))
        words = list(rows.words)
        conditional = fitted.estimator.conditional_fit(rows)
        fitted_rows = np.flatnonzero(np.isfinite(conditional.embedding).all(axis=1))
        if fitted_rows.size == 0:
            raise ValueError(f"sub-corpus {name!r}: no word has more than D = {fitted.estimator.n_components} "
                             "contexts in it")
        if translation == "remove":
            prior = fitted.estimator.prior_
            move = remove_translation(conditional.embedding, conditional.covariance, fitted.estimator.embedding_,
                                      None if prior is None else prior.precision, row_sums(rows))
            logger.info("sub-corpus %r: a translation of length %.3g taken out of its words", name,
                        float(np.linalg.norm(move)))
        keys = [words[i] for i in fitted_rows]
        vectors = KeyedVectors(conditional.embedding.shape[1], 0, dtype=np.float64)
        vectors.add_vectors(keys, conditional.embedding[fitted_rows])
        out[name] = KeyedVectorsWithVariance.from_keyed_vectors(
            vectors, conditional.covariance.take(fitted_rows, words=keys))
        out[name].prior = fitted.estimator.prior_
        logger.info("sub-corpus %r: %d of %d words fitted", name, len(keys), len(words))
    return out

