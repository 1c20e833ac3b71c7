"""Real-data calibration: do two random halves of a corpus differ as the covariances say? (docs/method.md 6.9)

Usage: python bench/split_half.py [--corpus embedded|gutenberg_us_10m|gutenberg_us_31m] [--n-components 50]
                                  [--epochs 25] [--point-estimate trained] [--prior-strength 1] [--sweeps N]
                                  [--no-noise-calibration] [--n-pairs 300] [--seed 0] [--informative]
                                  [--save-model DIR] [--groups documents|books|authors]
                                  [--check-by documents|books|authors] [--check-seeds S [S ...]]
                                  [--halvings K] [--no-concentration]

Fits the corpus (``fit_corpus`` with the given D, epochs and point estimate; the shared corpora fall
back to the embedded one when ../shared/data is absent), splits its documents at random into two
halves, fits each half's rows in the pooled basis and prints ``split_half_check``'s table by band of
pooled word count: the mean Wald statistic of ``w_A = w_B`` per dimension against its expectation
under the covariances (``ratio`` 1 if calibrated) and how often that test rejects at 5 %; for
``--n-pairs`` random pairs of words per band, the standard deviation of the standardised
difference of their cosine between the halves (1 if calibrated) and how often the plain z and the
library's default equality test (``compare_models(...).equality()``) reject at 5 %. With
``--informative``, first the pooled fit's quality and how informative its intervals are (as
``bench/prior_sweeps.py`` prints them: WordSim-353, SimLex-999, Google analogy; the median 95 %
half-width of 1,000 random pairs' cosines and the shares of WordSim-353 and SimLex-999 pairs below 0.1), and the
median half-width of 200 random pairs' cosines in each band of pooled count.
With ``--save-model DIR``, the pooled fit is saved there (``fit_corpus(..., output=)``, which checks
the folder before the fit) for studies that should not refit it. ``--groups`` is the unit the noise
calibration splits (``fit_corpus(groups=)``: books or authors of the corpus's manifest; default each
document its own group), ``--check-by`` the unit the check splits (default: the same), and each of
``--check-seeds`` draws one check's halves and pairs (default: ``--seed`` alone; the calibration's split
is drawn from a child of ``--seed``'s stream, so no check repeats it). ``--halvings`` is how many
random halvings the calibration pools (``fit_corpus(n_halvings=)``; default 3 with groups, 1 without);
``--no-concentration`` scales each row by its total only (``fit_corpus(by_concentration=False)``). With
groups, each check also prints, for the words seen 100 times or more, the ratio by quintile of their
concentration over the groups (``GloVeVEstimator.group_concentration_``, docs/method.md 6.21).
About 4-5 minutes for the embedded corpus at the defaults on 2 cores (most of it the 1,500 pairs' tests);
gutenberg_us_31m at D = 100, 15 epochs takes 1.5-2 hours.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from _data import corpus, corpus_groups
from prior_sweeps import band_half_widths, informativeness, quality

import glovev_ext
from glovev_ext.split_half import split_half_check


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="embedded", choices=("embedded", "gutenberg_us_10m", "gutenberg_us_31m"))
    parser.add_argument("--n-components", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=25)
    parser.add_argument("--point-estimate", default="trained", choices=glovev_ext.covariance.POINT_ESTIMATES)
    parser.add_argument("--prior-strength", type=float, default=1.0, help="of --point-estimate posterior")
    parser.add_argument("--sweeps", type=int, default=None, help="of --point-estimate alternating or posterior")
    parser.add_argument("--no-noise-calibration", action="store_true",
                        help="of --point-estimate posterior: keep the model's own noise (calibrate_noise=False)")
    parser.add_argument("--n-pairs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--informative", action="store_true",
                        help="also print the pooled fit's quality and interval widths (bench/prior_sweeps.py)")
    parser.add_argument("--save-model", metavar="DIR", help="save the pooled fit there (glovev_ext.save_model)")
    units = ("documents", "books", "authors")
    parser.add_argument("--groups", default="documents", choices=units, help="the calibration's unit")
    parser.add_argument("--check-by", choices=units, help="the check's unit (default: --groups)")
    parser.add_argument("--check-seeds", type=int, nargs="+", help="one check per seed (default: --seed)")
    parser.add_argument("--halvings", type=int, help="random halvings the calibration pools (fit_corpus(n_halvings=))")
    parser.add_argument("--no-concentration", action="store_true",
                        help="scale rows by their total only (fit_corpus(by_concentration=False))")
    options = parser.parse_args()
    name, documents = corpus(options.corpus)
    documents = list(documents)
    groups = corpus_groups(options.corpus, options.groups)
    check_by = options.check_by or options.groups
    check_groups = corpus_groups(options.corpus, check_by)
    started = time.perf_counter()
    estimator = glovev_ext.GloVeVEstimator(n_components=options.n_components, epochs=options.epochs,
                                           point_estimate=options.point_estimate, prior_strength=options.prior_strength,
                                           n_sweeps=options.sweeps, random_state=options.seed)
    fitted = glovev_ext.fit_corpus(documents, estimator=estimator, calibrate_noise=not options.no_noise_calibration,
                                   groups=groups, n_halvings=options.halvings,
                                   by_concentration=not options.no_concentration, progress=False,
                                   output=options.save_model)
    fitting = time.perf_counter() - started
    if options.informative:
        print(f"pooled fit: {quality(fitted.keyed_vectors)}; {informativeness(fitted.keyed_vectors, 1000)}", flush=True)
        print(band_half_widths(fitted.keyed_vectors), flush=True)
    print(f"{name}: {len(documents):,} documents, D = {options.n_components}, {options.epochs} epochs, "
          f"point_estimate={options.point_estimate!r} ({fitted.estimator.n_sweeps_} sweeps"
          + (f", prior strength {options.prior_strength:g}, calibrated by {options.groups}"
             + (f" ({groups.n_groups} groups)" if groups is not None else "")
             + f", noise scale {fitted.estimator.noise_scale_}" if options.point_estimate == "posterior" else "")
          + f"); fit {fitting:.0f} s", flush=True)
    concentration = None
    for seed in options.check_seeds or [options.seed]:
        started = time.perf_counter()
        check = split_half_check(fitted, documents, groups=check_groups, n_pairs=options.n_pairs, random_state=seed,
                                 progress=False)
        print(f"check: halves of the {check_by}, seed {seed}; split halves {time.perf_counter() - started:.0f} s")
        print(check, flush=True)
        if check_groups is not None:
            if concentration is None:
                concentration = glovev_ext.counting.group_concentration(
                    fitted.vectorizer.count_by_group(documents, check_groups))
            print(_by_concentration(check, fitted.vectorizer.vocabulary_, concentration), flush=True)


def _by_concentration(check, vocabulary: dict, concentration: np.ndarray) -> str:
    """The ratio of the words seen 100 times or more by quintile of their ``concentration`` over the groups."""
    words = check.words[check.words["count"] >= 100]
    words = words[np.isfinite(words["expected"])]
    x = concentration[[vocabulary[w] for w in words.index]]
    quintile = pd.qcut(x, 5)
    table = words.groupby(quintile, observed=True).agg(words=("wald_per_dim", "size"), wald=("wald_per_dim", "mean"),
                                                       expected=("expected", "mean"))
    table["ratio"] = table["wald"] / table["expected"]
    table.index = [f"{1 / i.right:.1f}-{1 / i.left:.1f}" for i in table.index]
    return ("words seen 100+ by effective number of groups (1 / concentration): ratio "
            + " / ".join(f"{r:.2f} ({n_eff})" for n_eff, r in table["ratio"].items()))


if __name__ == "__main__":
    main()
