"""Same call, same answer: every draw a result makes is seeded by ``DEFAULT_SEED`` unless told otherwise,
in Python and on the command line; a word draws from its own stream, seeded by the seed and the word."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

import glovev_ext
import glovev_ext.plots
import glovev_ext.split_half
from glovev_ext import cli
from glovev_ext.stats import DEFAULT_SEED

MODEL = Path(__file__).resolve().parents[1] / "data" / "golden" / "models" / "posterior"
ATTRIBUTES = ["good", "bad", "happy", "poor", "rich"]
# Samplers whose draws are meant to be pooled across calls take fresh random numbers, as numpy's do
# (a default seed would hand out the same draw on every call); training keeps scikit-learn's None.
FRESH = {"draw_values", "KeyedVectorsWithVariance.draw", "KeyedVectorsWithVariance.draws",
         "KeyedVectorsWithVariance.sample_vectors", "CovarianceStore.sample"}


@pytest.fixture(scope="module")
def kv() -> glovev_ext.KeyedVectorsWithVariance:
    """The golden tests' saved D = 8 posterior model (nothing is trained here)."""
    return glovev_ext.load_model(MODEL)[0]


def test_two_default_monte_carlo_similarity_tests_agree_and_none_draws_afresh(kv):
    first, again = (kv.similarity_test("boy", "girl", method="monte carlo", n_draws=300) for _ in range(2))
    np.testing.assert_array_equal(first.draws, again.draws)
    np.testing.assert_array_equal(first.conf_int(), again.conf_int())
    assert first.pvalue == again.pvalue
    seeded = kv.similarity_test("boy", "girl", method="monte carlo", n_draws=300, random_state=DEFAULT_SEED)
    np.testing.assert_array_equal(first.draws, seeded.draws)
    fresh = [kv.similarity_test("boy", "girl", method="monte carlo", n_draws=300, random_state=None) for _ in range(2)]
    assert not np.array_equal(fresh[0].draws, fresh[1].draws)


def test_two_default_neighbour_tests_agree(kv):
    first, again = (kv.nearest_neighbors_test("girl", topn=4, method="monte carlo", n_draws=200, missing="drop")
                    for _ in range(2))
    np.testing.assert_array_equal(first.rank_probabilities.to_numpy(), again.rank_probabilities.to_numpy())
    np.testing.assert_array_equal(first.similarities.conf_int(), again.similarities.conf_int())
    np.testing.assert_array_equal(first.adjacent.pvalues, again.adjacent.pvalues)


def test_the_bands_draw_from_one_stream_and_two_default_calls_agree(kv):
    """Both bands hold the same words, so a seed handed to each band would repeat the same draws."""
    counts = np.arange(len(kv), 0, -1)

    def bands():
        return glovev_ext.stats.cosine_bias_by_frequency(kv, ["man", "man"], ["woman", "woman"], ATTRIBUTES, n_bands=2,
                                                   counts=counts, method="monte carlo", n_draws=200)

    first, second = bands()
    assert first.estimate == second.estimate
    assert not np.array_equal(first.draws, second.draws)
    again = bands()
    for result, repeated in zip((first, second), again):
        np.testing.assert_array_equal(result.draws, repeated.draws)


def test_many_pairs_tested_one_by_one_read_as_each_pair_alone(kv):
    """Each pair draws from its words' own streams (issue 47): a pair listed twice reads the same twice, as alone."""
    tests = kv.similarity_tests([("boy", "girl"), ("boy", "girl")], method="monte carlo", n_draws=200)
    assert tests.estimates[0] == tests.estimates[1]
    assert tests.draws_std_errors[0] == tests.draws_std_errors[1] == kv.similarity_test(
        "boy", "girl", method="monte carlo", n_draws=200).draws_std_error
    again = kv.similarity_tests([("boy", "girl"), ("boy", "girl")], method="monte carlo", n_draws=200)
    np.testing.assert_array_equal(tests.draws_std_errors, again.draws_std_errors)


def random_state_defaults() -> dict[str, object]:
    """``{name: default of random_state}`` of every public function, class and method that takes one."""
    found = {}
    namespaces = [glovev_ext, glovev_ext.counting, glovev_ext.glove, glovev_ext.covariance, glovev_ext.stats,
                  glovev_ext.plots, glovev_ext.split_half]
    for namespace in namespaces:
        for name in getattr(namespace, "__all__", None) or [
                n for n, obj in vars(namespace).items() if getattr(obj, "__module__", None) == namespace.__name__]:
            obj = getattr(namespace, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj) and not issubclass(obj, Exception)) \
                    or not obj.__module__.startswith("glovev_ext"):
                continue
            members = [(name, obj)]
            if inspect.isclass(obj):
                members += [(f"{name}.{member}", function) for member, function in vars(obj).items()
                            if inspect.isfunction(function) and not member.startswith("_")]
            for label, function in members:
                parameter = inspect.signature(function).parameters.get("random_state")
                if parameter is not None:
                    found[label] = parameter.default
    return found


def test_every_function_that_draws_for_a_result_defaults_to_the_documented_seed():
    defaults = random_state_defaults()
    assert len(defaults) >= 25 and FRESH <= set(defaults)
    seeded = {name: default for name, default in defaults.items() if name not in FRESH}
    assert all(default is DEFAULT_SEED for default in seeded.values()), seeded
    assert all(defaults[name] is None for name in FRESH), {name: defaults[name] for name in FRESH}


@pytest.mark.parametrize("command", [["fit", "corpus.txt"], ["similarity", "model", "a", "b"],
                                     ["neighbors", "model", "a"], ["evaluate", "model"], ["semeval", "model"],
                                     ["plot", "model", "variance", "--output", "x.png"]])
def test_the_command_line_seeds_with_the_same_default(command):
    assert cli._build_parser().parse_args(command).random_state == DEFAULT_SEED
