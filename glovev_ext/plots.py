"""Figures of the GloVe-V paper, each on a matplotlib Axes.

The figures draw results and stored covariances; they compute no statistic (``glovev_ext.stats``
does, e.g. :func:`~glovev_ext.stats.cosine_bias_by_frequency` for Fig. 7a).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import numpy as np

from ._checks import DEFAULT_SEED
from ._docstrings import fill_doc
from .keyed_vectors import KeyedVectorsWithVariance
from .stats import InferenceResult, NeighborsResult, RelationalSimilarity
from .stats.statistics.relational import METRICS

_PSEUDO_INVERSE_COLOUR = "tab:orange"


def _axes(ax, height: float = 4.8):
    import matplotlib.pyplot as plt  # here, not at import: pyplot picks a backend when first imported

    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, height))
    return ax


def _forest_height(n_rows: int) -> float:
    return 1.6 + 0.42 * n_rows


def projection_2d(kv: KeyedVectorsWithVariance, n_words: int = 5000) -> np.ndarray:
    """A ``(D, 2)`` orthonormal map onto the first two principal components of the most frequent vectors."""
    sample = np.asarray(kv.vectors[:n_words], dtype=np.float64)
    centred = sample - sample.mean(axis=0)
    return np.linalg.svd(centred, full_matrices=False)[2][:2].T


@fill_doc
def plot_uncertainty_ellipses(kv: KeyedVectorsWithVariance, words: Sequence[str], ax=None, n_draws: int = 100,
                              random_state=DEFAULT_SEED, projection: np.ndarray | None = None, level: float = 0.95):
    """Words in a 2-D projection with draws from their GloVe-V distribution and ellipses (paper Fig. 2).

    Each ellipse is the exact ``level`` region of the projected normal ``N(P w, P Sigma P^T)``;
    the dots are ``n_draws`` draws.

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    words : sequence of str
        Words with a covariance.
    ax : matplotlib Axes, optional
        A new figure by default.
    n_draws : int, default=100
        Dots per word.
    {random_state}
    projection : ndarray, shape (D, 2), optional
        The map onto the plane; :func:`projection_2d` by default.
    level : float, default=0.95
        Of the ellipses.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from matplotlib.patches import Ellipse
    from scipy.stats import chi2

    ax = _axes(ax)
    projection = projection_2d(kv) if projection is None else projection
    scale = np.sqrt(chi2.ppf(level, df=2))
    draws = kv.sample_vectors(list(words), n_draws, random_state=random_state)
    for k, word in enumerate(words):
        centre = np.asarray(kv[word], dtype=np.float64) @ projection
        cloud = draws[:, k] @ projection
        covariance = projection.T @ kv.covariance(word) @ projection
        eigenvalues, eigenvectors = np.linalg.eigh(covariance)
        angle = np.degrees(np.arctan2(eigenvectors[1, 1], eigenvectors[0, 1]))
        colour = f"C{k % 10}"
        ax.scatter(cloud[:, 0], cloud[:, 1], s=4, alpha=0.3, color=colour)
        ax.add_patch(Ellipse(centre, 2 * scale * np.sqrt(max(eigenvalues[1], 0)),
                             2 * scale * np.sqrt(max(eigenvalues[0], 0)), angle=angle, fill=False, color=colour))
        ax.annotate(word, centre, fontsize=9, ha="center", va="center", weight="bold")
    ax.set_xlabel("principal component 1")
    ax.set_ylabel("principal component 2")
    ax.set_title(f"GloVe-V uncertainty: {n_draws} draws and {int(level * 100)} % ellipses")
    return ax


@fill_doc
def plot_variance_by_frequency(kv: KeyedVectorsWithVariance, counts: np.ndarray | None = None, ax=None,
                               max_points: int = 5000, random_state=DEFAULT_SEED):
    """L2 norm of each word's covariance diagonal against its frequency, both log10 (paper Fig. 3).

    A random sample of at most ``max_points`` words with a covariance is drawn, in proportion to
    frequency as in the paper, and the title says so. Words on the pseudo-inverse branch are marked
    in orange; the legend names only the groups that have points.

    Parameters
    ----------
    kv : KeyedVectorsWithVariance
    counts : ndarray, optional
        Frequency of each word, in the order of ``kv.index_to_key``; gensim's ``count`` attribute
        by default.
    ax : matplotlib Axes, optional
        A new figure by default.
    max_points : int, default=5000
    {random_state}
        They pick the sample.

    Returns
    -------
    matplotlib.axes.Axes
    """
    store = kv.covariance_store
    if store is None:
        raise ValueError("these vectors carry no covariances")
    counts = np.asarray(kv.expandos["count"] if counts is None else counts, dtype=np.float64)
    # the store row of every word at once: one call per word costs seconds on a full vocabulary
    rows = np.asarray(kv.covariance_rows[:len(kv.index_to_key)], dtype=np.int64)
    positions = np.flatnonzero(rows >= 0)
    positions = positions[store.defined[rows[positions]]]
    weights = counts[positions] / counts[positions].sum()
    chosen = np.random.default_rng(random_state).choice(positions.size, size=min(max_points, positions.size),
                                                        replace=False, p=weights)
    norms = np.linalg.norm(store.diagonal(rows[positions[chosen]]), axis=1)
    # a lazy store finds some words numerically singular only when it computes them
    plotted = np.isfinite(norms)
    norms, chosen = norms[plotted], chosen[plotted]
    frequencies = counts[positions[chosen]]
    pseudo = store.pseudo_inverse[rows[positions[chosen]]]
    ax = _axes(ax)
    for group, colour, opacity, label in ((~pseudo, "tab:blue", 0.5, "inverse"),
                                          (pseudo, _PSEUDO_INVERSE_COLOUR, 0.7, "pseudo-inverse")):
        if group.any():
            ax.scatter(np.log10(norms[group]), np.log10(frequencies[group]), s=5, alpha=opacity, color=colour,
                       label=label)
    ax.set_xlabel("log10 L2 norm of the covariance diagonal")
    ax.set_ylabel("log10 word frequency")
    ax.set_title(f"GloVe-V variance against word frequency\n{norms.size:,} of {positions.size:,} words with a "
                 "covariance, sampled in proportion to frequency", fontsize="medium")
    if norms.size:
        ax.legend(loc="upper right", markerscale=3)
    return ax


