"""The node cache beyond what the parity test covers: expiry, clearing, inputs the
serializer cannot hash."""

from __future__ import annotations

import pytest
from typing_extensions import TypedDict

from durable_debug import START, CachePolicy, InMemoryCache, StateGraph


class State(TypedDict):
    x: object
    out: int


def graph_with(cache: InMemoryCache, runs: list[object], ttl: float | None = None):
    def node(state: State) -> dict:
        runs.append(state["x"])
        return {"out": len(runs)}

    builder = StateGraph(State).add_node("node", node, cache_policy=CachePolicy(ttl=ttl))
    return builder.add_edge(START, "node").compile(cache=cache)


def test_entries_expire_after_ttl_and_can_be_cleared() -> None:
    now = [0.0]
    cache = InMemoryCache(clock=lambda: now[0])
    runs: list[object] = []
    graph = graph_with(cache, runs, ttl=10)
    assert graph.invoke({"x": 1}) == {"x": 1, "out": 1}
    now[0] = 9.5
    assert graph.invoke({"x": 1}) == {"x": 1, "out": 1}  # cached
    now[0] = 10.0
    assert graph.invoke({"x": 1}) == {"x": 1, "out": 2}  # expired: ran again
    cache.clear(["node"])
    assert len(cache) == 0
    assert graph.invoke({"x": 1}) == {"x": 1, "out": 3}


def test_an_input_the_serializer_cannot_hash_runs_the_node_every_time() -> None:
    runs: list[object] = []
    graph = graph_with(InMemoryCache(), runs)
    thing = object()
    graph.invoke({"x": thing})
    graph.invoke({"x": thing})
    assert runs == [thing, thing]


def test_a_failing_key_func_names_the_node() -> None:
    def key(state: object) -> str:
        raise KeyError("missing")

    builder = StateGraph(State).add_node(
        "node", lambda s: {"out": 1}, cache_policy=CachePolicy(key_func=key)
    )
    graph = builder.add_edge(START, "node").compile(cache=InMemoryCache())
    with pytest.raises(ValueError, match="key_func of node 'node' failed.*KeyError"):
        graph.invoke({"x": 1})
