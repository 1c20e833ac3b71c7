"""Recorded results: every case of tests/data/golden/cases.py gives the recorded numbers to 1e-12.

Estimates, standard errors, statistics, p-values, intervals, degrees of freedom, covariances,
adjusted p-values and equality tests of every public result type, computed from saved models
(tests/data/golden/models, made by fit.py; nothing is trained here) with fixed seeds. Row labels,
methods and dropped words must match exactly. Two recordings:

- ``results_before_issue_24.json``, written before the inference core of issue 24 (at bf9f577):
  today's results, put back into the layout of then (:func:`as_before`), give its numbers. What
  issue 24 changed on purpose is translated, not ignored: a column head that now says what it holds
  (``t (atanh)`` was ``t``; ``P>t`` was ``P>|t|``), ``std err`` that is now the standard error the
  interval is built from (the old column, the draws' spread, is ``draws sd``), the permutation
  test's own type. The one number that changed is the statistic of a Monte Carlo test that inverts
  its interval (``statistic_kind == "from p"``): it is now the statistic of its p-value, and only
  those values are taken from the old recording. Since issue 47 such a test reads its p-values off
  one confidence distribution (so that the one-sided ones sum to 1), so the p-values of a record
  holding one, and of the tables built on them, are taken from the old recording too; results.json
  holds today's. Issue 47 also made ``std_error`` the standard error the interval is built from
  (``bse``); the draws' spread it held is ``draws_std_error``, compared under the old name. The p-value
  of an equality test between fits under one prior, from null draws, now draws each fit's noise from t
  where the results have t references (issue 46), and is taken from the old recording too. Since issue 47
  (item 3) each word draws from its own stream, so every record of a Monte Carlo result (or of one tested
  against null draws) and every rank distribution moved: those are compared with results.json only, and the
  older recording keeps checking the delta method's, the permutation tests' and the planning's.
- ``results.json``, today's layout, for the changes after it. A change that is meant to move the
  numbers records them again (``python tests/data/golden/record.py``) and says so.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

GOLDEN = Path(__file__).resolve().parent / "data" / "golden"
_SPEC = importlib.util.spec_from_file_location("golden_cases", GOLDEN / "cases.py")
cases = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(cases)
RECORDED = json.loads(cases.RESULTS.read_text(encoding="utf-8"))["cases"]
BEFORE = json.loads((GOLDEN / "results_before_issue_24.json").read_text(encoding="utf-8"))["cases"]
TOLERANCE = {"rtol": 1e-12, "atol": 1e-12}
FROM_P = "from p"
DRAWN = ("Monte Carlo", "null draws")  # methods whose numbers rest on draws of the words (or under a null)


@pytest.fixture(scope="module")
def models() -> dict:
    return cases.load_models()


def holds_text(value) -> bool:
    """Whether a recorded value is text (a label, a list of labels) rather than numbers."""
    if isinstance(value, list):
        return any(holds_text(item) for item in value)
    return isinstance(value, str)


def assert_same(actual, expected, where: str) -> None:
    """``actual`` equals the recorded ``expected``: the same keys and text, numbers to 1e-12 (NaN equal to NaN)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and list(actual) == list(expected), f"{where}: keys {list(actual)}"
        for key, value in expected.items():
            assert_same(actual[key], value, f"{where}.{key}")
    elif expected is None or holds_text(expected):
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"
    else:
        np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64),
                                   equal_nan=True, err_msg=where, **TOLERANCE)


def frame_as_before(new: dict, old: dict, p_from_old: bool = False) -> dict:
    """A summary frame in the columns of before issue 24: the statistic under ``t``/``z`` whatever its kind, the
    p-value under ``P>|t|``/``P>|z|``, the draws' spread under ``std err``; a "from p" statistic is the old one, and
    with ``p_from_old`` every p-value column too (issue 47)."""
    if p_from_old:
        new = {"index": new["index"], "columns": {head: _old_p_column(head, values, old)
                                                  for head, values in new["columns"].items()}}
    columns, merged = {}, False
    for head, values in new["columns"].items():
        letter = head[:1]
        if head in ("t", "z") or head.startswith(("t (", "z (")):
            if not merged:
                heads = [h for h in new["columns"] if h == letter or h.startswith(letter + " (")]
                rows = [next(new["columns"][h][k] for h in heads if not np.isnan(new["columns"][h][k]))
                        for k in range(len(new["index"]))]
                from_p = f"{letter} ({FROM_P})"
                if from_p in new["columns"]:
                    rows = [old["columns"][letter][k] if not np.isnan(new["columns"][from_p][k]) else row
                            for k, row in enumerate(rows)]
                columns[letter], merged = rows, True
        elif head in ("P>|t|", "P>t", "P<t", "P>|z|", "P>z", "P<z"):
            columns[f"P>|{head[-2] if head.endswith('|') else head[-1]}|"] = values
        elif head == "draws sd":
            columns["std err"] = values
        else:
            columns[head] = values
    return {"index": new["index"], "columns": columns}


def _old_p_column(head: str, values, old: dict):
    """The old recording's p-values of a column headed ``P...`` (under its old head), else ``values``."""
    if not head.startswith("P"):
        return values
    before = f"P>|{head[-2] if head.endswith('|') else head[-1]}|" if head in ("P>|t|", "P>t", "P<t", "P>|z|", "P>z",
                                                                          "P<z") else head
    return old["columns"].get(before, values)


