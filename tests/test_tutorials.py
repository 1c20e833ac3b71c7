"""Every tutorial runs end to end (in its quick mode: a tiny model on a slice of the embedded corpus)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TUTORIALS = sorted((Path(__file__).resolve().parents[1] / "tutorials").glob("[0-9][0-9]_*.py"))
FIGURES = {
    "01_fit_and_variance.py": ["variance_by_frequency.png", "uncertainty_ellipses.png"],
    "02_doctor_neighbours.py": ["doctor_neighbours.png"],
    "03_weat_gender.py": ["weat_gender.png"],
    "05_evaluation.py": ["evaluation.png"],
    "06_bootstrap_vs_glovev.py": ["bootstrap_vs_glovev.png"],
}


@pytest.fixture(scope="module")
def output(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tutorials")


def test_every_tutorial_is_listed_in_the_readme():
    readme = (TUTORIALS[0].parent / "README.md").read_text(encoding="utf-8")
    assert len(TUTORIALS) == 6
    for tutorial in TUTORIALS:
        assert tutorial.name in readme


@pytest.mark.parametrize("tutorial", TUTORIALS, ids=lambda path: path.name)
def test_tutorial_runs(tutorial, output):
    environment = dict(os.environ, GLOVEV_TUTORIAL_QUICK="1", GLOVEV_TUTORIAL_OUTPUT=str(output),
                       MPLBACKEND="Agg")
    result = subprocess.run([sys.executable, str(tutorial)], capture_output=True, text=True, env=environment,
                            cwd=tutorial.parent.parent, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "done in" in result.stdout
    for figure in FIGURES.get(tutorial.name, []):
        assert (output / "figures" / figure).stat().st_size > 1000, figure
