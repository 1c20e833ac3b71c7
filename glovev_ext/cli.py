"""The ``glovev`` command line: fit a corpus into a saved model, then ask it questions with error bars.

Exit statuses follow the conventions of command-line tools: 0 success, 2 a problem with the
command or its input (an option, a file, a word), 1 a problem of the environment (permissions, a
full or read-only disk, a missing optional package), 130 interrupted (Ctrl-C), 143 terminated
(SIGTERM). Each failure is one line on stderr; ``GLOVEV_TRACEBACK=1`` adds the traceback, for bug
reports. When the reader of the output goes away (``glovev ... | head``), the rest of the output is
discarded quietly and the command finishes its work (a fit still saves its model).
"""

from __future__ import annotations

import argparse
import errno
import functools
import gc
import json
import logging
import os
import shutil
import signal
import stat
import sys
import textwrap
import threading
import time
import traceback
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
from gensim.test.utils import datapath
from tqdm.contrib.logging import logging_redirect_tqdm

from ._checks import resolve_n_jobs
from ._dask import connected
from ._fit_report import PROBE_WORDS, premise_lines, report_parts
from ._memory import trim_heap
from ._model_folder import is_model_folder
from ._temporaries import make_temporary_folder
from ._writer_lock import writer_lock
from .counting import (CooccurrenceVectorizer, DocumentGroups, LineCorpus, default_corpus_groups, default_corpus_path,
                       groups_by_file, load_default_corpus, read_groups)
from .counting.groups import MIN_GROUPS
from .covariance import CONDITIONING_CHOICES, POINT_ESTIMATES, CovarianceStore, GloVeVEstimator
from .covariance.factor import LOW_RANK_PLUS_DIAGONAL, packed_size
from .glove.device import resolve_batch_size
from .keyed_vectors import KeyedVectorsWithVariance
from .pipeline import HALVINGS_OF_GROUPS, check_fit_params, fit_corpus, fit_metadata, sampling_description
from .atomic import atomic_path, check_writable
from .saved_model import check_model_directory, load_model, save_model, upgrade_model
from .stats import (DEFAULT_METHOD, DEFAULT_MISSING, DEFAULT_SEED, METHODS, MISSING_CHOICES, PAPER_RELATIONS, SCALES,
                    evaluate_relational_similarity, read_semeval2012)
from .stats.engine.results import NEIGHBOR_COLUMNS
from .stats.statistics.semeval import SAMPLE_PATH, available_subcategories

EXIT_OK, EXIT_ENVIRONMENT, EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143
TRACEBACK_VARIABLE = "GLOVEV_TRACEBACK"
TABLE_WIDTH = 100
DEFAULT_DRAWS = 2000
# OSErrors about what the user asked for (exit 2), also as these codes; any other is the environment's (exit 1)
_LOCAL_CLUSTER = "local"  # --dask without an address
_INPUT_ERRNOS = {errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.EEXIST, errno.ENAMETOOLONG}

_log = logging.getLogger(__name__)


