"""``EphemeralValue`` at LangGraph's ``langgraph.channels.ephemeral_value`` path."""

from __future__ import annotations

from durable_debug.graph.public_channels import EphemeralValue

__all__ = ["EphemeralValue"]
