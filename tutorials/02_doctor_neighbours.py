"""Tutorial 2: the neighbours of "doctor" with intervals, and is "surgeon" really nearer than "dentist"?
=====================================================================================================

The GloVe-V paper (Fig. 5) finds on COHA that surgeon is nearer to doctor than dentist is, but
with p = 0.10: the corpus does not settle it. Here the same questions on our corpus.
Corpus and parameters: those of tutorial 1 (its fitted model is reused).
Run: python tutorials/02_doctor_neighbours.py  (under a minute once the model exists).
Figure: figures/doctor_neighbours.png.
"""

import time

from _common import fitted_model, save_figure, shared_path

from glovev_ext.plots import plot_neighbors

start = time.perf_counter()
kv = fitted_model()

# Candidates: the paper's toy list of medical occupations where it is available, plus the
# vocabulary's own nearest words.
toy = shared_path("glovev_toy_occupations/doctor_neighbours.tsv")
occupations = ([line.split("\t")[0] for line in toy.read_text().splitlines()[1:]] if toy else
               ["surgeon", "dentist", "physician", "nurse", "lawyer", "minister", "captain", "professor"])
usable = [w for w in occupations if kv.unusable_reason(w) is None]
print("occupations usable:", ", ".join(usable) or "none")
print("left out:", ", ".join(f"{w} ({kv.unusable_reason(w)})" for w in occupations if w not in usable) or "none")

top = kv.nearest_neighbors_test("doctor", topn=10, n_draws=2000, random_state=0)
print(top.summary())
save_figure(plot_neighbors(top), "doctor_neighbours.png")

candidates = list(dict.fromkeys(usable + ["physician", "nurse", "lawyer"]))
candidates = [w for w in candidates if kv.unusable_reason(w) is None and w != "doctor"]
if len(candidates) >= 2:
    print(kv.nearest_neighbors_test("doctor", candidates=candidates, n_draws=2000, random_state=0).summary())

first, second = ("surgeon", "dentist") if {"surgeon", "dentist"} <= set(usable) else tuple(candidates[:2])
print(f"\nIs {first} nearer to doctor than {second}? (joint covariance: both cosines share 'doctor')")
print(kv.similarity_difference_test(("doctor", first), ("doctor", second), alternative="larger").summary())
print(f"done in {time.perf_counter() - start:.0f} s")
