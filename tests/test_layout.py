"""The package layout: imports run one way, and modules stay small enough to read.

The import graph is read from every module's AST (top-level and function-level imports
alike, ``TYPE_CHECKING`` blocks excepted, doctests not at all), so a lazy import cannot
hide a cycle. Each package may import only the layers below it (``docs/architecture.md``).
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import stef

SRC = Path(stef.__file__).parent

#: Layers from the bottom up. A module may import its own layer and the layers below.
LAYERS: list[set[str]] = [
    {"_version", "errors"},
    {"findings", "rules", "spec", "record"},
    {"sql", "nl", "llm"},
    {"align"},
    {"judges", "score"},
    {"batch", "pool"},
    {"evaluator"},
    {"monitor", "accuracy", "store", "interop", "engines"},
    {"service"},
    {"cli"},
]


def _unit(module: str) -> str:
    """The layout unit of a dotted module name: ``stef.sql.spec`` → ``sql``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _layer(unit: str) -> int:
    for i, units in enumerate(LAYERS):
        if unit in units:
            return i
    raise AssertionError(f"stef.{unit} is in no layer of tests/test_layout.py")


def _modules() -> list[str]:
    names = ["stef"]
    for info in pkgutil.walk_packages([str(SRC)], prefix="stef."):
        names.append(info.name)
    return sorted(names)


def _path(module: str) -> Path:
    rel = Path(*module.split(".")[1:])
    pkg = SRC / rel / "__init__.py"
    return pkg if pkg.exists() else SRC / rel.with_suffix(".py")


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _imports(module: str) -> set[str]:
    """Every stef module this module imports at run time."""
    tree = ast.parse(_path(module).read_text())
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            skip.update(id(n) for b in node.body for n in ast.walk(b))
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("stef."))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "stef":
                found.update(f"stef.{a.name}" for a in node.names)
            elif node.module.startswith("stef."):
                found.add(node.module)
    return found


MODULES = _modules()
GRAPH = {m: {i for i in _imports(m) if i != m} for m in MODULES}


@pytest.mark.parametrize("module", MODULES)
def test_every_module_imports(module: str) -> None:
    importlib.import_module(module)


def test_no_import_cycle() -> None:
    """Depth-first search over the module graph; a back edge is a cycle."""
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in sorted(GRAPH.get(m, ())):
            if n not in GRAPH:
                continue
            if state.get(n) == 1:
                cycles.append([*path[path.index(n):], n] if n in path else [m, n])
            elif n not in state:
                visit(n, [*path, n])
        state[m] = 2

    for m in MODULES:
        if m not in state:
            visit(m, [m])
    assert cycles == []


def test_imports_run_down_the_layers() -> None:
    upward = []
    for m, deps in GRAPH.items():
        unit = _unit(m)
        if not unit:
            continue
        for d in deps:
            du = _unit(d)
            if du and du != unit and _layer(du) > _layer(unit):
                upward.append(f"{m} imports {d}")
    assert upward == []


def test_top_level_stays_small() -> None:
    top = [p.name for p in SRC.glob("*.py")]
    assert len(top) <= 12, sorted(top)


def test_no_module_over_800_lines() -> None:
    long = {str(p.relative_to(SRC)): n for p in SRC.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 800}
    assert long == {}


def test_no_function_over_80_lines() -> None:
    long = []
    for p in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > 80:
                    long.append(f"{p.relative_to(SRC)}:{node.lineno} {node.name} ({n} lines)")
    assert long == []