class _Terminated(SystemExit):
    """SIGTERM, raised in the main thread so that temporaries are removed as for Ctrl-C.

    A ``SystemExit``, because code that must not swallow an exit (tqdm's logging handler, for one)
    re-raises ``KeyboardInterrupt`` and ``SystemExit`` from its bare ``except:`` clauses.
    """

    def __init__(self):
        super().__init__(EXIT_TERMINATED)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``glovev`` command; returns the process exit status (see the module's docstring)."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s: %(message)s")
    logging.getLogger("glovev_ext").setLevel(logging.WARNING if args.quiet else logging.INFO)
    received: list[int] = []
    with _signals_raised(received):
        try:
            _check_query_options(args)
            with logging_redirect_tqdm(), warnings.catch_warnings():
                warnings.showwarning = _show_warning
                status = args.run(args)
            _flush_output()
            return status
        except (Exception, KeyboardInterrupt, _Terminated) as error:
            if os.environ.get(TRACEBACK_VARIABLE, "") not in ("", "0"):
                traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
            if isinstance(error, BrokenPipeError):
                _silence_output()
                return EXIT_OK
            status, message = _failure(error, received)
            if status in (EXIT_INTERRUPTED, EXIT_TERMINATED):
                message += _what_was_saved(args)
            print(f"glovev: {message}", file=sys.stderr)
            return status


def _failure(error: BaseException, received: Sequence[int] = ()) -> tuple[int, str]:
    """The exit status and the one line that say what went wrong (``received``: the signals that arrived).

    A signal decides, whatever exception surfaced: code between the handler and here may turn the
    exception it raised into another (numpy's ``tofile`` turns one raised during its ``isinstance``
    check into a TypeError about the file).
    """
    if isinstance(error, KeyboardInterrupt) or signal.SIGINT in received[:1]:
        return EXIT_INTERRUPTED, "interrupted"
    if isinstance(error, _Terminated) or signal.SIGTERM in received[:1]:
        return EXIT_TERMINATED, "terminated"
    if isinstance(error, OSError):
        named = isinstance(error, (FileNotFoundError, FileExistsError, NotADirectoryError, IsADirectoryError))
        status = EXIT_BAD_INPUT if named or error.errno in _INPUT_ERRNOS else EXIT_ENVIRONMENT
        return status, f"error: {_os_message(error)}"
    if isinstance(error, KeyError):
        return EXIT_BAD_INPUT, f"error: {error.args[0] if error.args else error}"
    if isinstance(error, (ValueError, TypeError)):
        return EXIT_BAD_INPUT, f"error: {error}"
    if isinstance(error, ImportError):
        return EXIT_ENVIRONMENT, f"error: {error}"
    if isinstance(error, MemoryError):
        return EXIT_ENVIRONMENT, ("error: out of memory; try a smaller corpus, a higher --min-count, --max-vocab, "
                                  "fewer --n-components or a --max-memory budget for counting")
    return EXIT_ENVIRONMENT, (f"internal error ({type(error).__name__}: {error}); this is a bug: run the command again "
                              f"with {TRACEBACK_VARIABLE}=1 and report the traceback")


def _os_message(error: OSError) -> str:
    """An OSError in one line: the file, what went wrong, and for a full disk what to do."""
    reason = error.strerror or str(error)
    text = f"{error.filename}: {reason}" if error.filename and str(error.filename) not in reason else reason
    if error.errno == errno.ENOSPC:
        text += " (free space there, or write elsewhere)"
    return text


def _what_was_saved(args: argparse.Namespace) -> str:
    """After an interruption of ``glovev fit``: whether the model was saved, read from the output folder.

    An interruption can arrive after the new model has replaced the old one and before the save
    returns, so the folder, not the progress of the code, tells: a save puts a new folder in place
    whole, and the fit holds the output's lock, so the output is the new model when it is a model
    folder other than the one there at the start.
    """
    if getattr(args, "command", None) != "fit" or not hasattr(args, "output_at_start"):
        return ""
    now = _folder_identity(args.output)
    if now is not None and now != args.output_at_start and is_model_folder(Path(args.output)):
        return f"; the model had been saved to {args.output}"
    return f"; no model was saved, {args.output} is as it was"


def _folder_identity(path: str) -> tuple[int, int] | None:
    """The device and inode of what is at ``path`` (None for nothing)."""
    try:
        status = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return status.st_dev, status.st_ino


_REDELIVERY_SECONDS = 0.01  # after a signal's exception was lost in a finaliser


@contextmanager
def _signals_raised(received: list[int]) -> Iterator[None]:
    """While the command runs (in the main thread), Ctrl-C raises ``KeyboardInterrupt`` and SIGTERM
    :class:`_Terminated`, each signal recorded in ``received``."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raised(signum, frame):
        received.append(signum)
        raise KeyboardInterrupt if signum == signal.SIGINT else _Terminated

    def lost_in_a_finaliser(unraisable) -> None:
        # A signal that lands while a finaliser (a __del__, e.g. a progress bar's) runs has its exception
        # ignored there, and the command would go on: deliver the signal again, to land elsewhere.
        if received and isinstance(unraisable.exc_value, (KeyboardInterrupt, _Terminated)):
            again = threading.Timer(_REDELIVERY_SECONDS, os.kill, (os.getpid(), received[-1]))
            again.daemon = True
            again.start()
            return
        if received:
            # The signal's exception may have torn an object mid-construction (numba's compiler's, for one), and its
            # finaliser then fails on what its constructor never set: the aftermath of the signal, not news.
            _log.debug("after the signal, a finaliser failed: %s", unraisable.err_msg or unraisable.object,
                       exc_info=(unraisable.exc_type, unraisable.exc_value, unraisable.exc_traceback))
            return
        previous_hook(unraisable)

    previous = {signum: signal.signal(signum, raised) for signum in (signal.SIGINT, signal.SIGTERM)}
    previous_hook, sys.unraisablehook = sys.unraisablehook, lost_in_a_finaliser
    try:
        yield
    finally:
        if received:
            gc.collect()  # objects the signal tore and left in reference cycles fail here, under the quiet hook
        sys.unraisablehook = previous_hook
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _progress(args: argparse.Namespace) -> bool:
    """Progress bars: on a terminal, unless ``--quiet`` (a log or a pipe gets the log lines only)."""
    return not args.quiet and sys.stderr.isatty()


def _say(text: str = "") -> None:
    """Print a line of the command's output; once the reader has gone (a closed pipe), print nothing more."""
    try:
        print(text)
    except BrokenPipeError:
        _silence_output()


def _flush_output() -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_output()


def _silence_output() -> None:
    """Point standard output at the null device, so neither later lines nor the final flush fail."""
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, descriptor)
    os.close(null)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings on the command line: one line each, no source line."""
    print(f"glovev: warning: {message}", file=sys.stderr)


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="glovev", description="GloVe embeddings with error bars (GloVe-V).",
                                     epilog=f"Exit status: 0 done, 2 a problem with the command or its input, 1 a "
                                            f"problem of the environment, 130 interrupted. {TRACEBACK_VARIABLE}=1 "
                                            "prints the traceback of a failure.")
    subcommands = parser.add_subparsers(dest="command", required=True)

    fit = _subcommand(subcommands, "fit", _run_fit, "count a corpus, train GloVe and compute GloVe-V covariances",
                      "Fit a corpus (one document per line; a text file, .gz/.bz2/.xz, or a folder of them) or a "
                      "folder of Stanford GloVe output into a saved model. Without CORPUS, the embedded default "
                      "corpus is used.")
    fit.add_argument("corpus", nargs="?", help="corpus file or folder (default: the embedded corpus)")
    fit.add_argument("--glove-folder", help="folder of Stanford GloVe output (vocab.txt, cooccurrence.bin, "
                                            "vectors.bin) instead of a corpus")
    fit.add_argument("--output", default="glovev_model",
                     help="model folder to write (default ./glovev_model); an existing folder is replaced only if it "
                          "is a saved model or empty, and is checked before any work")
    fit.add_argument("--overwrite", action="store_true",
                     help="replace whatever is at --output, a folder with other files in it or a file")
    # the defaults are the library's own, so that a fit from here is the fit of the same objects built in Python
    counting, glove = CooccurrenceVectorizer().get_params(), GloVeVEstimator().get_params()
    fit.add_argument("--n-components", type=int, default=glove["n_components"],
                     help="embedding dimension D (default %(default)s); with --glove-folder, the D of a vectors.txt "
                          "(vectors.bin tells its own)")
    fit.add_argument("--epochs", type=int, default=glove["epochs"], help="training epochs (default %(default)s)")
    fit.add_argument("--x-max", type=float, default=glove["x_max"],
                     help="weighting cut-off x_max (default %(default)s)")
    fit.add_argument("--alpha", type=float, default=glove["alpha"],
                     help="weighting exponent alpha (default %(default)s)")
    fit.add_argument("--window", type=int, default=counting["window"],
                     help="context words on each side (default %(default)s)")
    fit.add_argument("--min-count", type=int, default=counting["min_count"],
                     help="minimum word frequency (default %(default)s)")
    fit.add_argument("--max-vocab", type=int, default=counting["max_vocab_size"], help="keep at most this many words")
    fit.add_argument("--no-lowercase", action="store_true", help="keep case (default: lowercase)")
    fit.add_argument("--max-memory", default=counting["max_memory"],
                     help="memory budget of counting and training, in bytes or as 600M, 2G: partial "
                          "co-occurrence matrices beyond it are spilled to a temporary folder and merged, and "
                          "training reads the co-occurrences from a file one block at a time (both in TMPDIR: "
                          "on a disk, not a RAM file system, for the budget to save memory), with the same "
                          "result (default: no budget)")
    fit.add_argument("--covariance-dtype", choices=("float64", "float32"), default=glove["covariance_dtype"],
                     help="dtype of the stored covariance factors: float32 halves the saved model "
                          "(default %(default)s)")
    fit.add_argument("--covariance-approximation", type=_approximation, default=glove["covariance_approximation"],
                     metavar="K_OR_SHARE",
                     help="keep each covariance compact: its K leading eigenpairs (an integer), or those holding "
                          "this share of its variance (a number in (0, 1]), plus the other variances on a "
                          "diagonal; results that use one say so (default: exact)")
    fit.add_argument("--conditioning", choices=CONDITIONING_CHOICES, default=glove["conditioning"],
                     help="exact: invert every H_i whose condition number is at most 1e10, no covariance above it; "
                          "paper: the GloVe-V paper's pseudo-inverse, which understates variances "
                          "(default %(default)s)")
    fit.add_argument("--point-estimate", choices=POINT_ESTIMATES, default=glove["point_estimate"],
                     help="the vectors the covariances describe: trained (the paper's), optimum (each word's "
                          "weighted-least-squares vector given the contexts), alternating (exact sweeps after "
                          "training), or posterior (each vector's posterior mean and covariance under an "
                          "empirical-Bayes Gaussian prior; every word gets a covariance) (default %(default)s)")
    fit.add_argument("--sweeps", type=int, default=glove["n_sweeps"], help="sweeps of --point-estimate alternating "
                     "(default 2) or posterior (default 1; 0 allowed)")
    fit.add_argument("--prior-strength", type=float, default=glove["prior_strength"],
                     help="--point-estimate posterior: the prior's precision over the one the data give "
                          "(default %(default)s)")
    fit.add_argument("--no-noise-calibration", action="store_true",
                     help="--point-estimate posterior: keep GloVe-V's own noise model instead of scaling each word's "
                          "residual variance by the factor two random halves of the corpus's groups (--groups) give (default: "
                          "calibrate; a corpus only)")
    fit.add_argument("--groups", metavar="FILE",
                     help="the unit the intervals describe resampling (books, authors, outlets, periods): a file "
                          "with one group label per corpus line, or a tab-separated table of line ranges with the "
                          "columns first_line and n_lines (as the corpora's manifests); the noise calibration then "
                          "splits whole groups (at least 10). 'documents' makes each document its own group "
                          "(default: the books of the embedded corpus, the files of a folder corpus, the documents "
                          "of a file)")
    fit.add_argument("--group-column", metavar="NAME",
                     help="the column of a --groups table that names the groups (default: its first; e.g. author)")
    fit.add_argument("--halvings", type=int, metavar="K",
                     help="how many random halvings of the groups the noise calibration pools (default: "
                          f"{HALVINGS_OF_GROUPS} with groups, 1 when each document is its own group)")
    fit.add_argument("--no-concentration", action="store_true",
                     help="with groups, scale each word's residual variance by its frequency only, not also by how "
                          "concentrated it is in few groups (the calibration of glovev-ext 0.3; docs/method.md 6.21)")
    fit.add_argument("--dask", nargs="?", const=_LOCAL_CLUSTER, type=_scheduler, metavar="SCHEDULER",
                     help="run counting, training and the posterior's passes on a Dask cluster (pip install "
                          "'glovev-ext[dask]'): the scheduler at this address (e.g. tcp://10.0.0.5:8786; its workers "
                          "must read the corpus file at the same path), or, with no address, a local cluster of "
                          "--n-jobs worker processes; the same result as on threads, bit for bit. --point-estimate "
                          "posterior only (default: threads)")
    fit.add_argument("--device", default=glove["device"], metavar="DEVICE",
                     help="train on this PyTorch device: cuda, cuda:1, or cpu for the same code on the processor "
                          "(pip install 'glovev-ext[gpu]'); the passes that fit rows (the covariances, the prior, the "
                          "posteriors, the sweeps) compute their Gram matrices there too (default: everything on the "
                          "CPU)")
    fit.add_argument("--batch-size", type=int, default=glove["batch_size"], metavar="ENTRIES",
                     help="entries per training batch with --device (default: as many as make the word with the "
                          "most nonzeros recur 8 times in a batch, at most 65536)")
    _add_n_jobs(fit)
    _add_random_state(fit, "random seed of training and of the noise calibration's random halves",
                      default=glove["random_state"])

    similarity = _query(subcommands, "similarity", _run_similarity, "cosine similarity of two words with an "
                        "interval and p-value; with --versus, the difference from a second pair")
    similarity.add_argument("word1")
    similarity.add_argument("word2")
    similarity.add_argument("--versus", nargs=2, metavar=("WORD3", "WORD4"),
                            help="test cos(word1, word2) - cos(word3, word4) with their joint covariance")
    similarity.add_argument("--null", type=float, default=0.0, help="null value (default 0)")
    _add_statistic_options(similarity, tests=True)

    neighbors = _query(subcommands, "neighbors", _run_neighbors, "nearest neighbours with intervals, tests "
                       "between adjacent ranks and rank probabilities", NEIGHBOR_COLUMNS)
    neighbors.add_argument("word")
    neighbors.add_argument("--topn", type=int, default=10, help="neighbours from the vocabulary (default 10)")
    neighbors.add_argument("--candidates", help="candidate words: a file (one per line) or a comma-separated list")
    neighbors.add_argument("--plot", help="also write a forest plot to this PNG")
    _add_statistic_options(neighbors, tests=True, alternative=False)

    weat = _query(subcommands, "weat", _run_weat, "WEAT effect size and statistic with GloVe-V errors, and the "
                  "classic permutation test")
    for name, role in (("x", "first target"), ("y", "second target"), ("a", "first attribute"),
                       ("b", "second attribute")):
        weat.add_argument(f"--{name}", required=True, help=f"{role} words: a file or a comma-separated list")
    weat.add_argument("--ddof", type=int, default=1, help="ddof of the effect size's standard deviation (default 1)")
    weat.add_argument("--permutations", type=int, default=None,
                      help="sampled permutations (default: exact when there are at most 100,000 partitions)")
    _add_statistic_options(weat, tests=True)

    bias = _query(subcommands, "bias", _run_bias, "Garg et al. cosine bias of attributes between two groups")
    bias.add_argument("--group-a", required=True, help="group A words (file or comma-separated)")
    bias.add_argument("--group-b", required=True, help="group B words (file or comma-separated)")
    bias.add_argument("--attributes", required=True, help="attribute words (file or comma-separated)")
    _add_statistic_options(bias, tests=True)

    evaluate = _query(subcommands, "evaluate", _run_evaluate, "Spearman correlation with a word-similarity "
                      "benchmark, with a Monte Carlo interval", _MONTE_CARLO_ONLY)
    evaluate.add_argument("--pairs", help="benchmark file: word1<TAB>word2<TAB>score (default: gensim's "
                                          "WordSim-353)")
    _add_statistic_options(evaluate, tests=False)

    semeval = _query(subcommands, "semeval", _run_semeval, "SemEval-2012 Task 2 (relational similarity, the "
                     "paper's Fig. 6): MaxDiff accuracy and Spearman per relation with Monte Carlo intervals, "
                     "against the Random baseline, and tests between relations", _MONTE_CARLO_ONLY)
    semeval.add_argument("data", nargs="?",
                         help="the SemEval-2012 Task 2 folder (holding SemEval-2012-Complete-Data-Package, and "
                              "SemEval-2012-Gold-Ratings and SemEval-2012-Baselines); default: the bundled sample, "
                              f"subcategory 1a only ({SAMPLE_PATH})")
    semeval.add_argument("--relations",
                         help="subcategory ids, comma-separated, or 'all' (default: the paper's four, "
                              f"{', '.join(PAPER_RELATIONS)}, when the folder holds them, else all it holds)")
    semeval.add_argument("--compare", action="append", default=[], metavar="ID1:ID2",
                         help="test that two relations score the same (both metrics; repeatable)")
    semeval.add_argument("--plot", help="also write the figure (scores and Random baseline with intervals) to this PNG")
    _add_statistic_options(semeval, tests=False)

    plot = _subcommand(subcommands, "plot", _run_plot, "write a figure as a PNG: variance against frequency, or "
                       "uncertainty ellipses of words")
    _add_model(plot)
    plot.add_argument("figure", choices=("variance", "ellipses"))
    plot.add_argument("--words", help="words for the ellipses (file or comma-separated)")
    plot.add_argument("--output", required=True, help="PNG file to write")
    _add_random_state(plot, "random seed of the sampled words and draws")

    info = _subcommand(subcommands, "info", _run_info, "what a saved model is: its corpus (and checksum), every "
                       "setting of the fit, the package version, its counts and its size")
    _add_model(info)
    info.add_argument("--format", choices=("table", "json"), default="table",
                      help="output format: table (one setting per line) or json (the model's metadata) "
                           "(default table)")

    upgrade = _subcommand(subcommands, "upgrade", _run_upgrade, "convert a model folder saved by glovev-ext 0.3 or "
                          "earlier to data files, in place",
                          "Convert a model folder saved by glovev-ext 0.3 or earlier (vectors.kv, a pickle) to the "
                          "data-only format every other command reads. Opening a pickle can run any code its "
                          "author put in it: upgrade only folders you trust (your own, or from someone you trust).")
    upgrade.add_argument("model", help="model folder of glovev-ext 0.3 or earlier")
    return parser


_MONTE_CARLO_ONLY = ("Its intervals are Monte Carlo over draws of the embedding: statistics of ranks have no "
                     "gradient, so there is no --method, --reference or --scale to choose.")


def _subcommand(subcommands, name: str, run, summary: str, description: str | None = None):
    parser = subcommands.add_parser(name, help=summary, description=description or summary)
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bars or log lines (progress bars are shown on a terminal only)")
    parser.set_defaults(run=run)
    return parser


def _query(subcommands, name: str, run, summary: str, description: str | None = None):
    """A command that answers a question about a model with a table."""
    parser = _subcommand(subcommands, name, run, summary, description and f"{summary}. {description}")
    _add_model(parser)
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table",
                        help="output format: table (with the notes: method and why, reference distribution, "
                             "words dropped), csv (the rows, with a method column) or json ({\"method\", "
                             "\"rows\", \"notes\"}) (default table)")
    return parser


def _add_model(parser) -> None:
    parser.add_argument("model", help="model directory written by 'glovev fit', or a GloVe-V release folder (the "
                                      "authors' layout: complete or approximate variances)")


def _add_statistic_options(parser, *, tests: bool, alternative: bool = True) -> None:
    """The options every command that estimates statistics shares: one name, one meaning, one default each.

    ``tests``: the statistic is smooth, so the delta method, the reference distribution and the
    scale of its intervals can be chosen (``alternative``: and the direction of its test).
    """
    if tests:
        if alternative:
            parser.add_argument("--alternative", choices=("two-sided", "larger", "smaller"), default="two-sided",
                                help="the alternative hypothesis of the test (default two-sided)")
        parser.add_argument("--method", choices=METHODS, default=DEFAULT_METHOD,
                            help="auto: the delta method where it agrees with Monte Carlo, else Monte Carlo "
                                 "(default auto)")
        parser.add_argument("--reference", choices=("t", "normal"), default="t",
                            help="t with Welch-Satterthwaite degrees of freedom, or the paper's normal (default t)")
        parser.add_argument("--scale", choices=SCALES, default="bounded",
                            help="bounded: intervals stay in the statistic's range (Fisher's z for cosines); linear: "
                                 "the paper's symmetric intervals (default bounded)")
    parser.add_argument("--confidence-level", type=float, default=0.95, help="of the intervals (default 0.95)")
    parser.add_argument("--missing", choices=MISSING_CHOICES, default=DEFAULT_MISSING,
                        help="words out of the vocabulary or without a covariance: refuse them (raise) or leave them "
                             f"out and name them (drop) (default {DEFAULT_MISSING})")
    parser.add_argument("--draws", type=int, default=DEFAULT_DRAWS,
                        help=f"Monte Carlo draws of the embedding (default {DEFAULT_DRAWS})")
    _add_random_state(parser, "random seed of the Monte Carlo draws and sampled permutations")


def _add_random_state(parser, description: str, default: int = DEFAULT_SEED) -> None:
    """``--random-state``, by default the seed the Python functions draw from, so a command gives their numbers."""
    parser.add_argument("--random-state", type=int, default=default, help=f"{description} (default {default})")


def _add_n_jobs(parser) -> None:
    parser.add_argument("--n-jobs", type=int, default=-1, help="threads (default -1: all cores)")


def _words(value: str) -> list[str]:
    """A word list given as a file (one or more words per line, # comments) or as comma-separated words."""
    path = Path(value)
    if path.exists():
        lines = path.read_text(encoding="utf-8").splitlines()
        return [word for line in lines if not line.startswith("#") for word in line.split()]
    if "," in value or " " not in value:
        return [word.strip() for word in value.split(",") if word.strip()]
    raise FileNotFoundError(f"word list {value!r} is neither a file nor a comma-separated list")


def _emit(frame: pd.DataFrame, fmt: str, title: str = "", result=None, extra_notes: Sequence[str] = ()) -> None:
    """Print a table with what ``result`` (a result object) rests on, and ``extra_notes`` about its columns.

    ``table``: the title, the table (wrapped to :data:`TABLE_WIDTH` columns), the result's notes and
    ``extra_notes``; ``csv``: the table with a ``method`` column; ``json``:
    ``{"method": ..., "rows": {row: {column: value}}, "notes": [...]}``.
    """
    method = getattr(result, "method", None)
    lines = (_result_notes(result) if result is not None else []) + list(extra_notes)
    if fmt == "csv":
        if method is not None:
            frame = frame.assign(method=method)
        _say(frame.to_csv().rstrip("\n"))
    elif fmt == "json":
        rows = json.loads(frame.to_json(orient="index"))
        _say(json.dumps({"method": method, "rows": rows, "notes": lines}, indent=1))
    else:
        if title:
            _say(_wrapped(title))
        _say(frame.to_string(float_format=lambda x: f"{x:.4g}", na_rep="-", line_width=TABLE_WIDTH))
        for line in lines:
            _say(_wrapped(line))


def _wrapped(text: str) -> str:
    """A line of text wrapped to the table width, continuation lines indented."""
    return "\n".join(textwrap.fill(line, TABLE_WIDTH, subsequent_indent="  ", break_on_hyphens=False)
                     for line in text.splitlines())


def _result_notes(result) -> list[str]:
    """The lines under a result's summary table: its reference distribution, method and why, caveats."""
    return str(result.summary().extra_txt).splitlines()


def _inference_options(args: argparse.Namespace) -> dict:
    return {"method": args.method, "use_t": args.reference == "t", "scale": args.scale, "n_draws": args.draws}


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
        from .adapters.glovev_release import load_glovev_release, release_variances

        variances = release_variances(folder)
        kv = load_glovev_release(folder, variances=variances)
        # queries are lowercased when the release's own words all are (COHA's are)
        lowercase = all(word == word.lower() for word in kv.index_to_key)
        return kv, {"source": f"the GloVe-V authors' release in {folder}", "release": {"variances": variances},
                    "counting": {"lowercase": lowercase}}
    return load_model(folder)


def _noise_scale_line(scale, groups: DocumentGroups | None) -> str:
    """The fit report's line on the noise scale (docs/method.md 6.13, 6.16)."""
    if scale.is_identity:
        return "GloVe-V's own model (residual variances as fitted; not calibrated on split halves)"
    factors = [*scale.own.factors, *scale.pooled.factors]
    halves = "the documents" if groups is None else f"its {groups.describe()}"
    halvings = "" if scale.n_halvings == 1 else f" (pooled over {scale.n_halvings} random halvings)"
    along = ""
    if scale.along.factors.size:
        along = (f"; the variance along each word's own vector {min(scale.along.factors):.2f} to "
                 f"{max(scale.along.factors):.2f} times more (6.22)")
    if scale.by_concentration:
        return (f"residual variances scaled by {min(factors):.2f} to {max(factors):.2f} by word frequency, and more "
                f"for words that few {_unit(groups)} hold, less for words spread over many: the factors by which two "
                f"random halves of {halves} differ beyond GloVe-V's noise model{halvings} (docs/method.md 6.13, "
                f"6.16, 6.20, 6.21){along}")
    return (f"residual variances scaled by {min(factors):.2f} to {max(factors):.2f} by word frequency, the factors "
            f"by which two random halves of {halves} differ beyond GloVe-V's noise model{halvings} (docs/method.md "
            f"6.13, 6.16, 6.20){along}")


def _unit(groups: DocumentGroups | None) -> str:
    return "groups" if groups is None else groups.unit


def _fit_groups(args: argparse.Namespace, corpus: LineCorpus) -> DocumentGroups | None:
    """The groups ``glovev fit`` calibrates on: ``--groups``, else the embedded corpus's books or a folder's files;
    None for each document its own group, and where the fit calibrates nothing."""
    calibrating = args.point_estimate == "posterior" and not args.no_noise_calibration
    if args.groups is None:
        if args.group_column is not None:
            raise ValueError("--group-column names a column of a --groups table: give --groups too")
        if not calibrating or not (corpus.source == default_corpus_path() or corpus.source.is_dir()):
            return None
        natural = (default_corpus_groups(corpus.max_documents) if corpus.source == default_corpus_path()
                   else groups_by_file(corpus))
        if natural.n_groups < MIN_GROUPS:
            _say(f"groups: the corpus's {natural.describe()} are too few to calibrate on (at least {MIN_GROUPS}): "
                 "each document is its own group (--groups FILE names another unit)")
            return None
        return natural
    if not calibrating:
        raise ValueError("--groups sets the unit of the noise calibration's random halves, and this fit has none "
                         "(--no-noise-calibration, or a --point-estimate other than posterior)")
    if args.groups == "documents":
        if args.group_column is not None:
            raise ValueError("--group-column names a column of a --groups table, not of --groups documents")
        return None
    return read_groups(args.groups, column=args.group_column)


def _compact_line(store: CovarianceStore) -> str:
    """What ``--covariance-approximation`` kept: how many words are approximated, their ranks, the row width."""
    compact = store.approximation == LOW_RANK_PLUS_DIAGONAL
    exact = int((store.defined & ~compact).sum())
    dim = store.shape[1]
    if not compact.any():
        return (f"covariances kept exact: for each of the {exact:,} words the eigenpairs asked for would take as many "
                f"numbers as its triangle ({packed_size(dim):,})")
    ranks = store.rank[compact]
    return (f"covariances kept compact: {int(compact.sum()):,} words as their k leading eigenpairs plus a diagonal "
            f"of the other variances (k median {int(np.median(ranks))}, {ranks.min()} to {ranks.max()} of D={dim}), "
            f"{exact:,} exact (their k would save nothing); {store.factor_row_width:,} numbers per word instead "
            f"of a triangle's {packed_size(dim):,}")


def _scheduler(text: str) -> str:
    """``--dask``'s address: HOST:PORT or PROTOCOL://HOST:PORT (a corpus given after ``--dask`` would be taken for
    one); argparse passes the constant of a bare ``--dask`` through here too."""
    if ":" not in text and text != _LOCAL_CLUSTER:
        raise argparse.ArgumentTypeError(f"expected a scheduler address such as tcp://10.0.0.5:8786, got {text!r} "
                                         "(for a corpus, give it before --dask)")
    return text


def _approximation(text: str) -> int | float:
    """``--covariance-approximation``: an integer is a number of eigenpairs, a number with a point a share."""
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number of eigenpairs (e.g. 10) or a share of the "
                                             f"variance (e.g. 0.9), got {text!r}") from None


