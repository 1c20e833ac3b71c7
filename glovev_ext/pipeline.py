"""The main job, once: a corpus -> co-occurrences -> GloVe -> GloVe-V, with one metadata schema.

The command line (``glovev fit``), the tutorials and the benchmarks all fit through
:func:`fit_corpus`, and every saved model's ``metadata.json`` follows ``fit_metadata``.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats
from sklearn.base import clone

from ._checks import as_generator, check_int
from ._deprecation import keywords_moved_to_objects
from ._version import __version__
from .counting import CooccurrenceMatrix, CooccurrenceVectorizer, DocumentGroups, LineCorpus, group_concentration
from .counting.corpus import DocumentSubset
from .covariance import GloVeVEstimator
from .glove import SCHEDULES
from .keyed_vectors import KeyedVectorsWithVariance
from ._model_folder import model_bytes
from ._writer_lock import writer_lock
from .atomic import check_free_space
from .saved_model import MIN_FREE_BYTES, check_model_directory, save_model

METADATA_VERSION = 1
HALVINGS_OF_GROUPS = 3
"""How many random halvings of the groups ``fit_corpus``'s noise calibration pools by default (docs/method.md 6.20)."""


@dataclass
class FittedCorpus:
    """Everything :func:`fit_corpus` made.

    Attributes
    ----------
    keyed_vectors : KeyedVectorsWithVariance
        The embedding with covariances and word counts (what :func:`~glovev_ext.save_model` saves).
    estimator : GloVeVEstimator
    vectorizer : CooccurrenceVectorizer
    cooccurrence : CooccurrenceMatrix
    seconds : dict
        Wall time of each stage: ``count``, ``train`` and ``covariances``.
    metadata : dict
        ``fit_metadata`` of the fit.
    output : Path or None
        Where the model was saved (``fit_corpus(..., output=)``), else None.
    """

    keyed_vectors: KeyedVectorsWithVariance
    estimator: GloVeVEstimator
    vectorizer: CooccurrenceVectorizer
    cooccurrence: CooccurrenceMatrix
    seconds: dict
    metadata: dict
    output: Path | None = None


# The keywords fit_corpus took before it took the two objects (issue 24), for one release.
_OLD_VECTORIZER_KEYWORDS = ("window", "min_count", "max_vocab_size", "lowercase", "n_jobs")
_OLD_ESTIMATOR_KEYWORDS = ("n_components", "epochs", "x_max", "alpha", "learning_rate", "random_state", "n_jobs",
                           "covariance_storage", "covariance_dtype", "conditioning", "point_estimate", "n_sweeps",
                           "prior_strength")


@keywords_moved_to_objects(vectorizer=(CooccurrenceVectorizer, _OLD_VECTORIZER_KEYWORDS),
                           estimator=(GloVeVEstimator, _OLD_ESTIMATOR_KEYWORDS))
