"""Array helpers shared by the numba kernels."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(nogil=True, cache=True)
def grown(values, size):
    """A copy of ``values`` in a new array of ``size`` elements (the tail uninitialised)."""
    bigger = np.empty(size, values.dtype)
    for k in range(values.size):  # a loop: numba compiles a slice assignment several times slower
        bigger[k] = values[k]
    return bigger
