"""The API reference (docs/api/) has a page for every public name: glovev_ext.__all__ and each stage's __all__."""

from __future__ import annotations

import importlib
import re
import warnings
from pathlib import Path

import pytest

import glovev_ext

API = Path(__file__).resolve().parents[1] / "docs" / "api"
STAGES = ["glovev_ext.counting", "glovev_ext.glove", "glovev_ext.covariance", "glovev_ext.stats", "glovev_ext.adapters"]


def documented_names() -> list[str]:
    """The full names the API pages document: autosummary entries and autodata directives, in their current module."""
    names = []
    for page in sorted(API.glob("*.rst")):
        module, in_autosummary = None, False
        for line in page.read_text(encoding="utf-8").splitlines():
            directive = re.match(r"\.\. (?:current)?module:: (\S+)$", line)
            if directive:
                module, in_autosummary = directive.group(1), False
                continue
            data = re.match(r"\.\. autodata:: (\S+)$", line)
            if data:
                names.append(f"{module}.{data.group(1)}")
                continue
            if line.startswith(".. autosummary::"):
                in_autosummary = True
                continue
            if in_autosummary:
                entry = re.match(r"   ([A-Za-z_][\w.]*)$", line)
                if entry:
                    names.append(f"{module}.{entry.group(1)}")
                elif line and not line.startswith("   :"):
                    in_autosummary = False
    return names


def _object(full_name: str):
    module, _, name = full_name.rpartition(".")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # a page must not document a name kept only for one release
        return getattr(importlib.import_module(module), name)


def test_every_name_of_glovev_ext_all_has_a_page_under_its_own_name():
    documented = set(documented_names())
    assert sorted(f"glovev_ext.{name}" for name in glovev_ext.__all__ if f"glovev_ext.{name}" not in documented) == []


@pytest.mark.parametrize("stage", STAGES)
def test_every_name_a_stage_exports_has_a_page(stage):
    """Under the stage's name, or under glovev_ext's for the names the package exports too (one page an object)."""
    documented = {id(_object(name)) for name in documented_names() if not name.rsplit(".", 1)[1].isupper()}
    documented_constants = set(documented_names())
    module = importlib.import_module(stage)
    missing = [name for name in module.__all__
               if id(getattr(module, name)) not in documented and f"{stage}.{name}" not in documented_constants]
    assert missing == []


def test_every_page_documents_a_public_name_once():
    names = documented_names()
    assert len(names) == len(set(names))
    objects = [id(_object(name)) for name in names if not name.rsplit(".", 1)[1].isupper() and "__" not in name]
    assert len(objects) == len(set(objects)), "an object is documented under two names"