def _fit_objects(args: argparse.Namespace) -> tuple[CooccurrenceVectorizer, GloVeVEstimator]:
    """The vectorizer and the estimator that ``glovev fit``'s options describe, checked by the library before any
    work (its errors name the parameter: the option's name with underscores, but ``max_vocab_size`` for
    ``--max-vocab`` and ``n_sweeps`` for ``--sweeps``)."""
    if args.dask is not None and args.point_estimate != "posterior":
        raise ValueError(f"--dask runs --point-estimate posterior (the default), not {args.point_estimate}: on a "
                         "cluster the other recipes write their covariances into a file every worker reaches, "
                         "GloVeVEstimator(backend='dask', covariance_storage=PATH) in Python")
    backend = "threads" if args.dask is None else "dask"
    vectorizer = CooccurrenceVectorizer(window=args.window, min_count=args.min_count, max_vocab_size=args.max_vocab,
                                        lowercase=not args.no_lowercase, n_jobs=args.n_jobs,
                                        max_memory=args.max_memory, backend=backend)
    estimator = GloVeVEstimator(args.n_components, epochs=args.epochs, x_max=args.x_max, alpha=args.alpha,
                                random_state=args.random_state, n_jobs=args.n_jobs, max_memory=args.max_memory,
                                covariance_dtype=args.covariance_dtype,
                                covariance_approximation=args.covariance_approximation,
                                conditioning=args.conditioning,
                                point_estimate=args.point_estimate, n_sweeps=args.sweeps,
                                prior_strength=args.prior_strength, backend=backend, device=args.device,
                                batch_size=args.batch_size)
    check_fit_params(vectorizer, estimator)
    return vectorizer, estimator


