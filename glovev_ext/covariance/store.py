"""CovarianceStore: every word's GloVe-V covariance, kept as triangular factors, never as V x D x D."""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from concurrent.futures import ThreadPoolExecutor
from threading import Lock

import numpy as np
from gensim.utils import SaveLoad
from threadpoolctl import threadpool_limits

from .._checks import resolve_n_jobs
from .._memory import count_read, mapping_of, release_pages
from .factor import (EXACT, KIND_NAMES, PENDING, PSEUDO_INVERSE, UNDEFINED, Factor, check_approximation,
                     check_form, leading_count, packed_size, stored_size, variances)
from .layout import PER_WORD_DTYPES, PerWord, older_store_fields
from .store_file import ALONG, read_header, written_store_file
from .wls import WordFitter, singular_reason


_DIAGONAL_CHUNK_ENTRIES = 1 << 22
_SAVE_CHUNK_BYTES = 1 << 26


class UndefinedCovarianceError(ValueError):
    """A statistic asked for the covariance of a word that has none (``|K_i| <= D``, or a vector replaced)."""


class CovarianceStore(SaveLoad):
    """Per-word covariances ``Sigma_i`` of GloVe centre vectors, indexed like a ``(V, D, D)`` array.

    Each defined word keeps ``sigma2_i`` and a packed lower-triangular factor (see
    :class:`~glovev_ext.covariance.Factor`): ``Sigma_i = sigma2_i (F_i F_i^T)^{-1}`` with ``F_i`` the
    Cholesky factor of ``H_i``, or, for words on the pseudo-inverse branch, ``Sigma_i = sigma2_i
    F_i F_i^T``. Quadratic forms and draws use the factor directly; a dense ``Sigma_i`` is formed
    only when indexed. Words with ``|K_i| <= D`` have no covariance: indexing them raises
    :class:`UndefinedCovarianceError`.

    Build one with :class:`~glovev_ext.GloVeVEstimator` (``covariance_``), :meth:`load`,
    :meth:`lazy` or :class:`CovarianceStoreWriter`; do not call the constructor directly.

    Attributes
    ----------
    shape : tuple of int
        ``(V, D, D)``.
    dtype : numpy.dtype
        float64, the dtype of returned covariances (the factors may be stored as float32).
    factor_dtype : numpy.dtype
        dtype of the stored factors.
    factor_row_width : int
        Numbers each word's factor row holds.
    along : ndarray, shape (V, D), or None
        Each word's widening ``a_i``: its covariance is ``Sigma_i + a_i a_i^T`` (:meth:`Factor.widened
        <glovev_ext.covariance.Factor.widened>`), the variance that how strongly a word associates with
        all its contexts adds along its vector (docs/method.md 6.22); zero rows, or None, widen nothing.
    defined : ndarray of bool, shape (V,)
        Words that have a covariance.
    words : ndarray of str objects or None
        The word of each index, when known (used in error messages and for string keys).
    """

    def __init__(self, per_word: PerWord, factors: np.ndarray, dim: int, words: Sequence[str] | None = None,
                 fitter: WordFitter | None = None, center_vectors: np.ndarray | None = None,
                 center_biases: np.ndarray | None = None, cache_size: int = 0, along: np.ndarray | None = None):
        # Flat attributes, not one PerWord: gensim's SaveLoad memory-maps arrays that are attributes.
        for name, values in per_word:
            setattr(self, "_" + name, values)
        self._factors = factors
        self._along = along
        self._dim = dim
        # A list, not an object array: gensim's SaveLoad can memory-map only numeric arrays.
        self._words = None if words is None else [str(w) for w in words]
        self._index = None if words is None else {w: i for i, w in enumerate(self._words)}
        self._fitter = fitter
        self._center_vectors = center_vectors
        self._center_biases = center_biases
        self._cache: OrderedDict[int, Factor] = OrderedDict()
        self._cache_size = cache_size
        self._lock = Lock()
        self._rows_read: Callable[[np.ndarray], None] | None = None

    @classmethod
    def lazy(cls, fitter: WordFitter, center_vectors: np.ndarray, center_biases: np.ndarray,
             sigma2: np.ndarray, words: Sequence[str] | None = None, cache_size: int = 4096) -> CovarianceStore:
        """A store that computes a word's factor from its co-occurrence row when first asked.

        Nothing is stored for words never queried; the ``cache_size`` most recent factors are
        kept. ``rank`` is -1 for defined words not computed yet.

        Parameters
        ----------
        fitter : WordFitter
            The co-occurrence matrix and context parameters.
        center_vectors, center_biases : ndarray
            Trained centre parameters.
        sigma2 : ndarray, shape (V,)
            Residual variances (NaN for words without a covariance).
        words : sequence of str, optional
        cache_size : int, default=4096
        """
        per_word = PerWord.pending(fitter.n_contexts(), fitter.dim)
        per_word.sigma2[:] = sigma2
        return cls(per_word, np.empty((0, packed_size(fitter.dim))), fitter.dim, words=words, fitter=fitter,
                   center_vectors=center_vectors, center_biases=center_biases, cache_size=cache_size)

    @classmethod
    def on_demand(cls, source, per_word: PerWord, dim: int, words: Sequence[str] | None = None,
                  cache_size: int = 4096) -> CovarianceStore:
        """A store whose ``PENDING`` words get their factor from ``source.fit_word(i)`` when first asked.

        ``source.fit_word(i)`` returns an object with ``factor`` (a :class:`Factor`, or None for no
        covariance) and ``condition``; e.g. a release folder read one word at a time
        (``glovev_ext.adapters.load_glovev_release``). The ``cache_size`` most recent factors are kept.
        """
        return cls(per_word, np.empty((0, packed_size(dim))), dim, words=words, fitter=source, cache_size=cache_size)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_lock"]
        state.pop("_rows_read", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = Lock()
        self._rows_read = None
        if "_kind" in state:  # a plain pickle; gensim attaches large arrays later, in _load_specials
            self._fill_in_older_fields()
        self._cache = OrderedDict()  # computed factors are recomputed on demand, whatever version cached them

    def _load_specials(self, *args, **kwargs) -> None:
        """After gensim has attached the arrays saved beside the pickle: fill in what a 0.2 store lacks."""
        super()._load_specials(*args, **kwargs)
        self._fill_in_older_fields()

    def _fill_in_older_fields(self) -> None:
        if not hasattr(self, "_dof"):  # saved by glovev-ext 0.2 or earlier
            for name, values in older_store_fields(self._kind, self._rank, self._n_contexts, self._dim).items():
                setattr(self, "_" + name, values)
        if not hasattr(self, "_approximation"):  # saved before release covariances could be approximate
            self._approximation = np.full(len(self._kind), EXACT, PER_WORD_DTYPES["approximation"])

    @property
    def per_word(self) -> PerWord:
        """The per-word arrays (kind, rank, n_contexts, sigma2, factor_row, dof, condition, understated)."""
        return PerWord(*(getattr(self, "_" + name) for name in PER_WORD_DTYPES))

    @property
    def words(self) -> np.ndarray | None:
        return None if self._words is None else np.asarray(self._words, dtype=object)

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self._kind.size, self._dim, self._dim)

    @property
    def ndim(self) -> int:
        return 3

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(np.float64)

    @property
    def factor_dtype(self) -> np.dtype:
        return self._factors.dtype

    @property
    def factor_row_width(self) -> int:
        """Numbers each factor row holds: a packed triangle's ``D (D + 1) / 2``, or fewer in a compact store
        (:meth:`approximated`)."""
        return int(self._factors.shape[1])

    @property
    def defined(self) -> np.ndarray:
        return self._kind != UNDEFINED

    @property
    def along(self) -> np.ndarray | None:
        """Each word's widening along its vector, ``(V, D)`` (zero rows: none), or None for a store without any."""
        return getattr(self, "_along", None)  # a store pickled before widenings has none

    def has_covariance(self, i: int) -> bool:
        """Whether word index ``i`` has a covariance (without :attr:`defined`'s V-sized array)."""
        return bool(self._kind[i] != UNDEFINED)

    @property
    def rank(self) -> np.ndarray:
        """Rank kept per word: D (full inverse), fewer (pseudo-inverse, a release's low-rank covariance), 0
        (undefined), -1 (lazy, not computed); for a low rank plus diagonal approximation (:meth:`approximated`),
        the ``k`` eigenpairs of its low-rank part (the factor's columns; the diagonal makes it full rank)."""
        return self._rank

    @property
    def pseudo_inverse(self) -> np.ndarray:
        """Words whose covariance uses the pseudo-inverse branch (ill-conditioned ``H_i``)."""
        return self._kind == PSEUDO_INVERSE

    @property
    def sigma2(self) -> np.ndarray:
        """Residual variance per word (NaN where undefined)."""
        return self._sigma2

    @property
    def n_contexts(self) -> np.ndarray:
        """``|K_i|`` per word."""
        return self._n_contexts

    @property
    def dof(self) -> np.ndarray:
        """Degrees of freedom of each word's residual variance (``|K_i| - D``; inf when taken as known)."""
        return self._dof

    @property
    def condition(self) -> np.ndarray:
        """Estimated condition number of each word's ``H_i`` (NaN where not computed, or not known)."""
        return self._condition

    @property
    def approximation(self) -> np.ndarray:
        """How each word's covariance approximates it: ``EXACT``, ``DIAGONAL`` or ``LOW_RANK`` (a release's)."""
        return self._approximation

    def missing_reason(self, i: int) -> str | None:
        """Why word index ``i`` has no covariance (None if it has one); a lazy store computes the word first."""
        if self._kind[i] == PENDING:
            try:
                self._factor(i)
            except UndefinedCovarianceError:
                pass
        if self._kind[i] != UNDEFINED:
            return None
        if self._dof[i] > 0 and self._n_contexts[i] > self._dim:
            return singular_reason(float(self._condition[i]))
        return f"{self._n_contexts[i]} contexts, and GloVe-V needs more than D = {self._dim}"

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return (f"CovarianceStore(n_words={self.shape[0]}, dim={self._dim}, defined={int(self.defined.sum())}, "
                f"factor_dtype={self.factor_dtype}, lazy={self._fitter is not None})")

    def __getitem__(self, key) -> np.ndarray:
        """Dense covariance of one word (D x D) or a stack (n x D x D) for a slice, list or array."""
        if isinstance(key, (str, int, np.integer)):
            return self.factor(key).dense()
        indices = self._indices(key)
        if not indices:
            return np.empty((0, self._dim, self._dim))
        return np.stack([self._factor(i).dense() for i in indices])

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        n_words, dim, _ = self.shape
        if n_words * dim * dim > 50_000_000:
            raise MemoryError(f"a dense ({n_words}, {dim}, {dim}) array of covariances would take "
                              f"{n_words * dim * dim * 8 / 1e9:.1f} GB; index the words you need instead")
        dense = np.full(self.shape, np.nan)
        for i in np.flatnonzero(self.defined):
            dense[i] = self._factor(int(i)).dense()
        return dense if dtype is None else dense.astype(dtype)

    def index(self, key: int | str) -> int:
        """The row index of a word given as an index or (when words are known) a string."""
        if isinstance(key, str):
            if self._index is None:
                raise KeyError(f"word {key!r}: this store does not know its words; use an index")
            if key not in self._index:
                raise KeyError(f"word {key!r} is not in the vocabulary")
            return self._index[key]
        if isinstance(key, (bool, np.bool_)) or not isinstance(key, (int, np.integer)):
            raise TypeError(f"word indices must be integers or strings, got {type(key).__name__}")
        n_words = self.shape[0]
        if not -n_words <= key < n_words:
            raise IndexError(f"word index {key} is out of range for {n_words} words")
        return int(key) % n_words

    def factor(self, key: int | str) -> Factor:
        """The covariance of one word as a :class:`~glovev_ext.covariance.Factor` (computed first in a lazy store).

        Raises
        ------
        UndefinedCovarianceError
            If the word has no covariance.
        """
        return self._factor(self.index(key))

    def diagonal(self, key=None) -> np.ndarray:
        """Variances of the vector components, ``(n, D)`` (all words when ``key`` is None).

        Words without a covariance get NaN rows, never zeros.
        """
        indices = np.arange(self.shape[0]) if key is None else np.asarray(self._indices(key), dtype=np.int64)
        out = np.full((len(indices), self._dim), np.nan)
        if self._fitter is not None:  # a lazy store computes its words one by one anyway
            for k, i in enumerate(indices):
                if self.has_covariance(i):
                    try:
                        out[k] = self._factor(int(i)).variances()
                    except UndefinedCovarianceError:  # found numerically singular when computed
                        pass
            return out
        with_covariance = np.flatnonzero(self._kind[indices] != UNDEFINED)
        # in chunks, so the triangles unpacked at once stay near _DIAGONAL_CHUNK_ENTRIES floats
        chunk = max(1, _DIAGONAL_CHUNK_ENTRIES // self._dim ** 2)
        for start in range(0, with_covariance.size, chunk):
            positions = with_covariance[start:start + chunk]
            words = indices[positions]
            out[positions] = variances(self._kind[words], self._read_rows(self._factor_row[words]), self._dim,
                                       self._rank[words], self._sigma2[words])
            if self.along is not None:
                out[positions] += np.asarray(self.along[words], dtype=np.float64) ** 2
            release_pages(self._factors)  # a memory-mapped store: the chunk's pages go before the next is read
        return out

    def quad_form(self, key: int | str, g: np.ndarray) -> float:
        """``g^T Sigma_i g`` from the stored factor, without forming ``Sigma_i``."""
        factor = self.factor(key)
        g = np.asarray(g, dtype=np.float64)
        if g.shape != (self._dim,):
            raise ValueError(f"g must have shape ({self._dim},), got {g.shape}")
        return factor.quad_form(g)

    def gram(self, key: int | str, gradients: np.ndarray) -> np.ndarray:
        """``G^T Sigma_i G`` for a ``(D, m)`` matrix of gradients: the m x m covariance contribution."""
        gradients = np.asarray(gradients, dtype=np.float64)
        if gradients.ndim != 2 or gradients.shape[0] != self._dim:
            raise ValueError(f"gradients must have shape ({self._dim}, m), got {gradients.shape}")
        y = self.factor(key).whiten(gradients)
        return y.T @ y

    def whiten(self, key: int | str, gradients: np.ndarray) -> np.ndarray:
        """``S^T G`` for a square root ``S`` of ``Sigma_i`` (``Sigma_i = S S^T``), so ``G^T Sigma_i G = Y^T Y``."""
        return self.factor(key).whiten(gradients)

    def sample(self, key: int | str, n: int, random_state=None) -> np.ndarray:
        """``n`` draws from ``N(0, Sigma_i)``, shape ``(n, D)``; add the centre vector for draws of it.

        Parameters
        ----------
        key : int or str
        n : int
        random_state : None, int or numpy Generator
        """
        generator = np.random.default_rng(random_state)
        return self.transform_normal(key, generator.standard_normal((n, self._dim)))

    def transform_normal(self, key: int | str, z: np.ndarray) -> np.ndarray:
        """Map standard normal rows ``z`` (n, D) to draws from ``N(0, Sigma_i)``."""
        return self.factor(key).transform_normal(z)

    def square_root(self, key: int | str) -> np.ndarray:
        """A D x D matrix ``S`` with ``Sigma_i = S S^T``."""
        return self.factor(key).square_root()

    def take(self, rows: np.ndarray, words: Sequence[str] | None = None, factor_dtype=None) -> CovarianceStore:
        """An in-memory store of the given words (``-1``: a word without covariance), factors copied as stored.

        Parameters
        ----------
        rows : ndarray of int
            Words of this store, in the order wanted.
        words : sequence of str, optional
            Words of the new store (by default this store's words at ``rows``).
        factor_dtype : numpy dtype, optional
            dtype of the new store's factors (default: this store's; float32 halves it).
        """
        rows = np.asarray(rows, dtype=np.int64)
        if words is None and self._words is not None:
            words = [self._words[r] if r >= 0 else f"<no covariance {i}>" for i, r in enumerate(rows)]
        return self._rewritten(rows, lambda position, factor: factor,
                               self.factor_dtype if factor_dtype is None else np.dtype(factor_dtype), words,
                               row_width=self._factors.shape[1])

    def approximated(self, keep: int | float, form: str = "variances", *, factor_dtype=None,
                     path: str | os.PathLike | None = None, n_jobs: int | None = None) -> CovarianceStore:
        """A compact store: each word's covariance as its leading eigenpairs plus a diagonal.

        Each word's factor becomes :meth:`Factor.approximated` ``(keep, form)``: its ``k`` leading
        eigenpairs and a diagonal (the variances they leave out, so every variance is exact; or,
        ``form="bound"``, an upper bound, so no standard error is understated), ``D (k + 1)``
        numbers instead of the triangle's ``D (D + 1) / 2``; a word whose ``k`` would save nothing
        keeps its exact factor. Factor rows are as wide as the largest factor kept. Results that use
        an approximated covariance say so (their caveats), and ``approximation`` is
        ``LOW_RANK_PLUS_DIAGONAL`` or ``LOW_RANK_BOUND`` for those words.

        Parameters
        ----------
        keep : int or float
            Eigenpairs per word (an int), or the share of each word's variance (its covariance's
            trace) they must hold (a float in (0, 1], the smallest ``k`` that does).
        form : {"variances", "bound"}, default="variances"
            What the diagonal holds (:meth:`Factor.approximated`).
        factor_dtype : numpy dtype, optional
            dtype of the new store's factors (default: this store's).
        path : path, optional
            Write the new store to this file (atomically; memory-mapped afterwards) instead of
            keeping it in memory.
        n_jobs : int or None, default=None
            Threads (None or 1: one; -1: all cores); each word's eigendecomposition runs with one
            BLAS thread.

        Returns
        -------
        CovarianceStore
            Words in the same order, ``n_contexts``, ``sigma2``, ``dof`` and ``condition`` carried over.
        """
        check_approximation(keep, self._dim)
        check_form(form)
        if self._fitter is not None:
            raise ValueError("a lazy store computes covariances when asked: approximate an in-memory or file store")
        words = np.flatnonzero(self.defined)
        threads = resolve_n_jobs(n_jobs)
        dim = self._dim
        # A share gives each word its own k: a first pass of eigenvalues finds it (and so the row width), and the
        # second writes each factor as it is made, so no more than a chunk of factors is ever held.
        if isinstance(keep, (int, np.integer)):
            ranks = np.full(words.size, keep, np.int64)
        else:
            counted = _per_chunk(words, threads, lambda chunk: [
                leading_count(self._factor(int(i)).eigenvalues(), keep, dim) for i in chunk])
            ranks = np.array([k for part in counted for k in part], np.int64)
        own = np.array([stored_size(int(kind), dim, int(rank)) for kind, rank in
                        zip(self._kind[words], self._rank[words])], np.int64)
        width = int(np.minimum(dim * (ranks + 1), own).max()) if words.size else packed_size(dim)
        dtype = self.factor_dtype if factor_dtype is None else np.dtype(factor_dtype)
        k_of = dict(zip(words.tolist(), ranks.tolist()))
        # a word kept exact keeps its widening apart; an approximated one holds it in its approximation
        with CovarianceStoreWriter(self.shape[0], dim, words.size, factor_dtype=dtype, words=self._words,
                                   path=path, row_width=width, along=self.along is not None) as writer:
            writer.per_word.n_contexts[:] = self._n_contexts
            writer.per_word.condition[:] = self._condition
            for chunk, factors in zip(_chunks(words), _per_chunk(words, threads, lambda chunk: [
                    self._factor(int(i)).approximated(k_of[int(i)], form) for i in chunk])):
                for position, factor in zip(chunk, factors):
                    writer.add(int(position), factor)
        return writer.store

    def mapped(self, rows: np.ndarray, linear_map: Callable[[int], np.ndarray]) -> CovarianceStore:
        """A store whose word k has covariance ``M_k Sigma_{rows[k]} M_k^T`` (no covariance if -1).

        Parameters
        ----------
        rows : ndarray of int, shape (n,)
            Words of this store, or -1.
        linear_map : callable
            ``linear_map(k)`` is the D x D map ``M_k`` applied to word k's vector (asked for only
            for words with a covariance, one at a time, so n x D x D never exists).

        Returns
        -------
        CovarianceStore
            An in-memory store of kind ``TRANSFORMED`` factors, sigma2 carried over.
        """
        return self._rewritten(np.asarray(rows, dtype=np.int64),
                               lambda position, factor: factor.mapped(linear_map(position)), np.float64, None)

    def _rewritten(self, rows: np.ndarray, rewrite: Callable[[int, Factor], Factor], factor_dtype,
                   words: Sequence[str] | None, row_width: int | None = None) -> CovarianceStore:
        """A store whose word k holds ``rewrite(k, factor of rows[k])`` (none where rows[k] is -1 or undefined)."""
        known = rows >= 0
        positions = np.flatnonzero(known)
        positions = positions[self.defined[rows[positions]]]
        with CovarianceStoreWriter(rows.size, self._dim, positions.size, factor_dtype=factor_dtype,
                                   words=words, row_width=row_width, along=self.along is not None) as writer:
            writer.per_word.n_contexts[known] = self._n_contexts[rows[known]]
            for position in positions:
                writer.add(int(position), rewrite(int(position), self._factor(int(rows[position]))))
        return writer.store

    def _save_specials(self, fname, separately, sep_limit, ignore, pickle_protocol, compress, subname):
        """gensim's saving of the large arrays, but memory-mapped factors are written a chunk at a time: numpy's
        ``np.save`` reads the whole mapping into the resident set at once. The file is the one ``np.save``
        writes, and gensim loads it as it loads its own."""
        factors = self.__dict__.get("_factors")
        if self._rows_read is not None and factors is not None:
            self._rows_read(np.arange(len(factors)))  # checked before they are copied
        if compress or mapping_of(factors) is None or factors.size < sep_limit or "_factors" in ignore:
            return super()._save_specials(fname, separately, sep_limit, ignore, pickle_protocol, compress, subname)
        _save_in_chunks(subname(fname, "_factors"), factors)
        del self._factors
        try:
            restores = super()._save_specials(fname, separately, sep_limit, ignore, pickle_protocol, compress,
                                              subname)
        except BaseException:
            self._factors = factors
            raise
        self.__dict__["__numpys"] = [*self.__dict__["__numpys"], "_factors"]
        return [*restores, (self, {"_factors": factors})]

    def release_pages(self) -> None:
        """Drop the pages of memory-mapped factors from this process's resident set (they stay in the page cache; a
        store in memory is left as it is). A loaded model maps its store; reading words' factors or covariances lets
        go of the pages every 16 words, and the variances after each chunk, so this is for the last few words'
        pages, or pages read otherwise."""
        release_pages(self._factors)

    def save(self, path: str | os.PathLike) -> None:
        """Write the store to one file, atomically (a lazy store computes every word first).

        The file holds a JSON header and aligned arrays; :meth:`load` memory-maps it so a word's
        factor is read without reading the rest.
        """
        if self._fitter is not None:
            self._compute_all()
        with written_store_file(path, self.shape[0], self._dim, self._factors.shape[0], self.factor_dtype,
                                self._words, self._factors.shape[1], self.along is not None) as (per_word, factors,
                                                                                                along):
            self.per_word.copy_into(per_word)
            if along is not None:
                along[:] = self.along
            # a chunk of rows at a time, letting go of the pages of both mappings: a whole-array copy would bring
            # the entire store into the resident set at once
            rows = max(1, _SAVE_CHUNK_BYTES // max(1, self._factors.itemsize * self._factors.shape[1]))
            for start in range(0, self._factors.shape[0], rows):
                factors[start:start + rows] = self._read_rows(np.arange(start, min(start + rows,
                                                                                   self._factors.shape[0])))
                release_pages(self._factors, factors)

    @classmethod
    def load(cls, path, mmap: bool = True) -> CovarianceStore:
        """Read a store written by :meth:`save`; with ``mmap`` the arrays stay on disk.

        Parameters
        ----------
        path : str, path-like or binary file
            The store's file, or that file open for reading (a model folder reads it through the
            folder's handle).
        mmap : bool, default=True
            Memory-map the arrays instead of reading them.

        Returns
        -------
        CovarianceStore

        Raises
        ------
        ValueError
            If the file is not a covariance store, or is truncated or inconsistent (the message
            names the file and what is wrong).
        """
        header, offsets = read_header(path)
        name = getattr(path, "name", path) if hasattr(path, "read") else path
        arrays = {}
        with (nullcontext(path) if hasattr(path, "read") else open(path, "rb")) as stream:
            for array_name, (offset, dtype, shape) in offsets.items():
                if mmap and int(np.prod(shape)) > 0:
                    arrays[array_name] = np.memmap(stream, dtype=dtype, mode="r", offset=offset, shape=tuple(shape))
                else:
                    stream.seek(offset)
                    arrays[array_name] = np.fromfile(stream, dtype=dtype, count=int(np.prod(shape))).reshape(shape)
        if "kind" not in arrays or "factors" not in arrays or arrays["factors"].ndim != 2:
            raise ValueError(f"{name}: the store's arrays 'kind' and 'factors' are missing")
        for array, dtype in PER_WORD_DTYPES.items():
            if array in arrays and (arrays[array].shape != (len(arrays["kind"]),) or arrays[array].dtype != dtype):
                raise ValueError(f"{name}: the store's array {array!r} is not one {np.dtype(dtype)} per word "
                                 f"({arrays[array].dtype}, shape {arrays[array].shape})")
        along = arrays.get(ALONG)
        if along is not None and (along.shape != (len(arrays["kind"]), header["dim"]) or along.dtype != np.float64
                                  or not np.isfinite(along).all()):
            raise ValueError(f"{name}: the store's widenings are not {header['dim']} finite float64 numbers per word "
                             f"({along.dtype}, shape {along.shape})")
        store = cls(PerWord.of(arrays, header["dim"]), arrays["factors"], header["dim"], words=header["words"],
                    along=along)
        store._check_consistency(name)
        return store

    def _check_consistency(self, path) -> None:
        kind, row = self._kind, self._factor_row
        defined = kind != UNDEFINED
        known = [k for k in KIND_NAMES if k != PENDING]
        if not np.isin(kind, known).all():
            raise ValueError(f"{path}: unknown covariance kinds in the store")
        if (row[defined] < 0).any() or (row[defined] >= self._factors.shape[0]).any():
            raise ValueError(f"{path}: factor rows out of range for {self._factors.shape[0]} factors")
        for k in np.unique(kind[defined]):
            largest = int(self._rank[defined & (kind == k)].max())
            if stored_size(int(k), self._dim, largest) > self._factors.shape[1]:
                raise ValueError(f"{path}: factor rows of {self._factors.shape[1]} numbers cannot hold its "
                                 f"{KIND_NAMES[int(k)]} factors of rank {largest}")

    def _indices(self, key) -> list[int]:
        if isinstance(key, slice):
            return list(range(*key.indices(self.shape[0])))
        keys = np.asarray(key)
        if keys.dtype == bool:
            if keys.shape != (self.shape[0],):
                raise IndexError(f"a boolean mask must have shape ({self.shape[0]},), got {keys.shape}")
            return np.flatnonzero(keys).tolist()
        return [self.index(k.item() if isinstance(k, np.generic) else k) for k in np.atleast_1d(keys)]

    def _describe(self, i: int) -> str:
        return f"word {self._words[i]!r} (index {i})" if self._words is not None else f"word index {i}"

    def check_reads(self, rows_read: Callable[[np.ndarray], None] | None) -> None:
        """Call ``rows_read(factor_rows)`` before any factor row is read (a model folder checks their bytes then).

        Parameters
        ----------
        rows_read : callable or None
            Takes an array of rows of the factor array about to be read; raises to refuse them. None:
            no check.
        """
        self._rows_read = rows_read

    def _read_rows(self, rows: np.ndarray) -> np.ndarray:
        """Rows of the factor array (fancy-indexed), after the check of :meth:`check_reads`."""
        if self._rows_read is not None:
            self._rows_read(rows)
        return self._factors[rows]

    def _factor(self, i: int) -> Factor:
        """Word i's factor, computing it first in a lazy store."""
        kind = int(self._kind[i])
        if kind == UNDEFINED:
            raise UndefinedCovarianceError(f"{self._describe(i)} has no covariance: it has {self.missing_reason(i)}")
        if self._fitter is None:
            row = self._read_rows(self._factor_row[i:i + 1])[0]
            mapping = mapping_of(self._factors)
            if mapping is not None:  # a copy of its own, so the pages read can go
                row = np.array(row, dtype=np.float64)
                count_read(mapping)
            factor = Factor.of_stored(kind, row, self._dim, int(self._rank[i]), float(self._sigma2[i]),
                                      float(self._dof[i]), int(self._understated[i]), int(self._approximation[i]))
            return factor if self.along is None else factor.widened(self.along[i])
        with self._lock:
            cached = self._cache.get(i)
            if cached is not None:
                self._cache.move_to_end(i)
                return cached
        fit = self._compute_word(i)
        with self._lock:
            self._condition[i] = fit.condition
            if fit.factor is None:
                self._kind[i], self._rank[i] = UNDEFINED, 0
        if fit.factor is None:
            return self._factor(i)
        # The store's sigma2 (vectorised over all words) is the one the estimator reports.
        factor = fit.factor.with_sigma2(self._sigma2[i])
        with self._lock:
            self._kind[i], self._rank[i], self._understated[i] = factor.kind, factor.rank, factor.understated
            self._approximation[i] = factor.approximation
            self._cache[i] = factor
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return factor

    def _compute_word(self, i: int):
        """A lazy store's word ``i`` from its source: a refit of its row, or a read (a release's, on demand)."""
        if self._center_vectors is None:
            return self._fitter.fit_word(i)
        return self._fitter.fit_word(i, float(self._center_biases[i]), self._center_vectors[i])

    def _compute_all(self) -> None:
        """Turn a lazy store into an in-memory one by computing every defined word."""
        factors = np.empty((int((self._factor_row >= 0).sum()), packed_size(self._dim)))
        for i in np.flatnonzero(self.defined):
            try:
                _put(factors[self._factor_row[i]], self._factor(int(i)).packed)
            except UndefinedCovarianceError:  # numerically singular: its row stays unused
                factors[self._factor_row[i]] = 0.0
        self._factors = factors
        self._fitter = None
        self._cache.clear()


# A file store's writer lets go of the pages it has written every this many bytes of factors (a D = 300 store in
# float32: every 185 factors).
_RELEASE_EVERY_BYTES = 32 << 20


class CovarianceStoreWriter:
    """Fills a new covariance store word by word: in memory, or straight into a file written atomically.

    Use it as a context manager; the store is :attr:`store` once the block has ended without error
    (a file store is memory-mapped from ``path``; an interrupted write leaves any previous file).

    Parameters
    ----------
    n_words, dim : int
        V and D.
    n_factors : int
        Words that will get a factor (at most).
    factor_dtype : numpy dtype, default=float64
        dtype of the stored factors.
    words : sequence of str, optional
        The words of the store.
    path : path, optional
        Write the store to this file instead of keeping it in memory.
    row_width : int, optional
        Numbers per factor row (default a packed triangle's, ``D (D + 1) / 2``); a store of
        compact factors needs only its largest.
    along : bool, default=False
        Keep each word's widening (:attr:`CovarianceStore.along`): :meth:`add` takes widened factors.

    Attributes
    ----------
    per_word : PerWord
        The store's per-word arrays, all words without covariance at first; fill ``n_contexts``
        directly, the rest through :meth:`add`.
    factors : ndarray, shape (n_factors, row_width)
    store : CovarianceStore
    """

    def __init__(self, n_words: int, dim: int, n_factors: int, *, factor_dtype=np.float64,
                 words: Sequence[str] | None = None, path: str | os.PathLike | None = None,
                 row_width: int | None = None, along: bool = False):
        self._layout = (n_words, dim, n_factors, np.dtype(factor_dtype), words)
        self._with_along = along
        self._row_width = packed_size(dim) if row_width is None else int(row_width)
        self._path = path
        self._file = None
        self._next_row = 0
        self._release_every = max(1, _RELEASE_EVERY_BYTES // (self._row_width * np.dtype(factor_dtype).itemsize))
        self.store: CovarianceStore | None = None

    def __enter__(self) -> CovarianceStoreWriter:
        n_words, dim, n_factors, factor_dtype, words = self._layout
        if self._path is None:
            self.per_word = PerWord.undefined(n_words)
            self.factors = np.empty((n_factors, self._row_width), dtype=factor_dtype)
            self.along = np.zeros((n_words, dim)) if self._with_along else None
        else:
            self._file = written_store_file(self._path, n_words, dim, n_factors, factor_dtype, words, self._row_width,
                                            self._with_along)
            self.per_word, self.factors, self.along = self._file.__enter__()
            PerWord.undefined(n_words).copy_into(self.per_word)
        return self

    def add(self, position: int, factor: Factor, along: np.ndarray | None = None) -> None:
        """Word ``position`` gets ``factor`` (stored in the next factor row) widened by ``along``
        (:meth:`Factor.widened <glovev_ext.covariance.Factor.widened>`; None: not); a widened factor is stored as its
        factor before and its widening.

        Parameters
        ----------
        position : int
            The word.
        factor : Factor
            Its covariance.
        along : ndarray, shape (D,), optional
            Its widening, for a factor not widened already.
        """
        if factor.unwidened is not None:
            factor, along = factor.unwidened, factor.along
        if along is not None:
            if self.along is None:
                raise ValueError("a widened factor for a store laid out without widenings (along=False)")
            self.along[position] = along
        if self._next_row == self.factors.shape[0]:
            raise ValueError(f"the store was laid out for {self.factors.shape[0]} factors")
        if factor.dim != self._layout[1]:
            raise ValueError(f"a {factor.dim}-dimensional factor for a store of D = {self._layout[1]}")
        if factor.packed.size > self._row_width:
            raise ValueError(f"a factor of {factor.packed.size} numbers for rows of {self._row_width}")
        _put(self.factors[self._next_row], factor.packed)
        self.per_word.record(position, factor, self._next_row)
        self._next_row += 1
        if self._path is not None and self._next_row % self._release_every == 0:
            release_pages(self.factors)  # the rows written stay in the file (the page cache writes them back)

    def __exit__(self, exc_type, exc, traceback) -> bool:
        if self._file is not None:
            self._file.__exit__(exc_type, exc, traceback)
        if exc_type is None:
            dim, words = self._layout[1], self._layout[4]
            self.store = (CovarianceStore(self.per_word, self.factors, dim, words=words, along=self.along)
                          if self._path is None else CovarianceStore.load(self._path))
        return False


_APPROXIMATION_CHUNK = 256  # words per task of CovarianceStore.approximated's passes


def _chunks(words: np.ndarray) -> list[np.ndarray]:
    return np.array_split(words, max(1, -(-words.size // _APPROXIMATION_CHUNK)))


def _per_chunk(words: np.ndarray, threads: int, work: Callable) -> Iterator:
    """``work(chunk)`` for each chunk of ``words``, in order, on ``threads`` threads of one BLAS thread each."""
    def run(chunk: np.ndarray):
        with threadpool_limits(limits=1, user_api="blas"):
            return work(chunk)

    if threads == 1:
        yield from map(run, _chunks(words))
        return
    with ThreadPoolExecutor(threads) as pool:
        yield from pool.map(run, _chunks(words))


def _put(row: np.ndarray, packed: np.ndarray) -> None:
    """A factor into a store row: a triangle fills it, a compact factor its start (the rest zero)."""
    row[:packed.size] = packed
    row[packed.size:] = 0.0


def _save_in_chunks(path: str, array: np.ndarray, chunk_bytes: int = 1 << 26) -> None:
    """``np.save(path, array)``, byte for byte, writing a C-contiguous memory-mapped ``array`` a chunk of rows at a
    time and letting go of each chunk's pages."""
    rows = max(1, chunk_bytes // max(1, array[:1].nbytes))
    with open(path, "wb") as handle:
        np.lib.format.write_array_header_1_0(handle, np.lib.format.header_data_from_array_1_0(array))
        for start in range(0, array.shape[0], rows):
            handle.write(np.ascontiguousarray(array[start:start + rows]).tobytes())
            release_pages(array)
