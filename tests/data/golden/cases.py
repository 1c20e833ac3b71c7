"""The golden cases: every public result of the statistics, computed from the saved models with fixed seeds.

Issue 24 (one inference core) must leave every number of today's results unchanged. Each case here
computes results from the models in ``models/`` (made once by fit.py: nothing is trained here) and
returns them as a record: JSON-ready numbers (estimates, standard errors, statistics, p-values,
intervals, degrees of freedom, covariances, adjusted p-values, equality tests, summary frames...)
and the labels that say which row is which. record.py writes the records to results.json;
tests/test_golden_results.py computes them again and compares, to 1e-12.

Everything random is seeded (``random_state``), and BLAS runs on one thread (:func:`one_blas_thread`),
as in the test suite. Not covered: :func:`glovev_ext.stats.interval_coverage` (it refits co-occurrence
rows, so it needs the counts and the estimator, which a saved model does not keep).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
from gensim.test.utils import datapath
from statsmodels.stats.contrast import ContrastResults
from threadpoolctl import threadpool_limits

import glovev_ext
from glovev_ext import KeyedVectorsWithVariance, Statistic
from glovev_ext.stats import (InferenceResult, ModelComparison, NeighborsResult, RelationalSimilarity, ResultFamily,
                              SimilarityTests, StudyPlan)
from glovev_ext.stats import (coordinate_statistic, cosine_bias_statistic, cosine_statistic, minimum_detectable_effect,
                              power, stack, weat_statistic)
from glovev_ext.stats.statistics.permutation import PermutationResult
from glovev_ext.stats.statistics.semeval import SAMPLE_PATH

GOLDEN = Path(__file__).resolve().parent
MODELS = GOLDEN / "models"
RESULTS = GOLDEN / "results.json"
MODEL_NAMES = ("posterior", "trained", "first", "second", "third", "relational")
PARTS = ("first", "second", "third")

MALE = ["man", "boy", "father", "brother", "uncle"]
FEMALE = ["woman", "girl", "mother", "sister", "aunt"]
CAREER = ["work", "money", "school", "book"]
FAMILY = ["home", "house", "child", "love"]
HE = ["he", "man", "boy", "father", "brother"]
SHE = ["she", "woman", "girl", "mother", "sister"]
ADJECTIVES = ["good", "bad", "happy", "poor", "rich", "young", "old"]
PAIRS = [("man", "woman"), ("man", "boy"), ("woman", "girl"), ("boy", "girl")]
SCREEN = [("man", "woman"), ("he", "she"), ("father", "mother"), ("brother", "sister"), ("boy", "girl"),
          ("house", "home"), ("good", "bad"), ("rich", "poor"), ("young", "old"), ("day", "night"),
          ("money", "work"), ("love", "heart")]
SHARED = ["man", "woman", "girl", "mother", "house"]

Models = dict[str, KeyedVectorsWithVariance]
Record = dict[str, object]
CASES: dict[str, Callable[[Models], Record]] = {}


def case(function: Callable[[Models], Record]) -> Callable[[Models], Record]:
    """Register ``function`` as the case of its name."""
    CASES[function.__name__] = function
    return function


def load_models() -> Models:
    """The saved models, by name (memory-mapped, as ``glovev_ext.load_model`` loads them)."""
    return {name: glovev_ext.load_model(MODELS / name)[0] for name in MODEL_NAMES}


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on one thread, as the test suite runs it (tests/conftest.py)."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def plain(value) -> object:
    """``value`` as JSON holds it: numbers as floats, arrays and tuples as lists, strings and None as they are."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(item) for item in value]
    return float(value)


# --- records of the result types --------------------------------------------------------------------


def frame(table: pd.DataFrame) -> Record:
    """A summary frame: its row labels and each column (numbers as floats, other columns as strings)."""
    columns = {}
    for column in table.columns:
        values = table[column]
        numeric = pd.api.types.is_numeric_dtype(values)
        columns[str(column)] = values.to_numpy(dtype=np.float64) if numeric else [str(v) for v in values]
    return {"index": [str(label) for label in table.index], "columns": columns}


