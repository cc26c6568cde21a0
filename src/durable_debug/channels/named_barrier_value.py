"""``NamedBarrierValue`` at LangGraph's ``langgraph.channels.named_barrier_value`` path."""

from __future__ import annotations

from durable_debug.graph.public_channels import NamedBarrierValue

__all__ = ["NamedBarrierValue"]
