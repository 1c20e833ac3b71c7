"""PartialSums: the merge tree shared by the counter and the Stanford reader."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from glovev_ext.counting.partial_sums import PartialSums


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 100])
def test_total_is_the_sum_and_few_partials_are_held(rng, n):
    matrices = [sp.random(20, 20, density=0.2, random_state=k, format="csr") for k in range(n)]
    sums = PartialSums()
    for matrix in matrices:
        sums.add(matrix)
        assert len(sums) <= math.floor(math.log2(n)) + 1
    np.testing.assert_allclose(sums.total().toarray(), sum(m.toarray() for m in matrices), rtol=1e-14)
    assert len(sums) == 0 and sums.total() is None


def test_merges_follow_a_binary_counter():
    merges = []
    sums = PartialSums(lambda earlier, later: merges.append((earlier, later)) or f"({earlier}+{later})")
    for name in "abcde":
        sums.add(name)
    assert merges == [("a", "b"), ("c", "d"), ("(a+b)", "(c+d)")]
    assert sums.total(resolve=lambda partial: [partial]) == ["((a+b)+(c+d))", "e"]


@pytest.mark.parametrize("n, run", [(13, 4), (16, 4), (9, 8), (5, 1), (3, 2)])
def test_a_run_added_at_its_level_merges_as_its_partials_one_by_one(n, run):
    """Runs of ``run`` (a power of two) partials, aligned, merged among themselves, added at level log2(run), and a
    last shorter run added as the partial sums it holds: the same tree as adding every partial one by one."""
    tree = lambda earlier, later: f"({earlier}+{later})"  # noqa: E731
    one_by_one = PartialSums(tree)
    for k in range(n):
        one_by_one.add(str(k))
    by_runs = PartialSums(tree)
    for first in range(0, n, run):
        inside = PartialSums(tree)
        for k in range(first, min(first + run, n)):
            inside.add(str(k))
        held = inside.drain()
        levels = [level for level in range(run.bit_length(), -1, -1) if (min(first + run, n) - first) >> level & 1]
        assert len(levels) == len(held)
        for partial, level in zip(held, levels):
            by_runs.add(partial, level=level)
    assert by_runs.drain() == one_by_one.drain()
