""" "Show all" a page at a time: the `value` request with `page` answers one page of a big value
(characters of a string, items of a list, keys of a dict) and the offset of the next."""

from __future__ import annotations

import json
from typing import Any, TypedDict

from test_timetravel import open_widget

from durable_debug import START, MemorySaver, StateGraph

CONFIG = {"configurable": {"thread_id": "big-1"}}


class Big(TypedDict, total=False):
    text: str
    items: list[str]
    table: dict[str, Any]
    n: int


async def test_a_big_value_comes_a_page_at_a_time() -> None:
    text = "".join(chr(97 + i % 26) for i in range(2_000_000))
    graph = StateGraph(Big).add_node("a", lambda s: {"n": 1}).add_edge(START, "a")
    graph = graph.compile(checkpointer=MemorySaver())
    state = {"text": text, "items": [f"i{i}" for i in range(450)], "table": {"k": "v"}}
    await graph.ainvoke(state, CONFIG)
    widget, front = await open_widget(graph, CONFIG)
    latest = max(n["id"] for n in widget.dag["nodes"])

    first = await front.result("value", checkpoint_id=latest, channel="text", page=0)
    assert (first["kind"], first["offset"], first["total"], first["next"]) == (
        "text",
        0,
        2_000_000,
        100_000,
    )
    assert first["value"] == text[:100_000]
    assert len(json.dumps(first)) < 110_000  # a page, not the 2 MB
    pages, offset = [first["value"]], first["next"]
    while offset is not None:
        page = await front.result("value", checkpoint_id=latest, channel="text", page=offset)
        pages.append(page["value"])
        offset = page["next"]
    assert "".join(pages) == text and len(pages) == 20

    items = await front.result("value", checkpoint_id=latest, channel="items", page=400)
    assert (items["kind"], items["value"], items["next"]) == (
        "items",
        [f"i{i}" for i in range(400, 450)],
        None,
    )
    scalar = await front.result("value", checkpoint_id=latest, channel="n", page=0)
    assert (scalar["kind"], scalar["value"], scalar["next"]) == ("value", 1, None)
    # Without `page`, the whole value (what Edit needs).
    assert (await front.result("value", checkpoint_id=latest, channel="text"))["value"] == text
    error = await front.error("value", checkpoint_id=latest, channel="text", page=-1)
    assert "page is the offset to read from" in error
