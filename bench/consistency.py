"""Every p-value agrees with its interval and with its siblings, and a statistic reads the same in any company.

Usage: python bench/consistency.py [--corpus brown|embedded|gutenberg_us_10m] [--n-components 25] [--epochs 25]
                                   [--cases 40] [--seed 0]

Fits the default recipe (``fit_corpus``) on the corpus (Brown by default; the embedded corpus when
../shared/data is absent), then over ``--cases`` random similarities and as many differences of two
similarities sharing a word (words drawn from the whole vocabulary), each with every method
(``auto``, ``monte carlo``, ``delta``), alternative and the confidence levels 0.5-0.99, counts the
results that break a rule of issue 47:

- one-sided p-values that do not sum to 1; a two-sided p-value other than twice the smaller one;
- a p-value at most alpha with the null inside the (1 - alpha) interval, or above alpha with it outside
  (nulls at the estimate, beyond both ends and at random between; one-sided tests against their end);
- intervals not nested in the level; a statistic with the opposite sign of the estimate minus the null;
- ``std_error`` other than ``bse``;

and, for 10 random words, the rows that ``nearest_neighbors_test(word, topn=5)`` and ``topn=10`` share
but print differently (rank probabilities aside: they are among the listed words). Every count should
be 0. docs/method.md 6.19 quotes a run.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import glovev_ext
from _data import corpus

LEVELS = (0.5, 0.8, 0.9, 0.95, 0.99)
ALTERNATIVES = ("two-sided", "larger", "smaller")
METHODS = ("auto", "monte carlo", "delta")


def broken_rules(make, estimate_only: bool, rng: np.random.Generator) -> dict[str, int]:
    """How many times one result (``make(null, alternative)``) breaks each rule, over nulls and levels."""
    counts = dict.fromkeys(["sum", "two-sided", "inversion", "nesting", "sign", "bse"], 0)
    base = make(0.0, "two-sided")
    intervals = {level: base.conf_int(confidence_level=level) for level in LEVELS}
    for smaller, larger in zip(LEVELS, LEVELS[1:]):
        if not intervals[larger][0] <= intervals[smaller][0] <= intervals[smaller][1] <= intervals[larger][1]:
            counts["nesting"] += 1
    counts["bse"] += int(base.std_error != base.bse)
    low, high = intervals[0.99]
    spread = max(high - low, 1e-6)
    nulls = [0.0] if estimate_only else [base.estimate, low - 0.1 * spread, high + 0.1 * spread,
                                         *rng.uniform(low - 0.2 * spread, high + 0.2 * spread, 3)]
    bounds = base.bounds
    for null in (float(np.clip(x, bounds[0] + 1e-9, bounds[1] - 1e-9)) for x in nulls):
        results = {alternative: make(null, alternative) for alternative in ALTERNATIVES}
        p = {alternative: r.pvalue for alternative, r in results.items()}
        counts["sum"] += int(abs(p["larger"] + p["smaller"] - 1.0) > 1e-12)
        counts["two-sided"] += int(abs(p["two-sided"] - min(1.0, 2 * min(p["larger"], p["smaller"]))) > 1e-12)
        counts["sign"] += sum(r.statistic * (r.estimate - null) < 0 for r in results.values())
        for level in LEVELS:
            alpha = 1 - level
            lo, hi = intervals[level]
            if min(abs(null - lo), abs(null - hi)) < 1e-9:
                continue
            counts["inversion"] += int((p["two-sided"] <= alpha) != (not lo <= null <= hi))
            one_sided = intervals.get(round(1 - 2 * alpha, 10))  # a one-sided test at alpha: an end of 1 - 2 alpha
            if one_sided is not None and min(abs(null - one_sided[0]), abs(null - one_sided[1])) > 1e-9:
                counts["inversion"] += int((p["larger"] <= alpha) != (null < one_sided[0]))
                counts["inversion"] += int((p["smaller"] <= alpha) != (null > one_sided[1]))
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="brown", choices=["brown", "embedded", "gutenberg_us_10m"])
    parser.add_argument("--n-components", type=int, default=25)
    parser.add_argument("--epochs", type=int, default=25)
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    name, documents = corpus(args.corpus)
    started = time.perf_counter()
    fitted = glovev_ext.fit_corpus(documents, glovev_ext.CooccurrenceVectorizer(progress=False),
                                   glovev_ext.GloVeVEstimator(args.n_components, epochs=args.epochs, random_state=0,
                                                              progress=False))
    kv = fitted.keyed_vectors
    print(f"{name}: default fit, D = {args.n_components}, {args.epochs} epochs, {len(kv):,} words "
          f"[{time.perf_counter() - started:.0f} s]", flush=True)
    rng = np.random.default_rng(args.seed)
    usable = [w for w in kv.index_to_key if kv.has_covariance(w)]
    totals: dict[str, int] = {}
    results = 0
    started = time.perf_counter()
    for k in range(2 * args.cases):
        method = METHODS[k % 3]
        a, b, c = rng.choice(usable, size=3, replace=False)
        if k % 2:
            def make(null, alternative, a=a, b=b, method=method):
                return kv.similarity_test(a, b, null_value=null, alternative=alternative, method=method, n_draws=500)
        else:
            def make(null, alternative, a=a, b=b, c=c, method=method):
                return kv.similarity_difference_test((a, b), (a, c), alternative=alternative, method=method,
                                                     n_draws=500)
        for rule, count in broken_rules(make, estimate_only=not k % 2, rng=rng).items():
            totals[rule] = totals.get(rule, 0) + count
        results += 1
    print(f"{results} results (similarities and differences, every method), each with 3 alternatives, "
          f"{len(LEVELS)} levels and up to 6 nulls [{time.perf_counter() - started:.0f} s]")
    print("rules broken: " + ", ".join(f"{rule} {count}" for rule, count in totals.items()))
    differing = shared = 0
    for word in rng.choice(usable[:2000], size=10, replace=False):
        five, ten = (kv.nearest_neighbors_test(word, topn=n, n_draws=500).summary_frame() for n in (5, 10))
        columns = [column for column in five.columns if column != "P(this rank)"]
        left, right = five[columns].to_numpy(float)[:4], ten.loc[five.index[:4], columns].to_numpy(float)
        differing += int((~np.isclose(left, right, rtol=1e-12, atol=0, equal_nan=True)).any(axis=1).sum())
        shared += 4
    print(f"neighbours among 5 and among 10: {differing} of {shared} shared rows print differently")


if __name__ == "__main__":
    main()
