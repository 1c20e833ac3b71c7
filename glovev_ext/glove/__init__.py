"""Stage 2, counts -> GloVe: the objective (weights, residual, cost) and the C tool's AdaGrad trainer.

The package exports the trainer, its parameters and choices, and the objective a user evaluates;
the pieces the covariance stage builds on (the residual, the weighted squared residuals, the check
of training parameters) are imported from :mod:`.objective` and :mod:`.trainer`.
"""

from .._deprecation import moved_names
from .objective import glove_cost, glove_weights
from .trainer import SCHEDULES, GloVeParameters, train_glove

__all__ = ["SCHEDULES", "GloVeParameters", "glove_cost", "glove_weights", "train_glove"]

__getattr__ = moved_names(__name__, {"objective": ("glove_residuals", "weighted_squared_residuals"),
                                     "trainer": ("check_training_params",)})
