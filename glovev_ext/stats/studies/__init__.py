"""Studies built on the statistics: one statistic across models, a word across embeddings, power, planning
and interval coverage by simulation."""
