"""``InMemoryCache`` at LangGraph's ``langgraph.cache.memory`` path."""

from __future__ import annotations

from durable_debug.graph.cache import InMemoryCache

__all__ = ["InMemoryCache"]
