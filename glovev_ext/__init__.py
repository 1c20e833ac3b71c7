"""glovev-ext: GloVe word embeddings with honest error bars (GloVe-V).

The compute path runs text -> co-occurrence matrix -> GloVe parameters -> per-word covariances
-> statistics; each stage is importable from here.
"""

from .cooccurrence_matrix import CooccurrenceMatrix, check_cooccurrence
from .corpus import LineCorpus, default_corpus_manifest_path, default_corpus_path, load_default_corpus
from .covariance_store import CovarianceStore, UndefinedCovarianceError
from .estimator import ConditionalFit, GloVeVEstimator
from .bias import compare_biases, cosine_bias, cosine_bias_statistic, weat, weat_permutation_test, weat_statistic
from .evaluation import evaluate_analogies, evaluate_word_pairs
from .inference import estimate, test
from .keyed_vectors import KeyedVectorsWithVariance
from .model_directory import load_model, save_model
from .results import InferenceResult, ResultFamily
from .similarity import NeighborsResult, nearest_neighbors, similarities, similarity, similarity_difference
from .statistic import Statistic, cosine_statistic, stack
from .glove_objective import glove_cost, glove_weights
from .trainer import GloVeParameters, train_glove
from .vectorizer import CooccurrenceVectorizer

__version__ = "0.1.0"

__all__ = [
    "InferenceResult",
    "NeighborsResult",
    "ResultFamily",
    "Statistic",
    "compare_biases",
    "cosine_bias",
    "cosine_bias_statistic",
    "cosine_statistic",
    "estimate",
    "evaluate_analogies",
    "evaluate_word_pairs",
    "nearest_neighbors",
    "similarities",
    "similarity",
    "save_model",
    "similarity_difference",
    "stack",
    "test",
    "weat",
    "weat_permutation_test",
    "weat_statistic",
    "ConditionalFit",
    "CovarianceStore",
    "GloVeVEstimator",
    "KeyedVectorsWithVariance",
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
    "load_model",
    "train_glove",
]
