"""A diff the widget sends is light and points at what changed: changed paths first, a long
string as the lines around each change, and never more than DIFF_BYTES of JSON, however fat
the two checkpoints are."""

from __future__ import annotations

import json
import operator
from typing import Annotated, Any, TypedDict

from test_timetravel import open_widget

from durable_debug import START, MemorySaver, StateGraph
from durable_debug.inspect.diff import diff_values
from durable_debug.inspect.diff_view import DIFF_BYTES, LINE_CONTEXT, diff_view

CONFIG = {"configurable": {"thread_id": "fat-1"}}


class Fat(TypedDict, total=False):
    doc: str
    rows: list[dict[str, Any]]
    log: Annotated[list[str], operator.add]


def fat_doc(changed: int | None = None) -> str:
    lines = [f"line {i}: " + "x" * 60 for i in range(40_000)]  # about 2.8 MB
    if changed is not None:
        lines[changed] = f"line {changed}: CHANGED"
    return "\n".join(lines)


async def test_a_diff_of_two_fat_checkpoints_sends_at_most_the_budget_and_says_where() -> None:
    rows = [{"id": i, "payload": "y" * 200} for i in range(10_000)]  # about 2.3 MB
    edited = [dict(r) for r in rows]
    for i in range(0, 10_000, 7):  # 1,429 changed rows
        edited[i]["payload"] = "z"

    def grow(state: Fat) -> Fat:
        return {"doc": fat_doc(changed=20_000), "rows": edited, "log": ["grew"]}

    graph = (
        StateGraph(Fat)
        .add_node("grow", grow)
        .add_edge(START, "grow")
        .compile(checkpointer=MemorySaver())
    )
    await graph.ainvoke({"doc": fat_doc(), "rows": rows, "log": []}, CONFIG)
    widget, front = await open_widget(graph, CONFIG)
    before, after = sorted(n["id"] for n in widget.dag["nodes"])[-2:]
    answer = await front.request("diff", a=before, b=after)
    sent = len(json.dumps(answer).encode())
    assert sent <= DIFF_BYTES, sent
    by_channel = {e["channel"]: e for e in answer["result"]}

    doc = by_channel["doc"]["changes"][0]
    assert doc["path"] == "doc"
    assert doc["lines"][0].startswith("@@ -")  # the window around the one changed line
    assert "-line 20000: " + "x" * 60 in doc["lines"]
    assert "+line 20000: CHANGED" in doc["lines"]
    assert len(doc["lines"]) == 1 + 2 * LINE_CONTEXT + 2

    changed_rows = by_channel["rows"]
    paths = [c["path"] for c in changed_rows["changes"]]
    assert paths[:2] == ["rows[0].payload", "rows[7].payload"]  # the paths, not two walls
    assert len(paths) + changed_rows["more"] == 1_429
    assert by_channel["log"]["changes"] == [
        {"path": "log[0]", "change": "added", "old": None, "new": "grew"}
    ]


def test_a_small_diff_is_sent_as_it_is() -> None:
    entries = diff_values({"a": "A", "n": [1]}, {"a": "B", "n": [1, 2]})
    view = diff_view(entries)
    assert [(v["channel"], v["old"], v["new"], v["more"]) for v in view] == [
        ("a", "A", "B", 0),
        ("n", [1], [1, 2], 0),
    ]
    assert view[1]["changes"] == [{"path": "n[1]", "change": "added", "old": None, "new": 2}]


def test_a_long_strings_line_diff_numbers_its_hunks_in_the_whole_text() -> None:
    old = "\n".join(f"line {i}" for i in range(1000))
    new = old.replace("line 500\n", "line 500 changed\n").replace("line 998\n", "")
    (entry,) = diff_view(diff_values({"doc": old}, {"doc": new}))
    (change,) = entry["changes"]
    assert change["lines"] == [
        "@@ -498,7 +498,7 @@",
        *[f" line {i}" for i in range(497, 500)],
        "-line 500",
        "+line 500 changed",
        *[f" line {i}" for i in range(501, 504)],
        "@@ -996,5 +996,4 @@",
        *[f" line {i}" for i in range(995, 998)],
        "-line 998",
        " line 999",
    ]
