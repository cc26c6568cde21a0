"""``BaseStore``: a store written against LangGraph's interface (``batch`` / ``abatch`` only)
works the same on both libraries, given to a graph whose nodes use ``get`` / ``put`` /
``search`` / ``delete`` / ``list_namespaces``; and the in-memory store runs LangGraph's
operations (``GetOp``, ``PutOp``, ``SearchOp``, ``ListNamespacesOp``) as LangGraph's does."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import pytest
from langgraph.store import base as lg_base
from langgraph.store.memory import InMemoryStore as LangGraphMemoryStore
from typing_extensions import TypedDict

import durable_debug
from durable_debug.store import base as our_base
from durable_debug.store.base import BaseStore
from durable_debug.store.memory import InMemoryStore

pytestmark = pytest.mark.parity

EPOCH = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def dict_store(base: Any) -> Any:
    """A store class implementing only LangGraph's batch methods, on ``base``'s types."""

    class DictStore(base.BaseStore):
        def __init__(self) -> None:
            self.items: dict[tuple[tuple[str, ...], str], Any] = {}
            self.ops: list[str] = []

        def batch(self, ops: Any) -> list[Any]:
            results: list[Any] = []
            for op in ops:
                self.ops.append(type(op).__name__)
                if isinstance(op, base.GetOp):
                    results.append(self.items.get((op.namespace, op.key)))
                elif isinstance(op, base.PutOp):
                    if op.value is None:
                        self.items.pop((op.namespace, op.key), None)
                    else:
                        self.items[(op.namespace, op.key)] = base.Item(
                            value=dict(op.value),
                            key=op.key,
                            namespace=op.namespace,
                            created_at=EPOCH,
                            updated_at=EPOCH,
                        )
                    results.append(None)
                elif isinstance(op, base.SearchOp):
                    found = [
                        base.SearchItem(
                            namespace=item.namespace,
                            key=item.key,
                            value=item.value,
                            created_at=EPOCH,
                            updated_at=EPOCH,
                        )
                        for (namespace, _), item in self.items.items()
                        if namespace[: len(op.namespace_prefix)] == op.namespace_prefix
                    ]
                    results.append(found[op.offset : op.offset + op.limit])
                elif isinstance(op, base.ListNamespacesOp):
                    prefixes = [
                        c.path for c in op.match_conditions or () if c.match_type == "prefix"
                    ]
                    names = sorted({ns for ns, _ in self.items})
                    results.append([ns for ns in names if all(ns[: len(p)] == p for p in prefixes)])
            return results

        async def abatch(self, ops: Any) -> list[Any]:
            return self.batch(ops)

    return DictStore


class State(TypedDict):
    log: list[Any]


def run_graph(api: Any, base: Any, store: Any, use_async: bool) -> dict[str, Any]:
    def remember(state: State, *, store: BaseStore) -> dict[str, Any]:
        assert isinstance(store, base.BaseStore)
        store.put(("users", "u1"), "prefs", {"lang": "fr"})
        store.put(("users", "u2"), "prefs", {"lang": "en"})
        store.put(("users", "u2"), "old", {"x": 1})
        store.delete(("users", "u2"), "old")
        got = store.get(("users", "u1"), "prefs")
        hits = store.search(("users",), limit=5)
        names = store.list_namespaces(prefix=("users",))
        return {"log": [got.value, sorted(h.key for h in hits), names]}

    async def aremember(state: State, *, store: BaseStore) -> dict[str, Any]:
        await store.aput(("users", "u1"), "prefs", {"lang": "fr"})
        await store.adelete(("users", "u1"), "missing")
        got = await store.aget(("users", "u1"), "prefs")
        hits = await store.asearch(("users",))
        names = await store.alist_namespaces()
        return {"log": [got.value, [h.key for h in hits], names]}

    builder = api.StateGraph(State)
    builder.add_node("remember", aremember if use_async else remember)
    builder.add_edge(api.START, "remember")
    graph = builder.compile(store=store)
    if use_async:
        result: dict[str, Any] = asyncio.run(graph.ainvoke({"log": []}))
        return result
    output: dict[str, Any] = graph.invoke({"log": []})
    return output


@pytest.mark.parametrize("use_async", [False, True])
def test_a_store_of_batch_methods_serves_a_graph_as_on_langgraph(use_async: bool) -> None:
    import langgraph.graph as lg_graph

    ours_store = dict_store(our_base)()
    theirs_store = dict_store(lg_base)()
    ours = run_graph(durable_debug, our_base, ours_store, use_async)
    theirs = run_graph(lg_graph, lg_base, theirs_store, use_async)
    assert ours == theirs
    assert ours_store.ops == theirs_store.ops


def test_the_memory_store_runs_langgraphs_operations() -> None:
    def ops(base: Any) -> list[Any]:
        return [
            base.PutOp(("docs", "a"), "1", {"t": "x"}),
            base.PutOp(("docs", "b"), "2", {"t": "y"}),
            base.GetOp(("docs", "a"), "1"),
            base.SearchOp(("docs",), filter={"t": "y"}),
            base.ListNamespacesOp(
                match_conditions=(base.MatchCondition("prefix", ("docs",)),), max_depth=2
            ),
            base.PutOp(("docs", "a"), "1", None),
            base.GetOp(("docs", "a"), "1"),
        ]

    def plain(results: list[Any]) -> list[Any]:
        def one(result: Any) -> Any:
            if isinstance(result, list):
                return [one(item) for item in result]
            if hasattr(result, "dict"):
                found = result.dict()
                return {k: v for k, v in found.items() if k not in ("created_at", "updated_at")}
            return result

        return [one(result) for result in results]

    ours = InMemoryStore()
    theirs = LangGraphMemoryStore()
    assert plain(ours.batch(ops(our_base))) == plain(theirs.batch(ops(lg_base)))
    assert plain(asyncio.run(ours.abatch([our_base.GetOp(("docs", "b"), "2")]))) == plain(
        asyncio.run(theirs.abatch([lg_base.GetOp(("docs", "b"), "2")]))
    )
    assert isinstance(ours, our_base.BaseStore)


def test_a_bad_namespace_is_refused_before_the_store_sees_it() -> None:
    store = dict_store(our_base)()
    for bad in [("a.b",), ("",)]:
        with pytest.raises(our_base.InvalidNamespaceError):
            store.get(bad, "k")
    with pytest.raises(our_base.InvalidNamespaceError, match="langgraph"):
        store.put(("langgraph", "x"), "k", {})
    with pytest.raises(our_base.InvalidNamespaceError, match="empty"):
        store.put((), "k", {})
    with pytest.raises(TypeError, match="not a store operation"):
        our_base.apply_op(InMemoryStore(), "get")  # type: ignore[arg-type]  # a wrong op on purpose
    assert store.ops == []
