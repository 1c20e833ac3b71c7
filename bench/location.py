"""Where Monte Carlo draws are centred, and intervals that account for it (docs/method.md 6.9).

Usage: python bench/location.py [--replications 2000] [--n-draws 1000] [--spearman-replications 200]
                                [--pairs 30] [--model DIR] [--parts coverage spearman default]

Three parts, each comparing the intervals of this release with those of the previous rule
(``method="auto"`` judged the standard errors only, and a Monte Carlo interval was the convex hull
of the delta method's interval and the draws' percentile interval, pieces that could be disjoint);
the coverage part also prints the coverage of rejected variants (:func:`rejected_intervals`):

- ``coverage``: by simulation with known truth on the fit of docs/method.md 6.5 (the first 6,000
  documents of the embedded corpus, D = 30, 10 epochs; ``RowSimulator``): cosines of pairs of
  frequent words, of words with 31-60 spare contexts, of rare words (``|K| - D <= 10``) and of the
  paper's pseudo-inverse words; a WEAT and a cosine bias of the three kinds mixed. Each
  replication is estimated once by the library; the previous rule's interval is formed from the
  very same draws. "mean shift" is where the draws lie (``median_shift``, positive below the
  estimate) and "truth - estimate" where the truth lies, both in standard errors on the test scale.
- ``spearman``: Spearman's rho with WordSim-353 on the default fit (``glovev fit``: the embedded
  corpus, D = 50, 25 epochs) by simulation with known truth: every WordSim word's row drawn from
  the model around its weighted-least-squares optimum and refitted. How often each interval holds
  the noise-free rho and the estimator's median over the refits.
- ``default``: on the default fit itself (``--model``, a folder saved by ``glovev fit``, or fitted
  here): of ``--pairs`` random pairs of the 1,000 most frequent words with a covariance, how many
  each rule keeps on the delta method although their draws are shifted; WordSim-353 and
  SimLex-999 with both intervals.
"""

from __future__ import annotations

import argparse
import copy
import time

import numpy as np
import pandas as pd
from gensim.test.utils import datapath
from scipy.stats import rankdata
from threadpoolctl import threadpool_limits

import glovev_ext
from glovev_ext.covariance.wls import WordFitter
from glovev_ext.stats import RowSimulator, read_word_pairs
from glovev_ext.stats.statistics.cosine import cosines
from glovev_ext.stats.engine.estimation import AUTO_TOLERANCE, SHIFT_TOLERANCE, estimate_resolved
from glovev_ext.stats.statistics.evaluation import rank_correlation
from glovev_ext.stats.engine.intervals import (bounds_of, from_scale, intervals, median_shift, percentile_bounds, quantile,
                                        scaled_errors, to_scale)
from glovev_ext.stats.engine.monte_carlo import draw_values
from glovev_ext.stats.engine.statistic import Statistic
from glovev_ext.stats import weat_statistic
from glovev_ext.stats import cosine_bias_statistic
from glovev_ext.stats.engine.words import resolve


def previous_interval(estimates, std_errors, df, draws, bounds) -> np.ndarray:
    """The previous Monte Carlo interval: the hull of the Wald interval on atanh and the percentile interval."""
    wald = intervals(estimates, scaled_errors(estimates, std_errors, bounds, "bounded"), df, bounds, "bounded", 0.95)
    percentile = percentile_bounds(draws, 0.95)
    return np.column_stack([np.minimum(wald[:, 0], percentile[:, 0]), np.maximum(wald[:, 1], percentile[:, 1])])


def rejected_intervals(drawn) -> dict[str, np.ndarray]:
    """Variants measured and rejected (docs/method.md 6.9), from a Monte Carlo result's estimates, delta-method
    errors and t draws, on the test scale ``g``: the draws' percentile interval alone, re-centred on the estimate
    (``g(estimate) + g(percentile) - g(median)``), the basic bootstrap interval (``2 g(estimate) - g(percentile)``),
    and the t interval around the shift-corrected estimate ``2 g(estimate) - g(median)`` alone."""
    bounds, scale = drawn.bounds, drawn.scale
    z = to_scale(drawn.estimates, bounds, scale)
    z_error = scaled_errors(drawn.estimates, np.sqrt(np.diag(drawn.delta_covariance)), bounds, scale)
    on_scale = to_scale(percentile_bounds(drawn.draws, 0.95).T, bounds, scale).T
    median = to_scale(np.median(drawn.draws, axis=0), bounds, scale)
    q = quantile(0.975, drawn.df)
    with np.errstate(invalid="ignore"):
        return {"percentile": percentile_bounds(drawn.draws, 0.95),
                "re-centred": from_scale((z + (on_scale - median[:, None]).T).T, bounds, scale),
                "basic": from_scale((2 * z - on_scale[:, ::-1].T).T, bounds, scale),
                "corrected": from_scale(np.column_stack([2 * z - median - q * z_error, 2 * z - median + q * z_error]),
                                        bounds, scale)}


