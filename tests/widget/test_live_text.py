"""A chat model's tokens in the widget while a run goes: ``_live_text`` grows as the model
writes, holds the whole message when the node ends, and empties when the step's checkpoint
lands; in a run the widget started, and in one it watches (from a cell) when that run's model
streams (docs/widget-protocol.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
from typing import Any

import pytest
from langchain_core.messages import AIMessageChunk
from test_timetravel import WAIT, FrontEnd, open_widget, until
from token_cells import ANSWER, PARTIAL, SETUP

from durable_debug.inspect.jsonable import CLIP_CHARS
from durable_debug.inspect.live_text import LiveText

LANGGRAPH = """\
from langgraph.graph import StateGraph, START, END, add_messages
from langgraph.checkpoint.memory import MemorySaver
from durable_debug import TimeTravel
"""


def chat_graph(thread_id: str, engine: str = "durable_debug") -> dict[str, Any]:
    """The cell's graph and thread, run once (its model does not wait outside the widget);
    ``engine="langgraph"``: the same graph built with LangGraph."""
    namespace: dict[str, Any] = {}
    source = SETUP.replace("THREAD", thread_id)
    if engine == "langgraph":
        lines = source.splitlines(keepends=True)
        ours = next(line for line in lines if line.startswith("from durable_debug import"))
        source = source.replace(ours, LANGGRAPH)
    with contextlib.redirect_stdout(io.StringIO()):
        # compiled as a cell is: without this module's ``from __future__ import annotations``
        cell = compile(source, "<cell>", "exec", dont_inherit=True)
        exec(cell, namespace)
    return namespace


def texts(front: FrontEnd) -> list[list[tuple[str, str]]]:
    """Every ``_live_text`` the browser got, as (node, text) pairs."""
    return [[(e["node"], e["text"]) for e in value] for value in front.updates("_live_text")]


@pytest.mark.parametrize("engine", ["durable_debug", "langgraph"])
async def test_a_rerun_streams_the_models_text_into_the_widget(engine: str) -> None:
    ns = chat_graph("tokens-1", engine)
    widget, front = await open_widget(ns["g"], ns["cfg"])
    step0 = widget.dag["nodes"][1]["id"]  # the input is in, agent runs next
    ns["go"].clear()

    await front.result("rerun", checkpoint_id=step0)
    # The model stops half way: what it wrote so far is shown while the run goes.
    await until(lambda: texts(front)[-1:] == [[("agent", PARTIAL)]], "the partial text")
    assert widget._running is True
    ns["go"].set()
    await until(lambda: not widget._running, "the rerun to end")

    shown = [value[0][1] for value in texts(front) if value]
    assert shown[-1] == ANSWER  # the whole message, before the checkpoint took it away
    assert all(ANSWER.startswith(text) for text in shown)
    assert [len(text) for text in shown] == sorted({len(text) for text in shown})
    assert widget._live_text == []  # gone once the checkpoint landed
    assert widget._status.endswith("done")
    entry = front.updates("_live_text")[-2][0]
    assert entry["chars"] == len(ANSWER) and not entry["cut"] and entry["id"]


async def test_a_streaming_run_from_a_cell_shows_its_text_too() -> None:
    """A run the widget watches: its model's chunks are seen beside the user's own stream,
    which yields what it yields without the widget."""
    ns = chat_graph("tokens-2")
    widget, front = await open_widget(ns["g"], ns["cfg"])
    assert (await front.result("watch"))["changed"] is False  # the widget is shown
    ns["go"].clear()

    async def users_run() -> list[str]:
        question = {"messages": [("user", "again")]}
        stream = ns["g"].astream(question, ns["cfg"], stream_mode="messages")
        return [chunk.content async for chunk, _metadata in stream]

    run = asyncio.ensure_future(users_run())
    await until(lambda: texts(front)[-1:] == [[("agent", PARTIAL)]], "the partial text")
    ns["go"].set()
    streamed = await asyncio.wait_for(run, WAIT)
    assert "".join(streamed) == ANSWER
    await until(lambda: texts(front)[-1:] == [[("agent", ANSWER)]], "the whole answer")
    assert (await front.result("watch"))["changed"] is True  # its checkpoint lands
    assert widget._live_text == []


async def test_a_run_from_a_cell_that_streams_no_messages_shows_no_live_text() -> None:
    """A model called with ``invoke`` in a run that streams no messages writes no tokens."""
    ns = chat_graph("tokens-3")
    widget, front = await open_widget(ns["g"], ns["cfg"])
    await front.result("watch")
    ns["go"].set()
    await asyncio.wait_for(ns["g"].ainvoke({"messages": [("user", "again")]}, ns["cfg"]), WAIT)
    assert (await front.result("watch"))["changed"] is True
    assert front.updates("_live_text") == [] and widget._live_text == []


def test_a_long_message_keeps_its_end_after_an_ellipsis() -> None:
    live = LiveText()
    metadata = {"langgraph_node": "agent"}
    assert live.add(AIMessageChunk(content="x" * CLIP_CHARS, id="m"), metadata)
    assert live.add(AIMessageChunk(content="END", id="m"), metadata)
    [entry] = live.entries()
    assert entry["text"] == "…" + "x" * (CLIP_CHARS - 3) + "END"
    assert entry["chars"] == CLIP_CHARS + 3 and entry["cut"]
    assert not live.add(AIMessageChunk(content="", id="m"), metadata)  # a tool call's piece
    assert live.clear() and live.entries() == []
