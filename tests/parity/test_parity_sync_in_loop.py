"""The sync API called from inside a running event loop, as a Jupyter cell does: invoke,
get_state, stream, update_state and get_state_history inside an ``async def`` test."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated

import pytest
from parity_harness import Api, Trace, acheck_parity, durable_api
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    topic: str
    log: Annotated[list, operator.add]
    answer: str


def sync_graph(api: Api, trace: Trace) -> object:
    """START → a → ask (interrupts) → END, with sync nodes."""

    def a(state: State) -> dict:
        trace.ran("a")
        return {"log": ["a"]}

    def ask(state: State) -> dict:
        trace.ran("ask")
        return {"answer": api.interrupt(f"about {state['topic']}?"), "log": ["ask"]}

    return (
        api.StateGraph(State)
        .add_node("a", a)
        .add_node("ask", ask)
        .add_edge(api.START, "a")
        .add_edge("a", "ask")
        .compile(checkpointer=api.MemorySaver())
    )


async def test_sync_methods_with_sync_nodes_inside_a_running_loop():
    async def scenario(api: Api, trace: Trace) -> None:
        asyncio.get_running_loop()  # the scenario really runs inside a loop
        g = sync_graph(api, trace)
        cfg = {"configurable": {"thread_id": "cell"}}
        trace.call("invoke", g.invoke, {"topic": "owls", "log": [], "answer": ""}, cfg)
        trace.state("paused", g.get_state(cfg))
        trace.call("stream resume", g.stream, api.Command(resume="yes"), cfg, stream_mode="updates")
        trace.call("update", g.update_state, cfg, {"topic": "bats"})
        trace.history("history", g.get_state_history(cfg))

    ours = await acheck_parity(scenario)
    assert ours["stream resume"] == [{"ask": {"answer": "yes", "log": ["ask"]}}]


async def test_durable_sync_methods_with_async_nodes_inside_a_running_loop():
    """Async nodes through the sync API inside a loop: durable_debug only.

    LangGraph's ``invoke`` refuses async nodes anywhere ("No synchronous function provided
    to 'a'"), so there is nothing to compare; this pins what a notebook user of
    durable_debug gets.
    """
    api = durable_api()
    trace = Trace(api)

    async def a(state: State) -> dict:
        trace.ran("a")
        await asyncio.sleep(0)
        return {"log": ["a"]}

    async def ask(state: State) -> dict:
        trace.ran("ask")
        return {"answer": api.interrupt("sure?"), "log": ["ask"]}

    g = (
        api.StateGraph(State)
        .add_node("a", a)
        .add_node("ask", ask)
        .add_edge(api.START, "a")
        .add_edge("a", "ask")
        .compile(checkpointer=api.MemorySaver())
    )
    cfg = {"configurable": {"thread_id": "cell"}}
    first = g.invoke({"topic": "owls", "log": [], "answer": ""}, cfg)
    assert [i.value for i in first["__interrupt__"]] == ["sure?"]
    assert g.get_state(cfg).next == ("ask",)
    assert list(g.stream(api.Command(resume="yes"), cfg, stream_mode="values"))[-1] == {
        "topic": "owls",
        "log": ["a", "ask"],
        "answer": "yes",
    }
    assert [s.metadata["step"] for s in g.get_state_history(cfg)] == [2, 1, 0, -1]
    assert trace.executions == {"a": 1, "ask": 2}
