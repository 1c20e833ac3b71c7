"""Wall-clock timing of repeated calls for the benchmarks."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np


def seconds(function: Callable[[], object], repeat: int, statistic: Callable = np.min) -> float:
    """``statistic`` (min by default) of the wall times of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return float(statistic(times))
