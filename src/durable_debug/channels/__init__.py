"""LangGraph's ``langgraph.channels`` names at the same path under ``durable_debug``
(``from durable_debug.channels import Topic``), and each in its LangGraph submodule
(``durable_debug.channels.topic``…); see ``graph/public_channels.py``."""

from __future__ import annotations

from durable_debug.graph.public_channels import (
    AnyValue,
    BinaryOperatorAggregate,
    DeltaChannel,
    EphemeralValue,
    LastValue,
    NamedBarrierValue,
    Topic,
    UntrackedValue,
)

__all__ = [
    "AnyValue",
    "BinaryOperatorAggregate",
    "DeltaChannel",
    "EphemeralValue",
    "LastValue",
    "NamedBarrierValue",
    "Topic",
    "UntrackedValue",
]
