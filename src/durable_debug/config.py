"""LangGraph's ``langgraph.config`` names, at the same path under ``durable_debug``."""

from __future__ import annotations

from durable_debug.graph.calls import get_config, get_store, get_stream_writer

__all__ = ["get_config", "get_store", "get_stream_writer"]
