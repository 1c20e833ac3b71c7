"""glovev-ext: GloVe word embeddings with honest error bars (GloVe-V).

The compute path runs text -> co-occurrence matrix -> GloVe parameters -> per-word covariances
-> statistics; each stage is importable from here.
"""

from .cooccurrence_matrix import CooccurrenceMatrix, check_cooccurrence
from .corpus import LineCorpus, default_corpus_manifest_path, default_corpus_path, load_default_corpus
from .covariance_store import CovarianceStore, UndefinedCovarianceError
from .estimator import ConditionalFit, GloVeVEstimator
from .glove_objective import glove_cost, glove_weights
from .trainer import GloVeParameters, train_glove
from .vectorizer import CooccurrenceVectorizer

__version__ = "0.1.0"

__all__ = [
    "ConditionalFit",
    "CovarianceStore",
    "GloVeVEstimator",
    "UndefinedCovarianceError",
    "CooccurrenceMatrix",
    "CooccurrenceVectorizer",
    "GloVeParameters",
    "LineCorpus",
    "check_cooccurrence",
    "default_corpus_manifest_path",
    "default_corpus_path",
    "glove_cost",
    "glove_weights",
    "load_default_corpus",
    "train_glove",
]
