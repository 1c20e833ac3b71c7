"""The old names (those of glovev-ext 0.1, and the internals the subpackages exported in 0.2) still work for one
release, each with a DeprecationWarning naming its successor."""

from __future__ import annotations

import importlib
import re
import sys
import warnings

import numpy as np
import pytest

import glovev_ext
from glovev_ext.cli import main

OLD_MODULES = {"glovev_ext.corpus": "LineCorpus", "glovev_ext.cooccurrence_matrix": "CooccurrenceMatrix",
               "glovev_ext.vectorizer": "CooccurrenceVectorizer", "glovev_ext.glove_objective": "glove_cost",
               "glovev_ext.trainer": "train_glove", "glovev_ext.covariance_store": "CovarianceStore",
               "glovev_ext.estimator": "GloVeVEstimator", "glovev_ext.statistic": "Statistic",
               "glovev_ext.inference": "estimate", "glovev_ext.bias": "weat_statistic",
               "glovev_ext.evaluation": "read_word_pairs", "glovev_ext.results": "InferenceResult",
               "glovev_ext.model_directory": "load_model"}

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
MOVED = [(package, name) for package, names in EXPORTED_IN_0_2.items() for name in names
         if name not in importlib.import_module(package).__all__]


def from_import(package: str, name: str):
    """What ``from package import name`` gives, the statement written in this file."""
    namespace: dict = {}
    exec(compile(f"from {package} import {name}", __file__, "exec"), namespace)
    return namespace[name]


def forget(monkeypatch, old: str) -> None:
    """As if ``old`` had never been imported (without touching the attribute, whose lookup would import it)."""
    monkeypatch.delitem(sys.modules, old, raising=False)
    if old.rpartition(".")[2] in vars(glovev_ext):
        monkeypatch.delattr(glovev_ext, old.rpartition(".")[2])


@pytest.mark.parametrize("old, name", OLD_MODULES.items())
def test_old_modules_import_with_a_warning(monkeypatch, old, name):
    forget(monkeypatch, old)
    with pytest.warns(DeprecationWarning, match=f"the module {old} is deprecated .* use glovev_ext"):
        module = importlib.import_module(old)
    assert getattr(module, name) is getattr(glovev_ext, name, getattr(module, name))


def test_old_modules_as_attributes(monkeypatch):
    forget(monkeypatch, "glovev_ext.bias")
    with pytest.warns(DeprecationWarning, match="glovev_ext.bias is deprecated"):
        assert glovev_ext.bias.weat_statistic is glovev_ext.stats.weat_statistic
    assert callable(glovev_ext.stats.similarity)  # the function, as the package attribute always was


@pytest.mark.parametrize("package", EXPORTED_IN_0_2)
def test_each_subpackage_exports_its_user_facing_names_without_a_warning(package):
    public = importlib.import_module(package).__all__
    assert set(public) <= set(EXPORTED_IN_0_2[package]) and len(public) < len(EXPORTED_IN_0_2[package])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in public:
            from_import(package, name)


