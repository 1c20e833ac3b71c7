"""Tutorial 3: gender WEATs (Caliskan et al. 2017, tests 6-8) with GloVe-V intervals, and comparing two.
=====================================================================================================

For each test: the effect size with its GloVe-V standard error (embedding uncertainty given the
corpus) next to the classic permutation p-value (uncertainty over which words are targets) --
two different questions. Then WEAT 7 against WEAT 8, whose word lists overlap, with their joint
covariance.
Word lists: ../shared/data/weat (lowercased), else the published lists below.
Corpus and parameters: those of tutorial 1.
Run: python tutorials/03_weat_gender.py  (under a minute once the model exists).
Figure: figures/weat_gender.png (paper Fig. 7b style).
"""

import time

import numpy as np
from _common import QUICK, fitted_model, save_figure, shared_json

import glovev_ext
from glovev_ext.plots import plot_results

PUBLISHED = {  # Caliskan et al. (2017), WEAT 6-8, as used (the lists the paper reports)
    "WEAT6": (["john", "paul", "mike", "kevin", "steve", "greg", "jeff", "bill"],
              ["amy", "joan", "lisa", "sarah", "diana", "kate", "ann", "donna"],
              ["executive", "management", "professional", "corporation", "salary", "office", "business", "career"],
              ["home", "parents", "children", "family", "cousins", "marriage", "wedding", "relatives"]),
    "WEAT7": (["math", "algebra", "geometry", "calculus", "equations", "computation", "numbers", "addition"],
              ["poetry", "art", "dance", "literature", "novel", "symphony", "drama", "sculpture"],
              ["male", "man", "boy", "brother", "he", "him", "his", "son"],
              ["female", "woman", "girl", "sister", "she", "her", "hers", "daughter"]),
    "WEAT8": (["science", "technology", "physics", "chemistry", "einstein", "nasa", "experiment", "astronomy"],
              ["poetry", "art", "shakespeare", "dance", "literature", "novel", "symphony", "drama"],
              ["brother", "father", "uncle", "grandfather", "son", "he", "his", "him"],
              ["sister", "mother", "aunt", "grandmother", "daughter", "she", "hers", "her"]),
}

start = time.perf_counter()
kv = fitted_model()
tests = dict(PUBLISHED)
shared = shared_json("weat/weat_caliskan2017.json")
if shared:
    for test in shared["tests"]:
        if test["id"] in tests:
            tests[test["id"]] = tuple([w.lower() for w in test[k]["words_used"]] for k in "XYAB")

for name, lists in tests.items():
    kept = [[w for w in words if kv.unusable_reason(w) is None] for words in lists]
    print(f"\n{name}: words usable per list {[len(k) for k in kept]} of {[len(w) for w in lists]}")
    if min(len(k) for k in kept) < 2:
        print("  too few words in this corpus to run it")
        continue
    family = kv.weat_test(*lists, missing="drop")
    permutation = kv.weat_permutation_test(*kept, alternative="two-sided")
    print(family.summary_frame().round(4).to_string())
    print(f"  permutation p (two-sided, {permutation.draws.size:,} partitions): {permutation.pvalue:.3f}")
    shares = family["effect size"].variance_by_word().head(3)
    print("  words carrying most of the effect size's variance: " + ", ".join(
        f"{w} ({share:.0%}, seen {kv.get_vecattr(w, 'count'):,} times)" for w, share in shares.items()))


# Rare words carry huge covariances: the same tests with frequent words only.
FREQUENT = 1 if QUICK else 200  # the quick corpus is too small for a real threshold
print(f"\nWith words seen at least {FREQUENT} times:")
frequent_statistics, frequent_effects = {}, []
for name, lists in tests.items():
    frequent = [[w for w in words if kv.unusable_reason(w) is None and kv.get_vecattr(w, "count") >= FREQUENT]
                for words in lists]
    if min(len(words) for words in frequent) < 2:
        print(f"{name}: fewer than two frequent words in a list")
        continue
    row = kv.weat_test(*frequent)["effect size"]
    frequent_statistics[name] = glovev_ext.stats.weat_statistic(*frequent)
    frequent_effects.append(row)
    low, high = row.conf_int()
    print(f"{name}: lists of {[len(w) for w in frequent]} words, effect size {row.estimate:.3f} "
          f"[{low:.3f}, {high:.3f}], p = {row.pvalue:.3f}")

if frequent_effects:
    save_figure(plot_results(frequent_effects, labels=list(frequent_statistics),
                             xlabel="WEAT effect size d (95 % GloVe-V interval)",
                             title=f"Gender WEATs, words seen at least {FREQUENT} times"), "weat_gender.png")

if {"WEAT7", "WEAT8"} <= set(frequent_statistics):
    comparison = glovev_ext.stats.compare_biases(kv, {"WEAT7": frequent_statistics["WEAT7"],
                                                "WEAT8": frequent_statistics["WEAT8"]})
    print("\nWEAT 7 vs WEAT 8 effect sizes (frequent words), with the covariance their shared words create:")
    print(comparison.difference("WEAT7: effect size", "WEAT8: effect size").summary())
    naive = np.sqrt(comparison.std_errors[0] ** 2 + comparison.std_errors[2] ** 2)
    print(f"(treating them as independent would give a standard error of {naive:.3f})")
print(f"done in {time.perf_counter() - start:.0f} s")