def _forest(ax, labels: Sequence[str], estimates, lows, highs, xlabel: str, title: str):
    y = np.arange(len(labels))[::-1]
    estimates, lows, highs = map(np.asarray, (estimates, lows, highs))
    ax.errorbar(estimates, y, xerr=[estimates - lows, highs - estimates], fmt="o", color="black", capsize=3)
    ax.set_yticks(y)
    ax.set_yticklabels(labels)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    return ax


def plot_neighbors(result: NeighborsResult, ax=None, *, confidence_level: float = 0.95):
    """Forest plot of a word's nearest neighbours with their intervals (paper Fig. 5)."""
    ax = _axes(ax, _forest_height(len(result.neighbors)))
    interval = result.similarities.conf_int(confidence_level=confidence_level).to_numpy()
    labels = [f"{word} (P rank = {p:.2f})" for word, p in zip(result.neighbors,
                                                               np.diag(result.rank_probabilities.to_numpy()))]
    return _forest(ax, labels, result.similarities.estimates, interval[:, 0], interval[:, 1],
                   f"cosine similarity with {result.word!r}", f"Nearest neighbours of {result.word!r}, "
                   f"{confidence_level:.0%} intervals")


def plot_results(results: Sequence[InferenceResult], labels: Sequence[str] | None = None, ax=None, *,
                 confidence_level: float = 0.95, xlabel: str = "estimate", title: str = ""):
    """Several results side by side with their intervals (e.g. bias tests, paper Fig. 7)."""
    ax = _axes(ax, _forest_height(len(results)))
    labels = [r.name for r in results] if labels is None else labels
    intervals = np.array([r.conf_int(confidence_level=confidence_level) for r in results])
    _forest(ax, labels, [r.estimate for r in results], intervals[:, 0], intervals[:, 1], xlabel, title)
    ax.axvline(0.0, color="grey", linewidth=0.8, linestyle="--")
    return ax


@fill_doc
def plot_relational_similarity(result: RelationalSimilarity, axes=None, *, confidence_level: float = 0.95,
                               min_questions: int = 2):
    """SemEval-2012 Task 2 per relation, the embedding beside the Random baseline (paper Fig. 6).

    A relation answered on fewer than ``min_questions`` MaxDiff questions is left out, and the
    title names it: one question's accuracy can only be 0, 0.5 or 1, and its interval says nothing.
    The legend sits above the axes, where it cannot hide a relation.

    Parameters
    ----------
    result : RelationalSimilarity
    axes : pair of matplotlib Axes, optional
        For MaxDiff accuracy and Spearman correlation; a new figure by default.
    {confidence_level}
    min_questions : int, default=2
        Fewest MaxDiff questions a relation must have been scored on to be plotted.

    Returns
    -------
    ndarray of two Axes
    """
    import matplotlib.pyplot as plt

    shown = [k for k, n in enumerate(result.n_questions) if n >= min_questions]
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(10, 2.2 + 0.5 * len(shown)))
    axes = np.asarray(axes).ravel()
    y = np.arange(len(shown))[::-1]
    for ax, metric in zip(axes, METRICS):
        rows = [result.model.names.index(result.row(result.subcategories[k], metric)) for k in shown]
        for family, offset, colour, label in ((result.model, 0.12, "black", "GloVe"),
                                              (result.random, -0.12, "tab:grey", "Random baseline")):
            interval = family.conf_int(confidence_level=confidence_level).to_numpy()[rows]
            estimates = family.estimates[rows]
            ax.errorbar(estimates, y + offset, xerr=[estimates - interval[:, 0], interval[:, 1] - estimates],
                        fmt="o", color=colour, capsize=3, label=label)
        ax.set_yticks(y)
        ax.set_ylim(-0.5, max(len(shown), 1) - 0.5)  # one row a unit high, however few rows
        ax.set_xlabel(METRICS[metric])
    axes[0].set_yticklabels([result.labels[k] for k in shown])
    axes[1].set_yticklabels([])
    if shown:
        axes[0].legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, fontsize="small", frameon=False)
    title = f"SemEval-2012 Task 2, {confidence_level:.0%} Monte Carlo intervals"
    left_out = [f"{subcategory} ({n} question{'' if n == 1 else 's'})"
                for subcategory, n in zip(result.subcategories, result.n_questions) if n < min_questions]
    if left_out:
        title += "\n" + textwrap.fill(f"not plotted, fewer than {min_questions} MaxDiff questions: "
                                      f"{', '.join(left_out)}", width=110)
    axes[0].figure.suptitle(title)
    return axes
