"""The package's layers (docs/architecture.md), checked by parsing every import of the package:
each module imports only its own layer and the layers below, no two modules import each other
even through others, and no part of the package takes private names from another part.

Imports inside functions count (a lazy import is still a dependency); imports under
``if TYPE_CHECKING:`` do not (they exist for annotations only and never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "durable_debug"

LAYERS = {
    "durable_debug._collector": 0,
    "durable_debug._sync": 0,
    "durable_debug._version": 0,
    "durable_debug.checkpoint": 1,
    "durable_debug.store": 1,
    "durable_debug.graph": 2,
    # LangGraph's import paths: re-exports of the engine's names.
    "durable_debug.cache": 2,
    "durable_debug.types": 2,
    "durable_debug.errors": 2,
    "durable_debug.runtime": 2,
    "durable_debug.config": 2,
    "durable_debug.constants": 2,
    "durable_debug.prebuilt": 2,  # LangGraph's prebuilt agent parts, built on the engine
    "durable_debug.channels": 2,
    "durable_debug.func": 2,
    "durable_debug.managed": 2,
    "durable_debug.warnings": 2,
    "durable_debug.pregel": 2,
    "durable_debug.stream": 2,  # LangGraph's v3 event streaming names (graph/v3_*.py)
    "durable_debug.inspect": 3,
    "durable_debug.widget": 4,
    "durable_debug.widget_code": 4,  # the Python the widget shows for each action
    "durable_debug.magics": 4,
    "durable_debug.cli": 4,
    "durable_debug": 5,  # the package's front door re-exports every layer
}
"""Layer of each module, by the longest prefix that names it: higher layers import lower."""


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def part(module: str) -> str:
    """The entry of LAYERS a module belongs to (the longest prefix naming it)."""
    prefixes = [p for p in LAYERS if module == p or module.startswith(p + ".")]
    assert prefixes, f"{module} belongs to no layer: add it to LAYERS in {__file__}"
    return max(prefixes, key=len)


def layer(module: str) -> int:
    return LAYERS[part(module)]


def imports(path: Path, known: dict[str, Path]) -> list[tuple[str, str, int]]:
    """``(module imported, name taken from it or "", line)`` for each import that runs."""
    found: list[tuple[str, str, int]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for stmt in child.orelse:
                    visit_one(stmt)
                continue
            visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.extend((alias.name, "", node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: use absolute imports"
            base = node.module or ""
            for alias in node.names:
                # ``from package import module`` imports the module itself.
                full = f"{base}.{alias.name}"
                found.append(
                    (full, "", node.lineno) if full in known else (base, alias.name, node.lineno)
                )
        visit(node)

    visit(ast.parse(path.read_text()))
    return [
        (m, name, line) for m, name, line in found if m == PACKAGE or m.startswith(PACKAGE + ".")
    ]


def graph() -> tuple[dict[str, set[str]], list[str]]:
    """The import graph between the package's modules, and the problems seen building it."""
    known = modules()
    edges: dict[str, set[str]] = {m: set() for m in known}
    problems = []
    for module, path in known.items():
        where = path.relative_to(SRC.parent)
        for target, name, line in imports(path, known):
            assert target in known, f"{where}:{line}: {target} is not a module of the package"
            if target == module:
                continue
            edges[module].add(target)
            if layer(target) > layer(module):
                problems.append(
                    f"{where}:{line}: {module} (layer {layer(module)}) imports "
                    f"{target} (layer {layer(target)})"
                )
            private = name.startswith("_") and not name.startswith("__")
            if private and part(target) != part(module):
                problems.append(f"{where}:{line}: {module} imports the private {target}.{name}")
    return edges, problems


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other, directly or through others (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_every_module_imports_only_its_layer_and_below_and_no_private_names() -> None:
    _, problems = graph()
    assert problems == []


def test_no_modules_import_each_other() -> None:
    edges, _ = graph()
    assert cycles(edges) == []


def test_the_checker_sees_a_cycle_and_an_upward_import() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert cycles(edges) == [["a", "b", "c"]]
    assert layer("durable_debug.checkpoint.sqlite") < layer("durable_debug.graph.loop")
    assert layer("durable_debug.inspect.thread") < layer("durable_debug.widget")
