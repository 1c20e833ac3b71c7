"""A fit under a memory budget against the same fit without one: vectors, covariances and noise scale compared.

Usage: python bench/budget_equality.py [--corpus embedded|gutenberg_us_10m|gutenberg_us_31m]
[--max-memory 600M] [--n-components 50] [--epochs 1]

``fit_corpus`` runs twice with the same seed and settings (the default recipe: posterior
covariances calibrated on two random halves), once with ``max_memory`` on the vectorizer and the
estimator (counts spilled and merged, matrices memory-mapped, training from a file of entries)
and once without. It prints whether the vectors are the same bits, the largest difference between
any two covariance entries, and whether the noise scales agree.
"""

from __future__ import annotations

import argparse

import numpy as np
from _data import corpus

import glovev_ext


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="embedded", choices=("embedded", "gutenberg_us_10m", "gutenberg_us_31m"))
    parser.add_argument("--max-memory", default="600M")
    parser.add_argument("--n-components", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    label, documents = ("embedded", glovev_ext.load_default_corpus()) if args.corpus == "embedded" else corpus(args.corpus)
    fits = {}
    for budget in (None, args.max_memory):
        fits[budget] = glovev_ext.fit_corpus(
            documents, glovev_ext.CooccurrenceVectorizer(max_memory=budget, progress=False),
            glovev_ext.GloVeVEstimator(n_components=args.n_components, epochs=args.epochs, max_memory=budget,
                                       progress=False), progress=False)
    free, bounded = fits[None].keyed_vectors, fits[args.max_memory].keyed_vectors
    rows = np.flatnonzero(free.covariance_rows >= 0)
    largest = max(float(np.abs(bounded.covariance(free.index_to_key[i]) - free.covariance(free.index_to_key[i])).max())
                  for i in rows)
    scales = fits[None].estimator.noise_scale_.to_dict() == fits[args.max_memory].estimator.noise_scale_.to_dict()
    print(f"{label}: {len(free):,} words, D={args.n_components}, {args.epochs} epoch(s), max_memory={args.max_memory}")
    print(f"vectors the same bits: {bounded.vectors.tobytes() == free.vectors.tobytes()}")
    print(f"covariances of {rows.size:,} words: largest entry difference {largest:.3g}")
    print(f"noise scales equal: {scales}")


if __name__ == "__main__":
    main()
