"""Tutorial 5: model evaluation with uncertainty -- WordSim-353 and SimLex-999 with Monte Carlo intervals.
=======================================================================================================

A benchmark score is a statistic of the embedding like any other: each Monte Carlo draw of the
vectors gives a Spearman correlation, and their spread is the score's uncertainty given the
corpus. Pairs with a word out of the vocabulary or without covariance are dropped and counted.
Benchmarks: ../shared/data/wordsim353 and simlex999, else gensim's bundled WordSim-353 and
SimLex-999.
Corpus and parameters: those of tutorial 1.
Run: python tutorials/05_evaluation.py  (about a minute once the model exists).
Figure: figures/evaluation.png.
"""

import time

from _common import QUICK, fitted_model, save_figure, shared_path
from gensim.test.utils import datapath

from glovev_ext.plots import plot_results

start = time.perf_counter()
kv = fitted_model()
benchmarks = {
    "WordSim-353": shared_path("wordsim353/wordsim353.tsv") or datapath("wordsim353.tsv"),
    "SimLex-999": shared_path("simlex999/simlex999.txt") or datapath("simlex999.txt"),
}
results = []
for name, path in benchmarks.items():
    result = kv.evaluate_word_pairs_with_uncertainty(path, n_draws=200 if QUICK else 1000, random_state=0,
                                                     missing="drop")
    low, high = result.conf_int()
    draw_low, draw_high = result.percentile_interval()
    print(f"{name}: Spearman {result.estimate:.3f}, 95 % interval [{low:.3f}, {high:.3f}] (Monte Carlo standard "
          f"error {result.std_error:.3f}); {len(result.dropped)} pairs dropped, {len(result.words)} words used")
    print(f"   the draws themselves span [{draw_low:.3f}, {draw_high:.3f}] around a mean of {result.draws.mean():.3f}: "
          "noise in the vectors pulls correlations toward 0")
    results.append(result)
save_figure(plot_results(results, labels=list(benchmarks), xlabel="Spearman correlation with human ratings",
                         title="Word-similarity benchmarks, 95 % Monte Carlo intervals"), "evaluation.png")
print(f"done in {time.perf_counter() - start:.0f} s")