def inference(result: InferenceResult) -> Record:
    """One statistic: the numbers it holds and derives, its intervals at 95 % and 90 %, its summary frame."""
    record = {"name": result.name, "method": result.method, "draws_interval": result.draws_interval,
              "estimate": result.estimate, "std_error": result.std_error, "null_value": result.null_value,
              "statistic": result.statistic, "pvalue": result.pvalue, "df": result.df, "bounds": result.bounds,
              "words": result.words, "dropped": result.dropped}
    record.update(conf_int=result.conf_int(), conf_int_90=result.conf_int(confidence_level=0.9),
                  tested_std_error=result.tested_std_error, delta_std_error=result.delta_std_error,
                  attenuation=result.attenuation)
    if result.method == "Monte Carlo" and result.draws is not None:
        record["percentile_interval"] = result.percentile_interval()
    if result.variance_contributions is not None:
        record["variance_contributions"] = result.variance_contributions
        record["variance_by_word"] = frame(result.variance_by_word().to_frame())
    record["summary_frame"] = frame(result.summary_frame())
    record["method_reason"] = result.method_reason
    record["statistic_kind"] = result.statistic_kind
    record["draws_std_error"] = result.draws_std_error
    return record


def permutation(result: PermutationResult) -> Record:
    """A permutation test: its statistic, p-value, null distribution and summary frame."""
    return {"name": result.name, "method": result.method, "statistic": result.statistic, "pvalue": result.pvalue,
            "null_distribution": result.null_distribution, "words": result.words, "dropped": result.dropped,
            "summary_frame": frame(result.summary_frame())}


def family(result: ResultFamily) -> Record:
    """Several statistics: the rows' numbers, their joint covariance, Holm-adjusted p-values, intervals at
    95 % and 90 %, the summary frame."""
    record = {"name": result.name, "names": result.names, "method": result.method,
              "draws_interval": [str(kind) for kind in result.draws_interval], "estimates": result.estimates,
              "covariance": result.covariance, "std_errors": result.std_errors, "null_values": result.null_values,
              "statistics": result.statistics, "pvalues": result.pvalues,
              "pvalues_holm": result.correct("holm").pvalues_adjusted, "df": result.df, "bounds": result.bounds,
              "conf_int": result.conf_int().to_numpy(),
              "conf_int_90": result.conf_int(confidence_level=0.9).to_numpy(), "tested_std_errors": result.tested_std_errors, "attenuation": result.attenuation,
              "words": result.words, "dropped": result.dropped}
    if result.delta_covariance is not None:
        record["delta_covariance"] = result.delta_covariance
    if result.variance_contributions is not None:
        record["variance_contributions"] = result.variance_contributions
    record["summary_frame"] = frame(result.summary_frame())
    record["statistic_kinds"] = [str(kind) for kind in result.statistic_kinds]
    record["draws_std_errors"] = result.draws_std_errors
    return record


def contrasts(result: ResultFamily) -> Record:
    """A family with what its rows make: a difference, a contrast, a linear family, the Holm-corrected table."""
    m = len(result)
    weights = np.linspace(1.0, -1.0, m)
    return {"family": family(result), "difference": inference(result.difference(0, m - 1)),
            "contrast": inference(result.contrast(weights, null_value=0.05, alternative="larger")),
            "linear": family(result.linear(np.vstack([np.ones(m) / m, weights]), ["mean", "slope"], "linear")),
            "holm_frame": frame(result.correct("holm").summary_frame(confidence_level=0.9))}


def tests_table(result: SimilarityTests) -> Record:
    """Many pairs tested one by one."""
    return {"names": result.names, "methods": result.methods, "estimates": result.estimates,
            "std_errors": result.std_errors, "df": result.df, "statistics": result.statistics,
            "pvalues": result.pvalues, "conf_int": result.conf_int(),
            "conf_int_90": result.conf_int(confidence_level=0.9),
            "variance_contributions": result.variance_contributions, "holm": result.correct("holm").pvalues_adjusted,
            "fdr_bh": result.correct("fdr_bh").pvalues_adjusted, "dropped": result.dropped,
            "summary_frame": frame(result.summary_frame()), "draws_std_errors": result.draws_std_errors}


