"""The engine's own names and separators are written once, in durable_debug.checkpoint.names.

Every other module uses them by name: a literal copy in src/ (outside docstrings and comments)
or in the widget's JS (js/src/) fails here, and the JS constants that mirror a Python one must
hold the same value.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from durable_debug.checkpoint import names
from durable_debug.inspect.health import DEFAULT_SLA

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "durable_debug"
JS_SRC = ROOT / "js" / "src"
NAMES_MODULE = SRC / "checkpoint" / "names.py"

SEPARATORS = {names.NS_SEP, names.TASK_PATH_SEP, names.NS_END}
"""One-character separators: a literal is stray only when it is the whole string (``"|"``);
``":"`` is everywhere (times, URLs, messages), so it is left to review."""


def engine_names() -> set[str]:
    """The names the module defines, separators left out (they are checked as whole strings)."""
    found = {
        value
        for key, value in vars(names).items()
        if key.isupper() and isinstance(value, str) and not key.endswith("_SQL")
    }
    return found - SEPARATORS


def not_code(tree: ast.AST) -> set[int]:
    """ids of the string nodes that are docstrings (a module's, class's or function's, or the
    string after an assignment, which documents the name) or part of an annotation (a
    ``Literal`` type must spell its values)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        annotations = [getattr(node, "returns", None), getattr(node, "annotation", None)]
        for annotation in annotations:
            if isinstance(annotation, ast.AST):
                found.update(id(inner) for inner in ast.walk(annotation))
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for stmt in body:
            if (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            ):
                found.add(id(stmt.value))
    return found


def stray_literals(path: Path) -> list[tuple[int, str]]:
    """``(line, literal)`` for each string in ``path``'s code (see :func:`not_code`) holding an
    engine name, or being the namespace separator."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = not_code(tree)
    wanted = engine_names()
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skip
        and (node.value == names.NS_SEP or any(name in node.value for name in wanted))
    ]


def test_no_engine_name_is_written_outside_the_names_module() -> None:
    stray = [
        f"{path.relative_to(ROOT)}:{line}: {text!r}"
        for path in sorted(SRC.rglob("*.py"))
        if path != NAMES_MODULE
        for line, text in stray_literals(path)
    ]
    assert stray == [], "use durable_debug.checkpoint.names instead of:\n" + "\n".join(stray)


def test_the_check_finds_a_stray_literal_in_code_not_in_docstrings(tmp_path: Path) -> None:
    module = tmp_path / "stray.py"
    module.write_text(
        '"""A docstring may say "__interrupt__"."""\n'
        'X = "__interrupt__"\n'
        '"""So may the string documenting X: "|"."""\n'
        'Y = f"{X}|{X}"\n'
        'Z = "a:b"\n'
        'def f(x: Literal["__end__"]) -> Literal["__end__"]: ...\n',
        encoding="utf-8",
    )
    assert sorted(stray_literals(module)) == [(2, "__interrupt__"), (4, "|")]


def js_constant(file: str, name: str) -> str | int:
    """The value of ``export const NAME = ...;`` in js/src/FILE (a string or an integer)."""
    text = (JS_SRC / file).read_text(encoding="utf-8")
    found = re.search(rf'^export const {name} = ("[^"]*"|\d+);$', text, re.MULTILINE)
    assert found, f"js/src/{file} has no `export const {name} = ...;`"
    value = found.group(1)
    return value[1:-1] if value.startswith('"') else int(value)


def test_the_widget_constants_hold_the_python_values() -> None:
    assert js_constant("subgraph.js", "NS_SEP") == names.NS_SEP
    assert js_constant("types.js", "TYPE_KEY") == names.TYPE_KEY
    assert js_constant("names.js", "START") == names.START
    assert js_constant("names.js", "END") == names.END
    assert js_constant("health.js", "HEALTH_SLA_S") == DEFAULT_SLA.total_seconds()


def js_strays(text: str) -> list[tuple[int, str]]:
    """``(line, literal)`` for each quoted namespace separator, class key, START or END in
    JS source ``text`` outside comments (``//`` and the lines of a ``/** ... */`` block) and
    outside the ``export const`` defining it."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        code = line.split("//", 1)[0]
        if code.startswith("export const ") or code.lstrip().startswith(("/*", "*")):
            continue
        for name in (names.NS_SEP, names.TYPE_KEY, names.START, names.END):
            for literal in (f'"{name}"', f"'{name}'", f"`{name}`"):
                if literal in code:
                    found.append((number, literal))
    return found


def test_the_widget_writes_the_engine_names_by_its_constants_only() -> None:
    """The namespace separator, the class key and the START and END nodes appear in js/src/
    once each, as the constant the test above compares with Python's."""
    strays = [
        f"js/src/{path.name}:{number}: {literal}"
        for path in sorted(JS_SRC.glob("*.js"))
        for number, literal in js_strays(path.read_text(encoding="utf-8"))
    ]
    assert strays == []


def test_the_js_check_finds_a_stray_name_in_code_not_in_comments() -> None:
    source = (
        'export const END = "__end__";\n'
        'const nodes = ids.filter((id) => id !== "__start__"); // not "__end__"\n'
        "const ns = parts.join('|');\n"
        "/** tagged with `__type__`,\n"
        " * as `__end__` is */\n"
    )
    assert js_strays(source) == [(2, '"__start__"'), (3, "'|'")]
