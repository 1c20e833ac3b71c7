"""How well ``plan_study``'s projection se / sqrt(k) predicts a larger corpus (docs/method.md section 7.4).

Usage: python bench/projection.py [--pilot gutenberg_us_10m | half] [--larger gutenberg_us_31m]
                                  [--n-components 50] [--epochs 25] [--pairs 150]

Fits the larger corpus and the pilot (``half``: a random half of the larger corpus's documents, a
corpus of the same kind by construction; without ../shared/data both fall back to the embedded
corpus, so use ``half``), then, for random word pairs in four frequency bands of the pilot, prints
the median and 90th percentile of ``|projected / measured - 1|`` for the standard error of their
cosine, with ``k`` the ratio of the corpora's sizes, and the same with each pair's own growth (the
geometric mean of its two words' frequency ratios) in place of ``k``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _data import corpus

import glovev_ext
from glovev_ext.stats import similarity_tests

BANDS = {"ranks 1-100": (0, 100), "100-1,000": (100, 1000), "1,000-5,000": (1000, 5000), "5,000-20,000": (5000, 20000)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pilot", default="gutenberg_us_10m", help="a shared corpus, or 'half' of the larger one")
    parser.add_argument("--larger", default="gutenberg_us_31m")
    parser.add_argument("--n-components", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=25)
    parser.add_argument("--pairs", type=int, default=150)
    args = parser.parse_args()
    estimator = glovev_ext.GloVeVEstimator(n_components=args.n_components, epochs=args.epochs,
                                           point_estimate="trained")
    started = time.perf_counter()
    larger_name, larger_corpus = corpus(args.larger)
    documents = list(larger_corpus)
    larger = glovev_ext.fit_corpus(documents, estimator=estimator, progress=False).keyed_vectors
    if args.pilot == "half":
        order = np.random.default_rng(0).permutation(len(documents))
        pilot_name, pilot_documents = f"a random half of {larger_name}", [documents[i] for i in order[:len(documents) // 2]]
    else:
        pilot_name, pilot_corpus = corpus(args.pilot)
        pilot_documents = list(pilot_corpus)
    pilot = glovev_ext.fit_corpus(pilot_documents, estimator=estimator, progress=False).keyed_vectors

    def size(kv):
        return sum(kv.get_vecattr(w, "count") for w in kv.index_to_key)

    k = size(larger) / size(pilot)
    print(f"pilot {pilot_name}, larger {larger_name}: k = {k:.3f}; fits took {time.perf_counter() - started:.0f} s")
    words = [w for w in pilot.index_to_key
             if w.isalpha() and pilot.unusable_reason(w) is None and larger.unusable_reason(w) is None]
    generator = np.random.default_rng(1)
    print("band: median |se/sqrt(k) / measured - 1|, 90th percentile; with each pair's own growth: median, 90th")
    for band, (low, high) in BANDS.items():
        members = np.arange(low, min(high, len(words)))
        if members.size < 2:
            continue
        pairs = [(words[i], words[j]) for i, j in generator.choice(members, size=(args.pairs, 2)) if i != j]

        def errors(model):
            return similarity_tests(model, pairs, method="delta").summary_frame()["std err"].to_numpy()

        now, measured = errors(pilot), errors(larger)
        growth = np.array([np.sqrt(larger.get_vecattr(a, "count") / pilot.get_vecattr(a, "count")
                                   * larger.get_vecattr(b, "count") / pilot.get_vecattr(b, "count")) for a, b in pairs])
        rule = np.abs(now / np.sqrt(k) / measured - 1)
        own = np.abs(now / np.sqrt(growth) / measured - 1)
        print(f"{band}: {np.median(rule):.0%}, {np.percentile(rule, 90):.0%}; {np.median(own):.0%}, "
              f"{np.percentile(own, 90):.0%}")


if __name__ == "__main__":
    main()
