"""Long-term memory for nodes: a key-value store organised in namespaces.

    from durable_debug.store.memory import InMemoryStore

    store = InMemoryStore()
    graph = builder.compile(checkpointer=MemorySaver(), store=store)

    def remember(state, *, store):            # nodes receive it by parameter name
        store.put(("users", "u1"), "prefs", {"lang": "fr"})
        hits = store.search(("users",), filter={"lang": "fr"})

Unlike the state, the store is shared by every thread and is not versioned by checkpoints.
The API is the part of LangGraph's ``BaseStore`` nodes use: ``put`` / ``get`` / ``search`` /
``delete`` / ``list_namespaces`` and their ``a``-prefixed async twins. ``search`` filters by
namespace prefix and ``filter``; with ``InMemoryStore(index={"dims": n, "embed": e})`` (a
LangChain ``Embeddings`` or a function from texts to vectors) ``search(..., query=...)`` also
ranks by cosine similarity, as LangGraph's does. A store of your own subclasses
:class:`~durable_debug.store.base.BaseStore` (LangGraph's interface: implement ``batch`` and
``abatch``, the rest is built on them).
"""

from __future__ import annotations

from durable_debug.store.base import BaseStore
from durable_debug.store.memory import (
    InMemoryStore,
    InvalidNamespaceError,
    Item,
    SearchItem,
)

__all__ = ["BaseStore", "InMemoryStore", "InvalidNamespaceError", "Item", "SearchItem"]
