"""A fit under a memory budget against the same fit without one: vectors, covariances and noise scale compared.

Usage: python bench/budget_equality.py [--corpus embedded|gutenberg_us_10m|gutenberg_us_31m]
[--max-memory 600M] [--n-components 50] [--epochs 1] [--point-estimate posterior] [--covariance-dtype float64]
[--sample N]

``fit_corpus`` runs twice with the same seed and settings (by default the default recipe: posterior
covariances calibrated on two random halves), once with ``max_memory`` on the vectorizer and the
estimator (counts spilled and merged, matrices memory-mapped, training from a file of entries)
and once without. It prints whether the vectors are the same bits, the largest difference between
any two covariance entries (of every word with one, or of ``--sample N`` of them drawn with seed 0),
and whether the noise scales agree.

For issue 26's D=300 check: ``python bench/budget_equality.py --corpus gutenberg_us_31m --max-memory 2G
--n-components 300 --epochs 1 --point-estimate trained --covariance-dtype float32 --sample 5000``; for the default
recipe, the same without ``--point-estimate`` and ``--sample`` (every word compared; about 2 hours on 2 cores, and
22 GB of memory for the two fits' results held at once).
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
    parser.add_argument("--point-estimate", default="posterior", choices=("trained", "optimum", "alternating",
                                                                          "posterior"))
    parser.add_argument("--covariance-dtype", default="float64", choices=("float64", "float32"))
    parser.add_argument("--sample", type=int, default=0, help="compare this many words' covariances (0: all)")
    args = parser.parse_args()
    label, documents = ("embedded", glovev_ext.load_default_corpus()) if args.corpus == "embedded" else corpus(args.corpus)
    fits = {}
    for budget in (None, args.max_memory):
        fits[budget] = glovev_ext.fit_corpus(
            documents, glovev_ext.CooccurrenceVectorizer(max_memory=budget, progress=False),
            glovev_ext.GloVeVEstimator(n_components=args.n_components, epochs=args.epochs, max_memory=budget,
                                       point_estimate=args.point_estimate, covariance_dtype=args.covariance_dtype,
                                       progress=False), progress=False)
    free, bounded = fits[None].keyed_vectors, fits[args.max_memory].keyed_vectors
    rows, rows_bounded = (np.array([i for i, key in enumerate(kv.index_to_key) if kv.has_covariance(key)])
                          for kv in (free, bounded))
    same_words = np.array_equal(rows, rows_bounded)
    if 0 < args.sample < rows.size:
        rows = np.sort(np.random.default_rng(0).choice(rows, args.sample, replace=False))
    largest = max(float(np.abs(bounded.covariance(free.index_to_key[i]) - free.covariance(free.index_to_key[i])).max())
                  for i in rows)
    scales = [getattr(fits[budget].estimator, "noise_scale_", None) for budget in fits]
    print(f"{label}: {len(free):,} words, D={args.n_components}, {args.epochs} epoch(s), max_memory={args.max_memory}, "
          f"point_estimate={args.point_estimate}, covariance_dtype={args.covariance_dtype}")
    print(f"vectors the same bits: {bounded.vectors.tobytes() == free.vectors.tobytes()}")
    print(f"the same words have a covariance: {same_words}")
    print(f"covariances of {rows.size:,} words: largest entry difference {largest:.3g}")
    if scales[0] is None:
        print("noise scales: none (not the posterior recipe, or calibration off)")
    else:
        print(f"noise scales equal: {scales[0].to_dict() == scales[1].to_dict()}")


if __name__ == "__main__":
    main()
