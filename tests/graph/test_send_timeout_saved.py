"""A ``Send(..., timeout=...)`` paused before its task runs keeps its timeout in the saved
checkpoint: resumed in a new process's graph (a fresh saver on the same SQLite file), or
through one of LangGraph's own savers, its task still runs under the Send's timeout, not its
node's. ``push_message`` writes survive a save too."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.sqlite import SqliteSaver as LangGraphSqliteSaver
from typing_extensions import TypedDict

from durable_debug import END, START, Send, SqliteSaver, StateGraph
from durable_debug.errors import NodeTimeoutError
from durable_debug.graph.message import MessagesState, push_message
from durable_debug.types import TimeoutPolicy


class State(TypedDict, total=False):
    x: int


async def slow(state: State) -> State:
    await asyncio.sleep(5)
    return {"x": state["x"] + 1}


def build(saver: Any) -> Any:
    def route(state: State) -> list[Send]:
        return [Send("slow", state, timeout=TimeoutPolicy(idle_timeout=0.05))]

    return (
        StateGraph(State)
        .add_node("slow", slow, timeout=TimeoutPolicy(idle_timeout=30))
        .add_conditional_edges(START, route)
        .add_edge("slow", END)
        .compile(checkpointer=saver, interrupt_before=["slow"])
    )


async def test_a_paused_sends_timeout_is_saved_with_it(tmp_path: Path) -> None:
    cfg = {"configurable": {"thread_id": "t"}}
    async with SqliteSaver(tmp_path / "t.db") as saver:
        await build(saver).ainvoke({"x": 1}, cfg)
    async with SqliteSaver(tmp_path / "t.db") as saver:  # another saver: read from the file
        graph = build(saver)
        state = await graph.aget_state(cfg)
        assert state.next == ("slow",)
        with pytest.raises(NodeTimeoutError) as caught:
            await graph.ainvoke(None, cfg)
    seen = (caught.value.node, caught.value.kind, caught.value.idle_timeout)
    assert seen == ("slow", "idle", 0.05)


def test_a_paused_sends_timeout_is_saved_through_langgraphs_saver(tmp_path: Path) -> None:
    cfg = {"configurable": {"thread_id": "t"}}
    conn = sqlite3.connect(tmp_path / "lg.db", check_same_thread=False)
    try:
        build(LangGraphSqliteSaver(conn)).invoke({"x": 1}, cfg)
        stored = LangGraphSqliteSaver(conn).get_tuple(cfg)
        assert stored is not None
        (send,) = stored.checkpoint["channel_values"]["__pregel_tasks"]
        assert type(send).__module__ == "langgraph.types"  # LangGraph's own Send, readable by it
        assert send.timeout.idle_timeout == 0.05
        with pytest.raises(NodeTimeoutError) as caught:
            build(LangGraphSqliteSaver(conn)).invoke(None, cfg)
        assert caught.value.kind == "idle" and caught.value.idle_timeout == 0.05
    finally:
        conn.close()


async def test_pushed_messages_are_saved_in_the_state(tmp_path: Path) -> None:
    def chat(state: MessagesState) -> dict:
        push_message(AIMessage(content="pushed", id="p"))
        return {"messages": [AIMessage(content="returned", id="r")]}

    cfg = {"configurable": {"thread_id": "t"}}
    async with SqliteSaver(tmp_path / "m.db") as saver:
        graph = StateGraph(MessagesState).add_node("chat", chat).add_edge(START, "chat")
        await graph.compile(checkpointer=saver).ainvoke({"messages": []}, cfg)
    async with SqliteSaver(tmp_path / "m.db") as saver:
        state = await graph.compile(checkpointer=saver).aget_state(cfg)
    assert [(m.id, m.content) for m in state.values["messages"]] == [
        ("p", "pushed"),
        ("r", "returned"),
    ]


async def test_langgraphs_send_keeps_its_timeout_in_our_engine() -> None:
    import langgraph.types as lg

    def route(state: State) -> list[Any]:
        return [lg.Send("slow", state, timeout=lg.TimeoutPolicy(run_timeout=0.05))]

    graph = (
        StateGraph(State)
        .add_node("slow", slow, timeout=TimeoutPolicy(run_timeout=30))
        .add_conditional_edges(START, route)
        .compile()
    )
    with pytest.raises(NodeTimeoutError) as caught:
        await graph.ainvoke({"x": 1})
    assert (caught.value.kind, caught.value.run_timeout) == ("run", 0.05)
