"""The ``glovev`` command line: the main job from a corpus to trained vectors, with a report."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence

import numpy as np
from gensim.models import KeyedVectors
from gensim.test.utils import datapath
from tqdm.contrib.logging import logging_redirect_tqdm

from .corpus import LineCorpus, default_corpus_path, load_default_corpus
from .estimator import GloVeVEstimator
from .vectorizer import CooccurrenceVectorizer

_PROBE_WORDS = ("man", "woman", "doctor", "river", "gold", "happy")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``glovev`` command; returns the process exit status."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s: %(message)s")
    logging.getLogger("glovev_ext").setLevel(logging.WARNING if args.quiet else logging.INFO)
    try:
        with logging_redirect_tqdm():
            return args.run(args)
    except (FileNotFoundError, ValueError, TypeError) as error:
        print(f"glovev: error: {error}", file=sys.stderr)
        return 2


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="glovev", description="GloVe embeddings with error bars (GloVe-V).")
    subcommands = parser.add_subparsers(dest="command", required=True)
    fit = subcommands.add_parser(
        "fit", help="count a corpus and train GloVe on it",
        description="Count co-occurrences of a corpus (one document per line; a text file, .gz/.bz2/.xz, or "
                    "a folder of them) and train GloVe. Without CORPUS, the embedded default corpus is used.")
    fit.add_argument("corpus", nargs="?", help="corpus file or folder (default: the embedded corpus)")
    fit.add_argument("--dim", type=int, default=50, help="embedding dimension D (default 50)")
    fit.add_argument("--epochs", type=int, default=25, help="training epochs (default 25)")
    fit.add_argument("--window", type=int, default=8, help="context words on each side (default 8)")
    fit.add_argument("--min-count", type=int, default=5, help="minimum word frequency (default 5)")
    fit.add_argument("--max-vocab", type=int, default=None, help="keep at most this many words")
    fit.add_argument("--no-lowercase", action="store_true", help="keep case (default: lowercase)")
    fit.add_argument("--threads", type=int, default=-1, help="threads (default: all cores)")
    fit.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    fit.add_argument("--quiet", action="store_true", help="no progress bars or log lines")
    fit.set_defaults(run=_run_fit)
    return parser


def _run_fit(args: argparse.Namespace) -> int:
    if args.corpus is None:
        corpus = load_default_corpus()
        print(f"corpus: the embedded default corpus ({default_corpus_path().name}; no corpus given)")
    else:
        corpus = LineCorpus(args.corpus)
        print(f"corpus: {corpus.source}")
    show_progress = not args.quiet

    vectorizer = CooccurrenceVectorizer(window=args.window, min_count=args.min_count,
                                        max_vocab_size=args.max_vocab, lowercase=not args.no_lowercase,
                                        n_jobs=args.threads, progress=show_progress)
    start = time.perf_counter()
    cooccurrence = vectorizer.fit_transform(corpus)
    count_seconds = time.perf_counter() - start
    print(f"counted: {vectorizer.n_tokens_:,} tokens in {vectorizer.n_documents_:,} documents -> "
          f"{cooccurrence.shape[0]:,} words (min_count {args.min_count}), {cooccurrence.nnz:,} nonzero "
          f"co-occurrences, window {args.window}  [{count_seconds:.1f} s, "
          f"{vectorizer.n_tokens_ / count_seconds / 1e6:.2f}M tokens/s]")

    start = time.perf_counter()
    model = GloVeVEstimator(args.dim, epochs=args.epochs, random_state=args.seed, n_jobs=args.threads,
                            progress=show_progress).fit(cooccurrence)
    fit_seconds = time.perf_counter() - start
    costs = model.training_costs_
    print(f"trained: D={args.dim}, {args.epochs} epochs, cost {costs[0]:.4f} -> {costs[-1]:.4f}; "
          f"GloVe-V covariances for {int(model.covariance_defined_.sum()):,} of {cooccurrence.shape[0]:,} words "
          f"({int(model.pseudo_inverse_.sum()):,} on the pseudo-inverse branch; the others have {args.dim} or "
          f"fewer contexts)  [{fit_seconds:.1f} s]")
    _print_uncertainty_by_frequency(model, vectorizer.word_counts_)

    vectors = KeyedVectors(args.dim)
    vectors.add_vectors(list(cooccurrence.words), model.embedding_)
    _, (rho, p_value), oov_percent = vectors.evaluate_word_pairs(datapath("wordsim353.tsv"))
    print(f"WordSim-353 (centre vectors): Spearman rho = {rho:.3f} (p = {p_value:.2g}), "
          f"{100 - oov_percent:.0f}% of pairs in vocabulary")
    print("nearest neighbours by cosine of centre vectors:")
    for word in (w for w in _PROBE_WORDS if w in vectors.key_to_index):
        neighbours = ", ".join(f"{other} {similarity:.2f}" for other, similarity in vectors.most_similar(word, topn=5))
        print(f"  {word}: {neighbours}")
    return 0


def _print_uncertainty_by_frequency(model: GloVeVEstimator, word_counts: np.ndarray) -> None:
    """Median standard error of a centre-vector component in four frequency bands (rarest last)."""
    defined = np.flatnonzero(model.covariance_defined_)
    if defined.size == 0:
        return
    standard_errors = np.sqrt(model.covariance_.diagonal(defined).mean(axis=1))
    print("median standard error of a centre-vector component, by word frequency:")
    for band in np.array_split(np.arange(defined.size), 4):
        counts = word_counts[defined[band]]
        print(f"  words seen {counts.min():,}-{counts.max():,} times: {np.median(standard_errors[band]):.4f}")


if __name__ == "__main__":
    sys.exit(main())