def fit_corpus(corpus: Iterable, vectorizer: CooccurrenceVectorizer | None = None,
               estimator: GloVeVEstimator | None = None, *, groups=None, calibrate_noise: bool = True,
               n_halvings: int | None = None, by_concentration: bool = True, progress: bool = True,
               source: str | None = None, output: str | os.PathLike | None = None,
               overwrite: bool = False) -> FittedCorpus:
    """Count a corpus, train GloVe on it and compute every word's GloVe-V covariance.

    ``vectorizer`` and ``estimator`` are cloned (:func:`sklearn.base.clone`) and the clones fitted, so
    the objects passed are left as they were; every parameter of both is checked before the corpus
    is read.

    Parameters
    ----------
    corpus : iterable of documents
        A :class:`~glovev_ext.LineCorpus`, a list of strings or of token lists, any gensim corpus.
    vectorizer : CooccurrenceVectorizer, optional
        How to count the corpus; ``CooccurrenceVectorizer()`` when None.
    estimator : GloVeVEstimator, optional
        How to train GloVe and compute the covariances; ``GloVeVEstimator()`` when None.
    groups : DocumentGroups or array-like of shape (n_documents,), optional
        The unit the intervals describe resampling, as scikit-learn's ``groups``: one label per
        document (the book, author, outlet or period it belongs to; a :class:`DocumentGroups` also
        names the unit, e.g. :func:`~glovev_ext.default_corpus_groups` or
        :func:`~glovev_ext.read_groups`). The noise calibration then splits whole groups at random
        (docs/method.md 6.16), so that two sets of groups, not just two sets of documents, differ
        as the intervals say. At least ``MIN_GROUPS`` (10) groups. None: each document is its own
        group.
    calibrate_noise : bool, default=True
        With ``point_estimate="posterior"`` and no ``noise_scale`` of the estimator's own: split the
        documents (or the ``groups``) at random into two halves (seeded by the estimator's
        ``random_state``), count each, and calibrate the noise scale on them
        (``GloVeVEstimator.fit(X, halves=...)``, docs/method.md 6.13). The corpus is then read once
        more for each half, so it must be re-iterable (a list, a ``LineCorpus``, a gensim corpus), not a one-shot
        iterator. False keeps the model's own noise (and takes no ``groups``).
    n_halvings : int, optional
        How many random halvings the calibration pools (each one more count of the corpus's halves
        and one more comparison of them; docs/method.md 6.20). By default
        ``HALVINGS_OF_GROUPS`` (3) with ``groups``, where one halving's factors are a noisy draw
        (with 38 books their standard deviation between halvings is 5-32 % of their mean), and 1
        without, where each document is its own group.
    by_concentration : bool, default=True
        With ``groups``: count each word in each group (one more pass over the corpus) and let the
        noise scale follow each row's concentration over the groups of its text as well as its total
        (``CooccurrenceMatrix.group_concentration``; docs/method.md 6.21), since a word that a few
        groups hold varies between sets of groups far more than one of the same count spread over
        many. False: by the total only (the calibration of glovev-ext 0.3).
    progress : bool, default=True
        Show progress bars (it sets ``progress`` of both clones).
    source : str, optional
        What the corpus is, for the metadata (the file of a ``LineCorpus`` by default).
    output : str or path-like, optional
        Save the model there (:func:`~glovev_ext.save_model`) when the fit is done. The folder is
        checked before the corpus is read (``check_model_directory``),
        so a location that cannot take the model fails at once, not after the fit.
    overwrite : bool, default=False
        Let ``output`` replace a folder that is not a saved model, or a file.

    Returns
    -------
    FittedCorpus
        Its ``vectorizer`` and ``estimator`` are the fitted clones.

    Raises
    ------
    TypeError, ValueError
        For a parameter of ``vectorizer`` or ``estimator`` that cannot work (``check_fit_params``),
        before any work; for ``groups`` without a calibration to use them, with fewer than
        ``MIN_GROUPS`` groups, or with a number of labels other than the corpus's documents (checked
        once the corpus is counted).

    Notes
    -----
    .. deprecated:: 0.3
        The keywords of the vectorizer's parameters (``window``, ``min_count``, ``max_vocab_size``,
        ``lowercase``) and of the estimator's (``n_components``, ``epochs``, ``x_max``, ``alpha``,
        ``learning_rate``, ``random_state``, ``covariance_storage``, ``covariance_dtype``,
        ``conditioning``, ``point_estimate``, ``n_sweeps``, ``prior_strength``; ``n_jobs`` went to
        both) still build the two objects, with a DeprecationWarning, and go in glovev-ext 0.4.

    Examples
    --------
    >>> import glovev_ext
    >>> docs = glovev_ext.load_default_corpus(max_documents=400)
    >>> fitted = glovev_ext.fit_corpus(docs, glovev_ext.CooccurrenceVectorizer(min_count=3),
    ...                                glovev_ext.GloVeVEstimator(n_components=5, epochs=2), progress=False)
    >>> fitted.keyed_vectors.vector_size
    5
    """
    vectorizer = CooccurrenceVectorizer() if vectorizer is None else vectorizer
    estimator = GloVeVEstimator() if estimator is None else estimator
    check_fit_params(vectorizer, estimator)
    vectorizer = clone(vectorizer).set_params(progress=progress)
    estimator = clone(estimator).set_params(progress=progress)
    calibrate_noise = (bool(calibrate_noise) and estimator.point_estimate == "posterior"
                       and estimator.noise_scale is None)
    if calibrate_noise and isinstance(corpus, Iterator):
        raise ValueError("calibrate_noise=True reads the corpus more than once (all of it, then each random half), but "
                         "it is a one-shot iterator: pass a list, a LineCorpus or another re-iterable corpus, or "
                         "calibrate_noise=False")
    groups = _checked_groups(groups, corpus, calibrate_noise)
    n_halvings = _checked_halvings(n_halvings, groups, calibrate_noise)
    if not isinstance(by_concentration, bool):
        raise TypeError(f"by_concentration must be True or False, got {by_concentration!r}")
    target = None if output is None else check_model_directory(output, overwrite=overwrite)
    if vectorizer.max_memory is not None or estimator.max_memory is not None:  # both spill to TMPDIR
        check_free_space(tempfile.gettempdir(), MIN_FREE_BYTES, "the temporary files of a memory budget")
    with nullcontext() if target is None else writer_lock(target):  # a second writer of output is refused now
        started = time.perf_counter()
        cooccurrence = vectorizer.fit_transform(corpus)
        if groups is not None:
            groups.check(vectorizer.n_documents_)
        if target is not None:  # before training: the model's size is known from its words and dimension
            check_free_space(target, model_bytes(cooccurrence.shape[0], estimator.n_components,
                                                 estimator.covariance_dtype,
                                                 estimator.covariance_approximation is None), "the model")
        counts_by_group = None
        if groups is not None and by_concentration:
            counts_by_group = vectorizer.count_by_group(corpus, groups)
            cooccurrence.group_concentration = group_concentration(counts_by_group)
        halves = (_random_halvings(vectorizer, corpus, estimator.random_state, groups, n_halvings, counts_by_group)
                  if calibrate_noise else None)
        seconds = {"count": time.perf_counter() - started}
        estimator.fit(cooccurrence, halves=halves, n_groups=None if groups is None else groups.n_groups)
        seconds.update(estimator.fit_seconds_)
        kv = KeyedVectorsWithVariance.from_estimator(estimator)  # the counts travel with the matrix
        if source is None:
            source = str(corpus.source) if isinstance(corpus, LineCorpus) else type(corpus).__name__
        checksum = corpus.sha256() if isinstance(corpus, LineCorpus) else None
        metadata = fit_metadata(source=source, estimator=estimator, vectorizer=vectorizer, seconds=seconds,
                                corpus_sha256=checksum, groups=groups)
        if output is not None:
            output = save_model(output, kv, metadata, overwrite=overwrite)
    return FittedCorpus(kv, estimator, vectorizer, cooccurrence, seconds, metadata, output)


