"""Coverage of 95 % intervals by simulation with known truth, for the default recipe and the paper's.

Usage: python bench/coverage.py [--documents 6000] [--n-components 30] [--epochs 10] [--replications 2000]

Fits GloVe-V on the first documents of the embedded corpus, then, holding the fitted context
vectors and biases fixed, draws rows of chosen words from the GloVe-V model (truth: each word's
weighted-least-squares vector) and refits them (``glovev_ext.stats.RowSimulator``). For each
statistic it prints the coverage of 95 % intervals and their median width under:

- default: exact inverse (``conditioning="exact"``), ``method="auto"``, t, bounded scale;
- paper: the paper's pseudo-inverse, delta method, normal, linear scale.

Words: frequent (the most contexts), rare (``|K| - D <= 10``) and those the paper's rule sends to
the pseudo-inverse. docs/method.md section 6 quotes a run of this script.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import glovev_ext
from glovev_ext.covariance.wls import WordFitter
from glovev_ext.stats import RowSimulator, coordinate_statistic, interval_coverage
from glovev_ext.stats import weat_statistic
from glovev_ext.stats import cosine_bias_statistic

RECIPES = {"default": ("exact", {}),
           "paper": ("paper", {"method": "delta", "use_t": False, "scale": "linear"})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=6000)
    parser.add_argument("--n-components", type=int, default=30)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--replications", type=int, default=2000)
    parser.add_argument("--n-draws", type=int, default=1000, help="Monte Carlo draws of method='auto'")
    parser.add_argument("--recipes", nargs="+", choices=list(RECIPES), default=list(RECIPES))
    args = parser.parse_args()
    dim = args.n_components
    X = glovev_ext.CooccurrenceVectorizer(progress=False).fit_transform(
        glovev_ext.load_default_corpus(max_documents=args.documents))
    model = glovev_ext.GloVeVEstimator(dim, epochs=args.epochs, random_state=0, n_jobs=1, conditioning="paper",
                                       point_estimate="trained",
                                       progress=False).fit(X)
    words = list(X.words)
    spare = model.n_contexts_ - dim
    alphabetic = np.array([w.isalpha() for w in words])
    frequent = [words[i] for i in np.argsort(-model.n_contexts_) if alphabetic[i]][:4]
    rare = [words[i] for i in np.flatnonzero((spare > 0) & (spare <= 10) & alphabetic & ~model.pseudo_inverse_)][:4]
    pseudo = [words[i] for i in np.flatnonzero(model.pseudo_inverse_ & alphabetic)][:4]
    print(f"D={dim}, {args.epochs} epochs, {X.shape[0]:,} words; paper's pseudo-inverse: "
          f"{int(model.pseudo_inverse_.sum())} words; |K|-D <= 10: {int(((spare > 0) & (spare <= 10)).sum())}")
    print(f"frequent: {frequent}; rare: {rare}; pseudo-inverse: {pseudo}")
    statistics = {
        "coordinates, frequent": [coordinate_statistic(w, dim) for w in frequent[:2]],
        "coordinates, rare": [coordinate_statistic(w, dim) for w in rare[:2]],
        "coordinates, pseudo-inverse": [coordinate_statistic(w, dim) for w in pseudo[:2]],
        "cosine, frequent": [glovev_ext.cosine_statistic([(frequent[0], frequent[1]), (frequent[2], frequent[3])])],
        "cosine, rare": [glovev_ext.cosine_statistic([(rare[0], frequent[0]), (rare[1], rare[2])])],
        "cosine, pseudo-inverse": [glovev_ext.cosine_statistic([(pseudo[0], frequent[0]), (pseudo[1], pseudo[2])])],
        "WEAT, mixed": [weat_statistic([frequent[0], rare[0], pseudo[0]], [frequent[1], rare[1], pseudo[1]],
                                                  [frequent[2], rare[2]], [frequent[3], pseudo[2]])],
        "cosine bias, mixed": [cosine_bias_statistic([frequent[0], rare[0]], [frequent[1], pseudo[0]],
                                                                [frequent[2], rare[1], pseudo[1]])],
    }
    position = {w: i for i, w in enumerate(words)}
    rows = {w: position[w] for w in {*frequent, *rare, *pseudo}}
    table = []
    for recipe in args.recipes:
        conditioning, options = RECIPES[recipe]
        fitter = WordFitter(X, model.context_embedding_, model.context_bias_, 100.0, 0.75, conditioning)
        simulator = RowSimulator(fitter, model.bias_, rows)
        for label, group in statistics.items():
            started = time.perf_counter()
            results = [interval_coverage(simulator, s, args.replications, random_state=7, n_draws=args.n_draws,
                                         **options) for s in group]
            coverage = np.concatenate([r.coverage for r in results])
            width = np.concatenate([r.median_width for r in results])
            names = [n for r in results for n in r.names]
            methods = {k: sum(r.methods.get(k, 0) for r in results) for k in ("delta method", "Monte Carlo")}
            worst = int(np.argmin(coverage))
            table.append({"recipe": recipe, "statistic": label, "mean coverage": coverage.mean(),
                          "worst coverage": coverage[worst], "worst value": names[worst],
                          "median width": float(np.median(width)), "Monte Carlo share":
                          methods["Monte Carlo"] / max(1, sum(methods.values())),
                          "seconds": time.perf_counter() - started})
            print(pd.DataFrame(table[-1:]).to_string(index=False, header=len(table) == 1,
                                                     float_format=lambda x: f"{x:.3f}"), flush=True)


if __name__ == "__main__":
    main()