def _run_fit(args: argparse.Namespace) -> int:
    vectorizer, estimator = _fit_objects(args)
    # before any work: refused in a second, not after; the lock keeps a second fit to the same output out
    target = check_model_directory(args.output, overwrite=args.overwrite)
    with writer_lock(target), _corpus_file(args.corpus) as args.corpus_file:
        args.output_at_start = _folder_identity(args.output)  # what an interruption compares the output with
        if args.dask is None:
            return _fit_and_report(args, vectorizer, estimator)
        with connected(None if args.dask == _LOCAL_CLUSTER else args.dask, resolve_n_jobs(args.n_jobs)) as client:
            workers = client.scheduler_info().get("workers", {})
            _say(f"dask: {len(workers)} worker(s) of the scheduler at {client.scheduler.address}")
            return _fit_and_report(args, vectorizer.set_params(client=client), estimator.set_params(client=client))


@contextmanager
def _corpus_file(path: str | None) -> Iterator[str | None]:
    """The corpus as a path that can be read more than once: a pipe or device (``/dev/stdin``) is copied to a
    temporary file once, as ``sort`` does, and the copy removed at the end (or by the next run, after ``kill -9``)."""
    try:
        mode = None if path is None else os.stat(path).st_mode
    except OSError:  # LineCorpus says what is wrong with it
        mode = None
    if mode is None or not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)):
        yield path
        return
    folder = make_temporary_folder("spool")
    try:
        copy = os.path.join(folder, Path(path).name or "corpus")
        try:
            with open(path, "rb") as source, open(copy, "xb") as target:
                shutil.copyfileobj(source, target, 1 << 20)
        except OSError as error:  # a full TMPDIR: name the copy, not nothing
            raise OSError(error.errno, error.strerror or str(error), copy) from None
        yield copy
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run_upgrade(args: argparse.Namespace) -> int:
    directory = upgrade_model(args.model)
    _say(f"upgraded: {directory} now holds data files only (JSON and arrays, checked by the digests in its "
         "manifest.json); every glovev command reads it")
    return EXIT_OK