def neighbors(result: NeighborsResult) -> Record:
    """A neighbour table: the similarities, the adjacent gaps, the rank probabilities."""
    return {"neighbors": result.neighbors, "similarities": family(result.similarities),
            "adjacent": family(result.adjacent), "rank_probabilities": frame(result.rank_probabilities),
            "top_3": frame(result.top_k_probability(3).to_frame()), "summary_frame": frame(result.summary_frame())}


def contrast_test(test: ContrastResults) -> Record:
    """An equality test: its distribution, statistic, degrees of freedom and p-value."""
    return {"distribution": test.distribution, "statistic": np.ravel(test.statistic),
            "df_num": getattr(test, "df_num", np.nan), "df_denom": test.df_denom, "pvalue": np.ravel(test.pvalue),
            "p_from_null_draws": hasattr(test, "null_distribution")}


def comparison(result: ModelComparison) -> Record:
    """Models compared: the family, the shared prior's difference variances, equality, pairwise, trend."""
    record = {"labels": result.labels, "shared_prior": str(result.shared_prior), "family": family(result.family),
              "std_errors": result.std_errors, "equality": contrast_test(result.equality()),
              "pairwise_holm": family(result.pairwise()),
              "pairwise_raw": family(result.pairwise(correction=None, alternative="larger")),
              "summary_frame": frame(result.summary_frame())}
    if result.difference_variances is not None:
        record["difference_variances"] = result.difference_variances
    if result.covariate is not None:
        record["trend"] = inference(result.trend())
    record["trend_reversed"] = inference(result.trend(np.arange(len(result.labels), 0, -1.0), alternative="smaller"))
    return record


def relational(result: RelationalSimilarity) -> Record:
    """SemEval scores: the model's and the Random baseline's families, the comparisons with random."""
    return {"labels": result.labels, "n_pairs": result.n_pairs, "n_questions": result.n_questions,
            "model": family(result.model), "random": family(result.random),
            "versus_random": family(result.versus_random()),
            "versus_random_spearman": family(result.versus_random("spearman", alternative="two-sided")),
            "summary_frame": frame(result.summary_frame())}


def plan(result: StudyPlan) -> Record:
    """A study plan's two tables."""
    return {"statistics": frame(result.statistics), "projection": frame(result.summary_frame())}


# --- the cases ---------------------------------------------------------------------------------------


@case
def similarity_delta(models: Models) -> Record:
    kv = models["posterior"]
    return {"default": inference(kv.similarity_test("man", "woman", method="delta")),
            "larger": inference(kv.similarity_test("man", "woman", method="delta", null_value=0.5,
                                                   alternative="larger")),
            "smaller_linear": inference(kv.similarity_test("he", "she", method="delta", null_value=0.95,
                                                           alternative="smaller", scale="linear"))}


@case
def similarity_paper_recipe(models: Models) -> Record:
    """The paper's recipe: a trained model, the delta method, normal reference, symmetric intervals."""
    return {"man_woman": inference(models["trained"].similarity_test("man", "woman", method="delta", use_t=False,
                                                                     scale="linear"))}


@case
def similarity_monte_carlo(models: Models) -> Record:
    kv = models["posterior"]
    return {"t": inference(kv.similarity_test("boy", "girl", method="monte carlo", n_draws=500, random_state=0)),
            "normal_linear": inference(kv.similarity_test("boy", "girl", method="monte carlo", n_draws=500,
                                                          random_state=1, use_t=False, scale="linear"))}


@case
def similarity_auto(models: Models) -> Record:
    """``method="auto"``: Monte Carlo extended by the shift (man-woman), joined with the draws (boy-girl), and
    the delta method kept (anna-arms)."""
    kv = models["posterior"]
    return {f"{a}_{b}": inference(kv.similarity_test(a, b, method="auto", n_draws=1000, random_state=0))
            for a, b in (("man", "woman"), ("boy", "girl"), ("anna", "arms"))}


@case
def similarities_delta(models: Models) -> Record:
    return contrasts(models["posterior"].similarity_family(PAIRS, method="delta"))


