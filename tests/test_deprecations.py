"""The names of glovev-ext 0.2 that 0.3 moved or renamed still work for one release, each with a DeprecationWarning
naming its successor; the names of 0.1, deprecated in 0.2, are gone and fail as any unknown name does."""

from __future__ import annotations

import importlib
import re
import warnings

import numpy as np
import pytest

import glovev_ext
from glovev_ext.cli import main

# The flat modules of 0.1, aliases of the subpackages in 0.2.
MODULES_OF_0_1 = ("glovev_ext.corpus", "glovev_ext.cooccurrence_matrix", "glovev_ext.vectorizer",
                  "glovev_ext.glove_objective", "glovev_ext.trainer", "glovev_ext.covariance_store",
                  "glovev_ext.estimator", "glovev_ext.statistic", "glovev_ext.inference", "glovev_ext.bias",
                  "glovev_ext.evaluation", "glovev_ext.results", "glovev_ext.model_directory",
                  "glovev_ext._covariance_kernel")

# What each subpackage exported in 0.2: its user-facing names, and internals now imported from their modules.
EXPORTED_IN_0_2 = {
    "glovev_ext.counting": """CooccurrenceMatrix CooccurrenceVectorizer LineCorpus PartialSums check_cooccurrence
        default_corpus_manifest_path default_corpus_path load_default_corpus""".split(),
    "glovev_ext.glove": """GloVeParameters SCHEDULES check_training_params glove_cost glove_residuals glove_weights
        train_glove weighted_squared_residuals""".split(),
    "glovev_ext.covariance": """APPROXIMATION_NAMES BlockSummary CHOLESKY CONDITIONING_CHOICES CholeskyFactor
        ConditionalFit CovarianceStore CovarianceStoreWriter DIAGONAL DIAGONAL_ROOT DiagonalRootFactor
        EIGENVALUE_CUTOFF EXACT Factor GaussianPrior GloVeVEstimator INVERSE_ERROR_LIMIT LOW_RANK MAX_CONDITION
        NoiseScale PENDING PER_WORD_DTYPES POINT_ESTIMATES PSEUDO_INVERSE PassResult PerWord PseudoInverseFactor
        RootFactor THIN_ROOT TRANSFORMED ThinRootFactor UNDEFINED UndefinedCovarianceError WordFit WordFitter
        alternating_sweeps cost_balanced_blocks covariance_pass estimated_condition fit_block is_ill_conditioned
        n_blocks_for numerical_rank optimum_vectors pack_lower packed_size residual_variance residual_variances
        stored_size threaded_runner unpack_lower""".split(),
    "glovev_ext.adapters": """GloVeFileError load_glove_folder load_glovev_release load_word2vec_with_covariances
        read_approx_info read_cooccurrence read_vectors_bin read_vectors_text read_vocab release_variances
        save_word2vec_with_covariances write_cooccurrence write_glovev_release write_vectors_bin write_vectors_text
        write_vocab""".split(),
}
# Names a subpackage gained after 0.3 (issue 46's document groups): new, so no 0.2 name they could replace.
ADDED_SINCE_0_3 = {"glovev_ext.counting": {"DocumentGroups", "default_corpus_groups", "groups_by_file", "read_groups",
                                           "group_concentration"}}
MOVED = [(package, name) for package, names in EXPORTED_IN_0_2.items() for name in names
         if name not in importlib.import_module(package).__all__]


def from_import(package: str, name: str):
    """What ``from package import name`` gives, the statement written in this file."""
    namespace: dict = {}
    exec(compile(f"from {package} import {name}", __file__, "exec"), namespace)
    return namespace[name]


@pytest.mark.parametrize("package", EXPORTED_IN_0_2)
def test_each_subpackage_exports_its_user_facing_names_without_a_warning(package):
    public = importlib.import_module(package).__all__
    of_0_2 = set(public) - ADDED_SINCE_0_3.get(package, set())
    assert of_0_2 <= set(EXPORTED_IN_0_2[package]) and len(of_0_2) < len(EXPORTED_IN_0_2[package])
    assert ADDED_SINCE_0_3.get(package, set()) <= set(public)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in public:
            from_import(package, name)


@pytest.mark.parametrize("package, name", MOVED, ids=[f"{package}.{name}" for package, name in MOVED])
def test_internals_a_subpackage_exported_import_from_it_with_a_warning(package, name):
    with pytest.warns(DeprecationWarning) as caught:
        old = from_import(package, name)
    message = str(caught[0].message)
    assert re.fullmatch(rf"{re.escape(package)}\.{name} is deprecated and will be removed in glovev-ext 0\.4; "
                        rf"use from {re.escape(package)}\.\w+ import {name}", message), message
    assert all(warning.filename == __file__ for warning in caught)
    module = message.split(" use from ")[1].split()[0]
    assert getattr(importlib.import_module(module), name) is old


