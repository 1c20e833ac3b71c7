"""CovarianceStore: every word's GloVe-V covariance, kept as triangular factors, never as V x D x D."""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from threading import Lock

import numpy as np
from gensim.utils import SaveLoad
from scipy.linalg import blas, lapack, solve_triangular

from ._atomic import atomic_path
from ._covariance_kernel import (CHOLESKY, PSEUDO_INVERSE, TRANSFORMED, UNDEFINED, CovarianceArrays, WordFitter,
                                 lower_factor_of_root, packed_size, unpack_lower)

_MAGIC = b"GLOVEVCV"
_FEW_COLUMNS = 8
_FORMAT_VERSION = 1
_ALIGN = 64
_PER_WORD_ARRAYS = {"kind": np.int8, "rank": np.int32, "n_contexts": np.int64, "sigma2": np.float64,
                    "factor_row": np.int64}


def undefined_arrays(n_words: int) -> dict[str, np.ndarray]:
    """Per-word arrays of a store in which no word has a covariance yet."""
    return {"kind": np.full(n_words, UNDEFINED, np.int8), "rank": np.zeros(n_words, np.int32),
            "n_contexts": np.zeros(n_words, np.int64), "sigma2": np.full(n_words, np.nan),
            "factor_row": np.full(n_words, -1, np.int64)}


class UndefinedCovarianceError(ValueError):
    """A statistic asked for the covariance of a word that has none (|K_i| <= D)."""


