"""A diff as the widget sends it: light, and pointing at what changed.

:func:`~durable_debug.inspect.diff.diff_values` compares two states structurally; sending its
entries as they are would send both whole values of every changed channel (8.7 MB for two fat
checkpoints) and show two walls of text. :func:`diff_view` sends instead, per channel, the
changed paths first, each old and new value cut like a detail (``jsonable.clip``), a long
string changed into another as the lines around each change (a unified diff with
``LINE_CONTEXT`` lines of context), and the whole answer within ``DIFF_BYTES`` of JSON: past
it, the values are cut harder, then the paths past the budget are counted, not sent.

    diff_view(diff_values(a.values, b.values))
    # [{"channel": "doc", "change": "changed", "old": "…", "new": "…", "clipped": True,
    #   "changes": [{"path": "doc", "change": "changed", "old": "…", "new": "…",
    #                "lines": ["@@ -40,5 +40,5 @@", " a", "-b", "+B", " c"]}],
    #   "more": 0}]
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from durable_debug.inspect.diff import DiffEntry
from durable_debug.inspect.jsonable import clip_jsonable

__all__ = ["DIFF_BYTES", "LINE_CONTEXT", "diff_view"]

DIFF_BYTES = 256 * 1024
"""JSON bytes one diff answer stays within."""
LINE_CONTEXT = 3
"""Lines shown around each change of a long string."""
_LINES_FROM = 400
"""Characters from which a string changed into another string is shown as a line diff."""
_MAX_LINES = 400
"""Lines of one line diff at most (the rest counted)."""
_LINE_CHARS = 500
"""Characters of one line of a line diff at most."""


def _line_diff(old: str, new: str) -> list[str]:
    a, b = old.splitlines(), new.splitlines()
    # The lines both share at the start and the end, but the context kept, are left out of
    # the matching (difflib's cost grows with the lines it indexes): the hunks are the same,
    # their line numbers moved back by the lines left out at the start.
    size = min(len(a), len(b))
    head = 0
    while head < size and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < size - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    skip = max(0, head - LINE_CONTEXT)
    cut = max(0, tail - LINE_CONTEXT)
    lines = list(
        difflib.unified_diff(
            a[skip : len(a) - cut], b[skip : len(b) - cut], lineterm="", n=LINE_CONTEXT
        )
    )[2:]  # without the ---/+++ header
    lines = [
        _moved(line, skip)
        if line.startswith("@@")
        else line
        if len(line) <= _LINE_CHARS
        else f"{line[:_LINE_CHARS]}… ({len(line):,} characters)"
        for line in lines
    ]
    if len(lines) > _MAX_LINES:
        lines = [*lines[:_MAX_LINES], f"… {len(lines) - _MAX_LINES:,} more lines"]
    return lines


def _moved(hunk: str, skip: int) -> str:
    """A hunk's ``@@ -a[,n] +b[,m] @@`` line with both starts ``skip`` lines later."""
    if not skip:
        return hunk
    old, new = hunk[3:-3].split(" ")
    return f"@@ {_start_moved(old, skip)} {_start_moved(new, skip)} @@"


def _start_moved(side: str, skip: int) -> str:
    start, comma, length = side[1:].partition(",")
    return f"{side[0]}{int(start) + skip}{comma}{length}"


_TOO_BIG = "… ({}, too big for this diff: open the checkpoint)"


def _path_view(change: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A changed path as sent, and as sent when cut harder (a value too big for a detail
    said so, not shown): the line diff and each side converted once for both."""
    old, new = change["old"], change["new"]
    view: dict[str, Any] = {"path": change["path"], "change": change["change"]}
    if isinstance(old, str) and isinstance(new, str) and max(len(old), len(new)) >= _LINES_FROM:
        view["lines"] = _line_diff(old, new)
    harder = dict(view)
    for side, value in (("old", old), ("new", new)):
        shown, cut = clip_jsonable(value)
        view[side] = shown
        harder[side] = _TOO_BIG.format(type(value).__name__) if cut else shown
    return view, harder


def _entry_view(entry: DiffEntry) -> tuple[dict[str, Any], dict[str, Any]]:
    """A channel's entry as sent, and as sent when cut harder (without the channel's whole
    values: the paths say what changed)."""
    old, old_cut = clip_jsonable(entry["old"])
    new, new_cut = clip_jsonable(entry["new"])
    paths = [_path_view(dict(c)) for c in entry["changes"]]
    head = {"channel": entry["channel"], "change": entry["change"]}
    view = {
        **head,
        "old": old,
        "new": new,
        "clipped": old_cut or new_cut,
        "changes": [path for path, _ in paths],
        "more": 0,
    }
    harder = {
        **head,
        "old": None,
        "new": None,
        "clipped": True,
        "changes": [path for _, path in paths],
        "more": 0,
    }
    return view, harder


_ENVELOPE = 1024
"""Bytes kept for the message around the diff (the request's uuid, the JSON around it)."""


def _size(value: Any) -> int:
    return len(json.dumps(value).encode())  # ASCII escapes: the larger count


def diff_view(entries: list[DiffEntry], budget: int = DIFF_BYTES) -> list[dict[str, Any]]:
    """``entries`` JSON-ready for the widget, within ``budget`` bytes of JSON (see the module)."""
    budget -= _ENVELOPE
    views = [_entry_view(e) for e in entries]
    view = [plain for plain, _ in views]
    if _size(view) <= budget:
        return view
    view = [harder for _, harder in views]
    if _size(view) <= budget:
        return view
    # Still too big: keep paths while they fit, a path of each channel in turn (so a channel
    # with thousands of changes leaves room for the others), and count the rest per channel.
    used = _size([{**v, "changes": []} for v in view])
    kept: list[list[dict[str, Any]]] = [[] for _ in view]
    open_ = [bool(item["changes"]) for item in view]
    turn = 0
    while any(open_):
        for index, item in enumerate(view):
            if not open_[index]:
                continue
            change = item["changes"][turn]
            size = _size(change) + 2
            if used + size > budget:
                open_[index] = False
                continue
            kept[index].append(change)
            used += size
            if turn + 1 >= len(item["changes"]):
                open_[index] = False
        turn += 1
    for item, paths in zip(view, kept, strict=True):
        item["more"] = len(item["changes"]) - len(paths)
        item["changes"] = paths
    return view
