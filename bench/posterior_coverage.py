"""Coverage of point_estimate="posterior"'s intervals by simulation with known truth, by how many contexts a word has.

Usage: python bench/posterior_coverage.py [--documents 6000] [--n-components 30] [--epochs 10]
                                          [--replications 2000] [--strength 1]

Fits ``GloVeVEstimator(point_estimate="posterior", n_sweeps=0)`` on the first documents of the
embedded corpus, then, holding the fitted context vectors, biases and prior fixed, draws rows of
chosen words from the GloVe-V model and refits each as the posterior a user would get
(``glovev_ext.stats.RowSimulator(..., prior=model.prior_)``: ``s2`` re-estimated where the row has
more than D contexts). Words: frequent (the most contexts), ``|K| - D`` in 11-50, in 1-10, and
``|K| <= D`` (no covariance without the prior). Three truths:

- fixed at the fitted posterior mean (a parametric bootstrap of the fit);
- fixed at the word's unregularised optimum where it has one (the long vectors of rare words: the
  hardest case for shrinkage);
- drawn afresh every 40 replications (50 truths in all) from ``N(mu, T)``, the spread of vectors the
  data give (the prior at strength 1, where the posterior is calibrated by construction; a stronger
  prior claims vectors are more alike than that, and this truth shows what it costs).

Prints the coverage of 95 % intervals (default inference: ``method="auto"``, t, bounded scale) of two
words' coordinates and of a cosine with a frequent word, and their median widths. About 10 minutes on
2 cores.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import glovev_ext
from glovev_ext.covariance.wls import WordFitter
from glovev_ext.stats import RowSimulator, coordinate_statistic, interval_coverage

TRUTH_BLOCK = 40  # replications per truth drawn from N(mu, T)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=6000)
    parser.add_argument("--n-components", type=int, default=30)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--replications", type=int, default=2000)
    parser.add_argument("--strength", type=float, default=1.0, help="prior_strength")
    parser.add_argument("--n-draws", type=int, default=1000, help="Monte Carlo draws of method='auto'")
    args = parser.parse_args()
    dim = args.n_components
    X = glovev_ext.CooccurrenceVectorizer(progress=False).fit_transform(
        glovev_ext.load_default_corpus(max_documents=args.documents))
    model = glovev_ext.GloVeVEstimator(dim, epochs=args.epochs, random_state=0, point_estimate="posterior",
                                       n_sweeps=0, prior_strength=args.strength, progress=False).fit(X)
    words = list(X.words)
    spare = model.n_contexts_ - dim
    alphabetic = np.array([w.isalpha() for w in words])
    groups = {"frequent": [words[i] for i in np.argsort(-model.n_contexts_) if alphabetic[i]][:3],
              "|K|-D 11-50": _pick(words, (spare > 10) & (spare <= 50) & alphabetic),
              "|K|-D 1-10": _pick(words, (spare > 0) & (spare <= 10) & alphabetic),
              "|K| <= D": _pick(words, (spare <= 0) & (model.n_contexts_ >= 2) & alphabetic)}
    anchor = groups["frequent"][0]
    print(f"D={dim}, {args.epochs} epochs, {X.shape[0]:,} words, prior strength {args.strength:g} from "
          f"{model.prior_.n_rows} words; prior share of precision, median by group: "
          + ", ".join(f"{name} {np.median([model.prior_share_[words.index(w)] for w in chosen]):.2f}"
                      for name, chosen in groups.items()))
    fitter = WordFitter(X, model.context_embedding_, model.context_bias_, 100.0, 0.75)
    position = {w: i for i, w in enumerate(words)}
    rows = []
    for name, chosen in groups.items():
        targets = chosen[1:3] if name == "frequent" else chosen[:2]
        statistics = {"coordinates": [coordinate_statistic(w, dim) for w in targets],
                      "cosine": [glovev_ext.cosine_statistic([(targets[0], anchor)])]}
        for truth_name in ("posterior mean", "optimum", "drawn from N(mu, T)"):
            if truth_name == "optimum" and not np.isfinite(model.optimum_[[position[w] for w in targets]]).all():
                continue
            started = time.perf_counter()
            for kind, statistic_list in statistics.items():
                covered, widths = _coverage(model, fitter, position, [*targets, anchor], statistic_list, truth_name,
                                            args)
                rows.append({"words": name, "truth": truth_name, "statistic": kind, "coverage": covered,
                             "median width": widths})
            print(f"  {name}, truth {truth_name}: {time.perf_counter() - started:.0f} s", flush=True)
    frame = pd.DataFrame(rows).set_index(["words", "truth", "statistic"])
    print(frame.to_string(float_format=lambda x: f"{x:.3f}"))


def _pick(words: list[str], mask: np.ndarray) -> list[str]:
    return [words[i] for i in np.flatnonzero(mask)][:2]


def _coverage(model, fitter, position, keys, statistic_list, truth_name, args) -> tuple[float, float]:
    """Mean coverage and median width over the statistics' values and the replications."""
    generator = np.random.default_rng(0)
    center = model.embedding_.copy()
    rows = {w: position[w] for w in keys}
    if truth_name == "optimum":
        for w in keys[:-1]:
            center[position[w]] = model.optimum_[position[w]]
    blocks = (args.replications // TRUTH_BLOCK if truth_name == "drawn from N(mu, T)" else 1)
    covered, widths = [], []
    for _ in range(blocks):
        if truth_name == "drawn from N(mu, T)":
            for w in keys[:-1]:
                center[position[w]] = generator.multivariate_normal(model.prior_.mean, model.prior_.covariance)
        simulator = RowSimulator(fitter, model.bias_, rows, prior=model.prior_, center_vectors=center,
                                 sigma2=model.sigma2_)
        for statistic in statistic_list:
            result = interval_coverage(simulator, statistic, args.replications // blocks, random_state=generator,
                                       n_draws=args.n_draws)
            covered.append(result.coverage)
            widths.append(result.median_width)
    return float(np.mean(np.concatenate(covered))), float(np.median(np.concatenate(widths)))


if __name__ == "__main__":
    main()
