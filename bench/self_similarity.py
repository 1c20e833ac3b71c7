"""Coverage of self-similarity intervals by simulation with known truth (docs/method.md section 7.3).

Usage: python bench/self_similarity.py [--replications 300]

On the D = 30 fit of the coverage tests (6,000 paragraphs of the embedded corpus, 10 epochs, exact
conditioning), three words (the most frequent alphabetic word, one with 150-250 and one with 20-40
contexts beyond D) have their rows drawn twice from the GloVe-V model and refitted
(``glovev_ext.stats.RowSimulator``), the second time with the true vector turned away from the first
to a given cosine; ``self_similarity`` (delta method) then estimates the cosine of the two refits.
Printed per word and true cosine: the share of 95 % intervals that hold it, and their median width.
"""

from __future__ import annotations

import argparse

import numpy as np

import glovev_ext
from glovev_ext.covariance.wls import WordFitter
from glovev_ext.stats import RowSimulator, self_similarity

DIM = 30
TRUE_COSINES = (1.0, 0.99, 0.9, 0.6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replications", type=int, default=300)
    args = parser.parse_args()
    X = glovev_ext.CooccurrenceVectorizer(min_count=5, progress=False).fit_transform(
        glovev_ext.load_default_corpus(max_documents=6000))
    model = glovev_ext.GloVeVEstimator(DIM, epochs=10, random_state=0, n_jobs=1, point_estimate="trained",
                                       progress=False).fit(X)
    words = list(X.words)
    alphabetic = np.array([w.isalpha() for w in words])
    spare = model.n_contexts_ - DIM
    chosen = [next(words[i] for i in np.argsort(-model.n_contexts_) if alphabetic[i]),
              next(words[i] for i in np.flatnonzero((spare >= 150) & (spare <= 250)) if alphabetic[i]),
              next(words[i] for i in np.flatnonzero((spare >= 20) & (spare <= 40)) if alphabetic[i])]
    position = {w: i for i, w in enumerate(words)}
    simulator = RowSimulator(WordFitter(X, model.context_embedding_, model.context_bias_, 100.0, 0.75, "exact"),
                             model.bias_, {w: position[w] for w in chosen})
    generator = np.random.default_rng(5)
    print("word (contexts beyond D), true cosine: coverage of 95 % intervals, median width")
    for word in chosen:
        truth = simulator.truth[word]
        turn = generator.standard_normal(truth.size)
        turn -= (turn @ truth) / (truth @ truth) * truth
        turn /= np.linalg.norm(turn)
        for cosine in TRUE_COSINES:
            shift = np.linalg.norm(truth) * np.tan(np.arccos(cosine)) * turn
            covered, widths = 0, []
            for _ in range(args.replications):
                first = simulator.draw([word], generator)  # resolved words are an embedding
                second = simulator.draw([word], generator, shifts={word: shift})
                low, high = self_similarity(first, second, [word], method="delta").conf_int().iloc[0]
                covered += low <= cosine <= high
                widths.append(high - low)
            print(f"{word} ({spare[position[word]]}), {cosine}: {covered / args.replications:.3f}, "
                  f"{np.median(widths):.3f}")


if __name__ == "__main__":
    main()