def check_fit_params(vectorizer: CooccurrenceVectorizer, estimator: GloVeVEstimator) -> None:
    """Check every parameter of a vectorizer and an estimator that can be checked without data.

    :func:`fit_corpus` checks them before it reads the corpus, and ``glovev fit`` before any work,
    so a setting that cannot work fails at once, in the words of the parameter it names.

    Parameters
    ----------
    vectorizer : CooccurrenceVectorizer
    estimator : GloVeVEstimator

    Raises
    ------
    TypeError
        If ``vectorizer`` or ``estimator`` is not of its class, or a parameter is of the wrong type.
    ValueError
        For a parameter's value, or a combination of them, that cannot work.
    """
    for name, value, cls in (("vectorizer", vectorizer, CooccurrenceVectorizer),
                             ("estimator", estimator, GloVeVEstimator)):
        if not isinstance(value, cls):
            raise TypeError(f"{name} must be a {cls.__name__}, got {type(value).__name__}")
    vectorizer._validate_params()
    estimator._check_params()


def _checked_groups(groups, corpus: Iterable, calibrate_noise: bool) -> DocumentGroups | None:
    """``fit_corpus``'s ``groups`` as :class:`DocumentGroups`, checked as far as can be before the corpus is read."""
    if groups is None:
        return None
    if not calibrate_noise:
        raise ValueError("groups set the unit of the noise calibration's random halves, and this fit has none "
                         "(calibrate_noise=False, a point_estimate other than 'posterior', or the estimator's own "
                         "noise_scale): drop groups, or calibrate")
    groups = DocumentGroups.from_labels(groups)
    if hasattr(corpus, "__len__"):
        groups.check(len(corpus))
    return groups


def _checked_halvings(n_halvings, groups: DocumentGroups | None, calibrate_noise: bool) -> int:
    """``fit_corpus``'s ``n_halvings``, checked, or its default for ``groups``."""
    if n_halvings is None:
        return HALVINGS_OF_GROUPS if groups is not None else 1
    n_halvings = check_int(n_halvings, "n_halvings", minimum=1)
    if not calibrate_noise and n_halvings > 1:
        raise ValueError(f"n_halvings={n_halvings} sets how many random halvings the noise calibration pools, and "
                         "this fit calibrates nothing (calibrate_noise=False, a point_estimate other than "
                         "'posterior', or the estimator's own noise_scale)")
    return n_halvings


