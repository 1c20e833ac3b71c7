"""The ``glovev`` command line: fit a corpus into a saved model, then ask it questions with error bars."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from gensim.test.utils import datapath
from tqdm.contrib.logging import logging_redirect_tqdm

from ._fit_report import PROBE_WORDS, report_parts
from .counting import LineCorpus, default_corpus_path, load_default_corpus
from .covariance import CONDITIONING_CHOICES, POINT_ESTIMATES
from .keyed_vectors import KeyedVectorsWithVariance
from .pipeline import fit_corpus, fit_metadata
from .saved_model import load_model, save_model
from .stats import (DEFAULT_METHOD, DEFAULT_MISSING, METHODS, MISSING_CHOICES, NEIGHBOR_COLUMNS, PAPER_RELATIONS, SCALES,
                    evaluate_relational_similarity, read_semeval2012)

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``glovev`` command; returns the process exit status (0 ok, 2 bad input, 1 other error)."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s: %(message)s")
    logging.getLogger("glovev_ext").setLevel(logging.WARNING if args.quiet else logging.INFO)
    try:
        with logging_redirect_tqdm(), warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return args.run(args)
    except (FileNotFoundError, ValueError, TypeError, KeyError, ImportError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"glovev: error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings on the command line: one line each, no source line."""
    print(f"glovev: warning: {message}", file=sys.stderr)


