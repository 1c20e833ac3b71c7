"""Similarity tests per second at D = 50 and D = 300, against the same run's floor.

Usage: python bench/batched_tests.py [--pairs 300] [--batch 10000] [--epochs 3]

Fits GloVe-V on the embedded corpus (the 5,000 most frequent words, a few epochs: only the
factors' shapes matter for timing) at each D, draws random pairs of words with a covariance and
times ``kv.similarity_test`` pair by pair over ``--pairs`` of them, with the default
``method="auto"`` and with ``method="delta"``, and the vectorised ``kv.similarity_tests`` (delta
method) over ``--batch`` pairs at once; the floor is the work the delta method cannot avoid, the
two quadratic forms ``g^T Sigma g`` of each pair from the stored factors (``store.quad_form``),
timed in the same run. It prints tests per second, the ratio to the floor, and the time 10,000
tests take (aim: under 2 s at D = 300 on 2 cores).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import glovev_ext
from glovev_ext.stats.statistics.cosine import cosine_pair_gradients


def per_second(function, items) -> float:
    function(items[:5])  # warm-up (compilation, caches)
    start = time.perf_counter()
    function(items)
    return len(items) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    X = glovev_ext.CooccurrenceVectorizer(max_vocab_size=5000, progress=False).fit_transform(
        glovev_ext.load_default_corpus())
    for dim in (50, 300):
        model = glovev_ext.GloVeVEstimator(dim, epochs=args.epochs, random_state=0, point_estimate="trained",
                                           progress=False).fit(X)
        kv = glovev_ext.KeyedVectorsWithVariance.from_estimator(model)
        usable = np.array([w for w in kv.index_to_key if kv.has_covariance(w)], dtype=object)
        drawn = np.random.default_rng(0).choice(usable, size=(args.batch + args.pairs, 2))
        batch = [tuple(pair) for pair in drawn if pair[0] != pair[1]][:args.batch]
        pairs = batch[:args.pairs]
        store, index = kv.covariance_store, kv.key_to_index

        def floor(chunk):
            a = np.array([index[p[0]] for p in chunk])
            b = np.array([index[p[1]] for p in chunk])
            grad_a, grad_b = cosine_pair_gradients(kv.vectors, a, b)
            for k in range(len(chunk)):
                store.quad_form(int(a[k]), grad_a[k])
                store.quad_form(int(b[k]), grad_b[k])

        rates = {"floor": per_second(floor, pairs)}
        for method in ("auto", "delta"):
            rates[method] = per_second(lambda chunk: [kv.similarity_test(*p, method=method) for p in chunk], pairs)
        rates["batch"] = per_second(lambda chunk: kv.similarity_tests(chunk, method="delta"), batch)
        print(f"D={dim}: {len(pairs)} pairs of {len(usable):,} words with a covariance; quadratic forms alone "
              f"{rates['floor']:,.0f} pairs/s", flush=True)
        for method in ("auto", "delta"):
            print(f"  similarity_test(method={method!r}): {rates[method]:,.0f} tests/s "
                  f"({rates[method] / rates['floor']:.3f} of the floor); 10,000 tests in "
                  f"{10_000 / rates[method]:.1f} s", flush=True)
        print(f"  similarity_tests({len(batch):,} pairs, method='delta'): {rates['batch']:,.0f} tests/s "
              f"({rates['batch'] / rates['floor']:.2f} of the floor); 10,000 tests in {10_000 / rates['batch']:.2f} s",
              flush=True)


if __name__ == "__main__":
    main()
