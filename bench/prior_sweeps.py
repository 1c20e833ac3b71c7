"""A Gaussian prior on the vectors, reached by regularised alternating sweeps after AdaGrad (docs/method.md 6.11).

Usage: python bench/prior_sweeps.py [--corpus gutenberg_us_10m] [--n-components 100] [--epochs 10]
                                    [--gammas 1 3 10 30 100] [--sweeps 1] [--likelihood]

A study, not yet the library's: trains GloVe with AdaGrad, then for each prior strength ``gamma``
runs ``--sweeps`` sweeps, each solving every centre row ``[w_i, b_i]`` given the context side, then
every context row given the centre side, then the centre rows again, as posterior means under
``w ~ N(mu, T / gamma)`` (flat on the bias), with ``mu`` and ``T`` the mean and covariance of the
unregularised fits of the rows with more than 10 D contexts minus their mean noise covariance, and
each row's residual variance (pooled over rows of similar count where a row has too few contexts).
Prints WordSim-353, SimLex-999 (Spearman) and Google analogy accuracy (30,000 most frequent words)
of the centre vectors, the cost per nonzero and each sweep's wall time next to AdaGrad's.
``--likelihood`` also prints, by band of count, the marginal log-likelihood of the unregularised
fits ``w_i* ~ N(mu, T / gamma + N_i)`` relative to gamma = 1.
About 2 minutes per gamma on gutenberg_us_10m at D = 100 on 2 cores (the embedded corpus when
../shared/data is absent).
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from _data import corpus
from gensim.models import KeyedVectors
from gensim.test.utils import datapath
from threadpoolctl import threadpool_limits

import glovev_ext
from glovev_ext.glove import glove_cost, glove_weights

BANDS = ((5, 99), (100, 299), (300, 999), (1000, 2999), (3000, 10**12))


class Rows:
    """The co-occurrence rows with their log counts and GloVe weights."""

    def __init__(self, cooccurrence):
        self.matrix = cooccurrence.tocsr().astype(np.float64)
        self.matrix.sort_indices()
        self.logs = np.log(self.matrix.data)
        self.weights = glove_weights(self.matrix.data, 100.0, 0.75)
        self.counts = np.asarray(cooccurrence.counts, dtype=np.float64)
        self.n_contexts = np.diff(self.matrix.indptr)

    def fit(self, other_vectors, other_biases, prior=None, n_threads: int = 2):
        """Every row's ``[vector, bias]`` given the other side; with ``prior = (mu, precision, s2)`` its posterior
        mean. Returns vectors, biases, residual variances (NaN with too few contexts) and, without a prior,
        every row's noise covariance of the vector (None where undefined)."""
        m, dim = self.matrix, other_vectors.shape[1]
        vectors, biases = np.zeros((m.shape[0], dim)), np.zeros(m.shape[0])
        s2 = np.full(m.shape[0], np.nan)
        noise = [None] * m.shape[0]

        def block(rows):
            for i in rows:
                a, e = m.indptr[i], m.indptr[i + 1]
                cols, f = m.indices[a:e], self.weights[a:e]
                design = np.hstack([other_vectors[cols], np.ones((e - a, 1))])
                target = self.logs[a:e] - other_biases[cols]
                hessian = design.T @ (f[:, None] * design)
                rhs = design.T @ (f * target)
                if prior is None:
                    precision, right = hessian + 1e-8 * np.trace(hessian) / dim * np.eye(dim + 1), rhs
                else:
                    mu, prior_precision, variances = prior
                    precision, right = hessian / variances[i], rhs / variances[i]
                    precision[:dim, :dim] += prior_precision
                    right[:dim] += prior_precision @ mu
                solution = np.linalg.solve(precision, right)
                vectors[i], biases[i] = solution[:dim], solution[dim]
                if e - a > dim + 1:
                    residual = target - design @ solution
                    s2[i] = (f * residual**2).sum() / (e - a - dim - 1)
                    if prior is None:
                        noise[i] = s2[i] * np.linalg.inv(hessian)[:dim, :dim]

        with threadpool_limits(1), ThreadPoolExecutor(n_threads) as pool:
            list(pool.map(block, np.array_split(np.arange(m.shape[0]), 8 * n_threads)))
        return vectors, biases, s2, noise

    def pooled(self, s2):
        """``s2`` with each missing value replaced by the median of rows whose log count is within 0.2."""
        out, known = s2.copy(), np.isfinite(s2)
        log_counts = np.log(self.counts)
        order = np.argsort(log_counts[known])
        sorted_counts, sorted_s2 = log_counts[known][order], s2[known][order]
        for i in np.flatnonzero(~known):
            low = np.searchsorted(sorted_counts, log_counts[i] - 0.2)
            high = np.searchsorted(sorted_counts, log_counts[i] + 0.2)
            out[i] = np.median(sorted_s2[low:high]) if high > low else np.median(sorted_s2)
        return out


