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
from .statistics.bias import compare_biases, cosine_bias, cosine_bias_by_frequency, cosine_bias_statistic
from .studies.change import self_similarity, vector_change_test
from .studies.comparison import ModelComparison, compare_models
from .statistics.cosine import (cosine_pair_gradients, cosine_product_gradient, cosine_statistic, cosines,
                     through_normalisation, unit_vector_jacobian)
from .engine.delta import WordShares, delta_covariance
from .engine.estimation import AUTO_TOLERANCE, DEFAULT_METHOD, METHODS, estimate, wald_test
from .statistics.evaluation import evaluate_analogies, evaluate_word_pairs, read_analogies, read_word_pairs
from .engine.monte_carlo import draw_values
from .statistics.pair_tests import SimilarityTests, similarity_tests
from .statistics.permutation import weat_permutation_test
from .studies.planning import StudyPlan, plan_study
from .studies.power import minimum_detectable_effect, power
from .statistics.relational import PAPER_RELATIONS, RelationalSimilarity, evaluate_relational_similarity
from .engine.results import NEIGHBOR_COLUMNS, InferenceResult, NeighborsResult, ResultFamily
from .statistics.similarity import nearest_neighbors, similarities, similarity, similarity_difference
from .studies.simulation import Coverage, RowSimulator, interval_coverage
from .engine.intervals import SCALES, welch_satterthwaite
from .statistics.semeval import (SemEvalRelation, maxdiff_accuracy, maxdiff_counts, maxdiff_to_scale, read_semeval2012,
                      scale_to_maxdiff, spearman_with_gold)
from .engine.statistic import Statistic, coordinate_statistic, numerical_jacobian, stack
from .statistics.weat import weat, weat_statistic
from .engine.words import (DEFAULT_MISSING, MISSING_CHOICES, EmbeddingWithCovariance, ResolvedWords, resolve, usable,
                    vectors_of)

__all__ = [
    "AUTO_TOLERANCE",
    "Coverage",
    "DEFAULT_METHOD",
    "DEFAULT_MISSING",
    "DEFAULT_SEED",
    "EmbeddingWithCovariance",
    "InferenceResult",
    "METHODS",
    "MISSING_CHOICES",
    "ModelComparison",
    "NEIGHBOR_COLUMNS",
    "NeighborsResult",
    "PAPER_RELATIONS",
    "RelationalSimilarity",
    "ResolvedWords",
    "ResultFamily",
    "RowSimulator",
    "SCALES",
    "SemEvalRelation",
    "SimilarityTests",
    "Statistic",
    "StudyPlan",
    "WordShares",
    "compare_biases",
    "compare_models",
    "coordinate_statistic",
    "cosine_bias",
    "cosine_bias_by_frequency",
    "cosine_bias_statistic",
    "cosine_pair_gradients",
    "cosine_product_gradient",
    "cosine_statistic",
    "cosines",
    "delta_covariance",
    "draw_values",
    "estimate",
    "evaluate_analogies",
    "evaluate_relational_similarity",
    "evaluate_word_pairs",
    "interval_coverage",
    "maxdiff_accuracy",
    "maxdiff_counts",
    "maxdiff_to_scale",
    "minimum_detectable_effect",
    "nearest_neighbors",
    "numerical_jacobian",
    "plan_study",
    "power",
    "read_analogies",
    "read_semeval2012",
    "read_word_pairs",
    "resolve",
    "scale_to_maxdiff",
    "self_similarity",
    "similarities",
    "similarity",
    "similarity_difference",
    "similarity_tests",
    "spearman_with_gold",
    "stack",
    "through_normalisation",
    "unit_vector_jacobian",
    "usable",
    "vector_change_test",
    "vectors_of",
    "wald_test",
    "weat",
    "weat_permutation_test",
    "weat_statistic",
    "welch_satterthwaite",
]
