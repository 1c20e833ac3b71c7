"""Tutorial 4: Asian vs White surnames and "otherization" adjectives (Garg et al. 2018), with intervals.
=====================================================================================================

The cosine bias is mean_k cos(v_k, M_A) - mean_k cos(v_k, M_B), M the mean unit vector of a
surname group and v_k the adjectives: positive means the adjectives sit nearer Asian surnames.
It also shows how few surnames a 19th-century corpus covers, and how the estimate moves when the
groups are cut into frequency bands (paper Fig. 7a).
Word lists: ../shared/data/garg2018 (names_asian, names_white, adjectives_otherization). Without
it, illustrative lists of our own are used (common U.S. census surnames, and adjectives of
strangeness), and the output says so.
Corpus and parameters: those of tutorial 1.
Run: python tutorials/04_surname_bias.py  (under a minute once the model exists).
Figure: figures/surname_bias_by_frequency.png.
"""

import time

from _common import fitted_model, save_figure, shared_words

from glovev_ext.stats import cosine_bias_by_frequency
from glovev_ext.plots import plot_results

ILLUSTRATIVE = {  # used only when ../shared/data is absent; not Garg et al.'s lists
    "asian": ["lee", "kim", "chen", "wong", "wang", "chang", "li", "singh", "patel", "nguyen", "lin", "liu"],
    "white": ["smith", "johnson", "williams", "brown", "jones", "miller", "davis", "wilson", "anderson", "taylor",
              "thomas", "moore"],
    "otherization": ["strange", "foreign", "alien", "exotic", "bizarre", "mysterious", "savage", "barbaric", "cruel",
                     "devious", "inscrutable", "treacherous"],
}

start = time.perf_counter()
kv = fitted_model()
lists = {name: shared_words(f"garg2018/{file}") for name, file in
         (("asian", "names_asian.txt"), ("white", "names_white.txt"), ("otherization", "adjectives_otherization.txt"))}
if any(words is None for words in lists.values()):
    print("../shared/data/garg2018 not found: using illustrative lists (not Garg et al.'s)")
    lists = ILLUSTRATIVE

for name, words in lists.items():
    usable = [w for w in words if kv.unusable_reason(w) is None]
    in_vocabulary = [w for w in words if w in kv.key_to_index]
    print(f"{name}: {len(words)} words, {len(in_vocabulary)} in the vocabulary, {len(usable)} with a covariance")
    print("   " + ", ".join(f"{w} ({kv.get_vecattr(w, 'count')})" if w in kv.key_to_index else f"{w} (absent)"
                            for w in words))

usable = {name: [w for w in words if kv.unusable_reason(w) is None] for name, words in lists.items()}
if min(len(words) for words in usable.values()) == 0:
    print("a list has no usable word in this corpus: the bias cannot be estimated here")
else:
    result = kv.cosine_bias_test(lists["asian"], lists["white"], lists["otherization"], missing="drop")
    print(result.summary())
    bands = 2 if min(len(usable["asian"]), len(usable["white"])) >= 4 else 1
    by_band = cosine_bias_by_frequency(kv, lists["asian"], lists["white"], lists["otherization"], n_bands=bands,
                                       missing="drop")
    ax = plot_results(by_band, xlabel="cosine bias (Asian - White surnames)",
                      title=f"Bias by frequency band ({len(by_band[0].dropped)} words unusable)")
    save_figure(ax, "surname_bias_by_frequency.png")
print(f"done in {time.perf_counter() - start:.0f} s")