class CovarianceStore(SaveLoad):
    """Per-word covariances ``Sigma_i`` of GloVe centre vectors, indexed like a ``(V, D, D)`` array.

    Each defined word keeps ``sigma2_i`` and a packed lower-triangular factor ``F_i``:
    ``Sigma_i = sigma2_i (F_i F_i^T)^{-1}`` with ``F_i`` the Cholesky factor of ``H_i``, or, for
    words on the pseudo-inverse branch, ``Sigma_i = sigma2_i F_i F_i^T``. Quadratic forms and draws
    use the factor directly; a dense ``Sigma_i`` is formed only when indexed. Words with
    ``|K_i| <= D`` have no covariance: indexing them raises :class:`UndefinedCovarianceError`.

    Build one with :class:`~glovev_ext.GloVeVEstimator` (``covariance_``), :meth:`load` or
    :meth:`lazy`; do not call the constructor directly.

    Attributes
    ----------
    shape : tuple of int
        ``(V, D, D)``.
    dtype : numpy.dtype
        float64, the dtype of returned covariances (the factors may be stored as float32).
    factor_dtype : numpy.dtype
        dtype of the stored factors.
    defined : ndarray of bool, shape (V,)
        Words that have a covariance.
    words : ndarray of str objects or None
        The word of each index, when known (used in error messages and for string keys).
    """

    def __init__(self, arrays: dict[str, np.ndarray], factors: np.ndarray, dim: int,
                 words: Sequence[str] | None = None, fitter: WordFitter | None = None,
                 center_vectors: np.ndarray | None = None, center_biases: np.ndarray | None = None,
                 cache_size: int = 0):
        for name in _PER_WORD_ARRAYS:
            setattr(self, "_" + name, arrays[name])
        self._factors = factors
        self._dim = dim
        # A list, not an object array: gensim's SaveLoad can memory-map only numeric arrays.
        self._words = None if words is None else [str(w) for w in words]
        self._index = None if words is None else {w: i for i, w in enumerate(self._words)}
        self._fitter = fitter
        self._center_vectors = center_vectors
        self._center_biases = center_biases
        self._cache: OrderedDict[int, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = Lock()

    @classmethod
    def from_arrays(cls, arrays: CovarianceArrays, words: Sequence[str] | None = None) -> CovarianceStore:
        """A store over the arrays computed by the covariance kernel."""
        per_word = {name: np.asarray(getattr(arrays, name)) for name in _PER_WORD_ARRAYS}
        return cls(per_word, arrays.factors, arrays.optimum.shape[1], words=words)

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
        n_contexts = fitter.n_contexts()
        defined = n_contexts > fitter.dim
        arrays = {"kind": np.where(defined, -1, UNDEFINED).astype(np.int8),
                  "rank": np.where(defined, -1, 0).astype(np.int32), "n_contexts": n_contexts,
                  "sigma2": np.asarray(sigma2, dtype=np.float64), "factor_row": np.full(n_contexts.size, -1)}
        return cls(arrays, np.empty((0, packed_size(fitter.dim))), fitter.dim, words=words, fitter=fitter,
                   center_vectors=center_vectors, center_biases=center_biases, cache_size=cache_size)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = Lock()

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
    def defined(self) -> np.ndarray:
        return self._kind != UNDEFINED

    def has_covariance(self, i: int) -> bool:
        """Whether word index ``i`` has a covariance (without :attr:`defined`'s V-sized array)."""
        return bool(self._kind[i] != UNDEFINED)

    @property
    def rank(self) -> np.ndarray:
        """Rank kept per word: D (full inverse), fewer (pseudo-inverse), 0 (undefined), -1 (lazy, not computed)."""
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

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return (f"CovarianceStore(n_words={self.shape[0]}, dim={self._dim}, defined={int(self.defined.sum())}, "
                f"factor_dtype={self.factor_dtype}, lazy={self._fitter is not None})")

    def __getitem__(self, key) -> np.ndarray:
        """Dense covariance of one word (D x D) or a stack (n x D x D) for a slice, list or array."""
        if isinstance(key, (str, int, np.integer)):
            return self._dense(self.index(key))
        stack = np.empty((0, self._dim, self._dim))
        indices = self._indices(key)
        return np.stack([self._dense(i) for i in indices]) if indices else stack

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        n_words, dim, _ = self.shape
        if n_words * dim * dim > 50_000_000:
            raise MemoryError(f"a dense ({n_words}, {dim}, {dim}) array of covariances would take "
                              f"{n_words * dim * dim * 8 / 1e9:.1f} GB; index the words you need instead")
        dense = np.full(self.shape, np.nan)
        for i in np.flatnonzero(self.defined):
            dense[i] = self._dense(int(i))
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

    def diagonal(self, key=None) -> np.ndarray:
        """Variances of the vector components, ``(n, D)`` (all words when ``key`` is None).

        Words without a covariance get NaN rows, never zeros.
        """
        indices = np.arange(self.shape[0]) if key is None else self._indices(key)
        out = np.full((len(indices), self._dim), np.nan)
        defined = self.defined
        for k, i in enumerate(indices):
            if defined[i]:
                out[k] = np.diag(self._dense(int(i)))
        return out

    def quad_form(self, key: int | str, g: np.ndarray) -> float:
        """``g^T Sigma_i g`` from the stored factor, without forming ``Sigma_i``."""
        i = self.index(key)
        kind, packed, sigma2 = self._factor(i)
        g = np.asarray(g, dtype=np.float64)
        if g.shape != (self._dim,):
            raise ValueError(f"g must have shape ({self._dim},), got {g.shape}")
        y = (blas.dtpsv(self._dim, packed, g, lower=1) if kind == CHOLESKY
             else blas.dtpmv(self._dim, packed, g, lower=1, trans=1))
        return float(sigma2 * (y @ y))

    def gram(self, key: int | str, gradients: np.ndarray) -> np.ndarray:
        """``G^T Sigma_i G`` for a ``(D, m)`` matrix of gradients: the m x m covariance contribution."""
        i = self.index(key)
        gradients = np.asarray(gradients, dtype=np.float64)
        if gradients.ndim != 2 or gradients.shape[0] != self._dim:
            raise ValueError(f"gradients must have shape ({self._dim}, m), got {gradients.shape}")
        y = self.whiten(i, gradients)
        return y.T @ y

    def whiten(self, key: int | str, gradients: np.ndarray) -> np.ndarray:
        """``S^T G`` for a square root ``S`` of ``Sigma_i`` (``Sigma_i = S S^T``), so ``G^T Sigma_i G = Y^T Y``."""
        kind, packed, sigma2 = self._factor(self.index(key))
        if gradients.shape[1] <= _FEW_COLUMNS:
            # Few columns: BLAS on the packed factor, column by column, without unpacking it.
            columns = [np.ascontiguousarray(g, dtype=np.float64) for g in gradients.T]
            y = [blas.dtpsv(self._dim, packed, g, lower=1) if kind == CHOLESKY
                 else blas.dtpmv(self._dim, packed, g, lower=1, trans=1) for g in columns]
            return np.sqrt(sigma2) * np.column_stack(y)
        lower = unpack_lower(packed, self._dim)
        if kind == CHOLESKY:
            return np.sqrt(sigma2) * solve_triangular(lower, gradients, lower=True, check_finite=False)
        return np.sqrt(sigma2) * (lower.T @ gradients)

    def sample(self, key: int | str, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` draws from ``N(0, Sigma_i)``, shape ``(n, D)``; add the centre vector for draws of it."""
        generator = np.random.default_rng(rng)
        return self.transform_normal(key, generator.standard_normal((n, self._dim)))

    def transform_normal(self, key: int | str, z: np.ndarray) -> np.ndarray:
        """Map standard normal rows ``z`` (n, D) to draws from ``N(0, Sigma_i)``."""
        kind, packed, sigma2 = self._factor(self.index(key))
        lower = unpack_lower(packed, self._dim)
        if kind == CHOLESKY:
            draws = solve_triangular(lower, np.asarray(z).T, lower=True, trans="T", check_finite=False)
        else:
            draws = lower @ np.asarray(z).T
        return np.sqrt(sigma2) * draws.T

    def square_root(self, key: int | str) -> np.ndarray:
        """A D x D matrix ``S`` with ``Sigma_i = S S^T``."""
        kind, packed, sigma2 = self._factor(self.index(key))
        lower = unpack_lower(packed, self._dim)
        if kind == CHOLESKY:
            lower = solve_triangular(lower, np.eye(self._dim), lower=True, trans="T", check_finite=False)
        return np.sqrt(sigma2) * lower

    def take(self, rows: np.ndarray, words: Sequence[str] | None = None) -> CovarianceStore:
        """An in-memory store of the given words (``-1``: a word without covariance), factors copied as stored.

        Parameters
        ----------
        rows : ndarray of int
            Words of this store, in the order wanted.
        words : sequence of str, optional
            Words of the new store (by default this store's words at ``rows``).
        """
        rows = np.asarray(rows, dtype=np.int64)
        known = rows >= 0
        arrays = undefined_arrays(rows.size)
        for name in ("n_contexts", "sigma2"):
            arrays[name][known] = getattr(self, "_" + name)[rows[known]]
        defined = np.flatnonzero(known)
        defined = defined[self.defined[rows[defined]]]
        factors = np.empty((defined.size, packed_size(self._dim)), dtype=self.factor_dtype)
        for k, position in enumerate(defined):
            kind, packed, _ = self._factor(int(rows[position]))
            factors[k] = packed
            arrays["kind"][position], arrays["rank"][position] = kind, self._rank[rows[position]]
            arrays["factor_row"][position] = k
        if words is None and self._words is not None:
            words = [self._words[r] if r >= 0 else f"<no covariance {i}>" for i, r in enumerate(rows)]
        return CovarianceStore(arrays, factors, self._dim, words=words)

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
            An in-memory store of kind ``TRANSFORMED`` factors, sigma2 and ranks carried over.
        """
        rows = np.asarray(rows, dtype=np.int64)
        defined = np.flatnonzero(rows >= 0)
        defined = defined[self.defined[rows[defined]]]
        factors = np.empty((defined.size, packed_size(self._dim)))
        arrays = undefined_arrays(rows.size)
        known = rows >= 0
        arrays["n_contexts"][known] = self.n_contexts[rows[known]]
        for k, position in enumerate(defined):
            row = int(rows[position])
            sigma2 = float(self.sigma2[row])
            image = linear_map(int(position)) @ self.square_root(row) / np.sqrt(sigma2)
            factors[k] = lower_factor_of_root(image)
            diagonal = np.abs(np.diag(unpack_lower(factors[k], self._dim)))
            arrays["kind"][position] = TRANSFORMED
            # Stored covariances have square roots of condition below about 700 (the square root of the
            # 4.5e5 threshold), so 1e-8 separates genuine directions from those the map annihilates.
            arrays["rank"][position] = int((diagonal > 1e-8 * diagonal.max()).sum())
            arrays["sigma2"][position], arrays["factor_row"][position] = sigma2, k
        return CovarianceStore(arrays, factors, self._dim)

    def save(self, path: str | os.PathLike) -> None:
        """Write the store to one file, atomically (a lazy store computes every word first).

        The file holds a JSON header and aligned arrays; :meth:`load` memory-maps it so a word's
        factor is read without reading the rest.
        """
        if self._fitter is not None:
            self._compute_all()
        with StoreFileWriter(path, self.shape[0], self._dim, self._factors.shape[0], self.factor_dtype,
                             self._words) as writer:
            for name in _PER_WORD_ARRAYS:
                writer.arrays[name][:] = getattr(self, "_" + name)
            writer.arrays["factors"][:] = self._factors

    @classmethod
    def load(cls, path: str | os.PathLike, mmap: bool = True) -> CovarianceStore:
        """Read a store written by :meth:`save`; with ``mmap`` the arrays stay on disk.

        Raises
        ------
        ValueError
            If the file is not a covariance store, or is truncated or inconsistent (the message
            names the file and what is wrong).
        """
        header, offsets = _read_header(Path(path))
        mode = "r" if mmap else None
        arrays = {}
        for name, (offset, dtype, shape) in offsets.items():
            if mmap and int(np.prod(shape)) > 0:
                arrays[name] = np.memmap(path, dtype=dtype, mode=mode, offset=offset, shape=tuple(shape))
            else:
                with open(path, "rb") as stream:
                    stream.seek(offset)
                    arrays[name] = np.fromfile(stream, dtype=dtype, count=int(np.prod(shape))).reshape(shape)
        factors = arrays.pop("factors")
        store = cls(arrays, factors, header["dim"], words=header["words"])
        store._check_consistency(path)
        return store

    def _check_consistency(self, path) -> None:
        kind, row = self._kind, self._factor_row
        defined = kind != UNDEFINED
        if not np.isin(kind, (UNDEFINED, CHOLESKY, PSEUDO_INVERSE, TRANSFORMED)).all():
            raise ValueError(f"{path}: unknown covariance kinds in the store")
        if (row[defined] < 0).any() or (row[defined] >= self._factors.shape[0]).any():
            raise ValueError(f"{path}: factor rows out of range for {self._factors.shape[0]} factors")

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

    def _factor(self, i: int) -> tuple[int, np.ndarray, float]:
        """(kind, packed float64 factor, sigma2) of word i, computing it first in a lazy store."""
        kind = int(self._kind[i])
        if kind == UNDEFINED:
            raise UndefinedCovarianceError(
                f"{self._describe(i)} has no covariance: it has {self.n_contexts[i]} contexts, and GloVe-V "
                f"needs more than D = {self._dim}")
        if self._fitter is None:
            packed = self._factors[self._factor_row[i]]
            return kind, np.asarray(packed, dtype=np.float64), float(self._sigma2[i])
        with self._lock:
            cached = self._cache.get(i)
            if cached is not None:
                self._cache.move_to_end(i)
                return int(self._kind[i]), cached, float(self._sigma2[i])
        fit = self._fitter.fit_word(i, float(self._center_biases[i]), self._center_vectors[i])
        with self._lock:
            self._kind[i], self._rank[i] = fit.kind, fit.rank
            self._cache[i] = fit.factor
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return fit.kind, fit.factor, float(self._sigma2[i])

    def _dense(self, i: int) -> np.ndarray:
        kind, packed, sigma2 = self._factor(i)
        lower = unpack_lower(packed, self._dim)
        if kind == CHOLESKY:
            inverse, info = lapack.dpotri(lower, lower=1)
            inverse = np.tril(inverse) + np.tril(inverse, -1).T
        else:
            inverse = lower @ lower.T
        return sigma2 * inverse

    def _compute_all(self) -> None:
        """Turn a lazy store into an in-memory one by computing every defined word."""
        defined = np.flatnonzero(self.defined)
        factors = np.empty((defined.size, packed_size(self._dim)))
        rows = np.full(self.shape[0], -1, np.int64)
        for k, i in enumerate(defined):
            kind, factors[k], _ = self._factor(int(i))
            rows[i] = k
        self._factor_row = rows
        self._factors = factors
        self._fitter = None
        self._cache.clear()


class StoreFileWriter:
    """Creates a covariance store file of known layout whose arrays are filled in place.

    The file is built under a temporary name beside ``path`` and renamed onto ``path`` only when
    the ``with`` block ends without error, so an interrupted save leaves any previous file intact.
    """

    def __init__(self, path: str | os.PathLike, n_words: int, dim: int, n_factors: int, factor_dtype,
                 words: Sequence[str] | None):
        self._path = path
        self._layout = (n_words, dim, n_factors, factor_dtype, words)
        self.arrays: dict[str, np.ndarray] = {}

    def __enter__(self) -> StoreFileWriter:
        self._atomic = atomic_path(self._path)
        temporary = self._atomic.__enter__()
        try:
            create_store_file(temporary, *self._layout)
            self.arrays = open_store_arrays(temporary)
        except BaseException as error:
            self._atomic.__exit__(type(error), error, error.__traceback__)
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        for array in self.arrays.values():
            if isinstance(array, np.memmap):
                array.flush()
        self.arrays.clear()
        return self._atomic.__exit__(exc_type, exc, tb)


def create_store_file(path: str | os.PathLike, n_words: int, dim: int, n_factors: int, factor_dtype,
                      words: Sequence[str] | None) -> None:
    """Write an empty store file of the given layout: the header, then zeroed, aligned arrays."""
    layout = [(name, np.dtype(dtype), (n_words,)) for name, dtype in _PER_WORD_ARRAYS.items()]
    layout.append(("factors", np.dtype(factor_dtype), (n_factors, packed_size(dim))))
    header = {"format": "glovev-ext covariance store", "version": _FORMAT_VERSION, "n_words": n_words, "dim": dim,
              "words": None if words is None else [str(w) for w in words]}
    region = 4096
    while True:
        # The header records the array offsets, which start after the header's own region.
        offsets = {}
        position = region
        for name, dtype, shape in layout:
            offsets[name] = [position, dtype.str, list(shape)]
            position = _aligned(position + dtype.itemsize * int(np.prod(shape)))
        header_bytes = json.dumps({**header, "arrays": offsets, "size": position}).encode("utf-8")
        if len(_MAGIC) + 8 + len(header_bytes) <= region:
            break
        region = _aligned(len(_MAGIC) + 8 + len(header_bytes) + 4096)
    header_bytes = header_bytes.ljust(region - len(_MAGIC) - 8)
    with open(path, "wb") as stream:
        stream.write(_MAGIC + len(header_bytes).to_bytes(8, "little") + header_bytes)
        stream.truncate(position)


def open_store_arrays(path: str | os.PathLike, mode: str = "r+") -> dict[str, np.ndarray]:
    """The arrays of a store file as memory maps (empty arrays stay in memory)."""
    _, offsets = _read_header(Path(path))
    arrays = {}
    for name, (offset, dtype, shape) in offsets.items():
        if int(np.prod(shape)) == 0:
            arrays[name] = np.empty(shape, dtype)
        else:
            arrays[name] = np.memmap(path, dtype=dtype, mode=mode, offset=offset, shape=shape)
    return arrays


def _aligned(position: int) -> int:
    return -(-position // _ALIGN) * _ALIGN


def _read_header(path: Path) -> tuple[dict, dict]:
    if not path.exists():
        raise FileNotFoundError(f"covariance store not found: {path}")
    size = path.stat().st_size
    with open(path, "rb") as stream:
        magic = stream.read(len(_MAGIC))
        if magic != _MAGIC:
            raise ValueError(f"{path} is not a glovev-ext covariance store (bad magic bytes {magic!r})")
        length_bytes = stream.read(8)
        if len(length_bytes) < 8:
            raise ValueError(f"{path} is truncated: the header length is missing")
        length = int.from_bytes(length_bytes, "little")
        raw = stream.read(length)
    if len(raw) < length:
        raise ValueError(f"{path} is truncated: header of {length} bytes, {len(raw)} present")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: unreadable header ({error})") from None
    if header.get("version", 0) > _FORMAT_VERSION:
        raise ValueError(f"{path} was written by a newer glovev-ext (format {header['version']})")
    if "size" in header and header["size"] != size:
        state = "truncated" if size < header["size"] else "longer than written"
        raise ValueError(f"{path} is {state}: {size} bytes, the header says {header['size']}")
    offsets = {name: (int(o), np.dtype(d), tuple(s)) for name, (o, d, s) in header["arrays"].items()}
    for name, (offset, dtype, shape) in offsets.items():
        end = offset + dtype.itemsize * int(np.prod(shape))
        if end > size:
            raise ValueError(f"{path} is truncated: array {name!r} ends at byte {end}, the file has {size}")
    return header, offsets
