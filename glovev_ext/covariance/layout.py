"""The per-word arrays of a covariance store, defined once: their names, dtypes and meaning.

Every store (in memory, memory-mapped, lazy, taken, mapped, read from a release) and the store
file format use :data:`PER_WORD_DTYPES` and :class:`PerWord`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields

import numpy as np

from .factor import EXACT, PENDING, PSEUDO_INVERSE, UNDEFINED, Factor

PER_WORD_DTYPES = {"kind": np.int8, "rank": np.int32, "n_contexts": np.int64, "sigma2": np.float64,
                   "factor_row": np.int64, "dof": np.float64, "condition": np.float64, "understated": np.int32,
                   "approximation": np.int8}
# Arrays a store written by glovev-ext 0.2 or earlier lacks, and how :meth:`PerWord.of` fills them in.
_ADDED_IN_0_3 = ("dof", "condition", "understated")
# Arrays added later, and the value a store without them gets for every word.
_ADDED_LATER = {"approximation": EXACT}


@dataclass
class PerWord:
    """One entry per word of a store.

    Attributes
    ----------
    kind : ndarray of int8
        How the word's covariance is kept (``glovev_ext.covariance.factor``): ``UNDEFINED`` for none,
        ``PENDING`` in a lazy store until computed.
    rank : ndarray of int32
        Rank of the covariance (0 without one, -1 pending).
    n_contexts : ndarray of int64
        ``|K_i|``.
    sigma2 : ndarray of float64
        Residual variance (NaN without a covariance).
    factor_row : ndarray of int64
        Row of the word's packed factor in the factor array (-1 for none).
    dof : ndarray of float64
        Degrees of freedom of ``sigma2`` (``|K_i| - D``; inf for a covariance taken as known).
    condition : ndarray of float64
        Estimated condition number of ``H_i`` (NaN where not computed or not known).
    understated : ndarray of int32
        Directions the paper's pseudo-inverse set to zero variance (0 for the others).
    approximation : ndarray of int8
        ``EXACT``, or how a covariance read from a release approximates the word's (``DIAGONAL``,
        ``LOW_RANK``; ``glovev_ext.covariance.factor``).
    """

    kind: np.ndarray
    rank: np.ndarray
    n_contexts: np.ndarray
    sigma2: np.ndarray
    factor_row: np.ndarray
    dof: np.ndarray
    condition: np.ndarray
    understated: np.ndarray
    approximation: np.ndarray

    @classmethod
    def undefined(cls, n_words: int) -> PerWord:
        """No word has a covariance yet."""
        return cls(kind=np.full(n_words, UNDEFINED, np.int8), rank=np.zeros(n_words, np.int32),
                   n_contexts=np.zeros(n_words, np.int64), sigma2=np.full(n_words, np.nan),
                   factor_row=np.full(n_words, -1, np.int64), dof=np.full(n_words, np.nan),
                   condition=np.full(n_words, np.nan), understated=np.zeros(n_words, np.int32),
                   approximation=np.full(n_words, EXACT, np.int8))

    @classmethod
    def pending(cls, n_contexts: np.ndarray, dim: int) -> PerWord:
        """Words with ``|K_i| > D`` get a factor row in order and are ``PENDING`` until their factor is computed."""
        per_word = cls.undefined(n_contexts.size)
        per_word.n_contexts[:] = n_contexts
        per_word.dof[:] = n_contexts - dim
        defined = n_contexts > dim
        per_word.kind[defined], per_word.rank[defined] = PENDING, -1
        per_word.factor_row[defined] = np.arange(int(defined.sum()))
        return per_word

    @classmethod
    def of(cls, arrays: Mapping[str, np.ndarray], dim: int) -> PerWord:
        """The arrays of a mapping (a store file's), used as they are.

        A store written before glovev-ext 0.3 has no ``dof``, ``condition`` or ``understated``: its
        words get ``|K_i| - D`` degrees of freedom (inf where it recorded no contexts), an unknown
        condition number, and ``D - rank`` understated directions on the pseudo-inverse branch.
        """
        arrays = dict(arrays)
        n_words = len(arrays["kind"])
        for name, value in _ADDED_LATER.items():
            if name not in arrays:
                arrays[name] = np.full(n_words, value, PER_WORD_DTYPES[name])
        if all(name in arrays for name in PER_WORD_DTYPES):
            return cls(**{name: arrays[name] for name in PER_WORD_DTYPES})
        return cls(**{name: arrays[name] for name in PER_WORD_DTYPES if name not in _ADDED_IN_0_3},
                   **older_store_fields(arrays["kind"], arrays["rank"], arrays["n_contexts"], dim))

    def __iter__(self) -> Iterator[tuple[str, np.ndarray]]:
        return ((field.name, getattr(self, field.name)) for field in fields(self))

    @property
    def n_factors(self) -> int:
        """Rows of the factor array the words point to."""
        return int((self.factor_row >= 0).sum())

    def record(self, position: int, factor: Factor, factor_row: int) -> None:
        """Word ``position`` has ``factor``, stored at row ``factor_row``."""
        self.kind[position], self.rank[position] = factor.kind, factor.rank
        self.sigma2[position], self.factor_row[position] = factor.sigma2, factor_row
        self.dof[position], self.understated[position] = factor.dof, factor.understated
        self.approximation[position] = factor.approximation

    def copy_into(self, target: PerWord) -> None:
        """Write these arrays into ``target``'s (e.g. the memory maps of a new store file)."""
        for name, values in self:
            getattr(target, name)[:] = values


def older_store_fields(kind: np.ndarray, rank: np.ndarray, n_contexts: np.ndarray, dim: int) -> dict[str, np.ndarray]:
    """``dof``, ``condition`` and ``understated`` for a store from before glovev-ext 0.3 (see :meth:`PerWord.of`)."""
    kind, rank, n_contexts = np.asarray(kind), np.asarray(rank), np.asarray(n_contexts)
    # a defined word without recorded contexts (a covariance read whole) is taken as known
    known = (kind != UNDEFINED) & (n_contexts <= dim)
    return {"dof": np.where(known, np.inf, n_contexts - dim).astype(np.float64),
            "condition": np.full(kind.size, np.nan),
            "understated": np.where(kind == PSEUDO_INVERSE, dim - rank, 0).astype(np.int32)}