@pytest.mark.parametrize("package, name", MOVED, ids=[f"{package}.{name}" for package, name in MOVED])
def test_internals_a_subpackage_exported_import_from_it_with_a_warning(package, name):
    with pytest.warns(DeprecationWarning) as caught:
        old = from_import(package, name)
    message = str(caught[0].message)
    assert re.fullmatch(rf"{re.escape(package)}\.{name} is deprecated and will be removed in glovev-ext 0\.3; "
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


def test_rng_is_random_state(stats_kv):
    with pytest.warns(DeprecationWarning, match=r"similarity\(rng=...\) is deprecated .* use random_state=") as caught:
        old = stats_kv.similarity_test("man", "woman", method="monte carlo", n_draws=50, rng=3)
    assert caught[0].filename == __file__
    new = stats_kv.similarity_test("man", "woman", method="monte carlo", n_draws=50, random_state=3)
    np.testing.assert_array_equal(old.draws, new.draws)
    with pytest.warns(DeprecationWarning, match="sample_vectors"):
        np.testing.assert_array_equal(stats_kv.sample_vectors(["man"], 5, rng=1),
                                      stats_kv.sample_vectors(["man"], 5, random_state=1))
    with pytest.raises(TypeError, match="both rng= and random_state="):
        stats_kv.similarity_test("man", "woman", rng=1, random_state=1)


def test_the_significance_level_alpha_is_confidence_level(stats_kv):
    result = stats_kv.similarity_test("man", "woman")
    with pytest.warns(DeprecationWarning, match="confidence_level="):
        assert result.conf_int(0.1) == result.conf_int(confidence_level=0.9)
    with pytest.warns(DeprecationWarning):
        assert result.conf_int(alpha=0.1) == result.conf_int(confidence_level=0.9)
    family = stats_kv.similarity_family([("man", "woman"), ("man", "boy")])
    with pytest.warns(DeprecationWarning):
        np.testing.assert_array_equal(family.summary_frame(0.2), family.summary_frame(confidence_level=0.8))
    with pytest.warns(DeprecationWarning, match="significance_level="):
        np.testing.assert_array_equal(family.correct("fdr_tsbky", alpha=0.1).pvalues_adjusted,
                                      family.correct("fdr_tsbky", significance_level=0.1).pvalues_adjusted)


def test_save_functions_took_the_object_first(small_model, tmp_path):
    from glovev_ext.adapters import load_word2vec_with_covariances, save_word2vec_with_covariances
    kv = glovev_ext.KeyedVectorsWithVariance.from_estimator(small_model)
    with pytest.warns(DeprecationWarning, match=r"save_model\(directory, kv\)"):
        glovev_ext.save_model(kv, tmp_path / "model")
    np.testing.assert_array_equal(glovev_ext.load_model(tmp_path / "model")[0].vectors, kv.vectors)
    with pytest.warns(DeprecationWarning, match=r"save_word2vec_with_covariances\(path, kv\)"):
        save_word2vec_with_covariances(kv, tmp_path / "vectors.txt")
    assert load_word2vec_with_covariances(tmp_path / "vectors.txt").index_to_key == kv.index_to_key


def test_old_command_line_options_warn_and_work(capsys, tmp_path):
    model = tmp_path / "model"
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(glovev_ext.load_default_corpus(max_documents=600)) + "\n", encoding="utf-8")
    assert main(["fit", str(corpus), "--output", str(model), "--dim", "5", "--epochs", "1", "--threads", "1",
                 "--seed", "3", "--quiet", "--min-count", "3"]) == 0
    err = capsys.readouterr().err
    for old, new in (("--dim", "--n-components"), ("--threads", "--n-jobs"), ("--seed", "--random-state")):
        assert f"glovev: warning: {old} is deprecated and goes in glovev-ext 0.3; use {new}" in err
    metadata = glovev_ext.load_model(model)[1]
    assert metadata["glove"]["n_components"] == 5 and metadata["glove"]["random_state"] == 3
    assert main(["similarity", str(model), "man", "woman", "--alpha", "0.1", "--format", "csv"]) == 0
    captured = capsys.readouterr()
    assert "use --confidence-level" in captured.err
    low, high = glovev_ext.load_model(model)[0].similarity_test("man", "woman", random_state=0).conf_int(
        confidence_level=0.9)
    assert f"{low:.6g}"[:6] in captured.out and f"{high:.6g}"[:6] in captured.out


def test_names_of_0_2_moved_or_renamed_in_issue_24_warn_and_give_the_same_thing(stats_kv):
    """Top-level names that now live in their stage's subpackage, and the joint similarities under their new name."""
    import glovev_ext.stats
    import glovev_ext.covariance

    for name, home in (("similarity", glovev_ext.stats), ("ResultFamily", glovev_ext.stats),
                       ("CovarianceStore", glovev_ext.covariance), ("weat_statistic", glovev_ext.stats)):
        with pytest.warns(DeprecationWarning, match=f"glovev_ext.{name} is deprecated.*from {home.__name__} import {name}"):
            assert getattr(glovev_ext, name) is getattr(home, name)
        assert name not in glovev_ext.__all__
    pairs = [("man", "woman"), ("man", "boy")]
    with pytest.warns(DeprecationWarning, match="similarity_family"):
        old = stats_kv.similarities_test(pairs)
    with pytest.warns(DeprecationWarning, match="similarity_family"):
        old_function = glovev_ext.stats.similarities(stats_kv, pairs)
    with pytest.warns(DeprecationWarning, match="similarity_family"):
        assert glovev_ext.similarities is glovev_ext.stats.similarity_family
    new = stats_kv.similarity_family(pairs)
    for family in (old, old_function):
        np.testing.assert_array_equal(family.summary_frame(), new.summary_frame())
