"""The premise of GloVe-V: which centre vectors should the covariances describe? (docs/method.md section 6.6)

Usage: python bench/premise.py [--corpora embedded gutenberg_us_10m] [--n-components 50 100]
                               [--epochs 25 10] [--pairs 100] [--replications 500]

For each corpus (the second falls back to the embedded one when ../shared/data is absent) and D,
AdaGrad trains GloVe (``--epochs``, one per corpus), then three point estimates are compared
(``GloVeVEstimator(point_estimate=...)`` on the same trained parameters):

- trained: the AdaGrad vectors (the paper's);
- optimum: each vector replaced by its weighted-least-squares optimum given C, b, c;
- alternating: two exact alternating sweeps after AdaGrad, ending with the optimum.

Printed per estimate: GloVe cost per nonzero; WordSim-353 and SimLex-999 Spearman correlations and
Google analogy accuracy (gensim's bundled files, 30,000 most frequent words) of the centre vectors;
the median Mahalanobis distance of the vectors from their optimum; of the 20 pairs of the 40 most
frequent words, how many keep the delta method under ``method="auto"`` and the largest gap between
their delta and 4,000-draw Monte Carlo standard errors; the median width of the cosine intervals of
``--pairs`` random pairs; and the coverage of cosine intervals for two frequent pairs and one pair
with a rare word, by simulation (``--replications`` refits; the truth is the optimum given C, b, c,
so the trained vectors' intervals cannot be simulated this way and are left out).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _data import corpus
from gensim.test.utils import datapath

import glovev_ext
from glovev_ext.covariance.wls import WordFitter
from glovev_ext.glove import glove_cost
from glovev_ext.stats import RowSimulator, interval_coverage

ESTIMATES = ("trained", "optimum", "alternating")


def quality(kv) -> tuple[float, float, float]:
    """WordSim-353 and SimLex-999 Spearman rho, Google analogy accuracy."""
    wordsim = kv.evaluate_word_pairs(datapath("wordsim353.tsv"))[1][0]
    simlex = kv.evaluate_word_pairs(datapath("simlex999.txt"))[1][0]
    analogy = kv.evaluate_word_analogies(datapath("questions-words.txt"), restrict_vocab=30000)[0]
    return float(wordsim), float(simlex), float(analogy)


def delta_agreement(kv, words: list[str]) -> tuple[int, float]:
    """Pairs kept on the delta method by method='auto', and their largest gap to 4,000 Monte Carlo draws."""
    kept, gaps = 0, []
    for k, (a, b) in enumerate(zip(words[::2], words[1::2])):
        result = kv.similarity_test(a, b, random_state=k)
        if result.method == "delta method":
            kept += 1
            drawn = kv.similarity_test(a, b, method="monte carlo", n_draws=4000, random_state=k)
            gaps.append(abs(result.std_error / drawn.draws_std_error - 1))
    return kept, max(gaps, default=float("nan"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", nargs="+", default=["embedded", "gutenberg_us_10m"])
    parser.add_argument("--n-components", type=int, nargs="+", default=[50, 100])
    parser.add_argument("--epochs", type=int, nargs="+", default=[25, 10], help="AdaGrad epochs, one per corpus")
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--replications", type=int, default=500)
    args = parser.parse_args()
    for name, epochs in zip(args.corpora, args.epochs):
        label, documents = (("embedded corpus", glovev_ext.load_default_corpus()) if name == "embedded"
                            else corpus(name))
        X = glovev_ext.CooccurrenceVectorizer(progress=False).fit_transform(documents)
        words = list(X.words)
        for dim in args.n_components:
            started = time.perf_counter()
            trained = glovev_ext.glove.train_glove(X, dim, epochs=epochs, random_state=0, progress=False)
            print(f"\n{label}: {X.shape[0]:,} words, {X.nnz:,} nonzeros; D={dim}, {epochs} AdaGrad epochs "
                  f"[{time.perf_counter() - started:.0f} s]", flush=True)
            for estimate in ESTIMATES:
                started = time.perf_counter()
                model = glovev_ext.GloVeVEstimator(dim, pretrained=trained, point_estimate=estimate,
                                                   progress=False).fit(X)
                kv = glovev_ext.KeyedVectorsWithVariance.from_estimator(model)
                cost = glove_cost(X, model.embedding_, model.context_embedding_, model.bias_, model.context_bias_)
                wordsim, simlex, analogy = quality(kv)
                distance = model.optimum_distance_  # 0 for the optimum, by construction
                usable = [w for w in kv.index_to_key if kv.has_covariance(w)]
                kept, gap = delta_agreement(kv, [w for w in usable if w.isalpha()][:40])
                chosen = np.random.default_rng(0).choice(len(usable), size=(args.pairs, 2))
                widths = [np.diff(kv.similarity_test(usable[a], usable[b], random_state=k, n_draws=500).conf_int())[0]
                          for k, (a, b) in enumerate(chosen) if a != b]
                line = (f"  {estimate:<11} cost/nnz {cost / X.nnz:.4f}; WS353 {wordsim:.3f} SimLex {simlex:.3f} "
                        f"Google {analogy:.3f}; median |w|: {np.median(np.linalg.norm(model.embedding_, axis=1)):.2f};"
                        f" distance from optimum (median) {np.nanmedian(distance):.2f}; delta kept for {kept}/20 "
                        f"frequent pairs (largest gap {gap:.1%}); random-pair interval width (median) "
                        f"{np.median(widths):.2f}")
                if estimate != "trained":
                    line += f"; coverage {simulated_coverage(X, model, words, usable, args.replications)}"
                print(line + f" [{time.perf_counter() - started:.0f} s]", flush=True)


def simulated_coverage(X, model, words: list[str], usable: list[str], replications: int) -> str:
    """Coverage of cosine intervals: two pairs of frequent words, one frequent word with a rare one."""
    dim = model.embedding_.shape[1]
    spare = model.n_contexts_ - dim
    position = {w: i for i, w in enumerate(words)}
    frequent = [w for w in usable if w.isalpha()][:4]
    rare = next(w for w in usable if w.isalpha() and 0 < spare[position[w]] <= 10)
    rows = {w: position[w] for w in [*frequent, rare]}
    simulator = RowSimulator(WordFitter(X, model.context_embedding_, model.context_bias_, 100.0, 0.75), model.bias_,
                             rows)
    statistic = glovev_ext.cosine_statistic([(frequent[0], frequent[1]), (frequent[2], frequent[3]),
                                             (rare, frequent[0])])
    result = interval_coverage(simulator, statistic, replications, random_state=5, n_draws=500)
    return ", ".join(f"{name} {value:.3f}" for name, value in zip(result.names, result.coverage))


if __name__ == "__main__":
    main()