def _covariance_device(model) -> str:
    """Where the covariances were computed, for the fit report's line, when training ran on a device."""
    if model.device is None:
        return ""
    if model.point_estimate == "posterior":
        return f", Gram matrices on {model.device}"
    return f", Gram matrices and Cholesky factors on {model.device}"


def _fit_and_report(args: argparse.Namespace, vectorizer: CooccurrenceVectorizer, estimator: GloVeVEstimator) -> int:
    """``glovev fit`` once its options and output are checked: fit, save, report."""
    show_progress = _progress(args)
    if args.glove_folder:
        if args.corpus:
            raise ValueError("give a corpus or --glove-folder, not both")
        if args.groups is not None or args.group_column is not None:
            raise ValueError("--groups label a corpus's documents, and --glove-folder reads no corpus")
        from .adapters import load_glove_folder
        groups, fitted = None, None
        started = time.perf_counter()
        params = estimator.set_params(progress=show_progress).get_params()
        del params["pretrained"]  # the folder's vectors are the trained parameters
        model, kv = load_glove_folder(args.glove_folder, dim=params.pop("n_components"), **params)
        _say(f"read: {len(kv):,} words, D={kv.vector_size} from {args.glove_folder}")
        reading = time.perf_counter() - started - sum(model.fit_seconds_.values())
        metadata = fit_metadata(source=f"Stanford GloVe output in {args.glove_folder}", estimator=model,
                                vectorizer=None, seconds={"read": reading, **model.fit_seconds_})
    else:
        if args.corpus is None:
            corpus = load_default_corpus()
            source = f"the embedded default corpus ({default_corpus_path().name})"
            _say(f"corpus: {source}; no corpus given")
        else:
            corpus = LineCorpus(args.corpus_file)
            source = str(args.corpus)
            _say(f"corpus: {source}" + ("" if args.corpus_file == args.corpus else
                                         f" (a stream: read once into {args.corpus_file}, removed after the fit)"))
        groups = _fit_groups(args, corpus)
        fitted = fit_corpus(corpus, vectorizer, estimator, groups=groups, calibrate_noise=not args.no_noise_calibration,
                            n_halvings=args.halvings, by_concentration=not args.no_concentration,
                            progress=show_progress, source=source, output=args.output, overwrite=args.overwrite)
        vectorizer, model, cooccurrence, seconds = (fitted.vectorizer, fitted.estimator, fitted.cooccurrence,
                                                    fitted.seconds)
        _say(f"counted: {vectorizer.n_tokens_:,} tokens in {vectorizer.n_documents_:,} documents -> "
              f"{cooccurrence.shape[0]:,} words (min_count {vectorizer.min_count}), {cooccurrence.nnz:,} nonzero "
              f"co-occurrences, window {vectorizer.window}  [{seconds['count']:.1f} s, "
              f"{vectorizer.n_tokens_ / seconds['count'] / 1e6:.2f}M tokens/s]")
        costs = model.training_costs_
        sweeps = (f", then {model.n_sweeps_} {'regularised' if model.point_estimate == 'posterior' else 'exact'} "
                  f"sweep{'s' if model.n_sweeps_ > 1 else ''}" if model.n_sweeps_ else "")
        where = ("" if model.device is None else f" on {model.device} (PyTorch, batches of "
                 f"{resolve_batch_size(model.batch_size, cooccurrence):,} entries)")
        _say(f"trained: D={model.n_components}, {model.epochs} epochs{where}, cost {costs[0]:.4f} -> {costs[-1]:.4f} "
             f"(GloVe's weighted squared error per nonzero, first -> last epoch){sweeps}  [{seconds['train']:.1f} s]")
        kv, metadata = fitted.keyed_vectors, fitted.metadata
    few = int((model.n_contexts_ <= kv.vector_size).sum())
    where = _covariance_device(model)
    if model.point_estimate == "posterior":
        _say(f"GloVe-V posterior covariances for {int(model.covariance_defined_.sum()):,} of {len(kv):,} words "
             f"({few:,} have {kv.vector_size} or fewer contexts: their residual variance is pooled over words seen "
             f"about as often, and their covariance is mostly the prior's)  [{model.fit_seconds_['covariances']:.1f} s"
             f"{where}]")
        _say(f"noise: {_noise_scale_line(model.noise_scale_, groups)}")
        _say(f"sampling: {sampling_description(metadata)}")
    else:
        branch = (f"{int(model.pseudo_inverse_.sum()):,} on the paper's pseudo-inverse branch, variances understated"
                  if model.conditioning == "paper" else f"{int(model.singular_.sum()):,} with a numerically singular H_i")
        _say(f"GloVe-V covariances for {int(model.covariance_defined_.sum()):,} of {len(kv):,} words ({branch}; "
             f"{few:,} have {kv.vector_size} or fewer contexts; a word without a covariance gets no interval)  "
             f"[{model.fit_seconds_['covariances']:.1f} s{where}]")
    if model.covariance_approximation is not None:
        _say(_compact_line(model.covariance_))
    directory = fitted.output if fitted is not None else save_model(args.output, kv, metadata, overwrite=args.overwrite)
    size = sum(path.stat().st_size for path in directory.iterdir())
    _say(f"saved: {directory} ({size / 1e6:,.0f} MB)")
    _report_part("distance from the optimum", functools.partial(premise_lines, model))
    # The rest of the report reads the saved model, memory-mapped, as every glovev command does: the fit's
    # covariances in memory are let go first, so the report's draws do not come on top of them.
    del kv, model
    fitted = None
    trim_heap()
    kv, _ = load_model(directory)
    for title, part in report_parts(kv):  # the mapped store lets go of the pages of the factors it reads
        _report_part(title, part)
    probe = next((w for w in PROBE_WORDS if w in kv.key_to_index), kv.index_to_key[0] if len(kv) else "WORD")
    _say(f"next: glovev similarity {directory} {probe} {_partner(kv, probe)}  "
         f"(or glovev neighbors {directory} {probe})")
    return EXIT_OK


