"""LangGraph's ``langgraph.callbacks`` names, at the same path under ``durable_debug``: graph
lifecycle handlers (``on_interrupt`` / ``on_resume``; see ``graph/lifecycle.py``). Importing
this module imports LangChain."""

from __future__ import annotations

from durable_debug.graph.lifecycle import (
    GraphCallbackHandler,
    GraphInterruptEvent,
    GraphLifecycleEvent,
    GraphLifecycleStatus,
    GraphResumeEvent,
    get_async_graph_callback_manager_for_config,
    get_sync_graph_callback_manager_for_config,
)

__all__ = [
    "GraphCallbackHandler",
    "GraphInterruptEvent",
    "GraphLifecycleEvent",
    "GraphLifecycleStatus",
    "GraphResumeEvent",
    "get_async_graph_callback_manager_for_config",
    "get_sync_graph_callback_manager_for_config",
]
