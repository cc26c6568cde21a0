"""Rewrite LangGraph's test files so that a module-level statement that fails on durable_debug
fails only the tests that use what it defines.

LangGraph's test modules build state classes, savers and graphs at module level; one of them
needing an API we lack (``DeltaChannel(...)`` in an annotation, ``StateGraph[...]`` in a return
annotation, a saver subclass copying a method we lack) would otherwise fail the whole file at
import, hiding how every other test in it fares. :func:`guard_source` wraps each module-level
statement but the imports in ``try``/``except``; when one raises, :func:`broken` binds each
name it would have defined to a stand-in that raises the same error when a test uses it (a
test function becomes one that raises it). Statements that succeed behave as written, so on
the installed LangGraph (the reference run) the rewritten files run as the originals.

Only the copy the suite runs is rewritten (in the git-ignored cache, at every run).
"""

from __future__ import annotations

import ast
from typing import Any

from langgraph_suite.redirect import placeholder

_HELPER = "__lgsuite_broken"
_ERROR = "__lgsuite_error"


def _bound_names(stmt: ast.stmt) -> list[str]:
    """The module-level names a statement binds (classes, functions, assignment targets)."""
    if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return [stmt.name]
    names: list[str] = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.append(node.name)
    return list(dict.fromkeys(names))


def _needs_guard(stmt: ast.stmt) -> bool:
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Pass)):
        return False
    # A bare constant (the docstring) cannot fail.
    return not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))


def guard_source(source: str, filename: str) -> str:
    """The test module ``source`` with every module-level statement but imports guarded."""
    tree = ast.parse(source, filename)
    body: list[ast.stmt] = []
    helper_at = 0
    for index, stmt in enumerate(tree.body):
        is_future = isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
        is_doc = index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        if is_future or is_doc:
            helper_at = len(body) + 1
        if not _needs_guard(stmt):
            body.append(stmt)
            continue
        handler = ast.parse(
            f"{_HELPER}(globals(), {_bound_names(stmt)!r}, {_ERROR})", filename
        ).body
        body.append(
            ast.Try(
                body=[stmt],
                handlers=[
                    ast.ExceptHandler(
                        type=ast.Name("BaseException", ast.Load()), name=_ERROR, body=handler
                    )
                ],
                orelse=[],
                finalbody=[],
            )
        )
    body[helper_at:helper_at] = ast.parse(
        f"from langgraph_suite.guard import broken as {_HELPER}"
    ).body
    tree.body = body
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def broken(namespace: dict[str, Any], names: list[str], error: BaseException) -> None:
    """Bind ``names`` in ``namespace`` to stand-ins that raise ``error`` when used."""
    if isinstance(error, (KeyboardInterrupt, SystemExit)):
        raise error
    for name in names:
        if name.startswith("test"):
            namespace[name] = _raising_test(name, error)
        else:
            dotted = f"{namespace.get('__name__', '?')}.{name}"
            namespace[name] = placeholder(dotted, error=error)


def _raising_test(name: str, error: BaseException) -> Any:
    def test() -> None:
        raise error

    test.__name__ = test.__qualname__ = name
    return test
