"""``LastValue`` at LangGraph's ``langgraph.channels.last_value`` path."""

from __future__ import annotations

from durable_debug.graph.public_channels import LastValue

__all__ = ["LastValue"]
