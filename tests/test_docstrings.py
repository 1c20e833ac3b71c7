"""Shared parameter documentation is written once (glovev_ext/_docstrings.py) and fills valid numpydoc.

The source docstrings are read with ``ast``, before any placeholder is filled, so a copy of an entry
written by hand fails here however the rendered text looks.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import warnings
from collections import defaultdict
from pathlib import Path

import pytest

from glovev_ext._docstrings import PARAMETERS, fill_doc

PACKAGE = Path(__file__).resolve().parents[1] / "glovev_ext"
PLACEHOLDER = re.compile(r"\{(\w+)\}")
WINDOW = 3  # consecutive parameter lines that count as a copy


def public_docstrings() -> dict[str, str]:
    """``{"module:qualname": raw docstring}`` of every public function, class and method of the package."""
    found = {}

    def visit(node, module: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and not child.name.startswith("_"):
                name = f"{prefix}{child.name}"
                docstring = ast.get_docstring(child, clean=True)
                if docstring:
                    found[f"{module}:{name}"] = docstring
                if isinstance(child, ast.ClassDef):
                    visit(child, module, f"{name}.")

    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        visit(ast.parse(path.read_text(encoding="utf-8")), module, "")
    return found


def parameter_lines(docstring: str) -> list[str | None]:
    """The stripped lines of the Parameters sections, None where a run of copied text cannot continue
    (a blank line, or a placeholder: a reference to the shared entry, not a copy of it)."""
    lines = docstring.splitlines()
    out: list[str | None] = []
    inside = False
    for k, line in enumerate(lines):
        text = line.strip()
        following = lines[k + 1].strip() if k + 1 < len(lines) else ""
        if following and set(following) == {"-"}:  # a section's title
            inside = text in ("Parameters", "Other Parameters")
            out.append(None)
        elif inside and not (text and set(text) == {"-"}):
            out.append(None if not text or PLACEHOLDER.fullmatch(text) else text)
    return out


DOCSTRINGS = public_docstrings()


def test_no_parameter_documentation_is_copied_between_public_docstrings():
    where = defaultdict(set)
    for name, docstring in DOCSTRINGS.items():
        lines = parameter_lines(docstring)
        for start in range(len(lines) - WINDOW + 1):
            window = lines[start:start + WINDOW]
            if None not in window:
                where[tuple(window)].add(name)
    copies = {window: names for window, names in where.items() if len(names) > 1}
    assert not copies, "parameter documentation written twice; add it to glovev_ext/_docstrings.py:\n" + "\n".join(
        f"{sorted(names)}:\n    " + "\n    ".join(window) for window, names in copies.items())


def test_every_shared_entry_is_shared_and_every_placeholder_has_one():
    users = defaultdict(set)
    for name, docstring in DOCSTRINGS.items():
        for placeholder in (line.strip() for line in docstring.splitlines()):
            match = PLACEHOLDER.fullmatch(placeholder)
            if match:
                users[match[1]].add(name)
    assert set(users) <= set(PARAMETERS), f"placeholders without an entry: {set(users) - set(PARAMETERS)}"
    alone = {entry: sorted(users[entry]) for entry in PARAMETERS if len(users[entry]) < 2}
    assert not alone, f"entries used by fewer than two docstrings belong in their docstring: {alone}"


def filled_objects() -> list[tuple[str, object]]:
    """Every public function and method whose source docstring holds a placeholder, imported."""
    found = []
    for name, docstring in DOCSTRINGS.items():
        if any(PLACEHOLDER.fullmatch(line.strip()) for line in docstring.splitlines()):
            module, qualname = name.split(":")
            obj = importlib.import_module(module)
            for part in qualname.split("."):
                obj = getattr(obj, part)
            found.append((name, obj))
    return found


FILLED = filled_objects()


def test_placeholders_are_found():
    assert len(FILLED) >= 20


@pytest.mark.parametrize("name, function", FILLED, ids=[name for name, _ in FILLED])
def test_the_filled_docstring_documents_the_signature_in_numpydoc(name, function):
    lines = inspect.getdoc(function).splitlines()
    start = lines.index("Parameters") + 2
    stop = next((k - 1 for k in range(start + 1, len(lines)) if set(lines[k].strip()) == {"-"}), len(lines))
    section = [line for line in lines[start:stop] if line]
    titles = [line for line in section if not line.startswith(" ")]
    assert all(line.startswith("    ") for line in section if line not in titles), "a description is not indented"
    documented = {part.strip().lstrip("*") for title in titles for part in title.split(" : ")[0].split(",")}
    used = {entry for entry in PARAMETERS if f"{{{entry}}}" in DOCSTRINGS[name]}
    assert {PARAMETERS[entry].split(" : ")[0] for entry in used} <= documented, "a placeholder is not an entry"
    assert documented <= set(inspect.signature(function).parameters)
    assert not any(PLACEHOLDER.fullmatch(line.strip()) for line in lines), f"{name} is not filled"


@pytest.mark.parametrize("name, function", FILLED, ids=[name for name, _ in FILLED])
def test_numpydoc_reads_the_filled_docstring_without_complaint(name, function):
    docscrape = pytest.importorskip("numpydoc.docscrape")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parsed = docscrape.FunctionDoc(function)
    named = {part.strip().lstrip("*") for parameter in parsed["Parameters"] for part in parameter.name.split(",")}
    assert named <= set(inspect.signature(function).parameters)
    for entry in PARAMETERS:
        if f"{{{entry}}}" in DOCSTRINGS[name]:
            described = next(p for p in parsed["Parameters"] if PARAMETERS[entry].startswith(f"{p.name} : "))
            assert described.desc, f"{name}: {entry} has no description"


def test_a_placeholder_takes_the_indent_and_following_lines_add_to_the_entry():
    def example(random_state=0):
        """One line.

        Parameters
        ----------
        {random_state}
            Only here.
        """

    filled = inspect.getdoc(fill_doc(example)).splitlines()
    title = PARAMETERS["random_state"].splitlines()[0]
    assert filled[4] == title and filled[-1] == "    Only here."
    assert all(line.startswith("    ") for line in filled[5:])


def test_an_unknown_placeholder_fails_at_import():
    def example():
        """{no_such_parameter}"""

    with pytest.raises(KeyError, match="no_such_parameter"):
        fill_doc(example)
