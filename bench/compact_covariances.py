"""Compact covariances: how much smaller, and how far they move standard errors (issue 26, item 2).

Usage: python bench/compact_covariances.py [--model DIR] [--corpus embedded|gutenberg_us_10m|gutenberg_us_31m]
                                           [--n-components 50] [--epochs 15] [--keep 5 10 20 0.5 0.9]
                                           [--forms variances bound] [--n-pairs 2000] [--seed 0] [--n-jobs -1]
                                           [--pair-words-only]

Reads a saved model (``glovev fit``'s folder) or fits the corpus (``fit_corpus`` with the default
recipe at the given D and epochs; the shared corpora fall back to the embedded one when
../shared/data is absent). For the exact covariances stored as float32 and for each ``--keep``
(an int: that many leading eigenpairs per word; a float: the share of each word's variance they
hold) and each ``--forms`` (the other variances on the diagonal, or a bound that understates none;
:meth:`CovarianceStore.approximated`), prints: the words approximated (the others keep
their exact factor because their ``k`` would save nothing), the median ``k``, the numbers per
word (the store's row width) against the triangle's, the store's size against the exact float64
store, the seconds the approximation (or the float32 copy) took, and the relative error
``se_approx / se_exact - 1`` of the delta-method standard error of cosine similarity for the WordSim-353 pairs in the
vocabulary and for ``--n-pairs`` random pairs of words with covariances (the median absolute
error, the 1st and 99th percentiles of the error, and the share of pairs whose standard error is
understated by more than 5 %). Every error is computed against the exact store in the same run. With ``--pair-words-only``
only the pairs' words are approximated (at D = 300 each word's eigendecomposition takes tens of
milliseconds), and the sizes are those of their store.
About 2 minutes for the embedded corpus at D = 50; a saved gutenberg_us_31m model at D = 100
(38,000 words with covariances) takes about 10 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _data import corpus
from gensim.test.utils import datapath

import glovev_ext
from glovev_ext import KeyedVectorsWithVariance
from glovev_ext.covariance.factor import APPROXIMATION_FORMS, LOW_RANK_BOUND, LOW_RANK_PLUS_DIAGONAL, packed_size


def _keep(text: str) -> int | float:
    return int(text) if text.isdigit() else float(text)


def model(args: argparse.Namespace) -> tuple[str, KeyedVectorsWithVariance]:
    if args.model:
        return args.model, glovev_ext.load_model(args.model)[0]
    if args.corpus == "embedded":
        name, lines = "the embedded corpus", glovev_ext.load_default_corpus()
    else:
        name, lines = corpus(args.corpus)
    estimator = glovev_ext.GloVeVEstimator(args.n_components, epochs=args.epochs, n_jobs=args.n_jobs, progress=False)
    fitted = glovev_ext.fit_corpus(lines, glovev_ext.CooccurrenceVectorizer(progress=False), estimator,
                                   progress=False)
    return f"{name}, D={args.n_components}, {args.epochs} epochs", fitted.keyed_vectors


def pairs(kv: KeyedVectorsWithVariance, n_pairs: int, seed: int) -> dict[str, list[tuple[str, str]]]:
    """WordSim-353's pairs with covariances for both words, and random pairs of words with covariances."""
    usable = [w for w in kv.index_to_key if kv.has_covariance(w)]
    known = set(usable)
    wordsim = []
    with open(datapath("wordsim353.tsv"), encoding="utf-8") as stream:
        for line in stream:
            if line.startswith("#"):
                continue
            a, b = (w.lower() for w in line.split("\t")[:2])
            if a != b and a in known and b in known:
                wordsim.append((a, b))
    rng = np.random.default_rng(seed)
    chosen = rng.choice(len(usable), size=(n_pairs, 2))
    random_pairs = [(usable[i], usable[j]) for i, j in chosen if i != j]
    return {"WordSim-353": wordsim, "random": random_pairs}


def standard_errors(kv: KeyedVectorsWithVariance, pair_sets: dict) -> dict[str, np.ndarray]:
    return {name: kv.similarity_tests(chosen, method="delta").bse for name, chosen in pair_sets.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a saved model folder (default: fit --corpus)")
    parser.add_argument("--corpus", default="embedded", choices=("embedded", "gutenberg_us_10m", "gutenberg_us_31m"))
    parser.add_argument("--n-components", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--keep", type=_keep, nargs="+", default=[5, 10, 20, 0.5, 0.9])
    parser.add_argument("--forms", nargs="+", default=list(APPROXIMATION_FORMS), choices=APPROXIMATION_FORMS)
    parser.add_argument("--n-pairs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--pair-words-only", action="store_true",
                        help="approximate only the covariances of the pairs' words (for large D; the row width is then "
                             "the widest of theirs)")
    args = parser.parse_args()
    source, kv = model(args)
    pair_sets = pairs(kv, args.n_pairs, args.seed)
    if args.pair_words_only:
        rows = sorted({kv.covariance_row(word) for chosen in pair_sets.values() for pair in chosen for word in pair})
    else:
        rows = np.flatnonzero(kv.covariance_store.defined)
    store = kv.covariance_store.take(np.asarray(rows))  # in memory
    exact = KeyedVectorsWithVariance.from_keyed_vectors(kv, store)
    dim = kv.vector_size
    reference = standard_errors(exact, pair_sets)
    exact_bytes = store.shape[0] * packed_size(dim) * 8
    which = "the pairs' words" if args.pair_words_only else "words with covariances"
    print(f"{source}: {store.shape[0]:,} {which}, D={dim}; WordSim-353 pairs "
          f"{len(pair_sets['WordSim-353'])}, random pairs {len(pair_sets['random'])}; exact store (float64) "
          f"{exact_bytes / 2**20:,.0f} MiB, {packed_size(dim):,} numbers per word")
    head = (f"{'keep':>8} {'form':>9} {'approx.':>8} {'k med':>6} {'numbers':>8} {'size':>6} {'secs':>6} | "
            + " | ".join(f"{name + ' se err: med |e|, 1st / 99th pct, < -5 %':>46}" for name in pair_sets))
    print(head)
    variants = [("float32", None, "-")] + [(str(keep), keep, form) for keep in args.keep for form in args.forms]
    for label, keep, form in variants:
        started = time.perf_counter()
        if keep is None:
            compact = store.take(np.arange(store.shape[0]), factor_dtype=np.float32)  # the exact factors in float32
        else:
            compact = store.approximated(keep, form, n_jobs=args.n_jobs)
        seconds = time.perf_counter() - started
        approximated = np.isin(compact.approximation[compact.defined], (LOW_RANK_PLUS_DIAGONAL, LOW_RANK_BOUND))
        ranks = compact.rank[compact.defined][approximated]
        size = compact.shape[0] * compact.factor_row_width * compact.factor_dtype.itemsize / exact_bytes
        errors = standard_errors(KeyedVectorsWithVariance.from_keyed_vectors(kv, compact), pair_sets)
        cells = []
        for name in pair_sets:
            error = errors[name] / reference[name] - 1
            cells.append(f"{np.median(np.abs(error)):>8.3f}, {np.percentile(error, 1):+.3f} / "
                         f"{np.percentile(error, 99):+.3f}, {np.mean(error < -0.05):>6.1%}")
        print(f"{label:>8} {form:>9} {approximated.mean():>8.1%} {int(np.median(ranks)) if ranks.size else '-':>6} "
              f"{compact.factor_row_width:>8,} {size:>6.2f} {seconds:>6.1f} | " + " | ".join(f"{c:>46}" for c in cells))


if __name__ == "__main__":
    main()
