"""Monte Carlo ("method of composition"): a function of the words' vectors at joint draws of them.

Each word's vector is drawn ``w_i + S_i z`` (``Sigma_i = S_i S_i^T``), independently across words
(method.md section 3), in batches that bound the memory held. Each word draws from its own stream of
random numbers, seeded by ``random_state`` and the word itself, so a word's draws do not depend on the
company it keeps: the rows a statistic shares with another computed from the same ``random_state``
(a neighbour listed among 5 or among 10) get the same draws.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Sequence

import numpy as np
from tqdm.auto import tqdm

from ..._checks import check_int
from .words import ResolvedWords

_DRAW_ELEMENTS = 20_000_000  # doubles of drawn vectors held at once
_NORMAL, _CHI_SQUARE = 0, 1  # each word's two streams: its normal deviates, and the chi-square of its t draws


def draw_values(words: ResolvedWords, function: Callable[[np.ndarray], np.ndarray], n_draws: int,
                random_state=None, vectorized: bool = True, progress: bool = False,
                use_t: bool = False) -> np.ndarray:
    """Values of ``function`` at ``n_draws`` joint draws of the vectors of ``words``.

    Parameters
    ----------
    words : ResolvedWords
        The words to draw, with their vectors and covariance factors.
    function : callable
        ``(n, k, D) -> (n, ...)`` when ``vectorized``, else ``(k, D) -> (...)`` called per draw.
    n_draws : int
        Number of joint draws.
    random_state : None, int or numpy Generator, default=None
        Fresh random numbers by default, as numpy gives: draws made to be pooled across calls must
        differ. The statistics pass their own (:data:`~glovev_ext.stats.DEFAULT_SEED` by default). It
        seeds one stream per word (with the word's key), so the same ``random_state`` gives a word the
        same draws whichever words it is drawn with; a Generator hands out one seed per call.
    vectorized : bool
        Whether ``function`` takes all draws of a batch at once.
    progress : bool, default=False
        Show a tqdm bar of the draws done (batches of them; the draws do not depend on it).
    use_t : bool, default=False
        Draw each word from its t distribution on its factor's degrees of freedom (its deviation
        ``S_i z`` scaled by ``sqrt(nu_i / chi2_nu_i)``), as ``use_t`` references do; normal otherwise.

    Returns
    -------
    ndarray, shape (n_draws, ...)
        The function's values, one row per draw.
    """
    n_draws = check_int(n_draws, "n_draws", minimum=2)  # a spread needs two draws
    streams = _word_streams(words.keys, random_state)
    base = words.vectors
    dofs = [float(factor.dof) if use_t else np.inf for factor in words.factors]
    batch = max(1, min(n_draws, _DRAW_ELEMENTS // max(1, base.size)))
    outputs = []
    with tqdm(total=n_draws, desc="Monte Carlo draws", unit="draw", disable=not progress, leave=False) as bar:
        for start in range(0, n_draws, batch):
            size = min(batch, n_draws - start)
            drawn = np.repeat(base[None], size, axis=0)
            for i, factor in enumerate(words.factors):
                deviation = factor.transform_normal(streams[i][_NORMAL].standard_normal((size, base.shape[1])))
                if np.isfinite(dofs[i]):
                    deviation *= np.sqrt(dofs[i] / streams[i][_CHI_SQUARE].chisquare(dofs[i], size))[:, None]
                drawn[:, i] += deviation
            values = function(drawn) if vectorized else np.array([function(one) for one in drawn])
            outputs.append(np.asarray(values, dtype=np.float64))
            bar.update(size)
    return np.concatenate(outputs, axis=0)


def _word_streams(keys: Sequence[Hashable], random_state) -> list[tuple[np.random.Generator, np.random.Generator]]:
    """Each key's two generators (normal deviates, chi-square variates), seeded by ``random_state`` and the key.

    ``random_state`` gives one seed (drawn from it when it is a Generator, so successive calls differ),
    and each key's streams are that seed's children named by a hash of the key: the same for a key
    whatever else is drawn, independent across keys.
    """
    seed = np.random.default_rng(random_state).integers(2**63, size=2)
    streams = []
    for key in keys:
        code = int.from_bytes(hashlib.blake2b(str(key).encode("utf-8"), digest_size=8).digest(), "little")
        streams.append(tuple(np.random.default_rng(np.random.SeedSequence(seed.tolist(), spawn_key=(code, kind)))
                             for kind in (_NORMAL, _CHI_SQUARE)))
    return streams
