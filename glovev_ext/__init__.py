"""glovev-ext: GloVe word embeddings with honest error bars (GloVe-V).

The compute path runs text -> co-occurrence matrix -> GloVe parameters -> per-word covariances
-> statistics -> results; each stage is importable from here. File formats of other tools are in
``glovev_ext.adapters``, figures in ``glovev_ext.plots``, the Dask backend in
``glovev_ext.distributed``.
"""

from .corpus import LineCorpus, default_corpus_manifest_path, default_corpus_path, load_default_corpus
from .cooccurrence_matrix import CooccurrenceMatrix, check_cooccurrence
from .vectorizer import CooccurrenceVectorizer
from .glove_objective import glove_cost, glove_weights
from .trainer import GloVeParameters, train_glove
from .covariance_store import CovarianceStore, UndefinedCovarianceError
from .estimator import ConditionalFit, GloVeVEstimator
from .keyed_vectors import KeyedVectorsWithVariance
from .model_directory import load_model, save_model
from .results import InferenceResult, ResultFamily
from .statistic import Statistic, cosine_statistic, stack
from .inference import estimate, wald_test
from .similarity import NeighborsResult, nearest_neighbors, similarities, similarity, similarity_difference
from .bias import compare_biases, cosine_bias, cosine_bias_statistic, weat, weat_permutation_test, weat_statistic
from .evaluation import evaluate_analogies, evaluate_word_pairs

__version__ = "0.1.0"

__all__ = [
    "ConditionalFit",
    "CooccurrenceMatrix",
    "CooccurrenceVectorizer",
    "CovarianceStore",
    "GloVeParameters",
    "GloVeVEstimator",
    "InferenceResult",
    "KeyedVectorsWithVariance",
    "LineCorpus",
    "NeighborsResult",
    "ResultFamily",
    "Statistic",
    "UndefinedCovarianceError",
    "check_cooccurrence",
    "compare_biases",
    "cosine_bias",
    "cosine_bias_statistic",
    "cosine_statistic",
    "default_corpus_manifest_path",
    "default_corpus_path",
    "estimate",
    "evaluate_analogies",
    "evaluate_word_pairs",
    "glove_cost",
    "glove_weights",
    "load_default_corpus",
    "load_model",
    "nearest_neighbors",
    "save_model",
    "similarities",
    "similarity",
    "similarity_difference",
    "stack",
    "train_glove",
    "wald_test",
    "weat",
    "weat_permutation_test",
    "weat_statistic",
]