class Replication:
    """One estimate as the library makes it by default, and what the previous rule made of the same draws.

    ``method="auto"`` draws normal vectors first, then (for Monte Carlo) t vectors, from one generator:
    ``method="monte carlo"`` from a copy of that generator repeats them, with ``use_t=False`` the normal
    draws that "auto" judged by. The previous rule kept the delta method exactly where this release keeps
    it or extends it (the standard errors agreed); elsewhere its interval was the hull of the Wald and the
    percentile interval.
    """

    def __init__(self, words, statistic: Statistic, n_draws: int, generator: np.random.Generator):
        twin = copy.deepcopy(generator)
        self.result = estimate_resolved(words, statistic, random_state=generator, n_draws=n_draws)
        normal = estimate_resolved(words, statistic, method="monte carlo", use_t=False, n_draws=n_draws,
                                   random_state=copy.deepcopy(twin))
        self.drawn = self.result if self.result.draws is not None else estimate_resolved(
            words, statistic, method="monte carlo", n_draws=n_draws, random_state=twin)
        result, bounds = self.result, self.result.bounds
        self.delta_errors = np.sqrt(np.diag(normal.delta_covariance))
        self.shift = median_shift(result.estimates, normal.draws, scaled_errors(result.estimates, self.delta_errors,
                                                                                 bounds, "bounded"), bounds, "bounded")
        self.previous_kept_delta = result.method == "delta method" or result.draws_interval == "extended"
        wald = intervals(result.estimates, scaled_errors(result.estimates, self.delta_errors, bounds, "bounded"),
                         result.df, bounds, "bounded", 0.95)
        percentile = percentile_bounds(self.drawn.draws, 0.95)
        self.previous = wald if self.previous_kept_delta else previous_interval(
            result.estimates, self.delta_errors, result.df, self.drawn.draws, bounds)
        self.previous_apart = not self.previous_kept_delta and bool(
            ((wald[:, 0] > percentile[:, 1]) | (wald[:, 1] < percentile[:, 0])).any())

    @property
    def kind(self) -> str:
        return "delta" if self.result.method == "delta method" else self.result.draws_interval


