"""Split halves of a posterior fit, with the covariance the two halves' errors share through the prior (docs/method.md 6.12).

Usage: python bench/shared_prior_halves.py [--n-components 50] [--epochs 25] [--words 400] [--pairs 300]

Two posteriors of one word from disjoint halves, under one prior ``N(mu, P^-1)``, have errors
``w_hat - w`` with covariances ``Sigma_A``, ``Sigma_B`` and cross-covariance ``Sigma_A P Sigma_B``
(each is ``-Sigma P (w - mu)`` plus independent noise), so ``Var(w_A - w_B) = Sigma_A + Sigma_B -
Sigma_A P Sigma_B - Sigma_B P Sigma_A``. Fits the embedded corpus with the default posterior, fits
two random halves of its documents in the pooled basis (``fit_subcorpora``), and prints by band of
pooled count: the mean Wald statistic of ``w_A = w_B`` per dimension with the plain sum of the
covariances and with the shared part taken out (1 if calibrated; the share of words whose chi2(D)
test rejects at 5 %), and for ``--pairs`` random pairs per band the standard deviation of the
standardised difference of their cosine (delta method) and how often ``|z| > 1.96``, both ways.
About 4 minutes on 2 cores.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats

import glovev_ext
from glovev_ext.covariance.prior import shared_prior_difference

BANDS = ((5, 99), (100, 299), (300, 999), (1000, 2999), (3000, 10**12))


def cosine_gradients(x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    nx, ny = np.linalg.norm(x), np.linalg.norm(y)
    cosine = x @ y / (nx * ny)
    return cosine, y / (nx * ny) - cosine * x / nx**2, x / (nx * ny) - cosine * y / ny**2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-components", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=25)
    parser.add_argument("--words", type=int, default=400, help="words per band for the vector test")
    parser.add_argument("--pairs", type=int, default=300, help="random pairs per band for the cosines")
    options = parser.parse_args()
    dim = options.n_components
    documents = list(glovev_ext.load_default_corpus())
    # the model's own noise, as docs/method.md 6.12 measured it
    estimator = glovev_ext.GloVeVEstimator(n_components=dim, epochs=options.epochs, random_state=0)
    fitted = glovev_ext.fit_corpus(documents, estimator=estimator, calibrate_noise=False, progress=False)
    precision = fitted.estimator.prior_.precision
    first = np.random.default_rng(0).random(len(documents)) < 0.5
    halves = glovev_ext.fit_subcorpora(fitted, {"A": [d for d, a in zip(documents, first) if a],
                                                "B": [d for d, a in zip(documents, first) if not a]})
    half_a, half_b = halves["A"], halves["B"]
    common = [w for w in half_a.index_to_key if w in half_b.key_to_index]
    counts = np.array([fitted.keyed_vectors.get_vecattr(w, "count") for w in common])
    generator = np.random.default_rng(1)
    critical = stats.chi2.ppf(0.95, dim)
    print(f"embedded corpus, D = {dim}, {options.epochs} epochs, default posterior; plain -> shared prior taken out")
    for low, high in BANDS:
        members = [w for w, c in zip(common, counts) if low <= c <= high]
        plain, shared, singular = [], [], 0
        for w in [members[k] for k in generator.permutation(len(members))[:options.words]]:
            difference = half_a[w] - half_b[w]
            first_cov, second_cov = half_a.covariance(w), half_b.covariance(w)
            joint = shared_prior_difference(first_cov, second_cov, precision)
            if np.linalg.cond(joint) > 1e10:  # a word the prior holds entirely: both halves return its mean
                singular += 1
                continue
            plain.append(difference @ np.linalg.solve(first_cov + second_cov, difference))
            shared.append(difference @ np.linalg.solve(joint, difference))
        z_plain, z_shared = [], []
        for _ in range(options.pairs):
            a, b = (members[k] for k in generator.choice(len(members), 2, replace=False))
            cos_a, grad_aa, grad_ba = cosine_gradients(half_a[a], half_a[b])
            cos_b, grad_ab, grad_bb = cosine_gradients(half_b[a], half_b[b])
            variance = (grad_aa @ half_a.covariance(a) @ grad_aa + grad_ba @ half_a.covariance(b) @ grad_ba
                        + grad_ab @ half_b.covariance(a) @ grad_ab + grad_bb @ half_b.covariance(b) @ grad_bb)
            cross = (grad_aa @ half_a.covariance(a) @ precision @ half_b.covariance(a) @ grad_ab
                     + grad_ba @ half_a.covariance(b) @ precision @ half_b.covariance(b) @ grad_bb)
            z_plain.append((cos_a - cos_b) / np.sqrt(variance))
            z_shared.append((cos_a - cos_b) / np.sqrt(variance - 2 * cross))
        plain, shared, z_plain, z_shared = map(np.array, (plain, shared, z_plain, z_shared))
        print(f"count {low}-{high if high < 10**12 else ''} ({len(members):,} words, {singular} left out as held "
              f"by the prior): mean Wald/D "
              f"{plain.mean() / dim:.3f} -> {shared.mean() / dim:.3f} (chi2 rejects {np.mean(plain > critical):.3f} -> "
              f"{np.mean(shared > critical):.3f}); cosine z sd {z_plain.std():.3f} -> {z_shared.std():.3f}, "
              f"|z| > 1.96 {np.mean(np.abs(z_plain) > 1.96):.3f} -> {np.mean(np.abs(z_shared) > 1.96):.3f}", flush=True)


if __name__ == "__main__":
    main()
