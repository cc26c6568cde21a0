"""``InMemoryStore(index=...)``: semantic search with a user-given embedding function, ranked
as LangGraph ranks it (a deterministic fake embedding: no network)."""

from __future__ import annotations

import pytest
from langchain_core.embeddings import Embeddings
from parity_harness import Api, Trace, acheck_parity

pytestmark = pytest.mark.parity

WORDS = ("cat", "dog", "pizza", "pasta", "rain", "sun")


def embed(texts: list[str]) -> list[list[float]]:
    """One dimension per word of WORDS: how often it occurs (plus a constant)."""
    return [[float(t.lower().count(w)) for w in WORDS] + [0.1] for t in texts]


class FakeEmbeddings(Embeddings):
    """LangChain ``Embeddings`` over :func:`embed`."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return embed(texts)

    def embed_query(self, text: str) -> list[float]:
        return embed([text])[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return embed(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return embed([text])[0]


def store_for(api: Api, index: dict):
    if api.name == "langgraph":
        from langgraph.store.memory import InMemoryStore
    else:
        from durable_debug.store.memory import InMemoryStore
    return InMemoryStore(index=index)


def ranked(found) -> list:
    return [
        (tuple(i.namespace), i.key, None if i.score is None else round(i.score, 6)) for i in found
    ]


def fill(store) -> None:
    store.put(("docs",), "pets", {"text": "cat and dog", "kind": "animal"})
    store.put(("docs",), "food", {"text": "pizza pizza pasta", "kind": "food"})
    store.put(("docs",), "weather", {"text": "rain then sun", "kind": "weather"})
    store.put(("docs", "more"), "cats", {"text": "cat cat cat", "kind": "animal"})
    store.put(("docs",), "unindexed", {"text": "cat"}, index=False)


async def test_search_ranks_by_similarity_with_a_plain_callable():
    async def scenario(api: Api, trace: Trace) -> None:
        store = store_for(api, {"dims": len(WORDS) + 1, "embed": embed, "fields": ["text"]})
        fill(store)
        trace.note("cat", ranked(store.search(("docs",), query="cat")))
        trace.note("food", ranked(store.search(("docs",), query="some pasta please", limit=2)))
        trace.note("offset", ranked(store.search(("docs",), query="cat", offset=1, limit=2)))
        trace.note(
            "filtered", ranked(store.search(("docs",), query="cat", filter={"kind": "animal"}))
        )
        trace.note("no query", ranked(store.search(("docs",))))
        store.put(("docs",), "pets", {"text": "sun sun", "kind": "animal"})
        trace.note("after overwrite", ranked(store.search(("docs",), query="sun", limit=2)))
        store.delete(("docs",), "weather")
        trace.note("after delete", ranked(await store.asearch(("docs",), query="rain")))

    ours = await acheck_parity(scenario)
    assert ours["cat"][0][1] == "cats"
    assert ours["cat"][-1] == (("docs",), "unindexed", None)


async def test_search_with_langchain_style_embeddings_and_whole_value():
    async def scenario(api: Api, trace: Trace) -> None:
        store = store_for(api, {"dims": len(WORDS) + 1, "embed": FakeEmbeddings()})
        await store.aput(("k",), "a", {"title": "dog", "body": {"words": ["dog", "dog"]}})
        await store.aput(("k",), "b", {"title": "pizza", "body": {"words": ["rain"]}})
        store.put(("k",), "c", {"title": "x", "tags": ["pizza", "pasta"]}, index=["tags[*]"])
        trace.note("dog", ranked(await store.asearch(("k",), query="dog")))
        trace.note("pizza", ranked(store.search(("k",), query="pizza pasta")))

    ours = await acheck_parity(scenario)
    assert ours["dog"][0][1] == "a"
