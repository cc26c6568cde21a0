"""durable_debug: a Jupyter-native time-travel debugger for durable graph execution.

It bundles a LangGraph-compatible engine, so LangGraph code runs with only its imports
changed::

    from durable_debug import StateGraph, START, END, MemorySaver

    g = (StateGraph(State).add_node("a", step_a).add_edge(START, "a")
         .compile(checkpointer=MemorySaver()))
    await g.ainvoke({"value": ""}, {"configurable": {"thread_id": "demo-1"}})
"""

from __future__ import annotations

from durable_debug.checkpoint import (
    BaseCheckpointSaver,
    CheckpointTuple,
    InMemorySaver,
    MemorySaver,
    register_type,
)
from durable_debug.graph import (
    END,
    START,
    Command,
    CompiledStateGraph,
    EmptyInputError,
    GraphInterrupt,
    GraphRecursionError,
    Interrupt,
    InvalidUpdateError,
    NodeInterrupt,
    PregelTask,
    RetryPolicy,
    Send,
    StateGraph,
    StateSnapshot,
    interrupt,
)

__version__ = "0.1.0"

__all__ = [
    "END",
    "START",
    "BaseCheckpointSaver",
    "CheckpointTuple",
    "Command",
    "CompiledStateGraph",
    "EmptyInputError",
    "GraphInterrupt",
    "GraphRecursionError",
    "InMemorySaver",
    "Interrupt",
    "InvalidUpdateError",
    "MemorySaver",
    "NodeInterrupt",
    "PregelTask",
    "RetryPolicy",
    "Send",
    "StateGraph",
    "StateSnapshot",
    "interrupt",
    "register_type",
]
