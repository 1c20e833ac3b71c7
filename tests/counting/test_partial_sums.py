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
