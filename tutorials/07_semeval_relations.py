"""Tutorial 7: relational similarity (SemEval-2012 Task 2) with GloVe-V intervals, against random (paper Fig. 6).
==============================================================================================================

Each pair x:y of a relation is rated by how close its offset y - x is to the relation's three
paradigm offsets (mean cosine), and the ratings are scored by the organisers' two metrics: MaxDiff
accuracy (answering the Turkers' "most / least illustrative" questions) and Spearman correlation
with the gold ratings. Every Monte Carlo draw of the embedding rates every pair again, so the
scores get intervals, relations can be compared with their correlation, and the organisers'
Random baseline (with the spread of random ratings) becomes a test.
Data: ../shared/data/semeval2012_task2 (the full task; the paper's four relations, then all 79);
without it, the bundled subcategory 1a (glovev_ext's sample of the release).
Corpus: gutenberg_us_31m (the largest shared corpus: it covers the relations' words best), the
parameters of tutorial 1; the embedded corpus without ../shared/data.
Run: python tutorials/07_semeval_relations.py  (about 3 minutes the first time: it fits the 31m
corpus; 20 s once the model exists).
Figure: figures/semeval_relations.png.
"""

import time

from _common import QUICK, fitted_model, save_figure, shared_path

from glovev_ext import evaluate_relational_similarity, read_semeval2012
from glovev_ext.plots import plot_relational_similarity
from glovev_ext.stats import PAPER_RELATIONS

start = time.perf_counter()
kv = fitted_model("31m")
data = shared_path("semeval2012_task2")
if data is None:
    print("../shared/data/semeval2012_task2 not found: using the bundled subcategory 1a only")
    relations = read_semeval2012()  # the bundled sample, subcategory 1a
else:
    relations = read_semeval2012(data, PAPER_RELATIONS)
draws = 200 if QUICK else 1000

result = evaluate_relational_similarity(kv, relations, n_draws=draws, random_state=0, missing="drop")
print(result.summary())
print()
for subcategory, label, rated in zip(result.subcategories, result.labels, result.n_pairs):
    print(f"{label}: {rated} of {len(relations[subcategory].pairs)} pairs rated")
print()
print("Better than random? (one-sided; the paper: p = 0.08, < 0.001, 0.02, 0.08 for MaxDiff on COHA)")
print(result.versus_random().summary_frame().round(4).to_string())

if len(result.subcategories) >= 4:
    print()
    print("Between relations (joint draws; the paper: Contrast vs Cause-Purpose p = 0.03, "
          "Cause-Purpose vs Part-Whole p = 0.92):")
    for first, second in (("4b", "8e"), ("8e", "2d")):
        for metric in ("maxdiff", "spearman"):
            test = result.difference(first, second, metric)
            low, high = test.conf_int()
            print(f"   {test.name}: {test.estimate:+.3f} [{low:+.3f}, {high:+.3f}], p = {test.pvalue:.3f}")

save_figure(plot_relational_similarity(result)[0], "semeval_relations.png")

if data is not None:
    every = read_semeval2012(data)
    broad = evaluate_relational_similarity(kv, every, n_draws=500, random_state=0, missing="drop")
    versus = broad.versus_random("maxdiff").correct("holm")
    raw = (versus.pvalues < 0.05).sum()
    adjusted = (versus.pvalues_adjusted < 0.05).sum()
    print()
    print(f"All {len(every)} relations: {len(broad.subcategories)} scored "
          f"({len(every) - len(broad.subcategories)} dropped for too few usable pairs); MaxDiff beats the Random "
          f"baseline at p < 0.05 in {raw}, and in {adjusted} after Holm's correction for {len(versus)} tests")
print(f"done in {time.perf_counter() - start:.0f} s")