def coverage_part(args) -> None:
    dim = 30
    X = glovev_ext.CooccurrenceVectorizer(progress=False).fit_transform(
        glovev_ext.load_default_corpus(max_documents=6000))
    model = glovev_ext.GloVeVEstimator(dim, epochs=10, random_state=0, n_jobs=1, conditioning="paper", point_estimate="trained",
                                       progress=False).fit(X)
    words = list(X.words)
    spare = model.n_contexts_ - dim
    alphabetic = np.array([w.isalpha() for w in words])
    plain = alphabetic & ~model.pseudo_inverse_
    frequent = [words[i] for i in np.argsort(-model.n_contexts_) if alphabetic[i]][:4]
    middle = [words[i] for i in np.flatnonzero((spare > 30) & (spare <= 60) & plain)][:3]
    rare = [words[i] for i in np.flatnonzero((spare > 0) & (spare <= 10) & plain)][:3]
    pseudo = [words[i] for i in np.flatnonzero(model.pseudo_inverse_ & alphabetic)][:3]
    groups = {"frequent": glovev_ext.cosine_statistic([(frequent[0], frequent[1]), (frequent[2], frequent[3])]),
              "31-60 spare contexts": glovev_ext.cosine_statistic([(middle[0], frequent[0]), (middle[1], middle[2])]),
              "rare": glovev_ext.cosine_statistic([(rare[0], frequent[0]), (rare[1], rare[2])]),
              "pseudo-inverse": glovev_ext.cosine_statistic([(pseudo[0], frequent[0]), (pseudo[1], pseudo[2])]),
              "mixed (WEAT)": weat_statistic([frequent[0], rare[0], pseudo[0]],
                                                        [frequent[1], rare[1], pseudo[1]], [frequent[2], rare[2]],
                                                        [frequent[3], pseudo[2]]),
              "mixed (cosine bias)": cosine_bias_statistic([frequent[0], rare[0]], [frequent[1], pseudo[0]],
                                                                      [frequent[2], rare[1], pseudo[1]])}
    position = {w: i for i, w in enumerate(words)}
    rows = {w: position[w] for statistic in groups.values() for w in statistic.keys}
    simulator = RowSimulator(WordFitter(X, model.context_embedding_, model.context_bias_, 100.0, 0.75, "exact"),
                             model.bias_, rows)
    print(f"coverage by simulation with known truth: D={dim}, {args.replications} replications, {args.n_draws} draws, "
          f"seed 7; thresholds: standard errors within {AUTO_TOLERANCE:.0%}, draws within {SHIFT_TOLERANCE} SE")
    names = ("this release", "previous", "percentile", "re-centred", "basic", "corrected")
    table = []
    for label, statistic in groups.items():
        started = time.perf_counter()
        truth = statistic.value(np.vstack([simulator.truth[key] for key in statistic.keys]))
        generator = np.random.default_rng(7)
        covered, widths = {name: [] for name in names}, {name: [] for name in names}
        kinds: dict[str, int] = {}
        apart, shifts, truth_gaps = 0, [], []
        for _ in range(args.replications):
            one = Replication(simulator.draw(statistic.keys, generator), statistic, args.n_draws, generator)
            kinds[one.kind] = kinds.get(one.kind, 0) + 1
            apart += one.previous_apart
            shifts.append(one.shift)
            estimates, bounds = one.result.estimates, one.result.bounds
            truth_gaps.append((to_scale(truth, bounds, "bounded") - to_scale(estimates, bounds, "bounded"))
                              / scaled_errors(estimates, one.delta_errors, bounds, "bounded"))
            for name, interval in {"this release": one.result.conf_int(), "previous": one.previous,
                                   **rejected_intervals(one.drawn)}.items():
                covered[name].append((interval[:, 0] <= truth) & (truth <= interval[:, 1]))
                widths[name].append(interval[:, 1] - interval[:, 0])
        for k, name in enumerate(statistic.names):
            row = {"statistic": name, "words": label, "truth": truth[k],
                   "mean shift": float(np.mean(np.array(shifts)[:, k])),
                   "truth - estimate": float(np.mean(np.array(truth_gaps)[:, k]))}
            for kind in names[:2]:
                row[f"{kind}: coverage"] = float(np.mean(np.array(covered[kind])[:, k]))
                row[f"{kind}: width"] = float(np.median(np.array(widths[kind])[:, k]))
            for kind in names[2:]:
                row[kind] = float(np.mean(np.array(covered[kind])[:, k]))
            row["this release's intervals"] = ", ".join(f"{key} {value}" for key, value in sorted(kinds.items()))
            row["previous pieces apart"] = apart
            row["seconds"] = time.perf_counter() - started
            table.append(row)
            print(pd.DataFrame(table[-1:]).to_string(index=False, header=len(table) == 1,
                                                     float_format=lambda x: f"{x:.3f}"), flush=True)


def spearman_part(args, kv, model, cooccurrence) -> None:
    """Spearman's rho with WordSim-353 by simulation with known truth on the default fit."""
    words = list(cooccurrence.words)
    position = {w: i for i, w in enumerate(words)}
    rows = read_word_pairs(datapath("wordsim353.tsv"))
    usable = {w for w in position if model.covariance_defined_[position[w]]}
    kept = [(a, b, s) for a, b, s in rows if a in usable and b in usable]
    keys = tuple(dict.fromkeys(w for a, b, _ in kept for w in (a, b)))
    simulator = RowSimulator(WordFitter(cooccurrence, model.context_embedding_, model.context_bias_, model.x_max,
                                        model.alpha, "exact"), model.bias_, {w: position[w] for w in keys})
    index = {key: i for i, key in enumerate(keys)}
    left, right = np.array([index[a] for a, _, _ in kept]), np.array([index[b] for _, b, _ in kept])
    human = rankdata([score for *_, score in kept])

    def rho(vectors):
        return rank_correlation(cosines(vectors, left, right), human)

    truth = float(rho(np.vstack([simulator.truth[key] for key in keys])))
    generator = np.random.default_rng(5)
    results, previous = [], []
    started = time.perf_counter()
    for _ in range(args.spearman_replications):
        refit = simulator.draw(keys, generator)
        estimate = float(rho(refit.vectors))
        draws = draw_values(refit, rho, 500, generator)
        result = glovev_ext.stats.InferenceResult.wald(
            "rho", estimate, float(draws.std(ddof=1)), method="Monte Carlo", draws=draws, bounds=(-1.0, 1.0),
            scale="bounded", draws_interval="extended")
        results.append(result)
        previous.append(previous_interval(np.array([estimate]), result.std_error, np.inf, draws[:, None],
                                          bounds_of((-1.0, 1.0), 1))[0])
    estimates = np.array([r.estimate for r in results])
    centre = float(np.median(estimates))
    print(f"\nSpearman with WordSim-353 by simulation with known truth (default fit, {len(kept)} pairs, "
          f"{args.spearman_replications} refits, 500 draws each, seed 5; {time.perf_counter() - started:.0f} s): "
          f"noise-free rho {truth:.3f}; estimates: median {centre:.3f}, standard deviation {estimates.std():.3f}; "
          f"draws' attenuation: median {np.median([r.attenuation for r in results]):.3f}")
    for name, bounds in (("this release (extended)", [r.conf_int() for r in results]),
                         ("previous (hull of Wald and percentile)", previous)):
        bounds = np.array(bounds)
        print(f"  {name}: holds the noise-free rho {np.mean((bounds[:, 0] <= truth) & (truth <= bounds[:, 1])):.3f}, "
              f"the estimator's median {np.mean((bounds[:, 0] <= centre) & (centre <= bounds[:, 1])):.3f}, "
              f"its own estimate {np.mean((bounds[:, 0] <= estimates) & (estimates <= bounds[:, 1])):.3f}; "
              f"median width {np.median(bounds[:, 1] - bounds[:, 0]):.3f}")