def moment_prior(vectors, noise, frequent) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of the frequent rows' vectors, less their mean noise (made positive definite)."""
    mu = vectors[frequent].mean(0)
    covariance = np.cov(vectors[frequent].T) - np.mean([noise[i] for i in frequent], axis=0)
    eigenvalues = np.linalg.eigvalsh(covariance)
    shift = max(0.0, -eigenvalues.min() + 1e-3 * eigenvalues.max())
    return mu, covariance + shift * np.eye(len(mu))


def regularised(rows: Rows, other_vectors, other_biases, gamma: float, frequent):
    vectors, _, s2, noise = rows.fit(other_vectors, other_biases)
    mu, covariance = moment_prior(vectors, noise, frequent)
    return rows.fit(other_vectors, other_biases, (mu, gamma * np.linalg.inv(covariance), rows.pooled(s2)))[:2]


def quality(words, vectors) -> str:
    kv = KeyedVectors(vectors.shape[1])
    kv.add_vectors(words, vectors)
    wordsim = kv.evaluate_word_pairs(datapath("wordsim353.tsv"))[1][0]
    simlex = kv.evaluate_word_pairs(datapath("simlex999.txt"))[1][0]
    analogy = kv.evaluate_word_analogies(datapath("questions-words.txt"), restrict_vocab=30000)[0]
    return f"WS-353 {wordsim:.3f}  SimLex {simlex:.3f}  Google {analogy:.3f}"


def likelihood_by_band(rows: Rows, vectors, noise, frequent, gammas) -> None:
    mu, covariance = moment_prior(vectors, noise, frequent)
    totals = {gamma: np.zeros(len(BANDS)) for gamma in gammas}
    for i, own in enumerate(noise):
        band = next((k for k, (low, high) in enumerate(BANDS) if low <= rows.counts[i] <= high), None)
        if own is None or band is None:
            continue
        for gamma in gammas:
            lower = np.linalg.cholesky(covariance / gamma + own)
            z = np.linalg.solve(lower, vectors[i] - mu)
            totals[gamma][band] += -np.log(np.diag(lower)).sum() - 0.5 * z @ z
    reference = totals[1.0] if 1.0 in totals else totals[gammas[0]]
    for k, (low, high) in enumerate(BANDS):
        values = {gamma: totals[gamma][k] - reference[k] for gamma in gammas}
        print(f"  count {low}-{high if high < 10**12 else ''}: log-likelihood - gamma 1's: "
              + ", ".join(f"{gamma:g}: {value:.0f}" for gamma, value in values.items())
              + f"; largest at {max(values, key=values.get):g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="gutenberg_us_10m", choices=("embedded", "gutenberg_us_10m",
                                                                         "gutenberg_us_31m"))
    parser.add_argument("--n-components", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--gammas", type=float, nargs="+", default=[1.0, 3.0, 10.0, 30.0, 100.0])
    parser.add_argument("--sweeps", type=int, default=1)
    parser.add_argument("--likelihood", action="store_true")
    options = parser.parse_args()
    name, documents = (("embedded corpus", glovev_ext.load_default_corpus()) if options.corpus == "embedded"
                       else corpus(options.corpus))
    matrix = glovev_ext.CooccurrenceVectorizer(progress=False).fit_transform(documents)
    words, rows, dim = list(matrix.words), Rows(matrix), options.n_components
    started = time.perf_counter()
    trained = glovev_ext.train_glove(matrix, dim, epochs=options.epochs, random_state=0, progress=False)
    adagrad = time.perf_counter() - started
    frequent = np.flatnonzero(rows.n_contexts > 10 * dim)
    print(f"{name}: {len(words):,} words, {rows.matrix.nnz:,} nonzeros, D = {dim}; {frequent.size:,} rows with "
          f"more than 10 D contexts")
    cost = glove_cost(rows.matrix, trained.center_vectors, trained.context_vectors, trained.center_biases,
                      trained.context_biases) / rows.matrix.nnz
    print(f"AdaGrad, {options.epochs} epochs: {quality(words, trained.center_vectors)}  cost {cost:.4f}  "
          f"[{adagrad:.0f} s]")
    if options.likelihood:
        vectors, _, _, noise = rows.fit(trained.context_vectors, trained.context_biases)
        likelihood_by_band(rows, vectors, noise, frequent, options.gammas)
    for gamma in options.gammas:
        started = time.perf_counter()
        context, context_biases = trained.context_vectors, trained.context_biases
        for _ in range(options.sweeps):
            center, center_biases = regularised(rows, context, context_biases, gamma, frequent)
            context, context_biases = regularised(rows, center, center_biases, gamma, frequent)
            center, center_biases = regularised(rows, context, context_biases, gamma, frequent)
        cost = glove_cost(rows.matrix, center, context, center_biases, context_biases) / rows.matrix.nnz
        print(f"gamma {gamma:g}, {options.sweeps} sweep(s): {quality(words, center)}  cost {cost:.4f}  median norm "
              f"{np.median(np.linalg.norm(center, axis=1)):.2f}  [{time.perf_counter() - started:.0f} s, "
              f"{(adagrad + time.perf_counter() - started) / adagrad:.1f} x AdaGrad's]", flush=True)


if __name__ == "__main__":
    main()
