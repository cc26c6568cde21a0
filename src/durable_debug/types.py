"""LangGraph's ``langgraph.types`` names, at the same path under ``durable_debug`` (so
``from langgraph.types import Command`` becomes ``from durable_debug.types import Command``).
"""

from __future__ import annotations

from durable_debug.graph.cache import CachePolicy
from durable_debug.graph.calls import StreamWriter
from durable_debug.graph.interrupts import interrupt
from durable_debug.graph.loop import Durability
from durable_debug.graph.stream_parts import (
    CheckpointPayload,
    CheckpointStreamPart,
    CheckpointTask,
    CustomStreamPart,
    DebugStreamPart,
    GraphOutput,
    MessagesStreamPart,
    TaskPayload,
    TaskResultPayload,
    TasksStreamPart,
    UpdatesStreamPart,
    ValuesStreamPart,
)
from durable_debug.graph.trace_policy import TracePolicy, omit_payload
from durable_debug.graph.types import (
    Command,
    Interrupt,
    Overwrite,
    PregelExecutableTask,
    PregelTask,
    RetryPolicy,
    Send,
    StateSnapshot,
    TimeoutPolicy,
)
from durable_debug.graph.update import StateUpdate

__all__ = [
    "CachePolicy",
    "CheckpointPayload",
    "CheckpointStreamPart",
    "CheckpointTask",
    "Command",
    "CustomStreamPart",
    "DebugStreamPart",
    "Durability",
    "GraphOutput",
    "Interrupt",
    "MessagesStreamPart",
    "Overwrite",
    "PregelExecutableTask",
    "PregelTask",
    "RetryPolicy",
    "Send",
    "StateSnapshot",
    "StateUpdate",
    "StreamWriter",
    "TaskPayload",
    "TaskResultPayload",
    "TasksStreamPart",
    "TimeoutPolicy",
    "TracePolicy",
    "UpdatesStreamPart",
    "ValuesStreamPart",
    "interrupt",
    "omit_payload",
]
