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

from ._deprecation import moved_names
from ._version import __version__
from .counting import (CooccurrenceMatrix, CooccurrenceVectorizer, DocumentGroups, LineCorpus, default_corpus_groups,
                       load_default_corpus, read_groups)
from .covariance import GloVeVEstimator, UndefinedCovarianceError
from .group_jackknife import GroupJackknife, group_jackknife
from .keyed_vectors import KeyedVectorsWithVariance
from .pipeline import FittedCorpus, fit_corpus
from .saved_model import load_model, save_model, upgrade_model
from .subcorpora import fit_subcorpora
from .stats import (Statistic, compare_models, cosine_statistic, estimate, evaluate_relational_similarity, plan_study,
                    read_semeval2012, self_similarity, vector_change_test)


# Names of glovev-ext 0.2 exported here that now live only in the subpackage of their stage (issue 24):
# importable from here for one more release, with a DeprecationWarning naming their home.
__getattr__ = moved_names(__name__, {
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


# What a user of the README needs; each stage's subpackage exports the rest of its own names.
__all__ = [
    "__version__",
    "CooccurrenceMatrix",
    "CooccurrenceVectorizer",
    "DocumentGroups",
    "FittedCorpus",
    "GloVeVEstimator",
    "GroupJackknife",
    "KeyedVectorsWithVariance",
    "LineCorpus",
    "Statistic",
    "UndefinedCovarianceError",
    "compare_models",
    "cosine_statistic",
    "default_corpus_groups",
    "estimate",
    "evaluate_relational_similarity",
    "fit_corpus",
    "fit_subcorpora",
    "group_jackknife",
    "load_default_corpus",
    "load_model",
    "plan_study",
    "read_groups",
    "read_semeval2012",
    "save_model",
    "self_similarity",
    "upgrade_model",
    "vector_change_test",
]
