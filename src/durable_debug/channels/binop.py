"""``BinaryOperatorAggregate`` at LangGraph's ``langgraph.channels.binop`` path."""

from __future__ import annotations

from durable_debug.graph.public_channels import BinaryOperatorAggregate

__all__ = ["BinaryOperatorAggregate"]
