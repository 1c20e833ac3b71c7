"""Monte Carlo ("method of composition"): a function of the words' vectors at joint draws of them.

Each word's vector is drawn ``w_i + S_i z`` (``Sigma_i = S_i S_i^T``), independently across words
(method.md section 3), in batches that bound the memory held.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from tqdm.auto import tqdm

from ..._checks import check_int
from .words import ResolvedWords

_DRAW_ELEMENTS = 20_000_000  # doubles of drawn vectors held at once


def draw_values(words: ResolvedWords, function: Callable[[np.ndarray], np.ndarray], n_draws: int,
                random_state=None, vectorized: bool = True, progress: bool = False) -> np.ndarray:
    """Values of ``function`` at ``n_draws`` joint draws of the vectors of ``words``.

    Parameters
    ----------
    words : ResolvedWords
    function : callable
        ``(n, k, D) -> (n, ...)`` when ``vectorized``, else ``(k, D) -> (...)`` called per draw.
    n_draws : int
    random_state : None, int or numpy Generator, default=None
        Fresh random numbers by default, as numpy gives: draws made to be pooled across calls must
        differ. The statistics pass their own (:data:`~glovev_ext.stats.DEFAULT_SEED` by default).
    vectorized : bool
    progress : bool, default=False
        Show a tqdm bar of the draws done (batches of them; the draws do not depend on it).

    Returns
    -------
    ndarray, shape (n_draws, ...)
    """
    n_draws = check_int(n_draws, "n_draws", minimum=2)  # a spread needs two draws
    generator = np.random.default_rng(random_state)
    base = words.vectors
    batch = max(1, min(n_draws, _DRAW_ELEMENTS // max(1, base.size)))
    outputs = []
    with tqdm(total=n_draws, desc="Monte Carlo draws", unit="draw", disable=not progress, leave=False) as bar:
        for start in range(0, n_draws, batch):
            size = min(batch, n_draws - start)
            drawn = np.repeat(base[None], size, axis=0)
            for i, factor in enumerate(words.factors):
                drawn[:, i] += factor.transform_normal(generator.standard_normal((size, base.shape[1])))
            values = function(drawn) if vectorized else np.array([function(one) for one in drawn])
            outputs.append(np.asarray(values, dtype=np.float64))
            bar.update(size)
    return np.concatenate(outputs, axis=0)