def _random_halvings(vectorizer: CooccurrenceVectorizer, corpus: Iterable, random_state,
                     groups: DocumentGroups | None, n_halvings: int, counts_by_group=None) -> tuple | list:
    """The co-occurrence matrices of two random halves of ``corpus``'s documents, in the fitted vocabulary, once per
    halving: each document in one with probability 1/2, or with ``groups``, half of the groups
    (``DocumentGroups.halves``). One halving is a pair, several a list of pairs. With each word's
    ``counts_by_group``, each half carries its rows' concentration over its own groups.

    Halving ``k`` comes from the ``k``-th child of ``random_state``'s stream, so a
    :func:`~glovev_ext.split_half.split_half_check` with the same seed (which draws from the stream itself)
    checks the calibration on another split.
    """
    halvings = []
    for generator in as_generator(random_state).spawn(n_halvings):
        first = generator.random(vectorizer.n_documents_) < 0.5 if groups is None else groups.halves(generator)
        if isinstance(corpus, LineCorpus):  # a corpus a Dask cluster's workers can read for themselves
            pair = tuple(vectorizer.transform(DocumentSubset(corpus, first == side)) for side in (True, False))
        else:
            pair = tuple(vectorizer.transform(document for document, in_first in zip(corpus, first)
                                              if in_first == side) for side in (True, False))
        if counts_by_group is not None:
            first_groups = np.zeros(groups.n_groups, dtype=bool)
            first_groups[groups.codes[first]] = True
            for half, side in zip(pair, (True, False)):
                half.group_concentration = group_concentration(counts_by_group, first_groups == side)
        halvings.append(pair)
    return halvings[0] if n_halvings == 1 else halvings


def fit_metadata(*, source: str, estimator: GloVeVEstimator, vectorizer: CooccurrenceVectorizer | None,
                 seconds: dict, corpus_sha256: str | None = None, groups: DocumentGroups | None = None) -> dict:
    """The metadata a saved model carries: what was fitted, how, and what came out.

    Parameters
    ----------
    source : str
        The corpus (or the folder of Stanford C-tool output the parameters came from).
    estimator : GloVeVEstimator
        Fitted.
    vectorizer : CooccurrenceVectorizer or None
        Fitted; None when the co-occurrences were read from files.
    seconds : dict
        Wall time per stage.
    corpus_sha256 : str, optional
        :meth:`LineCorpus.sha256 <glovev_ext.LineCorpus.sha256>` of the corpus (None for one held in
        memory, or for parameters read from files).
    groups : DocumentGroups, optional
        The groups the noise calibration split (None: each document its own group).

    Returns
    -------
    dict
        ``metadata_version``, ``glovev_ext_version``, ``source``, ``corpus_sha256``, ``counting`` (window, min_count,
        max_vocab_size, lowercase; None without a vectorizer), ``glove`` (n_components, epochs,
        learning_rate, x_max, alpha, random_state, schedule, conditioning, point_estimate, n_sweeps
        (None unless alternating or posterior), prior_strength (None unless posterior), noise_scale (the knots
        of ``noise_scale_``, ``{"own": {"total", "factor", "n_words"}, "pooled": ...}``, each curve with
        ``slope`` and ``concentration`` lists when it follows the rows' concentration over groups, and ``along``,
        the knots of the factor on the variance along each word's vector, where it has one; None without one),
        covariance_dtype; epochs is None for pretrained parameters), ``counts`` (n_documents, n_tokens, n_words, n_nonzeros, n_with_covariance,
        n_singular, n_pseudo_inverse), ``sampling`` (what the intervals describe resampling, ``unit`` and
        ``n_groups``: the groups' unit, or "documents" each its own group, both None for a noise scale
        given to the estimator; None where the noise was not calibrated, so that the intervals carry
        GloVe-V's model noise only) and ``seconds``.
    """
    counting = None
    if vectorizer is not None:
        counting = {name: getattr(vectorizer, name) for name in ("window", "min_count", "max_vocab_size", "lowercase")}
    pretrained = estimator.pretrained is not None
    random_state = estimator.random_state if isinstance(estimator.random_state, int) else repr(estimator.random_state)
    return {
        "metadata_version": METADATA_VERSION,
        "glovev_ext_version": __version__,
        "source": source,
        "corpus_sha256": corpus_sha256,
        "counting": counting,
        "glove": {"n_components": int(estimator.embedding_.shape[1]),
                  "epochs": None if pretrained else estimator.epochs,
                  "learning_rate": None if pretrained else estimator.learning_rate, "x_max": estimator.x_max,
                  "alpha": estimator.alpha, "random_state": None if pretrained else random_state,
                  "schedule": None if pretrained else SCHEDULES[0], "covariance_dtype": estimator.covariance_dtype,
                  "covariance_approximation": estimator.covariance_approximation,
                  "conditioning": estimator.conditioning, "point_estimate": estimator.point_estimate,
                  "n_sweeps": estimator.n_sweeps_ if estimator.point_estimate in ("alternating", "posterior") else None,
                  "prior_strength": estimator.prior_strength if estimator.point_estimate == "posterior" else None,
                  "noise_scale": _noise_scale_metadata(estimator)},
        "counts": {"n_documents": getattr(vectorizer, "n_documents_", None),
                   "n_tokens": getattr(vectorizer, "n_tokens_", None),
                   "n_words": int(estimator.n_features_in_), "n_nonzeros": int(estimator.n_contexts_.sum()),
                   "n_with_covariance": int(estimator.covariance_defined_.sum()),
                   "n_singular": int(estimator.singular_.sum()),
                   "n_pseudo_inverse": int(estimator.pseudo_inverse_.sum())},
        "sampling": _sampling_metadata(estimator, vectorizer, groups),
        "seconds": {name: round(float(value), 3) for name, value in seconds.items()},
    }


