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
from durable_debug.inspect.jsonable import clip, to_jsonable

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
    lines = list(
        difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=LINE_CONTEXT)
    )[2:]  # without the ---/+++ header
    lines = [
        line if len(line) <= _LINE_CHARS else f"{line[:_LINE_CHARS]}… ({len(line):,} characters)"
        for line in lines
    ]
    if len(lines) > _MAX_LINES:
        lines = [*lines[:_MAX_LINES], f"… {len(lines) - _MAX_LINES:,} more lines"]
    return lines


def _path_view(change: dict[str, Any], harder: bool) -> dict[str, Any]:
    old, new = change["old"], change["new"]
    view: dict[str, Any] = {"path": change["path"], "change": change["change"]}
    if isinstance(old, str) and isinstance(new, str) and max(len(old), len(new)) >= _LINES_FROM:
        view["lines"] = _line_diff(old, new)
    for side, value in (("old", old), ("new", new)):
        shown, cut = clip(to_jsonable(value))
        if harder and cut:
            shown = f"… ({type(value).__name__}, too big for this diff: open the checkpoint)"
        view[side] = shown
    return view


def _entry_view(entry: DiffEntry, harder: bool) -> dict[str, Any]:
    old, old_cut = clip(to_jsonable(entry["old"]))
    new, new_cut = clip(to_jsonable(entry["new"]))
    if harder:  # the paths say what changed; the channel's whole values are left out
        old = new = None
    return {
        "channel": entry["channel"],
        "change": entry["change"],
        "old": old,
        "new": new,
        "clipped": old_cut or new_cut or harder,
        "changes": [_path_view(dict(c), harder) for c in entry["changes"]],
        "more": 0,
    }


_ENVELOPE = 1024
"""Bytes kept for the message around the diff (the request's uuid, the JSON around it)."""


def _size(value: Any) -> int:
    return len(json.dumps(value).encode())  # ASCII escapes: the larger count


def diff_view(entries: list[DiffEntry], budget: int = DIFF_BYTES) -> list[dict[str, Any]]:
    """``entries`` JSON-ready for the widget, within ``budget`` bytes of JSON (see the module)."""
    budget -= _ENVELOPE
    view = [_entry_view(e, harder=False) for e in entries]
    if _size(view) <= budget:
        return view
    view = [_entry_view(e, harder=True) for e in entries]
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