@case
def similarities_monte_carlo(models: Models) -> Record:
    return contrasts(models["posterior"].similarity_family(PAIRS, method="monte carlo", n_draws=500, random_state=0))


@case
def similarities_auto_dropped(models: Models) -> Record:
    """A trained model: pairs with a word out of the vocabulary or without a covariance dropped and named."""
    pairs = [*PAIRS, ("man", "chapter"), ("zzzz", "woman")]
    return contrasts(models["trained"].similarity_family(pairs, method="auto", missing="drop", n_draws=500,
                                                         random_state=0))


@case
def similarity_tests_delta(models: Models) -> Record:
    return tests_table(models["posterior"].similarity_tests(SCREEN, method="delta"))


@case
def similarity_tests_paper_dropped(models: Models) -> Record:
    return tests_table(models["trained"].similarity_tests([*SCREEN, ("chapter", "man")], method="delta", use_t=False,
                                                          scale="linear", missing="drop", null_value=0.1))


@case
def similarity_tests_auto(models: Models) -> Record:
    return tests_table(models["posterior"].similarity_tests(SCREEN[:5], method="auto", n_draws=500, random_state=0,
                                                            alternative="larger"))


@case
def similarity_difference(models: Models) -> Record:
    kv = models["posterior"]
    return {"delta": inference(kv.similarity_difference_test(("man", "woman"), ("boy", "girl"), method="delta")),
            "auto": inference(kv.similarity_difference_test(("man", "woman"), ("man", "boy"), method="auto",
                                                            n_draws=500, random_state=0, alternative="larger"))}


@case
def nearest_neighbors_vocabulary(models: Models) -> Record:
    return neighbors(models["posterior"].nearest_neighbors_test("girl", topn=5, method="delta", missing="drop",
                                                                n_draws=500, random_state=0))


@case
def nearest_neighbors_candidates(models: Models) -> Record:
    candidates = ["woman", "boy", "mother", "sister", "chapter", "zzzz", "house"]
    return neighbors(models["trained"].nearest_neighbors_test("girl", candidates, method="auto", missing="drop",
                                                              n_draws=300, random_state=0))


@case
def weat_delta(models: Models) -> Record:
    return contrasts(models["posterior"].weat_test(MALE, FEMALE, CAREER, FAMILY, method="delta"))


@case
def weat_monte_carlo(models: Models) -> Record:
    return contrasts(models["posterior"].weat_test(MALE, FEMALE, CAREER, FAMILY, method="monte carlo", n_draws=500,
                                                   random_state=0))


@case
def weat_paper_dropped(models: Models) -> Record:
    return contrasts(models["trained"].weat_test([*MALE, "chapter"], FEMALE, [*CAREER, "zzzz"], FAMILY, ddof=0,
                                                 method="delta", use_t=False, scale="linear", missing="drop"))


@case
def weat_permutation(models: Models) -> Record:
    kv = models["posterior"]
    return {"exact": permutation(kv.weat_permutation_test(MALE, FEMALE, CAREER, FAMILY)),
            "exact_two_sided": permutation(kv.weat_permutation_test(MALE, FEMALE, CAREER, FAMILY,
                                                                    alternative="two-sided")),
            "sampled": permutation(kv.weat_permutation_test(MALE, FEMALE, CAREER, FAMILY, n_permutations=200,
                                                          alternative="smaller", random_state=0))}


@case
def cosine_bias(models: Models) -> Record:
    kv = models["posterior"]
    return {"delta": inference(kv.cosine_bias_test(HE, SHE, ADJECTIVES, method="delta")),
            "auto": inference(kv.cosine_bias_test(HE, SHE, ADJECTIVES, method="auto", n_draws=500, random_state=0,
                                                  null_value=0.01, alternative="larger")),
            "by_frequency": {result.name: inference(result) for result in glovev_ext.stats.cosine_bias_by_frequency(
                kv, HE, SHE, ADJECTIVES, n_bands=2, method="delta")}}


