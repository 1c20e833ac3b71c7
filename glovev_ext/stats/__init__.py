"""Stage 4, covariances -> statistics -> results.

- :mod:`.statistic`: :class:`Statistic` (functions of a few words' vectors, with gradients);
  :mod:`.cosine`: the cosine and unit-normalisation formulas and all their derivatives;
- :mod:`.words`: the one policy for words that are missing or lack a covariance (``missing=``);
- the engines, which work on resolved words (vectors and covariance factors) and never on the
  container: :mod:`.delta` and :mod:`.monte_carlo`; :mod:`.estimation` runs either on a Statistic;
- the paper's statistics: :mod:`.similarity` (cosines, differences, neighbours), :mod:`.pair_tests`
  (many pairs, each tested on its own, vectorised), :mod:`.weat`,
  :mod:`.permutation` (the classic WEAT test), :mod:`.bias` (Garg et al.), :mod:`.evaluation`,
  :mod:`.relational` (SemEval-2012 Task 2 with GloVe-V; :mod:`.semeval` reads the task and holds the
  organisers' metrics);
- across models: :mod:`.comparison` (one statistic from independently fitted models: equality,
  pairwise, trend), :mod:`.change` (a word across two embeddings in one basis), :mod:`.power`
  (power and minimum detectable effects of the tests), :mod:`.planning` (a study's precision now and
  with more text);
- :mod:`.intervals`: the reference distribution (t, Welch-Satterthwaite) and the scale (bounded
  statistics on atanh) that turn an estimate and its standard error into intervals and p-values;
- :mod:`.results`: statsmodels-style results, all rendered through one path;
- :mod:`.simulation`: coverage of the intervals by simulation with known truth.

Every function here that draws random numbers for a result takes ``random_state``, by default
:data:`DEFAULT_SEED` (as every ``glovev`` command), so the same call gives the same answer;
``random_state=None`` takes fresh random numbers. :func:`draw_values`, which hands out draws to
pool, takes fresh ones by default.
"""

from .._checks import DEFAULT_SEED
from .bias import compare_biases, cosine_bias, cosine_bias_by_frequency, cosine_bias_statistic
from .change import self_similarity, vector_change_test
from .comparison import ModelComparison, compare_models
from .cosine import (cosine_pair_gradients, cosine_product_gradient, cosine_statistic, cosines,
                     through_normalisation, unit_vector_jacobian)
from .delta import WordShares, delta_covariance
from .estimation import AUTO_TOLERANCE, DEFAULT_METHOD, METHODS, estimate, wald_test
from .evaluation import evaluate_analogies, evaluate_word_pairs, read_analogies, read_word_pairs
from .monte_carlo import draw_values
from .pair_tests import SimilarityTests, similarity_tests
from .permutation import weat_permutation_test
from .planning import StudyPlan, plan_study
from .power import minimum_detectable_effect, power
from .relational import PAPER_RELATIONS, RelationalSimilarity, evaluate_relational_similarity
from .results import NEIGHBOR_COLUMNS, InferenceResult, NeighborsResult, ResultFamily
from .similarity import nearest_neighbors, similarities, similarity, similarity_difference
from .simulation import Coverage, RowSimulator, interval_coverage
from .intervals import SCALES, welch_satterthwaite
from .semeval import (SemEvalRelation, maxdiff_accuracy, maxdiff_counts, maxdiff_to_scale, read_semeval2012,
                      scale_to_maxdiff, spearman_with_gold)
from .statistic import Statistic, coordinate_statistic, numerical_jacobian, stack
from .weat import weat, weat_statistic
from .words import (DEFAULT_MISSING, MISSING_CHOICES, EmbeddingWithCovariance, ResolvedWords, resolve, usable,
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
