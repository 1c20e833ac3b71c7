"""The inference engine: resolving words, statistics and their gradients, the delta method and Monte Carlo,
intervals and the rule that applies them, the result core and its one rendering path."""