class _RenamedOption(argparse.Action):
    """An option of 0.1 that still works, with a warning naming the option that replaced it."""

    def __init__(self, option_strings, dest, new_option: str, convert=None, **kwargs):
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kwargs)
        self.new_option = new_option
        self.convert = convert

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"glovev: warning: {option_string} is deprecated and goes in glovev-ext 0.3; use {self.new_option}",
              file=sys.stderr)
        setattr(namespace, self.dest, values if self.convert is None else self.convert(values))


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="glovev", description="GloVe embeddings with error bars (GloVe-V).")
    subcommands = parser.add_subparsers(dest="command", required=True)

    fit = _subcommand(subcommands, "fit", _run_fit, "count a corpus, train GloVe and compute GloVe-V covariances",
                      "Fit a corpus (one document per line; a text file, .gz/.bz2/.xz, or a folder of them) or a "
                      "folder of Stanford GloVe output into a saved model. Without CORPUS, the embedded default "
                      "corpus is used.")
    fit.add_argument("corpus", nargs="?", help="corpus file or folder (default: the embedded corpus)")
    fit.add_argument("--glove-folder", help="folder of Stanford GloVe output (vocab.txt, cooccurrence.bin, "
                                            "vectors.bin) instead of a corpus")
    fit.add_argument("--output", default="glovev_model", help="model directory to write (default ./glovev_model)")
    fit.add_argument("--n-components", type=int, default=50,
                     help="embedding dimension D (default 50); with --glove-folder, the D of a vectors.txt "
                          "(vectors.bin tells its own)")
    fit.add_argument("--dim", type=int, dest="n_components", action=_RenamedOption, new_option="--n-components")
    fit.add_argument("--epochs", type=int, default=25, help="training epochs (default 25)")
    fit.add_argument("--x-max", type=float, default=100.0, help="weighting cut-off x_max (default 100)")
    fit.add_argument("--alpha", type=float, default=0.75, help="weighting exponent alpha (default 0.75)")
    fit.add_argument("--window", type=int, default=8, help="context words on each side (default 8)")
    fit.add_argument("--min-count", type=int, default=5, help="minimum word frequency (default 5)")
    fit.add_argument("--max-vocab", type=int, default=None, help="keep at most this many words")
    fit.add_argument("--no-lowercase", action="store_true", help="keep case (default: lowercase)")
    fit.add_argument("--conditioning", choices=CONDITIONING_CHOICES, default="exact",
                     help="exact: invert every H_i whose condition number is at most 1e10, no covariance above it; "
                          "paper: the GloVe-V paper's pseudo-inverse, which understates variances (default exact)")
    fit.add_argument("--point-estimate", choices=POINT_ESTIMATES, default="trained",
                     help="the vectors the covariances describe: trained (the paper's), optimum (each word's "
                          "weighted-least-squares vector given the contexts), or alternating (exact sweeps after "
                          "training) (default trained)")
    fit.add_argument("--sweeps", type=int, default=2, help="sweeps of --point-estimate alternating (default 2)")
    _add_n_jobs(fit)
    _add_random_state(fit, "seeds training")

    similarity = _query(subcommands, "similarity", _run_similarity, "cosine similarity of two words with an "
                        "interval and p-value; with --versus, the difference from a second pair")
    similarity.add_argument("word1")
    similarity.add_argument("word2")
    similarity.add_argument("--versus", nargs=2, metavar=("WORD3", "WORD4"),
                            help="test cos(word1, word2) - cos(word3, word4) with their joint covariance")
    similarity.add_argument("--null", type=float, default=0.0, help="null value (default 0)")
    _add_test_options(similarity)

    neighbors = _query(subcommands, "neighbors", _run_neighbors, "nearest neighbours with intervals, tests "
                       "between adjacent ranks and rank probabilities", NEIGHBOR_COLUMNS)
    neighbors.add_argument("word")
    neighbors.add_argument("--topn", type=int, default=10, help="neighbours from the vocabulary (default 10)")
    neighbors.add_argument("--candidates", help="candidate words: a file (one per line) or a comma-separated list")
    neighbors.add_argument("--draws", type=int, default=2000, help="Monte Carlo draws for ranks (default 2000)")
    neighbors.add_argument("--plot", help="also write a forest plot to this PNG")
    _add_test_options(neighbors, alternative=False, transitional_missing=True)

    weat = _query(subcommands, "weat", _run_weat, "WEAT effect size and statistic with GloVe-V errors, and the "
                  "classic permutation test")
    for name, role in (("x", "first target"), ("y", "second target"), ("a", "first attribute"),
                       ("b", "second attribute")):
        weat.add_argument(f"--{name}", required=True, help=f"{role} words: a file or a comma-separated list")
    weat.add_argument("--ddof", type=int, default=1, help="ddof of the effect size's standard deviation (default 1)")
    weat.add_argument("--permutations", type=int, default=None,
                      help="sampled permutations (default: exact when there are at most 100,000 partitions)")
    _add_test_options(weat)

    bias = _query(subcommands, "bias", _run_bias, "Garg et al. cosine bias of attributes between two groups")
    bias.add_argument("--group-a", required=True, help="group A words (file or comma-separated)")
    bias.add_argument("--group-b", required=True, help="group B words (file or comma-separated)")
    bias.add_argument("--attributes", required=True, help="attribute words (file or comma-separated)")
    _add_test_options(bias)

    evaluate = _query(subcommands, "evaluate", _run_evaluate, "Spearman correlation with a word-similarity "
                      "benchmark, with a Monte Carlo interval")
    evaluate.add_argument("--pairs", help="benchmark file: word1<TAB>word2<TAB>score (default: gensim's "
                                          "WordSim-353)")
    evaluate.add_argument("--draws", type=int, default=1000, help="Monte Carlo draws (default 1000)")
    _add_missing(evaluate, transitional=True)
    _add_random_state(evaluate, "seeds the draws")

    semeval = _query(subcommands, "semeval", _run_semeval, "SemEval-2012 Task 2 (relational similarity, the "
                     "paper's Fig. 6): MaxDiff accuracy and Spearman per relation with Monte Carlo intervals, "
                     "against the Random baseline, and tests between relations")
    semeval.add_argument("data", help="the SemEval-2012 Task 2 folder (holding SemEval-2012-Complete-Data-Package, "
                                      "and SemEval-2012-Gold-Ratings and SemEval-2012-Baselines)")
    semeval.add_argument("--relations", default=",".join(PAPER_RELATIONS),
                         help="subcategory ids, comma-separated, or 'all' (default: the paper's four, "
                              f"{', '.join(PAPER_RELATIONS)})")
    semeval.add_argument("--compare", action="append", default=[], metavar="ID1:ID2",
                         help="test that two relations score the same (both metrics; repeatable)")
    semeval.add_argument("--draws", type=int, default=1000, help="Monte Carlo draws and random ratings (default 1000)")
    semeval.add_argument("--plot", help="also write the figure (scores and Random baseline with intervals) to this PNG")
    _add_missing(semeval)
    _add_random_state(semeval, "seeds the draws and random ratings")

    plot = _query(subcommands, "plot", _run_plot, "write a figure as a PNG: variance against frequency, or "
                  "uncertainty ellipses of words")
    plot.add_argument("figure", choices=("variance", "ellipses"))
    plot.add_argument("--words", help="words for the ellipses (file or comma-separated)")
    plot.add_argument("--output", required=True, help="PNG file to write")
    _add_random_state(plot, "seeds the sampled words and draws")

    _query(subcommands, "info", _run_info, "what a saved model is: its corpus (and checksum), every setting of "
           "the fit, the package version, its counts and its size")
    return parser


