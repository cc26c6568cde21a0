"""Node result caches (``compile(cache=...)``), at LangGraph's ``langgraph.cache`` path.

The cache itself lives with the engine (``durable_debug.graph.cache``); this package only
gives it LangGraph's import path: ``from durable_debug.cache.memory import InMemoryCache``.
"""

from __future__ import annotations

from durable_debug.cache.memory import InMemoryCache

__all__ = ["InMemoryCache"]
