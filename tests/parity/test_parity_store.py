"""``InMemoryStore`` on both libraries: put / get / search (namespace prefix, filters,
limit, offset) / delete / list_namespaces, sync and async, and the errors for bad
namespaces."""

from __future__ import annotations

import pytest
from parity_harness import Api, Trace, acheck_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


def store_for(api: Api):
    if api.name == "langgraph":
        from langgraph.store.memory import InMemoryStore
    else:
        from durable_debug.store.memory import InMemoryStore
    return InMemoryStore()


def items(found) -> list:
    """Items as comparable data (timestamps differ between runs)."""
    if found is None:
        return None
    single = not isinstance(found, list)
    shown = [
        (tuple(i.namespace), i.key, i.value, getattr(i, "score", "no score"))
        for i in ([found] if single else found)
    ]
    return shown[0] if single else shown


async def test_store_api_matches():
    async def scenario(api: Api, trace: Trace) -> None:
        store = store_for(api)
        store.put(("users", "u1"), "prefs", {"lang": "fr", "age": 30, "tags": ["a"]})
        store.put(("users", "u2"), "prefs", {"lang": "en", "age": 17})
        store.put(("notes", "u1"), "n", {"text": "hi", "nested": {"x": 1}})
        await store.aput(("docs",), "d1", {"lang": "fr"})
        store.put(("users", "u1"), "prefs", {"lang": "de", "age": 31})  # replaces
        trace.note("get", items(store.get(("users", "u1"), "prefs")))
        trace.note("aget", items(await store.aget(("docs",), "d1")))
        trace.note("all", items(store.search(("users",))))
        trace.note("root", items(store.search(())))
        trace.note("eq", items(store.search(("users",), filter={"lang": "en"})))
        trace.note("gt", items(store.search(("users",), filter={"age": {"$gt": 18}})))
        trace.note("ne", items(store.search(("users",), filter={"lang": {"$ne": "de"}})))
        trace.note("nested", items(store.search((), filter={"nested": {"x": 1}})))
        trace.note("list", items(store.search((), filter={"tags": ["a"]})))
        trace.note("page", items(store.search(("users",), limit=1, offset=1)))
        trace.note("query ignored", items(await store.asearch(("docs",), query="french")))
        trace.note("namespaces", store.list_namespaces())
        trace.note("depth", store.list_namespaces(max_depth=1))
        trace.note("prefix", store.list_namespaces(prefix=("users", "*")))
        trace.note("suffix", store.list_namespaces(suffix=("u2",)))
        # As in LangGraph, get() on a missing namespace adds it to list_namespaces()
        trace.note("missing", items(store.get(("users", "u9"), "prefs")))
        trace.note("namespaces after a read", store.list_namespaces())
        store.delete(("users", "u2"), "prefs")
        await store.adelete(("docs",), "d1")
        store.put(("notes", "u1"), "n", None)
        trace.note("after delete", items(store.search(())))
        for label, namespace in [
            ("empty", ()),
            ("period", ("a.b",)),
            ("reserved", ("langgraph", "x")),
            ("empty label", ("a", "")),
        ]:
            trace.call(label, store.put, namespace, "k", {"v": 1}, message=False)

    await acheck_parity(scenario)


class Memory(TypedDict):
    user: str
    facts: list


async def test_nodes_read_and_write_the_compiled_store():
    async def scenario(api: Api, trace: Trace) -> None:
        if api.name == "langgraph":
            from langgraph.config import get_store
        else:
            from durable_debug import get_store

        def remember(state: Memory, *, store) -> dict:
            trace.ran("remember")
            namespace = ("memories", state["user"])
            count = len(store.search(namespace))
            store.put(namespace, f"fact-{count}", {"text": f"fact {count}"})
            return {}

        async def recall(state: Memory, config) -> dict:
            trace.ran("recall")
            found = await get_store().asearch(("memories", state["user"]))
            return {"facts": [item.value["text"] for item in found]}

        store = store_for(api)
        graph = (
            api.StateGraph(Memory)
            .add_node("remember", remember)
            .add_node("recall", recall)
            .add_edge(api.START, "remember")
            .add_edge("remember", "recall")
            .compile(checkpointer=api.MemorySaver(), store=store)
        )
        for thread in ("t1", "t2"):  # the store is shared by every thread
            cfg = {"configurable": {"thread_id": thread}}
            await trace.run(thread, graph.ainvoke({"user": "ada", "facts": []}, cfg))
        trace.note("in store", items(store.search(("memories",))))

    await acheck_parity(scenario)
