"""``AnyValue`` at LangGraph's ``langgraph.channels.any_value`` path."""

from __future__ import annotations

from durable_debug.graph.public_channels import AnyValue

__all__ = ["AnyValue"]
