"""What groups cost: the default fit with a corpus's groups against the default fit without, back to back.

Usage: python bench/group_cost.py [--corpus embedded|gutenberg_us_10m|gutenberg_us_31m] [--n-components 50]
                                  [--epochs 25] [--groups books|authors] [--no-concentration]

Fits the corpus twice in one process with the default recipe (``fit_corpus``: posterior, noise
calibrated on random halves), first with its groups (three halvings of the groups pooled, each
word's factor following its concentration over them unless ``--no-concentration``; docs/method.md
6.16, 6.20, 6.21), then without (one halving of the documents), and prints each fit's seconds by
stage (``FittedCorpus.seconds``) and the ratio of the totals: the baseline is the fit without groups
measured in the same run. Issue 46 asks for at most 1.5 on gutenberg_us_10m at D = 100, 10 epochs
(about 9 minutes on 2 cores with nothing else running); the shared corpora fall back to the embedded
one when ../shared/data is absent.
"""

from __future__ import annotations

import argparse
import time

from _data import add_fit_arguments, corpus, corpus_groups

import glovev_ext


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_fit_arguments(parser)
    parser.add_argument("--no-concentration", action="store_true",
                        help="scale rows by their total only (fit_corpus(by_concentration=False))")
    options = parser.parse_args()
    name, documents = corpus(options.corpus)
    groups = corpus_groups(options.corpus, options.groups)
    estimator = glovev_ext.GloVeVEstimator(n_components=options.n_components, epochs=options.epochs)
    totals = {}
    for label, fit_groups in ((f"with its {groups.describe()}", groups), ("without groups", None)):
        started = time.perf_counter()
        fitted = glovev_ext.fit_corpus(documents, estimator=estimator, groups=fit_groups, progress=False,
                                       by_concentration=not options.no_concentration)
        totals[label] = time.perf_counter() - started
        stages = ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in fitted.seconds.items())
        print(f"{name}, D = {options.n_components}, {options.epochs} epochs, {label}: {totals[label]:.1f} s "
              f"({stages})", flush=True)
    with_groups, without = totals.values()
    print(f"ratio with / without groups: {with_groups / without:.3f}")


if __name__ == "__main__":
    main()
