"""Tutorial 1: fit GloVe-V on a corpus, and see uncertainty fall with word frequency.
==================================================================================

Corpus: gutenberg_us_10m from ../shared/data (the embedded corpus on a fresh clone).
Parameters: D = 50, 25 epochs, x_max = 100, window 8, min_count 5, seed 0 (see _common.py).
Run: python tutorials/01_fit_and_variance.py  (about 4 minutes on 2 cores, most of it the fit,
which later tutorials reuse from tutorials/output/model).
Figures: figures/variance_by_frequency.png (paper Fig. 3), figures/uncertainty_ellipses.png (Fig. 2).
"""

import time

import numpy as np
from _common import fitted_model, save_figure

from glovev_ext.plots import plot_uncertainty_ellipses, plot_variance_by_frequency

start = time.perf_counter()
kv = fitted_model()
store = kv.covariance_store
with_covariance = [key for key in kv.index_to_key if kv.has_covariance(key)]
print(f"{len(with_covariance):,} of {len(kv):,} words have a covariance; the others co-occur with "
      f"{kv.vector_size} or fewer distinct words, and GloVe-V refuses to guess for them.")

# How the typical standard error of a vector component grows as words get rarer.
counts = np.array([kv.get_vecattr(key, "count") for key in with_covariance])
errors = np.sqrt(store.diagonal([kv.covariance_row(key) for key in with_covariance]).mean(axis=1))
for band in np.array_split(np.argsort(-counts), 5):
    print(f"words seen {counts[band].min():>7,}-{counts[band].max():>9,} times: median standard error "
          f"{np.median(errors[band]):.3f} (vector norms: median {np.median(np.linalg.norm(kv[[with_covariance[i] for i in band]], axis=1)):.2f})")

save_figure(plot_variance_by_frequency(kv, random_state=0), "variance_by_frequency.png")

# Frequent and rarer words side by side in a 2-D projection, with 100 draws each.
by_count = {kv.get_vecattr(key, "count"): key for key in with_covariance if key.isalpha()}
chosen = [w for w in ("she", "large", "river") if w in with_covariance]
chosen += [by_count[min(by_count, key=lambda count: abs(count - target))] for target in (150, 40)]
print("ellipses for:", ", ".join(f"{w} ({kv.get_vecattr(w, 'count'):,})" for w in chosen))
save_figure(plot_uncertainty_ellipses(kv, chosen, n_draws=100, random_state=0), "uncertainty_ellipses.png")
print(f"done in {time.perf_counter() - start:.0f} s")
