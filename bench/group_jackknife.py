"""Between-group errors side by side with GloVe-V's: what the delete-a-group jackknife costs and what it finds.

Usage: python bench/group_jackknife.py [--corpus embedded|gutenberg_us_10m|gutenberg_us_31m] [--n-components 50]
                                       [--epochs 25] [--groups books|authors] [--n-folds K] [--n-pairs 200]
                                       [--seed 0]

Fits the corpus with its groups (``fit_corpus(groups=)``: the calibration at that unit), then
``group_jackknife`` over the same groups, and prints:

- cost: the jackknife's wall time against one pass over the pooled rows measured in the same run
  (``conditional_fit`` of the pooled co-occurrence: the work each fold repeats), as a ratio to
  ``K`` passes, and against the fit's own time;
- by band of pooled count, for up to ``--n-pairs`` random pairs of words the jackknife can use
  (fitted without every fold): the median and quartiles of the ratio of a cosine's between-group
  standard error (jackknife) to GloVe-V's of the posterior mean (delta method under ``Sigma - Sigma P
  Sigma``, the calibrated covariances: ``GroupJackknife.side_by_side``), the shares of pairs whose
  ratio is below 0.5 or above 2 (how far one band's calibration is from each pair's own
  between-group variation), and the median of the jackknife's error over GloVe-V's posterior one.

The shared corpora fall back to the embedded one when ../shared/data is absent. About 3 minutes for
the embedded corpus at the defaults on 2 cores; gutenberg_us_10m at D = 100, 10 epochs about 15.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _data import add_fit_arguments, corpus, corpus_groups

import glovev_ext
from glovev_ext.stats import cosine_statistic

BANDS = (5, 100, 300, 1_000, 3_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_fit_arguments(parser)
    parser.add_argument("--n-folds", type=int, default=None)
    parser.add_argument("--n-pairs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    name, documents = corpus(options.corpus)
    documents = list(documents)
    groups = corpus_groups(options.corpus, options.groups)
    started = time.perf_counter()
    fitted = glovev_ext.fit_corpus(documents, glovev_ext.CooccurrenceVectorizer(progress=False),
                                   glovev_ext.GloVeVEstimator(n_components=options.n_components, epochs=options.epochs,
                                                              random_state=options.seed, progress=False),
                                   groups=groups, progress=False)
    fitting = time.perf_counter() - started
    started = time.perf_counter()
    fitted.estimator.conditional_fit(fitted.cooccurrence)
    one_pass = time.perf_counter() - started
    started = time.perf_counter()
    jackknife = glovev_ext.group_jackknife(fitted, documents, groups, n_folds=options.n_folds,
                                           random_state=options.seed, progress=False)
    seconds = time.perf_counter() - started
    k = jackknife.n_folds
    print(f"{name}: {len(documents):,} documents, {groups.describe()}, D = {options.n_components}, {options.epochs} "
          f"epochs; fit {fitting:.0f} s; one pass over the pooled rows {one_pass:.1f} s; jackknife over {k} folds "
          f"{seconds:.0f} s = {seconds / (k * one_pass):.2f} x {k} passes = {seconds / fitting:.2f} x the fit",
          flush=True)
    print(by_band(jackknife, options.n_pairs, options.seed))


def by_band(jackknife: glovev_ext.GroupJackknife, n_pairs: int, seed: int) -> str:
    """The table of between-group over GloVe-V standard errors of random pairs' cosines, by band of pooled count."""
    kv = jackknife.keyed_vectors
    in_every_fold = np.isfinite(jackknife.fold_vectors).all(axis=(0, 2))
    usable = [w for w, kept in zip(jackknife.words, in_every_fold) if kept and w in kv and kv.has_covariance(w)]
    counts = np.array([kv.get_vecattr(w, "count") for w in usable])
    generator = np.random.default_rng(seed)
    lines = [f"{'pooled count':>13} {'words':>7} {'pairs':>6} {'median ratio':>13} {'quartiles':>13} "
             f"{'below 0.5':>10} {'above 2':>8} {'median over posterior':>22}"]
    for low, high in zip(BANDS, [*BANDS[1:], np.inf]):
        members = np.flatnonzero((counts >= low) & (counts < high))
        if members.size < 2:
            continue
        chosen = sorted({tuple(sorted(generator.choice(members, 2, replace=False))) for _ in range(n_pairs)})
        table = jackknife.side_by_side(cosine_statistic([(usable[a], usable[b]) for a, b in chosen]))
        ratio = table["ratio"].to_numpy()
        over_posterior = table.iloc[:, 3].to_numpy() / table["GloVe-V std err"].to_numpy()
        label = f"{low:,}+" if np.isinf(high) else f"{low:,}-{int(high) - 1:,}"
        lines.append(f"{label:>13} {members.size:>7,} {ratio.size:>6} {np.median(ratio):>13.2f} "
                     f"{np.quantile(ratio, 0.25):>6.2f}-{np.quantile(ratio, 0.75):<6.2f} "
                     f"{(ratio < 0.5).mean():>10.3f} {(ratio > 2).mean():>8.3f} {np.median(over_posterior):>22.2f}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
