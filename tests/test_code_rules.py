"""Rules of the package's source that no linter checks, read from every module of ``src/``.

- A ``# type: ignore`` names the errors it silences (``# type: ignore[attr-defined]``) and says
  why on the same line, after them (``# type: ignore[method-assign]  # put back below``): a
  reader sees at once what mypy would say and why the code is right anyway. No module is
  exempt.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "durable_debug"

IGNORE = re.compile(r"#\s*type:\s*ignore\b")
"""A comment that silences mypy, in any spelling mypy accepts."""
EXPLAINED = re.compile(r"^#\s*type: ignore\[[a-z-]+(?:, ?[a-z-]+)*\]  # \S")
"""The one accepted form: error codes in brackets, two spaces, ``#`` and the reason."""


def unexplained_ignores(text: str, where: str) -> list[str]:
    """``where:line: comment`` for each ``type: ignore`` comment of ``text`` (Python source)
    without error codes or without a reason after them; strings and docstrings do not count."""
    found = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type != tokenize.COMMENT or not IGNORE.search(token.string):
            continue
        if not EXPLAINED.match(token.string):
            found.append(f"{where}:{token.start[0]}: {token.string}")
    return found


def test_every_type_ignore_names_its_errors_and_says_why() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        found += unexplained_ignores(path.read_text(), str(path.relative_to(SRC.parents[1])))
    assert found == []


def test_the_checker_sees_a_bare_ignore_one_without_codes_and_one_without_a_reason() -> None:
    source = (
        "a = f()  # type: ignore\n"
        "b = f()  # type: ignore[attr-defined]\n"
        "c = f()  #type:ignore[misc]  # spelled loosely\n"
        "d = f()  # type: ignore[assignment,misc]  # a reason\n"
        'e = "# type: ignore"  # only a string\n'
        "g = f()  # type: ignore[arg-type]  # a reason\n"
    )
    assert unexplained_ignores(source, "m.py") == [
        "m.py:1: # type: ignore",
        "m.py:2: # type: ignore[attr-defined]",
        "m.py:3: #type:ignore[misc]  # spelled loosely",
    ]
