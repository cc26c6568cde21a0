"""``DeltaChannel`` at LangGraph's ``langgraph.channels.delta`` path."""

from __future__ import annotations

from durable_debug.graph.public_channels import DeltaChannel

__all__ = ["DeltaChannel"]
