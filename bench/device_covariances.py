"""The covariances with their Gram matrices on a PyTorch device against the CPU's, in the same run.

Usage: python bench/device_covariances.py [--corpus gutenberg_us_10m] [--dim 300] [--epochs 1] [--device cuda]
       [--point-estimate trained] [--n-sweeps 0]

Counts the corpus (the vectorizer's defaults; the embedded corpus when ../shared/data is absent), trains it with
the compiled trainer (``--epochs``, seed 0), and computes every covariance of the paper's recipe
(``--point-estimate trained``; ``posterior`` for the default recipe: its prior, sweep and posteriors) twice from
those parameters: on the CPU threads (the baseline, measured in this run) and with ``device=``. Prints both
times, their ratio, how many words have a covariance in each, the largest difference between the two runs'
covariances over the words with cond(H_i) < 1e6 (rounding grows by it: in the inverse for the paper's recipe,
in the optimum whose residuals give s2_i for the posterior), relative to each covariance's largest entry, and
between their vectors. Issue 27's goal on an accelerator: every covariance at D=300 in at
most 2 s. ``--device`` defaults to cuda where PyTorch sees one, else cpu (the same code on the processor: a check
that the bench runs).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _data import corpus

import glovev_ext
from glovev_ext.covariance.wls import WordFitter, estimated_condition
from glovev_ext.glove import train_glove
from glovev_ext.glove.device import import_torch


def timed_fit(X, parameters, dim: int, torch, point_estimate: str, n_sweeps: int | None,
              **options) -> tuple[float, glovev_ext.GloVeVEstimator]:
    """Seconds of the fit from ``parameters`` (the device synchronised before the clock stops) and the estimator."""
    start = time.perf_counter()
    model = glovev_ext.GloVeVEstimator(dim, pretrained=parameters, point_estimate=point_estimate, n_sweeps=n_sweeps,
                                       progress=False, **options).fit(X)
    if options.get("device", "cpu").startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - start, model


def h_conditions(X, model) -> np.ndarray:
    """LAPACK's estimate of cond(H_i) of every word (inf for |K_i| <= D) at the model's contexts and biases."""
    fitter = WordFitter(X, model.context_embedding_, model.context_bias_, model.x_max, model.alpha)
    workspace, dim = fitter.workspace(), model.embedding_.shape[1]
    return np.array([estimated_condition(fitter.normal_equations(i, float(model.bias_[i]), workspace)[0].copy())
                     if count > dim else np.inf for i, count in enumerate(fitter.n_contexts())])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="gutenberg_us_10m", choices=["brown", "gutenberg_us_10m",
                                                                          "gutenberg_us_31m"])
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--device", default=None, help="a PyTorch device (default: cuda if available, else cpu)")
    parser.add_argument("--point-estimate", default="trained", choices=["trained", "posterior"])
    parser.add_argument("--n-sweeps", type=int, default=None, help="the posterior's sweeps (default: the "
                        "estimator's, 1); 0 compares the passes from the same trained parameters alone")
    args = parser.parse_args()
    torch = import_torch()
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    label, documents = corpus(args.corpus)
    X = glovev_ext.CooccurrenceVectorizer(progress=False).fit_transform(documents)
    trained = train_glove(X, args.dim, epochs=args.epochs, random_state=0, progress=False)
    parameters = (trained.center_vectors, trained.context_vectors, trained.center_biases, trained.context_biases)
    print(f"{label}: {X.shape[0]:,} words, {X.nnz:,} nonzeros, D={args.dim}, {args.epochs} epoch(s) trained; "
          f"point_estimate={args.point_estimate!r}, n_sweeps={args.n_sweeps}; device {device} "
          f"(torch {torch.__version__}"
          f"{', ' + torch.cuda.get_device_name(device) if device.startswith('cuda') else ''})")
    cpu_seconds, cpu = timed_fit(X, parameters, args.dim, torch, args.point_estimate, args.n_sweeps)
    device_seconds, on_device = timed_fit(X, parameters, args.dim, torch, args.point_estimate, args.n_sweeps,
                                          device=device)
    # rounding in H_i grows by its condition number in the inverse (the paper's recipe) and in the optimum whose
    # residuals give s2_i (the posterior's): the words compared are those with cond(H_i) < 1e6
    condition = cpu.condition_number_ if args.point_estimate == "trained" else h_conditions(X, cpu)
    compared = np.flatnonzero(cpu.covariance_defined_ & (condition < 1e6))
    largest = max((np.abs(on_device.covariance_[i] - cpu.covariance_[i]).max() / np.abs(cpu.covariance_[i]).max()
                   for i in compared), default=float("nan"))
    print(f"CPU threads: {cpu_seconds:.1f} s, {int(cpu.covariance_defined_.sum()):,} covariances")
    print(f"{device}: {device_seconds:.1f} s, {int(on_device.covariance_defined_.sum()):,} covariances "
          f"(CPU / {device} = {cpu_seconds / device_seconds:.2f})")
    vectors = np.abs(on_device.embedding_ - cpu.embedding_).max(axis=1)
    print(f"largest difference over {compared.size:,} words with cond(H_i) < 1e6, relative to each covariance's "
          f"largest entry: {largest:.1e}; between their vectors: {vectors[compared].max(initial=0):.1e} (over every "
          f"word: {vectors.max():.1e})")
    print("goal on an accelerator (gutenberg_us_10m, D=300): every covariance in at most 2 s")


if __name__ == "__main__":
    main()
