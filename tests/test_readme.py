"""Every Python block of the README runs as written, in order, on the embedded corpus."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_the_readme_has_python_blocks():
    assert len(BLOCKS) >= 4


def test_every_python_block_runs_as_written(tmp_path, monkeypatch):
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__readme__"}
    for number, block in enumerate(BLOCKS, 1):
        try:
            exec(compile(block, f"README.md, Python block {number}", "exec"), namespace)
        except Exception as error:  # noqa: BLE001 - any failure fails the README
            pytest.fail(f"README Python block {number} fails: {type(error).__name__}: {error}\n{block}")
    assert (tmp_path / "my_model" / "manifest.json").exists()
    assert (tmp_path / "variance.png").stat().st_size > 1000 and (tmp_path / "doctor.png").stat().st_size > 1000
