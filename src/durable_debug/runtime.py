"""LangGraph's ``langgraph.runtime`` names, at the same path under ``durable_debug``."""

from __future__ import annotations

from durable_debug.graph.calls import ExecutionInfo, RunControl, Runtime, ServerInfo, get_runtime

__all__ = ["ExecutionInfo", "RunControl", "Runtime", "ServerInfo", "get_runtime"]
