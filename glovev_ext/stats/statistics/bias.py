"""The cosine bias score of Garg et al. (2018), and comparisons of several bias statistics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from ..._checks import DEFAULT_SEED, as_generator
from ..._docstrings import fill_doc
from .cosine import cosine_pair_gradients, scatter_rows, through_normalisation
from ..engine.estimation import DEFAULT_METHOD, estimate
from ..engine.results import InferenceResult, ResultFamily
from ..engine.statistic import Statistic, stack
from .weat import positions
from ..engine.words import DEFAULT_MISSING, EmbeddingWithCovariance, usable_lists


def cosine_bias_statistic(group_a: Sequence, group_b: Sequence, attributes: Sequence) -> Statistic:
    """Garg et al. (2018): ``mean_k cos(v_k, M_A) - mean_k cos(v_k, M_B)``, M the mean unit vector of a group."""
    if min(len(group_a), len(group_b), len(attributes)) == 0:
        raise ValueError("the cosine bias needs non-empty groups and attributes")
    keys = tuple(dict.fromkeys([*group_a, *group_b, *attributes]))
    ia, ib, iv = positions(keys, group_a), positions(keys, group_b), positions(keys, attributes)
    n_attributes = iv.size

    def function(vectors):
        unit = vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)
        values = []
        for members in (ia, ib):
            centre = unit[..., members, :].mean(axis=-2)
            centre = centre / np.linalg.norm(centre, axis=-1, keepdims=True)
            values.append(np.einsum("...kd,...d->...k", unit[..., iv, :], centre).mean(axis=-1))
        return (values[0] - values[1])[..., None]

    def gradient(vectors):
        jacobian = np.zeros_like(vectors, dtype=np.float64)
        for sign, members in ((1.0, ia), (-1.0, ib)):
            members_vectors = vectors[members]
            centre = (members_vectors / np.linalg.norm(members_vectors, axis=1, keepdims=True)).mean(axis=0)
            # cos(v_k, M) for every attribute k against the group's centre M, the last row
            by_attribute, by_centre = cosine_pair_gradients(np.vstack([vectors[iv], centre]),
                                                            np.arange(n_attributes), np.full(n_attributes,
                                                                                             n_attributes))
            jacobian += scatter_rows(iv, sign * by_attribute / n_attributes, vectors.shape[0])
            # M is the mean of the members' unit vectors: each member gets 1/|group| of d/dM, through w -> w/|w|
            per_member = np.tile(by_centre.sum(axis=0) / n_attributes / members.size, (members.size, 1))
            jacobian += scatter_rows(members, sign * through_normalisation(members_vectors, per_member),
                                     vectors.shape[0])
        return jacobian[None]

    # a difference of two means of cosines
    return Statistic("cosine bias", keys, ("cosine bias",), function, gradient, (-2.0, 2.0))


@fill_doc
def cosine_bias(kv: EmbeddingWithCovariance, group_a: Sequence, group_b: Sequence, attributes: Sequence, *,
                missing: str = DEFAULT_MISSING, method: str = DEFAULT_METHOD, null_value: float = 0.0,
                alternative: str = "two-sided", n_draws: int = 2000, random_state=DEFAULT_SEED, use_t: bool = True,
                scale: str = "bounded") -> InferenceResult:
    """Garg et al. cosine bias of attributes between two groups, with a GloVe-V standard error.

    Positive means the attributes are closer to group A (e.g. Asian surnames vs White surnames
    with otherization adjectives).

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    group_a, group_b, attributes : sequence of str
    {missing}
    {method}
    {null_value}
    {alternative}
    {estimate_options}

    Returns
    -------
    InferenceResult
    """
    (group_a, group_b, attributes), dropped = usable_lists(kv, (group_a, group_b, attributes), missing)
    family = estimate(kv, cosine_bias_statistic(group_a, group_b, attributes), method=method,
                      null_values=null_value, alternative=alternative, n_draws=n_draws, random_state=random_state,
                      dropped=dropped, use_t=use_t, scale=scale)
    return family[0]


@fill_doc
def compare_biases(kv: EmbeddingWithCovariance, statistics: Mapping[str, Statistic] | Sequence[Statistic], *,
                   method: str = DEFAULT_METHOD, n_draws: int = 2000, random_state=DEFAULT_SEED, use_t: bool = True,
                   scale: str = "bounded") -> ResultFamily:
    """Several bias statistics with their joint covariance (word lists may overlap).

    Compare two with ``.difference(i, j)``; never by adding their variances.

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    statistics : dict or sequence of Statistic
        Every word of every statistic must be usable (build the statistics from usable words); a
        dict names the rows by its keys.
    {method}
    {estimate_options}

    Returns
    -------
    ResultFamily
    """
    if isinstance(statistics, Mapping):
        statistics = [replace(s, name=name) for name, s in statistics.items()]  # bounds and gradient kept
    return estimate(kv, stack(list(statistics), name="bias comparison"), method=method, n_draws=n_draws,
                    random_state=random_state, use_t=use_t, scale=scale)


@fill_doc
def cosine_bias_by_frequency(kv: EmbeddingWithCovariance, group_a: Sequence, group_b: Sequence,
                             attributes: Sequence, *, n_bands: int = 3, counts: np.ndarray | None = None,
                             missing: str = DEFAULT_MISSING, method: str = DEFAULT_METHOD, n_draws: int = 2000,
                             random_state=DEFAULT_SEED, use_t: bool = True,
                             scale: str = "bounded") -> list[InferenceResult]:
    """The cosine bias recomputed with each group cut into frequency bands, most frequent first (paper Fig. 7a).

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    group_a, group_b, attributes : sequence of str
    n_bands : int, default=3
        Bands per group; band k pairs the k-th most frequent part of each group.
    counts : ndarray, optional
        Word frequencies by vocabulary index (the ``count`` attribute of ``kv`` by default).
    {missing}
    {method}
    {n_draws}
    {random_state}
        One generator serves every band, so the bands' draws are independent.
    {use_t}
    {scale}

    Returns
    -------
    list of InferenceResult
        One per band with words in both groups, named ``"band k: |A_k| vs |B_k| words"``; each
        names the words dropped by ``missing``.
    """
    (group_a, group_b, attributes), dropped = usable_lists(kv, (group_a, group_b, attributes), missing)
    if counts is None:
        if "count" not in kv.expandos:
            raise ValueError("the embedding carries no word counts: pass counts= (frequency by vocabulary index)")
        counts = kv.expandos["count"]
    counts = np.asarray(counts)
    generator = as_generator(random_state)  # one stream for all bands: a seed given to each would repeat its draws
    by_frequency = [sorted(group, key=lambda w: -counts[kv.get_index(w)]) for group in (group_a, group_b)]
    results = []
    for band, (part_a, part_b) in enumerate(zip(*(np.array_split(g, n_bands) for g in by_frequency)), 1):
        if len(part_a) and len(part_b):
            result = cosine_bias(kv, list(part_a), list(part_b), attributes, method=method, n_draws=n_draws,
                                 random_state=generator, use_t=use_t, scale=scale)
            label = f"band {band}{' (most frequent)' if band == 1 and n_bands > 1 else ''}: " \
                    f"{len(part_a)} vs {len(part_b)} words"
            results.append(result.replace(name=label, dropped=tuple(dropped)))
    return results