def _subcommand(subcommands, name: str, run, summary: str, description: str | None = None):
    parser = subcommands.add_parser(name, help=summary, description=description or summary)
    parser.add_argument("--quiet", action="store_true", help="no progress bars or log lines")
    parser.set_defaults(run=run)
    return parser


def _query(subcommands, name: str, run, summary: str, description: str | None = None):
    parser = _subcommand(subcommands, name, run, summary, description and f"{summary}. {description}")
    parser.add_argument("model", help="model directory written by 'glovev fit', or a GloVe-V release folder (the "
                                      "authors' layout: complete or approximate variances)")
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table",
                        help="output format: table (with the notes: method and why, reference distribution, "
                             "words dropped), csv (the rows, with a method column) or json ({\"method\", "
                             "\"rows\", \"notes\"})")
    return parser


def _add_test_options(parser, alternative: bool = True, transitional_missing: bool = False) -> None:
    if alternative:
        parser.add_argument("--alternative", choices=("two-sided", "larger", "smaller"), default="two-sided")
    parser.add_argument("--method", choices=METHODS, default=DEFAULT_METHOD,
                        help="auto: the delta method where it agrees with Monte Carlo, else Monte Carlo (default auto)")
    parser.add_argument("--reference", choices=("t", "normal"), default="t",
                        help="t with Welch-Satterthwaite degrees of freedom, or the paper's normal (default t)")
    parser.add_argument("--scale", choices=SCALES, default="bounded",
                        help="bounded: intervals stay in the statistic's range (Fisher's z for cosines); linear: the "
                             "paper's symmetric intervals (default bounded)")
    parser.add_argument("--confidence-level", type=float, default=0.95, help="of the intervals (default 0.95)")
    parser.add_argument("--alpha", type=float, dest="confidence_level", action=_RenamedOption,
                        new_option="--confidence-level", convert=lambda alpha: 1 - alpha)
    _add_missing(parser, transitional_missing)
    _add_random_state(parser, "seeds Monte Carlo draws and sampled permutations")


def _add_missing(parser, transitional: bool = False) -> None:
    default = (f"drop with a warning; {DEFAULT_MISSING} from glovev-ext 0.3, as for every command" if transitional
               else DEFAULT_MISSING)
    parser.add_argument("--missing", choices=MISSING_CHOICES, default=None if transitional else DEFAULT_MISSING,
                        help=f"words out of the vocabulary or without covariance: refuse (raise) or leave out and "
                             f"name (drop) (default: {default})")