def _report_part(title: str, part) -> None:
    """One part of the fit report; the model is saved already, so a part that cannot be computed is a note."""
    try:
        for line in part():
            _say(line)
    except (ValueError, KeyError, ZeroDivisionError, IndexError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        _say(f"{title}: not evaluated ({message})")


def _partner(kv: KeyedVectorsWithVariance, word: str) -> str:
    """A second word for the suggested query: the next probe word in the vocabulary, else the most frequent other."""
    others = [w for w in PROBE_WORDS if w in kv.key_to_index and w != word]
    return others[0] if others else next((w for w in kv.index_to_key if w != word), word)


def _check_query_options(args: argparse.Namespace) -> None:
    """The counts a query takes, checked in the command line's words before the model is opened."""
    for flag, minimum in (("--draws", 2), ("--topn", 2), ("--permutations", 1)):
        value = getattr(args, flag[2:], None)
        if value is not None and value < minimum:
            raise ValueError(f"{flag} must be at least {minimum}, got {value}")
    level = getattr(args, "confidence_level", None)
    if level is not None and not 0 < level < 1:
        raise ValueError(f"--confidence-level must be between 0 and 1 (e.g. 0.95), got {level}")


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
    _check_figure_path(args.plot)
    kv = _load(args)
    result = kv.nearest_neighbors_test(args.word, args.candidates, args.topn, missing=args.missing,
                                       random_state=args.random_state, progress=_progress(args),
                                       **_inference_options(args))
    among = (f"the {len(result.neighbors)} listed words" if args.candidates is None
             else f"the {len(result.neighbors)} usable candidates")
    _emit(result.summary_frame(confidence_level=args.confidence_level), args.format,
          f"nearest neighbours of {args.word!r} ({result.n_draws} draws for ranks among {among})",
          result)
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
    permutations = (f"permutation p: the classic word-list permutation test over {permutation.draws.size:,} "
                    f"partitions of the targets ({permutation.alternative}), the same for both rows")
    _emit(frame, args.format, f"WEAT, {family.method}; dropped: {', '.join(family.dropped) or 'none'}", family,
          extra_notes=[permutations])
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
                                                     missing=args.missing, progress=_progress(args))
    _emit(result.summary_frame(confidence_level=args.confidence_level), args.format,
          f"{Path(pairs).name}: Monte Carlo over {args.draws} draws; {len(result.dropped)} pairs dropped", result)
    return EXIT_OK


