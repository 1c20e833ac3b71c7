"""Every tutorial runs end to end (in its quick mode: a tiny model on a slice of the embedded corpus).

The scripts run in this process, as ``python tutorials/NAME.py`` would run them (``__main__``,
the tutorials folder on the path), so the package is imported once for all of them.
"""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path

import pytest

TUTORIALS = sorted((Path(__file__).resolve().parents[1] / "tutorials").glob("[0-9][0-9]_*.py"))
FIGURES = {  # 04 draws its figure only where the corpus covers the surname lists (not the quick one)
    "01_fit_and_variance.py": ["variance_by_frequency.png", "uncertainty_ellipses.png"],
    "02_doctor_neighbours.py": ["doctor_neighbours.png"],
    "03_weat_gender.py": ["weat_gender.png"],
    "05_evaluation.py": ["evaluation.png"],
    "06_bootstrap_vs_glovev.py": ["bootstrap_vs_glovev.png"],
    "07_semeval_relations.py": ["semeval_relations.png"],
    "08_subcorpora_change.py": ["subcorpora_self_similarity.png"],
}


@pytest.fixture(scope="module")
def output(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tutorials")


@pytest.fixture
def quick_mode(output, monkeypatch):
    monkeypatch.setenv("GLOVEV_TUTORIAL_QUICK", "1")
    monkeypatch.setenv("GLOVEV_TUTORIAL_OUTPUT", str(output))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.syspath_prepend(str(TUTORIALS[0].parent))
    monkeypatch.delitem(sys.modules, "_common", raising=False)  # it reads the environment when imported
    yield
    import matplotlib.pyplot as plt
    plt.close("all")


def test_every_tutorial_is_listed_in_the_readme():
    readme = (TUTORIALS[0].parent / "README.md").read_text(encoding="utf-8")
    assert len(TUTORIALS) == 9
    for tutorial in TUTORIALS:
        assert tutorial.name in readme


@pytest.mark.skipif(os.environ.get("GLOVEV_TUTORIALS_RUN_BY_SITE") == "1",
                    reason="CI runs each tutorial once, in the site's build (.ci/run), which stops at any tutorial's "
                           "error; tests/test_docs_site.py checks every gallery page's figures")
@pytest.mark.parametrize("tutorial", TUTORIALS, ids=lambda path: path.name)
def test_tutorial_runs(tutorial, output, quick_mode, capsys, monkeypatch):
    monkeypatch.chdir(tutorial.parent.parent)
    runpy.run_path(str(tutorial), run_name="__main__")
    assert "done in" in capsys.readouterr().out
    for figure in FIGURES.get(tutorial.name, []):
        assert (output / "figures" / figure).stat().st_size > 1000, figure