def _add_random_state(parser, what: str) -> None:
    parser.add_argument("--random-state", type=int, default=0, help=f"random seed; {what} (default 0)")
    parser.add_argument("--seed", type=int, dest="random_state", action=_RenamedOption, new_option="--random-state")


def _add_n_jobs(parser) -> None:
    parser.add_argument("--n-jobs", type=int, default=-1, help="threads (default -1: all cores)")
    parser.add_argument("--threads", type=int, dest="n_jobs", action=_RenamedOption, new_option="--n-jobs")


def _words(value: str) -> list[str]:
    """A word list given as a file (one or more words per line, # comments) or as comma-separated words."""
    path = Path(value)
    if path.exists():
        lines = path.read_text(encoding="utf-8").splitlines()
        return [word for line in lines if not line.startswith("#") for word in line.split()]
    if "," in value or " " not in value:
        return [word.strip() for word in value.split(",") if word.strip()]
    raise FileNotFoundError(f"word list {value!r} is neither a file nor a comma-separated list")


def _emit(frame: pd.DataFrame, fmt: str, title: str = "", result=None, columns: str = "") -> None:
    """Print a table with what ``result`` (a result object) rests on and what its ``columns`` mean.

    ``table``: the title, the table, the result's notes and the columns line; ``csv``: the table
    with a ``method`` column; ``json``: ``{"method": ..., "rows": {row: {column: value}}, "notes": [...]}``.
    """
    method = getattr(result, "method", None)
    if fmt == "csv":
        if method is not None:
            frame = frame.assign(method=method)
        print(frame.to_csv(), end="")
    elif fmt == "json":
        rows = json.loads(frame.to_json(orient="index"))
        notes = (_result_notes(result) if result is not None else []) + ([columns] if columns else [])
        print(json.dumps({"method": method, "rows": rows, "notes": notes}, indent=1))
    else:
        if title:
            print(title)
        with pd.option_context("display.width", 200, "display.max_columns", 20):
            print(frame.to_string(float_format=lambda x: f"{x:.4g}", na_rep="-"))
        if result is not None:
            for line in _result_notes(result):
                print(line)
        if columns:
            print(columns)


def _result_notes(result) -> list[str]:
    """The lines under a result's summary table: its reference distribution, method and why, caveats."""
    return str(result.summary().extra_txt).splitlines()


def _inference_options(args: argparse.Namespace) -> dict:
    return {"method": args.method, "use_t": args.reference == "t", "scale": args.scale}


_WORD_OPTIONS = ("word1", "word2", "word", "versus")
_WORD_LIST_OPTIONS = ("candidates", "x", "y", "a", "b", "group_a", "group_b", "attributes", "words")


def _load(args) -> KeyedVectorsWithVariance:
    """The model, with the query's words (and word lists, read into lists) normalised as the model's words were."""
    kv, metadata = _open_model(args.model)
    lowercase = (metadata.get("counting") or {}).get("lowercase", False)

    def normalise(word: str) -> str:
        return word.lower() if lowercase else word

    for name in _WORD_OPTIONS:
        value = getattr(args, name, None)
        if value is not None:
            setattr(args, name, [normalise(w) for w in value] if isinstance(value, list) else normalise(value))
    for name in _WORD_LIST_OPTIONS:
        value = getattr(args, name, None)
        if value is not None:
            setattr(args, name, [normalise(w) for w in _words(value)])
    return kv


def _open_model(path: str) -> tuple[KeyedVectorsWithVariance, dict]:
    """A model folder written by ``glovev fit``, or a GloVe-V release folder (its covariances read on demand)."""
    folder = Path(path)
    if (folder / "chunk_map.txt").exists() and (folder / "vectors.safetensors").exists():
        from .adapters import load_glovev_release, release_variances

        variances = release_variances(folder)
        kv = load_glovev_release(folder, variances=variances)
        # queries are lowercased when the release's own words all are (COHA's are)
        lowercase = all(word == word.lower() for word in kv.index_to_key)
        return kv, {"source": f"the GloVe-V authors' release in {folder}", "release": {"variances": variances},
                    "counting": {"lowercase": lowercase}}
    return load_model(folder)