def _run_semeval(args: argparse.Namespace) -> int:
    _check_figure_path(args.plot)
    comparisons = [tuple(text.split(":")) for text in args.compare]
    for pair in comparisons:
        if len(pair) != 2 or not all(pair):
            raise ValueError(f"--compare takes two relation ids as ID1:ID2, got {':'.join(pair)!r}")
    folder = args.data or SAMPLE_PATH
    if args.data is None:
        _say(_wrapped(f"SemEval-2012 data: the bundled sample (subcategory 1a only) in {SAMPLE_PATH}; give the "
                      "release's folder for the others"))
    if args.relations == "all":
        wanted = None
    elif args.relations:
        wanted = [s.strip() for s in args.relations.split(",") if s.strip()]
    else:
        available = available_subcategories(folder)
        wanted = list(PAPER_RELATIONS) if set(PAPER_RELATIONS) <= set(available) else available
    kv, metadata = _open_model(args.model)
    lowercase = (metadata.get("counting") or {}).get("lowercase", False)
    relations = read_semeval2012(folder, wanted)
    result = evaluate_relational_similarity(kv, relations, n_draws=args.draws, random_state=args.random_state,
                                            missing=args.missing, lowercase=lowercase, progress=_progress(args))
    level = args.confidence_level
    frame = result.summary_frame(confidence_level=level).drop(columns=["relation", "metric"])  # the row names say
    notes = [f"relations: {'; '.join(result.labels)}"]
    if comparisons:
        rows = [result.difference(first, second, metric) for first, second in comparisons
                for metric in ("maxdiff", "spearman")]
        intervals = [row.conf_int(confidence_level=level) for row in rows]
        compared = pd.DataFrame({"score": [r.estimate for r in rows], "std err": [r.std_error for r in rows],
                                 frame.columns[4]: [low for low, _ in intervals],
                                 frame.columns[5]: [high for _, high in intervals],
                                 "P (same)": [r.pvalue for r in rows]}, index=[r.name for r in rows])
        frame = pd.concat([frame, compared])
        notes.append("Rows [A] - [B]: the difference of two relations' scores (joint draws); P (same): the "
                     "two-sided test that they score the same")
    _emit(frame, args.format, f"SemEval-2012 Task 2 in {args.model}: Monte Carlo over {args.draws} draws; "
                              f"{len(result.dropped)} pairs dropped", result, extra_notes=notes)
    if args.plot:
        from .plots import plot_relational_similarity
        _save_figure(plot_relational_similarity(result, confidence_level=level)[0], args.plot)
    return EXIT_OK


