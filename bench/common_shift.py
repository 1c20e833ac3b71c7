"""A shift common to every word between two halves of a corpus, and the check without it (docs/method.md 6.23).

Usage: python bench/common_shift.py [--corpus embedded|gutenberg_us_10m|gutenberg_us_31m] [--n-components 50]
                                    [--epochs 25] [--groups books|authors] [--check-seeds 101 202]
                                    [--min-count 100] [--n-pairs 300]

With the context vectors and context biases of the pooled fit, a sub-corpus's rows are identified only up
to what its own context biases would absorb: a change ``delta_j = c_j . v`` of every context's bias is
the same fit as every word vector moved by ``v``. A half whose books use the contexts differently (some
more often with every word) therefore moves all its words by one vector. This script fits the corpus with
the default recipe, splits its groups in two as ``split_half_check`` does with each seed, fits both
halves in the pooled basis (``fit_subcorpora``) and, for each half ``H``, estimates that vector by
generalised least squares over the words of pooled count ``--min-count`` or more: ``w_H - w_pooled =
(I - Sigma_H P) v_H + noise``, weighted by the half's covariance (``(I - Sigma_H P) v`` is how a move
``v`` of the data moves a posterior mean under the prior's precision ``P``). Per band of pooled count
it prints, as fitted and with each half's ``v_H`` taken out of every word, the words compared, the
common shift's statistic (the band's mean difference against its covariance were the words independent,
chi2 on D) and the mean Wald statistic of ``w_A = w_B`` over ``D``; then ``split_half_check``'s own
table (``glovev_ext.split_half.compare_halves``) of both. The baseline is the halves as fitted.
About 15 minutes for the embedded corpus and two seeds on 2 cores.
"""

from __future__ import annotations

import argparse
import copy

import numpy as np
from _data import add_fit_arguments, corpus, corpus_groups

import glovev_ext
from glovev_ext.covariance.prior import posterior_difference
from glovev_ext.split_half import compare_halves

BANDS = (5, 100, 300, 1000, 3000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_fit_arguments(parser)
    parser.add_argument("--check-seeds", type=int, nargs="+", default=[101, 202])
    parser.add_argument("--min-count", type=int, default=100, help="pooled count of the words that estimate v_H")
    parser.add_argument("--n-pairs", type=int, default=300)
    options = parser.parse_args()
    name, documents = corpus(options.corpus)
    documents = list(documents)
    groups = corpus_groups(options.corpus, options.groups)
    estimator = glovev_ext.GloVeVEstimator(n_components=options.n_components, epochs=options.epochs)
    fitted = glovev_ext.fit_corpus(documents, estimator=estimator, groups=groups, progress=False)
    pooled = fitted.keyed_vectors
    counts = {word: pooled.get_vecattr(word, "count") for word in pooled.index_to_key}
    print(f"{name}, D = {options.n_components}, {options.epochs} epochs, calibrated on halves of its "
          f"{groups.describe()}")
    for seed in options.check_seeds:
        first = groups.halves(np.random.default_rng(seed))
        labels = {"A": groups.codes[first], "B": groups.codes[~first]}
        halves = glovev_ext.fit_subcorpora(fitted, {"A": [d for d, a in zip(documents, first) if a],
                                                    "B": [d for d, a in zip(documents, first) if not a]},
                                           groups=labels)
        precision = fitted.estimator.prior_.precision
        moves = {key: translation(half, pooled, counts, precision, options.min_count) for key, half in halves.items()}
        moved = {key: moved_by(half, moves[key], precision) for key, half in halves.items()}
        print(f"halving {seed} of the {groups.describe()}: |v_A| {np.linalg.norm(moves['A']):.3f}, |v_B| "
              f"{np.linalg.norm(moves['B']):.3f}, |v_A - v_B| {np.linalg.norm(moves['A'] - moves['B']):.3f} "
              f"(median |w| {np.median(np.linalg.norm(pooled.vectors, axis=1)):.3f})")
        print(f"{'pooled count':>14} {'words':>7} {'shift chi2 (as fitted)':>23} {'whole / D':>10} "
              f"{'shift chi2 (v out)':>19} {'whole / D':>10}")
        before, after = by_band(halves, counts, precision), by_band(moved, counts, precision)
        for band in before:
            (words, shift, whole), (_, shift_out, whole_out) = before[band], after[band]
            print(f"{band:>14} {words:>7} {shift:>23.1f} {whole:>10.3f} {shift_out:>19.1f} {whole_out:>10.3f}",
                  flush=True)
        for label, pair in (("as fitted", halves), ("each half's v_H out", moved)):
            check = compare_halves(pair["A"], pair["B"], counts, n_pairs=options.n_pairs, random_state=seed,
                                   progress=False)
            print(f"split_half_check's comparisons, {label}:\n{check}", flush=True)


def translation(half, pooled, counts: dict, precision: np.ndarray, min_count: int) -> np.ndarray:
    """``v_H``: the generalised least-squares move of the half's words against the pooled fit's."""
    dim = precision.shape[0]
    normal, right = np.zeros((dim, dim)), np.zeros(dim)
    for word in half.index_to_key:
        if counts.get(word, 0) < min_count:
            continue
        factor = half.covariance_factor(word)
        base = (factor if factor.unwidened is None else factor.unwidened).dense()
        design = np.eye(dim) - base @ precision
        weighted = np.linalg.solve(factor.dense(), design)
        normal += design.T @ weighted
        right += weighted.T @ (half[word] - pooled[word])
    return np.linalg.solve(normal, right)


def moved_by(half, move: np.ndarray, precision: np.ndarray):
    """A copy of ``half`` with every word's posterior mean less ``(I - Sigma P) move``."""
    out = copy.deepcopy(half)
    dim = precision.shape[0]
    for word in out.index_to_key:
        factor = out.covariance_factor(word)
        base = (factor if factor.unwidened is None else factor.unwidened).dense()
        out.vectors[out.key_to_index[word]] -= (np.eye(dim) - base @ precision) @ move
    out.norms = None
    return out


def by_band(halves: dict, counts: dict, precision: np.ndarray) -> dict:
    """``{band: (words, chi2 of the band's mean difference on D, mean Wald statistic over D)}``."""
    half_a, half_b = halves["A"], halves["B"]
    edges = np.array(BANDS)
    found: dict = {}
    for word in half_a.index_to_key:
        if counts.get(word, 0) < BANDS[0] or word not in half_b.key_to_index:
            continue
        factor_a, factor_b = half_a.covariance_factor(word), half_b.covariance_factor(word)
        covariance = posterior_difference(factor_a, factor_b, precision, half_a[word], half_b[word])
        band = int(np.searchsorted(edges, counts[word], side="right")) - 1
        found.setdefault(band, []).append((half_a[word] - half_b[word], covariance))
    band_names = [f"{low:,}-{high - 1:,}" for low, high in zip(BANDS, BANDS[1:])] + [f"{BANDS[-1]:,}+"]
    out = {}
    for band in sorted(found):
        differences = np.array([d for d, _ in found[band]])
        covariances = np.array([c for _, c in found[band]])
        n_words, dim = differences.shape
        mean = differences.mean(axis=0)
        shift = float(mean @ np.linalg.solve(covariances.sum(axis=0) / n_words**2, mean))
        whole = np.mean([d @ np.linalg.solve(c, d) for d, c in zip(differences, covariances)]) / dim
        out[band_names[band]] = (n_words, shift, whole)
    return out


if __name__ == "__main__":
    main()
