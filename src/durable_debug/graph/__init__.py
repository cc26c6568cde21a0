"""The engine: state graphs, super-steps, checkpoints, resume, fork, reducers, Send, interrupts.

from durable_debug.graph import StateGraph, START, END
"""

from __future__ import annotations

from durable_debug.graph.effects import aonce, current_task_id, once
from durable_debug.graph.interrupts import interrupt
from durable_debug.graph.pregel import CompiledStateGraph
from durable_debug.graph.recovery import Recovered, arecover, recover
from durable_debug.graph.state import StateGraph
from durable_debug.graph.types import (
    END,
    START,
    Command,
    EmptyInputError,
    GraphInterrupt,
    GraphRecursionError,
    Interrupt,
    InvalidUpdateError,
    NodeInterrupt,
    PregelTask,
    RetryPolicy,
    Send,
    StateSnapshot,
)

__all__ = [
    "END",
    "START",
    "Command",
    "CompiledStateGraph",
    "EmptyInputError",
    "GraphInterrupt",
    "GraphRecursionError",
    "Interrupt",
    "InvalidUpdateError",
    "NodeInterrupt",
    "PregelTask",
    "Recovered",
    "RetryPolicy",
    "Send",
    "StateGraph",
    "StateSnapshot",
    "aonce",
    "arecover",
    "current_task_id",
    "interrupt",
    "once",
    "recover",
]
