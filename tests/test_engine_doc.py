"""The claims of docs/engine.md's list of differences from LangGraph that a test can check: each
difference names the tests that pin it, and each named test exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE_MD = (ROOT / "docs" / "engine.md").read_text(encoding="utf-8")
HEADING = "## Where we still differ from LangGraph on purpose"


def differences() -> dict[str, str]:
    """Each item of the list, by its anchor (``diff-...``)."""
    section = ENGINE_MD.split(f"\n{HEADING}\n", 1)[1].split("\n## ", 1)[0]
    items = re.split(r'^\* <a id="(diff-[a-z-]+)"></a>', section, flags=re.MULTILINE)
    return {anchor: text for anchor, text in zip(items[1::2], items[2::2], strict=True)}


def defined_tests(path: Path) -> set[str]:
    """Names of the test functions ``path`` defines at its top level."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name.startswith("test_")
    }


def test_every_difference_names_tests_that_exist() -> None:
    found = differences()
    assert len(found) >= 8, "the list of differences was not found under its heading"
    missing = []
    for anchor, text in found.items():
        named = re.findall(r"`(tests/[\w/]+\.py)::(test_\w+)`", text)
        if not named:
            missing.append(f"{anchor}: names no test")
        for file, test in named:
            path = ROOT / file
            if not path.is_file() or test not in defined_tests(path):
                missing.append(f"{anchor}: {file}::{test} does not exist")
    assert missing == []


def test_the_changelog_points_to_the_one_list() -> None:
    """The list is kept in docs/engine.md alone: the CHANGELOG and README point to it."""
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    [listed] = [
        section.split("\n#", 1)[0]
        for section in changelog.split("\n### Differences from LangGraph (deliberate)\n")[1:]
    ]
    assert listed.count("\n- ") + listed.startswith("- ") == 1  # one pointer, no list
    assert "docs/engine.md" in listed
    assert "[docs/engine.md](docs/engine.md)" in readme


def test_the_js_readme_lists_the_actions_the_widget_dispatches() -> None:
    """js/README.md's list of ``data-action`` buttons is the one actions.js dispatches, and its
    module table names every module of js/src/."""
    readme = (ROOT / "js" / "README.md").read_text(encoding="utf-8")
    actions_js = (ROOT / "js" / "src" / "actions.js").read_text(encoding="utf-8")
    dispatched = re.findall(r'action === "([a-z-]+)"', actions_js)
    [row] = [line for line in readme.splitlines() if line.startswith("| `src/actions.js` |")]
    listed = row.split("buttons: ", 1)[1].split(" (", 1)[0].split(", ")
    assert listed == dispatched
    modules = sorted(path.name for path in (ROOT / "js" / "src").glob("*.js"))
    assert sorted(re.findall(r"^\| `src/([\w-]+\.js)` \|", readme, re.MULTILINE)) == modules
