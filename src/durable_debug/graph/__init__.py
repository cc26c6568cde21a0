"""The engine: state graphs, super-steps, checkpoints, resume, fork, reducers, Send, interrupts.

from durable_debug.graph import StateGraph, START, END
"""

from __future__ import annotations

from durable_debug.graph.cache import CachePolicy, InMemoryCache
from durable_debug.graph.calls import (
    Runtime,
    StreamWriter,
    get_config,
    get_runtime,
    get_store,
    get_stream_writer,
)
from durable_debug.graph.interrupts import NodeInterrupt, interrupt
from durable_debug.graph.message import MessagesState, add_messages
from durable_debug.graph.pregel import CompiledStateGraph
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
    Overwrite,
    PregelTask,
    RetryPolicy,
    Send,
    StateSnapshot,
)
from durable_debug.graph.update import StateUpdate

__all__ = [
    "END",
    "START",
    "CachePolicy",
    "Command",
    "CompiledStateGraph",
    "EmptyInputError",
    "GraphInterrupt",
    "GraphRecursionError",
    "InMemoryCache",
    "Interrupt",
    "InvalidUpdateError",
    "MessagesState",
    "NodeInterrupt",
    "Overwrite",
    "PregelTask",
    "RetryPolicy",
    "Runtime",
    "Send",
    "StateGraph",
    "StateSnapshot",
    "StateUpdate",
    "StreamWriter",
    "add_messages",
    "get_config",
    "get_runtime",
    "get_store",
    "get_stream_writer",
    "interrupt",
]
