"""LangGraph's ``langgraph.errors`` names, at the same path under ``durable_debug``."""

from __future__ import annotations

from durable_debug.graph.interrupts import NodeInterrupt
from durable_debug.graph.public_channels import EmptyChannelError
from durable_debug.graph.timeouts import NodeCancelledError, NodeTimeoutError
from durable_debug.graph.types import (
    EmptyInputError,
    GraphDrained,
    GraphInterrupt,
    GraphRecursionError,
    InvalidUpdateError,
    NodeError,
    ParentCommand,
    is_invalid_resume,
)

__all__ = [
    "EmptyChannelError",
    "EmptyInputError",
    "GraphDrained",
    "GraphInterrupt",
    "GraphRecursionError",
    "InvalidUpdateError",
    "NodeCancelledError",
    "NodeError",
    "NodeInterrupt",
    "NodeTimeoutError",
    "ParentCommand",
    "is_invalid_resume",
]
