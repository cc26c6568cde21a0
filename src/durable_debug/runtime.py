"""LangGraph's ``langgraph.runtime`` names, at the same path under ``durable_debug``."""

from __future__ import annotations

from durable_debug.graph.calls import (
    DEFAULT_RUNTIME,
    ExecutionInfo,
    RunControl,
    Runtime,
    ServerInfo,
    get_runtime,
)

__all__ = ["DEFAULT_RUNTIME", "ExecutionInfo", "RunControl", "Runtime", "ServerInfo", "get_runtime"]
