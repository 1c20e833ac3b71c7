"""Stage 3, GloVe -> covariances: GloVe-V for every word, and where the covariances are kept.

- :mod:`.wls`: the formulas for one word (H, s2, the optimum, the conditioning rule);
- :mod:`.factor`: :class:`Factor`, how one covariance is kept: a subclass per representation, and
  the rank rules;
- :mod:`.layout`: the per-word arrays, defined once; :mod:`.store_file`: the file format;
- :mod:`.store`: :class:`CovarianceStore` and :class:`CovarianceStoreWriter`;
- :mod:`.passes`: the one pass runner (threads; Dask in the private ``._dask``), in memory or to a
  resumable file;
- :mod:`.refit`: point estimates other than the trained vectors (the optimum, alternating sweeps);
- :mod:`.prior`: the empirical-Bayes prior and every row's posterior (the default point estimate);
- :mod:`.noise_scale`: :class:`NoiseScale`, the factor on each row's residual variance calibrated on
  two random halves of the corpus;
- :mod:`.estimator`: :class:`GloVeVEstimator`, the scikit-learn face of all of it.
"""

from .estimator import ConditionalFit, GloVeVEstimator
from .factor import (APPROXIMATION_NAMES, CHOLESKY, DIAGONAL, DIAGONAL_ROOT, EIGENVALUE_CUTOFF, EXACT, LOW_RANK,
                     PENDING, PSEUDO_INVERSE, THIN_ROOT, TRANSFORMED, UNDEFINED, CholeskyFactor, DiagonalRootFactor,
                     Factor, PseudoInverseFactor, RootFactor, ThinRootFactor, numerical_rank, pack_lower, packed_size,
                     stored_size, unpack_lower)
from .layout import PER_WORD_DTYPES, PerWord
from .noise_scale import NoiseScale
from .passes import (BlockSummary, PassResult, cost_balanced_blocks, covariance_pass, fit_block, n_blocks_for,
                     threaded_runner)
from .prior import GaussianPrior
from .refit import POINT_ESTIMATES, alternating_sweeps, optimum_vectors
from .store import CovarianceStore, CovarianceStoreWriter, UndefinedCovarianceError
from .wls import (CONDITIONING_CHOICES, INVERSE_ERROR_LIMIT, MAX_CONDITION, WordFit, WordFitter, estimated_condition,
                  is_ill_conditioned, residual_variance, residual_variances)

__all__ = [
    "BlockSummary",
    "APPROXIMATION_NAMES",
    "CHOLESKY",
    "CholeskyFactor",
    "DIAGONAL",
    "DIAGONAL_ROOT",
    "DiagonalRootFactor",
    "CONDITIONING_CHOICES",
    "ConditionalFit",
    "CovarianceStore",
    "CovarianceStoreWriter",
    "EIGENVALUE_CUTOFF",
    "EXACT",
    "Factor",
    "GaussianPrior",
    "GloVeVEstimator",
    "INVERSE_ERROR_LIMIT",
    "MAX_CONDITION",
    "NoiseScale",
    "LOW_RANK",
    "PENDING",
    "POINT_ESTIMATES",
    "PER_WORD_DTYPES",
    "PSEUDO_INVERSE",
    "PseudoInverseFactor",
    "THIN_ROOT",
    "ThinRootFactor",
    "PassResult",
    "PerWord",
    "RootFactor",
    "TRANSFORMED",
    "UNDEFINED",
    "UndefinedCovarianceError",
    "alternating_sweeps",
    "WordFit",
    "WordFitter",
    "cost_balanced_blocks",
    "covariance_pass",
    "estimated_condition",
    "fit_block",
    "is_ill_conditioned",
    "n_blocks_for",
    "numerical_rank",
    "optimum_vectors",
    "pack_lower",
    "packed_size",
    "stored_size",
    "residual_variance",
    "residual_variances",
    "threaded_runner",
    "unpack_lower",
]
