"""GloVe training on a PyTorch device against the compiled CPU trainer, in the same run: time and quality by batch.

Usage: python bench/device_training.py [--corpus gutenberg_us_10m] [--dim 100] [--epochs 10] [--device cuda]
                                       [--batch-sizes default 4096 16384 65536] [--device-memory 256M]

Counts the corpus (the vectorizer's defaults; the embedded corpus when ../shared/data is absent), trains it with
the compiled trainer on every core (the baseline, measured in this run) and then on the device once per batch size
("default" is the library's choice, printed), all from seed 0. Each row: seconds, updates per second and their
ratio to the compiled trainer's, the last epoch's cost, and the centre vectors' WordSim-353 and SimLex-999
Spearman's rho and Google analogy accuracy (gensim's bundled files). Issue 27's goals on an accelerator
(gutenberg_us_10m, D=100, 10 epochs): at most 5 s, and scores at least 0.147 / 0.048 / 0.087 (the C tool's).
``--device`` defaults to cuda where PyTorch sees one, else cpu (the same code on the processor, far slower than
the compiled trainer: a check that the bench runs, not a speed claim). ``--device-memory`` adds, for the first
batch size, a run whose entries stay in host memory and are sent to the device within that budget (the path of a
matrix larger than the device's memory): its time against the entries held there, and whether the parameters are
the same (on the CPU they are, bit for bit; on CUDA the order is drawn by another generator).
"""

from __future__ import annotations

import argparse
import time

from _data import corpus
from gensim.models import KeyedVectors
from gensim.test.utils import datapath

import glovev_ext
from glovev_ext.glove import train_glove
from glovev_ext.glove.device import import_torch, resolve_batch_size

GOALS = {"seconds": 5.0, "wordsim": 0.147, "simlex": 0.048, "analogy": 0.087}


def scores(words, vectors) -> tuple[float, float, float]:
    """WordSim-353 and SimLex-999 Spearman's rho and Google analogy accuracy of ``vectors``."""
    keyed = KeyedVectors(vectors.shape[1])
    keyed.add_vectors(list(words), vectors)
    wordsim = keyed.evaluate_word_pairs(datapath("wordsim353.tsv"))[1][0]
    simlex = keyed.evaluate_word_pairs(datapath("simlex999.txt"))[1][0]
    analogy = keyed.evaluate_word_analogies(datapath("questions-words.txt"))[0]
    return wordsim, simlex, analogy


def timed_training(X, dim: int, epochs: int, torch, **options) -> tuple[float, object]:
    """Seconds of one training run (the device synchronised before the clock stops) and its parameters."""
    start = time.perf_counter()
    trained = train_glove(X, dim, epochs=epochs, random_state=0, progress=False, **options)
    if options.get("device", "cpu").startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - start, trained


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="gutenberg_us_10m", choices=["brown", "gutenberg_us_10m",
                                                                          "gutenberg_us_31m"])
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--device", default=None, help="a PyTorch device (default: cuda if available, else cpu)")
    parser.add_argument("--batch-sizes", nargs="+", default=["default", "4096", "16384", "65536"])
    parser.add_argument("--device-memory", default=None, help="also train the first batch size streamed within "
                        "this budget of device memory (e.g. 256M)")
    args = parser.parse_args()
    torch = import_torch()
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    label, documents = corpus(args.corpus)
    X = glovev_ext.CooccurrenceVectorizer(progress=False).fit_transform(documents)
    updates = X.nnz * args.epochs
    print(f"{label}: {X.shape[0]:,} words, {X.nnz:,} nonzeros, D={args.dim}, {args.epochs} epochs; device {device} "
          f"(torch {torch.__version__}"
          f"{', ' + torch.cuda.get_device_name(device) if device.startswith('cuda') else ''})")
    train_glove(X[:100, :100], args.dim, epochs=1, progress=False)  # compile the kernel outside the timing
    seconds, trained = timed_training(X, args.dim, args.epochs, torch, n_jobs=-1)
    baseline = updates / seconds
    header = f"{'trainer':<32} {'seconds':>8} {'M updates/s':>12} {'/ compiled':>10} {'cost':>8} " \
             f"{'WordSim':>8} {'SimLex':>8} {'analogy':>8}"
    print(header)
    print(f"{'compiled, every core':<32} {seconds:8.1f} {baseline / 1e6:12.2f} {1.0:10.2f} {trained.costs[-1]:8.4f} "
          + " ".join(f"{value:8.3f}" for value in scores(X.words, trained.center_vectors)))
    first = None
    for size in args.batch_sizes:
        batch = None if size == "default" else int(size)
        name = f"{device}, batch {resolve_batch_size(batch, X):,}{' (default)' if batch is None else ''}"
        seconds, trained = timed_training(X, args.dim, args.epochs, torch, device=device, batch_size=batch)
        first = first or (batch, seconds, trained)
        print(f"{name:<32} {seconds:8.1f} {updates / seconds / 1e6:12.2f} {updates / seconds / baseline:10.2f} "
              f"{trained.costs[-1]:8.4f} " + " ".join(f"{value:8.3f}" for value in scores(X.words,
                                                                                          trained.center_vectors)))
    if args.device_memory is not None and first is not None:
        batch, resident_seconds, resident = first
        seconds, streamed = timed_training(X, args.dim, args.epochs, torch, device=device, batch_size=batch,
                                           device_memory=args.device_memory)
        print(f"{f'{device}, streamed in {args.device_memory}':<32} {seconds:8.1f} {updates / seconds / 1e6:12.2f} "
              f"{updates / seconds / baseline:10.2f} {streamed.costs[-1]:8.4f}; / held on the device: "
              f"{resident_seconds / seconds:.2f} of its speed; the same parameters: "
              f"{bool((streamed.center_vectors == resident.center_vectors).all())}")
    print(f"goals on an accelerator (gutenberg_us_10m, D=100, 10 epochs): at most {GOALS['seconds']:.0f} s, "
          f"WordSim >= {GOALS['wordsim']}, SimLex >= {GOALS['simlex']}, analogy >= {GOALS['analogy']}")


if __name__ == "__main__":
    main()
