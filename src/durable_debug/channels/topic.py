"""``Topic`` at LangGraph's ``langgraph.channels.topic`` path."""

from __future__ import annotations

from durable_debug.graph.public_channels import Topic

__all__ = ["Topic"]