def permutation_as_before(new: dict) -> dict:
    """A permutation test as the Wald result type held it before issue 24 (its frame showed S under ``z`` and the
    permutation distribution's spread under ``std err``)."""
    distribution = np.asarray(new["null_distribution"])
    spread = float(distribution.std(ddof=1))
    frame = new["summary_frame"]
    statistic, pvalue, _ = frame["columns"].values()
    return {"name": new["name"], "method": new["method"], "draws_interval": "union", "estimate": new["statistic"],
            "std_error": spread, "null_value": float(distribution.mean()), "statistic": new["statistic"],
            "pvalue": new["pvalue"], "df": np.inf, "bounds": [-np.inf, np.inf], "words": new["words"],
            "dropped": new["dropped"], "draws": new["null_distribution"],
            "summary_frame": {"index": frame["index"], "columns": {
                "coef": statistic, "std err": [spread], "z": statistic, "P>|z|": pvalue, "Conf. Int. Low": [np.nan],
                "Conf. Int. Upp.": [np.nan]}}}


def as_before(new, old, p_from_old: bool = False):
    """Today's record in the layout recorded before issue 24 (see the module's docstring)."""
    if not isinstance(new, dict):
        return new
    p_from_old = p_from_old or statistics_from_p(new) > 0
    if "columns" in new and "index" in new:
        return frame_as_before(new, old, p_from_old)
    if "null_distribution" in new:
        return permutation_as_before(new)
    if new.get("method") in DRAWN or set(new.get("methods", ())) & set(DRAWN) or "rank_probabilities" in new:
        return old  # issue 47: each word draws from its own stream
    if any(isinstance(value, dict) and value.get("method") in DRAWN for value in new.values()):
        # tables made from a sibling Monte Carlo result moved with it
        new = {key: old[key] if isinstance(value, dict) and "columns" in value else value for key, value in new.items()}
    new = dict(new)
    new.pop("method_reason", None)  # recorded since issue 47 (each row's own)
    if isinstance(new.get("draws_interval"), list):  # one per row since issue 47
        kinds = set(new["draws_interval"])
        new["draws_interval"] = kinds.pop() if len(kinds) == 1 else old["draws_interval"]
    if new.pop("p_from_null_draws", False):  # issue 46: t noise in the null draws of fits under one prior
        new["pvalue"] = old["pvalue"]
    kinds = new.pop("statistic_kind", None), new.pop("statistic_kinds", None)
    # issue 47: std_error is the tested one; the draws' spread, which it was, is draws_std_error (NaN without draws)
    if "draws_std_error" in new:
        drawn = new.pop("draws_std_error")
        new["std_error"] = new["std_error"] if np.isnan(drawn) else drawn
    if "draws_std_errors" in new:
        drawn = np.asarray(new.pop("draws_std_errors"), dtype=np.float64)
        new["std_errors"] = np.where(np.isnan(drawn), new["std_errors"], drawn).tolist()
    translated = {key: (old[key] if p_from_old and "pvalue" in key and isinstance(old, dict) and key in old
                        else as_before(value, old.get(key) if isinstance(old, dict) else None, p_from_old))
                  for key, value in new.items()}
    if kinds[0] == FROM_P:
        translated["statistic"] = old["statistic"]
    if kinds[1] is not None:
        translated["statistics"] = [old["statistics"][k] if kind == FROM_P else value
                                    for k, (kind, value) in enumerate(zip(kinds[1], new["statistics"]))]
    return translated


def test_every_case_is_recorded():
    assert list(RECORDED) == list(cases.CASES) == list(BEFORE)


@pytest.mark.parametrize("name", list(cases.CASES))
def test_the_case_gives_the_recorded_numbers(models, name):
    computed = cases.compute(name, models)
    assert_same(computed, RECORDED[name], name)
    assert_same(as_before(computed, BEFORE[name]), BEFORE[name], f"{name} (before issue 24)")


def statistics_from_p(record) -> int:
    """How many statistics of a record are of Monte Carlo tests that invert their interval."""
    if isinstance(record, list):
        return sum(map(statistics_from_p, record))
    if not isinstance(record, dict):
        return 0
    own = int(record.get("statistic_kind") == FROM_P) + sum(kind == FROM_P for kind in record.get("statistic_kinds", ()))
    return own + sum(statistics_from_p(value) for value in record.values())


def test_the_translation_takes_old_statistics_only_of_tests_that_invert_their_interval():
    """Only statistics of kind "from p" come from the old recording: a Wald statistic changed fails the comparison,
    and the delta method's cases have none to take."""
    assert sum(statistics_from_p(RECORDED[name]) for name in cases.CASES) > 0
    for name in ("similarity_delta", "similarity_paper_recipe", "weat_delta", "similarity_tests_delta"):
        assert statistics_from_p(RECORDED[name]) == 0
    changed = json.loads(json.dumps(RECORDED["similarity_delta"]["default"]))
    changed["statistic"] *= 1 + 1e-9
    with pytest.raises(AssertionError, match="statistic"):
        assert_same(as_before(changed, BEFORE["similarity_delta"]["default"]),
                    BEFORE["similarity_delta"]["default"], "similarity_delta.default")
