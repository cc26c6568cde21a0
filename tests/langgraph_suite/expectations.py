"""The expectations file: every LangGraph test not expected to pass on durable_debug, grouped
under its reason.

Format (``expectations.txt``)::

    # comment
    [missing: langgraph.func.entrypoint]
    tests/test_pregel.py::test_imp_task[memory]
    tests/test_pregel.py::test_imp_task[sqlite]

An id without ``::`` stands for every test of that file (and the file failing to import).
Reasons:

``private: langgraph.<module or name>``
    the test uses a private LangGraph module or name, or patches one (no counterpart here);
``missing: langgraph.<public name>``
    the test needs a public LangGraph API durable_debug lacks;
``difference: <anchor>``
    we differ on purpose; the anchor is one of docs/engine.md's (``<a id="...">``);
``bug: <one-line cause>``
    a cause we have not fixed yet;
``flaky: <cause>``
    passes or fails by timing: either outcome is accepted;
``fails on langgraph`` (optionally ``: <detail>``)
    fails (or skips) on the installed LangGraph with this harness: not run on durable_debug;
``todo: <first line of the error>``
    written by ``--update`` for a new failure; the normal test suite rejects it until someone
    replaces it with one of the reasons above.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXPECTATIONS = HERE / "expectations.txt"
ENGINE_DOC = HERE.parents[1] / "docs" / "engine.md"

KINDS = ("private", "missing", "difference", "bug", "flaky", "fails on langgraph", "todo")
"""Reason kinds, in the order the file lists them."""

FAILS_ON_LANGGRAPH = "fails on langgraph"

_DOTTED = r"langgraph(\.[A-Za-z_][A-Za-z0-9_]*)+"
_HEADER = re.compile(r"^\[(?P<reason>.+)\]$")


class ExpectationsError(ValueError):
    """The expectations file is malformed; the message names the line."""


@dataclass(frozen=True)
class Entry:
    """One test id (or file) with the reason it is not expected to pass."""

    test_id: str
    reason: str
    line: int = 0


def kind(reason: str) -> str:
    """The kind of a reason (``missing``, ``bug``, ``fails on langgraph`` …)."""
    if reason == FAILS_ON_LANGGRAPH or reason.startswith(FAILS_ON_LANGGRAPH + ":"):
        return FAILS_ON_LANGGRAPH
    return reason.split(":", 1)[0]


def parse(text: str, source: str = "expectations.txt") -> dict[str, Entry]:
    """Read the file's entries by test id. Raises ExpectationsError naming the line of an id
    outside a section, a duplicate id or an empty section header."""
    entries: dict[str, Entry] = {}
    reason: str | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        header = _HEADER.match(line)
        if header:
            reason = header.group("reason").strip()
            if not reason:
                raise ExpectationsError(f"{source}:{number}: empty reason in {line!r}")
            continue
        if reason is None:
            raise ExpectationsError(
                f"{source}:{number}: test id {line!r} comes before any [reason] header"
            )
        if line in entries:
            raise ExpectationsError(
                f"{source}:{number}: {line!r} is listed twice (first on line {entries[line].line})"
            )
        entries[line] = Entry(line, reason, number)
    return entries


def load(path: Path = EXPECTATIONS) -> dict[str, Entry]:
    """Parse the expectations file (an absent file has no entries)."""
    if not path.exists():
        return {}
    return parse(path.read_text(encoding="utf-8"), str(path))


HEADER_COMMENT = """\
# LangGraph's own tests (pinned sdist, see scripts/langgraph-suite.sh) that are not expected to
# pass on durable_debug, grouped under their reason; tests/langgraph_suite/expectations.py
# describes the format and the reasons. scripts/langgraph-suite.sh fails on a test that fails
# and is not listed, and on a listed test that passes. Rewrite it with
# scripts/langgraph-suite.sh --update (reasons already given are kept; a new failure gets a
# "todo:" reason to replace).
"""


def format_entries(entries: Iterable[Entry]) -> str:
    """The file's text for ``entries``: sections by kind, then reason, ids sorted."""
    by_reason: dict[str, list[str]] = {}
    for entry in entries:
        by_reason.setdefault(entry.reason, []).append(entry.test_id)

    def order(reason: str) -> tuple[int, str]:
        k = kind(reason)
        return (KINDS.index(k) if k in KINDS else len(KINDS), reason)

    parts = [HEADER_COMMENT]
    for reason in sorted(by_reason, key=order):
        ids = sorted(by_reason[reason])
        parts.append(f"\n[{reason}]\n" + "".join(f"{i}\n" for i in ids))
    return "".join(parts)


def engine_anchors(doc: Path = ENGINE_DOC) -> set[str]:
    """The anchors of docs/engine.md: explicit ``<a id="...">`` ones and heading slugs."""
    text = doc.read_text(encoding="utf-8")
    anchors = set(re.findall(r'<a\s+(?:id|name)="([^"]+)"', text))
    for heading in re.findall(r"^#+\s+(.+)$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchors.add(slug)
    return anchors


def reason_problem(reason: str, anchors: set[str]) -> str | None:
    """Why ``reason`` is not well-formed, or None when it is."""
    k = kind(reason)
    detail = reason[len(k) :].lstrip(":").strip() if k != FAILS_ON_LANGGRAPH else ""
    if k == "private":
        if not re.fullmatch(_DOTTED, detail) or not any(
            part.startswith("_") for part in detail.split(".")[1:]
        ):
            return f"{reason!r}: 'private:' needs a private dotted langgraph name"
    elif k == "missing":
        if not re.fullmatch(_DOTTED, detail):
            return f"{reason!r}: 'missing:' needs the dotted langgraph name we lack"
    elif k == "difference":
        if detail not in anchors:
            return f"{reason!r}: docs/engine.md has no anchor {detail!r}"
    elif k in ("bug", "flaky"):
        if not detail or "\n" in detail:
            return f"{reason!r}: '{k}:' needs a one-line cause"
    elif k == FAILS_ON_LANGGRAPH:
        if reason != FAILS_ON_LANGGRAPH and not reason[len(k) + 1 :].strip():
            return f"{reason!r}: nothing after 'fails on langgraph:'"
    elif k == "todo":
        return f"{reason!r}: a failure --update added; replace 'todo:' with its cause"
    else:
        return f"{reason!r}: unknown kind {k!r} (one of {', '.join(KINDS[:-1])})"
    return None


def covering(test_id: str, entries: Mapping[str, Entry]) -> Entry | None:
    """The entry for ``test_id``: its own, or its file's."""
    entry = entries.get(test_id)
    if entry is None:
        entry = entries.get(test_id.split("::", 1)[0])
    return entry
