"""False positives of "change across corpora": one cosine tested equal in two random halves of a corpus.

Usage: python bench/equality_split_half.py [--pairs 300] [--fitted PATH] [--halves PATH]

The documents of the embedded corpus are split into two random halves (``numpy.random.default_rng(0)``,
each document to half A with probability 1/2) and each half's rows are fitted given the pooled
contexts (``glovev_ext.fit_subcorpora`` of the pooled ``fit_corpus``: D = 50, 25 epochs). Nothing
changed between the halves, so every test below should reject 5 % of pairs at p < 0.05 where the
covariances are calibrated. For ``--pairs`` random pairs of words per band of pooled count (5-99,
100-299, 300-999, 1,000-2,999, 3,000+; both words in the band, with a covariance in both halves),
printed per band: the share of default results that ``method="auto"`` left to Monte Carlo, the median
ratio of their ``draws_std_error`` (the draws' spread) to their ``delta_std_error``, and the share of pairs
rejected at 5 % by

- (a) the default equality test as it was before docs/method.md 7.2's fix: Welch's test on atanh of
  the two default ``similarity_test`` results, each weighed by its draws' spread (``draws_std_error``);
- (b) the default equality test now, ``compare_models([A.similarity_test(a, b, random_state=0),
  B.similarity_test(a, b, random_state=0)]).equality()``;
- (c) the plain delta-method z on the linear scale, ``(cos_A - cos_B) / sqrt(se_A^2 + se_B^2)`` with
  ``similarity_tests(pairs, method="delta", scale="linear", use_t=False)`` standard errors: the
  reference built from the same covariances (which are themselves somewhat mis-calibrated by
  frequency on this fit, so it is not exactly 5 % either);
- (d) the pairwise difference test of the same comparison, ``pairwise(correction=None)``.

A rate's binomial standard error over 300 pairs is 0.013 at 5 % (pairs share words, so a little more).
It reads the fits from the pickles of ``--fitted`` (a ``FittedCorpus``) and ``--halves`` (``{"A": kv,
"B": kv}``) when both exist, else fits them (and writes those pickles; the fit is deterministic, so the
table is the same). On 2 cores: about 70 s with the pickles, about 130 s fitting first.
"""

from __future__ import annotations

import argparse
import pickle
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import glovev_ext
from glovev_ext import compare_models
from glovev_ext.stats import InferenceResult

BANDS = ((5, 99), (100, 299), (300, 999), (1_000, 2_999), (3_000, None))
MONTE_CARLO = "Monte Carlo"


def fits(fitted_path: Path, halves_path: Path):
    """The pooled fit and the two halves' embeddings, from the pickles or fitted (and pickled)."""
    if fitted_path.exists() and halves_path.exists():
        with open(fitted_path, "rb") as stream:
            fitted = pickle.load(stream)
        with open(halves_path, "rb") as stream:
            halves = pickle.load(stream)
        return fitted, halves["A"], halves["B"]
    documents = list(glovev_ext.load_default_corpus())
    fitted = glovev_ext.fit_corpus(documents, estimator=glovev_ext.GloVeVEstimator(point_estimate="trained"),
                                   progress=False)
    side = np.random.default_rng(0).random(len(documents)) < 0.5
    halves = glovev_ext.fit_subcorpora(fitted, {"A": [d for d, s in zip(documents, side) if s],
                                                "B": [d for d, s in zip(documents, side) if not s]})
    for path, value in ((fitted_path, fitted), (halves_path, halves)):
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as stream:
            pickle.dump(value, stream)
    return fitted, halves["A"], halves["B"]


def random_pairs(words: list, n_pairs: int, generator: np.random.Generator) -> list:
    """Up to ``n_pairs`` distinct unordered pairs of distinct words, sorted."""
    n_pairs = min(n_pairs, len(words) * (len(words) - 1) // 2)
    pairs = set()
    while len(pairs) < n_pairs:
        i, j = generator.choice(len(words), 2, replace=False)
        pairs.add((words[min(i, j)], words[max(i, j)]))
    return sorted(pairs)


def weighed_by_std_error(result: InferenceResult) -> InferenceResult:
    """The result as the equality test saw it before the fix: a Wald result with its draws' spread (its delta
    method's error where it has no draws)."""
    spread = result.std_error if np.isnan(result.draws_std_error) else result.draws_std_error
    return InferenceResult.wald(result.name, result.estimate, spread, df=result.df, bounds=result.bounds,
                                scale=result.scale)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--fitted", type=Path, default=Path("/tmp/explore/fitted_default.pkl"))
    parser.add_argument("--halves", type=Path, default=Path("/tmp/explore/halves_default.pkl"))
    args = parser.parse_args()
    start = time.perf_counter()
    fitted, half_a, half_b = fits(args.fitted, args.halves)
    pooled = fitted.keyed_vectors
    counts = {w: pooled.get_vecattr(w, "count") for w in pooled.index_to_key}
    usable = [w for w in pooled.index_to_key if w in half_a.key_to_index and w in half_b.key_to_index
              and half_a.has_covariance(w) and half_b.has_covariance(w)]
    generator = np.random.default_rng(1)
    print(f"{args.pairs} random pairs per band of pooled count; share of pairs rejected at 5 %")
    print("band         words  pairs  MC share  MC se/delta  (a) before  (b) now  (c) linear z  (d) pairwise")
    with threadpool_limits(1):
        for low, high in BANDS:
            words = [w for w in usable if counts[w] >= low and (high is None or counts[w] <= high)]
            pairs = random_pairs(words, args.pairs, generator)
            linear = [half.similarity_tests(pairs, method="delta", scale="linear", use_t=False)
                      for half in (half_a, half_b)]
            z = (linear[0].estimates - linear[1].estimates) / np.hypot(linear[0].std_errors, linear[1].std_errors)
            before, now, pairwise, monte_carlo, ratios = [], [], [], 0, []
            for a, b in pairs:
                results = [half.similarity_test(a, b, random_state=0) for half in (half_a, half_b)]
                comparison = compare_models(results)
                now.append(float(comparison.equality().pvalue))
                pairwise.append(float(comparison.pairwise(correction=None).pvalues[0]))
                before.append(float(compare_models([weighed_by_std_error(r) for r in results]).equality().pvalue))
                drawn = [r for r in results if r.method == MONTE_CARLO]
                monte_carlo += len(drawn)
                ratios += [r.draws_std_error / r.delta_std_error for r in drawn]
            band = f"{low:,}-{high:,}" if high is not None else f"{low:,}+"
            rates = [np.mean(np.asarray(p) < 0.05) for p in (before, now)]
            print(f"{band:<12} {len(words):>5}  {len(pairs):>5}  {monte_carlo / (2 * len(pairs)):>8.2f}  "
                  f"{np.median(ratios) if ratios else np.nan:>11.2f}  {rates[0]:>10.3f}  {rates[1]:>7.3f}  "
                  f"{np.mean(np.abs(z) > 1.959964):>12.3f}  {np.mean(np.asarray(pairwise) < 0.05):>12.3f}",
                  flush=True)
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
