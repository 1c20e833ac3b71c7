"""Tutorial 6: GloVe-V's uncertainty next to the document bootstrap's (paper Fig. 4).
==================================================================================

The document bootstrap resamples the corpus's documents with replacement and retrains GloVe each
time: it measures how the embedding would change with another sample of documents. GloVe-V
measures the reconstruction error of the co-occurrences given the corpus, from one fit. They are
different uncertainties. This tutorial compares them on rotation-free statistics (cosine
similarities of word pairs): standard errors from B bootstrap refits against GloVe-V delta-method
standard errors from the full fit. Each refit also starts from its own random seed, so the
bootstrap includes the training noise of GloVe itself.
Corpus: the embedded corpus (refitting B times is what makes the bootstrap expensive).
Parameters: D = 50, 25 epochs, x_max = 100, B = 8 resamples of the paragraphs, vocabulary fixed.
Run: python tutorials/06_bootstrap_vs_glovev.py  (about 8 minutes on 2 cores).
Figure: figures/bootstrap_vs_glovev.png.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from _common import QUICK, fit_objects, save_figure
from sklearn.base import clone

import glovev_ext

start = time.perf_counter()
vectorizer, estimator = fit_objects()
documents = list(glovev_ext.load_default_corpus(max_documents=3000 if QUICK else None))
X = vectorizer.set_params(progress=False).fit_transform(documents)


def fit(matrix, seed):
    return clone(estimator).set_params(random_state=seed, progress=False).fit(matrix)


full = glovev_ext.KeyedVectorsWithVariance.from_estimator(fit(X, 0))
words = [w for w in full.index_to_key[:400] if full.has_covariance(w)]
rng = np.random.default_rng(0)
pairs = [tuple(rng.choice(words, 2, replace=False)) for _ in range(150)]
glovev_se = np.array([full.similarity_test(a, b).std_error for a, b in pairs])

replicates = 2 if QUICK else 8
bootstrap = []
for b in range(replicates):
    sample = [documents[i] for i in rng.integers(0, len(documents), len(documents))]
    refit = glovev_ext.KeyedVectorsWithVariance.from_estimator(fit(vectorizer.transform(sample), b + 1))
    bootstrap.append([refit.similarity(a, c) for a, c in pairs])
    print(f"bootstrap refit {b + 1}/{replicates} done ({time.perf_counter() - start:.0f} s)")
bootstrap_se = np.array(bootstrap).std(axis=0, ddof=1)

ratio = bootstrap_se / glovev_se
print(f"{len(pairs)} word pairs among the 400 most frequent words: median bootstrap SE "
      f"{np.median(bootstrap_se):.4f}, median GloVe-V SE {np.median(glovev_se):.4f}, median ratio "
      f"{np.median(ratio):.2f} (quartiles {np.quantile(ratio, 0.25):.2f}-{np.quantile(ratio, 0.75):.2f}); "
      f"rank correlation {np.corrcoef(np.argsort(np.argsort(bootstrap_se)), np.argsort(np.argsort(glovev_se)))[0, 1]:.2f}")
_, ax = plt.subplots(figsize=(6.4, 4.8))
ax.loglog(glovev_se, bootstrap_se, "o", alpha=0.5)
limits = [min(glovev_se.min(), bootstrap_se.min()), max(glovev_se.max(), bootstrap_se.max())]
ax.plot(limits, limits, color="grey", linestyle="--", linewidth=0.8)
ax.set_xlabel("GloVe-V standard error of cos(a, b)")
ax.set_ylabel(f"document bootstrap standard error ({replicates} refits)")
ax.set_title("Two uncertainties of the same cosines")
save_figure(ax, "bootstrap_vs_glovev.png")
print(f"done in {time.perf_counter() - start:.0f} s")
