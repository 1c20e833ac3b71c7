"""glovev-ext: GloVe word embeddings with honest error bars (GloVe-V).

The package follows its data path, one subpackage a stage, each importing only from the stages
before it:

- :mod:`glovev_ext.counting`: text -> co-occurrence counts;
- :mod:`glovev_ext.glove`: counts -> GloVe parameters;
- :mod:`glovev_ext.covariance`: GloVe -> each word's GloVe-V covariance;
- :mod:`glovev_ext.stats`: covariances -> statistics -> statsmodels-style results;
- :class:`KeyedVectorsWithVariance` (gensim's container, with the statistics as methods), and
  the application: :func:`fit_corpus`, :func:`fit_subcorpora` (sub-corpora in one basis), saved
  models, :mod:`glovev_ext.plots`, the ``glovev`` command line. Other tools' file formats are in
  :mod:`glovev_ext.adapters`.

The names a user of the README needs are importable from here; each subpackage exports the
rest of its stage's public names.
"""

import importlib

from ._deprecation import install_renamed_modules, moved_names
from ._version import __version__
from .counting import CooccurrenceMatrix, CooccurrenceVectorizer, LineCorpus, load_default_corpus
from .covariance import GloVeVEstimator, UndefinedCovarianceError
from .keyed_vectors import KeyedVectorsWithVariance
from .pipeline import FittedCorpus, fit_corpus
from .saved_model import load_model, save_model
from .subcorpora import fit_subcorpora
from .stats import (Statistic, compare_models, cosine_statistic, estimate, evaluate_relational_similarity, plan_study,
                    read_semeval2012, self_similarity, vector_change_test)

# The flat modules of glovev-ext 0.1, importable for one more release (with a DeprecationWarning);
# glovev_ext.similarity is the function now, as the package attribute always was.
_RENAMED_MODULES = {
    "glovev_ext.corpus": "glovev_ext.counting",
    "glovev_ext.cooccurrence_matrix": "glovev_ext.counting",
    "glovev_ext.vectorizer": "glovev_ext.counting",
    "glovev_ext.glove_objective": "glovev_ext.glove",
    "glovev_ext.trainer": "glovev_ext.glove",
    "glovev_ext.covariance_store": "glovev_ext.covariance",
    "glovev_ext.estimator": "glovev_ext.covariance",
    "glovev_ext.statistic": "glovev_ext.stats",
    "glovev_ext.inference": "glovev_ext.stats",
    "glovev_ext.bias": "glovev_ext.stats",
    "glovev_ext.evaluation": "glovev_ext.stats",
    "glovev_ext.results": "glovev_ext.stats",
    "glovev_ext.model_directory": "glovev_ext.saved_model",
    "glovev_ext._covariance_kernel": "glovev_ext.covariance",  # named by lazy stores pickled by 0.1
}
install_renamed_modules(_RENAMED_MODULES)


# Names of glovev-ext 0.2 exported here that now live only in the subpackage of their stage (issue 24):
# importable from here for one more release, with a DeprecationWarning naming their home.
_moved = moved_names(__name__, {
    "stats": ("InferenceResult", "ModelComparison", "NeighborsResult", "RelationalSimilarity", "ResultFamily",
              "SemEvalRelation", "SimilarityTests", "StudyPlan", "compare_biases", "coordinate_statistic", "cosine_bias",
              "cosine_bias_by_frequency", "cosine_bias_statistic", "evaluate_analogies", "evaluate_word_pairs",
              "nearest_neighbors", "similarities", "similarity", "similarity_difference", "similarity_tests", "stack",
              "wald_test", "weat", "weat_permutation_test", "weat_statistic"),
    "covariance": ("ConditionalFit", "CovarianceStore", "CovarianceStoreWriter"),
    "glove": ("GloVeParameters", "glove_cost", "glove_weights", "train_glove"),
    "counting": ("check_cooccurrence", "default_corpus_manifest_path", "default_corpus_path"),
    "atomic": ("atomic_path",),
    "pipeline": ("fit_metadata",),
}, renamed={"similarities": "similarity_family"})


def __getattr__(name: str):
    """A 0.1 module as an attribute, or a name this package exported in 0.2, each with a DeprecationWarning."""
    if f"glovev_ext.{name}" in _RENAMED_MODULES:
        return importlib.import_module(f"glovev_ext.{name}")
    return _moved(name)


# What a user of the README needs; each stage's subpackage exports the rest of its own names.
__all__ = [
    "__version__",
    "CooccurrenceMatrix",
    "CooccurrenceVectorizer",
    "FittedCorpus",
    "GloVeVEstimator",
    "KeyedVectorsWithVariance",
    "LineCorpus",
    "Statistic",
    "UndefinedCovarianceError",
    "compare_models",
    "cosine_statistic",
    "estimate",
    "evaluate_relational_similarity",
    "fit_corpus",
    "fit_subcorpora",
    "load_default_corpus",
    "load_model",
    "plan_study",
    "read_semeval2012",
    "save_model",
    "self_similarity",
    "vector_change_test",
]
