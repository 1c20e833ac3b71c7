"""A study for issue 23: a noise scale by word frequency, estimated on one internal split, checked on another.

Usage: python bench/noise_calibration.py [--n-components 50] [--epochs 25]

Fits the embedded corpus with the default posterior, then splits its documents at random into two
halves (seed 0) and fits each half's rows as posteriors under the pooled prior and contexts (bias
free, as ``fit_subcorpora`` does). Per word in both halves it takes the Wald statistic of
``w_A = w_B`` over D with the variance of the difference, ``Sigma_A + Sigma_B - Sigma_A P Sigma_B -
Sigma_B P Sigma_A`` (the shared prior taken out, bench/shared_prior_halves.py), and averages it in
bins of the word's expected count in a half; the averages (at least 1) are the noise scale
``kappa(count)``, interpolated in log count. A second split (seed 1) is then fitted twice, with each
row's ``s2`` as the model gives it and multiplied by ``kappa`` of its count in the half, and the
same statistic is printed by band, with the share of words whose chi2(D) test rejects at 5 %. The
study (docs/method.md 6.12) that led to the library's calibration (``fit_corpus``'s
``calibrate_noise``, docs/method.md 6.13); the fit here keeps the model's own noise so the study
reproduces as published. About 5 minutes on 2 cores.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats

import glovev_ext
from glovev_ext.covariance.wls import WordFitter
from glovev_ext.covariance.prior import pooled_sigma2, posterior, shared_prior_difference

BIN_EDGES = (2.5, 5, 10, 20, 50, 100, 200, 500, 1000, 3000, np.inf)
BANDS = ((2.5, 50), (50, 150), (150, 500), (500, 1500), (1500, np.inf))  # half of the pooled bands of 6.10


def half_posteriors(estimator, rows, noise_scale: np.ndarray) -> dict:
    """Each row's posterior (bias free) under the estimator's prior, its ``s2`` multiplied by ``noise_scale``."""
    fitter = WordFitter(rows, estimator.context_embedding_, estimator.context_bias_, estimator.x_max,
                        estimator.alpha)
    workspace = fitter.workspace()
    spans = list(zip(rows.indptr[:-1], rows.indptr[1:]))
    own = np.array([fitter.fit_row(rows.indices[a:b], rows.data[a:b], None, None, workspace).sigma2
                    for a, b in spans])
    sigma2 = pooled_sigma2(own, np.asarray(rows.sum(axis=1)).ravel()) * noise_scale
    precision = estimator.prior_.precision
    shift = precision @ estimator.prior_.mean
    fits = {}
    for i, (a, b) in enumerate(spans):
        if b - a >= 2:
            hessian, rhs, _ = fitter.row_normal_equations(rows.indices[a:b], rows.data[a:b], None, workspace)
            factor, mean, _ = posterior(hessian, rhs, sigma2[i], np.inf, precision, shift, workspace)
            fits[rows.words[i]] = (mean, factor.dense())
    return fits


def wald_by_word(fitted, documents, seed: int, scale) -> np.ndarray:
    """``(count in a half, Wald / D)`` of every word in both halves of a random split."""
    estimator, counts = fitted.estimator, fitted.keyed_vectors
    precision = estimator.prior_.precision
    first = np.random.default_rng(seed).random(len(documents)) < 0.5
    halves = []
    for side in (True, False):
        rows = fitted.vectorizer.transform([d for d, a in zip(documents, first) if a == side])
        half_counts = np.array([counts.get_vecattr(w, "count") for w in rows.words]) / 2.0
        halves.append(half_posteriors(estimator, rows, scale(half_counts)))
    out = []
    for word, (mean_a, covariance_a) in halves[0].items():
        if word not in halves[1]:
            continue
        mean_b, covariance_b = halves[1][word]
        joint = shared_prior_difference(covariance_a, covariance_b, precision)
        if np.linalg.cond(joint) > 1e10:  # held entirely by the prior: both halves return its mean
            continue
        difference = mean_a - mean_b
        out.append((counts.get_vecattr(word, "count") / 2.0,
                    difference @ np.linalg.solve(joint, difference) / mean_a.size))
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-components", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=25)
    options = parser.parse_args()
    documents = list(glovev_ext.load_default_corpus())
    estimator = glovev_ext.GloVeVEstimator(n_components=options.n_components, epochs=options.epochs, random_state=0)
    fitted = glovev_ext.fit_corpus(documents, estimator=estimator, calibrate_noise=False, progress=False)
    critical = stats.chi2.ppf(0.95, options.n_components) / options.n_components
    estimation = wald_by_word(fitted, documents, 0, np.ones_like)
    centres, scales = [], []
    print("estimation split (seed 0): mean Wald/D by expected count in a half")
    for low, high in zip(BIN_EDGES[:-1], BIN_EDGES[1:]):
        members = (estimation[:, 0] >= low) & (estimation[:, 0] < high)
        if members.sum() >= 30:
            centres.append(np.log(low * min(high, 10 * low)) / 2)
            scales.append(max(1.0, float(estimation[members, 1].mean())))
            print(f"  {low:g}-{high:g}: {members.sum():,} words, {estimation[members, 1].mean():.3f}")

    def kappa(counts):
        return np.interp(np.log(np.maximum(counts, 1e-9)), centres, scales)

    for label, scale in (("as the model gives it", np.ones_like), ("times kappa(count)", kappa)):
        check = wald_by_word(fitted, documents, 1, scale)
        print(f"check split (seed 1), s2 {label}:")
        for low, high in BANDS:
            members = (check[:, 0] >= low) & (check[:, 0] < high)
            print(f"  count in a half {low:g}-{high:g}: {members.sum():,} words, mean Wald/D "
                  f"{check[members, 1].mean():.3f}, chi2 rejects {np.mean(check[members, 1] > critical):.3f}")


if __name__ == "__main__":
    main()
