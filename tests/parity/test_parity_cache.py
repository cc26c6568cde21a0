"""``cache_policy`` with ``InMemoryCache`` on both libraries: a node whose input was seen
before does not run; its cached writes are saved and streamed (marked as cached)."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def cache_names(api: Api):
    if api.name == "langgraph":
        from langgraph.cache.memory import InMemoryCache
        from langgraph.types import CachePolicy
    else:
        from durable_debug import CachePolicy, InMemoryCache
    return CachePolicy, InMemoryCache


def test_cached_node_runs_once_per_input():
    def scenario(api: Api, trace: Trace) -> None:
        CachePolicy, InMemoryCache = cache_names(api)

        def slow(state: State) -> dict:
            trace.ran("slow")
            return {"log": [state["x"] * 2]}

        def after(state: State) -> dict:
            trace.ran("after")
            return {"log": ["after"]}

        graph = (
            api.StateGraph(State)
            .add_node("slow", slow, cache_policy=CachePolicy())
            .add_node("after", after)
            .add_edge(api.START, "slow")
            .add_edge("slow", "after")
            .compile(checkpointer=api.MemorySaver(), cache=InMemoryCache())
        )
        for thread, x in (("1", 3), ("2", 3), ("3", 4)):
            cfg = {"configurable": {"thread_id": thread}}
            trace.call(f"updates {thread}", graph.stream, {"x": x}, cfg, stream_mode="updates")
        cfg = {"configurable": {"thread_id": "2"}}
        trace.state("state", graph.get_state(cfg))
        trace.history("history", graph.get_state_history(cfg))
        trace.call("invoke", graph.invoke, {"x": 4}, {"configurable": {"thread_id": "4"}})
        keyed = (
            api.StateGraph(State)
            .add_node("slow", slow, cache_policy=CachePolicy(key_func=lambda s: str(s["x"] % 2)))
            .add_edge(api.START, "slow")
            .compile(cache=InMemoryCache())
        )
        trace.call("odd", keyed.invoke, {"x": 1})
        trace.call("odd again", keyed.invoke, {"x": 3})

    ours = check_parity(scenario)
    assert ours["executions"] == {"after": 4, "slow": 3}
