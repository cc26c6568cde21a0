"""durable_debug: a Jupyter-native time-travel debugger for durable graph execution.

It bundles a LangGraph-compatible engine, so LangGraph code runs with only its imports
changed::

    from durable_debug import StateGraph, START, END, MemorySaver

    g = (StateGraph(State).add_node("a", step_a).add_edge(START, "a")
         .compile(checkpointer=MemorySaver()))
    await g.ainvoke({"value": ""}, {"configurable": {"thread_id": "demo-1"}})
"""

from __future__ import annotations

from typing import Any

from durable_debug.checkpoint import (
    AsyncPostgresSaver,
    AsyncRedisSaver,
    AsyncSqliteSaver,
    BaseCheckpointSaver,
    CheckpointNotFoundError,
    CheckpointTuple,
    CorruptPayloadError,
    DatabaseSetupError,
    DurableDebugError,
    InMemorySaver,
    InvalidConfigError,
    MemorySaver,
    PostgresSaver,
    RedisSaver,
    SerdeError,
    SqliteSaver,
    StoreClosedError,
    StoreUnavailableError,
    ThreadBusyError,
    UnsupportedValueError,
    register_type,
    saver_from_url,
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
    Recovered,
    RetryPolicy,
    Send,
    StateGraph,
    StateSnapshot,
    aonce,
    arecover,
    current_task_id,
    interrupt,
    once,
    recover,
)

__version__ = "0.1.0"


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext durable_debug``: register ``%%graph``, ``%checkpoints`` and ``%diff``."""
    from durable_debug.magics import load_ipython_extension as load

    load(ipython)


def __getattr__(name: str) -> Any:
    """``durable_debug.TimeTravel``, imported on first use: ``import durable_debug`` stays free
    of anywidget, ipywidgets and pandas."""
    if name == "TimeTravel":
        from durable_debug.widget import TimeTravel

        return TimeTravel
    raise AttributeError(f"module 'durable_debug' has no attribute {name!r}")


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext durable_debug``: remove everything ``%load_ext`` added."""
    from durable_debug.magics import unload_ipython_extension as unload

    unload(ipython)


__all__ = [
    "END",
    "START",
    "AsyncPostgresSaver",
    "AsyncRedisSaver",
    "AsyncSqliteSaver",
    "BaseCheckpointSaver",
    "CheckpointNotFoundError",
    "CheckpointTuple",
    "Command",
    "CompiledStateGraph",
    "CorruptPayloadError",
    "DatabaseSetupError",
    "DurableDebugError",
    "EmptyInputError",
    "GraphInterrupt",
    "GraphRecursionError",
    "InMemorySaver",
    "Interrupt",
    "InvalidConfigError",
    "InvalidUpdateError",
    "MemorySaver",
    "NodeInterrupt",
    "PostgresSaver",
    "PregelTask",
    "Recovered",
    "RedisSaver",
    "RetryPolicy",
    "Send",
    "SerdeError",
    "SqliteSaver",
    "StateGraph",
    "StateSnapshot",
    "StoreClosedError",
    "StoreUnavailableError",
    "ThreadBusyError",
    "TimeTravel",
    "UnsupportedValueError",
    "aonce",
    "arecover",
    "current_task_id",
    "interrupt",
    "load_ipython_extension",
    "once",
    "recover",
    "register_type",
    "saver_from_url",
    "unload_ipython_extension",
]