def _check_fit_options(args: argparse.Namespace) -> None:
    """Every option of ``glovev fit`` checked before any work, in the command line's words."""
    at_least_one = {"--n-components": args.n_components, "--epochs": args.epochs, "--window": args.window,
                    "--min-count": args.min_count, "--sweeps": args.sweeps, "--max-vocab": args.max_vocab}
    for flag, value in at_least_one.items():
        if value is not None and value < 1:
            raise ValueError(f"{flag} must be at least 1, got {value}")
    for flag, value in {"--x-max": args.x_max, "--alpha": args.alpha}.items():
        if not value > 0:
            raise ValueError(f"{flag} must be positive, got {value}")
    if args.n_jobs == 0:
        raise ValueError("--n-jobs must be a number of threads (1 or more), or -1 for all cores; got 0")


def _run_fit(args: argparse.Namespace) -> int:
    _check_fit_options(args)
    show_progress = not args.quiet
    if args.glove_folder:
        if args.corpus:
            raise ValueError("give a corpus or --glove-folder, not both")
        from .adapters import load_glove_folder
        started = time.perf_counter()
        model, kv = load_glove_folder(args.glove_folder, dim=args.n_components, x_max=args.x_max, alpha=args.alpha,
                                      n_jobs=args.n_jobs, conditioning=args.conditioning,
                                      point_estimate=args.point_estimate, n_sweeps=args.sweeps, progress=show_progress)
        print(f"read: {len(kv):,} words, D={kv.vector_size} from {args.glove_folder}")
        reading = time.perf_counter() - started - sum(model.fit_seconds_.values())
        metadata = fit_metadata(source=f"Stanford GloVe output in {args.glove_folder}", estimator=model,
                                vectorizer=None, seconds={"read": reading, **model.fit_seconds_})
    else:
        if args.corpus is None:
            corpus = load_default_corpus()
            source = f"the embedded default corpus ({default_corpus_path().name})"
            print(f"corpus: {source}; no corpus given")
        else:
            corpus = LineCorpus(args.corpus)
            source = str(corpus.source)
            print(f"corpus: {source}")
        fitted = fit_corpus(corpus, n_components=args.n_components, epochs=args.epochs, window=args.window,
                            min_count=args.min_count, max_vocab_size=args.max_vocab, lowercase=not args.no_lowercase,
                            x_max=args.x_max, alpha=args.alpha, random_state=args.random_state, n_jobs=args.n_jobs,
                            conditioning=args.conditioning, point_estimate=args.point_estimate,
                            n_sweeps=args.sweeps, progress=show_progress, source=source)
        vectorizer, model, cooccurrence, seconds = (fitted.vectorizer, fitted.estimator, fitted.cooccurrence,
                                                    fitted.seconds)
        print(f"counted: {vectorizer.n_tokens_:,} tokens in {vectorizer.n_documents_:,} documents -> "
              f"{cooccurrence.shape[0]:,} words (min_count {args.min_count}), {cooccurrence.nnz:,} nonzero "
              f"co-occurrences, window {args.window}  [{seconds['count']:.1f} s, "
              f"{vectorizer.n_tokens_ / seconds['count'] / 1e6:.2f}M tokens/s]")
        costs = model.training_costs_
        print(f"trained: D={args.n_components}, {args.epochs} epochs, cost {costs[0]:.4f} -> {costs[-1]:.4f}  "
              f"[{seconds['train']:.1f} s]")
        kv, metadata = fitted.keyed_vectors, fitted.metadata
    few = int((model.n_contexts_ <= kv.vector_size).sum())
    branch = (f"{int(model.pseudo_inverse_.sum()):,} on the paper's pseudo-inverse branch, variances understated"
              if model.conditioning == "paper" else f"{int(model.singular_.sum()):,} with a numerically singular H_i")
    print(f"GloVe-V covariances for {int(model.covariance_defined_.sum()):,} of {len(kv):,} words ({branch}; "
          f"{few:,} have {kv.vector_size} or fewer contexts)  [{model.fit_seconds_['covariances']:.1f} s]")
    directory = save_model(args.output, kv, metadata)
    size = sum(path.stat().st_size for path in directory.iterdir())
    print(f"saved: {directory} ({size / 1e6:,.0f} MB)")
    for title, part in report_parts(kv, model):
        _report_part(title, part)
    probe = next((w for w in PROBE_WORDS if w in kv.key_to_index), kv.index_to_key[0] if len(kv) else "WORD")
    print(f"next: glovev similarity {directory} {probe} {_partner(kv, probe)}  (or glovev neighbors {directory} {probe})")
    return EXIT_OK


