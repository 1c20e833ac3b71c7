"""The house follows the data path: no import runs back up it, no circle, and private means private.

Read from the source with ``ast`` (imports inside functions included), so a change that breaks the
layout fails here before anyone draws the picture again.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
# Stages in the order data flows through them; a module may import only from its own stage or earlier ones.
STAGES = [
    ("glovev_ext._checks", "glovev_ext._prefetch", "glovev_ext._deprecation", "glovev_ext._docstrings",
     "glovev_ext._version", "glovev_ext._memory", "glovev_ext._file_rows", "glovev_ext._dask", "glovev_ext.atomic",
     "glovev_ext._temporaries", "glovev_ext._writer_lock"),
    ("glovev_ext.counting",),
    ("glovev_ext.glove",),
    ("glovev_ext.covariance",),
    # stats in three floors: the inference engine, the statistics built on it, the studies built on those
    ("glovev_ext.stats.engine",),
    ("glovev_ext.stats.statistics",),
    ("glovev_ext.stats.studies",),
    ("glovev_ext.stats",),
    ("glovev_ext.keyed_vectors",),
    ("glovev_ext.saved_model", "glovev_ext._model_folder", "glovev_ext.pipeline", "glovev_ext.plots"),
    ("glovev_ext", "adapters"),
    ("glovev_ext.cli", "glovev_ext.__main__"),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPOSITORY).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every import in a file, relative imports resolved."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            names = [alias.name for alias in node.names]
            folder = REPOSITORY / module.replace(".", "/")
            submodules = [n for n in names if (folder / n).is_dir() or (folder / f"{n}.py").is_file()]
            # "from . import stats" imports the submodule glovev_ext.stats, not the package's own names
            found.extend((f"{module}.{n}", []) for n in submodules)
            if len(submodules) < len(names):
                found.append((module, [n for n in names if n not in submodules]))
    return found


def stage(module: str) -> int | None:
    best = None
    for rank, prefixes in enumerate(STAGES):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                if best is None or len(prefix) > best[1]:
                    best = (rank, len(prefix))
    return None if best is None else best[0]


LIBRARY = sorted(p for p in (REPOSITORY / "glovev_ext").rglob("*.py")) + sorted((REPOSITORY / "adapters").glob("*.py"))
OUTSIDE = sorted((REPOSITORY / "bench").glob("*.py")) + sorted((REPOSITORY / "tutorials").glob("*.py"))


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: str(p.relative_to(REPOSITORY)))
def test_no_import_runs_back_up_the_data_path(path):
    own = stage(module_name(path))
    assert own is not None, f"{module_name(path)} belongs to no stage: add it to STAGES"
    for module, _ in imports(path):
        if module.startswith(("glovev_ext", "adapters")):
            assert stage(module) <= own, f"{module_name(path)} (stage {own}) imports {module} (stage {stage(module)})"


def test_the_import_graph_has_no_circle():
    graph = {module_name(path): {m for m, _ in imports(path) if m.startswith(("glovev_ext", "adapters"))}
             for path in LIBRARY}
    # a package's import of its own submodules (its __init__ re-exporting them) is not a circle
    edges = {node: {m for m in targets if m in graph and not m.startswith(node + ".")} for node, targets in
             graph.items()}
    state: dict[str, int] = {}

    def visit(node, trail):
        state[node] = 1
        for target in edges[node]:
            if state.get(target) == 1:
                raise AssertionError(" -> ".join([*trail, node, target]))
            if target not in state:
                visit(target, [*trail, node])
        state[node] = 2

    for node in edges:
        if node not in state:
            visit(node, [])


def is_private(module: str, names: list[str]) -> bool:
    return any(part.startswith("_") and part not in ("__init__", "__main__", "__future__")
               for part in module.split(".")) or any(n.startswith("_") for n in names)


@pytest.mark.parametrize("path", LIBRARY + OUTSIDE, ids=lambda p: str(p.relative_to(REPOSITORY)))
def test_private_modules_and_names_stay_in_their_package(path):
    """``_name`` is private to the package holding it; adapters, benchmarks and tutorials use public names only."""
    importer = module_name(path)
    for module, names in imports(path):
        if not module.startswith("glovev_ext") or not is_private(module, names):
            continue
        parts = module.split(".")
        owner = ".".join(parts[:next(i for i, p in enumerate(parts) if p.startswith("_"))]) if any(
            p.startswith("_") for p in parts) else module
        assert importer.startswith("glovev_ext") and importer.startswith(owner), \
            f"{importer} imports the private {module} {[n for n in names if n.startswith('_')]}"


def exported(package: str) -> set[str]:
    """The ``__all__`` of a package, read from its ``__init__.py``, and the names of its submodules."""
    folder = REPOSITORY / "adapters" if package == "glovev_ext.adapters" else REPOSITORY.joinpath(*package.split("."))
    submodules = {path.stem for path in folder.glob("*.py")} | {path.name for path in folder.iterdir() if path.is_dir()}
    for node in ast.parse((folder / "__init__.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(target, "id", None) == "__all__" for target in node.targets):
            return set(ast.literal_eval(node.value)) | submodules
    raise AssertionError(f"{package} has no __all__")


SUBPACKAGES = {package: exported(package) for package in
               ("glovev_ext.counting", "glovev_ext.glove", "glovev_ext.covariance", "glovev_ext.adapters")}
TESTS = sorted((REPOSITORY / "tests").rglob("*.py"))


@pytest.mark.parametrize("path", LIBRARY + OUTSIDE + TESTS, ids=lambda p: str(p.relative_to(REPOSITORY)))
def test_a_subpackage_is_imported_only_by_the_names_it_exports(path):
    """Everything else comes from its module (``glovev_ext.covariance.factor``): the package's old spelling warns."""
    for module, names in imports(path):
        package = "glovev_ext.adapters" if module == "adapters" else module
        if package in SUBPACKAGES:
            assert set(names) <= SUBPACKAGES[package], \
                f"{module_name(path)} imports {sorted(set(names) - SUBPACKAGES[package])} from {package}, not its module"
