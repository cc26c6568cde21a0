"""Rules of the repository's text that no linter checks.

- In every module of ``src/``, a ``# type: ignore`` names the errors it silences
  (``# type: ignore[attr-defined]``) and says why on the same line, after them
  (``# type: ignore[method-assign]  # put back below``): a reader sees at once what mypy would
  say and why the code is right anyway. No module is exempt.
- No tracked file cites an issue of the tracker by its number.
- No two test modules share a file name: the test directories are not packages, so pytest
  imports each module by its bare name and refuses to collect the second one.
"""

from __future__ import annotations

import io
import re
import subprocess
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "durable_debug"

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


CITATION = re.compile(r"\b[Ii]ssues? #?[0-9]+")
"""A reference to an issue by its number: the word, then the number."""


def test_nothing_cites_an_issue_by_its_number() -> None:
    """The tracker those numbers point into is not in the repository: a comment, docstring,
    doc or changelog entry says what it means instead. Every tracked text file counts, the
    notebooks' stored outputs too, but the built widget (made from js/src, which counts)."""
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    found = []
    for name in tracked:
        path = ROOT / name
        if name == "js/widget.js" or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:  # an image or a database
            continue
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if CITATION.search(line):
                found.append(f"{name}:{number}: {line.strip()}")
    assert found == []


def test_the_citation_check_sees_one() -> None:
    five, fourteen = 5, 14
    assert CITATION.search(f"the widget on big threads (issue {fourteen}, item 1)")
    assert CITATION.search(f"in headless Chromium (issues {five} and {fourteen})")
    assert not CITATION.search("reported upstream as jupyter/notebook#7862")


def test_no_two_test_modules_share_a_name() -> None:
    by_name: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        by_name.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in by_name.items() if len(paths) > 1} == {}
