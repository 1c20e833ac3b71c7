"""The paper's statistics, built on the engine: cosines and neighbours, many pairs at once, WEAT and its
permutation test, the cosine bias, benchmark evaluation and SemEval-2012 Task 2."""
