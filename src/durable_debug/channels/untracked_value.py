"""``UntrackedValue`` at LangGraph's ``langgraph.channels.untracked_value`` path."""

from __future__ import annotations

from durable_debug.graph.public_channels import UntrackedValue

__all__ = ["UntrackedValue"]
