"""Summing many partial results (sparse matrices) with each entry copied O(log n) times.

Used by the counter (partial co-occurrence matrices of corpus chunks, merged on worker threads)
and by the Stanford reader (chunks of ``cooccurrence.bin`` records).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any


class PartialSums:
    """Partial results merged like a binary counter.

    A new partial merges with the newest held one of the same level (two level-0 partials make a
    level-1 one, and so on), so at most ``log2(n)`` partials are held and each entry of the final
    sum is copied ``O(log n)`` times; the merge tree depends only on the order of the partials.

    Parameters
    ----------
    merge : callable, default=operator.add
        ``merge(earlier, later)``: the merged partial. It may return a placeholder (a future of
        the sum computed elsewhere) that :meth:`total` resolves.
    """

    def __init__(self, merge: Callable[[Any, Any], Any] = operator.add):
        self._merge = merge
        self._levels: list[tuple[int, Any]] = []

    def __len__(self) -> int:
        return len(self._levels)

    def add(self, partial: Any, level: int = 0) -> None:
        """Take one more partial, merging while the newest held one has the same level.

        ``level=k`` adds the sum of ``2**k`` partials merged as this counter would merge them: where
        the partials added so far number a multiple of ``2**k``, the sums are the same as adding
        those ``2**k`` one by one.
        """
        while self._levels and self._levels[-1][0] == level:
            partial = self._merge(self._levels.pop()[1], partial)
            level += 1
        self._levels.append((level, partial))

    def drain(self) -> list[Any]:
        """The held partials, oldest first, unmerged; the sums are emptied.

        For a caller that sums them in a streaming merge of its own, in the order :meth:`total` would.
        """
        partials = [partial for _, partial in self._levels]
        self._levels.clear()
        return partials

    def total(self, resolve: Callable[[Any], Any] = lambda partial: partial) -> Any:
        """The sum of the held partials, oldest first (None if there are none); the sums are emptied.

        Each partial is released as soon as it is added, so its memory is freed before the next.
        """
        result = None
        while self._levels:
            partial = resolve(self._levels.pop(0)[1])
            result = partial if result is None else result + partial
        return result
