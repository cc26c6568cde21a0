"""``InMemoryStore(index=...)``: bad embedding settings and outputs get errors naming them."""

from __future__ import annotations

import pytest

from durable_debug.store.memory import InMemoryStore


def two_dims(texts: list[str]) -> list[list[float]]:
    return [[float(len(t)), 1.0] for t in texts]


def test_a_vector_of_the_wrong_size_names_the_item():
    store = InMemoryStore(index={"dims": 3, "embed": two_dims})
    with pytest.raises(
        ValueError, match=r"2 dimensions; index dims is 3 \(namespace \('n',\), key 'k'\)"
    ):
        store.put(("n",), "k", {"text": "hello"})
    assert store.get(("n",), "k") is None


def test_settings_without_an_embedding_are_refused():
    with pytest.raises(ValueError, match="dims"):
        InMemoryStore(index={"embed": two_dims})
    with pytest.raises(TypeError, match="provider model"):
        InMemoryStore(index={"dims": 2, "embed": "openai:text-embedding-3-small"})
    with pytest.raises(ValueError, match="multi-field"):
        InMemoryStore(index={"dims": 2, "embed": two_dims, "fields": ["{a,b}"]})


async def test_an_async_embedding_function_is_awaited_by_the_async_methods():
    async def embed(texts: list[str]) -> list[list[float]]:
        return two_dims(texts)

    store = InMemoryStore(index={"dims": 2, "embed": embed, "fields": ["text"]})
    await store.aput(("n",), "short", {"text": "hi"})
    await store.aput(("n",), "long", {"text": "hello there"})
    found = await store.asearch(("n",), query="a long query text")
    assert [i.key for i in found] == ["long", "short"]
    assert found[0].score is not None and found[0].score > found[1].score
    with pytest.raises(TypeError, match="async: use aput"):
        store.put(("n",), "sync", {"text": "x"})