def default_part(args, kv) -> None:
    usable = [w for w in kv.index_to_key if kv.has_covariance(w) and w.isalpha()][:1000]
    generator = np.random.default_rng(0)
    counts = {"kept on delta by the previous rule": 0, "of them shifted > 0.25 SE": 0, "of them shifted > 1 SE": 0,
              "kept on delta now": 0, "of them shifted > 0.25 SE now": 0, "extended": 0, "union": 0}
    for k in range(args.pairs):
        a, b = generator.choice(len(usable), 2, replace=False)
        statistic = glovev_ext.cosine_statistic([(usable[a], usable[b])])
        one = Replication(resolve(kv, statistic.keys), statistic, 2000, np.random.default_rng(k))
        shifted = abs(one.shift[0])
        if one.previous_kept_delta:
            counts["kept on delta by the previous rule"] += 1
            counts["of them shifted > 0.25 SE"] += int(shifted > SHIFT_TOLERANCE)
            counts["of them shifted > 1 SE"] += int(shifted > 1)
        if one.kind == "delta":
            counts["kept on delta now"] += 1
            counts["of them shifted > 0.25 SE now"] += int(shifted > SHIFT_TOLERANCE)
        else:
            counts[one.kind] += 1
    print(f"\n{args.pairs} random pairs of the 1,000 most frequent words with a covariance (default fit, seed 0, 2000 "
          f"draws; shifts on atanh): " + "; ".join(f"{key} {value}" for key, value in counts.items()))
    unit = bounds_of((-1.0, 1.0), 1)
    for name in ("wordsim353.tsv", "simlex999.txt"):
        result = kv.evaluate_word_pairs_with_uncertainty(datapath(name), n_draws=500, random_state=0, missing="drop")
        estimate = np.array([result.estimate])
        old = previous_interval(estimate, result.std_error, np.inf, result.draws[:, None], unit)[0]
        wald = intervals(estimate, scaled_errors(estimate, result.std_error, unit, "bounded"), np.inf, unit,
                         "bounded", 0.95)[0]
        low, high = result.percentile_interval()
        apart = wald[0] > high or wald[1] < low
        new = result.conf_int()
        print(f"{name}: rho {result.estimate:.3f}, draws' median {result.estimate - result.attenuation:.3f} "
              f"(attenuation {result.attenuation:.3f}, {result.attenuation / result.std_error:.1f} SD), draws' 95 % "
              f"[{low:.3f}, {high:.3f}]; previous [{old[0]:.3f}, {old[1]:.3f}] "
              f"(pieces {'apart' if apart else 'meet'}); "
              f"this release [{new[0]:.3f}, {new[1]:.3f}] (holds the estimate: {new[0] <= result.estimate <= new[1]})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=2000)
    parser.add_argument("--n-draws", type=int, default=1000)
    parser.add_argument("--spearman-replications", type=int, default=200)
    parser.add_argument("--pairs", type=int, default=30)
    parser.add_argument("--model", help="a folder saved by glovev fit (default: fit the default model here)")
    parser.add_argument("--parts", nargs="+", choices=["coverage", "spearman", "default"],
                        default=["coverage", "spearman", "default"])
    args = parser.parse_args()
    with threadpool_limits(limits=1, user_api="blas"):
        if "coverage" in args.parts:
            coverage_part(args)
        if "spearman" in args.parts or ("default" in args.parts and args.model is None):
            fitted = glovev_ext.fit_corpus(glovev_ext.load_default_corpus(),
                                           estimator=glovev_ext.GloVeVEstimator(random_state=0,
                                                                                point_estimate="trained"),
                                           progress=False)
            kv = fitted.keyed_vectors
            if "spearman" in args.parts:
                spearman_part(args, kv, fitted.estimator, fitted.cooccurrence)
        if "default" in args.parts:
            default_part(args, glovev_ext.load_model(args.model)[0] if args.model else kv)


if __name__ == "__main__":
    main()
