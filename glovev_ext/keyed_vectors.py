"""KeyedVectorsWithVariance: gensim's KeyedVectors carrying each word's GloVe-V covariance."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
from gensim.models import KeyedVectors
from gensim.models.keyedvectors import _KEY_TYPES, _add_word_to_kv
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from . import stats
from ._deprecation import warn_renamed
from ._version import __version__
from .covariance import CovarianceStore, Factor, GaussianPrior, GloVeVEstimator, UndefinedCovarianceError
from .stats.statistics.cosine import unit_vector_jacobian
from .stats.engine.words import NO_COVARIANCE, NOT_IN_VOCABULARY

logger = logging.getLogger(__name__)

_NO_COVARIANCE = -1
_DRAW_BATCH = 16


class KeyedVectorsWithVariance(KeyedVectors):
    """gensim ``KeyedVectors`` whose words carry the covariance of their GloVe-V centre vector.

    Everything gensim offers works unchanged (``most_similar``, ``evaluate_word_pairs``, saving,
    ``load_word2vec_format``...). Besides the vectors, the object holds a
    :class:`~glovev_ext.covariance.CovarianceStore` and, for every row of ``vectors``, the store row of its
    covariance (``covariance_rows``, -1 for none). Covariances are looked up through
    :meth:`get_index`, so they follow gensim's own key handling. Whatever changes a word's vector
    through gensim's methods (``add_vector(s)``, ``__setitem__``, ``intersect_word2vec_format``)
    drops that word's covariance, since the covariance describes the trained vector; words added
    are marked as having none; reordering and resizing keep every word with its own covariance;
    ``unit_normalize_all`` maps each covariance through the normalisation Jacobian.

    Parameters
    ----------
    vector_size, count, dtype, mapfile_path
        As for :class:`gensim.models.keyedvectors.KeyedVectors`.

    Attributes
    ----------
    covariance_store : CovarianceStore or None
    covariance_rows : ndarray of int64, shape (len(vectors),)
    prior : GaussianPrior or None
        The prior the covariances are posteriors under (the default recipe's, and its sub-corpora's:
        the pooled fit's), saved with the model. Results of two embeddings under the same prior share
        its part of their errors, which :func:`~glovev_ext.compare_models` and
        :func:`~glovev_ext.stats.vector_change_test` take out (docs/method.md 6.14). None for the other
        recipes, for covariances read from files, and after :meth:`unit_normalize_all`.

    Examples
    --------
    A small model of the embedded corpus, one similarity with its interval, and a save and load
    that keeps the covariances:

    >>> import tempfile
    >>> import glovev_ext
    >>> docs = glovev_ext.load_default_corpus(max_documents=2000)
    >>> fitted = glovev_ext.fit_corpus(
    ...     docs, glovev_ext.CooccurrenceVectorizer(progress=False),
    ...     glovev_ext.GloVeVEstimator(n_components=10, epochs=5, progress=False), progress=False)
    >>> kv = fitted.keyed_vectors
    >>> isinstance(kv, glovev_ext.KeyedVectorsWithVariance)
    True
    >>> result = kv.similarity_test("man", "woman")
    >>> low, high = result.conf_int()
    >>> bool(-1 <= low < result.estimate < high <= 1) and 0 <= result.pvalue <= 1
    True
    >>> kv.most_similar("man", topn=3)  # gensim's own methods work unchanged  # doctest: +ELLIPSIS
    [(..., ...), (..., ...), (..., ...)]
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = glovev_ext.save_model(f"{folder}/model", kv)
    ...     loaded, metadata = glovev_ext.load_model(path)
    ...     bool((loaded.covariance("man") == kv.covariance("man")).all())
    True
    """

    prior: GaussianPrior | None = None  # models saved before it existed load without one

    def __init__(self, vector_size, count=0, dtype=np.float32, mapfile_path=None):
        super().__init__(vector_size, count=count, dtype=dtype, mapfile_path=mapfile_path)
        self.covariance_store: CovarianceStore | None = None
        self.covariance_rows = np.full(count, _NO_COVARIANCE, np.int64)
        self.prior = None

    @classmethod
    def from_estimator(cls, estimator, words: Sequence[str] | None = None,
                       counts: Sequence[int] | None = None) -> KeyedVectorsWithVariance:
        """The fitted centre vectors of a :class:`~glovev_ext.GloVeVEstimator`, with their covariances.

        Parameters
        ----------
        estimator : GloVeVEstimator or sklearn.pipeline.Pipeline
            A fitted estimator, or a fitted pipeline that ends in one (its last step's embedding).
        words : sequence of str, optional
            Keys; the estimator's ``words_`` by default (required when it has none).
        counts : sequence of int, optional
            Word frequencies, stored as gensim's ``count`` attribute; the estimator's
            ``word_counts_`` by default (the counts its matrix carried).

        Returns
        -------
        KeyedVectorsWithVariance
        """
        if isinstance(estimator, Pipeline):
            last = estimator.steps[-1][1]
            if not isinstance(last, GloVeVEstimator):
                raise TypeError(f"from_estimator needs a pipeline that ends in a GloVeVEstimator; this one ends in "
                                f"{type(last).__name__}")
            estimator = last
        check_is_fitted(estimator, "embedding_")  # an unfitted estimator: NotFittedError, which says to fit it
        vectors = estimator.embedding_
        words = estimator.words_ if words is None else words
        if words is None:
            raise ValueError("the estimator was fitted on a matrix without words; pass words=")
        words = list(words)
        if len(words) != vectors.shape[0]:
            raise ValueError(f"{len(words)} words for {vectors.shape[0]} vectors")
        kv = cls(vectors.shape[1], 0, dtype=vectors.dtype)
        KeyedVectors.add_vectors(kv, words, vectors)
        kv.covariance_store = estimator.covariance_
        kv.covariance_rows = np.arange(len(words), dtype=np.int64)
        kv.prior = getattr(estimator, "prior_", None)
        counts = getattr(estimator, "word_counts_", None) if counts is None else counts
        if counts is not None:
            kv.expandos["count"] = np.asarray(counts, dtype=np.int64)
        return kv

    @classmethod
    def from_keyed_vectors(cls, vectors: KeyedVectors, store: CovarianceStore) -> KeyedVectorsWithVariance:
        """Any gensim ``KeyedVectors`` with covariances attached by key from a store that knows its words."""
        kv = cls(vectors.vector_size, 0, dtype=vectors.vectors.dtype)
        KeyedVectors.add_vectors(kv, list(vectors.index_to_key), vectors.vectors)
        for attribute, values in vectors.expandos.items():
            kv.expandos[attribute] = np.array(values)
        kv.attach_covariances(store)
        return kv

    def attach_covariances(self, store: CovarianceStore) -> None:
        """Give each key the covariance the store holds for the same word (none for words it lacks)."""
        if store.words is None:
            raise ValueError("the store does not know its words; covariances can only be attached by word")
        if store.shape[1] != self.vector_size:
            raise ValueError(f"the store holds {store.shape[1]}-dimensional covariances for "
                             f"{self.vector_size}-dimensional vectors")
        index = {word: row for row, word in enumerate(store.words)}
        self.covariance_store = store
        self.covariance_rows = np.array([index.get(key, _NO_COVARIANCE) for key in self.index_to_key], np.int64)
        logger.info("attached covariances to %d of %d keys", int((self.covariance_rows >= 0).sum()), len(self))

    def get_vector(self, key, norm=False):
        """gensim's ``get_vector``, as a read-only copy.

        gensim's ``unitvec`` rescales a float64 vector in place through BLAS, past the read-only
        flag of the view ``get_vector`` returns, so ``similarity()`` would overwrite float64
        embeddings (gensim 4.4); a copy keeps ours intact.
        """
        result = np.array(super().get_vector(key, norm=norm))
        result.setflags(write=False)
        return result

    def has_covariance(self, key) -> bool:
        """Whether ``key`` has a covariance."""
        row = self._store_row(self.get_index(key))
        return bool(row >= 0 and self.covariance_store.has_covariance(row))

    def unusable_reason(self, key) -> str | None:
        """Why ``key`` cannot enter a statistic with uncertainty, or None if it can."""
        if key not in self.key_to_index:
            return NOT_IN_VOCABULARY
        return self._missing_covariance(self._store_row(self.get_index(key)))

    def covariance_row(self, key) -> int:
        """Row of ``key`` in :attr:`covariance_store`; raises if it has no covariance."""
        index = self.get_index(key)
        row = self._store_row(index)
        reason = self._missing_covariance(row)
        if reason is not None:
            raise UndefinedCovarianceError(f"word {self.index_to_key[index]!r} has {reason}")
        return row

    def aligned_covariance_store(self) -> CovarianceStore:
        """A store whose word i is ``index_to_key[i]``, holding its covariance (none where it has none)."""
        rows = np.array([self._store_row(index) for index in range(len(self.index_to_key))], np.int64)
        return self.covariance_store.take(rows, words=list(self.index_to_key))

    def covariance_factor(self, key) -> Factor:
        """The covariance of ``key``'s vector as a :class:`~glovev_ext.covariance.Factor` (what statistics use)."""
        return self.covariance_store.factor(self.covariance_row(key))

    def covariance(self, key_or_keys) -> np.ndarray:
        """Covariance of a word's vector (D x D), or a stack (n x D x D) for a list of words."""
        if isinstance(key_or_keys, _KEY_TYPES):
            return self.covariance_store[self.covariance_row(key_or_keys)]
        return np.stack([self.covariance(key) for key in key_or_keys])

    def sample_vectors(self, keys: Sequence, n: int, random_state=None) -> np.ndarray:
        """``n`` joint draws of the vectors of ``keys`` from ``N(w_i, Sigma_i)``, independent across words.

        ``random_state`` as for :meth:`draw`.

        Returns
        -------
        ndarray, shape (n, len(keys), D)
        """
        generator = np.random.default_rng(random_state)
        factors = [self.covariance_factor(key) for key in keys]
        draws = np.empty((n, len(factors), self.vector_size))
        for k, (key, factor) in enumerate(zip(keys, factors)):
            draws[:, k] = self.get_vector(key) + factor.transform_normal(
                generator.standard_normal((n, self.vector_size)))
        return draws

    def draw(self, random_state=None, keys: Iterable | None = None, missing: str = "raise") -> KeyedVectors:
        """One draw of the embedding as a plain gensim ``KeyedVectors``.

        Parameters
        ----------
        random_state : None, int or numpy Generator, default=None
            Fresh random numbers by default, as numpy gives, so that repeated calls make new draws
            (the statistics, which return results, seed theirs with
            :data:`~glovev_ext.stats.DEFAULT_SEED`); an int repeats a draw.
        keys : iterable, optional
            Words to draw (all when None).
        missing : {"raise", "drop", "keep"}
            What to do with a word without covariance: refuse, leave it out of the draw, or keep
            its vector fixed (a choice the caller states, never a silent default).

        Returns
        -------
        gensim.models.keyedvectors.KeyedVectors
        """
        return next(self.draws(1, random_state=random_state, keys=keys, missing=missing))

    def draws(self, n: int, random_state=None, keys: Iterable | None = None,
              missing: str = "raise") -> Iterator[KeyedVectors]:
        """``n`` independent draws of the embedding (see :meth:`draw`), generated in batches.

        ``missing`` takes the statistics' choices, and ``"keep"``: a word without covariance keeps
        its vector fixed in every draw.
        """
        if missing not in (*stats.MISSING_CHOICES, "keep"):
            raise ValueError(f"missing must be one of {(*stats.MISSING_CHOICES, 'keep')}, got {missing!r}")
        generator = np.random.default_rng(random_state)
        keys = list(self.index_to_key if keys is None else keys)
        with_covariance = np.array([self.has_covariance(key) for key in keys], dtype=bool)
        if missing == "raise" and not with_covariance.all():
            lacking = [key for key, ok in zip(keys, with_covariance) if not ok]
            counted = "1 word has" if len(lacking) == 1 else f"{len(lacking)} words have"
            raise UndefinedCovarianceError(f"{counted} no covariance, e.g. {lacking[:5]}; "
                                           "pass missing='drop' or missing='keep'")
        if missing == "drop":
            keys = [key for key, ok in zip(keys, with_covariance) if ok]
            with_covariance = np.ones(len(keys), dtype=bool)
        base = np.vstack([self.get_vector(key) for key in keys]) if keys else np.empty((0, self.vector_size))
        for start in range(0, n, _DRAW_BATCH):
            batch = np.repeat(base[None], min(_DRAW_BATCH, n - start), axis=0)
            for k in np.flatnonzero(with_covariance):
                z = generator.standard_normal((batch.shape[0], self.vector_size))
                batch[:, k] += self.covariance_factor(keys[k]).transform_normal(z)
            for vectors in batch:
                drawn = KeyedVectors(self.vector_size, 0, dtype=self.vectors.dtype)
                drawn.add_vectors(keys, vectors)
                yield drawn

    # --- statistics with uncertainty (glovev_ext.stats) ------------------------------------------------

    def similarity_test(self, word1, word2, **kwargs):
        """Cosine similarity with standard error and Wald test; see :func:`glovev_ext.stats.similarity`."""
        return stats.similarity(self, word1, word2, **kwargs)

    def similarity_family(self, pairs, **kwargs):
        """Several similarities as one family, with their joint covariance (for differences and contrasts); see
        :func:`glovev_ext.stats.similarity_family`."""
        return stats.similarity_family(self, pairs, **kwargs)

    def similarities_test(self, pairs, **kwargs):
        """:meth:`similarity_family` under its name of glovev-ext 0.2 (deprecated)."""
        warn_renamed("KeyedVectorsWithVariance.similarities_test", "KeyedVectorsWithVariance.similarity_family")
        return stats.similarity_family(self, pairs, **kwargs)

    def similarity_tests(self, pairs, **kwargs):
        """Many similarities, each tested on its own (vectorised with ``method="delta"``); see
        :func:`glovev_ext.stats.similarity_tests`."""
        return stats.similarity_tests(self, pairs, **kwargs)

    def similarity_difference_test(self, pair1, pair2, **kwargs):
        """``cos(pair1) - cos(pair2)``; see :func:`glovev_ext.stats.similarity_difference`."""
        return stats.similarity_difference(self, pair1, pair2, **kwargs)

    def nearest_neighbors_test(self, word, candidates=None, topn: int = 10, **kwargs):
        """Neighbours with intervals, adjacent-rank tests, rank probabilities; see
        :func:`glovev_ext.stats.nearest_neighbors`."""
        return stats.nearest_neighbors(self, word, candidates, topn, **kwargs)

    def weat_test(self, X, Y, A, B, **kwargs):
        """WEAT effect size and statistic with GloVe-V errors; see :func:`glovev_ext.stats.weat`."""
        return stats.weat(self, X, Y, A, B, **kwargs)

    def weat_permutation_test(self, X, Y, A, B, **kwargs):
        """The classic WEAT permutation test; see :func:`glovev_ext.stats.weat_permutation_test`."""
        return stats.weat_permutation_test(self, X, Y, A, B, **kwargs)

    def cosine_bias_test(self, group_a, group_b, attributes, **kwargs):
        """Garg et al. cosine bias with a GloVe-V error; see :func:`glovev_ext.stats.cosine_bias`."""
        return stats.cosine_bias(self, group_a, group_b, attributes, **kwargs)

    def evaluate_word_pairs_with_uncertainty(self, pairs, **kwargs):
        """Spearman with human ratings and a Monte Carlo interval; see :func:`glovev_ext.stats.evaluate_word_pairs`."""
        return stats.evaluate_word_pairs(self, pairs, **kwargs)

    def evaluate_word_analogies_with_uncertainty(self, questions, **kwargs):
        """Analogy accuracy against random guessing; see :func:`glovev_ext.stats.evaluate_analogies`."""
        return stats.evaluate_analogies(self, questions, **kwargs)

    def evaluate_relational_similarity_with_uncertainty(self, relations, **kwargs):
        """SemEval-2012 Task 2 scores against the Random baseline; see
        :func:`glovev_ext.stats.evaluate_relational_similarity`."""
        return stats.evaluate_relational_similarity(self, relations, **kwargs)

    def self_similarity_test(self, other, words, **kwargs):
        """Cosine of each word's vector here with its vector in ``other`` (same basis); see
        :func:`glovev_ext.stats.self_similarity`."""
        return stats.self_similarity(self, other, words, **kwargs)

    def vector_change_test(self, other, words, **kwargs):
        """Wald test that each word's vector is the same here and in ``other`` (same basis); see
        :func:`glovev_ext.stats.vector_change_test`."""
        return stats.vector_change_test(self, other, words, **kwargs)

    def statistic_test(self, statistic, **kwargs):
        """Any :class:`~glovev_ext.Statistic` (one value: a test; several: a family); see
        :func:`glovev_ext.stats.estimate`."""
        if len(statistic.names) == 1:
            return stats.wald_test(self, statistic, **kwargs)
        return stats.estimate(self, statistic, **kwargs)

    # --- gensim methods that change rows: keep covariance_rows aligned with vectors ------------------

    def add_vector(self, key, vector):
        index = super().add_vector(key, vector)
        self._align_rows()
        self.covariance_rows[index] = _NO_COVARIANCE
        self.norms = None
        return index

    def add_vectors(self, keys, weights, extras=None, replace=False):
        key_list = [keys] if isinstance(keys, _KEY_TYPES) else list(keys)
        replaced = [self.key_to_index[key] for key in key_list if key in self.key_to_index] if replace else []
        result = super().add_vectors(key_list if not isinstance(keys, _KEY_TYPES) else keys, weights,
                                     extras=extras, replace=replace)
        self._align_rows()
        self.covariance_rows[replaced] = _NO_COVARIANCE
        self.norms = None
        return result

    def resize_vectors(self, seed=0):
        result = super().resize_vectors(seed=seed)
        self._align_rows()
        return result

    def sort_by_descending_frequency(self):
        rows_by_key = dict(zip(self.index_to_key, self.covariance_rows))
        result = super().sort_by_descending_frequency()
        self.covariance_rows = np.array([rows_by_key.get(key, _NO_COVARIANCE) if key is not None
                                         else _NO_COVARIANCE for key in self.index_to_key], np.int64)
        self.norms = None
        return result

    def intersect_word2vec_format(self, *args, **kwargs):
        before = self.vectors.copy()
        result = super().intersect_word2vec_format(*args, **kwargs)
        changed = np.flatnonzero(np.any(before != self.vectors, axis=1))
        self.covariance_rows[changed] = _NO_COVARIANCE
        self.norms = None
        return result

    def unit_normalize_all(self):
        """Scale every vector to unit length, mapping each covariance through the Jacobian.

        The Jacobian of ``w -> w / |w|`` is ``(I - u u^T) / |w|`` with ``u = w / |w|``, so each
        covariance becomes ``J Sigma J^T`` (rank at most D - 1: the radial direction is gone).
        """
        if self.covariance_store is not None:
            self.covariance_store = self.covariance_store.mapped(
                self.covariance_rows, lambda k: unit_vector_jacobian(np.asarray(self.vectors[k], dtype=np.float64)))
            self.covariance_rows = np.where(self.covariance_rows >= 0, np.arange(len(self.covariance_rows)),
                                            _NO_COVARIANCE)
        self.prior = None  # the mapped covariances are no longer posteriors of these vectors
        super().unit_normalize_all()

    def vectors_for_all(self, keys: Iterable, allow_inference: bool = True,
                        copy_vecattrs: bool = False) -> KeyedVectorsWithVariance:
        """gensim's ``vectors_for_all``, returning this class with each word's covariance."""
        vocabulary, seen = [], set()
        for key in keys:
            if key not in seen:
                seen.add(key)
                if key in (self if allow_inference else self.key_to_index):
                    vocabulary.append(key)
        kv = type(self)(self.vector_size, len(vocabulary), dtype=self.vectors.dtype)
        for key in vocabulary:
            _add_word_to_kv(kv, None, key, self[key], len(vocabulary))
            if copy_vecattrs:
                for attribute in self.expandos:
                    try:
                        kv.set_vecattr(key, attribute, self.get_vecattr(key, attribute))
                    except KeyError:
                        pass
        kv.covariance_store = self.covariance_store
        kv.covariance_rows = np.array([self._store_row(self.get_index(key)) for key in vocabulary], np.int64)
        kv.prior = self.prior
        return kv

    # --- saving and loading ---------------------------------------------------------------------------

    @classmethod
    def load(cls, fname, mmap=None) -> KeyedVectorsWithVariance:
        """Load an object saved with :meth:`save` (``mmap='r'`` keeps vectors and covariance factors on disk).

        Raises
        ------
        TypeError
            If the file holds a plain gensim ``KeyedVectors`` (load it with ``KeyedVectors.load`` and
            use :meth:`from_keyed_vectors`), or was written by glovev-ext 0.1 (load it with
            glovev-ext 0.2 and save it again).
        """
        try:
            loaded = super().load(fname, mmap=mmap)
        except ModuleNotFoundError as error:
            # only 0.1 pickled classes under modules this version lacks (its flat glovev_ext.covariance_store, ...)
            if not (error.name or "").startswith("glovev_ext."):
                raise
            raise TypeError(f"{fname} was written by glovev-ext 0.1: it names the module {error.name}, which "
                            f"glovev-ext {__version__} does not have; load it with glovev-ext 0.2 and save it again "
                            "(glovev_ext.save_model), or fit the model again") from None
        if not isinstance(loaded, cls):
            raise TypeError(f"{fname} holds a {type(loaded).__name__}, not a {cls.__name__}: load it with "
                            f"{type(loaded).__name__}.load() and attach covariances with "
                            f"{cls.__name__}.from_keyed_vectors()")
        return loaded

    def _load_specials(self, *args, **kwargs):
        super()._load_specials(*args, **kwargs)
        # Files written before an attribute existed load with its default.
        if not hasattr(self, "covariance_store"):
            self.covariance_store = None
        if not hasattr(self, "covariance_rows"):
            self.covariance_rows = np.full(len(self.vectors), _NO_COVARIANCE, np.int64)

    def _missing_covariance(self, row: int) -> str | None:
        """Why store row ``row`` (-1: none) gives no covariance, or None if it does."""
        if row < 0:
            return f"{NO_COVARIANCE}: its vector was added or replaced after the covariances were computed"
        reason = self.covariance_store.missing_reason(row)
        return None if reason is None else f"{NO_COVARIANCE}: {reason}"

    def _store_row(self, index: int) -> int:
        """Store row of vectors row ``index`` (-1 for none, or for rows gensim added behind our back)."""
        if self.covariance_store is None or index >= self.covariance_rows.size:
            return _NO_COVARIANCE
        return int(self.covariance_rows[index])

    def _align_rows(self) -> None:
        """Pad (new rows have no covariance) or cut covariance_rows to the length of vectors."""
        n_rows = len(self.vectors)
        if self.covariance_rows.size < n_rows:
            padding = np.full(n_rows - self.covariance_rows.size, _NO_COVARIANCE, np.int64)
            self.covariance_rows = np.concatenate([self.covariance_rows, padding])
        else:
            self.covariance_rows = self.covariance_rows[:n_rows].copy()