def _sampling_metadata(estimator: GloVeVEstimator, vectorizer: CooccurrenceVectorizer | None,
                       groups: DocumentGroups | None) -> dict | None:
    """What the intervals describe resampling: the calibration's unit and how many there were."""
    if _noise_scale_metadata(estimator) is None:
        return None
    if estimator.noise_scale is not None:  # carried from another fit, whose unit this fit does not know
        return {"unit": None, "n_groups": None}
    if groups is not None:
        return {"unit": groups.unit, "n_groups": groups.n_groups}
    return {"unit": "documents", "n_groups": getattr(vectorizer, "n_documents_", None)}


def sampling_description(metadata: dict) -> str:
    """What a model's intervals describe, in words, from its metadata (its ``sampling``).

    Parameters
    ----------
    metadata : dict
        A saved model's metadata (``fit_metadata``).

    Returns
    -------
    str
        E.g. "intervals describe resampling books: 38 groups", or, without a calibration, that they
        carry GloVe-V's model noise only.
    """
    sampling = metadata.get("sampling")
    if "sampling" not in metadata and (metadata.get("glove") or {}).get("noise_scale") is not None:
        # saved before groups (glovev-ext 0.3.0): a calibrated model was calibrated on its documents
        sampling = {"unit": "documents", "n_groups": (metadata.get("counts") or {}).get("n_documents")}
    if not sampling:
        return ("intervals carry GloVe-V's model noise only (no calibration on split halves): not the variation "
                "between documents or groups of them")
    if sampling.get("unit") is None:
        return "intervals describe resampling the unit of the fit the estimator's noise_scale was calibrated on"
    n_groups = sampling.get("n_groups")
    count = f": {n_groups:,} groups" if isinstance(n_groups, int) else ""
    return f"intervals describe resampling {sampling['unit']}{count}"


def _noise_scale_metadata(estimator: GloVeVEstimator) -> dict | None:
    scale = getattr(estimator, "noise_scale_", None)
    return None if scale is None or scale.is_identity else scale.to_dict()


def outside_optimum_region(estimator: GloVeVEstimator, confidence_level: float = 0.95) -> float:
    """Share of words whose trained vector lies outside the ``confidence_level`` region of its WLS optimum.

    The squared Mahalanobis distance over D follows an F distribution with D and ``|K_i| - D``
    degrees of freedom if the trained vector were a draw of the optimum's estimator; the region
    is where it is below that F quantile. Words without a distance (no covariance) are left out.
    """
    distance = estimator.optimum_distance_
    dim = estimator.embedding_.shape[1]
    dof = estimator.n_contexts_ - dim
    known = np.isfinite(distance) & (dof > 0)
    if not known.any():
        return float("nan")
    limit = dim * stats.f.ppf(confidence_level, dim, dof[known])
    return float(np.mean(distance[known] ** 2 > limit))
