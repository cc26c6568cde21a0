"""The in-memory store's values as a user handles them: items compare and print as data,
a bad key or value is refused by name, ``None`` deletes, filters compare numbers as
LangGraph's do, and index paths reach into lists and dicts."""

from __future__ import annotations

from typing import Any

import pytest

from durable_debug.store.memory import InMemoryStore


def test_items_compare_hash_and_print_as_their_data() -> None:
    store = InMemoryStore()
    store.put(("u",), "k", {"n": 1})
    a, b = store.get(("u",), "k"), store.get(("u",), "k")
    assert a == b and hash(a) == hash(b) and a != "k"
    assert repr(a).startswith("Item(namespace=['u'], key='k', value={'n': 1}")
    found = store.search(("u",))[0]
    assert found.dict()["score"] is None and "score=None" in repr(found)


def test_a_bad_key_or_value_is_refused_and_none_deletes() -> None:
    store = InMemoryStore()
    with pytest.raises(TypeError, match="store key must be a string"):
        store.put(("u",), 3, {"n": 1})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="store values are dicts; got list"):
        store.put(("u",), "k", [1])  # type: ignore[arg-type]
    store.put(("u",), "k", {"n": 1})
    store.put(("u",), "k", None)  # type: ignore[arg-type]
    assert store.get(("u",), "k") is None


def test_filters_compare_numbers_and_refuse_unknown_operators() -> None:
    store = InMemoryStore()
    for n in (1, 2, 3):
        store.put(("u",), f"k{n}", {"n": n})

    def keys(**filter: Any) -> list[str]:
        return sorted(item.key for item in store.search(("u",), filter=filter))

    assert keys(n={"$ne": 2}) == ["k1", "k3"]
    assert keys(n={"$gt": 1}) == ["k2", "k3"]
    assert keys(n={"$gte": 2}) == ["k2", "k3"]
    assert keys(n={"$lt": 2}) == ["k1"]
    assert keys(n={"$lte": 2}) == ["k1", "k2"]
    with pytest.raises(ValueError, match="Unknown filter operator '\\$near'"):
        keys(n={"$near": 2})


def test_index_paths_reach_into_lists_and_dicts() -> None:
    seen: list[str] = []

    def embed(texts: list[str]) -> list[list[float]]:
        seen.extend(texts)
        return [[float(len(t)), 1.0] for t in texts]

    store = InMemoryStore(index={"dims": 2, "embed": embed, "fields": ["tags[*]", "tags[1]"]})
    store.put(("u",), "k", {"tags": ["ab", "cde"], "meta": {"x": 1, "y": [2]}})
    store.put(("u",), "j", {"meta": {"x": 1, "y": [2]}}, index=["meta.*", "meta.y[9]", "$"])
    assert seen[:3] == ["ab", "cde", "cde"]
    assert seen[3:5] == ["1", "[2]"]
    assert seen[5] == '{"meta": {"x": 1, "y": [2]}}'
    assert [item.key for item in store.search(("u",), query="ab")]
