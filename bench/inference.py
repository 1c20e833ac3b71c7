"""Time of inference calls on stored factors at D = 300.

Usage: python bench/inference.py [--epochs 3] [--n-components 300]

Fits GloVe-V at D on the embedded corpus (a few epochs: only the factors' shapes matter for
timing), then prints the wall time of ``kv.similarity_test(a, b)`` (goal <= 1 ms) and of a
100-word WEAT by the delta method (``kv.weat_test`` with 25 words per list; goal <= 50 ms),
each the median of repeated calls. The baseline measured in the same run is one dense
``g^T Sigma g`` product per word with Sigma formed from the factor (what the factors avoid).
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import seconds

import glovev_ext


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--n-components", type=int, default=300)
    args = parser.parse_args()
    X = glovev_ext.CooccurrenceVectorizer(progress=False).fit_transform(glovev_ext.load_default_corpus())
    model = glovev_ext.GloVeVEstimator(args.n_components, epochs=args.epochs, random_state=0,
                                       point_estimate="trained", progress=False).fit(X)
    kv = glovev_ext.KeyedVectorsWithVariance.from_estimator(model)
    usable = [w for w in kv.index_to_key if kv.has_covariance(w)][:100]
    a, b = usable[10], usable[20]
    kv.similarity_test(a, b)
    cosine = seconds(lambda: kv.similarity_test(a, b), 200, np.median)
    ones = np.ones(args.n_components)
    dense = seconds(lambda: [ones @ kv.covariance(w) @ ones for w in (a, b)], 50, np.median)
    X_, Y_, A_, B_ = usable[:25], usable[25:50], usable[50:75], usable[75:100]
    kv.weat_test(X_, Y_, A_, B_)
    weat = seconds(lambda: kv.weat_test(X_, Y_, A_, B_), 20, np.median)
    print(f"D={args.n_components}, {int(model.covariance_defined_.sum()):,} words with a covariance "
          f"({int(model.pseudo_inverse_.sum()):,} pseudo-inverse)")
    print(f"one cosine test: {cosine * 1e3:.3f} ms (goal <= 1 ms); two dense g^T Sigma g from formed covariances: "
          f"{dense * 1e3:.3f} ms (ratio {cosine / dense:.2f})")
    print(f"WEAT with 100 words, delta method: {weat * 1e3:.1f} ms (goal <= 50 ms)")


if __name__ == "__main__":
    main()
