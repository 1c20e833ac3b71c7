"""point_estimate="posterior": quality, informativeness and cost by prior strength and sweeps (docs/method.md 6.11-6.12).

Usage: python bench/prior_sweeps.py [--corpus gutenberg_us_10m] [--n-components 100] [--epochs 10]
                                    [--gammas 1 3 10] [--sweeps 0 1] [--pairs 1000]

Trains GloVe with AdaGrad once, then fits ``GloVeVEstimator(point_estimate=..., pretrained=...)`` on
the same trained parameters: the paper's recipe (``"trained"``) and, for every prior strength
``gamma`` and number of regularised sweeps, ``"posterior"``. Prints for each the centre vectors'
WordSim-353 and SimLex-999 Spearman and Google analogy accuracy (gensim's files, 30,000 most frequent
words), the GloVe cost per nonzero, the median vector norm; how informative the intervals are: the
median 95 % half-width of the cosine of ``--pairs`` random pairs of words with a covariance, and the
share of WordSim-353 and SimLex-999 pairs (both words with a covariance) whose half-width is below
0.1 (delta method, bounded scale, vectorised); the share of words whose posterior is mostly the
prior's (``prior_share_ > 0.5``); and the wall time of the recipe (training excluded) with the whole
fit's ratio to AdaGrad's. About 1-2 minutes per line on gutenberg_us_10m at D = 100 on 2 cores (the
embedded corpus when ../shared/data is absent).
"""

from __future__ import annotations

import argparse
import csv
import time

import numpy as np
from _data import corpus
from gensim.test.utils import datapath

import glovev_ext
from glovev_ext.glove import glove_cost


def quality(kv) -> str:
    wordsim = kv.evaluate_word_pairs(datapath("wordsim353.tsv"))[1][0]
    simlex = kv.evaluate_word_pairs(datapath("simlex999.txt"))[1][0]
    analogy = kv.evaluate_word_analogies(datapath("questions-words.txt"), restrict_vocab=30000)[0]
    return f"WS-353 {wordsim:.3f}  SimLex {simlex:.3f}  Google {analogy:.3f}"


def benchmark_pairs(path: str, kv) -> list[tuple[str, str]]:
    """The pairs of a similarity file (tab-separated, '#' comments) whose two words have a covariance."""
    pairs = []
    with open(path, encoding="utf-8") as stream:
        for row in csv.reader(stream, delimiter="\t"):
            if not row or row[0].startswith("#") or len(row) < 3:
                continue
            a, b = row[0].lower(), row[1].lower()
            if a != b and all(w in kv.key_to_index and kv.has_covariance(w) for w in (a, b)):
                pairs.append((a, b))
    return pairs


def half_widths(kv, pairs) -> np.ndarray:
    interval = kv.similarity_tests(pairs, method="delta").conf_int()
    return (interval[:, 1] - interval[:, 0]) / 2


def band_half_widths(kv, edges=(5, 100, 300, 1_000, 3_000), n_pairs: int = 200) -> str:
    """The median 95 % half-width of a cosine for up to ``n_pairs`` random pairs of words of each band of pooled count
    (lower ``edges``), seeded."""
    usable = [w for w in kv.index_to_key if kv.has_covariance(w)]
    counts = np.array([kv.get_vecattr(w, "count") for w in usable])
    generator = np.random.default_rng(0)
    parts = []
    for low, high in zip(edges, [*edges[1:], np.inf]):
        members = np.flatnonzero((counts >= low) & (counts < high))
        if members.size < 2:
            continue
        chosen = {tuple(sorted(generator.choice(members, 2, replace=False))) for _ in range(n_pairs)}
        widths = half_widths(kv, [(usable[a], usable[b]) for a, b in sorted(chosen)])
        parts.append(f"{low:,}{'+' if np.isinf(high) else f'-{int(high) - 1:,}'}: {np.median(widths):.3f}")
    return "median 95 % half-width of a random pair's cosine by band: " + ", ".join(parts)


def informativeness(kv, n_pairs: int) -> str:
    usable = [w for w in kv.index_to_key if kv.has_covariance(w)]
    chosen = np.random.default_rng(0).choice(len(usable), size=(n_pairs, 2))
    random_pairs = [(usable[a], usable[b]) for a, b in chosen if a != b]
    parts = [f"median half-width {np.median(half_widths(kv, random_pairs)):.2f}"]
    for name, path in (("WS", datapath("wordsim353.tsv")), ("SimLex", datapath("simlex999.txt"))):
        widths = half_widths(kv, benchmark_pairs(path, kv))
        parts.append(f"{name} < 0.1: {np.mean(widths < 0.1):.0%} of {widths.size}")
    return "; ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="gutenberg_us_10m", choices=("embedded", "gutenberg_us_10m",
                                                                         "gutenberg_us_31m"))
    parser.add_argument("--n-components", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--gammas", type=float, nargs="+", default=[1.0, 3.0, 10.0])
    parser.add_argument("--sweeps", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--pairs", type=int, default=1000)
    options = parser.parse_args()
    name, documents = (("embedded corpus", glovev_ext.load_default_corpus()) if options.corpus == "embedded"
                       else corpus(options.corpus))
    matrix = glovev_ext.CooccurrenceVectorizer(progress=False).fit_transform(documents)
    dim = options.n_components
    started = time.perf_counter()
    trained = glovev_ext.glove.train_glove(matrix, dim, epochs=options.epochs, random_state=0, progress=False)
    adagrad = time.perf_counter() - started
    print(f"{name}: {matrix.shape[0]:,} words, {matrix.nnz:,} nonzeros, D = {dim}; AdaGrad {options.epochs} epochs "
          f"[{adagrad:.0f} s]", flush=True)
    recipes = [("trained", None, 1)] + [("posterior", gamma, sweeps) for gamma in options.gammas
                                        for sweeps in options.sweeps]
    for estimate, gamma, sweeps in recipes:
        started = time.perf_counter()
        model = glovev_ext.GloVeVEstimator(dim, pretrained=trained, point_estimate=estimate, n_sweeps=sweeps,
                                           prior_strength=gamma or 1.0, progress=False).fit(matrix)
        seconds = time.perf_counter() - started
        kv = glovev_ext.KeyedVectorsWithVariance.from_estimator(model)
        cost = glove_cost(matrix, model.embedding_, model.context_embedding_, model.bias_,
                          model.context_bias_) / matrix.nnz
        label = "trained (paper)" if gamma is None else f"posterior, gamma {gamma:g}, {sweeps} sweep(s)"
        dominated = "" if gamma is None else f"; prior dominates {np.mean(model.prior_share_ > 0.5):.0%} of words"
        print(f"{label}: {quality(kv)}  cost {cost:.4f}  median norm "
              f"{np.median(np.linalg.norm(model.embedding_, axis=1)):.2f}; {informativeness(kv, options.pairs)}"
              f"{dominated} [{seconds:.0f} s; with training {(adagrad + seconds) / adagrad:.1f} x AdaGrad's]",
              flush=True)


if __name__ == "__main__":
    main()