@case
def compare_biases(models: Models) -> Record:
    statistics = [weat_statistic(MALE, FEMALE, CAREER, FAMILY), cosine_bias_statistic(HE, SHE, ADJECTIVES)]
    kv = models["posterior"]
    return {"list": contrasts(glovev_ext.stats.compare_biases(kv, statistics, method="delta")),
            "named": contrasts(glovev_ext.stats.compare_biases(kv, {"WEAT": statistics[0], "Garg": statistics[1]},
                                                         method="monte carlo", n_draws=300, random_state=0))}


@case
def evaluate_word_pairs(models: Models) -> Record:
    return inference(models["posterior"].evaluate_word_pairs_with_uncertainty(
        datapath("wordsim353.tsv"), n_draws=200, random_state=0, missing="drop"))


def family_questions() -> list[tuple]:
    """The ``: family`` section of gensim's questions-words.txt (506 questions), lower-cased."""
    lines = Path(datapath("questions-words.txt")).read_text(encoding="utf-8").splitlines()
    start = lines.index(": family") + 1
    stop = next(k for k in range(start, len(lines)) if lines[k].startswith(":"))
    return [tuple(line.lower().split()) for line in lines[start:stop]]


@case
def evaluate_analogies(models: Models) -> Record:
    return inference(models["posterior"].evaluate_word_analogies_with_uncertainty(
        family_questions(), restrict_vocab=400, n_draws=50, random_state=0, missing="drop"))


@case
def evaluate_relational_similarity(models: Models) -> Record:
    relations = glovev_ext.read_semeval2012(SAMPLE_PATH, ["1a"])
    return relational(models["relational"].evaluate_relational_similarity_with_uncertainty(
        relations, n_draws=300, random_state=0, missing="drop"))


def norm_ratio(vectors: np.ndarray) -> np.ndarray:
    """``|w_0| / |w_1|`` of the first two vectors, vectorised over leading axes."""
    return (np.linalg.norm(vectors[..., 0, :], axis=-1) / np.linalg.norm(vectors[..., 1, :], axis=-1))[..., None]


@case
def statistic_test(models: Models) -> Record:
    """A custom statistic without a gradient (central differences), a stack of two, a word's coordinates."""
    kv = models["posterior"]
    ratio = Statistic("norm ratio", ("man", "woman"), ("|man| / |woman|",), norm_ratio)
    both = stack([ratio, cosine_statistic([("man", "woman")])], name="ratio and cosine")
    return {"ratio_delta": inference(kv.statistic_test(ratio, method="delta", null_value=1.0)),
            "ratio_monte_carlo": inference(kv.statistic_test(ratio, method="monte carlo", n_draws=500,
                                                             random_state=0)),
            "stacked": contrasts(kv.statistic_test(both, method="auto", n_draws=500, random_state=0)),
            "coordinates": family(kv.statistic_test(coordinate_statistic("girl", kv.vector_size), method="delta")),
            "estimate": family(glovev_ext.estimate(kv, both, method="delta", null_values=[1.0, 0.5],
                                                   alternative="smaller")),
            "wald_test": inference(glovev_ext.stats.wald_test(kv, ratio, method="delta", use_t=False))}


@case
def self_similarity(models: Models) -> Record:
    first, second = models["first"], models["second"]
    return {"delta": family(first.self_similarity_test(second, SHARED, labels=("first", "second"), method="delta")),
            "auto": family(first.self_similarity_test(second, [*SHARED, "zzzz"], method="auto", missing="drop",
                                                      n_draws=300, random_state=0, null_value=0.5))}


def without_prior(kv: KeyedVectorsWithVariance) -> KeyedVectorsWithVariance:
    """``kv`` as if its covariances were under no common prior (a shallow copy)."""
    independent = copy.copy(kv)
    independent.prior = None
    return independent


@case
def vector_change(models: Models) -> Record:
    first, second = models["first"], models["second"]
    return {"shared_prior": frame(first.vector_change_test(second, SHARED)),
            "shared_prior_chi2": frame(first.vector_change_test(second, SHARED, use_t=False)),
            "independent": frame(without_prior(first).vector_change_test(without_prior(second), SHARED,
                                                                         labels=("first", "second")))}


