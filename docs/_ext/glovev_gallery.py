"""Each gallery page shows, after its introduction, the figures of a full run of its tutorial.

The gallery runs the tutorials in their quick mode (a tiny model), so the figures it draws show the
analysis, not what it finds. The figures a full run drew are checked in under
``tutorials/figures``; the page of a tutorial shows those its docstring names (``figures/NAME.png``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from sphinx.application import Sphinx

TUTORIALS = Path(__file__).resolve().parents[2] / "tutorials"
FIRST_CODE = ".. GENERATED FROM PYTHON SOURCE LINES"


def full_run_figures(tutorial: Path) -> list[Path]:
    """The checked-in figures a tutorial's docstring names, in the order it names them."""
    docstring = ast.get_docstring(ast.parse(tutorial.read_text(encoding="utf-8"))) or ""
    names = dict.fromkeys(re.findall(r"figures/([\w-]+\.png)", docstring))
    return [TUTORIALS / "figures" / name for name in names if (TUTORIALS / "figures" / name).exists()]


def add_full_run_figures(app: Sphinx, docname: str, source: list[str]) -> None:
    match = re.fullmatch(r"tutorials/(\d\d_\w+)", docname)
    if not match or FIRST_CODE not in source[0]:
        return
    figures = full_run_figures(TUTORIALS / f"{match.group(1)}.py")
    if not figures:
        return
    section = ["", ".. rubric:: Figures of a full run", "",
               "What this tutorial draws on its full data (see its docstring), checked in under "
               "``tutorials/figures``; the figures further down come from the quick run that built this page.",
               ""]
    for figure in figures:
        section += [f".. image:: /../tutorials/figures/{figure.name}", f"   :alt: {figure.stem.replace('_', ' ')}",
                    "   :class: glovev-full-run", ""]
    head, marker, rest = source[0].partition(FIRST_CODE)
    source[0] = head + "\n".join(section) + "\n" + marker + rest


def setup(app: Sphinx):
    app.connect("source-read", add_full_run_figures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
