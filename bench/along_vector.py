"""How the two halves' difference splits between each word's own direction and the rest (docs/method.md 6.17, 6.21).

Usage: python bench/along_vector.py [--corpus embedded|gutenberg_us_10m|gutenberg_us_31m] [--n-components 50]
                                    [--epochs 25] [--groups books|authors] [--check-seeds 101 202]

Fits the corpus with the default recipe (``fit_corpus``, calibrated on halves of ``--groups``), then,
for each seed, splits its groups in two as ``split_half_check`` does with that seed, fits both halves
in the pooled basis (``fit_subcorpora``, each half's rows at their own concentration) and splits each
word's Wald statistic of ``w_A = w_B``, ``d^T V^{-1} d`` (``V`` the difference's covariance with the
shared prior part out and each half's widening along the word's vector in, docs/method.md 6.22), exactly
into the part along ``m = (I - Sigma_A P) u + (I - Sigma_B P) u``, with ``u`` the unit vector of the
word's pooled posterior mean (how noise in a word's strength in its data moves its posterior mean),
``(m^T V^{-1} d)^2 / (m^T V^{-1} m)`` with one degree of freedom, and the rest, with ``D - 1``. Both
have expectation 1 per degree of freedom where the covariances are right (for words whose noise has
many degrees of freedom). Per band of pooled count it prints the words
compared, the whole statistic over ``D``, the part along and the part across over ``D - 1``. A
factor on the whole covariance calibrated on the whole statistic (docs/method.md 6.21) left the part
along above 1 and the part across below it; since 6.22 the calibration scales by the part across and
widens along each word's vector by the part along, so both should be near 1. The baseline is the
whole statistic of the same words.
"""

from __future__ import annotations

import argparse

import numpy as np
from _data import add_fit_arguments, fit_with_groups

import glovev_ext
from glovev_ext.covariance.prior import posterior_difference

BANDS = (5, 100, 300, 1000, 3000)
MAX_CONDITION = 1e10  # the calibration's limit on the difference's covariance


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_fit_arguments(parser)
    parser.add_argument("--check-seeds", type=int, nargs="+", default=[101, 202])
    options = parser.parse_args()
    _, documents, groups, fitted = fit_with_groups(options)
    for seed in options.check_seeds:
        first = groups.halves(np.random.default_rng(seed))
        print(f"halving {seed} of the {groups.describe()}:")
        print(f"{'pooled count':>14} {'words':>7} {'whole / D':>10} {'along (1 df)':>13} {'across / (D - 1)':>17}")
        dim = fitted.keyed_vectors.vector_size
        for band, parts in by_band(fitted, documents, groups, first).items():
            whole, along = parts[:, 0], parts[:, 1]
            print(f"{band:>14} {len(parts):>7} {whole.mean() / dim:>10.3f} {along.mean():>13.3f} "
                  f"{(whole - along).mean() / (dim - 1):>17.3f}", flush=True)


def by_band(fitted, documents: list, groups: glovev_ext.DocumentGroups, first: np.ndarray) -> dict:
    """``{band: array of (whole statistic, part along m)}`` of the words fitted in both halves."""
    labels = {"A": groups.codes[first], "B": groups.codes[~first]}
    halves = glovev_ext.fit_subcorpora(fitted, {"A": [d for d, a in zip(documents, first) if a],
                                                "B": [d for d, a in zip(documents, first) if not a]}, groups=labels)
    half_a, half_b, pooled = halves["A"], halves["B"], fitted.keyed_vectors
    precision = fitted.estimator.prior_.precision
    edges = np.array(BANDS)
    parts: dict = {}
    for word in pooled.index_to_key:
        count = pooled.get_vecattr(word, "count")
        if count < BANDS[0] or word not in half_a.key_to_index or word not in half_b.key_to_index:
            continue
        factor_a, factor_b = half_a.covariance_factor(word), half_b.covariance_factor(word)
        difference_covariance = posterior_difference(factor_a, factor_b, precision, half_a[word], half_b[word])
        if np.linalg.cond(difference_covariance) > MAX_CONDITION:
            continue
        # the covariances before any widening along the word's vector (docs/method.md 6.22)
        covariance_a, covariance_b = ((f if f.unwidened is None else f.unwidened).dense() for f in (factor_a, factor_b))
        unit = pooled[word] / np.linalg.norm(pooled[word])
        along = 2 * unit - covariance_a @ (precision @ unit) - covariance_b @ (precision @ unit)
        difference = half_a[word] - half_b[word]
        solved = np.linalg.solve(difference_covariance, np.column_stack([difference, along]))
        band = int(np.searchsorted(edges, count, side="right")) - 1
        whole, part_along = difference @ solved[:, 0], (along @ solved[:, 0]) ** 2 / (along @ solved[:, 1])
        parts.setdefault(band, []).append((whole, part_along))
    band_names = [f"{low:,}-{high - 1:,}" for low, high in zip(BANDS, BANDS[1:])] + [f"{BANDS[-1]:,}+"]
    return {band_names[band]: np.array(parts[band]) for band in sorted(parts)}


if __name__ == "__main__":
    main()