def _run_info(args: argparse.Namespace) -> int:
    kv, metadata = _open_model(args.model)
    if args.format == "json":
        _say(json.dumps(metadata, indent=1))
        return EXIT_OK
    directory = Path(args.model)
    size = sum(path.stat().st_size for path in directory.iterdir() if path.is_file())
    with_covariance = sum(kv.has_covariance(key) for key in kv.index_to_key)
    _say(f"model: {directory} ({size / 1e6:,.1f} MB): {len(kv):,} words, D={kv.vector_size}, "
          f"{with_covariance:,} with a covariance; {sampling_description(metadata)}")
    for section, values in metadata.items():
        if isinstance(values, dict):
            _say(f"{section}:")
            for name, value in values.items():
                _say(f"  {name}: {value}")
        else:
            _say(f"{section}: {values}")
    return EXIT_OK


def _run_plot(args: argparse.Namespace) -> int:
    from . import plots
    _check_figure_path(args.output)
    if args.figure == "ellipses" and not args.words:
        raise ValueError("the ellipses figure needs --words")
    kv = _load(args)
    if args.figure == "variance":
        ax = plots.plot_variance_by_frequency(kv, random_state=args.random_state)
    else:
        ax = plots.plot_uncertainty_ellipses(kv, args.words, random_state=args.random_state)
    _save_figure(ax, args.output)
    return EXIT_OK


def _check_figure_path(path: str | None) -> None:
    """A figure's file must be writable: found before the work, not after."""
    if path is None:
        return
    if Path(path).is_dir():
        raise IsADirectoryError(errno.EISDIR, f"{path} is a folder: give the figure a file name, "
                                              f"e.g. {path}/figure.png")
    check_writable(path, "the figure")


def _save_figure(ax, path: str) -> None:
    ax.figure.tight_layout()
    with atomic_path(path) as temporary:
        ax.figure.savefig(temporary, dpi=120, format=Path(path).suffix.lstrip(".") or "png")
    _say(f"figure written: {path}")


if __name__ == "__main__":
    sys.exit(main())
