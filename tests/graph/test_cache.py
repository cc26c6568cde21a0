"""The node cache beyond what the parity test covers: expiry, clearing, inputs the
serializer cannot hash, and LangGraph's cache interface (a subclass overriding ``set``, and
LangGraph's own caches given to our engine)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typing_extensions import TypedDict

from durable_debug import START, CachePolicy, InMemoryCache, StateGraph
from durable_debug.cache.base import BaseCache


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
    graph.clear_cache(["node"])
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


class CountingCache(InMemoryCache[Any]):
    """A user's cache written against LangGraph's interface: ``set`` takes a mapping."""

    def __init__(self) -> None:
        super().__init__()
        self.sets: list[list[Any]] = []
        self.gets = 0

    def get(self, keys: Any) -> Any:
        self.gets += 1
        return super().get(keys)

    def set(self, pairs: Any) -> None:
        self.sets.append(list(pairs))
        super().set(pairs)


def test_a_subclass_overriding_langgraphs_methods_sees_each_miss_once() -> None:
    cache = CountingCache()
    runs: list[object] = []
    graph = graph_with(cache, runs)
    graph.invoke({"x": 1})
    graph.invoke({"x": 1})
    assert runs == [1]
    assert len(cache.sets) == 1  # the hit is not written back
    (((ns, key),),) = cache.sets
    assert ns[0] == "__pregel_ns_writes" and ns[-1] == "node" and isinstance(key, str)
    assert cache.gets == 2
    assert isinstance(cache, BaseCache)


def test_a_cache_must_implement_langgraphs_methods() -> None:
    class Partial(BaseCache[Any]):
        def get(self, keys: Any) -> Any:
            return {}

    with pytest.raises(TypeError, match="abstract"):
        Partial()  # type: ignore[abstract]  # the point: it lacks set, clear and the twins


def _langgraph_caches(tmp_path: Path) -> list[Any]:
    from langgraph.cache.memory import InMemoryCache as LangGraphMemory
    from langgraph.cache.sqlite import SqliteCache

    return [LangGraphMemory(), SqliteCache(path=str(tmp_path / "cache.db"))]


@pytest.mark.parametrize("which", [0, 1], ids=["langgraph-memory", "langgraph-sqlite"])
def test_langgraphs_own_caches_serve_our_engine(tmp_path: Path, which: int) -> None:
    cache = _langgraph_caches(tmp_path)[which]
    runs: list[object] = []
    graph = graph_with(cache, runs)
    assert graph.invoke({"x": 1}) == {"x": 1, "out": 1}
    assert graph.invoke({"x": 1}) == {"x": 1, "out": 1}  # from LangGraph's cache
    assert graph.invoke({"x": 2}) == {"x": 2, "out": 2}
    graph.clear_cache()
    assert graph.invoke({"x": 1}) == {"x": 1, "out": 3}
    assert runs == [1, 2, 1]


async def test_the_async_twins_clear_what_a_run_cached() -> None:
    cache = InMemoryCache[Any]()
    runs: list[object] = []
    graph = graph_with(cache, runs)
    await graph.ainvoke({"x": 1})
    assert len(cache) == 1
    await graph.aclear_cache()
    assert len(cache) == 0
    assert await cache.aget([(("ns",), "k")]) == {}
    await cache.aset({(("ns",), "k"): ([("out", 5)], None)})
    assert await cache.aget([(("ns",), "k")]) == {(("ns",), "k"): [("out", 5)]}
    await cache.aclear([("ns",)])
    assert len(cache) == 0
