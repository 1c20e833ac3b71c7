"""Stage 2, counts -> GloVe: the objective (weights, residual, cost) and the C tool's AdaGrad trainer."""

from .objective import glove_cost, glove_residuals, glove_weights, weighted_squared_residuals
from .trainer import SCHEDULES, GloVeParameters, check_training_params, train_glove

__all__ = ["SCHEDULES", "GloVeParameters", "check_training_params", "glove_cost", "glove_residuals", "glove_weights",
           "train_glove", "weighted_squared_residuals"]
