"""Tutorial 9: planning a study -- what a pilot corpus can detect, and how much more text would help.
==================================================================================================

Before collecting text, a researcher asks: with this corpus, how precise is my statistic, what is
the smallest effect my test could detect, and what would a corpus k times larger give?
``glovev_ext.plan_study`` answers from a fitted model: each planned statistic's standard error now,
its minimum detectable effect at 80 % power (against 0, and between two independent corpora of the
same size, as in a before/after comparison), the same for larger corpora (se / sqrt(k), derived in
docs/method.md section 7.4), and the largest dimension D at which every word keeps a covariance.
Then two checks of the projection, on corpora that really are larger:

1. plan on gutenberg_us_10m, measure on gutenberg_us_31m (its superset: 3.1 times the text, but
   not of the same kind word by word: its extra books change how often, and how, words are used);
2. plan on a random half of gutenberg_us_31m, measure on the whole (the same kind by construction).

Corpora and parameters: those of tutorial 1 (the 31m model is tutorial 7's). Without
../shared/data both "corpora" are the embedded one (check 1 is then empty) and check 2 halves it.
Run: python tutorials/09_study_planning.py  (about 2 minutes: it fits the half corpus).
"""

import time

import numpy as np
from _common import QUICK, corpus, fit_objects, fitted_model, shared_words

import glovev_ext
from glovev_ext.stats import cosine_bias_statistic, cosine_statistic, wald_test

PAIRS = [("man", "woman"), ("war", "peace"), ("doctor", "nurse"), ("king", "queen"), ("good", "bad"),
         ("house", "home")]


def planned_statistics(models):
    """The statistics a study of gender and of a few word pairs would plan, on words usable in every model."""
    def usable(words):
        return [w for w in words if all(m.unusable_reason(w) is None for m in models)]

    male = shared_words("garg2018/male_pairs.txt") or ["he", "son", "his", "him", "father", "man", "boy"]
    female = shared_words("garg2018/female_pairs.txt") or ["she", "daughter", "her", "mother", "woman", "girl"]
    occupations = shared_words("garg2018/occupations1950.txt") or ["doctor", "nurse", "teacher", "lawyer", "farmer",
                                                                    "clerk", "judge", "servant", "soldier", "sailor"]
    statistics = {}
    if all(usable(words) for words in (male, female, occupations)):
        statistics["gender bias of occupations (Garg et al.)"] = cosine_bias_statistic(
            usable(male), usable(female), usable(occupations))
    for pair in PAIRS:
        if len(usable(pair)) == 2:
            statistics[f"cos{pair}".replace("'", "")] = cosine_statistic([pair])
    return statistics


def size(kv):
    """Tokens of the vocabulary's words: the corpus size the ratio k compares."""
    return sum(kv.get_vecattr(w, "count") for w in kv.index_to_key)


def check(pilot, larger, title):
    """Plan on ``pilot``, then measure on ``larger``: projected against measured standard errors."""
    statistics = planned_statistics([pilot, larger])
    k = size(larger) / size(pilot)
    plan = glovev_ext.plan_study(pilot, statistics, corpus_scales=sorted({1, 2, round(k, 2), 5, 10}))
    print(f"\n{title}: k = {k:.2f}")
    print(plan)
    if k < 1.01:
        print("(no larger corpus here: the check needs ../shared/data)")
        return
    print(f"measured on the corpus {k:.2f} times larger:")
    errors = []
    for label, statistic in statistics.items():
        projected = plan.projection.loc[(label, round(k, 2)), "std err"]
        now = plan.statistics.loc[label, "estimate"]
        measured = wald_test(larger, statistic, method="delta")
        growth = np.exp(np.mean([np.log(larger.get_vecattr(w, "count") / pilot.get_vecattr(w, "count"))
                                 for w in statistic.keys]))
        errors.append(projected / measured.std_error - 1)
        print(f"   {label}: projected se {projected:.4f}, measured {measured.std_error:.4f} "
              f"({projected / measured.std_error - 1:+.0%}); its words grew {growth:.2f} times; the statistic "
              f"moved from {now:.3f} to {measured.estimate:.3f}")
    errors = np.abs(errors)
    print(f"   within 20 %: {(errors <= 0.2).sum()} of {len(errors)}; median error {np.median(errors):.0%}")


start = time.perf_counter()
ten, thirty_one = fitted_model("10m"), fitted_model("31m")
check(ten, thirty_one, "1. plan on gutenberg_us_10m, measure on gutenberg_us_31m")

name, documents = corpus("31m")
documents = list(documents)
half = [documents[i] for i in np.random.default_rng(0).permutation(len(documents))[:len(documents) // 2]]
vectorizer, estimator = fit_objects()
print(f"\nfitting a random half of {name} ({len(half):,} documents) with {vectorizer} and {estimator} ...")
half_model = glovev_ext.fit_corpus(half, vectorizer, estimator, progress=not QUICK).keyed_vectors
check(half_model, thirty_one, f"2. plan on a random half of {name}, measure on the whole")
print(f"done in {time.perf_counter() - start:.0f} s")