def _report_part(title: str, part) -> None:
    """One part of the fit report; the model is saved already, so a part that cannot be computed is a note."""
    try:
        for line in part():
            print(line)
    except (ValueError, KeyError, ZeroDivisionError, IndexError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"{title}: not evaluated ({message})")


def _partner(kv: KeyedVectorsWithVariance, word: str) -> str:
    """A second word for the suggested query: the next probe word in the vocabulary, else the most frequent other."""
    others = [w for w in PROBE_WORDS if w in kv.key_to_index and w != word]
    return others[0] if others else next((w for w in kv.index_to_key if w != word), word)


def _run_similarity(args: argparse.Namespace) -> int:
    kv = _load(args)
    pair = (args.word1, args.word2)
    options = dict(alternative=args.alternative, missing=args.missing, random_state=args.random_state,
                   **_inference_options(args))
    if args.versus:
        result = kv.similarity_difference_test(pair, tuple(args.versus), **options)
    else:
        result = kv.similarity_test(*pair, null_value=args.null, **options)
    _emit(result.summary_frame(confidence_level=args.confidence_level), args.format,
          f"{result.method}; uncertainty: {result.uncertainty}", result)
    return EXIT_OK


def _run_neighbors(args: argparse.Namespace) -> int:
    kv = _load(args)
    result = kv.nearest_neighbors_test(args.word, args.candidates, args.topn, missing=args.missing, n_draws=args.draws,
                                       random_state=args.random_state, **_inference_options(args))
    _emit(result.summary_frame(confidence_level=args.confidence_level), args.format,
          f"nearest neighbours of {args.word!r} ({result.n_draws} draws for ranks)", result.similarities,
          NEIGHBOR_COLUMNS)
    if args.plot:
        from .plots import plot_neighbors
        _save_figure(plot_neighbors(result, confidence_level=args.confidence_level), args.plot)
    return EXIT_OK


def _run_weat(args: argparse.Namespace) -> int:
    kv = _load(args)
    lists = [args.x, args.y, args.a, args.b]
    family = kv.weat_test(*lists, ddof=args.ddof, missing=args.missing, alternative=args.alternative,
                          random_state=args.random_state, **_inference_options(args))
    permutation = kv.weat_permutation_test(*lists, missing=args.missing, n_permutations=args.permutations,
                                           random_state=args.random_state,
                                           alternative="larger" if args.alternative == "two-sided"
                                           else args.alternative)
    frame = family.summary_frame(confidence_level=args.confidence_level)
    frame["permutation p"] = [permutation.pvalue, permutation.pvalue]
    _emit(frame, args.format, f"WEAT, {family.method}; permutation test over {permutation.draws.size} "
                              f"partitions ({permutation.alternative}); dropped: {', '.join(family.dropped) or 'none'}", family)
    return EXIT_OK


