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

Every public name is importable from here.
"""

from ._deprecation import install_renamed_modules
from ._version import __version__
from .atomic import atomic_path
from .counting import (CooccurrenceMatrix, CooccurrenceVectorizer, LineCorpus, check_cooccurrence,
                       default_corpus_manifest_path, default_corpus_path, load_default_corpus)
from .covariance import (ConditionalFit, CovarianceStore, CovarianceStoreWriter, GloVeVEstimator,
                         UndefinedCovarianceError)
from .glove import GloVeParameters, glove_cost, glove_weights, train_glove
from .keyed_vectors import KeyedVectorsWithVariance
from .pipeline import FittedCorpus, check_fit_params, fit_corpus, fit_metadata
from .saved_model import load_model, save_model
from .subcorpora import fit_subcorpora
from .stats import (InferenceResult, ModelComparison, NeighborsResult, RelationalSimilarity, ResultFamily, SemEvalRelation,
                    SimilarityTests, Statistic, StudyPlan, compare_biases, coordinate_statistic, cosine_bias,
                    cosine_bias_by_frequency, cosine_bias_statistic, cosine_statistic, compare_models, estimate, evaluate_analogies,
                    evaluate_relational_similarity, evaluate_word_pairs, nearest_neighbors, plan_study, read_semeval2012,
                    self_similarity, similarities, similarity, similarity_difference, similarity_tests, stack,
                    vector_change_test, wald_test, weat, weat_permutation_test, weat_statistic)

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


def __getattr__(name: str):
    """``glovev_ext.bias`` and the other 0.1 modules as attributes, with the same warning as their import."""
    if f"glovev_ext.{name}" in _RENAMED_MODULES:
        import importlib
        return importlib.import_module(f"glovev_ext.{name}")
    raise AttributeError(f"module 'glovev_ext' has no attribute {name!r}")


__all__ = [
    "__version__",
    "ConditionalFit",
    "CooccurrenceMatrix",
    "CooccurrenceVectorizer",
    "CovarianceStore",
    "CovarianceStoreWriter",
    "FittedCorpus",
    "GloVeParameters",
    "GloVeVEstimator",
    "InferenceResult",
    "KeyedVectorsWithVariance",
    "LineCorpus",
    "ModelComparison",
    "NeighborsResult",
    "RelationalSimilarity",
    "ResultFamily",
    "SemEvalRelation",
    "SimilarityTests",
    "Statistic",
    "StudyPlan",
    "UndefinedCovarianceError",
    "atomic_path",
    "check_cooccurrence",
    "check_fit_params",
    "compare_biases",
    "compare_models",
    "coordinate_statistic",
    "cosine_bias",
    "cosine_bias_by_frequency",
    "cosine_bias_statistic",
    "cosine_statistic",
    "default_corpus_manifest_path",
    "default_corpus_path",
    "estimate",
    "evaluate_analogies",
    "evaluate_relational_similarity",
    "evaluate_word_pairs",
    "fit_corpus",
    "fit_metadata",
    "fit_subcorpora",
    "glove_cost",
    "glove_weights",
    "load_default_corpus",
    "load_model",
    "nearest_neighbors",
    "plan_study",
    "read_semeval2012",
    "save_model",
    "self_similarity",
    "similarities",
    "similarity",
    "similarity_difference",
    "similarity_tests",
    "stack",
    "train_glove",
    "vector_change_test",
    "wald_test",
    "weat",
    "weat_permutation_test",
    "weat_statistic",
]
