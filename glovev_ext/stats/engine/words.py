"""Which words a statistic may use, and the one policy for those it may not.

A word is usable when it is in the vocabulary and has a covariance. Every statistic that takes
words takes ``missing`` with the same choices and default (:data:`MISSING_CHOICES`,
:data:`DEFAULT_MISSING`): ``"raise"`` refuses any unusable word with an error that names it and its
reason; ``"drop"`` leaves it out, and the result names it (a statistic that cannot lose the word,
such as the cosine of one pair, still raises). Resolved words (:class:`ResolvedWords`: vectors and
covariance factors) are what the engines work on; they never see the container.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ...covariance import Factor, GaussianPrior, UndefinedCovarianceError

# The reasons a word is unusable (EmbeddingWithCovariance.unusable_reason) begin with one of these;
# summaries count dropped words by them.
NOT_IN_VOCABULARY = "not in the vocabulary"
NO_COVARIANCE = "no covariance"

MISSING_CHOICES = ("raise", "drop")
DEFAULT_MISSING = "raise"


class EmbeddingWithCovariance(Protocol):
    """What the statistics need of an embedding: ``KeyedVectorsWithVariance`` provides it.

    An embedding whose covariances are posteriors under a prior says so by a ``prior`` attribute
    (:class:`~glovev_ext.covariance.GaussianPrior`), which comparisons across fits use.
    """

    def get_vector(self, key) -> np.ndarray: ...

    def unusable_reason(self, key) -> str | None: ...

    def covariance_factor(self, key) -> Factor: ...


@dataclass(frozen=True)
class ResolvedWords:
    """Usable words with their trained vectors and covariance factors, in order.

    They are an :class:`EmbeddingWithCovariance` themselves, so statistics of two embeddings (such as
    :func:`~glovev_ext.stats.self_similarity`) take them, e.g. two refits of :class:`~glovev_ext.stats.RowSimulator`.

    Attributes
    ----------
    keys : tuple
    vectors : ndarray of float64, shape (k, D)
    factors : tuple of Factor
    prior : GaussianPrior or None
        The prior the covariances are posteriors under (the embedding's ``prior``), if any.
    """

    keys: tuple
    vectors: np.ndarray
    factors: tuple
    prior: GaussianPrior | None = None

    def get_vector(self, key) -> np.ndarray:
        """The vector of ``key``: resolved words are an embedding too (a simulated refit, for example)."""
        return self.vectors[self._position(key)]

    def unusable_reason(self, key) -> str | None:
        """None for a resolved word (all are usable), else why not."""
        return None if key in self.keys else NOT_IN_VOCABULARY

    def covariance_factor(self, key) -> Factor:
        """The covariance factor of ``key``."""
        return self.factors[self._position(key)]

    def _position(self, key) -> int:
        if key not in self.keys:
            raise KeyError(f"{key!r} is not among the resolved words")
        return self.keys.index(key)

    def check_keys(self, keys: Sequence) -> None:
        """Refuse to stand for a statistic whose keys are not these words, in this order."""
        if tuple(self.keys) != tuple(keys):
            raise ValueError("the resolved words are not the statistic's keys")

    def take(self, order: Sequence[int]) -> ResolvedWords:
        """The words at positions ``order``, in that order."""
        order = list(order)
        return ResolvedWords(tuple(self.keys[i] for i in order), self.vectors[order],
                             tuple(self.factors[i] for i in order), self.prior)


def check_missing(missing: str) -> str:
    """Validate a ``missing`` policy."""
    if missing not in MISSING_CHOICES:
        raise ValueError(f"missing must be one of {MISSING_CHOICES}, got {missing!r}")
    return missing


def resolve(kv: EmbeddingWithCovariance, keys: Sequence) -> ResolvedWords:
    """The vectors and factors of words that must all be usable, such as a built statistic's keys.

    Raises
    ------
    UndefinedCovarianceError
        Naming every unusable word and its reason.
    """
    _, lost = usable(kv, keys, "drop")
    if lost:
        raise UndefinedCovarianceError(f"{_count(len(lost), 'word')} of the statistic cannot be used: {_listed(lost)}; "
                                       "build it from words in the vocabulary that have a covariance")
    return ResolvedWords(tuple(keys), vectors_of(kv, keys), tuple(kv.covariance_factor(key) for key in keys),
                         getattr(kv, "prior", None))


def vectors_of(kv: EmbeddingWithCovariance, keys: Sequence) -> np.ndarray:
    """The trained vectors of ``keys`` as a float64 ``(k, D)`` array."""
    return np.asarray(np.vstack([kv.get_vector(key) for key in keys]), dtype=np.float64)


def usable(kv: EmbeddingWithCovariance, words: Sequence, missing: str = DEFAULT_MISSING) -> tuple[list, list]:
    """Split words into the usable ones and the others, by the ``missing`` policy.

    Parameters
    ----------
    kv : EmbeddingWithCovariance
    words : sequence
        Words in their roles (repeats are kept).
    missing : {"raise", "drop"}

    Returns
    -------
    kept : list
    dropped : list of str
        ``"word (reason)"`` for each unusable word.

    Raises
    ------
    UndefinedCovarianceError
        With ``missing="raise"``, if any word is unusable.
    """
    check_missing(missing)
    kept, dropped = [], []
    for word in words:
        reason = kv.unusable_reason(word)
        if reason is None:
            kept.append(word)
        else:
            dropped.append(f"{word} ({reason})")
    _refuse(dropped, missing, "word")
    return kept, dropped


def usable_lists(kv: EmbeddingWithCovariance, lists: Sequence[Sequence], missing: str) -> tuple[list, list]:
    """:func:`usable` on each word list; a list left empty raises, naming what it lost."""
    check_missing(missing)
    split = [usable(kv, words, "drop") for words in lists]
    dropped = [d for _, lost in split for d in lost]
    _refuse(dropped, missing, "word")
    for words, (kept, lost) in zip(lists, split):
        if not kept:
            raise UndefinedCovarianceError(f"no usable word left in {list(words)[:10]}: {_listed(lost)}")
    return [kept for kept, _ in split], dropped


def usable_groups(kv: EmbeddingWithCovariance, groups: Sequence, missing: str,
                  words: Callable[[Any], Sequence] = tuple, noun: str = "pair") -> tuple[list, list]:
    """Groups of words (pairs, analogy questions) whose words are all usable, by the ``missing`` policy.

    ``words(item)`` gives the words of an item (the item itself by default; e.g. the first two
    fields of a ``(word1, word2, score)`` row); ``noun`` names an item in the error. Dropped items
    are named with the reasons of their unusable words.
    """
    check_missing(missing)
    kept, dropped = [], []
    for item in groups:
        group = words(item)
        lost = usable(kv, group, "drop")[1]
        if lost:
            dropped.append(f"{'-'.join(map(str, group))} [{', '.join(lost)}]")
        else:
            kept.append(item)
    _refuse(dropped, missing, noun)
    return kept, dropped


def _refuse(dropped: list[str], missing: str, noun: str) -> None:
    """The error of the ``"raise"`` policy, naming every unusable word (or pair) and its reason."""
    if dropped and missing == "raise":
        raise UndefinedCovarianceError(f"{_count(len(dropped), noun)} cannot be used: {_listed(dropped)}; pass "
                                       "missing='drop' (--missing drop on the command line) to leave them out")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _listed(items: Sequence[str], limit: int = 10) -> str:
    return ", ".join(items[:limit]) + (" ..." if len(items) > limit else "")
