"""``BaseCache`` at LangGraph's ``langgraph.cache.base`` path: the interface a node cache
implements (``get(keys)``, ``set(mapping)``, ``clear(namespaces)`` and their async twins)."""

from __future__ import annotations

from durable_debug.graph.cache import BaseCache, FullKey, Namespace

__all__ = ["BaseCache", "FullKey", "Namespace"]
