"""Long-term memory for nodes: a key-value store organised in namespaces.

    from durable_debug.store.memory import InMemoryStore

    store = InMemoryStore()
    graph = builder.compile(checkpointer=MemorySaver(), store=store)

    def remember(state, *, store):            # nodes receive it by parameter name
        store.put(("users", "u1"), "prefs", {"lang": "fr"})
        hits = store.search(("users",), filter={"lang": "fr"})

Unlike the state, the store is shared by every thread and is not versioned by checkpoints.
The API is the part of LangGraph's ``BaseStore`` nodes use: ``put`` / ``get`` / ``search`` /
``delete`` / ``list_namespaces`` and their ``a``-prefixed async twins. ``search`` ignores
``query=`` (there is no embedding index): it filters by namespace prefix and ``filter``.
"""

from __future__ import annotations

from durable_debug.store.memory import (
    InMemoryStore,
    InvalidNamespaceError,
    Item,
    SearchItem,
)

__all__ = ["InMemoryStore", "InvalidNamespaceError", "Item", "SearchItem"]