def part_results(models: Models, test: Callable[[KeyedVectorsWithVariance], InferenceResult],
                 parts: tuple = PARTS) -> dict[str, InferenceResult]:
    """``test`` of each sub-corpus model of ``parts``, by name."""
    return {name: test(models[name]) for name in parts}


def unlinked(results: dict[str, InferenceResult]) -> dict[str, InferenceResult]:
    """The results without their link to the prior: compared as independent fits."""
    return {name: result.replace(prior_link=None) for name, result in results.items()}


@case
def compare_models_shared_prior(models: Models) -> Record:
    """The three sub-corpora, posteriors under the pooled prior: the comparison takes its shared part out."""
    results = part_results(models, lambda kv: kv.similarity_test("man", "woman", method="delta"))
    pair = part_results(models, lambda kv: kv.weat_test(MALE, FEMALE, CAREER, FAMILY, method="delta")[0],
                        PARTS[:2])
    return {"three": comparison(glovev_ext.compare_models(results, covariate=[1850, 1900, 1950], n_draws=500,
                                                          random_state=0)),
            "two_weat": comparison(glovev_ext.compare_models(pair, n_draws=500, random_state=1))}


@case
def compare_models_independent(models: Models) -> Record:
    """The same results with their prior links dropped: Welch's test (t references) and Cochran's Q (normal)."""
    t_results = part_results(models, lambda kv: kv.similarity_test("man", "woman", method="delta"))
    normal = part_results(models, lambda kv: kv.similarity_test("man", "woman", method="delta", use_t=False))
    return {"welch": comparison(glovev_ext.compare_models(unlinked(t_results), covariate=[1, 2, 3])),
            "cochran": comparison(glovev_ext.compare_models(list(unlinked(normal).values())))}


@case
def compare_models_monte_carlo(models: Models) -> Record:
    """Monte Carlo results: under the shared prior (Wald rows), and unlinked (the models' draws side by side)."""
    results = part_results(models, lambda kv: kv.similarity_test("boy", "girl", method="monte carlo", n_draws=400,
                                                                 random_state=0))
    return {"shared_prior": comparison(glovev_ext.compare_models(results, n_draws=300, random_state=0)),
            "independent": comparison(glovev_ext.compare_models(unlinked(results), covariate=[0.0, 1.0, 3.0]))}


@case
def embedding_draws(models: Models) -> Record:
    """Draws of the vectors themselves, which every Monte Carlo result is made of."""
    drawn = models["trained"].draw(random_state=0, keys=["man", "chapter", "woman"], missing="keep")
    return {"sample_vectors": models["posterior"].sample_vectors(["man", "woman"], 3, random_state=0),
            "draw_keys": drawn.index_to_key, "draw": drawn.vectors}


@case
def power_and_planning(models: Models) -> Record:
    kv = models["posterior"]
    result = kv.similarity_test("man", "woman", method="delta")
    bounded = {"at": result.estimate, "df": result.df, "bounds": result.bounds, "scale": result.scale}
    statistics = {"man-woman": cosine_statistic([("man", "woman")]),
                  "bias": cosine_bias_statistic(HE, SHE, ADJECTIVES)}
    return {"power": [power(effect, result.std_error, null_value=0.5, **bounded) for effect in (0.05, 0.1, 0.2)],
            "power_normal_larger": power(0.1, result.std_error, alternative="larger"),
            "mde": minimum_detectable_effect(result.std_error, null_value=0.5, **bounded),
            "mde_smaller": minimum_detectable_effect(result.std_error, power_goal=0.9, alternative="smaller",
                                                     significance_level=0.01, **bounded),
            "mde_normal": minimum_detectable_effect(result.std_error),
            "plan": plan(glovev_ext.plan_study(kv, statistics, corpus_scales=(1, 2, 4))),
            "plan_larger": plan(glovev_ext.plan_study(models["trained"], statistics["man-woman"], corpus_scales=(1, 9),
                                                      alternative="larger", null_value=0.2, power_goal=0.5))}


def compute(name: str, models: Models) -> object:
    """Case ``name``'s record, as JSON holds it."""
    with one_blas_thread():
        return plain(CASES[name](models))
