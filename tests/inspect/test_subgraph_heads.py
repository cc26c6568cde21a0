"""The widget asks for a thread's subgraph namespaces on every click.

On durable_debug's SQLite saver they come from one query over the checkpoint rows (on its
memory saver from its rows in memory), which decodes no state: it must give what listing
every checkpoint of the thread gives.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import Any

import pytest
from typing_extensions import TypedDict

from durable_debug import END, START, Command, MemorySaver, SqliteSaver, StateGraph, interrupt
from durable_debug.inspect.thread import alist_thread, asubgraph_namespaces, subgraph_namespaces


class S(TypedDict, total=False):
    text: str


def nested_app(saver: Any) -> Any:
    """parent → mid (a subgraph) → inner (a subgraph of it) that asks a question."""

    def ask(state: S) -> S:
        return {"text": f"{state['text']} {interrupt('ok?')}"}

    inner = StateGraph(S).add_node("ask", ask).add_edge(START, "ask").add_edge("ask", END)
    mid = (
        StateGraph(S)
        .add_node("prep", lambda s: {"text": s["text"] + " prepped"})
        .add_node("inner", inner.compile())
        .add_edge(START, "prep")
        .add_edge("prep", "inner")
        .add_edge("inner", END)
    )
    return (
        StateGraph(S)
        .add_node("mid", mid.compile())
        .add_edge(START, "mid")
        .add_edge("mid", END)
        .compile(checkpointer=saver)
    )


async def test_namespaces_from_the_rows_equal_those_of_the_full_listing(tmp_path):
    path = tmp_path / "sub.db"
    async with SqliteSaver(str(path)) as saver:
        app = nested_app(saver)
        for thread in ("a", "b"):
            cfg = {"configurable": {"thread_id": thread}}
            await app.ainvoke({"text": thread}, cfg)  # paused inside inner
            await app.ainvoke(Command(resume="yes"), cfg)
        fast = await asubgraph_namespaces(app, "a")
        full = subgraph_namespaces(await alist_thread(app, "a"))
        assert fast == full
        assert [ns.count("|") for ns in fast] == [0, 1]  # mid, then mid|inner
        mid, inner = fast
        assert mid.startswith("mid:") and inner.startswith(mid + "|inner:")
        assert fast[mid] is not None and fast[inner] is not None  # the checkpoints they ran from
        assert await asubgraph_namespaces(app, "no-such-thread") == {}

        # No state is decoded: with every blob gone the full listing fails, this still answers.
        with closing(sqlite3.connect(path)) as raw:
            raw.execute("DELETE FROM checkpoint_blobs")
            raw.commit()
        assert await asubgraph_namespaces(app, "a") == full
        with pytest.raises(Exception, match="blob"):
            await alist_thread(app, "a")


async def test_namespaces_on_the_memory_saver_equal_those_of_the_full_listing():
    app = nested_app(MemorySaver())
    cfg = {"configurable": {"thread_id": "m"}}
    await app.ainvoke({"text": "m"}, cfg)
    await app.ainvoke(Command(resume="yes"), cfg)
    fast = await asubgraph_namespaces(app, "m")
    assert fast == subgraph_namespaces(await alist_thread(app, "m"))
    assert len(fast) == 2 and await asubgraph_namespaces(app, "none") == {}
