"""The getting-started page (docs/getting_started.md) says what the package does: its commands parse, its Python runs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

import glovev_ext
from glovev_ext.cli import _build_parser

PAGE = (Path(__file__).resolve().parents[1] / "docs" / "getting_started.md").read_text(encoding="utf-8")
COMMANDS = [line for block in re.findall(r"```bash\n(.*?)```", PAGE, flags=re.S)
            for line in block.splitlines() if line.startswith("glovev ")]
PYTHON = re.findall(r"```python\n(.*?)```", PAGE, flags=re.S)


def test_the_page_has_commands_and_python():
    assert len(COMMANDS) >= 3 and PYTHON


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_parses(command):
    _build_parser().parse_args(shlex.split(command)[1:])


def test_the_python_runs_on_a_saved_model(tmp_path, monkeypatch):
    """On a small model saved where the page's commands save theirs (the words the page uses are in it)."""
    monkeypatch.chdir(tmp_path)
    estimator = glovev_ext.GloVeVEstimator(n_components=10, epochs=3)
    fitted = glovev_ext.fit_corpus(glovev_ext.load_default_corpus(max_documents=8000), estimator=estimator)
    glovev_ext.save_model("glovev_model", fitted.keyed_vectors, fitted.metadata)
    namespace: dict = {"__name__": "__getting_started__"}
    for number, block in enumerate(PYTHON, 1):
        exec(compile(block, f"getting_started.md, Python block {number}", "exec"), namespace)
    assert namespace["low"] < namespace["high"]
