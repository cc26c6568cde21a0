"""LangGraph's ``langgraph.pregel.debug`` names, at the same path under ``durable_debug``."""

from __future__ import annotations

from durable_debug.graph.stream_parts import map_debug_tasks

__all__ = ["map_debug_tasks"]
