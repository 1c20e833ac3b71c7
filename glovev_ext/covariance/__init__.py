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

The package exports what a user of the stage touches: the estimator and what it takes and gives
(the store, a word's :class:`Factor`, the prior, the noise scale, the choices of ``conditioning``
and ``point_estimate``). The machinery (the formulas, representations, passes, layouts) is imported
from its module; the names of it that 0.2 exported here still import, with a warning.
"""

from .._deprecation import moved_names
from .estimator import ConditionalFit, GloVeVEstimator
from .factor import Factor
from .noise_scale import NoiseScale
from .prior import GaussianPrior
from .refit import POINT_ESTIMATES
from .store import CovarianceStore, CovarianceStoreWriter, UndefinedCovarianceError
from .wls import CONDITIONING_CHOICES

__all__ = [
    "CONDITIONING_CHOICES",
    "ConditionalFit",
    "CovarianceStore",
    "CovarianceStoreWriter",
    "Factor",
    "GaussianPrior",
    "GloVeVEstimator",
    "NoiseScale",
    "POINT_ESTIMATES",
    "UndefinedCovarianceError",
]

__getattr__ = moved_names(__name__, {
    "factor": ("APPROXIMATION_NAMES", "CHOLESKY", "DIAGONAL", "DIAGONAL_ROOT", "EIGENVALUE_CUTOFF", "EXACT", "LOW_RANK",
               "PENDING", "PSEUDO_INVERSE", "THIN_ROOT", "TRANSFORMED", "UNDEFINED", "CholeskyFactor",
               "DiagonalRootFactor", "PseudoInverseFactor", "RootFactor", "ThinRootFactor", "numerical_rank",
               "pack_lower", "packed_size", "stored_size", "unpack_lower"),
    "layout": ("PER_WORD_DTYPES", "PerWord"),
    "passes": ("BlockSummary", "PassResult", "cost_balanced_blocks", "covariance_pass", "fit_block", "n_blocks_for",
               "threaded_runner"),
    "refit": ("alternating_sweeps", "optimum_vectors"),
    "wls": ("INVERSE_ERROR_LIMIT", "MAX_CONDITION", "WordFit", "WordFitter", "estimated_condition",
            "is_ill_conditioned", "residual_variance", "residual_variances"),
})
