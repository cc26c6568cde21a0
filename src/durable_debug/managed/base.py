"""LangGraph's ``langgraph.managed.base`` path: ``ManagedValue`` (see ``graph/managed.py``)."""

from __future__ import annotations

from durable_debug.graph.managed import ManagedValue

__all__ = ["ManagedValue"]
