"""The examples in the docstrings run and print what they say: every module with one is found and run."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _modules_with_examples() -> list[str]:
    """Every module of the package (glovev_ext, and adapters installed as glovev_ext.adapters) with a '>>>' example."""
    names = []
    for folder, package in ((ROOT / "glovev_ext", "glovev_ext"), (ROOT / "adapters", "glovev_ext.adapters")):
        for path in sorted(folder.rglob("*.py")):
            if ">>>" in path.read_text(encoding="utf-8"):
                parts = path.relative_to(folder).with_suffix("").parts
                parts = parts[:-1] if parts[-1] == "__init__" else parts
                names.append(".".join((package, *parts)))
    return names


MODULES = _modules_with_examples()


def test_the_examples_are_found():
    assert {"glovev_ext.counting.vectorizer", "glovev_ext.covariance.estimator", "glovev_ext.pipeline"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    failures, attempted = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failures == 0
