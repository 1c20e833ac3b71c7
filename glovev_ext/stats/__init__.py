"""Stage 4, covariances -> statistics -> results, in three floors, each importing only from those below it.

- :mod:`.engine`, the inference engine: :class:`Statistic` (functions of a few words' vectors,
  with gradients); :mod:`.engine.words`, the one policy for words that are missing or lack a
  covariance (``missing=``); the delta method and Monte Carlo (:mod:`.engine.delta`,
  :mod:`.engine.monte_carlo`), which work on resolved words and never on the container, and
  :func:`estimate`, which runs either on a Statistic; :mod:`.engine.intervals`, the reference
  distributions and scales, and :mod:`.engine.rule`, the one rule that applies them; the result
  core (:mod:`.engine.results`) and its one rendering path (:mod:`.engine.rendering`);
  :mod:`.engine.shared_prior`, what results under one prior share.
- :mod:`.statistics`, the paper's statistics: cosines, differences and neighbours
  (:mod:`.statistics.similarity`), many pairs at once (:mod:`.statistics.pair_tests`), WEAT and the
  classic permutation test, the cosine bias of Garg et al., benchmark evaluation, SemEval-2012
  Task 2 (:mod:`.statistics.semeval` reads the task; :mod:`.statistics.relational` scores it with
  GloVe-V).
- :mod:`.studies`, built on the statistics: one statistic across independently fitted models
  (:mod:`.studies.comparison`), a word across two embeddings in one basis (:mod:`.studies.change`),
  power and study planning, interval coverage by simulation with known truth.

Every function here that draws random numbers for a result takes ``random_state``, by default
:data:`DEFAULT_SEED` (as every ``glovev`` command), so the same call gives the same answer;
``random_state=None`` takes fresh random numbers. :func:`draw_values`, which hands out draws to
pool, takes fresh ones by default.
"""

from .._checks import DEFAULT_SEED
from .._deprecation import moved_names
from .engine.estimation import DEFAULT_METHOD, METHODS, estimate, wald_test
from .engine.intervals import SCALES
from .engine.monte_carlo import draw_values
from .engine.results import InferenceResult, NeighborsResult, ResultFamily
from .engine.statistic import Statistic, coordinate_statistic, stack
from .engine.words import DEFAULT_MISSING, MISSING_CHOICES
from .statistics.bias import compare_biases, cosine_bias, cosine_bias_by_frequency, cosine_bias_statistic
from .statistics.cosine import cosine_statistic
from .statistics.evaluation import evaluate_analogies, evaluate_word_pairs, read_analogies, read_word_pairs
from .statistics.pair_tests import SimilarityTests, similarity_tests
from .statistics.permutation import PermutationResult, weat_permutation_test
from .statistics.relational import PAPER_RELATIONS, RelationalSimilarity, evaluate_relational_similarity
from .statistics.semeval import SemEvalRelation, read_semeval2012
from .statistics.similarity import nearest_neighbors, similarity, similarity_difference, similarity_family
from .statistics.weat import weat, weat_statistic
from .studies.change import self_similarity, vector_change_test
from .studies.comparison import ModelComparison, compare_models
from .studies.planning import StudyPlan, plan_study
from .studies.power import minimum_detectable_effect, power
from .studies.simulation import Coverage, RowSimulator, interval_coverage

# Names of glovev-ext 0.2 exported here that are the engine's and the statistics' own parts (issue 24), and
# the joint similarities' old name: importable from here for one more release, with a DeprecationWarning.
__getattr__ = moved_names(__name__, {
    "": ("similarities",),
    "engine.estimation": ("AUTO_TOLERANCE",),
    "engine.results": ("NEIGHBOR_COLUMNS",),
    "engine.delta": ("WordShares", "delta_covariance"),
    "engine.intervals": ("welch_satterthwaite",),
    "engine.statistic": ("numerical_jacobian",),
    "engine.words": ("EmbeddingWithCovariance", "ResolvedWords", "resolve", "usable", "vectors_of"),
    "statistics.cosine": ("cosine_pair_gradients", "cosine_product_gradient", "cosines", "through_normalisation",
                          "unit_vector_jacobian"),
    "statistics.semeval": ("maxdiff_accuracy", "maxdiff_counts", "maxdiff_to_scale", "scale_to_maxdiff",
                           "spearman_with_gold"),
}, renamed={"similarities": "similarity_family"})


# What a user of the statistics calls, the results they get back and the choices they pass.
__all__ = [
    "Coverage",
    "DEFAULT_METHOD",
    "DEFAULT_MISSING",
    "DEFAULT_SEED",
    "InferenceResult",
    "METHODS",
    "MISSING_CHOICES",
    "ModelComparison",
    "NeighborsResult",
    "PAPER_RELATIONS",
    "PermutationResult",
    "RelationalSimilarity",
    "ResultFamily",
    "RowSimulator",
    "SCALES",
    "SemEvalRelation",
    "SimilarityTests",
    "Statistic",
    "StudyPlan",
    "compare_biases",
    "compare_models",
    "coordinate_statistic",
    "cosine_bias",
    "cosine_bias_by_frequency",
    "cosine_bias_statistic",
    "cosine_statistic",
    "draw_values",
    "estimate",
    "evaluate_analogies",
    "evaluate_relational_similarity",
    "evaluate_word_pairs",
    "interval_coverage",
    "minimum_detectable_effect",
    "nearest_neighbors",
    "plan_study",
    "power",
    "read_analogies",
    "read_semeval2012",
    "read_word_pairs",
    "self_similarity",
    "similarity",
    "similarity_difference",
    "similarity_family",
    "similarity_tests",
    "stack",
    "vector_change_test",
    "wald_test",
    "weat",
    "weat_permutation_test",
    "weat_statistic",
]
