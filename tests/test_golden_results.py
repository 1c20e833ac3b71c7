"""Today's results, recorded: every case of tests/data/golden/cases.py gives the numbers of results.json to 1e-12.

The safety net of issue 24 (one inference core): estimates, standard errors, statistics, p-values,
intervals, degrees of freedom, covariances, adjusted p-values and equality tests of every public
result type, computed from saved models (tests/data/golden/models, made by fit.py; nothing is
trained here) with fixed seeds, and compared with the numbers record.py wrote before the change.
Row labels, methods and dropped words must match exactly. A change that is meant to move the
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
TOLERANCE = {"rtol": 1e-12, "atol": 1e-12}


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


def test_every_case_is_recorded():
    assert list(RECORDED) == list(cases.CASES)


@pytest.mark.parametrize("name", list(cases.CASES))
def test_the_case_gives_the_recorded_numbers(models, name):
    assert_same(cases.compute(name, models), RECORDED[name], name)


def test_the_comparison_fails_on_a_changed_number():
    """The check itself: a number off by more than the tolerance, or a changed label, fails it."""
    recorded = RECORDED["similarity_delta"]["default"]
    changed = {**recorded, "pvalue": recorded["pvalue"] * (1 + 1e-9)}
    with pytest.raises(AssertionError, match="pvalue"):
        assert_same(changed, recorded, "similarity_delta.default")
    with pytest.raises(AssertionError, match="method"):
        assert_same({**recorded, "method": "Monte Carlo"}, recorded, "similarity_delta.default")
    assert_same({**recorded, "pvalue": recorded["pvalue"] * (1 + 1e-14)}, recorded, "similarity_delta.default")