def _run_bias(args: argparse.Namespace) -> int:
    kv = _load(args)
    result = kv.cosine_bias_test(args.group_a, args.group_b, args.attributes,
                                 missing=args.missing, alternative=args.alternative, random_state=args.random_state,
                                 **_inference_options(args))
    _emit(result.summary_frame(confidence_level=args.confidence_level), args.format,
          f"cosine bias, {result.method}; dropped: {', '.join(result.dropped) or 'none'}", result)
    return EXIT_OK


def _run_evaluate(args: argparse.Namespace) -> int:
    kv = _load(args)
    pairs = args.pairs or datapath("wordsim353.tsv")
    result = kv.evaluate_word_pairs_with_uncertainty(pairs, n_draws=args.draws, random_state=args.random_state,
                                                     missing=args.missing)
    _emit(result.summary_frame(), args.format, f"{Path(pairs).name}: Monte Carlo over {args.draws} draws; "
                                               f"{len(result.dropped)} pairs dropped", result)
    return EXIT_OK


def _run_semeval(args: argparse.Namespace) -> int:
    kv, metadata = _open_model(args.model)
    lowercase = (metadata.get("counting") or {}).get("lowercase", False)
    wanted = None if args.relations == "all" else [s.strip() for s in args.relations.split(",") if s.strip()]
    comparisons = [tuple(text.split(":")) for text in args.compare]
    for pair in comparisons:
        if len(pair) != 2 or not all(pair):
            raise ValueError(f"--compare takes two relation ids as ID1:ID2, got {':'.join(pair)!r}")
    relations = read_semeval2012(args.data, wanted)
    result = evaluate_relational_similarity(kv, relations, n_draws=args.draws, random_state=args.random_state,
                                            missing=args.missing, lowercase=lowercase)
    frame = result.summary_frame()
    if comparisons:
        rows = [result.difference(first, second, metric) for first, second in comparisons
                for metric in ("maxdiff", "spearman")]
        frame = pd.concat([frame, pd.DataFrame({"score": [r.estimate for r in rows],
                                                "std err": [r.std_error for r in rows],
                                                "P (two-sided)": [r.pvalue for r in rows]},
                                               index=[r.name for r in rows])])
    _emit(frame, args.format, f"SemEval-2012 Task 2 in {args.model}: Monte Carlo over {args.draws} draws; "
                              f"{len(result.dropped)} pairs dropped", result)
    if args.plot:
        from .plots import plot_relational_similarity
        _save_figure(plot_relational_similarity(result)[0], args.plot)
    return EXIT_OK


def _run_info(args: argparse.Namespace) -> int:
    kv, metadata = _open_model(args.model)
    if args.format == "json":
        print(json.dumps(metadata, indent=1))
        return EXIT_OK
    directory = Path(args.model)
    size = sum(path.stat().st_size for path in directory.iterdir() if path.is_file())
    with_covariance = sum(kv.has_covariance(key) for key in kv.index_to_key)
    print(f"model: {directory} ({size / 1e6:,.1f} MB): {len(kv):,} words, D={kv.vector_size}, "
          f"{with_covariance:,} with a covariance")
    for section, values in metadata.items():
        if isinstance(values, dict):
            print(f"{section}:")
            for name, value in values.items():
                print(f"  {name}: {value}")
        else:
            print(f"{section}: {values}")
    return EXIT_OK


def _run_plot(args: argparse.Namespace) -> int:
    from . import plots
    kv = _load(args)
    if args.figure == "variance":
        ax = plots.plot_variance_by_frequency(kv, random_state=args.random_state)
    else:
        if not args.words:
            raise ValueError("the ellipses figure needs --words")
        ax = plots.plot_uncertainty_ellipses(kv, args.words, random_state=args.random_state)
    _save_figure(ax, args.output)
    return EXIT_OK


def _save_figure(ax, path: str) -> None:
    ax.figure.tight_layout()
    ax.figure.savefig(path, dpi=120)
    print(f"figure written: {path}")


if __name__ == "__main__":
    sys.exit(main())
