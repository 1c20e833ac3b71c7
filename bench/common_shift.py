"""A shift common to every word between two halves of a corpus, kept or taken out (docs/method.md 6.23).

Usage: python bench/common_shift.py [--corpus embedded|gutenberg_us_10m|gutenberg_us_31m] [--n-components 50]
                                    [--epochs 25] [--groups books|authors] [--check-seeds 101 202]
                                    [--n-pairs 300]

With the context vectors and context biases of the pooled fit, a sub-corpus's rows are identified only up
to what its own context biases would absorb: a change ``-c_j . v`` of every context's bias is the same fit
as every word vector moved by ``v``. A half whose books use the contexts differently (some more often
with every word) therefore moves all its words by one vector. This script fits the corpus with the
default recipe (whose calibration takes the halves' translation out), splits its groups in two as
``split_half_check`` does with each seed, and fits both halves in the pooled basis twice:
``fit_subcorpora(..., translation="keep")`` (the baseline, the rows as fitted) and ``translation="remove"``
(the default). Per band of pooled count it prints, for both, the words compared, the common shift's
statistic (the band's mean difference against its covariance were the words independent, chi2 on D) and
the mean Wald statistic of ``w_A = w_B`` over ``D``; then ``split_half_check``'s own table
(``glovev_ext.split_half.compare_halves``) of both. The figures of docs/method.md 6.23 measured before
the library took the translation out come from this script at commit 38b1a81.
About 15 minutes for the embedded corpus and two seeds on 2 cores.
"""

from __future__ import annotations

import argparse

import numpy as np
from _data import add_fit_arguments, fit_with_groups

import glovev_ext
from glovev_ext.covariance.prior import posterior_difference
from glovev_ext.split_half import compare_halves

BANDS = (5, 100, 300, 1000, 3000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_fit_arguments(parser)
    parser.add_argument("--check-seeds", type=int, nargs="+", default=[101, 202])
    parser.add_argument("--n-pairs", type=int, default=300)
    options = parser.parse_args()
    _, documents, groups, fitted = fit_with_groups(options)
    pooled = fitted.keyed_vectors
    counts = {word: pooled.get_vecattr(word, "count") for word in pooled.index_to_key}
    for seed in options.check_seeds:
        first = groups.halves(np.random.default_rng(seed))
        labels = {"A": groups.codes[first], "B": groups.codes[~first]}
        parts = {"A": [d for d, a in zip(documents, first) if a], "B": [d for d, a in zip(documents, first) if not a]}
        kept = glovev_ext.fit_subcorpora(fitted, parts, groups=labels, translation="keep")
        removed = glovev_ext.fit_subcorpora(fitted, parts, groups=labels)
        precision = fitted.estimator.prior_.precision
        print(f"halving {seed} of the {groups.describe()}:")
        print(f"{'pooled count':>14} {'words':>7} {'shift chi2 (kept)':>18} {'whole / D':>10} "
              f"{'shift chi2 (removed)':>21} {'whole / D':>10}")
        before, after = by_band(kept, counts, precision), by_band(removed, counts, precision)
        for band in before:
            (words, shift, whole), (_, shift_out, whole_out) = before[band], after[band]
            print(f"{band:>14} {words:>7} {shift:>18.1f} {whole:>10.3f} {shift_out:>21.1f} {whole_out:>10.3f}",
                  flush=True)
        for label, pair in (("translation kept", kept), ("translation removed", removed)):
            check = compare_halves(pair["A"], pair["B"], counts, n_pairs=options.n_pairs, random_state=seed,
                                   progress=False)
            print(f"split_half_check's comparisons, {label}:\n{check}", flush=True)


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