@pytest.mark.parametrize("package", EXPORTED_IN_0_2)
def test_a_name_a_subpackage_never_had_is_still_an_error(package):
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        getattr(importlib.import_module(package), "no_such_name")
    with pytest.raises(ImportError):
        from_import(package, "no_such_name")


def test_names_of_0_2_moved_or_renamed_in_issue_24_warn_and_give_the_same_thing(stats_kv):
    """Top-level names that now live in their stage's subpackage, and the joint similarities under their new name."""
    import glovev_ext.stats
    import glovev_ext.covariance

    for name, home in (("similarity", glovev_ext.stats), ("ResultFamily", glovev_ext.stats),
                       ("CovarianceStore", glovev_ext.covariance), ("weat_statistic", glovev_ext.stats)):
        with pytest.warns(DeprecationWarning, match=f"glovev_ext.{name} is deprecated and will be removed in glovev-ext "
                                                    rf"0\.4; use from {home.__name__} import {name}"):
            assert getattr(glovev_ext, name) is getattr(home, name)
        assert name not in glovev_ext.__all__
    pairs = [("man", "woman"), ("man", "boy")]
    with pytest.warns(DeprecationWarning, match=r"similarities_test is deprecated and will be removed in glovev-ext "
                                                r"0\.4; use KeyedVectorsWithVariance\.similarity_family"):
        old = stats_kv.similarities_test(pairs)
    with pytest.warns(DeprecationWarning, match="similarity_family"):
        old_function = glovev_ext.stats.similarities(stats_kv, pairs)
    with pytest.warns(DeprecationWarning, match="similarity_family"):
        assert glovev_ext.similarities is glovev_ext.stats.similarity_family
    new = stats_kv.similarity_family(pairs)
    for family in (old, old_function):
        np.testing.assert_array_equal(family.summary_frame(), new.summary_frame())


@pytest.mark.parametrize("module", MODULES_OF_0_1)
def test_the_flat_modules_of_0_1_are_gone(module):
    with pytest.raises(ModuleNotFoundError, match=f"^No module named '{re.escape(module)}'$"):
        importlib.import_module(module)
    with pytest.raises(AttributeError, match=f"module 'glovev_ext' has no attribute '{module.split('.')[1]}'"):
        getattr(glovev_ext, module.split(".")[1])


def test_the_keywords_of_0_1_are_unknown_keywords(stats_kv, tmp_path):
    from glovev_ext import plots
    from glovev_ext.adapters import write_cooccurrence

    with pytest.raises(TypeError, match=r"^similarity\(\) got an unexpected keyword argument 'rng'$"):
        stats_kv.similarity_test("man", "woman", rng=3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'rng'"):
        stats_kv.sample_vectors(["man"], 5, rng=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'rng'"):
        write_cooccurrence(tmp_path / "cooccurrence.bin", np.eye(3), shuffle=True, rng=1)
    result = stats_kv.similarity_test("man", "woman")
    with pytest.raises(TypeError, match="unexpected keyword argument 'alpha'"):
        result.conf_int(alpha=0.1)
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        result.conf_int(0.1)  # the significance level of 0.1, never read as a confidence level
    family = stats_kv.similarity_family([("man", "woman"), ("man", "boy")])
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        family.summary_frame(0.2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'alpha'"):
        family.correct("fdr_tsbky", alpha=0.1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'alpha'"):
        plots.plot_results([result], alpha=0.1)
    assert not hasattr(plots, "plot_bias_by_frequency")
    assert not (tmp_path / "cooccurrence.bin").exists()


def test_the_save_functions_no_longer_take_the_object_first(small_model, tmp_path):
    from glovev_ext.adapters import save_word2vec_with_covariances
    kv = glovev_ext.KeyedVectorsWithVariance.from_estimator(small_model)
    with pytest.raises(TypeError, match=r"os\.PathLike object.*KeyedVectorsWithVariance"):
        glovev_ext.save_model(kv, tmp_path / "model")
    with pytest.raises(AttributeError, match="has no attribute 'save_word2vec_format'"):
        save_word2vec_with_covariances(kv, tmp_path / "vectors.txt")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("arguments", [["fit", "--dim", "5"], ["fit", "--threads", "1"], ["fit", "--seed", "3"],
                                       ["similarity", "model", "man", "woman", "--alpha", "0.1"]])
def test_the_command_line_flags_of_0_1_are_unrecognised(capsys, arguments):
    with pytest.raises(SystemExit) as exit_:
        main(arguments)
    assert exit_.value.code == 2
    assert f"glovev: error: unrecognized arguments: {arguments[-2]}" in capsys.readouterr().err
